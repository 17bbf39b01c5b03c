"""The Session stream's decide/evolve (SPEC §2, §4, §9), as given / when / then."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest
from hypothesis import given as given_hypothesis
from hypothesis import strategies as st

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.registry import SessionMeta
from sessionwatch.domain.session import (
    DeleteSession,
    RecordSignal,
    ResetSession,
    SessionDeleted,
    SessionEvent,
    SessionReset,
    SessionState,
    SessionUpserted,
    SignalDraft,
    SignalRecorded,
    UpsertSession,
    decide,
    decide_records,
    evolve,
    human_message_is_gated,
    initial,
    raises_head_only,
    spawn_edge_watcher,
)
from sessionwatch.domain.signals import SignalKind

CHILD = SessionIdentity("agent:main:subagent:child", "main")
KEY, AGENT = CHILD
WHEN_MS = 1_796_000_000_000


def given(*events: SessionEvent) -> SessionState:
    """Fold the given events over the child's initial state."""
    state = initial(CHILD)
    for event in events:
        state = evolve(state, event)
    return state


def fold(state: SessionState, events: Iterable[SessionEvent]) -> SessionState:
    for event in events:
        state = evolve(state, event)
    return state


def upserted(**fields: str | None) -> SessionUpserted:
    return SessionUpserted(session_key=KEY, agent_id=AGENT, **fields)


def upsert(**fields: str | None) -> UpsertSession:
    return UpsertSession(session_key=KEY, agent_id=AGENT, **fields)


def record(sequence: int) -> RecordSignal:
    draft = SignalDraft(
        session_key=KEY,
        agent_id=AGENT,
        kind=SignalKind.GOAL_CHANGED,
        actor_type="system",
        occurred_at_ms=WHEN_MS,
        recorded_at_ms=WHEN_MS,
        summary="goal updated",
    )
    return draft.at(sequence)


def recorded(sequence: int) -> SignalRecorded:
    return SignalRecorded.model_validate(record(sequence).event_fields())


RESET = ResetSession(session_key=KEY, agent_id=AGENT)
DELETE = DeleteSession(session_key=KEY, agent_id=AGENT)


# ---------------------------------------------------------------------------------------- upsert


def test_upserting_an_unknown_session_registers_it() -> None:
    state = given()
    events = decide(upsert(spawned_by="agent:main:main"), state)
    assert events == [upserted(spawned_by="agent:main:main")]


def test_upserting_an_unknown_session_with_defaults_still_registers_it() -> None:
    state = given()
    events = decide(upsert(), state)
    assert events == [upserted()]


def test_upserting_the_same_fields_again_is_a_no_op() -> None:
    state = given(upserted(kind="cron", spawned_by="agent:main:main", session_id="s-1"))
    events = decide(upsert(kind="cron", spawned_by="agent:main:main", session_id="s-1"), state)
    assert events == []


def test_upserting_without_optional_fields_keeps_the_registered_ones() -> None:
    state = given(upserted(spawned_by="agent:main:main", parent_session_key="agent:main:p", session_id="s-1"))
    events = decide(upsert(), state)
    assert events == []


def test_upserting_a_changed_field_records_the_merged_entry() -> None:
    state = given(upserted(spawned_by="agent:main:main", session_id="s-1"))
    events = decide(upsert(session_id="s-2", kind="cron"), state)
    assert events == [upserted(spawned_by="agent:main:main", session_id="s-2", kind="cron")]


def test_a_session_that_recorded_a_signal_is_known_without_an_upsert() -> None:
    state = given(recorded(4))
    assert state.known
    assert state.head == 4


# ---------------------------------------------------------------------------------------- record


def test_recording_above_the_head_appends_the_signal() -> None:
    state = given(upserted(), recorded(3))
    events = decide(record(7), state)
    assert events == [recorded(7)]


def test_recording_at_the_head_is_a_no_op() -> None:
    state = given(recorded(3), recorded(7))
    events = decide(record(7), state)
    assert events == []


def test_recording_below_the_head_is_a_no_op() -> None:
    state = given(recorded(3), recorded(7))
    events = decide(record(5), state)
    assert events == []


def test_the_head_is_the_highest_recorded_sequence() -> None:
    state = given(recorded(3), recorded(9), recorded(11))
    assert state.head == 11


def test_the_head_never_goes_down_when_an_older_sequence_is_replayed() -> None:
    state = given(recorded(9), recorded(4))
    assert state.head == 9


def test_a_signal_carrying_a_session_id_sets_the_incarnation_and_one_without_keeps_it() -> None:
    with_id = SignalRecorded.model_validate({**record(2).event_fields(), "session_id": "s-9"})
    state = given(with_id, recorded(3))
    assert state.session_id == "s-9"


# ----------------------------------------------------------------------------------------- reset


def test_resetting_an_unknown_session_is_a_no_op() -> None:
    state = given()
    events = decide(RESET, state)
    assert events == []


def test_resetting_a_known_session_records_the_reset() -> None:
    state = given(upserted())
    events = decide(RESET, state)
    assert events == [SessionReset(session_key=KEY, agent_id=AGENT)]


def test_a_reset_keeps_the_head_and_the_registry_entry() -> None:
    state = given(upserted(spawned_by="agent:main:main"), recorded(5))
    after = fold(state, decide(RESET, state))
    assert after == state


# ---------------------------------------------------------------------------------------- delete


def test_deleting_an_unknown_session_is_a_no_op() -> None:
    state = given()
    events = decide(DELETE, state)
    assert events == []


def test_deleting_a_known_session_records_the_deletion() -> None:
    state = given(upserted(), recorded(5))
    events = decide(DELETE, state)
    assert events == [SessionDeleted(session_key=KEY, agent_id=AGENT)]


def test_a_deleted_session_is_forgotten_with_its_head() -> None:
    state = given(upserted(spawned_by="agent:main:main"), recorded(5))
    after = fold(state, decide(DELETE, state))
    assert after == initial(CHILD)


def test_deleting_a_deleted_session_again_is_a_no_op() -> None:
    state = given(upserted(), recorded(5), SessionDeleted(session_key=KEY, agent_id=AGENT))
    events = decide(DELETE, state)
    assert events == []


def test_recording_after_a_deletion_starts_a_fresh_identity() -> None:
    state = given(recorded(5), SessionDeleted(session_key=KEY, agent_id=AGENT))
    after = fold(state, decide(record(8), state))
    assert (after.known, after.head, after.spawned_by) == (True, 8, None)


# ------------------------------------------------------------------------------ spawn-edge watcher


def test_the_spawn_edge_watcher_is_the_spawning_session() -> None:
    state = given(upserted(spawned_by="agent:main:main", parent_session_key="agent:main:other"))
    assert spawn_edge_watcher(state) == "agent:main:main"


def test_without_a_spawner_the_parent_session_is_the_spawn_edge_watcher() -> None:
    state = given(upserted(parent_session_key="agent:main:parent"))
    assert spawn_edge_watcher(state) == "agent:main:parent"


def test_a_session_with_neither_spawner_nor_parent_has_no_spawn_edge_watcher() -> None:
    state = given(upserted())
    assert spawn_edge_watcher(state) is None


def test_a_bare_parent_key_is_never_a_spawn_edge_watcher() -> None:
    state = given(upserted(parent_session_key="global"))
    assert spawn_edge_watcher(state) is None


def test_a_bare_spawner_key_is_never_a_spawn_edge_watcher() -> None:
    state = given(upserted(spawned_by="main"))
    assert spawn_edge_watcher(state) is None


# ---------------------------------------------------------------------------------------- gating


def test_a_human_message_on_an_unwatched_session_is_gated() -> None:
    state = given(upserted())
    assert human_message_is_gated(state, has_registered_watchers=False)


def test_a_human_message_on_an_unknown_session_is_gated() -> None:
    state = given()
    assert human_message_is_gated(state, has_registered_watchers=False)


def test_a_human_message_on_a_spawned_session_is_not_gated() -> None:
    state = given(upserted(spawned_by="agent:main:main"))
    assert not human_message_is_gated(state, has_registered_watchers=False)


def test_a_human_message_on_a_child_of_an_agent_qualified_parent_is_not_gated() -> None:
    state = given(upserted(parent_session_key="agent:main:parent"))
    assert not human_message_is_gated(state, has_registered_watchers=False)


@pytest.mark.parametrize("edge", ["spawned_by", "parent_session_key"])
def test_a_human_message_on_a_child_of_a_bare_parent_is_not_gated(edge: str) -> None:
    state = given(upserted(**{edge: "global"}))
    assert not human_message_is_gated(state, has_registered_watchers=False)


def test_a_human_message_on_a_session_with_registered_watchers_is_not_gated() -> None:
    state = given(upserted())
    assert not human_message_is_gated(state, has_registered_watchers=True)


def test_a_signal_changes_only_known_head_and_session_id_whatever_fields_the_state_grows() -> None:
    # `evolve` spells the state out on its hot path; a field added later must not be reset by it.
    state = SessionState(
        session_key="agent:main:x",
        agent_id="main",
        known=True,
        session_id="sid-1",
        kind="group",
        spawned_by="agent:main:main",
        parent_session_key="agent:main:parent",
        registered=True,
        head=4,
        pruned_through=2,
        meta=SessionMeta(label="build"),
    )
    assert {f.name for f in dataclasses.fields(SessionState)} == set(dataclasses.asdict(state))
    unset = [f.name for f in dataclasses.fields(SessionState) if getattr(state, f.name) == f.default]
    assert unset == [], "give every field a non-default value above"
    signal = SignalRecorded(
        sequence=9,
        session_key="agent:main:x",
        agent_id="main",
        kind=SignalKind.GOAL_CHANGED,
        actor_type="system",
        occurred_at_ms=1,
        recorded_at_ms=1,
        summary="goal updated",
    )
    after = evolve(state, signal)
    names = [f.name for f in dataclasses.fields(SessionState)]
    changed = {name for name in names if getattr(after, name) != getattr(state, name)}
    assert changed == {"head"}
    assert after.head == 9


@given_hypothesis(
    known=st.booleans(),
    state_session_id=st.sampled_from([None, "", "sid-1", "sid-2"]),
    signal_session_id=st.sampled_from([None, "", "sid-1", "sid-2"]),
    head=st.integers(0, 20),
    sequence=st.integers(1, 20),
)
def test_raises_head_only_holds_exactly_when_a_signal_changes_the_head_alone(
    known: bool, state_session_id: str | None, signal_session_id: str | None, head: int, sequence: int
) -> None:
    # A fold defers building the state on this promise (ADR-0011): when it is made, `evolve` is
    # `replace(head=max(...))`; when it is not, something besides the head changes.
    state = SessionState(session_key=KEY, agent_id=AGENT, known=known, session_id=state_session_id, head=head)
    signal = SignalRecorded(
        sequence=sequence,
        session_key=KEY,
        agent_id=AGENT,
        session_id=signal_session_id,
        kind=SignalKind.GOAL_CHANGED,
        actor_type="system",
        occurred_at_ms=1,
        recorded_at_ms=1,
        summary="goal updated",
    )
    after = evolve(state, signal)
    if raises_head_only(state, signal):
        assert after == dataclasses.replace(state, head=max(head, sequence))
    else:
        assert dataclasses.replace(after, head=state.head) != state


@given_hypothesis(
    known=st.booleans(),
    head=st.integers(0, 20),
    sequences=st.lists(st.integers(1, 25), max_size=8),
)
def test_deciding_records_together_equals_deciding_each_on_the_state_the_others_left(
    known: bool, head: int, sequences: list[int]
) -> None:
    # `record_many` decides a run of commands at once (ADR-0017); sequences here may fall at or
    # below the head, repeat or go down, which the shell never allocates but `decide` must refuse.
    state = SessionState(session_key=KEY, agent_id=AGENT, known=known, head=head)
    commands = [record(sequence) for sequence in sequences]
    expected: list[SessionEvent] = []
    folded = state
    for command in commands:
        events = decide(command, folded)
        expected.extend(events)
        for event in events:
            folded = evolve(folded, event)
    assert decide_records(commands, state) == expected
