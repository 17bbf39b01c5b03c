"""Where sessionwatch spends its time: cProfile of `record`, `record_many`, and `session_status`.

`python bench/profiles.py [--top N] [--calls N]` prints, for each operation, the top functions by
cumulative time and by own time, on the same set-up as the `record`, `batch`, `reconcile` and `head`
workloads. `--statement-cache N` is a diagnostic: it opens sessionwatch's SQLite connections with a
statement cache of N entries (eventsourcing opens them with `cached_statements=True`, i.e. ONE
entry), to show what the core would gain from a real cache. It changes nothing on disk.
(Named `profiles` so it does not shadow the standard library's `profile`, which cProfile imports.)
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/profiles.py` finds `bench.*`

from bench.harness import SUMMARY, TARGET, WATCHER, fresh_dir, sessionwatch_store
from bench.reconcile import PAGE, SESSIONS, loaded_stores, session_key, since
from sessionwatch import Actor, SignalInput, SignalKind


def profile(label: str, call: Callable[[], object], calls: int, top: int) -> None:
    """Warm up, then profile `calls` calls and print the top functions two ways."""
    for _ in range(max(10, calls // 10)):
        call()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    per_call = (time.perf_counter() - start) / calls * 1e6
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        call()
    profiler.disable()
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


def main() -> None:
    """Profile record, record_many, the full-page reconciliation and the head read."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=25, help="functions shown per table")
    parser.add_argument("--calls", type=int, default=2000, help="record calls profiled")
    parser.add_argument("--statement-cache", type=int, help="diagnostic: sqlite3 statement cache size")
    args = parser.parse_args()
    if args.statement_cache:
        use_statement_cache(args.statement_cache)
        print(f"(diagnostic: sessionwatch connections opened with cached_statements={args.statement_cache})")
    with fresh_dir("sw") as directory, sessionwatch_store(directory, "normal") as watch:
        watch.upsert_session(TARGET, spawned_by=WATCHER)
        human = Actor.human()
        kind = SignalKind.HUMAN_DIRECT_MESSAGE
        profile(
            "record (NORMAL)",
            lambda: watch.record(TARGET, kind=kind, actor=human, summary=SUMMARY),
            args.calls,
            args.top,
        )
        inputs = [
            SignalInput(session_key=TARGET, kind=kind, actor=human, summary=SUMMARY) for _ in range(100)
        ]
        profile("record_many x100 (NORMAL)", lambda: watch.record_many(inputs), args.calls // 20, args.top)
    with loaded_stores() as loaded:
        key, v = session_key(SESSIONS // 2), since(SESSIONS // 2)
        profile(
            "session_status(changes_since=v), full page of 200",
            lambda: loaded.watch.session_status(key, changes_since=v, limit=PAGE),
            args.calls // 5,
            args.top,
        )
        profile("session_status() (head)", lambda: loaded.watch.session_status(key), args.calls * 5, args.top)


if __name__ == "__main__":
    main()
