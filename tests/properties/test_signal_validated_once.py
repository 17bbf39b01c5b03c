"""A signal is validated once: the checks of `check_signal` leave nothing for pydantic to reject.

`check_signal` builds its draft, and `decide` the `SignalRecorded` it becomes, without validating
again. For any input the checks accept, the event so built is the one pydantic's validation of the
same fields gives: equal, dumped and stored to the same bytes, and read back as itself.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from sessionwatch import Signal, SignalInput
from sessionwatch.adapters.stores.mapper import decode, encode
from sessionwatch.domain.recording import check_signal
from sessionwatch.domain.session import SessionState, SignalDraft, SignalRecorded, decide, decide_records
from sessionwatch.testing import signal_inputs

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def draft_of(item: SignalInput, watchers: tuple[str, ...] = ()) -> SignalDraft:
    return check_signal(
        session_key=item.session_key,
        agent_id=item.agent_id,
        kind=item.kind,
        actor_type=item.actor.actor_type,
        actor_id=item.actor.actor_id,
        summary=item.summary,
        payload=item.payload,
        run_id=item.run_id,
        occurred_at=item.occurred_at,
        dedupe_key=item.dedupe_key,
        watchers=watchers if item.kind != "child_spawned" else (),
        now=NOW,
    )


def same_values(built: BaseModel, validated: BaseModel) -> bool:
    """Equal field by field, in declaration order, and of the same types (a `str` equals a `StrEnum`)."""
    if list(built.__dict__) != list(type(built).model_fields):
        return False
    pairs = zip(built.__dict__.items(), validated.__dict__.items(), strict=True)
    return built == validated and all(a == b and type(a[1]) is type(b[1]) for a, b in pairs)


@given(
    item=signal_inputs(),
    watchers=st.lists(st.sampled_from(("agent:main:main", " agent:ops:main ", "global")), max_size=3),
)
def test_a_checked_signal_needs_no_second_validation(item: SignalInput, watchers: list[str]) -> None:
    draft = draft_of(item, tuple(watchers))
    assert same_values(draft, SignalDraft.model_validate(draft.model_dump()))
    [event] = decide(draft.at(7), SessionState(session_key=draft.session_key, agent_id=draft.agent_id))
    assert isinstance(event, SignalRecorded)
    validated = SignalRecorded.model_validate(draft.at(7).event_fields())

    assert same_values(event, validated)
    assert event.model_dump(mode="json") == validated.model_dump(mode="json")
    assert encode(event) == encode(validated)
    assert decode(event.type, encode(event)) == event
    shown = Signal.from_event(event)  # and the API's view of it is not validated a third time
    again = Signal.model_validate(shown.model_dump())
    assert same_values(shown, again)
    assert shown.to_json() == again.to_json()


@given(items=st.lists(signal_inputs(), min_size=1, max_size=5))
def test_a_batch_of_checked_signals_is_decided_as_the_validated_events(items: list[SignalInput]) -> None:
    commands = [draft_of(item).at(sequence) for sequence, item in enumerate(items, 1)]
    state = SessionState(session_key="agent:main:x", agent_id="main")  # decide_records reads the head

    decided = decide_records(commands, state)

    validated = [SignalRecorded.model_validate(c.event_fields()) for c in commands]
    assert all(same_values(a, b) for a, b in zip(decided, validated, strict=True))
