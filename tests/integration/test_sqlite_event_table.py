"""The SQLite event table never reuses a notification id or a sequence (ADR-0006)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest

import sessionwatch
from sessionwatch import Actor
from sessionwatch.adapters.stores.sql import sqlite_schema
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.testing import FakeClock


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
        watch.delete_session("agent:main:a")
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:  # nothing remembered
        assert _record(watch, "agent:main:a") > highest + 1


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


def test_sequences_keep_rising_after_a_prune_removed_every_signal(tmp_path: Path) -> None:
    # The counter row is only a floor (ADR-0019): the prune must raise it before the rows go.
    clock = FakeClock()
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}", clock=clock) as watch:
        highest = max(_record(watch, "agent:main:a") for _ in range(3))
        clock.advance(days=31)  # past the default 30-day window
        assert watch.prune(force=True).signals_removed == 3
    with sessionwatch.open(f"sqlite:///{db}", clock=clock) as watch:
        assert _record(watch, "agent:main:a") == highest + 1


_VERSION_2_SIGNALS = (
    "CREATE TABLE sw_signals (sequence INTEGER PRIMARY KEY, session_key TEXT NOT NULL,"
    " agent_id TEXT NOT NULL, session_id TEXT, kind TEXT NOT NULL, actor_type TEXT NOT NULL,"
    " actor_id TEXT, run_id TEXT, occurred_at_ms INTEGER NOT NULL, recorded_at_ms INTEGER NOT NULL,"
    " summary TEXT NOT NULL, payload TEXT, dedupe_key TEXT UNIQUE, watchers TEXT,"
    " notification_id INTEGER NOT NULL)"
)


def test_a_version_2_store_is_migrated_to_a_partial_dedupe_index_and_a_counter_floor(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        original = watch.record(
            "agent:main:a", kind="compacted", actor=Actor.system(), summary="compacted", dedupe_key="op-1"
        )
        highest = max(_record(watch, "agent:main:a") for _ in range(2))
    with sqlite3.connect(db) as old:  # the shape version 2 had: a UNIQUE column, the counter at the top
        old.execute("ALTER TABLE sw_signals RENAME TO sw_signals_new")
        old.execute("DROP INDEX sw_signals_by_session")
        old.execute("DROP INDEX sw_signals_by_age")
        old.execute("DROP INDEX sw_signals_by_dedupe")
        old.execute(_VERSION_2_SIGNALS)
        old.execute("INSERT INTO sw_signals SELECT * FROM sw_signals_new")
        old.execute("DROP TABLE sw_signals_new")
        old.execute("CREATE INDEX sw_signals_by_session ON sw_signals (session_key, agent_id, sequence)")
        old.execute("CREATE INDEX sw_signals_by_age ON sw_signals (occurred_at_ms)")
        old.execute("UPDATE sw_meta SET value = ? WHERE name = 'sequence'", (highest,))
        old.execute("ALTER TABLE sw_cursors DROP COLUMN ambient")  # added by version 4
        old.execute("DROP TABLE sw_digests")  # added by version 5
        old.execute("UPDATE sw_meta SET value = 2 WHERE name = 'schema_version'")
    with sessionwatch.open(f"sqlite:///{db}", clock=FakeClock()) as watch:
        again = watch.record(
            "agent:main:a", kind="compacted", actor=Actor.system(), summary="compacted", dedupe_key="op-1"
        )
        assert again == original, "the dedupe key is still unique"
        assert _record(watch, "agent:main:a") == highest + 1
        changes = watch.session_status("agent:main:a", changes_since=0).state_changes
        assert changes is not None
        assert [c.sequence for c in changes.events] == list(range(original.sequence, highest + 2))
    with sqlite3.connect(db) as migrated:
        version = migrated.execute("SELECT value FROM sw_meta WHERE name = 'schema_version'").fetchone()
        assert version == (sqlite_schema.SCHEMA_VERSION,)
        indexes = {
            name: (unique, partial)
            for _, name, unique, _, partial in migrated.execute("PRAGMA index_list(sw_signals)")
        }
        assert indexes == {
            "sw_signals_by_dedupe": (1, 1),
            "sw_signals_by_session": (0, 0),
            "sw_signals_by_age": (0, 0),
        }, "no autoindex of a UNIQUE column is left"
