"""`audit()` and `sessionwatch audit` (SPEC §13, §14): clean on honest stores, loud on corrupted ones.

Each corruption test damages one stored read model behind the store's back (raw SQL on the SQLite
file or the PostgreSQL schema; a replaced read model in memory) and checks that the audit names the
violation, its kind and the session involved, and that the command exits 1.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import pytest
from stores import FILE_STORES, admin

import sessionwatch
from sessionwatch import Actor, SessionWatch, SignalInput
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.adapters.stores.postgres import PostgresSignalStore
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.cli.cli import main
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.watch_cursor import CursorKey
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
CHILD_ID = SessionIdentity(CHILD, "main")
PAIR = CursorKey(MANAGER, CHILD, "main")


@dataclass(frozen=True)
class Story:
    """Sequences of the signals the story recorded on the child."""

    spawned: int
    human: int
    own_goal: int  # the manager's own change: never a notice for the manager


@pytest.fixture
def watch(store_url: str) -> Iterator[SessionWatch]:
    with sessionwatch.open(store_url, clock=FakeClock()) as opened:
        yield opened


@pytest.fixture
def story(watch: SessionWatch) -> Story:
    watch.upsert_session(MANAGER)
    spawned = watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1")
    human = watch.record_human_message(CHILD, channel="telegram")
    own = watch.record_goal_changed(CHILD, summary="goal updated", actor=Actor.agent(MANAGER))
    assert spawned is not None
    assert human is not None
    assert own is not None
    return Story(spawned.sequence, human.sequence, own.sequence)


def corrupt(
    watch: SessionWatch, statement: str, params: tuple[object, ...], memory: Callable[[ReadModel], ReadModel]
) -> None:
    """Change a stored read model without going through sessionwatch (`?` placeholders)."""
    store = watch.store
    if isinstance(store, MemorySignalStore):
        store.model = memory(store.model)
    elif isinstance(store, SqliteSignalStore):
        with sqlite3.connect(store.path) as raw:
            assert raw.execute(statement, params).rowcount == 1
    else:
        assert isinstance(store, PostgresSignalStore)
        with admin().transaction():
            admin().execute(f"SET LOCAL search_path TO {store.schema}")
            assert admin().execute(statement.replace("?", "%s"), params).rowcount == 1


def with_cursor(model: ReadModel, **changes: int) -> ReadModel:
    cursors = {target: dict(by) for target, by in model.cursors.items()}
    cursors[PAIR.target][MANAGER] = cursors[PAIR.target][MANAGER].model_copy(update=changes)
    return replace(model, cursors=cursors)


def kinds(watch: SessionWatch) -> set[str]:
    return {v.kind for v in watch.audit().violations}


def test_an_honest_history_audits_clean(watch: SessionWatch, story: Story) -> None:
    watch.drain(MANAGER)
    watch.record_human_message(CHILD, channel="slack")
    watch.reset_session(CHILD)
    watch.sweep()
    report = watch.audit()
    assert report.ok, report.violations
    assert report.events_replayed >= 8
    assert report.seconds >= 0
    assert report.to_json()["violations"] == []
    assert story.human > story.spawned


def test_a_lowered_head_is_named(watch: SessionWatch, story: Story) -> None:
    corrupt(
        watch,
        "UPDATE sw_sessions SET head = ? WHERE session_key = ? AND agent_id = ?",
        (story.human, CHILD, "main"),
        lambda m: replace(
            m,
            sessions={**m.sessions, CHILD_ID: dataclasses.replace(m.sessions[CHILD_ID], head=story.human)},
        ),
    )
    report = watch.audit()
    assert not report.ok
    found = {v.kind: v for v in report.violations}
    assert {"session_mismatch", "head_below_signal"} <= set(found)
    assert found["head_below_signal"].session_keys == (CHILD,)
    assert f"head {story.human}" in found["head_below_signal"].detail


def test_a_cursor_with_last_seen_above_notified_is_named(watch: SessionWatch, story: Story) -> None:
    corrupt(
        watch,
        "UPDATE sw_cursors SET last_seen = ? WHERE watcher = ? AND target_key = ?",
        (story.human + 1, MANAGER, CHILD),
        lambda m: with_cursor(m, last_seen=story.human + 1),
    )
    report = watch.audit()
    (order,) = [v for v in report.violations if v.kind == "cursor_order"]
    assert order.session_keys == (MANAGER, CHILD)
    assert f"({story.human + 1}, {story.human}, {story.human})" in order.detail
    assert "cursor_mismatch" in kinds(watch)


def test_a_pending_notice_for_a_self_caused_signal_is_named(watch: SessionWatch, story: Story) -> None:
    watch.drain(MANAGER)
    corrupt(
        watch,
        "UPDATE sw_cursors SET notified = ?, material = ? WHERE watcher = ? AND target_key = ?",
        (story.own_goal, story.own_goal, MANAGER, CHILD),
        lambda m: with_cursor(m, notified=story.own_goal, material=story.own_goal),
    )
    report = watch.audit()
    (self_caused,) = [v for v in report.violations if v.kind == "notice_self_caused"]
    assert self_caused.session_keys == (MANAGER, CHILD)
    assert f"sequence {story.own_goal}" in self_caused.detail


def test_a_pending_notice_for_a_log_only_signal_is_named(watch: SessionWatch, story: Story) -> None:
    corrupt(
        watch,
        "UPDATE sw_cursors SET last_seen = 0, notified = ? WHERE watcher = ? AND target_key = ?",
        (story.spawned, MANAGER, CHILD),
        lambda m: with_cursor(m, last_seen=0, notified=story.spawned),
    )
    assert "notice_log_only" in kinds(watch)


def test_a_signal_missing_from_the_log_view_is_named(watch: SessionWatch, story: Story) -> None:
    corrupt(
        watch,
        "DELETE FROM sw_signals WHERE sequence = ?",
        (story.human,),
        lambda m: replace(
            m,
            signals={
                **m.signals,
                CHILD_ID: tuple(s for s in m.signals[CHILD_ID] if s.sequence != story.human),
            },
        ),
    )
    report = watch.audit()
    (missing,) = [v for v in report.violations if v.kind == "signal_missing"]
    assert missing.session_keys == (CHILD,)
    assert f"sequence {story.human}" in missing.detail


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_the_command_lists_every_violation_by_kind_and_exits_one(
    watch: SessionWatch, story: Story, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "--db", store_url]) == 0
    assert capsys.readouterr().out.startswith("audit: ok: ")
    corrupt(
        watch,
        "UPDATE sw_cursors SET last_seen = ? WHERE watcher = ? AND target_key = ?",
        (story.human + 1, MANAGER, CHILD),
        lambda m: with_cursor(m, last_seen=story.human + 1),
    )
    assert main(["audit", "--db", store_url]) == 1
    out = capsys.readouterr().out
    assert out.startswith("audit: FAILED: ")
    assert f"cursor_order (1): a cursor breaks L <= N <= M; sessions: {MANAGER}, {CHILD}" in out
    assert main(["audit", "--db", store_url, "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["ok"] is False
    assert {"cursor_order", "cursor_mismatch"} <= {v["kind"] for v in printed["violations"]}
    assert printed["eventsReplayed"] >= 4
    assert set(printed) == {"ok", "violations", "eventsReplayed", "seconds"}


def test_writes_during_an_audit_are_neither_replayed_nor_compared(watch: SessionWatch, story: Story) -> None:
    inputs = [
        SignalInput(session_key=CHILD, kind="goal_changed", actor=Actor.system(), summary=f"goal {n}")
        for n in range(1_100)
    ]
    watch.record_many(inputs)
    before = watch.store.stored_event_count()
    written: list[int] = []

    def write_meanwhile(done: int) -> None:
        if done == 1000 and not written:  # mid-replay: another writer commits
            late = watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="late goal")
            written.append(late.sequence)

    report = watch.audit(progress=write_meanwhile)
    assert written, "the write happened during the audit"
    assert report.ok, report.violations
    assert report.events_replayed == before
    assert watch.audit().events_replayed == before + 1
    assert story.own_goal < written[0]
