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
Claude Code runs the handlers of one event in parallel and names them only by event, so each
session has a single `UserPromptSubmit` handler, and two sessions run side by side, their prompts
interleaved (one turn at a time, each waiting for its `result`):

- the sessionwatch session: the project's hooks as the installer writes them;
- the floor session: the same, but its `UserPromptSubmit` handler is `python -I -c pass` (the
  interpreter the hook runs with), so what Claude Code adds to any hook (a shell, the process,
  its own bookkeeping) is in both figures.

The sessionwatch session alternates prompts with nothing to do (`cc-idle`: nothing pending, its
transcript read to its end by the last turn's `Stop`) and prompts with work while the session's
MCP server, which Claude Code started, is up (`cc-served`: a session it watches changed since the
last prompt, so the hook hands over a notice, checked in the hook's `additionalContext`). Each
sessionwatch prompt is followed by a floor prompt and by `python -I -c pass` as a bare process,
timed here (`cc-floor`: the floor hook against the bare process, what Claude Code adds). The
figures are medians over `PROMPTS` prompts of each kind (after two warm-up turns per session).

It takes about a minute (two Claude Code start-ups, 4 x 16 turns) and is not part of `run.py`.
Without node, npm or the CLI (and no way to install it) it prints why and measures nothing.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # `python bench/hook_claude.py` finds `bench.*`
sys.path.append(str(ROOT / "tests"))  # and the host harness, `hosts.*`

import sessionwatch
from bench.harness import (
    CONTEXT,
    Mode,
    Result,
    Target,
    compile_bytecode,
    format_row,
    fresh_dir,
    run_script,
    time_result,
)
from hosts import install
from hosts.claude_host import ClaudeCodeHost, StreamJson
from hosts.fake_models import FakeAnthropic, scripted
from sessionwatch import Actor, SignalKind
from sessionwatch.integrations import claude_code

NAME = "hook_claude"
PROMPTS = 16
WARM_UP = 2
FLOOR = (sys.executable, "-I", "-c", "pass")
EVENT = "UserPromptSubmit"
TURN_TIMEOUT_S = 120.0
TARGET_KEY = "agent:bench:main"
"""The session the sessionwatch session watches; a signal on it before a prompt is that prompt's work."""

TARGETS: dict[str, Target] = {
    "cc-idle": Target("ratio_at_most", 4.0),
    "cc-served": Target("ratio_at_most", 4.0),
    "cc-floor": CONTEXT,
}


@dataclass(frozen=True)
class HookRun:
    """One run of a session's `UserPromptSubmit` handler, as the stream shows it."""

    ms: float
    stdout: str
    outcome: str


class Session:
    """One headless Claude Code session: send a prompt, wait for its turn, read its prompt hook's run."""

    def __init__(self, host: ClaudeCodeHost) -> None:
        self.host = host
        self.run = host.stream()
        self.turns = 0

    def turn(self, prompt: str) -> HookRun:
        """One prompt, one turn; the `UserPromptSubmit` handler's run in it (it must be the only one)."""
        first = len(self.run.events)
        self.run.send(prompt)
        self.turns += 1
        self.run.wait(lambda r: r.results() >= self.turns, timeout=TURN_TIMEOUT_S, what=f"turn {self.turns}")
        events, arrivals = self.run.events[first:], self.run.arrivals[first:]
        started = {
            str(e["hook_id"]): at
            for e, at in zip(events, arrivals, strict=False)
            if e.get("subtype") == "hook_started" and e.get("hook_event") == EVENT
        }
        runs = [
            HookRun((at - started[str(e["hook_id"])]) * 1000, str(e.get("stdout", "")), str(e.get("outcome")))
            for e, at in zip(events, arrivals, strict=False)
            if e.get("subtype") == "hook_response" and e.get("hook_id") in started
        ]
        assert len(started) == 1 and len(runs) == 1, f"one {EVENT} handler per prompt, not {len(started)}"
        assert runs[0].outcome == "success", runs[0]
        return runs[0]

    def session_id(self) -> str:
        """Claude Code's id of the session (every event names it)."""
        return str(self.run.events[0]["session_id"])

    def close(self) -> None:
        """End the session (stdin closed) and whatever it left running."""
        self.run.close()
        self.host.clean_up()


def floor_handler(project: Path) -> None:
    """Make the project's `UserPromptSubmit` handler `python -I -c pass`, the rest as installed."""
    settings_file = project / ".claude" / "settings.json"
    settings = json.loads(settings_file.read_text(encoding="utf-8"))
    for group in settings["hooks"][EVENT]:
        for handler in group["hooks"]:
            handler["command"] = " ".join(FLOOR)
    settings_file.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def timed(command: Callable[[], object]) -> float:
    """Milliseconds the command took."""
    start = time.perf_counter()
    command()
    return (time.perf_counter() - start) * 1000


def unavailable() -> str | None:
    """Why the real Claude Code cannot run here (None: it can, installed now if need be)."""
    try:
        install.ensure(install.CLAUDE_CODE)
    except install.HostUnavailable as exc:
        return str(exc)
    return None


def run(mode: Mode) -> list[Result]:  # noqa: ARG001 - PROMPTS prompts of each kind in every mode
    """The three lines, from two Claude Code sessions side by side."""
    why = unavailable()
    if why is not None:
        print(f"{NAME}: skipped, the real Claude Code cannot run here: {why}", file=sys.stderr)
        return []
    compile_bytecode()  # as `pip install` does: the hook starts from bytecode
    command = install.ensure(install.CLAUDE_CODE)
    with fresh_dir(NAME) as root, FakeAnthropic(scripted()) as model:
        no_recorders: dict[str, object] = {"hooks": {}}  # only the project's hooks, as a user has them
        sw_host = ClaudeCodeHost(command, root / "sw", model.url, settings=no_recorders).prepare()
        floor_host = ClaudeCodeHost(command, root / "floor", model.url, settings=no_recorders).prepare()
        floor_handler(floor_host.project)
        ours, floor = Session(sw_host), Session(floor_host)
        try:
            return measure(ours, floor, sw_host)
        finally:
            ours.close()
            floor.close()


def measure(ours: Session, floor: Session, sw_host: ClaudeCodeHost) -> list[Result]:
    """Warm both sessions up, make ours watch a session, then PROMPTS rounds of interleaved turns."""
    for number in range(WARM_UP):
        ours.turn(f"warm-up {number}")
        floor.turn(f"warm-up {number}")
    store = f"sqlite:///{sw_host.store}"
    key = claude_code.session_key(sw_host.project, ours.session_id())

    def change(summary: str) -> None:
        with sessionwatch.open(store) as watch:
            watch.record(TARGET_KEY, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary=summary)

    change("the watched session starts")
    with sessionwatch.open(store) as watch:
        assert watch.watch(key, TARGET_KEY), "the sessionwatch session watches another"
    ours.turn("settle")  # the watch's first prompt: whatever it hands over, the next ones start clean
    floor.turn("settle")
    sockets = list((sw_host.root / "tmp").glob("sessionwatch-*/cc-*.sock"))
    assert sockets, "the session's MCP server is up, its socket open"

    idle: list[float] = []
    served: list[float] = []
    floors: list[float] = []
    bare: list[float] = []
    for number in range(PROMPTS):
        done = ours.turn(f"nothing new {number}")
        assert done.stdout == "", f"an idle prompt's hook printed {done.stdout!r}"
        idle.append(done.ms)
        floors.append(floor.turn(f"floor {number}").ms)
        bare.append(timed(lambda: subprocess.run(FLOOR, check=True)))  # noqa: S603 - the interpreter
        change(f"change {number}")
        done = ours.turn(f"with a notice {number}")
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert TARGET_KEY in context, f"no notice of {TARGET_KEY} in {context!r}"
        served.append(done.ms)
        floors.append(floor.turn(f"floor again {number}").ms)
        bare.append(timed(lambda: subprocess.run(FLOOR, check=True)))  # noqa: S603 - the interpreter
    assert list((sw_host.root / "tmp").glob("sessionwatch-*/cc-*.sock")) == sockets, "the server stayed up"

    floor_median, bare_median = statistics.median(floors), statistics.median(bare)
    results = []
    for name, figures in (("cc-idle", idle), ("cc-served", served)):
        extra = {
            "bare_floor_ms": bare_median,
            "ratio_to_bare_floor": statistics.median(figures) / bare_median,
            "prompts": len(figures),
            "claude_code": install.CLAUDE_CODE.version,
        }
        results.append(time_result(name, "claude", "ms", (floors, figures), target=TARGETS[name], extra=extra))
    results.append(
        time_result(
            "cc-floor", "claude", "ms", (bare, floors), target=TARGETS["cc-floor"],
            extra={"claude_code": install.CLAUDE_CODE.version},
        )
    )
    for result in results:
        print(format_row(result), file=sys.stderr, flush=True)
    print(
        f"floor hook {floor_median:.1f} ms, bare `python -I -c pass` {bare_median:.1f} ms; "
        f"idle {statistics.median(idle) / bare_median:.2f}x, served {statistics.median(served) / bare_median:.2f}x "
        "the bare floor",
        file=sys.stderr,
    )
    return results


if __name__ == "__main__":
    run_script(NAME, __doc__, run)
