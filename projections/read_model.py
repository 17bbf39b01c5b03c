"""The read models as one pure fold: sessions, the signal log, and watch cursors with their notices.

`evolve_read_model(model, event)` is the reference semantics every durable store must match;
the memory store runs it directly and the replay check folds the whole event store through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeAlias, TypeVar, assert_never

from sessionwatch.domain import session, upstream, watch_cursor
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionEvent,
    SessionReset,
    SessionState,
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
    CursorFact,
    CursorKey,
    CursorState,
    NoticeAcknowledged,
    NoticeRefrozen,
    NoticesSwept,
    WatchRegistered,
    WatchRemoved,
)

K = TypeVar("K")
V = TypeVar("V")

CursorsByTarget: TypeAlias = Mapping[SessionIdentity, Mapping[str, CursorState]]


@dataclass(frozen=True, slots=True)
class ReadModel:
    """Every read model of the core.

    `sessions` holds each known identity's state (head, watermark, registry fields);
    `signals` holds each identity's retained signals in ascending sequence order;
    `dedupe` maps every retained dedupe key to its signal's identity and sequence;
    `cursors` holds each target identity's cursors by watcher key (pending notices: `N > L`);
    `links` holds each identity's upstream link, unlinked ones as tombstones (SPEC §10, ADR-0010).
    """

    sessions: Mapping[SessionIdentity, SessionState] = field(default_factory=dict)
    signals: Mapping[SessionIdentity, tuple[SignalRecorded, ...]] = field(default_factory=dict)
    dedupe: Mapping[str, tuple[SessionIdentity, int]] = field(default_factory=dict)
    cursors: CursorsByTarget = field(default_factory=dict)
    links: Mapping[SessionIdentity, UpstreamLinkState] = field(default_factory=dict)

    def active_links(self) -> list[UpstreamLinkState]:
        """Every active upstream link, ordered by identity."""
        return [self.links[i] for i in sorted(self.links) if self.links[i].active]

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor, or None."""
        return self.cursors.get(key.target, {}).get(key.watcher)

    def all_cursors(self) -> list[CursorState]:
        """Every cursor, ordered by watcher then target."""
        found = [state for by_watcher in self.cursors.values() for state in by_watcher.values()]
        return sorted(found, key=lambda c: c.key)

    def held_by(self, identity: SessionIdentity) -> list[CursorKey]:
        """The cursors an identity holds as watcher (only agent-qualified keys can hold any)."""
        watcher = watch_cursor.watcher_identity(identity.session_key)
        if watcher != identity:
            return []
        return sorted(
            state.key
            for by_watcher in self.cursors.values()
            for state in by_watcher.values()
            if state.watcher == identity.session_key
        )


def _with(mapping: Mapping[K, V], key: K, value: V) -> dict[K, V]:
    out = dict(mapping)
    out[key] = value
    return out


def _without(mapping: Mapping[K, V], keys: Iterable[K]) -> dict[K, V]:
    out = dict(mapping)
    for key in keys:
        out.pop(key, None)
    return out


def apply_cursor_facts(cursors: CursorsByTarget, facts: Iterable[CursorFact]) -> CursorsByTarget:
    """Evolve the cursors touched by `facts`, dropping a target's entry once it has none."""
    out = dict(cursors)
    for fact in facts:
        target = fact.key.target
        by_watcher = dict(out.get(target, {}))
        state = watch_cursor.evolve(by_watcher.get(fact.watcher), fact)
        if state is None:
            by_watcher.pop(fact.watcher, None)
        else:
            by_watcher[fact.watcher] = state
        if by_watcher:
            out[target] = by_watcher
        else:
            out.pop(target, None)
    return out


def implied_facts(model: ReadModel, event: SessionEvent) -> list[CursorFact]:
    """The cursor facts a stored Session event implies, decided against the cursors before it."""
    identity = SessionIdentity(event.session_key, event.agent_id)
    at_ms = event.recorded_at_ms if isinstance(event, SignalRecorded) else 0
    held = model.held_by(identity) if isinstance(event, SessionReset | SessionDeleted) else ()
    commands = watch_cursor.react(event, model.cursors.get(identity, {}), held_by_session=held, at_ms=at_ms)
    facts: list[CursorFact] = []
    cursors = model.cursors
    for command in commands:
        key = CursorKey(command.watcher, command.target_key, command.target_agent_id)
        decided = watch_cursor.derive(command, cursors.get(key.target, {}).get(key.watcher))
        cursors = apply_cursor_facts(cursors, decided)
        facts.extend(decided)
    return facts


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """What a sweep at one instant does.

    The open notices it re-publishes (their watchers exist), the re-freezes it implies, and how many
    open cursors it skips for a missing watcher.
    """

    republished: tuple[CursorState, ...]
    facts: tuple[NoticeRefrozen, ...]
    skipped: int


def plan_sweep(model: ReadModel, at_ms: int) -> SweepPlan:
    """The restart sweep over the cursors (SPEC §6.5), via the pure `resume`."""
    republished: list[CursorState] = []
    facts: list[NoticeRefrozen] = []
    skipped = 0
    for cursor in model.all_cursors():
        if cursor.material <= cursor.last_seen:
            continue
        watcher = watch_cursor.watcher_identity(cursor.watcher)
        state = model.sessions.get(watcher) if watcher is not None else None
        commands = watch_cursor.resume(
            cursor, watcher_exists=state is not None and state.registered, at_ms=at_ms
        )
        if not commands:
            skipped += 1
            continue
        republished.append(cursor)
        facts.extend(
            f for c in commands for f in watch_cursor.derive(c, cursor) if isinstance(f, NoticeRefrozen)
        )
    return SweepPlan(tuple(republished), tuple(facts), skipped)


def evolve_read_model(model: ReadModel, event: DomainEvent) -> ReadModel:
    """Apply one stored event to every view (the projection), never raising."""
    match event:
        case WatchRegistered() | NoticeAcknowledged() | WatchRemoved():
            return replace(model, cursors=apply_cursor_facts(model.cursors, [event]))
        case NoticesSwept():
            return replace(
                model, cursors=apply_cursor_facts(model.cursors, plan_sweep(model, event.at_ms).facts)
            )
        case SessionUpserted() | SignalRecorded() | SessionReset() | SessionDeleted():
            cursors = apply_cursor_facts(model.cursors, implied_facts(model, event))
            return replace(_evolve_session_views(model, event), cursors=cursors)
        case SignalsPruned():
            return evolve_pruned(model, event)
        case UpstreamLinked() | UpstreamMarkerAdvanced() | UpstreamUnlinked():
            identity = SessionIdentity(event.session_key, event.agent_id)
            link = upstream.evolve(model.links.get(identity), event)
            links = (
                _with(model.links, identity, link) if link is not None else _without(model.links, [identity])
            )
            return replace(model, links=links)
        case _:
            assert_never(event)


def _evolve_session_views(model: ReadModel, event: SessionEvent) -> ReadModel:
    identity = SessionIdentity(event.session_key, event.agent_id)
    state = session.evolve(model.sessions.get(identity) or session.initial(identity), event)
    # Only known identities are listed: resetting a watcher known by its cursors alone keeps it unknown.
    sessions = _with(model.sessions, identity, state) if state.known else _without(model.sessions, [identity])
    match event:
        case SessionUpserted() | SessionReset():
            return replace(model, sessions=sessions)
        case SignalRecorded():
            log = (*model.signals.get(identity, ()), event)
            dedupe: Mapping[str, tuple[SessionIdentity, int]] = model.dedupe
            if event.dedupe_key is not None:
                dedupe = _with(dedupe, event.dedupe_key, (identity, event.sequence))
            return replace(
                model, sessions=sessions, signals=_with(model.signals, identity, log), dedupe=dedupe
            )
        case SessionDeleted():
            dropped = [s.dedupe_key for s in model.signals.get(identity, ()) if s.dedupe_key is not None]
            return replace(
                model,
                sessions=_without(model.sessions, [identity]),
                signals=_without(model.signals, [identity]),
                dedupe=_without(model.dedupe, dropped),
                links=_without(model.links, [identity]),  # the link goes with the session (SPEC §9)
            )
        case _:
            assert_never(event)


def evolve_pruned(model: ReadModel, event: SignalsPruned) -> ReadModel:
    """Replay a prune: apply its cut-offs to the log; restart sessions and cursors from its checkpoint.

    The events that built those sessions and cursors may have been deleted since (ADR-0008).
    """
    signals = {
        identity: kept
        for identity, log in model.signals.items()
        if (kept := tuple(s for s in log if not event.cutoffs.removes(s)))
    }
    dedupe = {
        s.dedupe_key: (identity, s.sequence)
        for identity, log in signals.items()
        for s in log
        if s.dedupe_key is not None
    }
    cursors: dict[SessionIdentity, dict[str, CursorState]] = {}
    for cursor in event.cursors:
        cursors.setdefault(cursor.key.target, {})[cursor.watcher] = cursor
    return replace(
        model,
        sessions={s.identity: s for s in event.sessions},
        signals=signals,
        dedupe=dedupe,
        cursors=cursors,
        links={link.identity: link for link in event.links},
    )


def fold(events: Iterable[DomainEvent], model: ReadModel | None = None) -> ReadModel:
    """Replay events from `model` (or empty) in order."""
    current = model or ReadModel()
    for event in events:
        current = evolve_read_model(current, event)
    return current
