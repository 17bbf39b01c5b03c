"""Where sessionwatch spends its time: cProfile of its hot paths, one workload set-up each.

`python bench/profiles.py [--top N] [--calls N] [--only CASES]` prints, for each operation, the top
functions by cumulative time and by own time: `record` and `record_many` of 100 (the `record` and
`batch` set-ups), the full-page `session_status(changes_since=v)` and the head read (`reconcile`,
`head`), one `record` on a target with 1,000 watchers and a counting waker (`fan-out`), and
`sweep()` over 10,000 open cursors with a settable clock and a counting waker (`sweep`; each
profiled sweep is prepared untimed), and the forced `prune()` of 50,000 expired signals over 50
sessions (`prune`: each profiled prune on a fresh copy of the `prune` store; then the timeline of
the SQL statements of one more prune on each side, sessionwatch and the peer: the milliseconds from
each statement's start to the next one's, its Python glue included), and `import_history` of an
export of 20,000 signals in one process (`import`: the parse, the checks, the fold and the load of
every line).

`--statement-cache N` is a diagnostic: it opens sessionwatch's SQLite connections with a statement
cache of N entries, to show what the core gains from its cache (eventsourcing's own pool opens them
with `cached_statements=True`, i.e. ONE entry). It changes nothing on disk.

(Named `profiles` so it does not shadow the standard library's `profile`, which cProfile imports.)
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import itertools
import pstats
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/profiles.py` finds `bench.*`

import sessionwatch
from bench import fanout, history, prune, sweep
from bench.harness import (
    SUMMARY,
    TARGET,
    WATCHER,
    CountingWaker,
    ManualClock,
    fresh_dir,
    sessionwatch_store,
    settle,
)
from bench.peer import PeerStore
from bench.reconcile import PAGE, SESSIONS, loaded_stores, session_key, since
from sessionwatch import Actor, SessionWatch, SignalInput, SignalKind
from sessionwatch.adapters.history.jsonl import import_history

CASES = ("record", "reconcile", "fanout", "sweep", "prune", "import")
PRUNES = 3
FANOUT_WATCHERS = 1_000


def profile(
    label: str,
    call: Callable[[], object],
    calls: int,
    top: int,
    *,
    prepare: Callable[[], object] | None = None,
    warmup: int | None = None,
) -> None:
    """Warm up, then profile `calls` calls and print the top functions two ways.

    `prepare`, when given, runs before every call, outside both the timing and the profile.
    """

    def timed_calls(profiler: cProfile.Profile | None = None) -> float:
        spent = 0.0
        for _ in range(calls):
            if prepare is not None:
                prepare()
            start = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            call()
            if profiler is not None:
                profiler.disable()
            spent += time.perf_counter() - start
        return spent

    for _ in range(max(10, calls // 10) if warmup is None else warmup):
        if prepare is not None:
            prepare()
        call()
    per_call = timed_calls() / calls * 1e6
    profiler = cProfile.Profile()
    timed_calls(profiler)
    print(f"=== {label}: {calls} calls, {per_call:,.1f} us per call unprofiled")
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order)
        stats.print_stats(top)
        body = out.getvalue()
        print(f"--- by {order}")
        print(body[body.find("   ncalls") :].rstrip())
    print()


def use_statement_cache(size: int) -> None:
    """Diagnostic: every SQLite connection opened from now on gets a statement cache of `size`."""
    connect = sqlite3.connect

    def connect_with_cache(*args: Any, **kwargs: Any) -> sqlite3.Connection:  # noqa: ANN401 - sqlite3.connect's
        kwargs["cached_statements"] = size
        connection: sqlite3.Connection = connect(*args, **kwargs)
        return connection

    sqlite3.connect = connect_with_cache  # type: ignore[assignment]  # diagnostic patch, by design


def profile_fanout(calls: int, top: int) -> None:
    """One signal on a target with 1,000 registered watchers, a counting waker (the `fan-out` set-up)."""
    waker = CountingWaker()
    with fresh_dir("sw") as directory, sessionwatch_store(directory, "normal", waker=waker) as watch:
        side = fanout.sw_side(watch, waker, FANOUT_WATCHERS)
        side.check()
        profile(
            f"fan-out: record on a target with {FANOUT_WATCHERS:,} watchers (NORMAL)", side.call, calls, top
        )


def profile_sweep(calls: int, top: int) -> None:
    """`sweep()` over 10,000 open cursors of existing watchers (the `sweep` set-up)."""
    clock, waker = ManualClock(), CountingWaker()
    with (
        fresh_dir("sw") as directory,
        sessionwatch_store(directory, "normal", clock=clock, waker=waker) as watch,
    ):
        side = sweep.SwSweep.build(watch, clock, waker)
        profile(
            f"sweep() over {sweep.CURSORS:,} open cursors (NORMAL)",
            side.sweep,
            calls,
            top,
            prepare=side.prepare,
            warmup=1,
        )


def statement_timeline(call: Callable[[], object]) -> list[tuple[float, str]]:
    """Diagnostic: run `call` with every new SQLite connection tracing its statements.

    Returns (`time.perf_counter()`, statement) for each statement as it began.
    """
    timeline: list[tuple[float, str]] = []
    connect = sqlite3.connect

    def trace(statement: str) -> None:
        timeline.append((time.perf_counter(), statement))

    def connect_traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:  # noqa: ANN401 - sqlite3.connect's
        connection: sqlite3.Connection = connect(*args, **kwargs)
        connection.set_trace_callback(trace)
        return connection

    sqlite3.connect = connect_traced  # type: ignore[assignment]  # diagnostic patch, by design
    try:
        call()
    finally:
        sqlite3.connect = connect
    return timeline


def profile_prune(top: int) -> None:
    """A forced `prune()` of 50,000 expired signals over 50 sessions (the `prune` set-up)."""
    with fresh_dir("prune-built") as built_dir, fresh_dir("sw") as sw_dir:
        built = prune.build(built_dir)
        prune.sw_round(built, sw_dir)  # warm-up
        profiler = cProfile.Profile()
        spent = 0.0
        for _ in range(PRUNES):
            path = prune.fresh_copy(built.sw_path, sw_dir)
            with sessionwatch.open(f"sqlite:///{path}", clock=ManualClock(), sweep_on_open=False) as watch:
                start = time.perf_counter()
                profiler.enable()
                report = watch.prune(force=True)
                profiler.disable()
                spent += time.perf_counter() - start
            assert report.signals_removed == prune.SIGNALS, report
        print(f"=== prune(force=True), {prune.SIGNALS:,} expired signals: {PRUNES} calls,")
        print(f"    {spent / PRUNES * 1e3:,.1f} ms per call profiled")
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(top)
            body = out.getvalue()
            print(f"--- by {order}")
            print(body[body.find("   ncalls") :].rstrip())
        sw_path = prune.fresh_copy(built.sw_path, sw_dir)
        peer_path = prune.fresh_copy(built.peer_path, sw_dir)

        def sw_prune(bounds: list[float]) -> None:
            with sessionwatch.open(f"sqlite:///{sw_path}", clock=ManualClock(), sweep_on_open=False) as watch:
                settle()
                bounds.append(time.perf_counter())
                watch.prune(force=True)
                bounds.append(time.perf_counter())

        def peer_prune(bounds: list[float]) -> None:
            peer = PeerStore(peer_path)
            try:
                settle()
                bounds.append(time.perf_counter())
                peer.prune()
                bounds.append(time.perf_counter())
            finally:
                peer.close()

        for label, one_prune in (("sessionwatch prune(force=True)", sw_prune), ("peer prune()", peer_prune)):
            bounds: list[float] = []
            timeline = statement_timeline(functools.partial(one_prune, bounds))
            began, returned = bounds
            lines = [(at, text) for at, text in timeline if began <= at <= returned]
            lines.append((returned, "(returned)"))
            print(f"--- statements of one {label}: {(returned - began) * 1e3:,.1f} ms (ms to the next one)")
            print(f"{(lines[0][0] - began) * 1e3:>9.1f}  (before the first statement)")
            for (at, text), (after, _) in itertools.pairwise(lines):
                print(f"{(after - at) * 1e3:>9.1f}  {' '.join(text.split())[:150]}")
    print()


def profile_record(calls: int, top: int) -> None:
    """`record` with one registered watcher, and `record_many` of 100 (the `record` and `batch` set-ups)."""
    with fresh_dir("sw") as directory, sessionwatch_store(directory, "normal") as watch:
        watch.upsert_session(TARGET, spawned_by=WATCHER)
        assert watch.watch(WATCHER, TARGET), "the watcher must be registered"
        human = Actor.human()
        kind = SignalKind.HUMAN_DIRECT_MESSAGE
        profile(
            "record (NORMAL)",
            lambda: watch.record(TARGET, kind=kind, actor=human, summary=SUMMARY),
            calls,
            top,
        )
        inputs = [
            SignalInput(session_key=TARGET, kind=kind, actor=human, summary=SUMMARY) for _ in range(100)
        ]
        profile("record_many x100 (NORMAL)", lambda: watch.record_many(inputs), calls // 20, top)


def profile_reads(calls: int, top: int) -> None:
    """The full-page reconciliation and the head read (the `reconcile` and `head` set-ups)."""
    with loaded_stores() as loaded:
        key, v = session_key(SESSIONS // 2), since(SESSIONS // 2)
        profile(
            "session_status(changes_since=v), full page of 200",
            lambda: loaded.watch.session_status(key, changes_since=v, limit=PAGE),
            calls // 5,
            top,
        )
        profile("session_status() (head)", lambda: loaded.watch.session_status(key), calls * 5, top)


IMPORT_SIGNALS = 20_000


def profile_import(top: int) -> None:
    """`import_history` of an export of 20,000 signals (`bench/history.py`) into a fresh SQLite store.

    In one process (`check_elsewhere=False`), so one profile shows every step of every line: the
    parse, the checks, the fold and the load. The command line splits them over two processes for a
    big file (ADR-0043, ADR-0066). Each profiled import gets a new store, opened untimed.
    """
    with fresh_dir("sw") as directory:
        source = directory / "history.jsonl"
        history.build(source, IMPORT_SIGNALS)
        numbers = itertools.count()
        opened: list[SessionWatch] = []

        def prepare() -> None:
            while opened:
                opened.pop().close()
            opened.append(sessionwatch.open(f"sqlite:///{directory / f'import-{next(numbers)}.db'}"))

        def call() -> None:
            with source.open(encoding="utf-8") as lines:
                import_history(opened[-1].store, lines)

        try:
            profile(
                f"import of {IMPORT_SIGNALS:,} signals, one process", call, 1, top, prepare=prepare, warmup=1
            )
        finally:
            while opened:
                opened.pop().close()


def main() -> None:
    """Profile record, record_many, the reconciliation, the head read, fan-out, sweep, prune and import."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=25, help="functions shown per table")
    parser.add_argument("--calls", type=int, default=2000, help="record calls profiled")
    parser.add_argument("--statement-cache", type=int, help="diagnostic: sqlite3 statement cache size")
    parser.add_argument(
        "--only",
        default=",".join(CASES),
        help=f"comma-separated cases to profile, among {','.join(CASES)}",
    )
    args = parser.parse_args()
    only = {case.strip() for case in str(args.only).split(",") if case.strip()}
    if not only <= set(CASES):
        parser.error(f"--only: unknown cases {sorted(only - set(CASES))}")
    if args.statement_cache:
        use_statement_cache(args.statement_cache)
        print(f"(diagnostic: sessionwatch connections opened with cached_statements={args.statement_cache})")
    if "record" in only:
        profile_record(args.calls, args.top)
    if "reconcile" in only:
        profile_reads(args.calls, args.top)
    if "fanout" in only:
        profile_fanout(max(20, args.calls // 20), args.top)
    if "sweep" in only:
        profile_sweep(3, args.top)
    if "prune" in only:
        profile_prune(args.top)
    if "import" in only:
        profile_import(args.top)


if __name__ == "__main__":
    main()
