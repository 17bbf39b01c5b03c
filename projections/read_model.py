"""The read models as one pure fold: sessions, the signal log, and watch cursors with their notices.

`evolve_read_model(model, event)` is the reference semantics every durable store must match;
the memory store runs it directly and the replay check folds the whole event store through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias, assert_never, cast

from sessionwatch.domain import digest, session, upstream, watch_cursor
from sessionwatch.domain.digest import CreationNoted, DigestDrained, DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import SignalsPruned
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
    WatchPromoted,
    WatchRegistered,
    WatchRemoved,
)

CursorsByTarget: TypeAlias = Mapping[SessionIdentity, Mapping[str, CursorState]]


@dataclass(frozen=True, slots=True)
class ReadModel:
    """Every read model of the core.

    `sessions` holds each known identity's state (head, watermark, registry fields);
    `signals` holds each identity's retained signals in ascending sequence order;
    `dedupe` maps every retained dedupe key to its signal's identity and sequence;
    `cursors` holds each target identity's cursors by watcher key (pending notices: `N > L`);
    `links` holds each identity's upstream link, unlinked ones as tombstones (ADR-0010);
    `digests` holds each main session's pending creation digest (ADR-0047).
    """

    sessions: Mapping[SessionIdentity, SessionState] = field(default_factory=dict)
    signals: Mapping[SessionIdentity, tuple[SignalRecorded, ...]] = field(default_factory=dict)
    dedupe: Mapping[str, tuple[SessionIdentity, int]] = field(default_factory=dict)
    cursors: CursorsByTarget = field(default_factory=dict)
    links: Mapping[SessionIdentity, UpstreamLinkState] = field(default_factory=dict)
    digests: Mapping[SessionIdentity, DigestState] = field(default_factory=dict)

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
        return held_by(self.cursors, identity)


def held_by(cursors: CursorsByTarget, identity: SessionIdentity) -> list[CursorKey]:
    """The cursors an identity holds as watcher (only agent-qualified keys can hold any)."""
    if watch_cursor.watcher_identity(identity.session_key) != identity:
        return []
    return sorted(
        state.key
        for by_watcher in cursors.values()
        for state in by_watcher.values()
        if state.watcher == identity.session_key
    )


def apply_cursor_facts(cursors: CursorsByTarget, facts: Iterable[CursorFact]) -> CursorsByTarget:
    """Evolve the cursors touched by `facts`, dropping a target's entry once it has none."""
    out = dict(cursors)
    evolve_cursors_in(out, facts, set())
    return out


def evolve_cursors_in(
    cursors: dict[SessionIdentity, Mapping[str, CursorState]],
    facts: Iterable[CursorFact],
    owned: set[SessionIdentity],
) -> None:
    """`apply_cursor_facts` into `cursors` itself: the rule, for callers that own the outer mapping.

    A target's mapping of watchers is copied on its first write unless `owned` names it (a mapping
    this caller made, so writable in place); the targets whose mapping it made are added to `owned`.
    """
    for fact in facts:
        target = fact.key.target
        by_watcher = cursors.get(target)
        if target not in owned or by_watcher is None:
            by_watcher = dict(by_watcher or {})
            owned.add(target)
        state = watch_cursor.evolve(by_watcher.get(fact.watcher), fact)
        if state is None:
            cast("dict[str, CursorState]", by_watcher).pop(fact.watcher, None)
        else:
            cast("dict[str, CursorState]", by_watcher)[fact.watcher] = state
        if by_watcher:
            cursors[target] = by_watcher
        else:
            cursors.pop(target, None)
            owned.discard(target)


def implied_facts(
    model: ReadModel, event: SessionEvent, notifying: frozenset[SignalKind] = NOTIFYING_KINDS
) -> list[CursorFact]:
    """The cursor facts a stored Session event implies, decided against the cursors before it.

    `notifying` is the store's set of kinds that notify (`signals.notifying_kinds`).
    """
    return implied_facts_in(model.cursors, event, notifying=notifying)


def implied_facts_in(
    cursors: CursorsByTarget,
    event: SessionEvent,
    identity: SessionIdentity | None = None,
    *,
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
) -> list[CursorFact]:
    """`implied_facts` over the cursors alone (`identity`: the event's, when the caller has it)."""
    identity = identity or SessionIdentity(event.session_key, event.agent_id)
    at_ms = event.recorded_at_ms if isinstance(event, SignalRecorded) else 0
    held = held_by(cursors, identity) if isinstance(event, SessionReset | SessionDeleted) else ()
    commands = watch_cursor.react(
        event, cursors.get(identity, {}), held_by_session=held, at_ms=at_ms, notifying=notifying
    )
    if not commands:
        return []
    facts: list[CursorFact] = []
    # Copied once, when a command's facts are read by a later command (never for the last one).
    working: dict[SessionIdentity, Mapping[str, CursorState]] | None = None
    owned: set[SessionIdentity] = set()
    last = len(commands) - 1
    for at, command in enumerate(commands):
        key = CursorKey(command.watcher, command.target_key, command.target_agent_id)
        decided = watch_cursor.derive(command, cursors.get(key.target, {}).get(key.watcher))
        if at < last and decided:  # the last command's facts change nothing any command reads
            if working is None:
                working = dict(cursors)
                cursors = working
            evolve_cursors_in(working, decided, owned)
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
    """The restart sweep over the cursors, via the pure `resume`."""
    return plan_sweep_in(model.cursors, model.sessions, at_ms)


def plan_sweep_in(
    cursors: CursorsByTarget, sessions: Mapping[SessionIdentity, SessionState], at_ms: int
) -> SweepPlan:
    """`plan_sweep` over the cursors and sessions alone."""
    republished: list[CursorState] = []
    facts: list[NoticeRefrozen] = []
    skipped = 0
    ordered = sorted((c for by_watcher in cursors.values() for c in by_watcher.values()), key=lambda c: c.key)
    for cursor in ordered:
        if cursor.material <= cursor.last_seen:
            continue
        watcher = watch_cursor.watcher_identity(cursor.watcher)
        state = sessions.get(watcher) if watcher is not None else None
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


class Projection:
    """A read model being built: stored events applied in place, in commit order.

    It starts from a `ReadModel` (never changed: each mapping is copied on its first write, each
    session's log on its first append) and `build()` gives the result. `evolve_read_model` is one
    event through it; `fold` (a replay, an audit) is many events through one, so each log grows by
    appends rather than by a copy per signal, and a run of signals that only raise a session's head
    (`session.raises_head_only`) builds that session's new state once, when it is next read.
    """

    def __init__(
        self, model: ReadModel | None = None, *, notifying: frozenset[SignalKind] = NOTIFYING_KINDS
    ) -> None:
        base = model or ReadModel()
        self.notifying = notifying
        """The kinds that notify watchers, the store's setting (`signals.notifying_kinds`)."""
        self._sessions = base.sessions
        self._signals: Mapping[SessionIdentity, Sequence[SignalRecorded]] = base.signals
        self._dedupe = base.dedupe
        self._cursors: CursorsByTarget = base.cursors
        self._links = base.links
        self._digests = base.digests
        self._owned: set[str] = set()
        self._own_logs: set[SessionIdentity] = set()
        self._own_targets: set[SessionIdentity] = set()  # the cursor mappings by watcher made here
        self._raised: dict[SessionIdentity, int] = {}  # heads raised past their `_sessions` state

    def _settle(self, identity: SessionIdentity) -> None:
        """Write the head raised for `identity` into its session state."""
        head = self._raised.pop(identity, None)
        if head is not None:
            sessions = self._w_sessions()
            sessions[identity] = session.with_head(sessions[identity], head)

    def _settle_all(self) -> None:
        for identity in list(self._raised):
            self._settle(identity)

    # ------------------------------------------------------------------------ copy on write

    def _w_sessions(self) -> dict[SessionIdentity, SessionState]:
        if "sessions" not in self._owned:
            self._sessions = dict(self._sessions)
            self._owned.add("sessions")
        return cast("dict[SessionIdentity, SessionState]", self._sessions)  # owned

    def _w_signals(self) -> dict[SessionIdentity, Sequence[SignalRecorded]]:
        if "signals" not in self._owned:
            self._signals = dict(self._signals)
            self._owned.add("signals")
        return cast("dict[SessionIdentity, Sequence[SignalRecorded]]", self._signals)  # owned

    def _w_dedupe(self) -> dict[str, tuple[SessionIdentity, int]]:
        if "dedupe" not in self._owned:
            self._dedupe = dict(self._dedupe)
            self._owned.add("dedupe")
        return cast("dict[str, tuple[SessionIdentity, int]]", self._dedupe)  # owned

    def _w_links(self) -> dict[SessionIdentity, UpstreamLinkState]:
        if "links" not in self._owned:
            self._links = dict(self._links)
            self._owned.add("links")
        return cast("dict[SessionIdentity, UpstreamLinkState]", self._links)  # owned

    def _w_digests(self) -> dict[SessionIdentity, DigestState]:
        if "digests" not in self._owned:
            self._digests = dict(self._digests)
            self._owned.add("digests")
        return cast("dict[SessionIdentity, DigestState]", self._digests)  # owned

    def _evolve_cursors(self, facts: Iterable[CursorFact]) -> None:
        """`apply_cursor_facts` to the cursors, each mapping copied on its first write only."""
        if "cursors" not in self._owned:
            self._cursors = dict(self._cursors)
            self._owned.add("cursors")
            self._own_targets.clear()
        evolve_cursors_in(
            cast("dict[SessionIdentity, Mapping[str, CursorState]]", self._cursors), facts, self._own_targets
        )

    @property
    def cursors(self) -> CursorsByTarget:
        """The cursors as of the events applied so far."""
        return self._cursors

    @property
    def sessions(self) -> Mapping[SessionIdentity, SessionState]:
        """The sessions as of the events applied so far."""
        self._settle_all()
        return self._sessions

    def build(self) -> ReadModel:
        """The read model after every event applied so far."""
        self._settle_all()
        signals = self._signals
        if self._own_logs:
            signals = {i: log if isinstance(log, tuple) else tuple(log) for i, log in signals.items()}
        return ReadModel(
            sessions=self._sessions,
            signals=signals,  # type: ignore[arg-type] # every log a tuple after the line above
            dedupe=self._dedupe,
            cursors=self._cursors,
            links=self._links,
            digests=self._digests,
        )

    # ------------------------------------------------------------------------------ events

    def apply(self, event: DomainEvent) -> list[CursorFact]:
        """Apply one stored event to every view; returns the cursor facts it implied. Never raises."""
        match event:
            case SignalRecorded():  # most events of any history
                return self._apply_signal(event)
            case SessionUpserted() | SessionMetaUpdated() | SessionReset() | SessionDeleted():
                identity = SessionIdentity(event.session_key, event.agent_id)
                implied = implied_facts_in(self._cursors, event, identity, notifying=self.notifying)
                if implied:
                    self._evolve_cursors(implied)
                self._apply_session_event(event, identity)
                return implied
            case WatchRegistered() | WatchPromoted() | NoticeAcknowledged() | WatchRemoved():
                self._evolve_cursors([event])
                return [event]
            case NoticesSwept():
                refrozen: list[CursorFact] = list(
                    plan_sweep_in(self._cursors, self.sessions, event.at_ms).facts
                )
                self._evolve_cursors(refrozen)
                return refrozen
            case SignalsPruned():
                self._restart_from(event)
                return []
            case UpstreamLinked() | UpstreamMarkerAdvanced() | UpstreamUnlinked():
                identity = SessionIdentity(event.session_key, event.agent_id)
                link = upstream.evolve(self._links.get(identity), event)
                if link is not None:
                    self._w_links()[identity] = link
                else:
                    self._w_links().pop(identity, None)
                return []
            case CreationNoted() | DigestDrained():
                self._apply_digest(event)
                return []
            case _:
                assert_never(event)

    def _apply_digest(self, event: CreationNoted | DigestDrained) -> None:
        identity = SessionIdentity(event.session_key, event.agent_id)
        state = digest.evolve(self._digests.get(identity), event)
        if state is not None:
            self._w_digests()[identity] = state
        elif identity in self._digests:
            del self._w_digests()[identity]

    def _drop_digest(self, identity: SessionIdentity) -> None:
        """A reset or deleted main session loses its digest (ADR-0047)."""
        if identity in self._digests:
            del self._w_digests()[identity]

    def _apply_signal(self, event: SignalRecorded) -> list[CursorFact]:
        identity = SessionIdentity(event.session_key, event.agent_id)
        implied: list[CursorFact] = []
        if watch_cursor.signal_may_react(event, self._cursors.get(identity)):
            implied = implied_facts_in(self._cursors, event, identity, notifying=self.notifying)
            if implied:
                self._evolve_cursors(implied)
        state = self._sessions.get(identity)
        if state is not None and session.raises_head_only(state, event):
            if event.sequence > self._raised.get(identity, state.head):
                self._raised[identity] = event.sequence
            self._log(identity, event)
        else:
            self._apply_session_event(event, identity)
        return implied

    def _apply_session_event(self, event: SessionEvent, identity: SessionIdentity) -> None:
        self._settle(identity)
        state = session.evolve(self._sessions.get(identity) or session.initial(identity), event)
        # Only known identities are listed: resetting a watcher known by its cursors alone keeps it unknown.
        if state.known:
            self._w_sessions()[identity] = state
        elif identity in self._sessions:
            del self._w_sessions()[identity]
        match event:
            case SignalRecorded():
                self._log(identity, event)
            case SessionDeleted():
                log = self._signals.get(identity, ())
                dropped = [s.dedupe_key for s in log if s.dedupe_key is not None]
                if dropped:
                    dedupe = self._w_dedupe()
                    for key in dropped:
                        dedupe.pop(key, None)
                self._w_signals().pop(identity, None)
                self._own_logs.discard(identity)
                if identity in self._links:  # the link goes with the session
                    del self._w_links()[identity]
                self._drop_digest(identity)
            case SessionReset():
                self._drop_digest(identity)
            case SessionUpserted() | SessionMetaUpdated():
                return  # the session state above is all they change
            case _:
                assert_never(event)

    def _log(self, identity: SessionIdentity, signal: SignalRecorded) -> None:
        """Append a signal to its session's log, and its dedupe key to the index."""
        if signal.dedupe_key is not None:
            self._w_dedupe()[signal.dedupe_key] = (identity, signal.sequence)
        signals = self._w_signals()
        log = signals.get(identity)
        if identity in self._own_logs and isinstance(log, list):
            log.append(signal)
            return
        signals[identity] = [*(log or ()), signal]
        self._own_logs.add(identity)

    def _restart_from(self, event: SignalsPruned) -> None:
        """Replay a prune: apply its cut-offs to the log; restart sessions, cursors, links, digests from it.

        The events that built those sessions, cursors and links may have been deleted since (ADR-0008).
        """
        signals = {
            identity: kept
            for identity, log in self._signals.items()
            if (kept := tuple(s for s in log if not event.cutoffs.removes(s)))
        }
        self._dedupe = {
            s.dedupe_key: (identity, s.sequence)
            for identity, log in signals.items()
            for s in log
            if s.dedupe_key is not None
        }
        self._raised.clear()  # the checkpoint's sessions replace every state, raised heads included
        cursors: dict[SessionIdentity, dict[str, CursorState]] = {}
        for cursor in event.cursors:
            cursors.setdefault(cursor.key.target, {})[cursor.watcher] = cursor
        self._signals = signals
        self._sessions = {s.identity: s for s in event.sessions}
        self._cursors = cursors
        self._links = {link.identity: link for link in event.links}
        self._digests = {d.identity: d for d in event.digests}
        self._owned = {"sessions", "signals", "dedupe", "links", "digests"}
        self._own_logs = set()


def evolve_read_model(
    model: ReadModel, event: DomainEvent, notifying: frozenset[SignalKind] = NOTIFYING_KINDS
) -> ReadModel:
    """Apply one stored event to every view (the projection), never raising."""
    projection = Projection(model, notifying=notifying)
    projection.apply(event)
    return projection.build()


def fold(
    events: Iterable[DomainEvent],
    model: ReadModel | None = None,
    *,
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
) -> ReadModel:
    """Replay events from `model` (or empty) in order."""
    projection = Projection(model, notifying=notifying)
    for event in events:
        projection.apply(event)
    return projection.build()


class SignalFreeProjection(Projection):
    """A `Projection` that keeps no signal log and no dedupe index: sessions, cursors and links only.

    What a bulk load folds while the store keeps the signals, so its memory does not grow with them.
    """

    def _log(self, identity: SessionIdentity, signal: SignalRecorded) -> None:
        del identity, signal
