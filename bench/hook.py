"""`hook`: `sessionwatch claude-code hook` as Claude Code runs it, against the interpreter's floor.

Claude Code runs the hook before each prompt it sends, so a person waits for it. Each line runs
the console script as a process on a real hook input (stdin JSON as Claude Code 2.1 sends it) in a
project whose store holds 100 Claude Code sessions, and times it from start to exit; interleaved
with each run, `python -I -c pass` (the floor: what starting any Python process costs here). The
figure is the median of 15 runs (`--quick`: the same 15), the ratio median(hook) / median(floor).
The package the hook imports is compiled to bytecode first, as `pip install` compiles it.

Lines (target: at most the ratio):
- `hook-idle`: `UserPromptSubmit` with nothing to do: a session nobody watches, its transcript
  read to its end by the turn's `Stop`, no notice pending (most prompts of most sessions). <= 4x.
- `hook-served`: `UserPromptSubmit` with work (a new human turn in the transcript and a pending
  notice, made afresh before each run) while the session's MCP server (`sessionwatch claude-code
  mcp`, which Claude Code keeps running) is up. <= 4x.
- `hook-alone`: the same work with no server answering: the hook runs in its own process. <= 12x.
- `start-served`, `start-alone`: `SessionStart` (a resume), which always has work (it registers the
  session and tells it its key), with and without the server. <= 4x and <= 12x.

To measure another version of the code with the same harness (today's main, say), point
`$SESSIONWATCH_BENCH_HOOK_PATH` at a folder holding its `sessionwatch` package (put first on the
path) and `$SESSIONWATCH_BENCH_HOOK_ENTRY` at its console entry point (`module:function`, default
the installed `sessionwatch` script's).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/hook.py` finds `bench.*`

import sessionwatch
from bench.harness import Mode, Result, Target, compile_bytecode, format_row, fresh_dir, run_script
from sessionwatch import Actor, SignalKind
from sessionwatch.integrations import claude_code

NAME = "hook"
RUNS = 15
SESSIONS = 100
FLOOR = (sys.executable, "-I", "-c", "pass")
ENTRY_VARIABLE = "SESSIONWATCH_BENCH_HOOK_ENTRY"
PATH_VARIABLE = "SESSIONWATCH_BENCH_HOOK_PATH"
DEFAULT_ENTRY = "sessionwatch.cli.cli:main"
SERVER_WAIT_S = 20.0

TARGETS: dict[str, Target] = {
    "hook-idle": Target("ratio_at_most", 4.0),
    "hook-served": Target("ratio_at_most", 4.0),
    "hook-alone": Target("ratio_at_most", 12.0),
    "start-served": Target("ratio_at_most", 4.0),
    "start-alone": Target("ratio_at_most", 12.0),
}


def typed(text: str) -> dict[str, object]:
    """A prompt typed into Claude Code's TUI, as 2.1 writes it to the transcript."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "timestamp": "2026-12-04T21:00:00.000Z",
        "message": {"role": "user", "content": text},
        "promptSource": "typed",
        "origin": {"kind": "human"},
        "promptId": str(uuid.uuid4()),
    }


def reply(text: str) -> dict[str, object]:
    """The assistant's answer line."""
    return {
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "timestamp": "2026-12-04T21:00:01.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def append(path: Path, *records: Mapping[str, object]) -> None:
    """Claude Code writes these lines to the transcript."""
    with path.open("ab") as out:
        out.write(b"".join(json.dumps(r).encode() + b"\n" for r in records))


class Project:
    """A project with its store of 100 Claude Code sessions, its transcripts and the hook's environment."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "payments-api"
        self.project.mkdir()
        self.transcripts = root / "claude-projects"
        self.transcripts.mkdir()
        runtime = root / "runtime"  # the sockets' folder: private, and this run's own
        runtime.mkdir(mode=0o700)
        self.env = {
            **{k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"},
            "CLAUDE_PROJECT_DIR": str(self.project),
            "XDG_RUNTIME_DIR": str(runtime),
        }
        if os.environ.get(PATH_VARIABLE):
            self.env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [os.environ[PATH_VARIABLE], os.environ.get("PYTHONPATH", "")])
            )
        entry = os.environ.get(ENTRY_VARIABLE, DEFAULT_ENTRY)
        module, _, function = entry.partition(":")
        self.script = root / "sessionwatch"  # the console script, as pip writes it
        self.script.write_text(
            f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
            f"if __name__ == '__main__':\n    sys.exit({function}())\n",
            encoding="utf-8",
        )
        self.script.chmod(0o700)
        self.store = f"sqlite:///{self.project / 'sessionwatch.db'}"
        compile_bytecode(self.env)  # as `pip install` does: the hook starts from bytecode

    def transcript(self, session_id: str) -> Path:
        """Where Claude Code writes the session's transcript."""
        return self.transcripts / f"{session_id}.jsonl"

    def hook_input(self, session_id: str, event: str, **fields: object) -> str:
        """A hook's stdin, as Claude Code 2.1 sends it."""
        return json.dumps(
            {
                "session_id": session_id,
                "transcript_path": str(self.transcript(session_id)),
                "cwd": str(self.project),
                "permission_mode": "default",
                "hook_event_name": event,
                **fields,
            }
        )

    def hook(self, stdin: str) -> subprocess.CompletedProcess[str]:
        """Run the console script's hook as Claude Code does: a process, stdin, its output."""
        return subprocess.run(  # noqa: S603 - our own console script
            [str(self.script), "claude-code", "hook"],
            input=stdin,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )

    def session(self, session_id: str) -> None:
        """A session as Claude Code runs it: started, one turn (prompt, reply), stopped."""
        append(self.transcript(session_id))
        self.hook(self.hook_input(session_id, "SessionStart", source="startup"))
        self.hook(
            self.hook_input(session_id, "UserPromptSubmit", prompt="hello", prompt_id=str(uuid.uuid4()))
        )
        append(self.transcript(session_id), typed("hello"), reply("Hello."))
        self.hook(self.hook_input(session_id, "Stop", stop_hook_active=False))

    @contextmanager
    def server(self, session_id: str) -> Iterator[None]:
        """`sessionwatch claude-code mcp` for the session, as Claude Code starts it (stdin kept open)."""
        env = {**self.env, "CLAUDE_CODE_SESSION_ID": session_id}
        process = subprocess.Popen(  # noqa: S603 - our own console script
            [str(self.script), "claude-code", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=self.project,
        )
        try:
            socket_folder = Path(self.env["XDG_RUNTIME_DIR"]) / "sessionwatch"
            deadline = time.monotonic() + SERVER_WAIT_S
            while time.monotonic() < deadline and not any(socket_folder.glob("cc-*.sock")):
                if process.poll() is not None:
                    break
                time.sleep(0.05)
            time.sleep(0.5)  # a version without the socket: give the server its start-up all the same
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def timed(command: Callable[[], object]) -> float:
    """Milliseconds the command took."""
    start = time.perf_counter()
    command()
    return (time.perf_counter() - start) * 1000


def measure(name: str, run_once: Callable[[], None], prepare: Callable[[], None] | None = None) -> Result:
    """RUNS timed runs, each after a timed floor run (and an untimed `prepare`): medians and ratio."""
    floors: list[float] = []
    runs: list[float] = []
    if prepare is not None:
        prepare()
    run_once()  # a warm-up (a fresh checkout compiles its modules at its first run)
    for _ in range(RUNS):
        if prepare is not None:
            prepare()
        floors.append(timed(lambda: subprocess.run(FLOOR, check=True)))  # noqa: S603 - the interpreter
        runs.append(timed(run_once))
    floor, hook = statistics.median(floors), statistics.median(runs)
    target = TARGETS[name]
    ratio = hook / floor
    result = Result(name, "sqlite", "ms", floor, hook, ratio, target, target.met(ratio, hook), floors, runs)
    print(format_row(result), file=sys.stderr, flush=True)  # as it is measured (run.py prints the table)
    return result


def run(mode: Mode) -> list[Result]:  # noqa: ARG001 - 15 runs in every mode
    """The five lines, in one project."""
    with fresh_dir("hook") as root:
        project = Project(root)
        others = [str(uuid.uuid4()) for _ in range(SESSIONS - 3)]
        idle, busy, watcher = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
        for session_id in [*others, idle, busy, watcher]:
            project.session(session_id)
        agent = claude_code.project_agent_id(project.project)
        busy_key = claude_code.session_key(project.project, busy)
        target_key = claude_code.session_key(project.project, others[0])
        with sessionwatch.open(project.store) as watch:
            assert watch.watch(busy_key, target_key), "the busy session watches another"
            assert len(watch.registry_entries()) == SESSIONS
        assert agent in busy_key

        def work() -> None:
            """A turn no prompt hook saw, and a change in the watched session: the next prompt's work."""
            append(project.transcript(busy), typed("!ls"), reply("done"))
            with sessionwatch.open(project.store) as watch:
                watch.record(
                    target_key, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="a change"
                )

        prompt = project.hook_input(busy, "UserPromptSubmit", prompt="go on", prompt_id=str(uuid.uuid4()))
        resume = project.hook_input(busy, "SessionStart", source="resume")
        idle_prompt = project.hook_input(idle, "UserPromptSubmit", prompt="and?", prompt_id=str(uuid.uuid4()))

        def prompted() -> None:
            out = project.hook(prompt).stdout
            assert "additionalContext" in out, out  # the work was done: the notice was handed over

        def started() -> None:
            assert busy_key in project.hook(resume).stdout

        results = [measure("hook-idle", lambda: _silent(project.hook(idle_prompt)))]
        with project.server(busy):
            results.append(measure("hook-served", prompted, work))
            results.append(measure("start-served", started, work))
        results.append(measure("hook-alone", prompted, work))
        results.append(measure("start-alone", started, work))
        return results


def _refuse(line: str) -> None:
    raise AssertionError(line)


def _silent(done: subprocess.CompletedProcess[str]) -> None:
    assert done.stdout == "", done.stdout
    assert done.stderr == "", done.stderr


if __name__ == "__main__":
    run_script(NAME, __doc__, run)
