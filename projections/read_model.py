"""The read models as one pure fold: sessions (heads, watermarks, registry) and the signal log.

`evolve_read_model(model, event)` is the reference semantics every durable store must match;
the memory store runs it directly and `audit` replays the event store through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar, assert_never

from sessionwatch.domain import session
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionEvent,
    SessionReset,
    SessionState,
    SessionUpserted,
    SignalRecorded,
)

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class ReadModel:
    """Every read model of the core, keyed by session identity.

    `sessions` holds each known identity's state (head, watermark, registry fields);
    `signals` holds each identity's retained signals in ascending sequence order;
    `dedupe` maps every retained dedupe key to its signal's identity and sequence.
    """

    sessions: Mapping[SessionIdentity, SessionState] = field(default_factory=dict)
    signals: Mapping[SessionIdentity, tuple[SignalRecorded, ...]] = field(default_factory=dict)
    dedupe: Mapping[str, tuple[SessionIdentity, int]] = field(default_factory=dict)


def _with(mapping: Mapping[K, V], key: K, value: V) -> dict[K, V]:
    out = dict(mapping)
    out[key] = value
    return out


def _without(mapping: Mapping[K, V], keys: Iterable[K]) -> dict[K, V]:
    out = dict(mapping)
    for key in keys:
        out.pop(key, None)
    return out


def evolve_read_model(model: ReadModel, event: SessionEvent) -> ReadModel:
    """Apply one stored event to every view (the projection), never raising."""
    identity = SessionIdentity(event.session_key, event.agent_id)
    state = model.sessions.get(identity) or session.initial(identity)
    sessions = _with(model.sessions, identity, session.evolve(state, event))
    match event:
        case SessionUpserted() | SessionReset():
            return replace(model, sessions=sessions)
        case SignalRecorded():
            log = (*model.signals.get(identity, ()), event)
            dedupe: Mapping[str, tuple[SessionIdentity, int]] = model.dedupe
            if event.dedupe_key is not None:
                dedupe = _with(dedupe, event.dedupe_key, (identity, event.sequence))
            return ReadModel(sessions, _with(model.signals, identity, log), dedupe)
        case SessionDeleted():
            dropped = [s.dedupe_key for s in model.signals.get(identity, ()) if s.dedupe_key is not None]
            return ReadModel(
                _without(model.sessions, [identity]),
                _without(model.signals, [identity]),
                _without(model.dedupe, dropped),
            )
        case _:
            assert_never(event)


def fold(events: Iterable[SessionEvent], model: ReadModel | None = None) -> ReadModel:
    """Replay events from `model` (or empty) in order."""
    current = model or ReadModel()
    for event in events:
        current = evolve_read_model(current, event)
    return current
