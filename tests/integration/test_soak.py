"""A scaled-down soak (SPEC §8, §15.1 "flat"): storage stays bounded under a steady stream of signals.

20,000 signals arrive through `record_many` in batches of 500 on a SQLite store capped at 1,000
signals, the clock advancing ten minutes per batch, so the hourly prune fires on every seventh
batch (six batches are exactly an hour, which is not older than an hour). After each prune the
retained signals, the stored events and the database file plateau.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from auditing import assert_audit_clean

import sessionwatch
from sessionwatch import Actor, Retention, SessionWatch, SignalInput
from sessionwatch.testing import FakeClock

TOTAL = 20_000
BATCH = 500
CAP = 1_000
MINUTES_PER_BATCH = 10
BATCHES_PER_PRUNE = 7  # the hourly throttle fires once more than an hour passed: the seventh batch
TARGETS = [f"agent:main:worker-{n}" for n in range(20)]
WATCHERS = ["agent:main:main", "agent:ops:main"]


@dataclass(frozen=True)
class Measure:
    batch: int
    signals: int
    stored_events: int
    file_bytes: int


def batch_of(start: int) -> list[SignalInput]:
    return [
        SignalInput(
            session_key=TARGETS[(start + offset) % len(TARGETS)],
            kind="human_direct_message" if offset % 3 else "goal_changed",
            actor=Actor.human() if offset % 3 else Actor.system(),
            summary="human message via telegram" if offset % 3 else "goal updated",
        )
        for offset in range(BATCH)
    ]


def retained_signals(watch: SessionWatch) -> int:
    return sum(len(log) for log in watch.store.read_model().signals.values())


def checkpointed_size(path: Path) -> int:
    """The database file's size once the WAL is written back and truncated (db + what WAL is left)."""
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def test_signals_stored_events_and_the_file_plateau_under_a_steady_stream(tmp_path: Path) -> None:
    path = tmp_path / "soak.db"
    clock = FakeClock()
    measures: list[Measure] = []
    with sessionwatch.open(f"sqlite:///{path}", clock=clock, retention=Retention(max_signals=CAP)) as watch:
        for watcher in WATCHERS:
            for target in TARGETS[::4]:
                assert watch.watch(watcher, target)
        last_prune = watch.store.last_prune_ms()
        for batch in range(1, TOTAL // BATCH + 1):
            clock.advance(minutes=MINUTES_PER_BATCH)
            watch.record_many(batch_of(batch * BATCH))
            pruned = watch.store.last_prune_ms()
            assert (pruned != last_prune) is (batch % BATCHES_PER_PRUNE == 0), f"batch {batch}"
            if pruned != last_prune:
                last_prune = pruned
                measures.append(
                    Measure(
                        batch,
                        retained_signals(watch),
                        watch.store.stored_event_count(),
                        checkpointed_size(path),
                    )
                )
            else:
                assert retained_signals(watch) <= CAP + BATCHES_PER_PRUNE * BATCH
            if batch % 5 == 0:  # watchers acknowledge now and then: cursor events between prunes
                for watcher in WATCHERS:
                    watch.drain(watcher)
        assert_audit_clean(watch)
        final_events = watch.store.stored_event_count()

    assert len(measures) == TOTAL // BATCH // BATCHES_PER_PRUNE
    for measure in measures:
        assert measure.signals == CAP, measure
        # The retained signals' own events and the prune's event: registrations and drains are gone.
        assert measure.stored_events == CAP + 1, measure
    assert final_events <= CAP + 1 + (TOTAL // BATCH % BATCHES_PER_PRUNE) * (BATCH + len(WATCHERS) * 5)
    middle = next(m for m in measures if m.batch * BATCH >= TOTAL // 2)
    later = [m for m in measures if m.batch > middle.batch]
    assert later
    assert max(m.file_bytes for m in later) <= 1.2 * middle.file_bytes, measures
    assert path.stat().st_size <= 1.2 * middle.file_bytes
