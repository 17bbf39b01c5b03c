"""`check_recorded`: an imported signal must be one the strict API would have recorded (SPEC §3.3, §15.2)."""

from __future__ import annotations

import pytest

from sessionwatch import InvalidSignal
from sessionwatch.domain.recording import check_recorded
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.domain.signals import MAX_SEQUENCE, SignalKind

WHEN_MS = 1_796_000_000_000


def recorded(**fields: object) -> SignalRecorded:
    base: dict[str, object] = {
        "sequence": 7,
        "session_key": "agent:main:worker",
        "agent_id": "main",
        "kind": SignalKind.GOAL_CHANGED,
        "actor_type": "system",
        "occurred_at_ms": WHEN_MS,
        "recorded_at_ms": WHEN_MS,
        "summary": "goal updated",
    }
    return SignalRecorded.model_validate({**base, **fields})


def test_a_signal_the_strict_api_records_passes() -> None:
    check_recorded(recorded())
    check_recorded(recorded(sequence=MAX_SEQUENCE - 1, dedupe_key="d-1", run_id="r-1"))


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"summary": "first line\nsecond line"}, "summary"),
        ({"summary": "x" * 201}, "summary"),
        ({"session_key": "agent:main:worker\x00"}, "session_key"),
        ({"session_key": "  agent:main:worker"}, "session_key"),
        ({"agent_id": "main:x"}, "agent_id"),
        ({"dedupe_key": "dedupe\x1b[2J"}, "dedupe_key"),
        ({"sequence": MAX_SEQUENCE}, "sequence"),
        ({"sequence": 0}, "sequence"),
        ({"recorded_at_ms": 10**20}, "recorded_at_ms"),
    ],
)
def test_what_the_strict_api_refuses_is_refused_naming_the_field(
    fields: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidSignal) as raised:
        check_recorded(recorded(**fields))
    assert raised.value.field == field


def test_a_recorded_spawn_with_other_watchers_still_imports() -> None:
    # The strict API refuses such a spawn today (ADR-0023); history recorded before that keeps it,
    # and its watchers never seeded anything, so a replay of it is unchanged.
    check_recorded(
        recorded(
            kind=SignalKind.CHILD_SPAWNED,
            actor_type="agent",
            actor_id="agent:main:main",
            summary="child session spawned",
            watchers=("agent:main:other",),
        )
    )
