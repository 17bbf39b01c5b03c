"""The SQLite event table never reuses a notification id or a sequence (ADR-0006)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal

import pytest
from helpers import FakeClock

import sessionwatch
from sessionwatch import Actor
from sessionwatch.adapters.sqlite_store import SqliteSignalStore


def _record(watch: sessionwatch.SessionWatch, key: str) -> int:
    return watch.record(key, kind="goal_changed", actor=Actor.system(), summary="goal updated").sequence


def test_notification_ids_are_not_reused_after_the_newest_events_are_deleted(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        for _ in range(3):
            _record(watch, "agent:main:a")
    with sqlite3.connect(db) as raw:
        newest = raw.execute("SELECT MAX(notification_id) FROM stored_events").fetchone()[0]
        raw.execute("DELETE FROM stored_events")
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        _record(watch, "agent:main:b")
    with sqlite3.connect(db) as raw:
        (after,) = raw.execute("SELECT MIN(notification_id) FROM stored_events").fetchone()
    assert after > newest


def test_sequences_keep_rising_after_the_newest_signals_are_deleted(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        highest = max(_record(watch, "agent:main:a") for _ in range(3))
        watch.delete_session("agent:main:a")
        assert _record(watch, "agent:main:a") > highest


def test_the_sequence_counter_survives_reopening_the_file(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        first = _record(watch, "agent:main:a")
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        assert _record(watch, "agent:main:b") == first + 1


@pytest.mark.parametrize(
    ("url_suffix", "argument", "expected"),
    [
        ("", None, "normal"),
        ("?synchronous=full", None, "full"),
        ("", "full", "full"),
        ("", "normal", "normal"),
    ],
)
def test_the_database_runs_in_wal_mode_with_the_chosen_durability(
    tmp_path: Path, url_suffix: str, argument: Literal["normal", "full"] | None, expected: str
) -> None:
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}{url_suffix}", clock=FakeClock(), synchronous=argument) as watch:
        _record(watch, "agent:main:a")
        assert isinstance(watch.store, SqliteSignalStore)
        assert watch.store.durability() == expected
        with sqlite3.connect(db) as raw:
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
