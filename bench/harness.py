"""The A/B harness: peer and sessionwatch interleaved in one process, medians, ratios (SPEC §15.1).

Every workload runs the peer and sessionwatch in alternating timed blocks (peer, sessionwatch, peer,
sessionwatch, ...) after a warm-up of each, on the same durability setting, each store in a fresh
temporary directory. A throughput block counts units of work (signals or calls) until its time is
up and yields a rate; a latency block times every call and yields the median. The figure reported
per side is the median over the rounds; the ratio is always oriented so that bigger is better for
sessionwatch (sw rate / peer rate, or peer time / sw time).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import sessionwatch
from sessionwatch import Clock, SessionWatch, Waker

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"

Synchronous = Literal["normal", "full"]
SETTINGS: tuple[Synchronous, ...] = ("normal", "full")

Call = Callable[[], int]
"""One unit of a workload: does the work and returns how many units it did (signals or calls)."""


# ------------------------------------------------------------------------------------------ modes


@dataclass(frozen=True)
class Mode:
    """How long to measure: rounds of interleaved blocks of `seconds` each, after a warm-up."""

    name: str
    rounds: int
    seconds: float
    warmup: float
    settings: tuple[Synchronous, ...] = SETTINGS


QUICK = Mode(name="quick", rounds=5, seconds=0.25, warmup=0.25)
FULL = Mode(name="full", rounds=9, seconds=1.0, warmup=1.0)


def parse_mode(description: str, argv: Sequence[str] | None = None) -> Mode:
    """The command line every bench script shares: `--quick`, and overrides of the mode's numbers."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="short run (run.py: 80-90 s on 2 cores)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (peer block + sessionwatch block)")
    parser.add_argument("--seconds", type=float, help="length of one timed block")
    parser.add_argument("--warmup", type=float, help="warm-up per side before the rounds")
    parser.add_argument(
        "--settings",
        default=",".join(SETTINGS),
        help="durability settings for the write workloads, comma separated (normal,full)",
    )
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    settings = tuple(s.strip() for s in str(args.settings).split(",") if s.strip())
    for setting in settings:
        if setting not in SETTINGS:
            parser.error(f"--settings: unknown setting {setting!r}")
    return Mode(
        name=base.name,
        rounds=args.rounds or base.rounds,
        seconds=args.seconds or base.seconds,
        warmup=args.warmup if args.warmup is not None else base.warmup,
        settings=settings,  # type: ignore[arg-type]  # checked above
    )


# ---------------------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """A §15.1 target on a line of the table.

    - `ratio_at_least`: the ratio (oriented bigger-is-better: sw rate / peer rate, or peer time /
      sw time) must reach `value`;
    - `ratio_at_most`: the ratio is sw time / peer time (smaller is better) and must stay under
      `value` (SPEC's "<= 2x the peer's time");
    - `sw_at_most`: sessionwatch's own median (in `unit`) must stay under `value`;
    - `sw_below`: sessionwatch's own figure must be strictly below `value` (SPEC's "< 200 MB");
    - `info`: a context line without a target of its own (not counted by `run.py`).
    """

    kind: Literal["ratio_at_least", "ratio_at_most", "sw_at_most", "sw_at_least", "sw_below", "info"]
    value: float
    unit: str = "x"

    def label(self) -> str:
        """How the table shows it."""
        match self.kind:
            case "ratio_at_least":
                return f">= {self.value:,g}x"
            case "ratio_at_most":
                return f"<= {self.value:,g}x"
            case "sw_at_most":
                return f"<= {self.value:,g}{'' if self.unit == 'x' else ' '}{self.unit}"
            case "sw_at_least":
                return f">= {self.value:,g}{'' if self.unit == 'x' else ' '}{self.unit}"
            case "sw_below":
                return f"< {self.value:,g}{'' if self.unit == 'x' else ' '}{self.unit}"
            case "info":
                return "(context)"

    @property
    def counted(self) -> bool:
        """Whether the line has a target of its own (context lines do not)."""
        return self.kind != "info"

    def met(self, ratio: float, sw_median: float) -> bool:
        """Whether a result meets the target (a context line always does)."""
        match self.kind:
            case "ratio_at_least":
                return ratio >= self.value
            case "ratio_at_most":
                return ratio <= self.value
            case "sw_at_most":
                return sw_median <= self.value
            case "sw_at_least":
                return sw_median >= self.value
            case "sw_below":
                return sw_median < self.value
            case "info":
                return True


def at_least(ratio: float) -> Target:
    """The sessionwatch rate must reach `ratio` times the peer's (or the peer's time / sw time)."""
    return Target("ratio_at_least", ratio)


def at_most_times_peer(ratio: float) -> Target:
    """The sessionwatch time must stay under `ratio` times the peer's time (ratio = sw / peer)."""
    return Target("ratio_at_most", ratio)


def at_most_us(micros: float) -> Target:
    """The median sessionwatch latency must stay under `micros`."""
    return Target("sw_at_most", micros, "us")


def sw_at_most(value: float, unit: str) -> Target:
    """The sessionwatch median figure (in `unit`: `s`, `x`, ...) must stay under `value`."""
    return Target("sw_at_most", value, unit)


def sw_at_least(value: float, unit: str) -> Target:
    """The sessionwatch median figure (in `unit`: `events/s`, ...) must reach `value`."""
    return Target("sw_at_least", value, unit)


def sw_below(value: float, unit: str) -> Target:
    """The sessionwatch figure (in `unit`) must stay strictly below `value`."""
    return Target("sw_below", value, unit)


CONTEXT = Target("info", 0.0)
"""A line shown for context, with no target of its own."""


# ---------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Result:
    """One line of the table, with the per-round figures behind it."""

    workload: str
    setting: str
    unit: str
    peer_median: float
    sw_median: float
    ratio: float
    target: Target
    met: bool
    peer_rounds: list[float]
    sw_rounds: list[float]
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = asdict(self)
        for name in ("peer_median", "ratio"):  # NaN (no peer) is not JSON: null
            if math.isnan(out[name]):
                out[name] = None
        out["target"] = {"kind": self.target.kind, "value": self.target.value, "label": self.target.label()}
        return out


def throughput_result(
    workload: str,
    setting: str,
    unit: str,
    rounds: tuple[list[float], list[float]],
    *,
    target: Target,
    extra: dict[str, Any] | None = None,
) -> Result:
    """Rates per round (peer, sw) -> a result whose ratio is sw rate / peer rate."""
    peer_rounds, sw_rounds = rounds
    peer = statistics.median(peer_rounds)
    sw = statistics.median(sw_rounds)
    ratio = sw / peer
    met = target.met(ratio, sw)
    return Result(workload, setting, unit, peer, sw, ratio, target, met, peer_rounds, sw_rounds, extra or {})


def latency_result(
    workload: str,
    setting: str,
    rounds: tuple[list[float], list[float]],
    *,
    target: Target,
    extra: dict[str, Any] | None = None,
) -> Result:
    """Median microseconds per round (peer, sw) -> a result whose ratio is peer time / sw time."""
    peer_rounds, sw_rounds = rounds
    peer = statistics.median(peer_rounds)
    sw = statistics.median(sw_rounds)
    ratio = peer / sw
    met = target.met(ratio, sw)
    return Result(workload, setting, "us", peer, sw, ratio, target, met, peer_rounds, sw_rounds, extra or {})


def time_result(
    workload: str,
    setting: str,
    unit: str,
    rounds: tuple[list[float], list[float]],
    *,
    target: Target,
    extra: dict[str, Any] | None = None,
) -> Result:
    """Median times per round (peer, sw) -> a result whose ratio is sw time / peer time.

    For the targets SPEC §15.1 words as "<= k x the peer's time": smaller is better.
    """
    peer_rounds, sw_rounds = rounds
    peer = statistics.median(peer_rounds)
    sw = statistics.median(sw_rounds)
    ratio = sw / peer
    met = target.met(ratio, sw)
    return Result(workload, setting, unit, peer, sw, ratio, target, met, peer_rounds, sw_rounds, extra or {})


def speed_result(
    workload: str,
    setting: str,
    unit: str,
    rounds: tuple[list[float], list[float]],
    *,
    target: Target,
    extra: dict[str, Any] | None = None,
) -> Result:
    """Median times per round (peer, sw) -> a result whose ratio is peer time / sw time.

    For the targets SPEC §15.1 words as "k x the peer" on work timed once per round (`prune`):
    bigger is better, as for a rate.
    """
    peer_rounds, sw_rounds = rounds
    peer = statistics.median(peer_rounds)
    sw = statistics.median(sw_rounds)
    ratio = peer / sw
    met = target.met(ratio, sw)
    return Result(workload, setting, unit, peer, sw, ratio, target, met, peer_rounds, sw_rounds, extra or {})


NO_PEER = math.nan
"""The peer figure and the ratio of a line measuring sessionwatch alone (`flat`): shown as `-`."""


def sw_only_result(
    workload: str,
    setting: str,
    unit: str,
    value: float,
    *,
    target: Target,
    extra: dict[str, Any] | None = None,
) -> Result:
    """A line with sessionwatch's figure alone (no peer, no ratio), checked against `target`."""
    met = target.met(NO_PEER, value)
    return Result(workload, setting, unit, NO_PEER, value, NO_PEER, target, met, [], [value], extra or {})


def _figure(value: float, unit: str) -> str:
    if math.isnan(value):
        return "-"
    match unit:
        case "us":
            return f"{value:,.1f} us"
        case "s":
            return f"{value:,.3f} s"
        case "ms":
            return f"{value:,.2f} ms"
        case "x":
            return f"{value:,.2f}x"
        case "MB":
            return f"{value:,.1f} MB"
        case _:
            return f"{value:,.0f} {unit}"


HEADER = (
    f"{'workload':<11} {'setting':<8} {'peer-median':>18} {'sw-median':>18} {'ratio':>8}  {'target':<17} met?"
)


def _verdict(result: Result) -> str:
    if not result.target.counted:
        return "-"
    return "yes" if result.met else "NO"


def _ratio(ratio: float) -> str:
    return "-" if math.isnan(ratio) else f"{ratio:.2f}x"


def format_row(result: Result) -> str:
    """One table line: workload, setting, peer median, sw median, ratio, target, met?."""
    return (
        f"{result.workload:<11} {result.setting:<8} {_figure(result.peer_median, result.unit):>18}"
        f" {_figure(result.sw_median, result.unit):>18} {_ratio(result.ratio):>8}"
        f"  {result.target.label():<17} {_verdict(result)}"
    )


def print_table(results: Sequence[Result]) -> None:
    """The header and one line per result."""
    print(HEADER)
    for result in results:
        print(format_row(result))


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(  # noqa: S603 - fixed git subcommands from this module
            ["git", *args],  # noqa: S607 - git from PATH
            cwd=BENCH_DIR.parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout


SNAPSHOT_COMMIT = "SNAPSHOT_COMMIT"
"""A file naming the commit of a `sessionwatch` snapshot imported instead of the working tree."""


def measured_code() -> dict[str, Any]:
    """Which sessionwatch the figures measure: the working tree, or a snapshot (see README).

    The working tree: its HEAD and its uncommitted core changes. A snapshot: the commit its
    `SNAPSHOT_COMMIT` file names.
    """
    package = Path(sessionwatch.__file__).resolve().parent
    if package == BENCH_DIR.parent:  # the working tree (the editable install links into it)
        head = _git("rev-parse", "--short", "HEAD")
        status = _git("status", "--porcelain")
        changes = None
        if status is not None:
            paths = [line[3:] for line in status.splitlines() if line[3:]]
            changes = [path for path in paths if not path.startswith(("bench/", "tests/"))]
        return {
            "sessionwatch": str(package),
            "commit": head.strip() if head else None,
            "core_changes": changes,
        }
    marker = package / SNAPSHOT_COMMIT
    commit = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
    return {"sessionwatch": str(package), "commit": commit, "core_changes": None}


def environment(mode: Mode) -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": asdict(mode),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "tmpdir": tempfile.gettempdir(),
        **measured_code(),
    }


def write_results(name: str, results: Sequence[Result], mode: Mode) -> Path:
    """Write `bench/results/<name>.json` (the folder is git-ignored)."""
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    document = {"name": name, "environment": environment(mode), "results": [r.to_json() for r in results]}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------------- measurement


def settle() -> None:
    """Start a block clean: flush every dirty page to disk, collect garbage (neither is timed).

    Without the flush, a side's fsyncs pay for the other side's writeback: on ext4 (data=ordered)
    a journal commit forces out the data of every file with newly allocated blocks, so a peer
    block that follows a burst of sessionwatch writes (or the reverse) would be charged for them.
    """
    os.sync()
    gc.collect()


def rate_block(call: Call, seconds: float) -> float:
    """Units per second: calls `call` until `seconds` have passed (at least once)."""
    settle()
    units = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        units += call()
        now = time.perf_counter()
        if now >= deadline:
            return units / (now - start)


def latency_block(call: Call, seconds: float) -> float:
    """The median microseconds of one call over a block of `seconds`."""
    settle()
    samples: list[int] = []
    clock = time.perf_counter_ns
    deadline = clock() + int(seconds * 1e9)
    while True:
        start = clock()
        call()
        end = clock()
        samples.append(end - start)
        if end >= deadline:
            return statistics.median(samples) / 1000.0


def interleave(
    peer: Call, sw: Call, mode: Mode, block: Callable[[Call, float], float] = rate_block
) -> tuple[list[float], list[float]]:
    """Warm both up, then `mode.rounds` rounds of (peer block, sessionwatch block)."""
    peer_rounds, sw_rounds = interleave_many((peer, sw), mode, block)
    return peer_rounds, sw_rounds


def interleave_many(
    calls: Sequence[Call], mode: Mode, block: Callable[[Call, float], float] = rate_block
) -> list[list[float]]:
    """Warm every side up, then `mode.rounds` rounds of one block per side, in the given order."""
    for call in calls:
        block(call, mode.warmup)
    rounds: list[list[float]] = [[] for _ in calls]
    for _ in range(mode.rounds):
        for figures, call in zip(rounds, calls, strict=True):
            figures.append(block(call, mode.seconds))
    return rounds


def timed_once(call: Callable[[], object]) -> float:
    """Seconds of one call (for work too long to repeat in a block), after `settle()`."""
    settle()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


# ---------------------------------------------------------------------------------------- stores


COMPILE_BYTECODE = (
    "import compileall, os, sessionwatch\n"
    "compileall.compile_dir(os.path.dirname(sessionwatch.__file__), quiet=1)\n"
)


def compile_bytecode(env: dict[str, str] | None = None) -> None:
    """Write the bytecode of the `sessionwatch` a child process with `env` imports, as an install does.

    `pip install` compiles every module of a wheel it installs, so a user's first command already
    starts from bytecode; an editable install or a snapshot does not, and where
    `$PYTHONDONTWRITEBYTECODE` is set nothing ever writes it, so every process would compile the
    modules it imports again. A workload that times whole processes calls this first, so that it
    measures what a user runs, not the compiler.
    """
    subprocess.run([sys.executable, "-c", COMPILE_BYTECODE], env=env, check=True)  # noqa: S603


@contextmanager
def fresh_dir(label: str) -> Iterator[Path]:
    """A fresh temporary directory for one store, removed afterwards (`$TMPDIR` picks the disk)."""
    with tempfile.TemporaryDirectory(prefix=f"sessionwatch-bench-{label}-") as name:
        yield Path(name)


@contextmanager
def sessionwatch_store(
    directory: Path,
    synchronous: Synchronous,
    *,
    clock: Clock | None = None,
    waker: Waker | None = None,
) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a SQLite file in `directory` (optionally with a clock and a waker)."""
    watch = sessionwatch.open(
        f"sqlite:///{directory / 'sessionwatch.db'}", synchronous=synchronous, clock=clock, waker=waker
    )
    try:
        yield watch
    finally:
        watch.close()


def checkpoint(path: Path) -> None:
    """Fold the WAL into the database file (after a bulk load), from a connection of our own."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA busy_timeout=5000")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


def now_ms() -> int:
    """The wall clock in epoch milliseconds."""
    return time.time_ns() // 1_000_000


class ManualClock:
    """A settable clock (the `Clock` port): starts at the wall clock, moves only when told."""

    def __init__(self) -> None:
        self.current = datetime.now(UTC)

    def now(self) -> datetime:
        """The clock's current time (aware UTC)."""
        return self.current

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self.current += timedelta(seconds=seconds)


class CountingWaker:
    """A waker (the `Waker` port) that does nothing but count: wakes are part of the measured cost."""

    def __init__(self) -> None:
        self.count = 0

    def wake(self, watcher_key: str, reason: str) -> None:  # noqa: ARG002 - the port's signature
        """Count one wake."""
        self.count += 1


# ---------------------------------------------------------------------------- the signal of §15.1

AGENT = "main"
WATCHER = "agent:main:main"
TARGET = "agent:main:subagent:worker"
SUMMARY = "human message via telegram"


def run_script(name: str, doc: str | None, run: Callable[[Mode], list[Result]]) -> None:
    """A workload script's `main`: parse its options, run it, print its table, write its JSON."""
    mode = parse_mode(doc or name)
    results = run(mode)
    print_table(results)
    write_results(name, results, mode)
