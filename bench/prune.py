"""`prune`: one forced prune removing 50,000 expired signals over 50 sessions (SPEC §8, §15.1).

Both stores hold the same 50,000 signals, round-robin over 50 sessions with the `reconcile` mix
(kinds, actors, run ids, dedupe keys, payloads), every one 31 days old: sessionwatch records them
through `record_many` in chunks of 1,000 with a settable clock set 31 days in the past (its
`occurred_at` window is the clock's last 24 hours), the peer through `executemany` with the same
`occurred_at`. Each store is built ONCE, its WAL checkpointed, and the database file copied afresh
before every round (untimed), then opened (sessionwatch with `sweep_on_open=False` and its clock
back at the wall clock, so nothing is pruned before the timed call).

Timed, once per side per round (settled first): sessionwatch's `prune(force=True)`, which in one
transaction stamps the watermarks, deletes the signals, writes its checkpoint event and compacts
its event store (ADR-0008: the 50,000 `SignalRecorded` events and the rest of the history before
the checkpoint go too), against the peer's `prune()` (SPEC §8 in one transaction: watermarks
stamped, signals deleted, by age then by the global cap, then idle cursors). Both age cut-offs are
`now - 30 days`; nothing is over the 50,000 cap; there are no cursors.

Every round is checked: both sides removed exactly 50,000 signals; every session's watermark equals
its head, which is unchanged and the same on both sides; sessionwatch keeps one stored event (its
checkpoint) and stamped 50 sessions; the peer keeps no event row.

Ratio: peer time / sessionwatch time (bigger is better). Target (SPEC §15.1): >= 0.5x.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
import time
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/prune.py` finds `bench.*`

import sessionwatch
from bench.harness import (
    ManualClock,
    Mode,
    Result,
    at_least,
    checkpoint,
    fresh_dir,
    parse_mode,
    print_table,
    speed_result,
    timed_once,
    write_results,
)
from bench.peer import PeerStore
from bench.reconcile import as_input, session_key, signal
from sessionwatch import PruneReport, SessionWatch

NAME = "prune"
SIGNALS = 50_000
SESSIONS = 50
CHUNK = 1_000
AGE = timedelta(days=31)
RETENTION_DAYS = 30
TARGET = at_least(0.5)
SW_DB = "sessionwatch.db"
PEER_DB = "peer.db"

Heads = dict[str, tuple[int, int]]
"""Session key -> (head, prune watermark)."""


def epoch_ms(moment: datetime) -> int:
    """Epoch milliseconds of an aware datetime."""
    return int(moment.timestamp() * 1000)


@dataclass(frozen=True)
class Built:
    """The two prebuilt stores (closed, WAL checkpointed) and what they hold."""

    sw_path: Path
    peer_path: Path
    heads: Heads
    sw_stored_events: int
    sw_build_seconds: float
    peer_build_seconds: float


def build(directory: Path) -> Built:
    """Build both stores once: the same 50,000 signals, all 31 days old."""
    past = datetime.now(UTC) - AGE
    base = epoch_ms(past) - SIGNALS - 60_000  # inside the clock's [now - 24 h, now] window
    history = [signal(i, base) for i in range(SIGNALS)]
    sw_path, peer_path = directory / SW_DB, directory / PEER_DB

    clock = ManualClock()
    clock.current = past
    inputs = [as_input(s) for s in history]
    start = time.perf_counter()
    with sessionwatch.open(f"sqlite:///{sw_path}", clock=clock) as watch:
        for offset in range(0, SIGNALS, CHUNK):
            watch.record_many(inputs[offset : offset + CHUNK])
        stored_events = watch.store.stored_event_count()
    sw_seconds = time.perf_counter() - start
    checkpoint(sw_path)

    peer = PeerStore(peer_path, synchronous="normal")
    start = time.perf_counter()
    peer.bulk_load(history)
    peer_seconds = time.perf_counter() - start
    peer.close()
    checkpoint(peer_path)

    heads = sw_heads(sw_path)
    assert len(heads) == SESSIONS, f"sessionwatch holds {len(heads)} sessions"
    assert heads == peer_heads(peer_path), "the two stores must hold the same heads"
    assert all(watermark == 0 for _, watermark in heads.values()), "nothing is pruned yet"
    assert sw_signal_count(sw_path) == peer_signal_count(peer_path) == SIGNALS
    return Built(sw_path, peer_path, heads, stored_events, sw_seconds, peer_seconds)


def _query(path: Path, statement: str) -> list[Any]:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute(statement).fetchall()


def sw_heads(path: Path) -> Heads:
    """The heads and watermarks sessionwatch holds, read from its file."""
    rows = _query(path, "SELECT session_key, head, pruned_through FROM sw_sessions WHERE agent_id = 'main'")
    return {key: (head, watermark) for key, head, watermark in rows}


def peer_heads(path: Path) -> Heads:
    """The peer's heads and watermarks."""
    rows = _query(path, "SELECT session_key, last_sequence, pruned_max_sequence FROM session_state_heads")
    return {key: (head, watermark) for key, head, watermark in rows}


def sw_signal_count(path: Path) -> int:
    """Signals sessionwatch retains."""
    return int(_query(path, "SELECT COUNT(*) FROM sw_signals")[0][0])


def peer_signal_count(path: Path) -> int:
    """Signals the peer retains."""
    return int(_query(path, "SELECT COUNT(*) FROM session_state_events")[0][0])


def fresh_copy(source: Path, directory: Path) -> Path:
    """Copy a closed, checkpointed store into `directory` (untimed), replacing the last round's."""
    target = directory / source.name
    for stale in (target, target.with_name(target.name + "-wal"), target.with_name(target.name + "-shm")):
        stale.unlink(missing_ok=True)
    shutil.copy(source, target)
    return target


def pruned_heads(built: Built) -> Heads:
    """What every session must hold after the prune: its head unchanged, the watermark at the head."""
    return {key: (head, head) for key, (head, _) in built.heads.items()}


def sw_round(built: Built, directory: Path) -> tuple[float, PruneReport]:
    """Time one forced prune of sessionwatch on a fresh copy, then check it."""
    path = fresh_copy(built.sw_path, directory)
    clock = ManualClock()  # the wall clock: every signal is 31 days old, the cut-off is 30 days
    watch: SessionWatch = sessionwatch.open(f"sqlite:///{path}", clock=clock, sweep_on_open=False)
    try:
        assert watch.retention.days == RETENTION_DAYS, watch.retention
        assert watch.retention.max_signals == SIGNALS, watch.retention
        reports: list[PruneReport] = []
        seconds = timed_once(lambda: reports.append(watch.prune(force=True)))
        (report,) = reports
        stored_events = watch.store.stored_event_count()
        for s in range(SESSIONS):  # §7.1 after the prune: the head stays, the history is a gap
            status = watch.session_status(session_key(s), changes_since=0)
            changes = status.state_changes
            assert changes is not None, status
            assert changes.history_gap, status
            assert not changes.events, status
            assert changes.earliest_available_sequence == status.state_version + 1, status
    finally:
        watch.close()
    assert report.ran, report
    assert report.signals_removed == SIGNALS, report
    assert report.sessions_stamped == SESSIONS, report
    assert report.cursors_expired == 0, report
    assert report.events_deleted == built.sw_stored_events, (report, built.sw_stored_events)
    assert stored_events == 1, f"only the checkpoint event must remain, not {stored_events}"
    assert sw_signal_count(path) == 0
    assert sw_heads(path) == pruned_heads(built), "every watermark at its head, no head moved"
    return seconds, report


def peer_round(built: Built, directory: Path) -> float:
    """Time one prune of the peer on a fresh copy, then check it."""
    path = fresh_copy(built.peer_path, directory)
    peer = PeerStore(path, synchronous="normal")
    try:
        pruned = []
        seconds = timed_once(lambda: pruned.append(peer.prune(days=RETENTION_DAYS, max_signals=SIGNALS)))
    finally:
        peer.close()
    (report,) = pruned
    assert report.signals_removed == SIGNALS, report
    assert report.cursors_expired == 0, report
    assert peer_signal_count(path) == 0
    assert peer_heads(path) == pruned_heads(built), "every watermark at its head, no head moved"
    return seconds


def run(mode: Mode) -> list[Result]:
    """One line: median seconds of one forced prune of 50,000 expired signals (NORMAL)."""
    with fresh_dir("prune-built") as built_dir, fresh_dir("peer") as peer_dir, fresh_dir("sw") as sw_dir:
        built = build(built_dir)
        peer_round(built, peer_dir)  # warm-up: one prune each
        sw_round(built, sw_dir)
        rounds: tuple[list[float], list[float]] = ([], [])
        last: PruneReport | None = None
        for _ in range(mode.rounds):
            rounds[0].append(peer_round(built, peer_dir))
            seconds, last = sw_round(built, sw_dir)
            rounds[1].append(seconds)
    extra = {
        "signals": SIGNALS,
        "sessions": SESSIONS,
        "sw_build_seconds": built.sw_build_seconds,
        "peer_build_seconds": built.peer_build_seconds,
        "sw_stored_events_before": built.sw_stored_events,
        "sw_last_report": last.to_json() if last is not None else None,
    }
    return [speed_result(NAME, "normal", "s", rounds, target=TARGET, extra=extra)]


def main() -> None:
    """Print this workload's table and write `bench/results/prune.json`."""
    mode = parse_mode(__doc__ or NAME)
    results = run(mode)
    print_table(results)
    for result in results:
        print(
            f"(build: sessionwatch {result.extra['sw_build_seconds']:.2f} s,"
            f" peer {result.extra['peer_build_seconds']:.2f} s for {SIGNALS:,} signals;"
            f" sessionwatch held {result.extra['sw_stored_events_before']:,} stored events)"
        )
    write_results(NAME, results, mode)


if __name__ == "__main__":
    main()
