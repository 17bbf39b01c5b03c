"""The store contract (SPEC §2, §3, §4, §7, §9, §13): every store runs this suite via `watch`."""

from __future__ import annotations

import logging
import stat
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import pytest
from auditing import assert_audit_clean
from stores import FILE_STORES

import sessionwatch
from sessionwatch import (
    Actor,
    InvalidQuery,
    InvalidSignal,
    SessionWatch,
    Signal,
    SignalInput,
    SignalKind,
    StoreError,
    UnknownSession,
    classify_actor,
)
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.signals import to_epoch_ms
from sessionwatch.testing import START, FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
OTHER = "agent:main:subagent:other"
WORKER = "agent:main:worker"


def goal(watch: SessionWatch, key: str = WORKER, **fields: Any) -> Signal:
    """Record a valid `goal_changed` through the strict API."""
    return watch.record(key, kind="goal_changed", actor=Actor.system(), summary="goal updated", **fields)


def goal_input(key: str = WORKER, **fields: Any) -> SignalInput:
    return SignalInput(
        session_key=key, kind="goal_changed", actor=Actor.system(), summary="goal updated", **fields
    )


def events(watch: SessionWatch, key: str, *, agent_id: str | None = None, since: int = 0) -> list[int]:
    """The sequences `changesSince since` returns for the session."""
    status = watch.session_status(key, changes_since=since, agent_id=agent_id)
    assert status.state_changes is not None
    return [change.sequence for change in status.state_changes.events]


def head(watch: SessionWatch, key: str, *, agent_id: str | None = None) -> int:
    return watch.session_status(key, agent_id=agent_id).state_version


def is_unknown(watch: SessionWatch, key: str, *, agent_id: str | None = None) -> bool:
    try:
        watch.session_status(key, agent_id=agent_id)
    except UnknownSession:
        return True
    return False


def spawned_child(watch: SessionWatch, child: str = CHILD, run: str = "run-spawn") -> Signal:
    signal = watch.record_spawn(requester_key=MANAGER, child_key=child, child_run_id=run)
    assert signal is not None
    return signal


# ------------------------------------------------------------------------------ record, sequences


def test_record_returns_the_signal_with_every_field_and_a_sequence(
    watch: SessionWatch, clock: FakeClock
) -> None:
    signal = watch.record(
        CHILD,
        kind=SignalKind.RUN_FAILED,
        actor=Actor.agent(MANAGER),
        summary="child run failed",
        payload={"outcome": "timeout"},
        run_id="run-1",
        dedupe_key="run-terminal:run-1",
    )
    assert signal.sequence > 0
    assert (signal.session_key, signal.agent_id, signal.session_id) == (CHILD, "main", None)
    assert signal.kind is SignalKind.RUN_FAILED
    assert (signal.actor_type, signal.actor_id) == ("agent", MANAGER)
    assert (signal.run_id, signal.dedupe_key) == ("run-1", "run-terminal:run-1")
    assert signal.occurred_at == clock.now()
    assert signal.summary == "child run failed"
    assert signal.payload == {"outcome": "timeout"}


def test_sequences_rise_globally_across_sessions_so_each_session_is_sparse(watch: SessionWatch) -> None:
    recorded = [goal(watch, key) for key in (CHILD, OTHER, CHILD, WORKER, OTHER, CHILD)]
    sequences = [s.sequence for s in recorded]
    assert sequences == sorted(set(sequences))
    assert events(watch, CHILD) == [sequences[0], sequences[2], sequences[5]]
    assert events(watch, OTHER) == [sequences[1], sequences[4]]


def test_the_head_is_the_highest_sequence_recorded_for_the_session(watch: SessionWatch) -> None:
    goal(watch, CHILD)
    latest = goal(watch, CHILD)
    goal(watch, OTHER)
    assert head(watch, CHILD) == latest.sequence


def test_a_registered_session_has_state_version_zero_until_it_records(watch: SessionWatch) -> None:
    entry = watch.upsert_session(WORKER)
    assert entry.state_version == 0
    assert head(watch, WORKER) == 0


def test_a_sequence_is_never_reused_after_the_newest_session_is_deleted(watch: SessionWatch) -> None:
    goal(watch, CHILD)
    newest = goal(watch, OTHER)
    watch.delete_session(OTHER)
    assert goal(watch, WORKER).sequence > newest.sequence


# ------------------------------------------------------------------------------------------ dedupe


def test_duplicate_dedupe_key_returns_the_existing_signal_and_changes_nothing(watch: SessionWatch) -> None:
    first = goal(watch, CHILD, dedupe_key="compacted:op-1")
    before = (head(watch, CHILD), events(watch, CHILD), watch.sessions_list())
    again = watch.record(
        CHILD, kind="adopted", actor=Actor.human(), summary="something else", dedupe_key="compacted:op-1"
    )
    assert again == first
    assert (head(watch, CHILD), events(watch, CHILD), watch.sessions_list()) == before


def test_a_dedupe_key_is_global_across_sessions(watch: SessionWatch) -> None:
    first = goal(watch, CHILD, dedupe_key="run-terminal:r-1")
    again = goal(watch, OTHER, dedupe_key="run-terminal:r-1")
    assert again == first
    assert again.session_key == CHILD
    assert is_unknown(watch, OTHER)
    assert [row.session_key for row in watch.sessions_list()] == [CHILD]


def test_a_dedupe_key_is_global_across_agents_of_the_same_bare_key(watch: SessionWatch) -> None:
    first = goal(watch, "global", agent_id="main", dedupe_key="d-1")
    again = goal(watch, "global", agent_id="ops", dedupe_key="d-1")
    assert again == first
    assert is_unknown(watch, "global", agent_id="ops")


def test_a_duplicate_dedupe_key_inside_one_record_many_is_recorded_once(watch: SessionWatch) -> None:
    recorded = watch.record_many(
        [
            goal_input(CHILD, dedupe_key="d-1"),
            goal_input(OTHER, dedupe_key="d-1"),
            goal_input(CHILD),
        ]
    )
    assert recorded[1] == recorded[0]
    assert recorded[2].sequence > recorded[0].sequence
    assert events(watch, CHILD) == [recorded[0].sequence, recorded[2].sequence]
    assert is_unknown(watch, OTHER)


def test_a_duplicate_of_an_earlier_batch_inside_record_many_returns_the_existing_signal(
    watch: SessionWatch,
) -> None:
    first = goal(watch, CHILD, dedupe_key="d-1")
    recorded = watch.record_many([goal_input(CHILD, dedupe_key="d-1")])
    assert recorded == [first]
    assert head(watch, CHILD) == first.sequence


# ------------------------------------------------------------------------------------- record_many


def test_record_many_records_every_input_in_order(watch: SessionWatch) -> None:
    recorded = watch.record_many([goal_input(CHILD), goal_input("global", agent_id="ops"), goal_input(CHILD)])
    sequences = [s.sequence for s in recorded]
    assert sequences == sorted(set(sequences))
    assert [(s.session_key, s.agent_id) for s in recorded] == [
        (CHILD, "main"),
        ("global", "ops"),
        (CHILD, "main"),
    ]
    assert head(watch, CHILD) == sequences[2]


class _TickingClock(FakeClock):
    """A clock that moves one second each time it is read."""

    def now(self) -> datetime:
        return self.advance(seconds=1)


def test_record_many_records_its_whole_batch_at_one_instant(store_url: str) -> None:
    with sessionwatch.open(store_url, clock=_TickingClock()) as watch:
        recorded = watch.record_many(
            [goal_input(CHILD), goal_input(CHILD), goal_input("global", agent_id="ops")]
        )
    assert len({signal.occurred_at for signal in recorded}) == 1, "one transaction, one instant"


def test_record_many_refuses_an_item_that_is_not_a_signal_input(watch: SessionWatch) -> None:
    item: Any = {"session_key": CHILD, "kind": "goal_changed", "summary": "goal updated"}
    with pytest.raises(InvalidSignal) as caught:
        watch.record_many([goal_input(CHILD), item])
    assert caught.value.field == "inputs[1]"
    assert watch.sessions_list() == []


def test_record_many_of_nothing_records_nothing(watch: SessionWatch) -> None:
    assert watch.record_many([]) == []
    assert watch.sessions_list() == []


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"summary": "two\nlines"}, "summary"),
        ({"kind": "bogus"}, "kind"),
        ({"session_key": "agent:main"}, "session_key"),
        ({"session_key": "global"}, "agent_id"),
        ({"payload": {"text": "hello"}}, "payload"),
    ],
)
def test_record_many_is_all_or_nothing_and_names_the_invalid_input(
    watch: SessionWatch, bad: dict[str, Any], field: str
) -> None:
    goal(watch, CHILD)
    before = (head(watch, CHILD), watch.sessions_list())
    fields: dict[str, Any] = {
        "session_key": OTHER,
        "kind": "goal_changed",
        "actor": Actor.system(),
        "summary": "goal updated",
    }
    with pytest.raises(InvalidSignal) as caught:
        watch.record_many([goal_input(CHILD), goal_input(OTHER), SignalInput(**{**fields, **bad})])
    assert caught.value.field == f"inputs[2].{field}"
    assert (head(watch, CHILD), watch.sessions_list()) == before


# ---------------------------------------------------------------------------- strict validation

INVALID_RECORDS: list[tuple[str, dict[str, Any], str]] = [
    ("malformed-key", {"key": "agent:main"}, "session_key"),
    ("empty-key", {"key": ""}, "session_key"),
    ("key-with-newline", {"key": "agent:main:x\ny"}, "session_key"),
    ("key-with-nul", {"key": "agent:main:x\x00"}, "session_key"),
    ("key-too-long", {"key": "agent:main:" + "x" * 600}, "session_key"),
    ("bare-key-without-agent", {"key": "global"}, "agent_id"),
    ("contradicting-agent", {"agent_id": "ops"}, "agent_id"),
    ("unknown-kind", {"kind": "mood_changed"}, "kind"),
    ("multi-line-summary", {"summary": "goal\nupdated"}, "summary"),
    ("long-summary", {"summary": "s" * 201}, "summary"),
    ("empty-summary", {"summary": "  "}, "summary"),
    ("summary-with-control-character", {"summary": "goal\x00updated"}, "summary"),
    ("summary-not-utf8", {"summary": "goal \ud800 updated"}, "summary"),
    ("payload-not-object", {"payload": ["status"]}, "payload"),
    ("payload-key-not-whitelisted", {"payload": {"text": "secret"}}, "payload"),
    ("payload-over-4kib", {"payload": {"status": "s" * 4100}}, "payload"),
    ("naive-occurred-at", {"occurred_at": START.replace(tzinfo=None)}, "occurred_at"),
    ("actor-not-an-actor", {"actor": "human"}, "actor"),
    ("malformed-agent-actor", {"actor": Actor.agent("agent:main")}, "actor_id"),
    ("multi-line-run-id", {"run_id": "run\n1"}, "run_id"),
    ("empty-dedupe-key", {"dedupe_key": ""}, "dedupe_key"),
]


@pytest.mark.parametrize(
    ("bad", "field"), [c[1:] for c in INVALID_RECORDS], ids=[c[0] for c in INVALID_RECORDS]
)
def test_strict_record_refuses_invalid_input_naming_the_field_and_writes_nothing(
    watch: SessionWatch, bad: dict[str, Any], field: str
) -> None:
    existing = goal(watch, WORKER)
    before = (head(watch, WORKER), events(watch, WORKER), watch.sessions_list())
    arguments: dict[str, Any] = {
        "key": WORKER,
        "kind": "goal_changed",
        "actor": Actor.system(),
        "summary": "goal updated",
        **bad,
    }
    key = arguments.pop("key")
    with pytest.raises(InvalidSignal) as caught:
        watch.record(key, **arguments)
    assert caught.value.field == field
    assert (head(watch, WORKER), events(watch, WORKER), watch.sessions_list()) == before
    assert head(watch, WORKER) == existing.sequence


def test_strict_record_applies_no_gate_and_no_actor_filter(watch: SessionWatch) -> None:
    signal = watch.record(
        WORKER, kind="human_direct_message", actor=Actor.agent(MANAGER), summary="human message via cli"
    )
    assert head(watch, WORKER) == signal.sequence
    assert signal.actor_type == "agent"


# ------------------------------------------------------------------------------------ occurred_at


def test_occurred_at_older_than_24_hours_is_clamped(watch: SessionWatch, clock: FakeClock) -> None:
    signal = goal(watch, occurred_at=clock.now() - timedelta(days=3))
    assert signal.occurred_at == clock.now() - timedelta(hours=24)


def test_occurred_at_in_the_future_is_clamped_to_now(watch: SessionWatch, clock: FakeClock) -> None:
    signal = goal(watch, occurred_at=clock.now() + timedelta(hours=2))
    assert signal.occurred_at == clock.now()


def test_occurred_at_in_epoch_milliseconds_is_accepted(watch: SessionWatch, clock: FakeClock) -> None:
    moment = clock.now() - timedelta(minutes=90)
    signal = goal(watch, occurred_at=to_epoch_ms(moment))
    assert signal.occurred_at == moment


def test_a_missing_occurred_at_is_the_local_clock(watch: SessionWatch, clock: FakeClock) -> None:
    clock.advance(hours=5)
    assert goal(watch).occurred_at == clock.now()


def test_the_status_shows_the_clamped_occurred_at_in_epoch_ms(watch: SessionWatch, clock: FakeClock) -> None:
    goal(watch, occurred_at=clock.now() - timedelta(days=10))
    change = watch.session_status(WORKER, changes_since=0).to_json()["stateChanges"]["events"][0]
    assert change["occurredAt"] == to_epoch_ms(clock.now() - timedelta(hours=24))


# ---------------------------------------------------------------------------------- session_status


def test_session_status_of_an_unknown_key_raises_unknown_session(watch: SessionWatch) -> None:
    with pytest.raises(UnknownSession) as caught:
        watch.session_status("agent:main:nobody", changes_since=0)
    assert str(caught.value) == "Unknown sessionKey: agent:main:nobody"


def test_a_bare_key_known_under_another_agent_is_unknown(watch: SessionWatch) -> None:
    goal(watch, "global", agent_id="main")
    with pytest.raises(UnknownSession) as caught:
        watch.session_status("global", agent_id="ops")
    assert str(caught.value) == "Unknown sessionKey: global"


@pytest.mark.parametrize("since", [-1, 1.5, "3", True, False])
def test_changes_since_must_be_a_non_negative_integer(watch: SessionWatch, since: Any) -> None:
    goal(watch)
    with pytest.raises(InvalidQuery, match="changes_since"):
        watch.session_status(WORKER, changes_since=since)


def test_without_changes_since_the_status_has_the_state_version_and_no_state_changes(
    watch: SessionWatch,
) -> None:
    signal = goal(watch)
    status = watch.session_status(WORKER)
    assert status.state_version == signal.sequence
    assert status.state_changes is None
    assert status.to_json() == {"sessionKey": WORKER, "stateVersion": signal.sequence}


def test_a_registered_session_without_signals_reports_version_zero_and_no_history(
    watch: SessionWatch,
) -> None:
    watch.upsert_session(WORKER)
    changes = watch.session_status(WORKER, changes_since=0).to_json()["stateChanges"]
    assert changes == {"events": [], "truncated": False, "earliestAvailableSequence": 0, "historyGap": False}


def test_the_earliest_available_sequence_is_the_sessions_smallest_retained_one(watch: SessionWatch) -> None:
    goal(watch, OTHER)
    first = goal(watch, CHILD)
    goal(watch, CHILD)
    status = watch.session_status(CHILD, changes_since=first.sequence)
    assert status.state_changes is not None
    assert status.state_changes.earliest_available_sequence == first.sequence
    assert status.state_changes.history_gap is False


def test_changes_since_returns_only_later_signals_in_ascending_order(watch: SessionWatch) -> None:
    recorded = [goal(watch, CHILD).sequence for _ in range(5)]
    assert events(watch, CHILD, since=recorded[1]) == recorded[2:]
    assert events(watch, CHILD, since=recorded[-1]) == []


def test_the_status_json_shows_the_delta_in_the_wire_shape(watch: SessionWatch, clock: FakeClock) -> None:
    failed = watch.record_run_terminal(
        child_key=CHILD, run_id="run-9", requester_key=MANAGER, outcome="timeout"
    )
    assert failed is not None
    changes = watch.session_status(CHILD, changes_since=0).to_json()["stateChanges"]
    assert changes["events"] == [
        {
            "sequence": failed.sequence,
            "kind": "run_failed",
            "actorType": "system",
            "occurredAt": to_epoch_ms(clock.now()),
            "summary": "child run timed out",
            "runId": "run-9",
            "payload": {"outcome": "timeout"},
        }
    ]


def test_a_goal_status_payload_is_stored_but_not_shown(watch: SessionWatch) -> None:
    signal = goal(watch, payload={"status": "active"})
    assert signal.payload == {"status": "active"}
    change = watch.session_status(WORKER, changes_since=0).to_json()["stateChanges"]["events"][0]
    assert "payload" not in change


@pytest.mark.parametrize(("limit", "page"), [(0, 1), (-3, 1), (1, 1), (500, 200), (200, 200)])
def test_the_page_limit_is_clamped_into_1_to_200(watch: SessionWatch, limit: int, page: int) -> None:
    watch.record_many([goal_input(CHILD) for _ in range(250)])
    status = watch.session_status(CHILD, changes_since=0, limit=limit)
    assert status.state_changes is not None
    assert len(status.state_changes.events) == page
    assert status.state_changes.truncated is True


def test_250_signals_come_as_a_truncated_page_of_200_then_the_rest(watch: SessionWatch) -> None:
    recorded = [s.sequence for s in watch.record_many([goal_input(CHILD) for _ in range(250)])]
    first = watch.session_status(CHILD, changes_since=0)
    assert first.state_changes is not None
    assert [e.sequence for e in first.state_changes.events] == recorded[:200]
    assert first.state_changes.truncated is True
    second = watch.session_status(CHILD, changes_since=recorded[199])
    assert second.state_changes is not None
    assert [e.sequence for e in second.state_changes.events] == recorded[200:]
    assert second.state_changes.truncated is False
    assert second.state_version == recorded[-1]


def test_events_belong_to_exactly_one_identity_even_for_the_same_bare_key(watch: SessionWatch) -> None:
    main = [goal(watch, "global", agent_id="main").sequence]
    ops = [goal(watch, "global", agent_id="ops").sequence]
    main.append(goal(watch, "global", agent_id="main").sequence)
    ops.append(goal(watch, "global", agent_id="ops").sequence)
    assert events(watch, "global", agent_id="main") == main
    assert events(watch, "global", agent_id="ops") == ops
    assert head(watch, "global", agent_id="main") == main[-1]
    assert head(watch, "global", agent_id="ops") == ops[-1]


def test_a_padded_key_names_the_same_session_as_the_trimmed_key(watch: SessionWatch) -> None:
    signal = goal(watch, f"  {CHILD}  ")
    assert signal.session_key == CHILD
    assert events(watch, CHILD) == [signal.sequence]


def test_an_agent_qualified_key_may_repeat_its_own_agent_id(watch: SessionWatch) -> None:
    signal = goal(watch, CHILD, agent_id="main")
    assert head(watch, CHILD) == signal.sequence


def test_a_bare_key_cannot_be_queried_without_its_agent_id(watch: SessionWatch) -> None:
    goal(watch, "global", agent_id="main")
    with pytest.raises(InvalidQuery, match="agent_id"):
        watch.session_status("global")


# ---------------------------------------------------------------------------------- reset, delete


def test_delete_removes_the_signals_and_head_of_that_identity_only(watch: SessionWatch) -> None:
    kept = [goal(watch, "global", agent_id="main").sequence]
    goal(watch, "global", agent_id="ops")
    kept.append(goal(watch, "global", agent_id="main").sequence)
    watch.delete_session("global", agent_id="ops")
    assert is_unknown(watch, "global", agent_id="ops")
    assert events(watch, "global", agent_id="main") == kept
    assert head(watch, "global", agent_id="main") == kept[-1]
    assert [(r.session_key, r.agent_id) for r in watch.sessions_list()] == [("global", "main")]


def test_a_deleted_session_is_unknown(watch: SessionWatch) -> None:
    goal(watch, CHILD)
    watch.delete_session(CHILD)
    with pytest.raises(UnknownSession) as caught:
        watch.session_status(CHILD, changes_since=0)
    assert str(caught.value) == f"Unknown sessionKey: {CHILD}"


def test_recording_after_a_delete_starts_a_fresh_identity_with_a_higher_sequence(watch: SessionWatch) -> None:
    old = [goal(watch, CHILD).sequence, goal(watch, CHILD).sequence]
    watch.delete_session(CHILD)
    fresh = goal(watch, CHILD)
    assert fresh.sequence > max(old)
    assert events(watch, CHILD) == [fresh.sequence]
    assert head(watch, CHILD) == fresh.sequence


def test_a_deleted_sessions_dedupe_keys_no_longer_match(watch: SessionWatch) -> None:
    old = goal(watch, CHILD, dedupe_key="compacted:op-1")
    watch.delete_session(CHILD)
    fresh = goal(watch, CHILD, dedupe_key="compacted:op-1")
    assert fresh.sequence > old.sequence
    assert events(watch, CHILD) == [fresh.sequence]


def test_a_deleted_session_forgets_its_spawn_edge(watch: SessionWatch) -> None:
    spawned_child(watch)
    watch.delete_session(CHILD)
    watch.upsert_session(CHILD)
    assert watch.record_human_message(CHILD, channel="telegram") is None


def test_deleting_an_unknown_session_changes_nothing(watch: SessionWatch) -> None:
    goal(watch, CHILD)
    before = (watch.sessions_list(), events(watch, CHILD))
    watch.delete_session(OTHER)
    assert (watch.sessions_list(), events(watch, CHILD)) == before
    assert is_unknown(watch, OTHER)


def test_reset_keeps_the_history_and_the_head(watch: SessionWatch) -> None:
    recorded = [goal(watch, CHILD).sequence, goal(watch, CHILD).sequence]
    watch.reset_session(CHILD)
    assert events(watch, CHILD) == recorded
    assert head(watch, CHILD) == recorded[-1]


def test_resetting_an_unknown_session_leaves_it_unknown(watch: SessionWatch) -> None:
    watch.reset_session(OTHER)
    assert is_unknown(watch, OTHER)
    assert watch.sessions_list() == []


# ----------------------------------------------------------------------------------- sessions_list


def test_sessions_list_rows_carry_state_version_only_once_the_head_is_positive(watch: SessionWatch) -> None:
    watch.upsert_session(OTHER)
    signal = goal(watch, CHILD)
    rows = {row.session_key: row for row in watch.sessions_list()}
    assert rows[OTHER].state_version is None
    assert "stateVersion" not in rows[OTHER].to_json()
    assert rows[CHILD].state_version == signal.sequence
    assert rows[CHILD].to_json()["stateVersion"] == signal.sequence


def test_sessions_list_is_ordered_by_key_then_agent(watch: SessionWatch) -> None:
    for key, agent in [
        ("global", "ops"),
        (WORKER, None),
        ("global", "main"),
        (CHILD, None),
        ("cron:a", "ops"),
    ]:
        goal(watch, key, agent_id=agent)
    assert [(r.session_key, r.agent_id) for r in watch.sessions_list()] == [
        (CHILD, "main"),
        (WORKER, "main"),
        ("cron:a", "ops"),
        ("global", "main"),
        ("global", "ops"),
    ]


def test_sessions_list_filters_by_agent_id(watch: SessionWatch) -> None:
    goal(watch, "global", agent_id="ops")
    goal(watch, "global", agent_id="main")
    goal(watch, "agent:ops:main")
    assert [(r.session_key, r.agent_id) for r in watch.sessions_list(agent_id="ops")] == [
        ("agent:ops:main", "ops"),
        ("global", "ops"),
    ]


def test_sessions_list_filters_by_session_kind(watch: SessionWatch) -> None:
    watch.upsert_session("cron:nightly", agent_id="ops", kind="cron")
    watch.upsert_session(WORKER)
    assert [r.session_key for r in watch.sessions_list(kinds=["cron"])] == ["cron:nightly"]


def test_upserting_a_recorded_session_keeps_its_head(watch: SessionWatch) -> None:
    signal = goal(watch, CHILD)
    entry = watch.upsert_session(CHILD, session_id="s-2")
    assert entry.state_version == signal.sequence
    assert entry.session_id == "s-2"
    assert head(watch, CHILD) == signal.sequence


# ---------------------------------------------------------------------------- human message gate


def test_a_human_message_on_an_unknown_session_records_nothing(watch: SessionWatch) -> None:
    assert watch.record_human_message(WORKER, channel="telegram") is None
    assert is_unknown(watch, WORKER)
    assert watch.sessions_list() == []


def test_a_human_message_on_an_unwatched_session_records_nothing(watch: SessionWatch) -> None:
    watch.upsert_session(WORKER)
    assert watch.record_human_message(WORKER, channel="telegram") is None
    assert head(watch, WORKER) == 0


def test_a_human_message_on_a_spawned_session_is_recorded(watch: SessionWatch, clock: FakeClock) -> None:
    spawn = spawned_child(watch)
    signal = watch.record_human_message(CHILD, channel="telegram", run_id="run-h")
    assert signal is not None
    assert signal.sequence > spawn.sequence
    assert signal.kind is SignalKind.HUMAN_DIRECT_MESSAGE
    assert (signal.actor_type, signal.actor_id) == ("human", None)
    assert signal.summary == "human message via telegram"
    assert (signal.run_id, signal.payload, signal.occurred_at) == ("run-h", None, clock.now())
    assert head(watch, CHILD) == signal.sequence


def test_a_human_message_on_a_session_with_an_agent_qualified_spawner_is_recorded(
    watch: SessionWatch,
) -> None:
    watch.upsert_session(WORKER, spawned_by=MANAGER)
    signal = watch.record_human_message(WORKER, channel="slack")
    assert signal is not None
    assert head(watch, WORKER) == signal.sequence


def test_a_human_message_on_a_session_with_an_agent_qualified_parent_is_recorded(
    watch: SessionWatch,
) -> None:
    watch.upsert_session(WORKER, parent_session_key=MANAGER)
    signal = watch.record_human_message(WORKER, channel="slack")
    assert signal is not None
    assert head(watch, WORKER) == signal.sequence


@pytest.mark.parametrize("edge", ["spawned_by", "parent_session_key"])
def test_a_human_turn_under_a_bare_spawn_edge_is_in_changes_since_and_opens_no_notice(
    watch: SessionWatch, edge: str
) -> None:
    # Under session.scope="global" a child's spawn edge is the bare `global`: the edge opens the
    # gate, so the child keeps its log, but a bare key can hold no cursor, so nobody is notified.
    watch.upsert_session(WORKER, **{edge: "global"})
    signal = watch.record_human_message(WORKER, channel="slack")

    assert signal is not None
    changes = watch.session_status(WORKER, changes_since=0).state_changes
    assert changes is not None
    assert [e.sequence for e in changes.events] == [signal.sequence]
    assert watch.store.cursors_of("global", pending_only=False) == []
    assert watch.cursor(MANAGER, WORKER) is None
    assert_audit_clean(watch)


@pytest.mark.parametrize(
    "actor",
    [
        classify_actor(provenance_kind="inter_session", source_session_key=MANAGER),
        classify_actor(provenance_kind="internal_system"),
        classify_actor(internal_events=True),
        classify_actor(session_effects="internal"),
        Actor.agent(OTHER),
        Actor.system(),
    ],
)
def test_an_agent_or_system_turn_records_no_human_message(watch: SessionWatch, actor: Actor) -> None:
    spawn = spawned_child(watch)
    assert watch.record_human_message(CHILD, channel="telegram", actor=actor) is None
    assert head(watch, CHILD) == spawn.sequence


def test_a_turn_classified_as_human_records_a_human_message(watch: SessionWatch) -> None:
    spawned_child(watch)
    signal = watch.record_human_message(CHILD, channel="telegram", actor=classify_actor())
    assert signal is not None
    assert signal.actor_type == "human"


def test_an_identified_human_is_recorded_with_its_id(watch: SessionWatch) -> None:
    spawned_child(watch)
    signal = watch.record_human_message(CHILD, channel="telegram", actor=Actor.human("user-7"))
    assert signal is not None
    assert (signal.actor_type, signal.actor_id) == ("human", "user-7")


@pytest.mark.parametrize(
    ("channel", "summary"),
    [
        ("  telegram  ", "human message via telegram"),
        ("", "human message via unknown"),
        ("   ", "human message via unknown"),
        (None, "human message via unknown"),
    ],
)
def test_a_human_message_summary_names_the_trimmed_channel_or_unknown(
    watch: SessionWatch, channel: str | None, summary: str
) -> None:
    spawned_child(watch)
    signal = watch.record_human_message(CHILD, channel=channel)
    assert signal is not None
    assert signal.summary == summary


def test_a_repeated_human_message_dedupe_key_returns_the_existing_signal(watch: SessionWatch) -> None:
    spawned_child(watch)
    first = watch.record_human_message(CHILD, channel="telegram", dedupe_key="upstream:x:y:1")
    again = watch.record_human_message(CHILD, channel="telegram", dedupe_key="upstream:x:y:1")
    assert first is not None
    assert again == first
    assert head(watch, CHILD) == first.sequence


def test_a_producer_returns_the_existing_signal_for_a_duplicate_dedupe_key_even_when_gated(
    watch: SessionWatch,
) -> None:
    """SPEC §13.1: producers return None only when nothing was recorded and nothing existed."""
    first = watch.record(
        WORKER,
        kind="human_direct_message",
        actor=Actor.human(),
        summary="human message via claude-code",
        dedupe_key="upstream:c:s:1",
    )
    again = watch.record_human_message(WORKER, channel="claude-code", dedupe_key="upstream:c:s:1")
    assert again == first
    assert events(watch, WORKER) == [first.sequence]


def test_a_human_message_occurred_at_is_clamped(watch: SessionWatch, clock: FakeClock) -> None:
    spawned_child(watch)
    signal = watch.record_human_message(
        CHILD, channel="telegram", occurred_at=clock.now() - timedelta(days=2)
    )
    assert signal is not None
    assert signal.occurred_at == clock.now() - timedelta(hours=24)


def test_a_human_message_carries_the_session_id_the_host_gives(watch: SessionWatch) -> None:
    spawned_child(watch)
    signal = watch.record_human_message(CHILD, channel="telegram", session_id="s-7")
    assert signal is not None
    assert signal.session_id == "s-7"
    assert watch.registry_entry(CHILD).session_id == "s-7"  # type: ignore[union-attr]
    untold = watch.record_human_message(CHILD, channel="telegram")
    assert untold is not None
    assert untold.session_id is None


# ----------------------------------------------------------------------------- the other producers


def test_a_goal_change_is_always_recorded_with_the_system_as_default_actor(watch: SessionWatch) -> None:
    signal = watch.record_goal_changed(WORKER, summary="goal created")
    assert signal is not None
    assert (signal.kind, signal.summary) == (SignalKind.GOAL_CHANGED, "goal created")
    assert (signal.actor_type, signal.actor_id) == ("system", None)
    assert head(watch, WORKER) == signal.sequence


def test_a_goal_change_keeps_the_callers_actor(watch: SessionWatch) -> None:
    signal = watch.record_goal_changed("global", summary="goal cleared", actor=Actor.human(), agent_id="ops")
    assert signal is not None
    assert (signal.actor_type, signal.agent_id) == ("human", "ops")


def test_a_goal_change_carries_the_session_id_the_host_gives(watch: SessionWatch) -> None:
    signal = watch.record_goal_changed(WORKER, summary="goal updated", session_id="s-3")
    assert signal is not None
    assert signal.session_id == "s-3"
    assert watch.registry_entry(WORKER).session_id == "s-3"  # type: ignore[union-attr]


def test_a_spawn_registers_the_child_under_its_requester(watch: SessionWatch) -> None:
    spawned_child(watch)
    state = watch.store.session(SessionIdentity(CHILD, "main"))
    assert state is not None
    assert state.spawned_by == MANAGER


def test_a_spawn_records_child_spawned_on_the_child(watch: SessionWatch, clock: FakeClock) -> None:
    signal = watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-42")
    assert signal is not None
    assert (signal.session_key, signal.agent_id, signal.kind) == (CHILD, "main", SignalKind.CHILD_SPAWNED)
    assert (signal.actor_type, signal.actor_id, signal.run_id) == ("agent", MANAGER, "run-42")
    assert (signal.summary, signal.payload) == ("child session spawned", None)
    assert signal.dedupe_key == "child-spawned:run-42"
    assert signal.occurred_at == clock.now()
    assert head(watch, CHILD) == signal.sequence


def test_a_spawn_keeps_the_childs_registered_kind_and_session_id(watch: SessionWatch) -> None:
    watch.upsert_session(CHILD, kind="cron", session_id="s-1")
    spawned_child(watch)
    state = watch.store.session(SessionIdentity(CHILD, "main"))
    assert state is not None
    assert (state.kind, state.session_id, state.spawned_by) == ("cron", "s-1", MANAGER)


def test_a_repeated_spawn_of_the_same_run_returns_the_existing_signal(watch: SessionWatch) -> None:
    first = spawned_child(watch, run="run-1")
    again = watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1")
    assert again == first
    assert events(watch, CHILD) == [first.sequence]


def test_a_successful_run_is_recorded_as_run_completed_without_payload(watch: SessionWatch) -> None:
    signal = watch.record_run_terminal(child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="ok")
    assert signal is not None
    assert (signal.kind, signal.summary, signal.payload) == (
        SignalKind.RUN_COMPLETED,
        "child run completed",
        None,
    )
    assert (signal.actor_type, signal.actor_id, signal.run_id) == ("system", None, "run-1")
    assert signal.dedupe_key == "run-terminal:run-1"


@pytest.mark.parametrize(
    ("outcome", "summary"),
    [("error", "child run failed"), ("timeout", "child run timed out"), ("cancelled", "child run cancelled")],
)
def test_a_failed_timed_out_or_cancelled_run_is_recorded_as_run_failed_with_its_outcome(
    watch: SessionWatch, outcome: Any, summary: str
) -> None:
    signal = watch.record_run_terminal(
        child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome=outcome
    )
    assert signal is not None
    assert (signal.kind, signal.summary, signal.payload) == (
        SignalKind.RUN_FAILED,
        summary,
        {"outcome": outcome},
    )
    assert (signal.actor_type, signal.dedupe_key) == ("system", "run-terminal:run-1")


def test_a_repeated_run_terminal_returns_the_existing_signal(watch: SessionWatch) -> None:
    first = watch.record_run_terminal(child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="error")
    again = watch.record_run_terminal(child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="ok")
    assert first is not None
    assert again == first
    assert events(watch, CHILD) == [first.sequence]


def test_a_compaction_is_recorded_once_per_operation(watch: SessionWatch) -> None:
    first = watch.record_compacted(WORKER, operation_id="op-1", session_id="s-1", run_id="run-1")
    again = watch.record_compacted(WORKER, operation_id="op-1")
    assert first is not None
    assert (first.kind, first.summary, first.actor_type) == (
        SignalKind.COMPACTED,
        "session compacted",
        "system",
    )
    assert (first.dedupe_key, first.session_id, first.run_id) == ("compacted:op-1", "s-1", "run-1")
    assert again == first
    assert events(watch, WORKER) == [first.sequence]


@pytest.mark.parametrize("key", [None, "", "   "])
def test_a_compaction_without_a_session_key_records_nothing(watch: SessionWatch, key: str | None) -> None:
    assert watch.record_compacted(key, operation_id="op-1") is None
    assert watch.sessions_list() == []


def test_an_adoption_is_recorded_by_the_system_as_log_only_metadata(watch: SessionWatch) -> None:
    signal = watch.record_adopted("global", agent_id="ops")
    assert signal is not None
    assert (signal.kind, signal.summary, signal.actor_type) == (
        SignalKind.ADOPTED,
        "session adopted",
        "system",
    )
    assert (signal.payload, signal.dedupe_key) == (None, None)
    assert head(watch, "global", agent_id="ops") == signal.sequence


# ------------------------------------------------------------------------- producers never raise

ProducerCall = Callable[[SessionWatch], Signal | None]


class BadCall(NamedTuple):
    """A producer call with invalid input; `hidden` is summary or payload text the log must not carry."""

    key: str
    kind: str
    hidden: str
    call: ProducerCall


INVALID_PRODUCER_CALLS: dict[str, BadCall] = {
    "human-message-malformed-key": BadCall(
        "agent:main",
        "human_direct_message",
        "human message via telegram",
        lambda w: w.record_human_message("agent:main", channel="telegram"),
    ),
    "goal-multi-line-summary": BadCall(
        WORKER,
        "goal_changed",
        "launch codes",
        lambda w: w.record_goal_changed(WORKER, summary="launch codes\n0000"),
    ),
    "goal-over-long-summary": BadCall(
        WORKER,
        "goal_changed",
        "secret-plan",
        lambda w: w.record_goal_changed(WORKER, summary="secret-plan " * 20),
    ),
    "spawn-malformed-child": BadCall(
        "agent::child",
        "child_spawned",
        "child session spawned",
        lambda w: w.record_spawn(requester_key=MANAGER, child_key="agent::child", child_run_id="r-1"),
    ),
    "spawn-malformed-requester": BadCall(
        CHILD,
        "child_spawned",
        "child session spawned",
        lambda w: w.record_spawn(requester_key="agent:main", child_key=CHILD, child_run_id="r-1"),
    ),
    "run-terminal-unknown-outcome": BadCall(
        CHILD,
        "run_failed",
        "exploded",
        lambda w: w.record_run_terminal(
            child_key=CHILD,
            run_id="r-1",
            requester_key=MANAGER,
            outcome="exploded",  # type: ignore[arg-type]
        ),
    ),
    "compacted-bare-key-without-agent": BadCall(
        "global",
        "compacted",
        "session compacted",
        lambda w: w.record_compacted("global", operation_id="op-1"),
    ),
    "adopted-key-with-nul": BadCall(
        "agent:main:x\x00",
        "adopted",
        "session adopted",
        lambda w: w.record_adopted("agent:main:x\x00"),
    ),
}


@pytest.mark.parametrize("case", INVALID_PRODUCER_CALLS.values(), ids=INVALID_PRODUCER_CALLS.keys())
def test_a_producer_given_invalid_input_returns_none_and_logs_one_line_without_text(
    watch: SessionWatch, caplog: pytest.LogCaptureFixture, case: BadCall
) -> None:
    caplog.set_level(logging.DEBUG, logger="sessionwatch")
    assert case.call(watch) is None
    lines = [r for r in caplog.records if r.name.startswith("sessionwatch")]
    assert len(lines) == 1
    assert lines[0].levelno == logging.WARNING
    message = lines[0].getMessage()
    assert repr(case.key)[1:-1] in message
    assert case.kind in message
    assert case.hidden not in caplog.text
    assert all(case.hidden not in str(value) for value in vars(lines[0]).values())
    assert watch.sessions_list() == []


class FullDiskStore(MemorySignalStore):
    """A store whose every write fails, as a full disk would."""

    def write(self) -> NoReturn:
        raise StoreError("database or disk is full")


@pytest.mark.parametrize(
    ("kind", "call"),
    [
        ("goal_changed", lambda w: w.record_goal_changed(WORKER, summary="goal created")),
        ("human_direct_message", lambda w: w.record_human_message(WORKER, channel="telegram")),
        (
            "child_spawned",
            lambda w: w.record_spawn(requester_key=MANAGER, child_key=WORKER, child_run_id="r"),
        ),
        (
            "run_completed",
            lambda w: w.record_run_terminal(
                child_key=WORKER, run_id="r", requester_key=MANAGER, outcome="ok"
            ),
        ),
        ("compacted", lambda w: w.record_compacted(WORKER, operation_id="op")),
        ("adopted", lambda w: w.record_adopted(WORKER)),
        ("created", lambda w: w.record_session_created(WORKER, actor=Actor.system())),
    ],
)
def test_a_failing_store_never_fails_the_producer_and_is_logged_once(
    clock: FakeClock, caplog: pytest.LogCaptureFixture, kind: str, call: ProducerCall
) -> None:
    caplog.set_level(logging.DEBUG, logger="sessionwatch")
    watch = SessionWatch(FullDiskStore(), clock=clock)
    assert call(watch) is None
    lines = [r for r in caplog.records if r.name.startswith("sessionwatch")]
    assert len(lines) == 1
    assert WORKER in lines[0].getMessage()
    assert kind in lines[0].getMessage()


@pytest.mark.parametrize(
    "call",
    [
        lambda w: w.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id=None),
        lambda w: w.record_run_terminal(child_key=CHILD, run_id=None, requester_key=MANAGER, outcome="ok"),
        lambda w: w.record_compacted(CHILD, operation_id=None),
    ],
    ids=["spawn-without-run-id", "run-terminal-without-run-id", "compacted-without-operation-id"],
)
def test_a_producer_without_the_id_its_dedupe_key_needs_records_nothing(
    watch: SessionWatch, call: ProducerCall
) -> None:
    assert call(watch) is None
    assert watch.sessions_list() == []


# --------------------------------------------------------------------------- durability, rebuild


def test_the_read_model_rebuilt_from_the_event_store_equals_the_stored_one(
    watch: SessionWatch, clock: FakeClock
) -> None:
    watch.upsert_session(WORKER, parent_session_key=MANAGER, kind="cron")
    spawned_child(watch, CHILD, "run-a")
    spawned_child(watch, OTHER, "run-b")
    watch.record_human_message(CHILD, channel="telegram", dedupe_key="upstream:c:1")
    watch.record_human_message(CHILD, channel="telegram", dedupe_key="upstream:c:1")
    watch.record_goal_changed("global", summary="goal created", agent_id="ops")
    watch.record_goal_changed("global", summary="goal created", agent_id="main")
    clock.advance(hours=2)
    watch.record_run_terminal(child_key=CHILD, run_id="run-a", requester_key=MANAGER, outcome="timeout")
    watch.record_compacted(WORKER, operation_id="op-1", session_id="s-1")
    watch.record_many(
        [goal_input(WORKER, payload={"status": "active"}), goal_input("global", agent_id="ops")]
    )
    watch.record_adopted(OTHER)
    watch.reset_session(CHILD)
    watch.delete_session("global", agent_id="ops")
    watch.delete_session(OTHER)
    goal(watch, OTHER, occurred_at=clock.now() - timedelta(days=2))
    watch.upsert_session(CHILD, session_id="s-9")
    rebuilt = watch.rebuild_read_model()
    assert rebuilt == watch.store.read_model()
    assert len(rebuilt.sessions) == 4


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_reopening_a_store_keeps_everything(store_url: str) -> None:
    clock = FakeClock()
    url = store_url
    with sessionwatch.open(url, clock=clock) as first:
        spawned_child(first)
        human = first.record_human_message(CHILD, channel="telegram", dedupe_key="upstream:c:1")
        goal(first, "global", agent_id="ops")
        first.upsert_session(WORKER, kind="cron")
        newest = goal(first, OTHER)
        first.delete_session(OTHER)
        status = first.session_status(CHILD, changes_since=0)
        rows = first.sessions_list()
        model = first.store.read_model()
    with sessionwatch.open(url, clock=clock) as second:
        assert second.session_status(CHILD, changes_since=0) == status
        assert second.sessions_list() == rows
        assert second.store.read_model() == model
        assert second.rebuild_read_model() == model
        assert second.record_human_message(CHILD, channel="telegram", dedupe_key="upstream:c:1") == human
        assert goal(second, WORKER).sequence > newest.sequence


def test_a_new_sqlite_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "private.db"
    with sessionwatch.open(f"sqlite:///{path}") as watch:
        goal(watch)
        files = [path, path.with_name("private.db-wal"), path.with_name("private.db-shm")]
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {f.name: 0o600 for f in files}
