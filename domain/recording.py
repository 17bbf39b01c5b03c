"""Validation of a signal to record: input in, a `SignalDraft` out, each field checked once.

A draft is everything `RecordSignal` needs except the sequence, which the shell allocates inside
the write transaction. Invalid input raises `InvalidSignal` naming the field; nothing is written.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Final

from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.keys import SessionIdentity, check_key, resolve_identity
from sessionwatch.domain.messages import checked_model
from sessionwatch.domain.session import SignalDraft, SignalRecorded
from sessionwatch.domain.signals import (
    MAX_SEQUENCE,
    ActorType,
    Payload,
    SignalKind,
    check_kind,
    check_optional_text,
    check_payload,
    check_summary,
    clamp_occurred_at,
    from_epoch_ms,
    to_epoch_ms,
)


def check_signal(
    *,
    session_key: object,
    agent_id: object,
    kind: object,
    actor_type: object,
    actor_id: object,
    summary: object,
    now: datetime,
    payload: object = None,
    run_id: object = None,
    session_id: object = None,
    occurred_at: object = None,
    dedupe_key: object = None,
    watchers: object = (),
) -> SignalDraft:
    """Validate every field of a signal, raising `InvalidSignal` for the first bad one.

    A `child_spawned` signal seeds its requester's cursor (its agent actor), nobody else's: a
    producer watcher other than that requester would be silently left out, so it is refused.
    """
    identity = resolve_identity(session_key, agent_id)
    now_ms = to_epoch_ms(now)
    checked_kind = check_kind(kind)
    checked_actor_type = _check_actor_type(actor_type)
    checked_actor_id = check_optional_text(actor_id, "actor_id")
    if checked_actor_type == "agent" and checked_actor_id is not None:
        checked_actor_id = check_key(checked_actor_id, "actor_id")  # trimmed, as watcher keys are
    # Every field is checked above, into the type the model declares: this is its one validation.
    draft = checked_model(
        SignalDraft,
        {
            "session_key": identity.session_key,
            "agent_id": identity.agent_id,
            "session_id": check_optional_text(session_id, "session_id"),
            "kind": checked_kind,
            "actor_type": checked_actor_type,
            "actor_id": checked_actor_id,
            "run_id": check_optional_text(run_id, "run_id"),
            "occurred_at_ms": now_ms if occurred_at is None else clamp_occurred_at(occurred_at, now),
            "recorded_at_ms": now_ms,
            "summary": check_summary(summary),
            "payload": check_payload(checked_kind, payload),
            "dedupe_key": check_optional_text(dedupe_key, "dedupe_key"),
            "watchers": check_watchers(watchers),
        },
    )
    if checked_kind is SignalKind.CHILD_SPAWNED and draft.watchers:
        _check_spawn_watchers(draft)
    return draft


def _check_spawn_watchers(draft: SignalDraft) -> None:
    requester = draft.actor_id if draft.actor_type == "agent" else None
    if any(watcher != requester for watcher in draft.watchers):
        raise InvalidSignal(
            "watchers",
            "a child_spawned signal seeds only its requester's cursor (the agent actor); "
            "pass no other watchers",
        )


def _check_actor_type(actor_type: object) -> ActorType:
    if actor_type == "human":
        return "human"
    if actor_type == "agent":
        return "agent"
    if actor_type == "system":
        return "system"
    raise InvalidSignal("actor", "actor_type must be human, agent or system")


def check_watchers(watchers: object) -> tuple[str, ...]:
    """Producer watchers: well-formed keys; bare ones are kept here and never notified."""
    if type(watchers) is tuple and not watchers:  # nearly every signal names none
        return ()
    if isinstance(watchers, str) or not isinstance(watchers, list | tuple | set | frozenset):
        raise InvalidSignal("watchers", "must be a sequence of session keys")
    checked = [check_key(w, "watchers") for w in watchers]
    return tuple(dict.fromkeys(sorted(checked) if isinstance(watchers, set | frozenset) else checked))


def check_recorded(signal: SignalRecorded) -> None:
    """A signal another store recorded (an import) is one the strict API would record, else `InvalidSignal`.

    An import checks a million signals whose fields mostly repeat (a few sessions, kinds, actors and
    summaries): the checks of those fields are remembered by their values (`_repeated_fields_pass`),
    the few fields unique to a signal are checked each time, and a signal that does not pass that
    way is checked again in full, which raises the refusal naming its first bad field.
    """
    if _passes(signal):
        return
    _check_recorded(signal)


def _passes(signal: SignalRecorded) -> bool:
    """True when `_check_recorded` would pass `signal`; False when it would not, or may not."""
    if not 0 < signal.sequence < MAX_SEQUENCE:
        return False
    try:
        from_epoch_ms(signal.recorded_at_ms)
        _repeated_fields_pass(
            signal.session_key,
            signal.agent_id,
            signal.kind,
            signal.actor_type,
            signal.actor_id,
            signal.summary,
            signal.payload,
            signal.watchers,
        )
        # Each checked alone in `check_signal` too, whatever the other fields hold.
        check_optional_text(signal.run_id, "run_id")
        check_optional_text(signal.session_id, "session_id")
        check_optional_text(signal.dedupe_key, "dedupe_key")
    except (InvalidSignal, OverflowError, ValueError):
        return False
    return True


@functools.lru_cache(maxsize=4096)  # a refusal raises again each time: exceptions are never cached
def _repeated_fields_pass(  # noqa: PLR0917 - the fields of a signal that repeat, as the cache's key
    session_key: str,
    agent_id: str,
    kind: SignalKind,
    actor_type: str,
    actor_id: str | None,
    summary: str,
    payload: Payload | None,
    watchers: tuple[str, ...],
) -> None:
    """`_check_recorded`'s checks of the fields that repeat, on any instant and no unique ids."""
    draft = check_signal(
        session_key=session_key,
        agent_id=agent_id,
        kind=kind,
        actor_type=actor_type,
        actor_id=actor_id,
        summary=summary,
        now=_ANY_INSTANT,
        payload=payload.as_dict() if payload is not None else None,
    )
    check_watchers(watchers)
    if draft.identity != SessionIdentity(session_key, agent_id):
        raise InvalidSignal("session_key", "is not in its canonical form (agent-qualified, trimmed)")


_ANY_INSTANT: Final = from_epoch_ms(0)
"""No check of the fields `_repeated_fields_pass` remembers depends on the instant: any one does."""


def _check_recorded(signal: SignalRecorded) -> None:
    """`check_recorded` in full: every check, in order; the first refusal raises.

    Key, agent id, kind, actor, ids, summary, payload and watchers pass the field checks of
    `check_signal` unchanged (a key that is not in its canonical form is refused, not rewritten),
    and the sequence leaves room for the next one. History recorded before `child_spawned` refused
    other watchers keeps them: they never seeded anything, then or now.
    """
    if not 0 < signal.sequence < MAX_SEQUENCE:
        raise InvalidSignal("sequence", f"must be between 1 and {MAX_SEQUENCE - 1}")
    try:
        recorded_at = from_epoch_ms(signal.recorded_at_ms)
    except (OverflowError, ValueError):
        raise InvalidSignal("recorded_at_ms", "is not a representable time") from None
    draft = check_signal(
        session_key=signal.session_key,
        agent_id=signal.agent_id,
        kind=signal.kind,
        actor_type=signal.actor_type,
        actor_id=signal.actor_id,
        summary=signal.summary,
        now=recorded_at,
        payload=signal.payload.as_dict() if signal.payload is not None else None,
        run_id=signal.run_id,
        session_id=signal.session_id,
        dedupe_key=signal.dedupe_key,
    )
    check_watchers(signal.watchers)  # apart: a spawn's stored watchers stay as they were recorded
    if draft.identity != signal.identity:
        raise InvalidSignal("session_key", "is not in its canonical form (agent-qualified, trimmed)")
