"""Domain events <-> eventsourcing `StoredEvent`s: orjson bodies under explicit stored names.

The topic of a stored event is the event's versioned `type` (`session.signal_recorded.v1`), never
a Python module path, so classes can move and be renamed freely (ADR-0004). The body omits `type`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, Final, TypeAlias, TypeVar
from uuid import UUID, uuid5

import orjson
from eventsourcing.persistence import ApplicationRecorder, StoredEvent

from sessionwatch.domain.digest import CreationNoted, DigestDrained, DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity, plainly_normal, stored_agent_id
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionMetaUpdated,
    SessionReset,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.upstream import (
    UpstreamLinked,
    UpstreamLinkState,
    UpstreamMarkerAdvanced,
    UpstreamUnlinked,
)
from sessionwatch.domain.watch_cursor import (
    CursorKey,
    CursorState,
    NoticeAcknowledged,
    NoticesSwept,
    WatchPromoted,
    WatchRegistered,
    WatchRemoved,
)

STREAM_NAMESPACE: Final = UUID("6f1c5a52-8a4e-4c53-9d0e-5e55f0a7c0de")
"""Fixed namespace of the stream ids; changing it would orphan every stored stream."""

EVENT_TYPES: Final[dict[str, type[DomainEvent]]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        SessionUpserted,
        SessionMetaUpdated,
        SignalRecorded,
        SessionReset,
        SessionDeleted,
        WatchRegistered,
        WatchPromoted,
        NoticeAcknowledged,
        WatchRemoved,
        NoticesSwept,
        SignalsPruned,
        UpstreamLinked,
        UpstreamMarkerAdvanced,
        UpstreamUnlinked,
        CreationNoted,
        DigestDrained,
    )
}
"""The stored-name registry: the only way a stored topic becomes a class."""

Body: TypeAlias = dict[str, Any]

UPCASTERS: Final[dict[str, tuple[str, Callable[[Body], Body]]]] = {
    # v1 checkpoints predate upstream links, so they held none (ADR-0010).
    "store.pruned.v1": ("store.pruned.v2", lambda body: {**body, "links": []}),
    # v2 checkpoints predate registry metadata, so no session had any (ADR-0012).
    "store.pruned.v2": (
        "store.pruned.v3",
        lambda body: {**body, "sessions": [{**s, "meta": None} for s in body["sessions"]]},
    ),
    # v3 checkpoints and v1 registrations predate provenance: every cursor was explicit (ADR-0049).
    "store.pruned.v3": (
        "store.pruned.v4",
        lambda body: {**body, "cursors": [{**c, "provenance": "explicit"} for c in body["cursors"]]},
    ),
    # v4 checkpoints predate the creation digest, so no main session had one (ADR-0047).
    "store.pruned.v4": ("store.pruned.v5", lambda body: {**body, "digests": []}),
    "cursor.watch_registered.v1": (
        "cursor.watch_registered.v2",
        lambda body: {**body, "provenance": "explicit"},
    ),
}
"""Older stored names: the name they are read as now and how their body becomes that shape."""

_WITH_SESSION: Final = (
    SessionUpserted,
    SessionMetaUpdated,
    SignalRecorded,
    SessionReset,
    SessionDeleted,
    UpstreamLinked,
    UpstreamMarkerAdvanced,
    UpstreamUnlinked,
    CreationNoted,
    DigestDrained,
)
"""The stored events that name a session by `session_key` and `agent_id`."""
_WITH_TARGET: Final = (WatchRegistered, WatchPromoted, NoticeAcknowledged, WatchRemoved)
"""The stored events that name their cursor's target by `target_key` and `target_agent_id`."""

_Owned = TypeVar(
    "_Owned",
    SessionUpserted,
    SessionMetaUpdated,
    SignalRecorded,
    SessionReset,
    SessionDeleted,
    UpstreamLinked,
    UpstreamMarkerAdvanced,
    UpstreamUnlinked,
    CreationNoted,
    DigestDrained,
    UpstreamLinkState,
    DigestState,
)
_Targeting = TypeVar(
    "_Targeting", WatchRegistered, WatchPromoted, NoticeAcknowledged, WatchRemoved, CursorState
)

CHECKPOINT_TOPICS: Final = (
    "store.pruned.v1",
    "store.pruned.v2",
    "store.pruned.v3",
    "store.pruned.v4",
    "store.pruned.v5",
)
"""The stored names of prune checkpoints, old and current (compaction keeps none but the newest)."""


class UnknownStoredEvent(LookupError):  # noqa: N818 - reads as the condition it reports
    """A stored event carries a name this version does not know (and no upcaster maps)."""


@functools.lru_cache(maxsize=65536)
def session_stream_id(identity: SessionIdentity) -> UUID:
    """The Session stream's id: a UUIDv5 of the identity, the same in every store."""
    return uuid5(STREAM_NAMESPACE, f"session\x1f{identity.agent_id}\x1f{identity.session_key}")


@functools.lru_cache(maxsize=65536)
def cursor_stream_id(key: CursorKey) -> UUID:
    """The WatchCursor stream's id: a UUIDv5 of the watcher and the target identity."""
    return uuid5(STREAM_NAMESPACE, f"cursor\x1f{key.watcher}\x1f{key.target_agent_id}\x1f{key.target_key}")


@functools.lru_cache(maxsize=4096)
def link_stream_id(identity: SessionIdentity) -> UUID:
    """The UpstreamLink stream's id: a UUIDv5 of the adopted session's identity."""
    return uuid5(STREAM_NAMESPACE, f"upstream\x1f{identity.agent_id}\x1f{identity.session_key}")


@functools.lru_cache(maxsize=4096)
def digest_stream_id(identity: SessionIdentity) -> UUID:
    """The Digest stream's id: a UUIDv5 of the main session's identity (ADR-0047)."""
    return uuid5(STREAM_NAMESPACE, f"digest\x1f{identity.agent_id}\x1f{identity.session_key}")


STORE_STREAM_ID: Final = uuid5(STREAM_NAMESPACE, "store")
"""The stream of the store's own facts (prunes)."""


def encode(event: DomainEvent) -> bytes:
    """The stored body: compact JSON of every field but `type`.

    Defaults are written too: stored data must not change meaning when a default does.
    """
    if type(event) is SignalRecorded:  # every record writes one: the same bytes, read off its fields
        return _encode_signal(event)
    return orjson.dumps(event.model_dump(mode="json", exclude={"type"}))


def _encode_signal(event: SignalRecorded) -> bytes:
    """`encode` of a `SignalRecorded` without pydantic's serializer (a property holds them equal).

    Its fields are plain values in declaration order, which is `model_dump`'s; orjson writes the
    kind (a `StrEnum`) as its value and the watchers tuple as a list. Only the payload is a model.
    """
    body = dict(event.__dict__)
    del body["type"]
    if event.payload is not None:
        body["payload"] = event.payload.model_dump(mode="json")
    return orjson.dumps(body)


def decode(topic: str, state: bytes) -> DomainEvent:
    """Rebuild the event from its stored name and body, upcasting an older name first."""
    cls = EVENT_TYPES.get(topic)
    if cls is not None:  # the current shape: validated straight from the JSON bytes
        event: DomainEvent = cls.__pydantic_validator__.validate_json(state)
        return with_current_agent_ids(event)
    return decode_body(topic, orjson.loads(state))


def decode_body(topic: str, body: Body) -> DomainEvent:
    """`decode` of a body already parsed from its JSON (an import's line holds it parsed)."""
    cls = EVENT_TYPES.get(topic)
    if cls is not None:
        event: DomainEvent = cls.__pydantic_validator__.validate_python(body)
        return with_current_agent_ids(event)
    if topic not in UPCASTERS:
        raise UnknownStoredEvent(f"unknown stored event type {topic!r}")
    while topic in UPCASTERS:
        topic, upcast = UPCASTERS[topic]
        body = upcast(body)
    cls = EVENT_TYPES.get(topic)
    if cls is None:
        raise UnknownStoredEvent(f"unknown stored event type {topic!r}")
    return with_current_agent_ids(cls.model_validate(body))


def with_current_agent_ids(event: DomainEvent) -> DomainEvent:
    """The event with the session identities it names read as they are named now (ADR-0055).

    An event stored before agent ids were normalized carries an agent-qualified key's agent id as
    it was written (`agent:Main:x` under `Main`); it reads under the normalized id (`main`), so
    the session it names is the one a call with that key reaches now. No newer write stores such a
    pair, so the rewrite is keyed by content, not by a stored name, and leaves every other event
    as it is (the same object).
    """
    read = _READ_AS_NOW.get(type(event))
    return event if read is None else read(event)


def _session_now(value: _Owned) -> _Owned:
    if plainly_normal(value.agent_id):  # every event this version writes
        return value
    agent = stored_agent_id(value.session_key, value.agent_id)
    return value if agent == value.agent_id else value.model_copy(update={"agent_id": agent})


def _target_now(event: _Targeting) -> _Targeting:
    if plainly_normal(event.target_agent_id):
        return event
    agent = stored_agent_id(event.target_key, event.target_agent_id)
    return event if agent == event.target_agent_id else event.model_copy(update={"target_agent_id": agent})


def _checkpoint_now(event: SignalsPruned) -> SignalsPruned:
    """A prune checkpoint with every session, cursor, link and digest under its current identity."""
    sessions = tuple(
        replace(s, agent_id=agent)
        if (agent := stored_agent_id(s.session_key, s.agent_id)) != s.agent_id
        else s
        for s in event.sessions
    )
    cursors = tuple(_target_now(cursor) for cursor in event.cursors)
    links = tuple(_session_now(link) for link in event.links)
    digests = tuple(_session_now(held) for held in event.digests)
    if (sessions, cursors, links, digests) == (event.sessions, event.cursors, event.links, event.digests):
        return event
    return event.model_copy(
        update={"sessions": sessions, "cursors": cursors, "links": links, "digests": digests}
    )


def replay(recorder: ApplicationRecorder, page_size: int = 1000) -> Iterator[DomainEvent]:
    """Every event a recorder holds, decoded, in notification order, read a page at a time."""
    start = 1
    while True:
        page = recorder.select_notifications(start, page_size)
        if not page:
            return
        for notification in page:
            yield decode(notification.topic, notification.state)
        start = page[-1].id + 1


def to_stored(stream_id: UUID, version: int, event: DomainEvent) -> StoredEvent:
    """Wrap a domain event with its stream position for the event store."""
    return StoredEvent(
        originator_id=stream_id, originator_version=version, topic=event.type, state=encode(event)
    )


_READ_AS_NOW: Final[dict[type, Callable[[Any], Any]]] = {
    **dict.fromkeys(_WITH_SESSION, _session_now),
    **dict.fromkeys(_WITH_TARGET, _target_now),
    SignalsPruned: _checkpoint_now,
}
"""How each stored event type that names a session identity is read as it is named now."""
