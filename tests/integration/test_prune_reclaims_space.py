"""A big prune gives the SQLite file's freed pages back to the file system; a small one does not.

The thresholds are lowered so a few thousand signals show it; the rule is the same at any size: a
prune that leaves at least a quarter of the pages free (and enough of them) is followed by a VACUUM
and a truncating checkpoint, so the file shrinks at once.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from auditing import assert_audit_clean

import sessionwatch
from sessionwatch import Actor, Retention, SignalInput
from sessionwatch.adapters.stores import sqlite as sqlite_store
from sessionwatch.testing import FakeClock

KEEP = Retention(days=3650, max_signals=1_000_000)


def _pages(path: Path) -> tuple[int, int]:
    """The file's page count and free pages, as SQLite sees them with the WAL checkpointed."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(db.execute("PRAGMA page_count").fetchone()[0]), int(
            db.execute("PRAGMA freelist_count").fetchone()[0]
        )


def _seed(path: Path, signals: int, clock: FakeClock) -> None:
    with sessionwatch.open(f"sqlite:///{path}", clock=clock, retention=KEEP) as watch:
        for start in range(0, signals, 500):
            clock.advance(seconds=1)
            watch.record_many(
                [
                    SignalInput(
                        session_key=f"agent:main:subagent:w{i % 10}",
                        kind="human_direct_message",
                        actor=Actor.human(),
                        summary=f"message {i} " + "x" * 150,
                    )
                    for i in range(start, start + 500)
                ]
            )


def _prune_to(path: Path, keep: int, clock: FakeClock) -> int:
    policy = Retention(days=3650, max_signals=keep)
    with sessionwatch.open(f"sqlite:///{path}", clock=clock, retention=policy, sweep_on_open=False) as watch:
        report = watch.prune(force=True)
        assert_audit_clean(watch)
        return report.signals_removed


@pytest.fixture(autouse=True)
def _small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "RECLAIM_MIN_PAGES", 64)


def test_a_big_prune_shrinks_the_file(tmp_path: Path) -> None:
    big, fresh = tmp_path / "big.db", tmp_path / "fresh.db"
    clock = FakeClock()
    _seed(big, 4000, clock)
    _seed(fresh, 1000, clock)
    before, _ = _pages(big)
    assert _prune_to(big, 1000, clock) == 3000
    after, free = _pages(big)
    fresh_pages, _ = _pages(fresh)
    assert after < before / 2, (before, after)
    assert free < sqlite_store.RECLAIM_MIN_PAGES, free
    assert after <= fresh_pages * 1.5, (after, fresh_pages)
    assert big.stat().st_size < before * 4096 / 2, "the pages went back to the file system"


def test_a_small_prune_leaves_its_pages_for_reuse(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    clock = FakeClock()
    _seed(path, 4000, clock)
    before, _ = _pages(path)
    assert _prune_to(path, 3800, clock) == 200
    after, free = _pages(path)
    assert after == before, "a small prune does not rewrite the file"
    assert free > 0
