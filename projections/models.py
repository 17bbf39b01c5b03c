"""Public read models returned by the API: frozen pydantic models, JSON shapes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from sessionwatch.domain.messages import checked_model
from sessionwatch.domain.notice_links import NoticeLinks
from sessionwatch.domain.registry import EMPTY_META, SessionMeta
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import (
    PUBLIC_PAYLOAD_KEYS,
    ActorType,
    SignalKind,
    from_epoch_ms,
    notice_text,
)
from sessionwatch.domain.upstream import UpstreamLinkState
from sessionwatch.domain.watch_cursor import CursorState, Provenance
from sessionwatch.domain.wire import EpochMs, EpochMsOrNone, Hidden, OmitEmpty, OmitNone, WireModel

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Signal(WireModel):
    """A recorded signal as the API returns it; its JSON leaves out the empty optional fields."""

    sequence: int
    session_key: str
    agent_id: str
    session_id: OmitEmpty[str | None]
    kind: SignalKind
    actor_type: ActorType
    actor_id: OmitEmpty[str | None]
    run_id: OmitEmpty[str | None]
    occurred_at: EpochMs
    summary: str
    payload: OmitEmpty[dict[str, int | str] | None]
    dedupe_key: OmitEmpty[str | None]

    @classmethod
    def from_event(cls, event: SignalRecorded) -> Signal:
        """The API view of a stored `SignalRecorded`."""
        # The event's fields were checked when it was recorded (or read back from the store):
        # they already have the types this model declares, so nothing is validated again.
        return checked_model(
            cls,
            {
                "sequence": event.sequence,
                "session_key": event.session_key,
                "agent_id": event.agent_id,
                "session_id": event.session_id,
                "kind": event.kind,
                "actor_type": event.actor_type,
                "actor_id": event.actor_id,
                "run_id": event.run_id,
                "occurred_at": from_epoch_ms(event.occurred_at_ms),
                "summary": event.summary,
                "payload": event.payload.as_dict() if event.payload else None,
                "dedupe_key": event.dedupe_key,
            },
        )

    @classmethod
    def from_events(cls, events: Sequence[SignalRecorded]) -> list[Signal]:
        """`from_event` of each."""
        return [cls.from_event(event) for event in events]


class StateChange(WireModel):
    """One event of a `changesSince` delta; its JSON leaves out the empty optional fields."""

    sequence: int
    kind: SignalKind
    actor_type: ActorType
    occurred_at: EpochMs
    summary: str
    actor_id: OmitEmpty[str | None] = None
    run_id: OmitEmpty[str | None] = None
    payload: OmitEmpty[dict[str, int | str] | None] = None

    @classmethod
    def from_event(cls, event: SignalRecorded) -> StateChange:
        """Project a stored signal, keeping only the public payload keys."""
        public = None
        if event.payload is not None:
            shown = {k: v for k, v in event.payload.as_dict().items() if k in PUBLIC_PAYLOAD_KEYS}
            public = shown or None
        return cls(
            sequence=event.sequence,
            kind=event.kind,
            actor_type=event.actor_type,
            occurred_at=from_epoch_ms(event.occurred_at_ms),
            summary=event.summary,
            actor_id=event.actor_id,
            run_id=event.run_id,
            payload=public,
        )


class StateChanges(WireModel):
    """The delta after `changesSince`."""

    events: tuple[StateChange, ...]
    truncated: bool
    earliest_available_sequence: int
    history_gap: bool


class SessionStatus(WireModel):
    """The answer of `session_status`: `stateChanges` only when `changes_since` was given."""

    session_key: str
    state_version: int
    state_changes: OmitNone[StateChanges | None] = None


class SessionRow(WireModel):
    """One row of `sessions_list`: `state_version` is None (and left out of the JSON) while the head is 0."""

    session_key: str
    agent_id: str
    kind: str
    state_version: OmitNone[int | None] = None

    @classmethod
    def from_state(cls, state: SessionState) -> SessionRow:
        """The list row of a known session."""
        return cls(
            session_key=state.session_key,
            agent_id=state.agent_id,
            kind=state.kind,
            state_version=state.head or None,
        )


class SessionEntry(BaseModel):
    """The registry entry `upsert_session` returns."""

    model_config = _FROZEN

    session_key: str
    agent_id: str
    session_id: str | None
    kind: str
    spawned_by: str | None
    parent_session_key: str | None
    state_version: int

    @classmethod
    def from_state(cls, state: SessionState) -> SessionEntry:
        """The entry of a known session."""
        return cls(
            session_key=state.session_key,
            agent_id=state.agent_id,
            session_id=state.session_id,
            kind=state.kind,
            spawned_by=state.spawned_by,
            parent_session_key=state.parent_session_key,
            state_version=state.head,
        )


class Cursor(WireModel):
    """A watcher's cursor on a target: `last_seen <= notified <= material`."""

    watcher: str
    target: str
    target_agent_id: str
    last_seen: int
    notified: int
    material: int
    updated_at: EpochMs
    provenance: Provenance = "explicit"
    """`explicit` (asked for, a spawn edge, a producer's watcher) or `ambient` (queue-only notices)."""

    @classmethod
    def from_state(cls, state: CursorState) -> Cursor:
        """The API view of a stored cursor."""
        return cls(
            watcher=state.watcher,
            target=state.target_key,
            target_agent_id=state.target_agent_id,
            last_seen=state.last_seen,
            notified=state.notified,
            material=state.material,
            updated_at=from_epoch_ms(state.updated_at_ms),
            provenance=state.provenance,
        )

    @property
    def pending(self) -> bool:
        """A notice is pending for this target exactly while `notified > last_seen`."""
        return self.notified > self.last_seen


class Notice(WireModel):
    """The one line a stale watcher gets for a target; `text` is `notice_text(target, L)`.

    Its JSON (`target`, `targetAgentId`, `lastSeen`, `text`, `provenance`) goes to the watcher, so
    it leaves the watcher out. An `ambient` notice is queue-only: drained as any, never woken.
    A main session's creation digest is a notice too (ADR-0047): its `digest` is
    `session_creations` (on the wire only then), its target the main session itself, `last_seen`
    the sequence of the newest creation it lists, `text` the bounded list, and its provenance
    `ambient` (queue-only).
    """

    watcher: Hidden[str]
    target: str
    target_agent_id: str
    last_seen: int
    text: str
    provenance: Provenance = "explicit"
    digest: OmitNone[Literal["session_creations"] | None] = None

    @classmethod
    def from_state(cls, state: CursorState, links: NoticeLinks | None = None) -> Notice:
        """The notice of a cursor with `N > L`; with `links`, its text links the target when it can."""
        link = links.link(state.target_key) if links is not None else None
        return cls(
            watcher=state.watcher,
            target=state.target_key,
            target_agent_id=state.target_agent_id,
            last_seen=state.last_seen,
            text=notice_text(state.target_key, state.last_seen, link=link),
            provenance=state.provenance,
        )


class UpstreamLink(WireModel):
    """An adopted session's upstream link."""

    session_key: str
    agent_id: str
    catalog_id: str
    host_id: str
    thread_id: str
    upstream_kind: str
    upstream_ref: JsonValue
    marker: JsonValue
    link_version: int
    last_scanned_at: EpochMsOrNone
    created_at: EpochMs
    updated_at: EpochMs

    @classmethod
    def from_state(cls, state: UpstreamLinkState) -> UpstreamLink:
        """The public view of a link."""
        scanned = state.last_scanned_at_ms
        return cls(
            session_key=state.session_key,
            agent_id=state.agent_id,
            **state.source.model_dump(),
            marker=state.marker,
            link_version=state.link_version,
            last_scanned_at=from_epoch_ms(scanned) if scanned is not None else None,
            created_at=from_epoch_ms(state.created_at_ms),
            updated_at=from_epoch_ms(state.updated_at_ms),
        )


class RegistryEntry(SessionMeta):
    """A known session as the session tools read it.

    The stream's registry fields, its head (`state_version`) and every metadata field, flattened.
    """

    session_key: str
    agent_id: str
    state_version: int
    session_id: str | None = None
    kind: str
    spawned_by: str | None = None
    parent_session_key: str | None = None

    @classmethod
    def from_state(cls, state: SessionState) -> RegistryEntry:
        """The entry of a known session."""
        return cls(
            session_key=state.session_key,
            agent_id=state.agent_id,
            state_version=state.head,
            session_id=state.session_id,
            kind=state.kind,
            spawned_by=state.spawned_by,
            parent_session_key=state.parent_session_key,
            **dict(state.meta or EMPTY_META),
        )
