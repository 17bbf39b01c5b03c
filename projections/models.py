"""Public read models returned by the API (SPEC §7, §13): frozen pydantic models, JSON shapes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue, field_serializer

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
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.domain.wire import EpochMs, EpochMsOrNone, Hidden, Leading, OmitEmpty, OmitNone, WireModel
from sessionwatch.projections.audit import Violation

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
        return cls.model_construct(
            sequence=event.sequence,
            session_key=event.session_key,
            agent_id=event.agent_id,
            session_id=event.session_id,
            kind=event.kind,
            actor_type=event.actor_type,
            actor_id=event.actor_id,
            run_id=event.run_id,
            occurred_at=from_epoch_ms(event.occurred_at_ms),
            summary=event.summary,
            payload=event.payload.as_dict() if event.payload else None,
            dedupe_key=event.dedupe_key,
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
    """The delta after `changesSince` (SPEC §7.1)."""

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
    """A watcher's cursor on a target (SPEC §2): `last_seen <= notified <= material`."""

    watcher: str
    target: str
    target_agent_id: str
    last_seen: int
    notified: int
    material: int
    updated_at: EpochMs

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
        )


class Notice(WireModel):
    """The one line a stale watcher gets for a target; `text` is `notice_text(target, L)`.

    Its JSON (`target`, `targetAgentId`, `lastSeen`, `text`) goes to the watcher, so it leaves the
    watcher out.
    """

    watcher: Hidden[str]
    target: str
    target_agent_id: str
    last_seen: int
    text: str

    @classmethod
    def from_state(cls, state: CursorState) -> Notice:
        """The notice of a cursor with `N > L`."""
        return cls(
            watcher=state.watcher,
            target=state.target_key,
            target_agent_id=state.target_agent_id,
            last_seen=state.last_seen,
            text=notice_text(state.target_key, state.last_seen),
        )


class PruneReport(WireModel):
    """What a prune did (SPEC §8); `ran` is False when the hourly throttle skipped it."""

    ran: bool
    at: EpochMs
    occurred_before: EpochMsOrNone = None
    through_sequence: int = 0
    signals_removed: int = 0
    sessions_stamped: int = 0
    cursors_expired: int = 0
    events_deleted: int = 0
    archived: int = 0


class SweepReport(WireModel):
    """What a restart sweep did (SPEC §6.5): notices re-frozen and watchers woken."""

    refrozen: int  # cursors re-frozen and stamped now (N := M, updated_at := now) by a stored event
    republished: int  # open notices of existing watchers, each re-published (refrozen or not)
    woken: tuple[str, ...]
    skipped_missing_watchers: int
    prune: Leading[PruneReport | None] = None  # the forced prune that follows the sweep (SPEC §6.5)


class UpstreamLink(WireModel):
    """An adopted session's upstream link (SPEC §10)."""

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


class TickReport(WireModel):
    """What one upstream monitor pass did (SPEC §10); session keys name the links concerned.

    `recorded` are the `human_direct_message` signals and `missing` the `upstream_missing` ones this
    pass wrote; `advanced` counts marker advances (with or without a record). `deferred` links had a
    run active or started during the scan; `aborted` ones changed during the scan; `discarded` ones
    were answered after the monitor stopped, so nothing was published for them.
    """

    probed: int = 0
    recorded: tuple[Signal, ...] = ()
    advanced: int = 0
    missed: tuple[str, ...] = ()
    missing: tuple[Signal, ...] = ()
    deferred: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()
    aborted: tuple[str, ...] = ()
    discarded: tuple[str, ...] = ()
    failed_links: tuple[str, ...] = ()
    failed_catalogs: tuple[str, ...] = ()
    unknown_catalogs: tuple[str, ...] = ()

    @field_serializer("recorded", "missing", when_used="json")
    def _signal_refs(self, signals: tuple[Signal, ...]) -> list[dict[str, int | str]]:
        """The JSON names a tick's signals by sequence and session key only."""
        return [{"sequence": s.sequence, "sessionKey": s.session_key} for s in signals]


class AuditReport(WireModel):
    """What `audit()` found (SPEC §13, §14): `ok` when the history and the read models agree."""

    ok: bool
    violations: tuple[Violation, ...]
    events_replayed: int
    seconds: float

    def by_kind(self) -> dict[str, list[Violation]]:
        """The violations grouped by kind, kinds in alphabetical order."""
        groups: dict[str, list[Violation]] = {}
        for violation in sorted(self.violations, key=lambda v: (v.kind, v.detail)):
            groups.setdefault(violation.kind, []).append(violation)
        return groups


class RegistryEntry(SessionMeta):
    """A known session as the session tools read it (SPEC-tools §T10).

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


RunOutcome = Literal["ok", "error", "timeout", "cancelled"]


class RunRecord(BaseModel):
    """One run this process was told about (`run_started`, `run_ended`; SPEC-tools §T10)."""

    model_config = _FROZEN

    run_id: str
    session_key: str
    agent_id: str
    requester_key: str | None = None
    label: str | None = None
    mode: str | None = None
    started_at_ms: int
    ended_at_ms: int | None = None
    outcome: RunOutcome | None = None
