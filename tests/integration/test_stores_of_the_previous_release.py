"""Stores written by release 0.1.0, the release before cursor provenance, open, migrate and audit clean.

`tests/data/release-0.1.0/` holds what that release's code wrote (its `generate.py` says how): a
SQLite file, a dump of a PostgreSQL schema and a JSONL export, with explicit watches, a spawn edge,
open and drained notices, a reset and a deletion. Opening migrates the schema, the old stored names
are read through their upcasters, and every cursor reads as explicit.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from auditing import assert_audit_clean
from stores import (
    PG_URL,
    drop_schema,
    fresh_store_url,
    needs_postgres,
    new_schema,
    require_postgres,
    with_query,
)

import sessionwatch
from sessionwatch import SessionWatch
from sessionwatch.adapters.history.jsonl import import_history
from sessionwatch.testing import FakeClock

DATA = Path(__file__).parent.parent / "data" / "release-0.1.0"
WATCHER = "agent:main:main"
OTHER = "agent:main:ops"
GROUP = "agent:main:telegram:group:42"
CHILD = "agent:main:subagent:fixer"


def stored_names(watch: SessionWatch) -> set[str]:
    return {event.type for event in watch.store.replay()}


def check_written_by_the_previous_release(watch: SessionWatch) -> None:
    """What 0.1.0 wrote reads as it was, every cursor explicit; and the store takes new writes."""
    cursors = {(c.watcher, c.target): c for c in watch.watched_by(WATCHER) + watch.watched_by(OTHER)}
    assert set(cursors) == {(WATCHER, GROUP), (WATCHER, CHILD), (OTHER, GROUP)}
    assert {c.provenance for c in cursors.values()} == {"explicit"}
    assert [n.target for n in watch.pending_notices(WATCHER)] == [GROUP]
    assert watch.pending_notices(OTHER) == [n for n in watch.pending_notices(OTHER) if n.target == GROUP]
    assert_audit_clean(watch)
    watch.record_human_message("agent:main:slack:channel:9", channel="slack")  # new state on the old store
    assert watch.cursor(WATCHER, "agent:main:slack:channel:9") is not None
    assert watch.cursor(WATCHER, "agent:main:slack:channel:9").provenance == "ambient"  # type: ignore[union-attr]
    clock = watch.clock
    assert isinstance(clock, FakeClock)
    clock.advance(days=31)  # past the retention window: the prune removes the old signals
    report = watch.prune(force=True)
    assert report.signals_removed > 0
    assert "store.pruned.v5" in stored_names(watch)
    assert_audit_clean(watch)


def test_a_sqlite_store_of_the_previous_release_opens_migrates_and_audits_clean(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    shutil.copyfile(DATA / "store.sqlite", path)
    with sessionwatch.open(f"sqlite:///{path}", clock=FakeClock()) as watch:
        assert "cursor.watch_registered.v1" not in stored_names(watch)  # read as the current name
        check_written_by_the_previous_release(watch)
    with sessionwatch.open(f"sqlite:///{path}", clock=FakeClock()) as reopened:
        assert_audit_clean(reopened)


@pytest.fixture
def previous_postgres_schema() -> Iterator[str]:
    """A schema loaded from the PostgreSQL dump the previous release's store left, dropped afterwards."""
    require_postgres()  # the test is marked `needs_postgres`: here a server is there, or CI requires one
    schema = new_schema("sw_release_010")
    text = (DATA / "postgres.sql").read_text().replace("release_schema", schema)
    dump = "\n".join(line for line in text.splitlines() if not line.startswith("\\"))  # psql's own commands
    try:
        with psycopg.connect(PG_URL, autocommit=True) as conn:  # its own: the dump clears the search path
            conn.execute(dump.encode())
        yield schema
    finally:
        drop_schema(schema)


@needs_postgres
def test_a_postgres_store_of_the_previous_release_opens_migrates_and_audits_clean(
    previous_postgres_schema: str,
) -> None:
    url = with_query(PG_URL, schema=previous_postgres_schema)
    with sessionwatch.open(url, clock=FakeClock()) as watch:
        check_written_by_the_previous_release(watch)


def test_an_export_of_the_previous_release_imports_into_every_store_and_audits_clean(
    store_kind: str, tmp_path: Path
) -> None:
    lines = (DATA / "history.jsonl").read_text().splitlines()
    with fresh_store_url(store_kind, tmp_path) as url, sessionwatch.open(url, clock=FakeClock()) as watch:
        report = import_history(watch.store, lines)
        assert report.version == 1, "a version 1 history: no trailer, taken as it is"
        check_written_by_the_previous_release(watch)
