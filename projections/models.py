"""Public read models returned by the API (SPEC §7, §13): frozen pydantic models, JSON shapes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter

from sessionwatch.domain.registry import EMPTY_META, SessionMeta
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import (
    PUBLIC_PAYLOAD_KEYS,
    ActorType,
    SignalKind,
    from_epoch_ms,
    notice_text,
    to_epoch_ms,
)
from sessionwatch.domain.upstream import UpstreamLinkState
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.projections.audit import Violation

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Signal(BaseModel):
    """A recorded signal as the API returns it (SPEC §3.2)."""

    model_config = _FROZEN

    sequence: int
    session_key: str
    agent_id: str
    session_id: str | None
    kind: SignalKind
    actor_type: ActorType
    actor_id: str | None
    run_id: str | None
    occurred_at: datetime
    summary: str
    payload: dict[str, int | str] | None
    dedupe_key: str | None

    @classmethod
    def from_event(cls, event: SignalRecorded) -> Signal:
        """The API view of a stored `SignalRecorded`."""
        return cls.model_validate(_signal_fields(event))

    @classmethod
    def from_events(cls, events: Sequence[SignalRecorded]) -> list[Signal]:
        """`from_event` of each, validated together (cheaper per signal for a batch)."""
        return _SIGNALS.validate_python([_signal_fields(event) for event in events])

    def to_json(self) -> dict[str, Any]:
        """camelCase, `occurredAt` in epoch ms, optional fields omitted when empty (as §7.1)."""
        out: dict[str, Any] = {
            "sequence": self.sequence,
            "sessionKey": self.session_key,
            "agentId": self.agent_id,
            "kind": self.kind.value,
            "actorType": self.actor_type,
            "occurredAt": to_epoch_ms(self.occurred_at),
            "summary": self.summary,
        }
        optional = {
            "sessionId": self.session_id,
            "actorId": self.actor_id,
            "runId": self.run_id,
            "payload": dict(self.payload) if self.payload else None,
            "dedupeKey": self.dedupe_key,
        }
        out.update({k: v for k, v in optional.items() if v})
        return out


class StateChange(BaseModel):
    """One event of a `changesSince` delta (SPEC §7.1)."""

    model_config = _FROZEN

    sequence: int
    kind: SignalKind
    actor_type: ActorType
    occurred_at: datetime
    summary: str
    actor_id: str | None = None
    run_id: str | None = None
    payload: dict[str, int | str] | None = None

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

    def to_json(self) -> dict[str, Any]:
        """camelCase, `occurredAt` in epoch ms, optional fields omitted when empty."""
        out: dict[str, Any] = {
            "sequence": self.sequence,
            "kind": self.kind.value,
            "actorType": self.actor_type,
            "occurredAt": to_epoch_ms(self.occurred_at),
            "summary": self.summary,
        }
        if self.actor_id:
            out["actorId"] = self.actor_id
        if self.run_id:
            out["runId"] = self.run_id
        if self.payload:
            out["payload"] = dict(self.payload)
        return out


class StateChanges(BaseModel):
    """The delta after `changesSince` (SPEC §7.1)."""

    model_config = _FROZEN

    events: tuple[StateChange, ...]
    truncated: bool
    earliest_available_sequence: int
    history_gap: bool

    def to_json(self) -> dict[str, Any]:
        """The §7.1 `stateChanges` object."""
        return {
            "events": [e.to_json() for e in self.events],
            "truncated": self.truncated,
            "earliestAvailableSequence": self.earliest_available_sequence,
            "historyGap": self.history_gap,
        }


class SessionStatus(BaseModel):
    """The answer of `session_status` (SPEC §7.1)."""

    model_config = _FROZEN

    session_key: str
    state_version: int
    state_changes: StateChanges | None = None

    def to_json(self) -> dict[str, Any]:
        """The §7.1 JSON object: `stateChanges` only when `changes_since` was given."""
        out: dict[str, Any] = {"sessionKey": self.session_key, "stateVersion": self.state_version}
        if self.state_changes is not None:
            out["stateChanges"] = self.state_changes.to_json()
        return out


class SessionRow(BaseModel):
    """One row of `sessions_list` (SPEC §7.2): `state_version` is None while the head is 0."""

    model_config = _FROZEN

    session_key: str
    agent_id: str
    kind: str
    state_version: int | None = None

    @classmethod
    def from_state(cls, state: SessionState) -> SessionRow:
        """The list row of a known session."""
        return cls(
            session_key=state.session_key,
            agent_id=state.agent_id,
            kind=state.kind,
            state_version=state.head or None,
        )

    def to_json(self) -> dict[str, Any]:
        """camelCase; `stateVersion` omitted when the head is 0."""
        out: dict[str, Any] = {
            "sessionKey": self.session_key,
            "agentId": self.agent_id,
            "kind": self.kind,
        }
        if self.state_version is not None:
            out["stateVersion"] = self.state_version
        return out


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


_SIGNALS: TypeAdapter[list[Signal]] = TypeAdapter(list[Signal])


def _signal_fields(event: SignalRecorded) -> dict[str, object]:
    return {
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
    }


class Cursor(BaseModel):
    """A watcher's cursor on a target (SPEC §2): `last_seen <= notified <= material`."""

    model_config = _FROZEN

    watcher: str
    target: str
    target_agent_id: str
    last_seen: int
    notified: int
    material: int
    updated_at: datetime

    def to_json(self) -> dict[str, Any]:
        """camelCase, `updatedAt` in epoch ms (the wire format of §7.1)."""
        return {
            "watcher": self.watcher,
            "target": self.target,
            "targetAgentId": self.target_agent_id,
            "lastSeen": self.last_seen,
            "notified": self.notified,
            "material": self.material,
            "updatedAt": to_epoch_ms(self.updated_at),
        }

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


class Notice(BaseModel):
    """The one line a stale watcher gets for a target (SPEC §6.2); `text` is `notice_text(target, L)`."""

    model_config = _FROZEN

    watcher: str
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

    def to_json(self) -> dict[str, Any]:
        """`target`, `targetAgentId`, `lastSeen`, `text` (SPEC §13.1)."""
        return {
            "target": self.target,
            "targetAgentId": self.target_agent_id,
            "lastSeen": self.last_seen,
            "text": self.text,
        }


class PruneReport(BaseModel):
    """What a prune did (SPEC §8); `ran` is False when the hourly throttle skipped it."""

    model_config = _FROZEN

    ran: bool
    at: datetime
    occurred_before: datetime | None = None
    through_sequence: int = 0
    signals_removed: int = 0
    sessions_stamped: int = 0
    cursors_expired: int = 0
    events_deleted: int = 0
    archived: int = 0

    def to_json(self) -> dict[str, Any]:
        """CamelCase summary, times in epoch ms."""
        return {
            "ran": self.ran,
            "at": to_epoch_ms(self.at),
            "occurredBefore": to_epoch_ms(self.occurred_before) if self.occurred_before else None,
            "throughSequence": self.through_sequence,
            "signalsRemoved": self.signals_removed,
            "sessionsStamped": self.sessions_stamped,
            "cursorsExpired": self.cursors_expired,
            "eventsDeleted": self.events_deleted,
            "archived": self.archived,
        }


class SweepReport(BaseModel):
    """What a restart sweep did (SPEC §6.5): notices re-frozen and watchers woken."""

    model_config = _FROZEN

    refrozen: int  # cursors re-frozen and stamped now (N := M, updated_at := now) by a stored event
    republished: int  # open notices of existing watchers, each re-published (refrozen or not)
    woken: tuple[str, ...]
    skipped_missing_watchers: int
    prune: PruneReport | None = None  # the forced prune that follows the sweep (SPEC §6.5)

    def to_json(self) -> dict[str, Any]:
        """CamelCase summary."""
        return {
            "prune": self.prune.to_json() if self.prune is not None else None,
            "refrozen": self.refrozen,
            "republished": self.republished,
            "woken": list(self.woken),
            "skippedMissingWatchers": self.skipped_missing_watchers,
        }


class UpstreamLink(BaseModel):
    """An adopted session's upstream link (SPEC §10)."""

    model_config = _FROZEN

    session_key: str
    agent_id: str
    catalog_id: str
    host_id: str
    thread_id: str
    upstream_kind: str
    upstream_ref: JsonValue
    marker: JsonValue
    link_version: int
    last_scanned_at: datetime | None
    created_at: datetime
    updated_at: datetime

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

    def to_json(self) -> dict[str, Any]:
        """CamelCase, times in epoch ms."""
        return {
            "sessionKey": self.session_key,
            "agentId": self.agent_id,
            "catalogId": self.catalog_id,
            "hostId": self.host_id,
            "threadId": self.thread_id,
            "upstreamKind": self.upstream_kind,
            "upstreamRef": self.upstream_ref,
            "marker": self.marker,
            "linkVersion": self.link_version,
            "lastScannedAt": to_epoch_ms(self.last_scanned_at) if self.last_scanned_at else None,
            "createdAt": to_epoch_ms(self.created_at),
            "updatedAt": to_epoch_ms(self.updated_at),
        }


class TickReport(BaseModel):
    """What one upstream monitor pass did (SPEC §10); session keys name the links concerned.

    `recorded` are the `human_direct_message` signals and `missing` the `upstream_missing` ones this
    pass wrote; `advanced` counts marker advances (with or without a record). `deferred` links had a
    run active or started during the scan; `aborted` ones changed during the scan; `discarded` ones
    were answered after the monitor stopped, so nothing was published for them.
    """

    model_config = _FROZEN

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

    def to_json(self) -> dict[str, Any]:
        """CamelCase summary; signals by sequence and session key."""
        return {
            "probed": self.probed,
            "recorded": [{"sequence": s.sequence, "sessionKey": s.session_key} for s in self.recorded],
            "advanced": self.advanced,
            "missed": list(self.missed),
            "missing": [{"sequence": s.sequence, "sessionKey": s.session_key} for s in self.missing],
            "deferred": list(self.deferred),
            "ambiguous": list(self.ambiguous),
            "aborted": list(self.aborted),
            "discarded": list(self.discarded),
            "failedLinks": list(self.failed_links),
            "failedCatalogs": list(self.failed_catalogs),
            "unknownCatalogs": list(self.unknown_catalogs),
        }


class AuditReport(BaseModel):
    """What `audit()` found (SPEC §13, §14): `ok` when the history and the read models agree."""

    model_config = _FROZEN

    ok: bool
    violations: tuple[Violation, ...]
    events_replayed: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """`{"ok", "violations": [{"kind", "detail", "sessionKeys"}], "eventsReplayed", "seconds"}`."""
        return {
            "ok": self.ok,
            "violations": [
                {"kind": v.kind, "detail": v.detail, "sessionKeys": list(v.session_keys)}
                for v in self.violations
            ],
            "eventsReplayed": self.events_replayed,
            "seconds": self.seconds,
        }

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
