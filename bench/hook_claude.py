"""`hook_claude`: sessionwatch's `UserPromptSubmit` hook inside the real Claude Code, against a floor hook.

`bench/hook.py` times the hook as a bare process; this runs it where a person meets it: the real
Claude Code CLI (the pinned version `tests/hosts/install.py` installs), headless (`claude -p
--input-format stream-json --output-format stream-json --verbose --include-hook-events`), offline
against the fake Anthropic API of `tests/hosts/fake_models.py`, in a home of its own with
sessionwatch's hooks and MCP server installed by `sessionwatch claude-code install`
(`tests/hosts/claude_host.py`), and none of the harness's recording hooks.

With `--include-hook-events` Claude Code writes a `hook_started` event when it starts a hook
command and a `hook_response` event (its stdout, exit code, outcome) when the command has
finished, both with the same `hook_id`; neither carries a time, so each line is timed as it
arrives on the reader thread, and a hook's duration is `hook_response` minus `hook_started`.
Claude Code starts every handler of an event at once and names them only by event, so each
session has a single `UserPromptSubmit` handler, and three sessions run side by side, their
prompts interleaved (one turn at a time, each waiting for its `result`):

- served: the project's hooks and MCP server as the installer writes them;
- alone: the same without the MCP server, so the hook does its work in its own process;
- floor: the same as served, but its `UserPromptSubmit` and `Stop` handlers are `python -I -c
  pass` (the interpreter the hook runs with), so what Claude Code adds to any hook (a shell, the
  process, its own bookkeeping) is in both figures.

After two warm-up turns per session, served and alone watch a session. Each of the `PROMPTS`
rounds then takes, in served and then in alone, a prompt with no notice to hand over (nothing
changed; the hook prints nothing, checked) and a prompt with one (the watched session changed
just before; the notice checked in the hook's `additionalContext`), each followed by a floor turn
and by `python -I -c pass` as a bare process, timed here. Lines: `cc-idle` and `cc-served` (served,
the MCP server Claude Code started up all along), `cc-idle-alone` and `cc-alone` (no server);
each against the floor hook's `UserPromptSubmit` median. `cc-stop`, `cc-stop-alone`: the `Stop`
hook of the same turns against the floor's `Stop`. `cc-floor`: the floor hook against the bare
process.

"No notice" is not "nothing to do" for the hook: Claude Code 2.1.197 writes lines to the
transcript after the `Stop` hook has read it (`queue-operation`, `stop_hook_summary`,
`turn_duration`), so at the next prompt the front end mostly finds the transcript grown past the
marker and hands the prompt on, like one with work. Before each such prompt the run asks the front
end itself and counts the prompts it already found work for (`work_ahead`, a lower bound).

It takes about 40 s (three Claude Code start-ups, 137 turns) and is not part of `run.py`: it
starts the real CLI, which its first run installs from npm. Without node, npm or the CLI it prints
why and measures nothing.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/hook_claude.py` finds `bench.*`
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))  # and the host harness, `hosts.*`

from hosts import install
from hosts.claude_host import ClaudeCodeHost
from hosts.fake_models import FakeAnthropic, scripted

import sessionwatch
from bench.harness import (
    CONTEXT,
    Mode,
    Result,
    Target,
    compile_bytecode,
    format_row,
    fresh_dir,
    parse_mode,
    print_table,
    time_result,
    write_results,
)
from bench.hook import FLOOR, timed
from sessionwatch import Actor, SignalKind
from sessionwatch.integrations import claude_code, claude_code_front

NAME = "hook_claude"
PROMPTS = 16
WARM_UP = 2
PROMPT = "UserPromptSubmit"
STOP = "Stop"
TURN_TIMEOUT_S = 120.0
TARGET_KEY = "agent:bench:main"
"""The session served and alone watch; a signal on it before a prompt gives that prompt a notice."""

TARGETS: dict[str, Target] = {
    "cc-idle": Target("ratio_at_most", 4.0),
    "cc-served": Target("ratio_at_most", 4.0),
    "cc-idle-alone": Target("ratio_at_most", 4.0),
    "cc-alone": Target("ratio_at_most", 12.0),
    "cc-stop": CONTEXT,
    "cc-stop-alone": CONTEXT,
}


@dataclass(frozen=True)
class HookRun:
    """One run of a hook handler, as the stream shows it."""

    ms: float
    stdout: str
    outcome: str


@dataclass(frozen=True)
class Turn:
    """The runs of the turn's `UserPromptSubmit` handler (before the prompt) and `Stop` handler (after)."""

    prompt: HookRun
    stop: HookRun


class Session:
    """One headless Claude Code session: send a prompt, wait for its turn, read its hooks' runs."""

    def __init__(self, host: ClaudeCodeHost) -> None:
        self.host = host
        self.run = host.stream()
        self.turns = 0

    def turn(self, prompt: str) -> Turn:
        """One prompt, one turn, and the runs of its `UserPromptSubmit` and `Stop` handlers."""
        first = len(self.run.events)
        self.run.send(prompt)
        self.turns += 1
        self.run.wait(lambda r: r.results() >= self.turns, timeout=TURN_TIMEOUT_S, what=f"turn {self.turns}")
        events, arrivals = self.run.events[first:], self.run.arrivals[first:]
        return Turn(hook_run(events, arrivals, PROMPT), hook_run(events, arrivals, STOP))

    def session_id(self) -> str:
        """Claude Code's id of the session (every event names it)."""
        return str(self.run.events[0]["session_id"])

    def watch_target(self) -> None:
        """The session watches `TARGET_KEY` from now on (a first change of it made first)."""
        self.change("the watched session starts")
        key = claude_code.session_key(self.host.project, self.session_id())
        with sessionwatch.open(f"sqlite:///{self.host.store}") as watch:
            assert watch.watch(key, TARGET_KEY), "the session watches another"

    def change(self, summary: str) -> None:
        """The watched session changes: the session's next prompt has a notice to hand over."""
        with sessionwatch.open(f"sqlite:///{self.host.store}") as watch:
            watch.record(
                TARGET_KEY, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary=summary
            )

    def quiet(self, prompt: str) -> Turn:
        """A prompt with no notice to hand over: its turn, the hook checked to print nothing."""
        done = self.turn(prompt)
        assert done.prompt.stdout == "", f"a prompt without a notice: its hook printed {done.prompt.stdout!r}"
        return done

    def worked(self, prompt: str) -> Turn:
        """A prompt after a change: its turn, the hook checked to hand the notice over."""
        self.change(f"before {prompt}")
        done = self.turn(prompt)
        context = json.loads(done.prompt.stdout)["hookSpecificOutput"]["additionalContext"]
        assert TARGET_KEY in context, f"no notice of {TARGET_KEY} in {context!r}"
        return done

    def work_ahead(self) -> bool:
        """Whether the hook's front end, asked now, already finds work for the next prompt of this session.

        The transcript only grows and nothing moves the session's marker between turns, so work
        found now is there when the next prompt's hook asks (a lower bound: Claude Code may write
        more lines before that hook runs).
        """
        session_id = self.session_id()
        [transcript] = [path for path in self.host.transcripts() if path.stem == session_id]
        hook_input = {
            "session_id": session_id,
            "transcript_path": str(transcript),
            "cwd": str(self.host.project),
            "hook_event_name": PROMPT,
            "prompt": "next",
        }
        environ = {"CLAUDE_PROJECT_DIR": str(self.host.project)}
        return not claude_code_front.nothing_to_do(hook_input, db=str(self.host.store), environ=environ)

    def sockets(self) -> list[Path]:
        """The sockets of the session's MCP server (one while it is up)."""
        return list((self.host.root / "tmp").glob("sessionwatch-*/cc-*.sock"))

    def close(self) -> None:
        """End the session (stdin closed) and whatever it left running."""
        self.run.close()
        self.host.clean_up()


def hook_run(events: Sequence[Mapping[str, object]], arrivals: Sequence[float], event: str) -> HookRun:
    """The run of the turn's one `event` handler: `hook_response`'s arrival minus `hook_started`'s."""
    started = {
        str(e["hook_id"]): at
        for e, at in zip(events, arrivals, strict=True)
        if e.get("subtype") == "hook_started" and e.get("hook_event") == event
    }
    runs = [
        HookRun((at - started[str(e["hook_id"])]) * 1000, str(e.get("stdout", "")), str(e.get("outcome")))
        for e, at in zip(events, arrivals, strict=True)
        if e.get("subtype") == "hook_response" and e.get("hook_id") in started
    ]
    assert len(started) == 1, f"one {event} handler per turn, not {len(started)}"
    assert len(runs) == 1, f"the {event} handler's run ended once in the turn, not {len(runs)} times"
    assert runs[0].outcome == "success", runs[0]
    return runs[0]


def floor_handlers(project: Path) -> None:
    """The project's `UserPromptSubmit` and `Stop` handlers become `python -I -c pass`; the rest stays."""
    settings_file = project / ".claude" / "settings.json"
    settings = json.loads(settings_file.read_text(encoding="utf-8"))
    for event in (PROMPT, STOP):
        for group in settings["hooks"][event]:
            for handler in group["hooks"]:
                handler["command"] = " ".join(FLOOR)
    settings_file.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def no_server(project: Path) -> None:
    """Take sessionwatch's MCP server out of the project: the hook finds no server to hand work to."""
    mcp_file = project / ".mcp.json"
    servers = json.loads(mcp_file.read_text(encoding="utf-8"))
    del servers["mcpServers"]["sessionwatch"]
    mcp_file.write_text(json.dumps(servers, indent=2) + "\n", encoding="utf-8")


def claude_command() -> Path:
    """The pinned Claude Code CLI: the cached one, else installed now (`HostUnavailable` says why not)."""
    cached = install.binary(install.CLAUDE_CODE)
    return cached if cached.exists() else install.ensure(install.CLAUDE_CODE)


def run(mode: Mode) -> list[Result]:  # noqa: ARG001 - PROMPTS prompts of each kind in every mode
    """The lines, from three Claude Code sessions side by side (none when Claude Code cannot run)."""
    try:
        command = claude_command()
    except install.HostUnavailable as exc:
        print(f"{NAME}: skipped, the real Claude Code cannot run here: {exc}", file=sys.stderr)
        return []
    compile_bytecode()  # as `pip install` does: the hook starts from bytecode
    with fresh_dir(NAME) as root, FakeAnthropic(scripted()) as model:
        no_recorders: dict[str, object] = {"hooks": {}}  # only the project's hooks, as a user has them

        def host(name: str) -> ClaudeCodeHost:
            return ClaudeCodeHost(command, root / name, model.url, settings=no_recorders).prepare()

        served_host, alone_host, floor_host = host("served"), host("alone"), host("floor")
        no_server(alone_host.project)
        floor_handlers(floor_host.project)
        sessions = [Session(served_host), Session(alone_host), Session(floor_host)]
        try:
            return measure(*sessions)
        finally:
            for session in sessions:
                session.close()


def measure(served: Session, alone: Session, floor: Session) -> list[Result]:
    """Warm the sessions up and make two watch a session, then PROMPTS rounds of interleaved turns."""
    for number in range(WARM_UP):
        for session in (served, alone, floor):
            session.turn(f"warm-up {number}")
    served.watch_target()
    alone.watch_target()
    for session in (served, alone, floor):
        session.turn("settle")  # a watch's first prompt: whatever it hands over, the next ones start clean
    sockets = served.sockets()
    assert len(sockets) == 1, f"the session's MCP server is up, its socket open: {sockets}"
    assert alone.sockets() == [], "no MCP server in the session without one"

    lines: dict[str, list[float]] = {name: [] for name in TARGETS}
    floors: list[float] = []
    stop_floors: list[float] = []
    bare: list[float] = []
    work_ahead = 0

    def floor_turn(prompt: str) -> None:
        done = floor.turn(prompt)
        floors.append(done.prompt.ms)
        stop_floors.append(done.stop.ms)
        bare.append(timed(lambda: subprocess.run(FLOOR, check=True)))  # noqa: S603 - the interpreter

    def take(prompt_line: str, stop_line: str, done: Turn) -> None:
        lines[prompt_line].append(done.prompt.ms)
        lines[stop_line].append(done.stop.ms)
        floor_turn(f"floor after {prompt_line}")

    for number in range(PROMPTS):
        work_ahead += served.work_ahead() + alone.work_ahead()
        take("cc-idle", "cc-stop", served.quiet(f"nothing new {number}"))
        take("cc-served", "cc-stop", served.worked(f"served {number}"))
        take("cc-idle-alone", "cc-stop-alone", alone.quiet(f"nothing new here {number}"))
        take("cc-alone", "cc-stop-alone", alone.worked(f"alone {number}"))
    assert served.sockets() == sockets, "the server stayed up"

    bare_median = statistics.median(bare)
    versions = {
        "claude_code": install.CLAUDE_CODE.version,
        "bare_floor_ms": bare_median,
        "work_ahead": f"{work_ahead} of {2 * PROMPTS}",
    }
    results = [
        time_result(
            name,
            "claude",
            "ms",
            (stop_floors if name.startswith("cc-stop") else floors, figures),
            target=TARGETS[name],
            extra={
                **versions,
                "prompts": len(figures),
                "ratio_to_bare": statistics.median(figures) / bare_median,
            },
        )
        for name, figures in lines.items()
    ]
    results.append(time_result("cc-floor", "claude", "ms", (bare, floors), target=CONTEXT, extra=versions))
    for result in results:
        print(format_row(result), file=sys.stderr, flush=True)
    against_bare = ", ".join(f"{r.workload} {r.extra['ratio_to_bare']:.2f}x" for r in results[:-1])
    print(f"against the bare `python -I -c pass` ({bare_median:.1f} ms): {against_bare}", file=sys.stderr)
    print(
        f"before {work_ahead} of the {2 * PROMPTS} prompts without a notice the front end already found work",
        file=sys.stderr,
    )
    return results


def main() -> None:
    """Measure, print the table, write `bench/results/hook_claude.json` (nothing when skipped)."""
    mode = parse_mode(__doc__ or NAME)
    results = run(mode)
    if results:
        print_table(results)
        write_results(NAME, results, mode)


if __name__ == "__main__":
    main()
