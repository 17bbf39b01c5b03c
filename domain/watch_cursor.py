"""Watch cursor for one (watcher, target identity) pair. Invariant: last_seen <= notified <= material.

`L` (last seen, acknowledged), `N` (notified, the frozen notice watermark), `M` (material, the latest
notify-worthy sequence). A notice is pending exactly while `N > L`, and its text depends only on
the target key and `L`, so it stays byte-identical however many changes follow.

A cursor has a provenance: `explicit` (a spawn edge, a producer's watcher, `watch()`) or `ambient`
(a main session over its agent's group sessions). An ambient cursor's notices are queue-only: pending
and drained as any, never woken; an explicit registration promotes it, keeping its positions.

Stored per cursor are the watcher's own acts: registration, promotion, acknowledgement and `unwatch`. Seeding,
material updates, the clean-up on reset and delete, and the sweep's re-freeze are *implied* by a
stored Session event or a stored `NoticesSwept`: `react`/`resume` derive them from that event and
the cursors as they were, so replaying the event store re-derives them exactly (ADR-0007).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Final, Literal, NamedTuple, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.keys import SessionIdentity, agent_id_of, is_agent_qualified, normalize_agent_id
from sessionwatch.domain.messages import Command, Event
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionEvent,
    SessionMetaUpdated,
    SessionReset,
    SessionState,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.signals import NOTIFYING_KINDS, SignalKind

Provenance: TypeAlias = Literal["explicit", "ambient"]
"""Why a cursor exists: the watcher asked (or a spawn edge or producer named it), or it is ambient."""

EXPLICIT: Final = "explicit"
AMBIENT: Final = "ambient"


class CursorKey(NamedTuple):
    """A cursor is keyed by the watcher's key and the target's identity (agent-scoped)."""

    watcher: str
    target_key: str
    target_agent_id: str

    @property
    def target(self) -> SessionIdentity:
        """The watched identity."""
        return SessionIdentity(self.target_key, self.target_agent_id)


# ---------------------------------------------------------------------------------- stored events


class _CursorEvent(Event):
    watcher: str
    target_key: str
    target_agent_id: str
    at_ms: int  # the local clock: cursors expire by it

    @property
    def key(self) -> CursorKey:
        """The cursor this event belongs to."""
        return CursorKey(self.watcher, self.target_key, self.target_agent_id)


class WatchRegistered(_CursorEvent):
    """A watch began at the target's head: the cursor is `(head, head, head)` of that provenance.

    Version 1 (before provenance) held explicit watches only; it is read as `provenance="explicit"`.
    """

    type: Literal["cursor.watch_registered.v2"] = "cursor.watch_registered.v2"
    head: int
    provenance: Provenance


class WatchPromoted(_CursorEvent):
    """An explicit registration of an ambient cursor: it becomes explicit, its positions and age kept.

    `at_ms` says when; the cursor's `updated_at_ms` stays its last update, so it expires as before.
    """

    type: Literal["cursor.watch_promoted.v1"] = "cursor.watch_promoted.v1"


class NoticeAcknowledged(_CursorEvent):
    """The watcher drained its notice: `L := N`, then `N := M` when more arrived."""

    type: Literal["cursor.notice_acknowledged.v1"] = "cursor.notice_acknowledged.v1"
    last_seen: int
    notified: int


class WatchRemoved(_CursorEvent):
    """The watcher stopped watching the target (`unwatch`)."""

    type: Literal["cursor.watch_removed.v1"] = "cursor.watch_removed.v1"


CursorEvent: TypeAlias = WatchRegistered | WatchPromoted | NoticeAcknowledged | WatchRemoved


class NoticesSwept(Event):
    """The restart sweep ran at `at_ms`.

    Every open notice of an existing watcher was re-frozen at `M` and stamped; which cursors that
    touched is implied by the cursors and sessions as they were, as for signals (ADR-0007).
    """

    type: Literal["cursor.notices_swept.v1"] = "cursor.notices_swept.v1"
    at_ms: int


# --------------------------------------------------------------------------------- implied facts


class CursorSeeded(_CursorEvent):
    """Implied by `child_spawned`: the requester's cursor on the child is `(s, s, s)`."""

    type: Literal["cursor.seeded"] = "cursor.seeded"
    sequence: int


class MaterialSignalSeen(_CursorEvent):
    """Implied by a notifying signal: `N := e` if no notice was outstanding, `M := e`.

    `provenance` is the cursor's (a new one, a producer's watcher, is explicit): an ambient
    notice is queue-only, so it owes no wake.
    """

    type: Literal["cursor.material_seen"] = "cursor.material_seen"
    sequence: int
    notified: int
    last_seen: int
    provenance: Provenance = EXPLICIT


class CursorDropped(_CursorEvent):
    """Implied by a reset of the watcher or a deletion of either session."""

    type: Literal["cursor.dropped"] = "cursor.dropped"


class NoticeRefrozen(_CursorEvent):
    """Implied by a sweep: an open notice re-frozen at the material position, `N := M`."""

    type: Literal["cursor.refrozen"] = "cursor.refrozen"
    notified: int


ImpliedFact: TypeAlias = CursorSeeded | MaterialSignalSeen | CursorDropped | NoticeRefrozen

CursorFact: TypeAlias = CursorEvent | ImpliedFact
"""Everything `evolve` applies: stored events and implied facts."""

# -------------------------------------------------------------------------------------- commands


class _CursorCommand(Command):
    watcher: str
    target_key: str
    target_agent_id: str
    at_ms: int

    def ids(self) -> dict[str, str | int]:
        """The fields every cursor fact repeats from its command."""
        return {
            "watcher": self.watcher,
            "target_key": self.target_key,
            "target_agent_id": self.target_agent_id,
            "at_ms": self.at_ms,
        }


class RegisterWatch(_CursorCommand):
    """Start watching at the target's current head.

    An existing cursor keeps its positions and its age: an explicit registration promotes an ambient
    one, an ambient registration never downgrades an explicit one.
    """

    head: int
    provenance: Provenance = EXPLICIT


class AcknowledgeNotice(_CursorCommand):
    """Acknowledge the pending notice (drain or two-phase acknowledge)."""


class RefreezeNotice(_CursorCommand):
    """Restart sweep: re-freeze an open notice at `M`."""


class RemoveWatch(_CursorCommand):
    """Stop watching (`unwatch`)."""


class SeedCursor(_CursorCommand):
    """Spawn edge: overwrite the cursor with `(s, s, s)`."""

    sequence: int


class ObserveMaterialSignal(_CursorCommand):
    """A notifying signal by another actor reached this watcher."""

    sequence: int


class DropCursor(_CursorCommand):
    """Reset or deletion clean-up."""


CursorCommand: TypeAlias = RegisterWatch | AcknowledgeNotice | RemoveWatch
"""The watcher's own acts: decided into stored events."""

ImpliedCommand: TypeAlias = SeedCursor | ObserveMaterialSignal | DropCursor | RefreezeNotice
"""What a stored Session event or sweep implies for a cursor: derived into facts that are not
stored (ADR-0007)."""

# ----------------------------------------------------------------------------------------- state


class CursorState(BaseModel):
    """One cursor's positions and its last update on the local clock."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    watcher: str
    target_key: str
    target_agent_id: str
    last_seen: int
    notified: int
    material: int
    updated_at_ms: int
    provenance: Provenance = EXPLICIT

    @property
    def key(self) -> CursorKey:
        """The pair this cursor belongs to."""
        return CursorKey(self.watcher, self.target_key, self.target_agent_id)

    @property
    def pending(self) -> bool:
        """A notice is pending exactly while `N > L`."""
        return self.notified > self.last_seen

    @property
    def ambient(self) -> bool:
        """An ambient cursor's notices are queue-only: never woken."""
        return self.provenance == AMBIENT


def _positions(
    key: CursorKey,
    last_seen: int,
    notified: int,
    material: int,
    at_ms: int,
    *,
    provenance: Provenance = EXPLICIT,
) -> CursorState:
    return CursorState(
        watcher=key.watcher,
        target_key=key.target_key,
        target_agent_id=key.target_agent_id,
        last_seen=last_seen,
        notified=notified,
        material=material,
        updated_at_ms=at_ms,
        provenance=provenance,
    )


def _provenance(state: CursorState | None) -> Provenance:
    return state.provenance if state is not None else EXPLICIT


def evolve(state: CursorState | None, fact: CursorFact) -> CursorState | None:
    """Apply one stored or implied fact; `None` is "no cursor". Never validates, never raises."""
    key = fact.key
    match fact:
        case WatchRegistered():
            return _positions(key, fact.head, fact.head, fact.head, fact.at_ms, provenance=fact.provenance)
        case WatchPromoted():  # its positions and its age kept: a promotion is no update of the cursor
            if state is None:
                return None
            return state.model_copy(update={"provenance": EXPLICIT})
        case CursorSeeded():  # a spawn edge is explicit
            return _positions(key, fact.sequence, fact.sequence, fact.sequence, fact.at_ms)
        case MaterialSignalSeen():
            return _positions(
                key, fact.last_seen, fact.notified, fact.sequence, fact.at_ms, provenance=fact.provenance
            )
        case NoticeAcknowledged():
            material = state.material if state is not None else fact.notified
            return _positions(
                key, fact.last_seen, fact.notified, material, fact.at_ms, provenance=_provenance(state)
            )
        case NoticeRefrozen():
            last_seen = state.last_seen if state is not None else 0
            return _positions(
                key, last_seen, fact.notified, fact.notified, fact.at_ms, provenance=_provenance(state)
            )
        case WatchRemoved() | CursorDropped():
            return None
        case _:
            assert_never(fact)


def decide(command: CursorCommand, state: CursorState | None) -> list[CursorEvent]:
    """The watcher's acts; `[]` means nothing to do, so a retried command is free."""
    match command:
        case RegisterWatch():
            if state is None:
                return [WatchRegistered(**command.ids(), head=command.head, provenance=command.provenance)]
            if state.ambient and command.provenance == EXPLICIT:  # promoted, its notice kept
                return [WatchPromoted(**command.ids())]
            return []  # re-watching must not clobber a pending notice, nor downgrade an explicit one
        case AcknowledgeNotice():
            if state is None or not state.pending:
                return []
            # L := N, never to the head: that would lose an interleaved signal.
            follow_up = max(state.notified, state.material)
            return [NoticeAcknowledged(**command.ids(), last_seen=state.notified, notified=follow_up)]
        case RemoveWatch():
            return [WatchRemoved(**command.ids())] if state is not None else []
        case _:
            assert_never(command)


def derive(command: ImpliedCommand, state: CursorState | None) -> list[ImpliedFact]:
    """The notice rules a Session event triggers; `[]` for nothing to do."""
    match command:
        case SeedCursor():  # overwrites, even a pending notice
            return [CursorSeeded(**command.ids(), sequence=command.sequence)]
        case ObserveMaterialSignal():
            if state is not None and command.sequence <= state.material:  # redelivery: already applied
                return []
            last_seen = state.last_seen if state is not None else 0
            notified = state.notified if state is not None else 0
            frozen = command.sequence if notified == last_seen else notified
            return [
                MaterialSignalSeen(
                    **command.ids(),
                    sequence=command.sequence,
                    notified=frozen,
                    last_seen=last_seen,
                    provenance=_provenance(state),
                )
            ]
        case DropCursor():
            return [CursorDropped(**command.ids())] if state is not None else []
        case RefreezeNotice():
            if state is None or state.material <= state.last_seen:  # acknowledged: never reopened
                return []
            if state.notified == state.material and state.updated_at_ms == command.at_ms:
                return []  # already frozen at M and stamped now: only the wake is owed
            return [NoticeRefrozen(**command.ids(), notified=state.material)]
        case _:
            assert_never(command)


# ------------------------------------------------------------------------------ react and resume


def can_watch(watcher: str) -> bool:
    """Only agent-qualified keys can hold cursors; a bare `global` never can."""
    return is_agent_qualified(watcher)


def why_never_notified(watcher: str) -> str | None:
    """Why `watcher` can hold no cursor, in the words every refusal uses; None when it can."""
    if can_watch(watcher):
        return None
    never = "such sessions are never notified"
    return f"{watcher.strip()} is not an agent-qualified key (agent:<id>:<rest>); {never}"


def notified_watchers(
    signal: SignalRecorded,
    producer_watchers: Collection[str],
    holders: Collection[str],
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
    *,
    ambient: Collection[str] = (),
) -> list[str]:
    """Who a notifying signal reaches (`notifying`: the kinds that notify, see `notifying_kinds`).

    Producer watchers and registered holders, deduplicated, non-agent-qualified keys dropped, and
    never the signal's own actor (self-suppression) nor the target itself (no self-watch). The
    `ambient` holders hear only the kinds that always notify: a run's end, where it notifies,
    reaches an ambient cursor only when the producer named its watcher.
    """
    if signal.kind not in notifying or not (producer_watchers or holders):
        return []
    if ambient and signal.kind not in NOTIFYING_KINDS:
        holders = [holder for holder in holders if holder not in ambient]
    seen: dict[str, None] = {}
    for watcher in (*producer_watchers, *holders):
        if watcher != signal.actor_id and can_watch(watcher) and watcher_identity(watcher) != signal.identity:
            seen.setdefault(watcher, None)
    return list(seen)


def react(
    event: SessionEvent,
    cursors_on_target: Mapping[str, CursorState],
    *,
    held_by_session: Sequence[CursorKey] = (),
    at_ms: int,
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
) -> list[ImpliedCommand]:
    """Which cursor commands a stored Session event implies (the notice protocol).

    `cursors_on_target` are the cursors on the event's session by watcher key; `held_by_session`
    are the cursors the event's session holds as watcher (for reset and delete clean-up);
    `notifying` the kinds that notify (the store's setting, see `notifying_kinds`).
    """
    match event:
        case SignalRecorded():
            return _react_to_signal(event, cursors_on_target, at_ms, notifying)
        case SessionReset():
            return [_drop(key, at_ms) for key in held_by_session]
        case SessionDeleted():
            keys = {*held_by_session, *(state.key for state in cursors_on_target.values())}
            return [_drop(key, at_ms) for key in sorted(keys)]
        case SessionUpserted() | SessionMetaUpdated():  # registry changes imply nothing for a cursor
            return []
        case _:
            assert_never(event)


def _drop(key: CursorKey, at_ms: int) -> DropCursor:
    return DropCursor(
        watcher=key.watcher, target_key=key.target_key, target_agent_id=key.target_agent_id, at_ms=at_ms
    )


_SPAWNED = SignalKind.CHILD_SPAWNED


def signal_may_react(signal: SignalRecorded, cursors_on_target: Mapping[str, CursorState] | None) -> bool:
    """Whether `react` can imply anything for a signal: a spawn seeds, a cursor or a watcher is notified.

    False is the common case of an unwatched session, which a replay can skip outright.
    """
    return signal.kind is _SPAWNED or bool(cursors_on_target) or bool(signal.watchers)


def _react_to_signal(
    signal: SignalRecorded,
    cursors_on_target: Mapping[str, CursorState],
    at_ms: int,
    notifying: frozenset[SignalKind],
) -> list[ImpliedCommand]:
    if not signal_may_react(signal, cursors_on_target):
        return []
    kind = signal.kind
    key, agent, sequence = signal.session_key, signal.agent_id, signal.sequence
    if kind is _SPAWNED:
        requester = signal.actor_id
        if signal.actor_type != "agent" or requester is None or not can_watch(requester):
            return []
        if watcher_identity(requester) == signal.identity:  # a session never watches itself
            return []
        return [
            SeedCursor(
                watcher=requester, target_key=key, target_agent_id=agent, at_ms=at_ms, sequence=sequence
            )
        ]
    ambient = ambient_holders(cursors_on_target) if kind not in NOTIFYING_KINDS else ()
    return [
        ObserveMaterialSignal(
            watcher=w, target_key=key, target_agent_id=agent, at_ms=at_ms, sequence=sequence
        )
        for w in notified_watchers(signal, signal.watchers, cursors_on_target, notifying, ambient=ambient)
    ]


def ambient_holders(cursors_on_target: Mapping[str, CursorState]) -> frozenset[str]:
    """The watchers whose cursor on the target is ambient."""
    return frozenset(watcher for watcher, state in cursors_on_target.items() if state.ambient)


def resume(state: CursorState, *, watcher_exists: bool, at_ms: int) -> list[RefreezeNotice]:
    """After a restart: re-issue an open notice (`M > L`) of an existing watcher."""
    if not watcher_exists or state.material <= state.last_seen:
        return []
    key = state.key
    return [
        RefreezeNotice(
            watcher=key.watcher, target_key=key.target_key, target_agent_id=key.target_agent_id, at_ms=at_ms
        )
    ]


DEFAULT_MAIN_KEY: Final = "main"
"""The rest of an agent's main session key, `agent:<agentId>:main`, unless a host names another."""


_SENTINEL_KEYS: Final = frozenset({"global", "unknown"})
"""Bare keys that are a kind of their own, whatever is registered for them."""


def is_group_session(state: SessionState) -> bool:
    """A group conversation: registered with kind `group`, or its key names one (`:group:`, `:channel:`).

    The more specific kinds come first, as the reference gateway classifies a session: the keys
    `global` and `unknown`, a cron session (a key `is_cron_key`, or registered with kind `cron`) and
    a spawned child (`spawned_by`) are never groups, whatever their key or registered kind says.
    """
    key = state.session_key
    if key in _SENTINEL_KEYS or state.kind == "cron" or is_cron_key(key) or state.spawned_by:
        return False
    return state.kind == "group" or ":group:" in key or ":channel:" in key


def is_cron_key(key: str) -> bool:
    """A cron session's key: its rest (after `agent:<id>:`, else the whole key) starts `cron:`, any case."""
    agent = agent_id_of(key)
    rest = key.strip().split(":", 2)[2] if agent is not None else key
    return rest.strip().lower().startswith("cron:")


def main_session_key(agent_id: str, main_key: str = DEFAULT_MAIN_KEY) -> str:
    """An agent's main session key: `agent:<agentId>:<main_key>`, the agent id normalized."""
    return f"agent:{normalize_agent_id(agent_id)}:{main_key}"


def ambient_watcher(state: SessionState, main_key: str = DEFAULT_MAIN_KEY) -> str | None:
    """The main session that watches a group session ambiently from a human's first turn in it on, else None.

    It is the group's agent's main session, `agent:<agentId>:<main_key>`; never the group itself.
    """
    if not is_group_session(state):
        return None
    watcher = main_session_key(state.agent_id, main_key)
    return watcher if watcher_identity(watcher) != state.identity else None


def watcher_identity(watcher: str) -> SessionIdentity | None:
    """The session identity of a watcher key (agent-qualified keys only)."""
    agent = agent_id_of(watcher)
    return SessionIdentity(watcher.strip(), agent) if agent is not None else None
