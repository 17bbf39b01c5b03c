"""The SQLite event table never reuses a notification id or a sequence (ADR-0006)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
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


OPEN_AND_RECORD = (
    "import sys, sessionwatch as s\n"
    "w = s.open('sqlite:///' + sys.argv[1])\n"
    "w.record('agent:main:x', kind='goal_changed', actor=s.Actor.system(), summary='goal set')\n"
    "w.close()\n"
    "print('recorded')\n"
)


def test_processes_opening_a_new_file_together_all_open_it(tmp_path: Path) -> None:
    # Creating the schema and switching a new file to WAL race; a locked file is retried, not fatal.
    for round_ in range(5):
        db = tmp_path / f"race-{round_}.db"
        children = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_AND_RECORD, str(db)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        outcomes = [child.communicate(timeout=60) for child in children]
        assert [out for out, _ in outcomes] == ["recorded\n"] * 4, [err for _, err in outcomes]
        with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
            assert watch.session_status("agent:main:x").state_version == 4
