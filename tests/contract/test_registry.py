"""The session registry (SPEC-tools §T10) on every store: metadata as Session events, and the run ledger.

`update_session` writes `session.meta_updated.v1` naming the changed fields only; the metadata
survives reopening, prune compaction (the checkpoint carries it, ADR-0012), export and import, and
deletion forgets it. Stores written before the metadata existed are migrated when opened.
"""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from auditing import assert_audit_clean
from stores import admin, fresh_store_url

import sessionwatch
from sessionwatch import InvalidSignal, RegistryEntry, Route, SessionWatch, StoreError
from sessionwatch.adapters.history.jsonl import export_history, import_history
from sessionwatch.adapters.stores.sql import sqlite_schema
from sessionwatch.domain.session import SessionMetaUpdated
from sessionwatch.testing import FakeClock

KEY = "agent:main:worker"
PARENT = "agent:main:main"


def meta_events(watch: SessionWatch) -> list[SessionMetaUpdated]:
    return [e for e in watch.store.replay() if isinstance(e, SessionMetaUpdated)]


def test_an_update_registers_an_unknown_session_and_sets_its_fields(watch: SessionWatch) -> None:
    entry = watch.update_session(
        KEY,
        label="builder",
        spawned_by=PARENT,
        spawn_depth=1,
        pinned=True,
        delivery_context=Route(channel="telegram", to="chat:7"),
        origin={"channel": "discord", "thread_id": "42"},
        total_tokens=1200,
        updated_at=1_796_000_000_000,
    )
    assert isinstance(entry, RegistryEntry)
    assert (entry.session_key, entry.agent_id, entry.kind, entry.state_version) == (KEY, "main", "main", 0)
    assert (entry.label, entry.spawned_by, entry.spawn_depth, entry.pinned) == ("builder", PARENT, 1, True)
    assert entry.delivery_context == Route(channel="telegram", to="chat:7")
    assert entry.origin == Route(channel="discord", thread_id="42")
    assert (entry.total_tokens, entry.updated_at, entry.archived) == (1200, 1_796_000_000_000, False)
    assert watch.registry_entry(KEY) == entry
    assert [e.session_key for e in watch.registry_entries()] == [KEY]
    (event,) = meta_events(watch)
    assert event.changed == (
        "label",
        "origin",
        "delivery_context",
        "total_tokens",
        "updated_at",
        "pinned",
        "spawn_depth",
    )
    assert_audit_clean(watch)


def test_only_changed_fields_are_stored_and_an_unchanged_update_stores_nothing(watch: SessionWatch) -> None:
    watch.update_session(KEY, label="a", model="m1")
    before = watch.store.stored_event_count()
    watch.update_session(KEY, label="a", model="m1")
    assert watch.store.stored_event_count() == before
    entry = watch.update_session(KEY, label="a", model="m2", subject=None)
    assert [e.changed for e in meta_events(watch)] == [("label", "model"), ("model",)]
    assert (entry.label, entry.model) == ("a", "m2")


def test_none_clears_a_metadata_field_and_the_head_is_kept(watch: SessionWatch) -> None:
    watch.update_session(KEY, label="a", model_override="anthropic/x")
    watch.record(KEY, kind="goal_changed", actor=sessionwatch.Actor.system(), summary="goal updated")
    entry = watch.update_session(KEY, model_override=None)
    assert (entry.label, entry.model_override, entry.state_version) == ("a", None, 1)
    assert watch.session_status(KEY).state_version == 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"total_tokens": -1}, "total_tokens"),
        ({"label": "two\nlines"}, "label"),
        ({"label": ""}, "label"),
        ({"pinned": "yes please"}, "pinned"),
        ({"delivery_context": {"channel": "x", "bogus": 1}}, "delivery_context.bogus"),
        ({"origin": {"to": "a\x00b"}}, "origin.to"),
        ({"spawned_by": "agent:main:a\nb"}, "spawned_by"),
    ],
)
def test_a_bad_field_is_a_typed_error_naming_it_and_nothing_is_written(
    watch: SessionWatch, fields: dict[str, object], field: str
) -> None:
    before = watch.store.stored_event_count()
    with pytest.raises(InvalidSignal) as raised:
        watch.update_session(KEY, **fields)  # type: ignore[arg-type] # hostile input on purpose
    assert raised.value.field == field
    assert watch.store.stored_event_count() == before
    assert watch.registry_entry(KEY) is None


def test_deletion_forgets_the_metadata(watch: SessionWatch) -> None:
    watch.update_session(KEY, label="a")
    watch.delete_session(KEY)
    assert watch.registry_entry(KEY) is None
    entry = watch.update_session(KEY, subject="again")
    assert (entry.label, entry.subject) == (None, "again")
    assert_audit_clean(watch)


def test_metadata_survives_reopening(store_url: str, clock: FakeClock) -> None:
    with sessionwatch.open(store_url, clock=clock) as first:
        written = first.update_session(KEY, label="a", thread_binding=Route(channel="slack", thread_id="9"))
        if store_url == "memory://":
            return  # nothing to reopen: the memory store is the process
    with sessionwatch.open(store_url, clock=clock) as second:
        assert second.registry_entry(KEY) == written
        assert_audit_clean(second)


def test_a_compacting_prune_keeps_the_metadata_in_its_checkpoint(store_url: str, clock: FakeClock) -> None:
    with sessionwatch.open(store_url, clock=clock, retention=sessionwatch.Retention(days=1)) as watch:
        watch.update_session(KEY, label="kept", archived=True)
        for _ in range(3):
            watch.record(KEY, kind="goal_changed", actor=sessionwatch.Actor.system(), summary="goal updated")
        clock.advance(days=40)
        watch.record(PARENT, kind="goal_changed", actor=sessionwatch.Actor.system(), summary="goal updated")
        watch.prune(force=True)
        assert meta_events(watch) == []  # compacted away
        assert "store.pruned.v5" in [e.type for e in watch.store.replay()]
        entry = watch.registry_entry(KEY)
        assert entry is not None
        assert (entry.label, entry.archived) == ("kept", True)
        assert watch.rebuild_read_model() == watch.store.read_model()
        assert_audit_clean(watch)


def test_export_and_import_carry_the_metadata(store_url: str, clock: FakeClock, tmp_path: Path) -> None:
    out = io.StringIO()
    with sessionwatch.open(store_url, clock=clock) as source:
        source.update_session(KEY, label="a", context_tokens=9000)
        source.update_session(KEY, label="b")
        export_history(source.store, out)
        expected = source.registry_entries()
    with (
        fresh_store_url("sqlite", tmp_path, "imported.db") as url,
        sessionwatch.open(url, clock=clock, sweep_on_open=False) as target,
    ):
        import_history(target.store, out.getvalue().splitlines())
        assert target.registry_entries() == expected
        assert_audit_clean(target)


# ----------------------------------------------------------------------- stores from before (ADR-0012)


def test_a_sqlite_store_written_before_the_metadata_is_migrated_on_open(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "old.db"
    with sessionwatch.open(f"sqlite:///{path}", clock=clock) as watch:
        watch.record(KEY, kind="goal_changed", actor=sessionwatch.Actor.system(), summary="goal updated")
    with sqlite3.connect(path) as old:  # the shape schema version 1 had
        old.execute("ALTER TABLE sw_sessions DROP COLUMN meta")
        old.execute("ALTER TABLE sw_cursors DROP COLUMN ambient")  # nor cursor provenance (version 4)
        old.execute("UPDATE sw_meta SET value = 1 WHERE name = 'schema_version'")
    with sessionwatch.open(f"sqlite:///{path}", clock=clock) as watch:
        assert watch.update_session(KEY, label="late").label == "late"
        assert watch.session_status(KEY).state_version == 1
        assert_audit_clean(watch)
    with sqlite3.connect(path) as migrated:
        version = migrated.execute("SELECT value FROM sw_meta WHERE name = 'schema_version'").fetchone()
        assert version == (sqlite_schema.SCHEMA_VERSION,)


def test_a_store_written_by_a_newer_schema_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "new.db"
    with sessionwatch.open(f"sqlite:///{path}", clock=clock) as watch:
        watch.update_session(KEY, label="a")
    with sqlite3.connect(path) as newer:
        newer.execute("UPDATE sw_meta SET value = 99 WHERE name = 'schema_version'")
    with pytest.raises(StoreError, match="newer sessionwatch"):
        sessionwatch.open(f"sqlite:///{path}", clock=clock)


@pytest.mark.parametrize("store_kind", ["postgres"])
def test_a_postgres_store_written_before_the_metadata_is_migrated_on_open(
    store_url: str, clock: FakeClock
) -> None:
    with sessionwatch.open(store_url, clock=clock) as watch:
        watch.record(KEY, kind="goal_changed", actor=sessionwatch.Actor.system(), summary="goal updated")
    schema = parse_qs(urlsplit(store_url).query)["schema"][0]
    admin().execute(f"ALTER TABLE {schema}.sw_sessions DROP COLUMN meta")  # the shape version 1 had
    admin().execute(f"ALTER TABLE {schema}.sw_cursors DROP COLUMN ambient")  # provenance came in version 3
    admin().execute(f"UPDATE {schema}.sw_meta SET value = 1 WHERE name = 'schema_version'")
    with sessionwatch.open(store_url, clock=clock) as watch:
        assert watch.update_session(KEY, label="late").label == "late"
        assert watch.session_status(KEY, changes_since=0).state_version == 1
        assert_audit_clean(watch)


# ------------------------------------------------------------------------------------ the run ledger


def test_runs_are_listed_with_requester_label_mode_and_outcome(watch: SessionWatch, clock: FakeClock) -> None:
    watch.run_started(KEY, "r1", requester_key=PARENT, label="build", mode="run")
    clock.advance(seconds=5)
    watch.run_started(KEY, "r2")
    clock.advance(seconds=5)
    watch.run_ended(KEY, "r1", outcome="ok")
    watch.run_ended(KEY, "r1", outcome="error")  # already ended: changes nothing
    first, second = watch.runs()[1], watch.runs()[0]
    assert (first.run_id, first.requester_key, first.label, first.mode) == ("r1", PARENT, "build", "run")
    assert (first.ended_at_ms - first.started_at_ms, first.outcome) == (10_000, "ok")  # type: ignore[operator]
    assert (second.run_id, second.ended_at_ms, second.outcome) == ("r2", None, None)
    clock.advance(days=2)
    assert [r.run_id for r in watch.runs()] == ["r2"]  # ended runs are kept for a day


def test_a_run_outcome_outside_the_four_is_a_typed_error(watch: SessionWatch) -> None:
    watch.run_started(KEY, "r1")
    with pytest.raises(InvalidSignal) as raised:
        watch.run_ended(KEY, "r1", outcome="exploded")  # type: ignore[arg-type]
    assert raised.value.field == "outcome"
    assert watch.runs()[0].ended_at_ms is None
