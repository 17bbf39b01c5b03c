"""`cli`: how long a person waits for the `sessionwatch` command line, against the interpreter floor.

Each round runs, one after the other, `python -I -c pass` (the floor: an interpreter that starts and
ends, nothing imported) before each of `sessionwatch --version`, `--help`, `status KEY` and
`notices WATCHER` on a SQLite store of 100 sessions (10 signals each; the watcher watches 10 of them,
each with a notice pending). Every run is a fresh process timed from start to exit, output thrown
away. The figure per command is the median wall time over the rounds; the floor's is the median of
all its runs in the same rounds; the ratio is command / floor (smaller is better). Targets: at most
3x the floor for `--version` and `--help`, at most 10x for `status` and `notices`. Before timing,
each command is run once and its output checked (the version line, the help's last command, the
key's head, one line per pending notice), and the package's bytecode is written, as `pip install`
writes it.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/cli.py` finds `bench.*`

import sessionwatch
from bench.harness import (
    AGENT,
    Mode,
    Result,
    at_most_times_peer,
    compile_bytecode,
    fresh_dir,
    run_script,
    time_result,
)

NAME = "cli"
SESSIONS = 100
SIGNALS_EACH = 10
WATCHED = 10
WATCHER = "agent:main:main"
STATUS_KEY = f"agent:{AGENT}:subagent:cli-007"
QUICK_RUNS = 15
FULL_RUNS = 31


@dataclass(frozen=True)
class Command:
    """One timed command line: its name on the table, its arguments and its target (x the floor)."""

    name: str
    args: tuple[str, ...]
    target: float


def session_key(index: int) -> str:
    """The key of the store's `index`-th session."""
    return f"agent:{AGENT}:subagent:cli-{index:03d}"


def build_store(path: Path) -> int:
    """100 sessions of 10 signals; WATCHER watches the first 10, and each has changed since.

    Returns the head (stateVersion) of `STATUS_KEY`.
    """
    human = sessionwatch.Actor.human()

    def signal(s: int, summary: str) -> sessionwatch.SignalInput:
        return sessionwatch.SignalInput(
            session_key=session_key(s), kind="goal_changed", actor=human, summary=summary
        )

    with sessionwatch.open(f"sqlite:///{path}") as watch:
        watch.record_many([signal(s, f"step {n}") for n in range(SIGNALS_EACH - 1) for s in range(SESSIONS)])
        for s in range(WATCHED):
            assert watch.watch(WATCHER, session_key(s))
        watch.record_many([signal(s, "last step") for s in range(SESSIONS)])
        assert len(watch.pending_notices(WATCHER)) == WATCHED
        return watch.session_status(STATUS_KEY).state_version


def script() -> str:
    """The console script of the interpreter running this benchmark."""
    found = Path(sys.executable).parent / "sessionwatch"
    if not found.is_file():
        raise SystemExit(f"cli: no console script at {found}: run `make install` first")
    return str(found)


def check(commands: list[Command], version: str, head: int) -> None:
    """Run each command once and check it answered what it should (a fast wrong answer counts for nothing)."""
    for command in commands:
        done = subprocess.run(command.args, capture_output=True, text=True, check=False)  # noqa: S603
        if done.returncode != 0:
            raise SystemExit(f"cli: {command.name} exited {done.returncode}: {done.stderr.strip()}")
        lines = done.stdout.splitlines()
        match command.name:
            case "version":
                assert lines == [f"sessionwatch {version}"], lines
            case "help":
                assert "import-openclaw" in done.stdout, done.stdout
                assert "exit codes:" in done.stdout, done.stdout
            case "status":
                assert lines == [f"{STATUS_KEY}  stateVersion {head}"], lines
            case "notices":
                assert len(lines) == WATCHED, lines


def wall(args: tuple[str, ...]) -> float:
    """Milliseconds from starting the process to its exit."""
    start = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # noqa: S603
    return (time.perf_counter() - start) * 1000.0


def run(mode: Mode) -> list[Result]:
    """One line per command: its median ms against the floor's median ms in the same rounds."""
    runs = QUICK_RUNS if mode.name == "quick" else FULL_RUNS
    floor = (sys.executable, "-I", "-c", "pass")
    with fresh_dir(NAME) as directory:
        db = directory / "sessionwatch.db"
        head = build_store(db)
        exe = script()
        commands = [
            Command("version", (exe, "--version"), 3.0),
            Command("help", (exe, "--help"), 3.0),
            Command("status", (exe, "status", STATUS_KEY, "--db", str(db)), 10.0),
            Command("notices", (exe, "notices", WATCHER, "--db", str(db)), 10.0),
        ]
        check(commands, sessionwatch.__version__, head)
        compile_bytecode()  # as `pip install` does: the commands start from bytecode
        for command in commands:  # warm the page cache: the first runs read the files from disk
            wall(floor)
            wall(command.args)
        floors: list[float] = []
        timed: dict[str, list[float]] = {command.name: [] for command in commands}
        for _ in range(runs):
            for command in commands:
                floors.append(wall(floor))
                timed[command.name].append(wall(command.args))
    floor_ms = statistics.median(floors)
    return [
        time_result(
            NAME,
            command.name,
            "ms",
            ([floor_ms] * runs, timed[command.name]),
            target=at_most_times_peer(command.target),
            extra={"floor_runs": floors, "runs": runs, "sessions": SESSIONS},
        )
        for command in commands
    ]


def main() -> None:
    """Print this workload's table and write `bench/results/cli.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
