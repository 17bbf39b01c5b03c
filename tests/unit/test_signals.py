"""Pure signal rules (SPEC §3, §4, §6.2, §13.1): kinds, payloads, summaries, time, actors."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from sessionwatch import Actor, InvalidSignal, SignalKind, classify_actor, notice_text
from sessionwatch.domain.recording import check_signal
from sessionwatch.domain.signals import (
    NOTIFYING_KINDS,
    RUN_TERMINAL_SUMMARIES,
    Payload,
    check_kind,
    check_payload,
    check_summary,
    clamp_occurred_at,
    human_message_summary,
    to_epoch_ms,
)
from sessionwatch.testing import START

NOW = START
NOW_MS = to_epoch_ms(NOW)
DAY_MS = 24 * 3600 * 1000

# ---------------------------------------------------------------------------------------- kinds


def test_the_kinds_are_exactly_the_nine_stored_names() -> None:
    assert {kind.value for kind in SignalKind} == {
        "human_direct_message",
        "upstream_missing",
        "goal_changed",
        "child_spawned",
        "run_completed",
        "run_failed",
        "compacted",
        "adopted",
        "created",
    }


def test_only_human_messages_upstream_missing_and_goal_changes_notify_watchers() -> None:
    assert frozenset(NOTIFYING_KINDS) == {
        SignalKind.HUMAN_DIRECT_MESSAGE,
        SignalKind.UPSTREAM_MISSING,
        SignalKind.GOAL_CHANGED,
    }


def test_child_spawned_seeds_rather_than_notifies() -> None:
    assert SignalKind.CHILD_SPAWNED not in NOTIFYING_KINDS


def test_a_kind_is_resolved_from_its_stored_name() -> None:
    assert check_kind("run_failed") is SignalKind.RUN_FAILED
    assert check_kind(SignalKind.ADOPTED) is SignalKind.ADOPTED


@pytest.mark.parametrize("kind", ["", "human", "RUN_FAILED", "goal-changed", 3, None])
def test_an_unknown_kind_is_an_invalid_signal_naming_kind(kind: object) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_kind(kind)
    assert caught.value.field == "kind"


# ------------------------------------------------------------------------------------- payloads


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        (SignalKind.HUMAN_DIRECT_MESSAGE, {"turns": 3, "channel": "telegram"}),
        (SignalKind.GOAL_CHANGED, {"status": "active"}),
        (SignalKind.RUN_FAILED, {"outcome": "timeout"}),
        (SignalKind.UPSTREAM_MISSING, {"channel": "claude-code"}),
    ],
)
def test_each_kind_accepts_its_whitelisted_payload_keys(kind: SignalKind, payload: dict[str, object]) -> None:
    checked = check_payload(kind, payload)
    assert checked is not None
    assert checked.as_dict() == payload


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        (SignalKind.HUMAN_DIRECT_MESSAGE, {"text": "hello there"}),
        (SignalKind.HUMAN_DIRECT_MESSAGE, {"outcome": "error"}),
        (SignalKind.GOAL_CHANGED, {"channel": "telegram"}),
        (SignalKind.RUN_FAILED, {"turns": 2}),
        (SignalKind.UPSTREAM_MISSING, {"status": "gone"}),
        (SignalKind.RUN_COMPLETED, {"outcome": "error"}),
        (SignalKind.CHILD_SPAWNED, {"channel": "x"}),
        (SignalKind.COMPACTED, {"turns": 1}),
        (SignalKind.ADOPTED, {"status": "adopted"}),
    ],
)
def test_a_payload_key_outside_the_kinds_whitelist_is_an_invalid_signal(
    kind: SignalKind, payload: dict[str, object]
) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_payload(kind, payload)
    assert caught.value.field == "payload"


def test_no_payload_is_no_payload() -> None:
    assert check_payload(SignalKind.RUN_COMPLETED, None) is None


@pytest.mark.parametrize("payload", [[], ["outcome"], "outcome=error", 42, b"{}"])
def test_a_payload_that_is_not_a_json_object_is_an_invalid_signal(payload: object) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_payload(SignalKind.RUN_FAILED, payload)
    assert caught.value.field == "payload"


@pytest.mark.parametrize(
    "payload",
    [
        {"turns": 0},
        {"turns": -2},
        {"turns": True},
        {"turns": "2"},
        {"channel": ""},
        {"channel": 5},
        {"channel": "tele\ngram"},
    ],
)
def test_a_payload_value_of_the_wrong_shape_is_an_invalid_signal(payload: dict[str, object]) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_payload(SignalKind.HUMAN_DIRECT_MESSAGE, payload)
    assert caught.value.field == "payload"


def test_a_run_failed_outcome_must_be_error_timeout_or_cancelled() -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_payload(SignalKind.RUN_FAILED, {"outcome": "ok"})
    assert caught.value.field == "payload"


# `{"channel":"` + `"}` is 14 bytes of compact JSON around the value.
_ENVELOPE = len(b'{"channel":""}')


def test_a_payload_of_exactly_4_kib_as_compact_json_is_accepted() -> None:
    payload = {"channel": "c" * (4096 - _ENVELOPE)}
    checked = check_payload(SignalKind.HUMAN_DIRECT_MESSAGE, payload)
    assert checked is not None
    assert checked.as_dict() == payload


def test_a_payload_over_4_kib_as_compact_json_is_an_invalid_signal() -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_payload(SignalKind.HUMAN_DIRECT_MESSAGE, {"channel": "c" * (4097 - _ENVELOPE)})
    assert caught.value.field == "payload"


def test_the_payload_cap_counts_utf8_bytes_not_characters() -> None:
    fits = "é" * ((4096 - _ENVELOPE) // 2)  # two bytes each: exactly 4,096 bytes in all
    assert check_payload(SignalKind.HUMAN_DIRECT_MESSAGE, {"channel": fits}) is not None
    with pytest.raises(InvalidSignal) as caught:
        check_payload(SignalKind.HUMAN_DIRECT_MESSAGE, {"channel": fits + "é"})
    assert caught.value.field == "payload"


# ------------------------------------------------------------------------------------ summaries


@pytest.mark.parametrize("summary", ["goal updated", "x", "s" * 200, "human message via telegram"])
def test_a_short_single_line_summary_is_kept_as_given(summary: str) -> None:
    assert check_summary(summary) == summary


@pytest.mark.parametrize("summary", ["goal\nupdated", "goal updated\n", "goal\rupdated", "a\r\nb"])
def test_a_multi_line_summary_is_an_invalid_signal(summary: str) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_summary(summary)
    assert caught.value.field == "summary"


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029"], ids=["NEL", "LS", "PS"])
def test_a_summary_split_by_a_unicode_line_break_is_multi_line(separator: str) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_summary(f"goal{separator}updated")
    assert caught.value.field == "summary"


def test_a_summary_over_200_characters_is_an_invalid_signal() -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_summary("s" * 201)
    assert caught.value.field == "summary"


@pytest.mark.parametrize("summary", ["", "   ", "\t"])
def test_an_empty_summary_is_an_invalid_signal(summary: str) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_summary(summary)
    assert caught.value.field == "summary"


@pytest.mark.parametrize("summary", ["goal\x00updated", "goal\tupdated", "goal\x7fupdated"])
def test_a_summary_with_a_control_character_is_an_invalid_signal(summary: str) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_summary(summary)
    assert caught.value.field == "summary"


def test_a_summary_that_is_not_valid_utf8_text_is_an_invalid_signal() -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_summary("goal \ud800 updated")
    assert caught.value.field == "summary"


def test_a_summary_that_is_not_a_string_is_an_invalid_signal() -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_summary(None)
    assert caught.value.field == "summary"


# ---------------------------------------------------------------------------------- occurred_at


def test_a_missing_occurred_at_means_now() -> None:
    assert clamp_occurred_at(None, NOW) == NOW_MS


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_occurred_at_means_now(value: float) -> None:
    assert clamp_occurred_at(value, NOW) == NOW_MS


def test_an_occurred_at_inside_the_last_24_hours_is_kept() -> None:
    moment = NOW - timedelta(hours=3, milliseconds=250)
    assert clamp_occurred_at(moment, NOW) == to_epoch_ms(moment)


def test_an_occurred_at_older_than_24_hours_is_clamped_to_24_hours_ago() -> None:
    assert clamp_occurred_at(NOW - timedelta(days=3), NOW) == NOW_MS - DAY_MS


def test_an_occurred_at_exactly_24_hours_ago_is_kept() -> None:
    assert clamp_occurred_at(NOW - timedelta(hours=24), NOW) == NOW_MS - DAY_MS


def test_an_occurred_at_in_the_future_is_clamped_to_now() -> None:
    assert clamp_occurred_at(NOW + timedelta(minutes=5), NOW) == NOW_MS


def test_an_occurred_at_in_another_timezone_is_the_same_instant() -> None:
    moment = (NOW - timedelta(hours=1)).astimezone(timezone(timedelta(hours=9)))
    assert clamp_occurred_at(moment, NOW) == NOW_MS - 3600 * 1000


def test_epoch_milliseconds_are_accepted_as_occurred_at() -> None:
    assert clamp_occurred_at(NOW_MS - 60_000, NOW) == NOW_MS - 60_000
    assert clamp_occurred_at(float(NOW_MS - 60_000), NOW) == NOW_MS - 60_000


def test_epoch_milliseconds_are_clamped_like_datetimes() -> None:
    assert clamp_occurred_at(0, NOW) == NOW_MS - DAY_MS
    assert clamp_occurred_at(NOW_MS + DAY_MS, NOW) == NOW_MS


def test_a_naive_occurred_at_is_an_invalid_signal() -> None:
    with pytest.raises(InvalidSignal) as caught:
        clamp_occurred_at(datetime(2026, 11, 30, 11, 0), NOW)  # noqa: DTZ001 - the naive input is the case
    assert caught.value.field == "occurred_at"


@pytest.mark.parametrize("value", ["2026-11-30T11:00:00Z", True, [NOW_MS]])
def test_an_occurred_at_of_another_type_is_an_invalid_signal(value: object) -> None:
    with pytest.raises(InvalidSignal) as caught:
        clamp_occurred_at(value, NOW)
    assert caught.value.field == "occurred_at"


# ---------------------------------------------------------------------------------- notice text


def test_the_notice_text_is_byte_stable() -> None:
    text = notice_text("agent:main:subagent:child", 14)
    assert text.encode() == (
        b'Session "agent:main:subagent:child" changed (other actor). Reconcile before acting: '
        b'session_status sessionKey "agent:main:subagent:child" changesSince 14.'
    )


def test_a_notice_link_is_a_sentence_of_its_own_ended_by_a_period() -> None:
    text = notice_text("agent:main:dashboard:7ac7", 3, link="/chat/main/dashboard/7ac7")
    assert text.encode() == (
        b'Session "agent:main:dashboard:7ac7" changed (other actor).'
        b" Open: [session](/chat/main/dashboard/7ac7)."
        b' Reconcile before acting: session_status sessionKey "agent:main:dashboard:7ac7" changesSince 3.'
    )


def test_the_notice_text_depends_only_on_target_and_last_seen() -> None:
    assert notice_text("global", 0) == notice_text("global", 0)
    assert notice_text("global", 0) != notice_text("global", 1)
    assert notice_text("global", 0).endswith("changesSince 0.")


# --------------------------------------------------------------------------- actor classification


def test_an_inter_session_turn_is_an_agent_identified_by_its_source_session() -> None:
    actor = classify_actor(provenance_kind="inter_session", source_session_key="agent:main:boss")
    assert actor == Actor.agent("agent:main:boss")


def test_an_inter_session_turn_without_a_source_is_still_an_agent() -> None:
    assert classify_actor(provenance_kind="inter_session").actor_type == "agent"


def test_an_internal_system_turn_is_the_system() -> None:
    assert classify_actor(provenance_kind="internal_system") == Actor.system()


def test_a_turn_with_internal_events_is_the_system() -> None:
    assert classify_actor(internal_events=True) == Actor.system()


def test_a_turn_with_internal_session_effects_is_the_system() -> None:
    assert classify_actor(session_effects="internal") == Actor.system()


def test_a_turn_without_provenance_is_a_human() -> None:
    assert classify_actor() == Actor.human()


@pytest.mark.parametrize("provenance_kind", ["external_user", "channel", ""])
def test_a_turn_of_any_other_provenance_is_a_human(provenance_kind: str) -> None:
    actor = classify_actor(provenance_kind=provenance_kind, session_effects="none")
    assert actor == Actor.human()


# ---------------------------------------------------------------------------------------- actors


def test_actors_are_equal_by_value() -> None:
    assert Actor.agent("agent:main:x") == Actor(actor_type="agent", actor_id="agent:main:x")
    assert Actor.human() == Actor(actor_type="human", actor_id=None)
    assert Actor.system() == Actor(actor_type="system")
    assert Actor.human("user-1") != Actor.human()
    assert hash(Actor.agent("agent:main:x")) == hash(Actor(actor_type="agent", actor_id="agent:main:x"))


def test_an_actor_is_frozen() -> None:
    actor = Actor.human()
    with pytest.raises(ValueError, match="frozen"):
        actor.actor_type = "system"  # type: ignore[misc]


# ---------------------------------------------------------------------------- producer summaries


def test_a_human_message_summary_names_the_trimmed_channel() -> None:
    assert human_message_summary("  telegram \t") == "human message via telegram"


@pytest.mark.parametrize("channel", [None, "", "   "])
def test_a_human_message_summary_without_a_channel_says_unknown(channel: str | None) -> None:
    assert human_message_summary(channel) == "human message via unknown"


def test_run_terminal_summaries_are_the_fixed_phrases() -> None:
    assert RUN_TERMINAL_SUMMARIES == {
        "ok": "child run completed",
        "error": "child run failed",
        "timeout": "child run timed out",
        "cancelled": "child run cancelled",
    }


# -------------------------------------------------------------------------------------- recording


def _check(**overrides: object) -> object:
    fields: dict[str, object] = {
        "session_key": "agent:main:subagent:child",
        "agent_id": None,
        "kind": "goal_changed",
        "actor_type": "system",
        "actor_id": None,
        "summary": "goal updated",
        "now": NOW,
    }
    fields.update(overrides)
    return check_signal(**fields)  # type: ignore[arg-type]


def test_a_valid_signal_becomes_a_draft_for_its_identity() -> None:
    draft = check_signal(
        session_key="  agent:ops:main ",
        agent_id=None,
        kind="run_failed",
        actor_type="system",
        actor_id=None,
        summary="child run failed",
        payload={"outcome": "timeout"},
        run_id="run-7",
        dedupe_key="run-terminal:run-7",
        now=NOW,
    )
    assert (draft.session_key, draft.agent_id) == ("agent:ops:main", "ops")
    assert draft.kind is SignalKind.RUN_FAILED
    assert draft.payload == Payload(outcome="timeout")
    assert draft.occurred_at_ms == NOW_MS
    assert (draft.run_id, draft.dedupe_key) == ("run-7", "run-terminal:run-7")


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"session_key": "agent:main"}, "session_key"),
        ({"session_key": "global"}, "agent_id"),
        ({"agent_id": "ops"}, "agent_id"),
        ({"kind": "bogus"}, "kind"),
        ({"actor_type": "robot"}, "actor"),
        ({"actor_type": "agent", "actor_id": "agent:main"}, "actor_id"),
        ({"actor_id": ""}, "actor_id"),
        ({"summary": "two\nlines"}, "summary"),
        ({"payload": ["status"]}, "payload"),
        ({"payload": {"text": "secret"}}, "payload"),
        ({"run_id": "run\n1"}, "run_id"),
        ({"session_id": ""}, "session_id"),
        ({"dedupe_key": "x" * 513}, "dedupe_key"),
        ({"occurred_at": datetime(2026, 11, 30)}, "occurred_at"),  # noqa: DTZ001 - naive on purpose
    ],
)
def test_each_invalid_field_of_a_signal_is_named_in_the_error(
    overrides: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidSignal) as caught:
        _check(**overrides)
    assert caught.value.field == field


def test_a_recorded_draft_becomes_a_record_command_at_its_sequence() -> None:
    draft = check_signal(
        session_key="global",
        agent_id="ops",
        kind="adopted",
        actor_type="system",
        actor_id=None,
        summary="session adopted",
        now=NOW,
    )
    command = draft.at(42)
    assert command.sequence == 42
    assert (command.draft.session_key, command.draft.agent_id, command.draft.kind) == (
        "global",
        "ops",
        SignalKind.ADOPTED,
    )


# ------------------------------------------------------------ input the fuzzers found (issue 9)


@pytest.mark.parametrize("value", [10**400, -(10**400), 2**64])
def test_epoch_milliseconds_too_large_for_a_float_are_clamped_not_an_overflow(value: int) -> None:
    assert clamp_occurred_at(value, NOW) == (NOW_MS if value > 0 else NOW_MS - DAY_MS)


@pytest.mark.parametrize("turns", [2**63, 10**30])
def test_turns_beyond_a_64_bit_integer_are_an_invalid_payload(turns: int) -> None:
    with pytest.raises(InvalidSignal) as refused:
        check_payload(SignalKind.HUMAN_DIRECT_MESSAGE, {"turns": turns})
    assert refused.value.field == "payload"


def test_the_largest_64_bit_turns_is_a_valid_payload() -> None:
    checked = check_payload(SignalKind.HUMAN_DIRECT_MESSAGE, {"turns": 2**63 - 1})
    assert checked is not None
    assert checked.as_dict() == {"turns": 2**63 - 1}


@pytest.mark.parametrize("channel", [b"telegram", 5, ["telegram"], object()])
def test_a_channel_that_is_not_text_is_an_invalid_signal_not_a_summary(channel: object) -> None:
    with pytest.raises(InvalidSignal) as refused:
        human_message_summary(channel)
    assert refused.value.field == "channel"
