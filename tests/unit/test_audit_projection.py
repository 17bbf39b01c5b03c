"""The audit's pure parts (projections/audit.py): the replay's head check and the invariants."""

from __future__ import annotations

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import PruneCutoffs, SignalsPruned
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import Payload, SignalKind
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.projections.audit import VIOLATION_KINDS, check_invariants, compare, replay
from sessionwatch.projections.read_model import fold

KEY = "agent:main:worker"
IDENTITY = SessionIdentity(KEY, "main")
CUTOFFS = PruneCutoffs(at_ms=10, occurred_before_ms=0, through_sequence=0, cursors_updated_before_ms=0)


def signal(sequence: int, kind: SignalKind = SignalKind.GOAL_CHANGED, **fields: object) -> SignalRecorded:
    values: dict[str, object] = {
        "sequence": sequence,
        "session_key": KEY,
        "agent_id": "main",
        "kind": kind,
        "actor_type": "system",
        "occurred_at_ms": 1,
        "recorded_at_ms": 1,
        "summary": "goal updated",
        **fields,
    }
    return SignalRecorded.model_validate(values)


def checkpoint(head: int) -> SignalsPruned:
    state = SessionState(session_key=KEY, agent_id="main", known=True, registered=True, head=head)
    return SignalsPruned(cutoffs=CUTOFFS, sessions=(state,), cursors=(), links=())


def test_a_checkpoint_that_lowers_a_head_is_a_head_lowered_violation() -> None:
    result = replay([signal(5), checkpoint(3)])
    (lowered,) = result.violations
    assert lowered.kind == "head_lowered"
    assert "head 5 -> 3" in lowered.detail
    assert result.events_replayed == 2


def test_a_checkpoint_at_or_above_the_heads_is_clean() -> None:
    assert replay([signal(5), checkpoint(5), signal(7), checkpoint(9)]).violations == []


def test_progress_is_reported_every_thousand_events_and_at_the_end() -> None:
    seen: list[int] = []
    replay([signal(n) for n in range(1, 2501)], progress=seen.append)
    assert seen == [1000, 2000, 2500]


def test_identical_models_compare_clean_and_every_kind_is_documented() -> None:
    model = fold([signal(1), signal(2)])
    assert compare(model, fold([signal(1), signal(2)])) == []
    assert {"head_lowered", "signal_missing", "cursor_order", "message_text"} <= set(VIOLATION_KINDS)


def test_message_text_is_a_long_or_multi_line_summary_or_an_unlisted_payload_key() -> None:
    long = signal(1, summary="x" * 201)
    broken = signal(2, summary="line one\nline two")
    unlisted = signal(3, kind=SignalKind.ADOPTED, summary="session adopted", payload=Payload(turns=2))
    fine = signal(
        4, kind=SignalKind.HUMAN_DIRECT_MESSAGE, summary="human message via x", payload=Payload(turns=2)
    )
    model = fold([long, broken, unlisted, fine])
    found = sorted(v.detail for v in check_invariants(model) if v.kind == "message_text")
    assert [d.split(" sequence ")[1].split(":")[0] for d in found] == ["1", "2", "3"]


def test_a_watermark_above_its_head_is_named() -> None:
    state = SessionState(session_key=KEY, agent_id="main", known=True, head=3, pruned_through=4)
    model = fold([SignalsPruned(cutoffs=CUTOFFS, sessions=(state,), cursors=(), links=())])
    assert [v.kind for v in check_invariants(model)] == ["watermark_above_head"]


def test_a_pending_notice_for_a_signal_of_another_session_is_not_judged() -> None:
    cursor = CursorState(
        watcher="agent:main:main",
        target_key="agent:main:other",
        target_agent_id="main",
        last_seen=0,
        notified=1,
        material=1,
        updated_at_ms=1,
    )
    model = fold([signal(1), SignalsPruned(cutoffs=CUTOFFS, sessions=(), cursors=(cursor,), links=())])
    assert [v.kind for v in check_invariants(model)] == []
