"""`check_recorded`: an imported signal must be one the strict API would have recorded (SPEC §3.3, §15.2)."""

from __future__ import annotations

import pytest

from sessionwatch import InvalidSignal
from sessionwatch.domain.recording import _check_recorded, check_recorded
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


UNIQUE_FIELDS_BAD: list[dict[str, object]] = [
    {"dedupe_key": "dedupe\x1b[2J"},
    {"run_id": "run\n2"},
    {"session_id": " "},
    {"run_id": "x" * 513},
]


@pytest.mark.parametrize("bad", UNIQUE_FIELDS_BAD)
def test_a_bad_field_of_its_own_is_refused_after_signals_like_it_passed(bad: dict[str, object]) -> None:
    # The checks of the fields signals share are remembered by their values; a signal's own ids are not.
    check_recorded(recorded(dedupe_key="d-1", run_id="r-1", session_id="s-1"))
    with pytest.raises(InvalidSignal) as raised:
        check_recorded(recorded(**bad))
    assert raised.value.field == next(iter(bad))


@pytest.mark.parametrize(
    "fields",
    [
        {"summary": "two\nlines", "run_id": "run\n2"},
        {"summary": "two\nlines", "dedupe_key": "d\x00"},
        {"session_key": " agent:main:worker", "run_id": "run\n2"},
        {"sequence": 0, "summary": "two\nlines"},
        {"recorded_at_ms": 10**20, "run_id": "run\n2"},
        {"actor_type": "agent", "actor_id": "  ", "session_id": "s\x07"},
    ],
)
def test_a_signal_with_two_bad_fields_is_refused_naming_the_first_the_full_check_names(
    fields: dict[str, object],
) -> None:
    check_recorded(recorded())  # its repeated fields remembered as passing
    with pytest.raises(InvalidSignal) as full:
        _check_recorded(recorded(**fields))
    with pytest.raises(InvalidSignal) as remembered:
        check_recorded(recorded(**fields))
    assert (remembered.value.field, str(remembered.value)) == (full.value.field, str(full.value))
