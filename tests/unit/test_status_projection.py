"""Pure reconciliation query and read-model fold (SPEC §7.1, §7.2, §9, §13.1)."""

from __future__ import annotations

from datetime import datetime

import pytest

from sessionwatch import InvalidQuery, SessionRow, SessionStatus, StateChange
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionReset,
    SessionState,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.signals import Payload, SignalKind, to_epoch_ms
from sessionwatch.projections.read_model import ReadModel, evolve_read_model, fold
from sessionwatch.projections.status import (
    build_status,
    check_changes_since,
    clamp_limit,
    earliest_available_sequence,
    page_after,
)
from sessionwatch.testing import START

KEY = "agent:main:subagent:child"
WHEN_MS = to_epoch_ms(START)


def signal(
    sequence: int,
    *,
    key: str = KEY,
    agent_id: str = "main",
    kind: SignalKind = SignalKind.GOAL_CHANGED,
    payload: Payload | None = None,
    actor_id: str | None = None,
    run_id: str | None = None,
    dedupe_key: str | None = None,
) -> SignalRecorded:
    return SignalRecorded(
        sequence=sequence,
        session_key=key,
        agent_id=agent_id,
        kind=kind,
        actor_type="agent" if actor_id else "system",
        actor_id=actor_id,
        run_id=run_id,
        occurred_at_ms=WHEN_MS + sequence,
        recorded_at_ms=WHEN_MS + sequence,
        summary="goal updated",
        payload=payload,
        dedupe_key=dedupe_key,
    )


def state(head: int, pruned_through: int = 0) -> SessionState:
    return SessionState(
        session_key=KEY, agent_id="main", known=True, head=head, pruned_through=pruned_through
    )


# ------------------------------------------------------------------------------- query arguments


@pytest.mark.parametrize(("limit", "clamped"), [(0, 1), (-5, 1), (1, 1), (50, 50), (200, 200), (500, 200)])
def test_a_page_limit_is_clamped_into_1_to_200(limit: int, clamped: int) -> None:
    assert clamp_limit(limit) == clamped


@pytest.mark.parametrize("limit", [1.5, "10", True, None])
def test_a_page_limit_that_is_not_an_integer_is_an_invalid_query(limit: object) -> None:
    with pytest.raises(InvalidQuery) as caught:
        clamp_limit(limit)
    assert caught.value.field == "limit"


@pytest.mark.parametrize("since", [0, 1, 10**12])
def test_changes_since_is_a_non_negative_integer(since: int) -> None:
    assert check_changes_since(since) == since


def test_no_changes_since_asks_for_the_head_only() -> None:
    assert check_changes_since(None) is None


@pytest.mark.parametrize("since", [-1, 1.0, "3", True, False, [0]])
def test_changes_since_that_is_negative_or_not_an_integer_is_an_invalid_query_naming_it(
    since: object,
) -> None:
    with pytest.raises(InvalidQuery, match="changes_since") as caught:
        check_changes_since(since)
    assert caught.value.field == "changes_since"
    assert isinstance(caught.value, ValueError)


# ------------------------------------------------------------------------------------------ pages

LOG = tuple(signal(s) for s in (2, 5, 9, 14, 19))


def test_a_page_holds_the_signals_after_changes_since_in_ascending_order() -> None:
    page, truncated = page_after(LOG, 5, 200)
    assert [s.sequence for s in page] == [9, 14, 19]
    assert not truncated


def test_changes_since_between_sparse_sequences_starts_at_the_next_retained_one() -> None:
    page, _ = page_after(LOG, 10, 200)
    assert [s.sequence for s in page] == [14, 19]


def test_a_page_cut_short_by_the_limit_is_truncated() -> None:
    page, truncated = page_after(LOG, 0, 3)
    assert [s.sequence for s in page] == [2, 5, 9]
    assert truncated


def test_a_page_that_exactly_fills_the_limit_is_not_truncated() -> None:
    page, truncated = page_after(LOG, 5, 3)
    assert [s.sequence for s in page] == [9, 14, 19]
    assert not truncated


def test_changes_since_at_the_head_gives_an_empty_page() -> None:
    page, truncated = page_after(LOG, 19, 200)
    assert list(page) == []
    assert not truncated


# ------------------------------------------------------------------------------ earliest available


def test_the_earliest_available_sequence_is_the_smallest_retained_one() -> None:
    assert earliest_available_sequence(14, head=19) == 14


def test_with_nothing_retained_the_earliest_available_sequence_follows_the_head() -> None:
    assert earliest_available_sequence(None, head=19) == 20


def test_with_nothing_ever_recorded_the_earliest_available_sequence_is_zero() -> None:
    assert earliest_available_sequence(None, head=0) == 0


# ---------------------------------------------------------------------------------- history gap


@pytest.mark.parametrize(("since", "gap"), [(0, True), (9, True), (10, False), (11, False), (30, False)])
def test_history_gap_is_exactly_changes_since_below_the_prune_watermark(since: int, gap: bool) -> None:
    status = build_status(state(head=30, pruned_through=10), since, first_retained=14)
    assert status.state_changes is not None
    assert status.state_changes.history_gap is gap


def test_a_missing_retained_row_without_pruning_is_not_a_history_gap() -> None:
    page = [StateChange.from_event(signal(14)), StateChange.from_event(signal(19))]
    status = build_status(state(head=19), 0, page, first_retained=14)
    assert status.state_changes is not None
    assert status.state_changes.history_gap is False
    assert status.state_changes.earliest_available_sequence == 14


def test_a_fully_pruned_session_reports_head_plus_one_as_earliest_and_a_gap() -> None:
    status = build_status(state(head=19, pruned_through=19), 3)
    assert status.state_changes is not None
    assert status.state_changes.earliest_available_sequence == 20
    assert status.state_changes.history_gap is True
    assert status.state_changes.events == ()


def test_without_changes_since_the_status_is_the_head_only() -> None:
    status = build_status(state(head=19, pruned_through=4), None)
    assert status == SessionStatus(session_key=KEY, state_version=19)


# ------------------------------------------------------------------------------------ JSON shapes


def test_the_status_json_without_changes_since_has_only_key_and_state_version() -> None:
    assert SessionStatus(session_key=KEY, state_version=0).to_json() == {"sessionKey": KEY, "stateVersion": 0}


def test_the_status_json_is_the_camel_case_shape_of_spec_7_1() -> None:
    page = [
        StateChange.from_event(
            signal(14, kind=SignalKind.HUMAN_DIRECT_MESSAGE, payload=Payload(channel="telegram", turns=2))
        ),
        StateChange.from_event(signal(19, actor_id="agent:main:main", run_id="run-4")),
    ]
    status = build_status(state(head=19), 10, page, truncated=True, first_retained=14)
    assert status.to_json() == {
        "sessionKey": KEY,
        "stateVersion": 19,
        "stateChanges": {
            "events": [
                {
                    "sequence": 14,
                    "kind": "human_direct_message",
                    "actorType": "system",
                    "occurredAt": WHEN_MS + 14,
                    "summary": "goal updated",
                    "payload": {"channel": "telegram", "turns": 2},
                },
                {
                    "sequence": 19,
                    "kind": "goal_changed",
                    "actorType": "agent",
                    "occurredAt": WHEN_MS + 19,
                    "summary": "goal updated",
                    "actorId": "agent:main:main",
                    "runId": "run-4",
                },
            ],
            "truncated": True,
            "earliestAvailableSequence": 14,
            "historyGap": False,
        },
    }


def test_occurred_at_is_epoch_milliseconds_on_the_wire() -> None:
    change = StateChange.from_event(signal(3))
    assert isinstance(change.occurred_at, datetime)
    assert change.to_json()["occurredAt"] == WHEN_MS + 3
    assert isinstance(change.to_json()["occurredAt"], int)


def test_an_event_without_actor_id_run_id_or_payload_omits_them() -> None:
    assert set(StateChange.from_event(signal(3)).to_json()) == {
        "sequence",
        "kind",
        "actorType",
        "occurredAt",
        "summary",
    }


def test_the_status_payload_shows_the_run_outcome() -> None:
    event = signal(3, kind=SignalKind.RUN_FAILED, payload=Payload(outcome="cancelled"))
    assert StateChange.from_event(event).to_json()["payload"] == {"outcome": "cancelled"}


def test_the_status_payload_hides_keys_outside_outcome_channel_and_turns() -> None:
    change = StateChange.from_event(signal(3, payload=Payload(status="active")))
    assert change.payload is None
    assert "payload" not in change.to_json()


def test_a_session_row_omits_state_version_while_the_head_is_zero() -> None:
    row = SessionRow.from_state(state(head=0))
    assert row.state_version is None
    assert row.to_json() == {"sessionKey": KEY, "agentId": "main", "kind": "main"}


def test_a_session_row_carries_state_version_once_the_head_is_positive() -> None:
    row = SessionRow.from_state(state(head=7))
    assert row.to_json() == {"sessionKey": KEY, "agentId": "main", "kind": "main", "stateVersion": 7}


# ------------------------------------------------------------------------------------- read model

CHILD = SessionIdentity(KEY, "main")
MAIN_GLOBAL = SessionIdentity("global", "main")
OPS_GLOBAL = SessionIdentity("global", "ops")


def test_recorded_signals_are_kept_per_identity_in_sequence_order() -> None:
    model = fold([signal(1), signal(2, key="global", agent_id="ops"), signal(3)])
    assert [s.sequence for s in model.signals[CHILD]] == [1, 3]
    assert [s.sequence for s in model.signals[OPS_GLOBAL]] == [2]
    assert model.sessions[CHILD].head == 3


def test_a_dedupe_key_points_at_its_signals_identity_and_sequence() -> None:
    model = fold([signal(1), signal(2, dedupe_key="run-terminal:r1")])
    assert model.dedupe == {"run-terminal:r1": (CHILD, 2)}


def test_an_upsert_registers_a_session_without_signals() -> None:
    model = fold([SessionUpserted(session_key="global", agent_id="ops", kind="cron")])
    assert model.sessions[OPS_GLOBAL].known
    assert model.sessions[OPS_GLOBAL].kind == "cron"
    assert OPS_GLOBAL not in model.signals


def test_a_reset_keeps_the_history_of_the_session() -> None:
    before = fold([signal(1), signal(2)])
    after = evolve_read_model(before, SessionReset(session_key=KEY, agent_id="main"))
    assert after == before


def test_a_deletion_drops_the_signals_head_and_dedupe_keys_of_that_identity_only() -> None:
    before = fold(
        [
            signal(1, key="global", agent_id="main", dedupe_key="compacted:a"),
            signal(2, key="global", agent_id="ops", dedupe_key="compacted:b"),
        ]
    )
    after = evolve_read_model(before, SessionDeleted(session_key="global", agent_id="main"))
    assert MAIN_GLOBAL not in after.sessions
    assert MAIN_GLOBAL not in after.signals
    assert after.dedupe == {"compacted:b": (OPS_GLOBAL, 2)}
    assert after.sessions[OPS_GLOBAL] == before.sessions[OPS_GLOBAL]
    assert after.signals[OPS_GLOBAL] == before.signals[OPS_GLOBAL]


def test_folding_nothing_gives_the_empty_read_model() -> None:
    assert fold([]) == ReadModel()
