"""A SQLite store writes on one connection and remembers what it wrote, until another writes (ADR-0018).

The write cache (session states, stream versions, the sequence and notification counters) is
dropped whenever another connection committed to the file: another store object in this process,
another process, or a hand-made change. Each test makes a cached value stale and checks that the
next write sees the file as it is.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from auditing import assert_audit_clean

import sessionwatch
from sessionwatch import Actor, SessionWatch, StoreError
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.testing import FakeClock

TARGET = "agent:main:subagent:child"
WATCHER = "agent:main:main"


def _record(watch: SessionWatch, key: str = TARGET) -> int:
    return watch.record(key, kind="goal_changed", actor=Actor.system(), summary="goal updated").sequence


def test_two_stores_on_one_file_take_turns_without_reusing_a_sequence(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    with (
        sessionwatch.open(url, clock=FakeClock()) as first,
        sessionwatch.open(url, clock=FakeClock()) as second,
    ):
        first.watch(WATCHER, TARGET)
        # each store's counter and head are stale after the other's turn
        sequences = [_record(first if turn % 2 == 0 else second) for turn in range(6)]
        assert sequences == list(range(1, 7))
        for watch in (first, second):
            assert watch.session_status(TARGET).state_version == 6
            cursor = watch.cursor(WATCHER, TARGET)
            assert cursor is not None
            assert (cursor.notified, cursor.material) == (1, 6)
            assert_audit_clean(watch)


def test_a_session_deleted_by_another_store_is_not_brought_back_by_a_stale_cache(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    with (
        sessionwatch.open(url, clock=FakeClock()) as first,
        sessionwatch.open(url, clock=FakeClock()) as second,
    ):
        first.upsert_session(TARGET, spawned_by=WATCHER)
        _record(first)  # `first` now remembers the session: known, spawned by the watcher, head 1
        second.delete_session(TARGET)
        latest = _record(first)
        status = first.session_status(TARGET)
        assert status.state_version == latest
        entry = first.registry_entry(TARGET)
        assert entry is not None
        assert entry.spawned_by is None, "the deleted session's registry fields stay gone"
        assert_audit_clean(first)


def test_a_change_made_by_hand_is_seen_by_the_next_write(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        _record(watch)
        with sqlite3.connect(db) as raw:  # another connection moves the counter on
            raw.execute("UPDATE sw_meta SET value = 40 WHERE name = 'sequence'")
        assert _record(watch) == 41
        assert_audit_clean(watch)


def test_a_failed_write_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    with sessionwatch.open(url, clock=FakeClock()) as watch:
        _record(watch)

        def fail_after_allocating() -> None:
            with watch.store.write() as tx:
                tx.next_sequence()
                raise RuntimeError("the host's code failed inside the transaction")

        with pytest.raises(RuntimeError):
            fail_after_allocating()
        assert _record(watch) == 2, "the rolled-back allocation is not remembered"
        assert_audit_clean(watch)


def test_a_write_waits_for_the_writer_at_most_the_lock_timeout(tmp_path: Path) -> None:
    store = SqliteSignalStore(tmp_path / "state.db", lock_timeout=1)
    with SessionWatch(store, clock=FakeClock()) as watch:
        _record(watch)
        with store.write():  # another write holds the store's writer: the next one waits, then gives up
            started = time.monotonic()
            with pytest.raises(StoreError, match="waiting for this store's writer"):
                store.write().__enter__()
            assert 0.9 <= time.monotonic() - started < 3
        assert _record(watch) == 2, "the writer is free again"
