"""Upstream use cases: links to adopted sessions, and one monitor pass over the watched ones.

A pass reads the links, skips the ambiguous ones and those with an active run, groups the rest by
catalog, asks each catalog's provider once, and hands every answer to `domain.upstream.judge`. A
verdict that writes is one transaction that first re-checks that the link and the session did not
change during the scan. Provider failures stay with their catalog, and a failure on one link stays
with that link. The missing streaks and the active runs live in this process (ADR-0010).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from sessionwatch.adapters.app.checks import check_json, provider_time, query_identity
from sessionwatch.adapters.app.core import Core, Done, Work, wakes_of
from sessionwatch.adapters.app.recording import Scheduler, record_in
from sessionwatch.adapters.app.registry import apply
from sessionwatch.adapters.app.reports import TickReport
from sessionwatch.adapters.stores.port import WriteTransaction
from sessionwatch.adapters.upstream.monitor import MonitorHandle, PublishGate, log_failure
from sessionwatch.domain import session, upstream
from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.keys import SessionIdentity, resolve_identity
from sessionwatch.domain.ports import Transcripts, UpstreamProvider
from sessionwatch.domain.recording import check_signal
from sessionwatch.domain.session import SessionState, SignalRecorded, UpsertSession
from sessionwatch.domain.signals import SignalKind, check_text, to_epoch_ms
from sessionwatch.domain.upstream import (
    OWN_TEXTS_LIMIT,
    AdvanceMarker,
    AdvanceOnly,
    LinkUpstream,
    RecordActivity,
    RecordMissing,
    Unlink,
    UpstreamActivity,
    UpstreamLinkState,
    UpstreamMissing,
    UpstreamSource,
)
from sessionwatch.domain.watch_cursor import MaterialSignalSeen
from sessionwatch.projections.models import Signal, UpstreamLink

Outcome = Literal["recorded", "advanced", "missing", "aborted"]
"""What a written verdict did: `aborted` when the link or the session changed during the scan."""

Applied = tuple[Outcome, SignalRecorded | None, list[MaterialSignalSeen], bool]
"""A verdict applied: its outcome, the signal, the notices it opened, whether it was recorded now."""

Verdict = RecordActivity | AdvanceOnly | RecordMissing
"""A monitor verdict that writes."""

_MAX_SOURCE_FIELD: Final = 256


def link_upstream(
    core: Core,
    key: object,
    *,
    catalog_id: object,
    host_id: object,
    thread_id: object,
    upstream_kind: object,
    upstream_ref: object,
    marker: object,
    agent_id: object = None,
) -> Work[tuple[UpstreamLinkState | None, tuple[str, ...]], UpstreamLink]:
    """Link an adopted session to its upstream; the session is registered if new.

    Linking the same source again keeps the current marker; another source starts from `marker`.
    Either way it is a new link version with a fresh missing streak. A session that had no active
    link gets the log-only `adopted` signal in the same transaction.
    """
    identity = resolve_identity(key, agent_id)
    source = UpstreamSource(
        catalog_id=check_text(catalog_id, "catalog_id", _MAX_SOURCE_FIELD),
        host_id=check_text(host_id, "host_id", _MAX_SOURCE_FIELD),
        thread_id=check_text(thread_id, "thread_id", _MAX_SOURCE_FIELD),
        upstream_kind=check_text(upstream_kind, "upstream_kind", _MAX_SOURCE_FIELD),
        upstream_ref=check_json(upstream_ref, "upstream_ref"),
    )
    now = core.clock.now()
    adopted = check_signal(
        session_key=identity.session_key,
        agent_id=identity.agent_id,
        kind=SignalKind.ADOPTED,
        actor_type="system",
        actor_id=None,
        summary="session adopted",
        now=now,
    )
    fields = {"session_key": identity.session_key, "agent_id": identity.agent_id}
    command = LinkUpstream(
        **fields, source=source, marker=check_json(marker, "marker"), at_ms=to_epoch_ms(now)
    )

    def run(tx: WriteTransaction) -> tuple[UpstreamLinkState | None, tuple[str, ...]]:
        before = tx.upstream_link(identity)
        apply(tx, identity, UpsertSession(**fields))
        tx.append_link(identity, upstream.decide(command, before))
        kinds: tuple[str, ...] = ()
        if before is None or not before.active:
            event, _, now = record_in(tx, adopted)
            kinds = (event.kind,) if now else ()
        return tx.upstream_link(identity), kinds

    def finish(outcome: tuple[UpstreamLinkState | None, tuple[str, ...]]) -> Done[UpstreamLink]:
        after, kinds = outcome
        if after is None:  # decide(LinkUpstream) always links
            raise AssertionError("a link command left no link")
        return Done(UpstreamLink.from_state(after), kinds=kinds)

    return Work(run, finish)


def unlink_upstream(
    core: Core, key: object, *, agent_id: object = None
) -> Work[UpstreamLink | None, UpstreamLink | None]:
    """Remove the session's upstream link; the link removed, None when there was none."""
    identity = resolve_identity(key, agent_id)
    command = Unlink(
        session_key=identity.session_key, agent_id=identity.agent_id, reason="unlinked", at_ms=core.now_ms()
    )

    def run(tx: WriteTransaction) -> UpstreamLink | None:
        before = tx.upstream_link(identity)
        events = upstream.decide(command, before)
        tx.append_link(identity, events)
        return UpstreamLink.from_state(before) if events and before is not None else None

    def finish(removed: UpstreamLink | None) -> Done[UpstreamLink | None]:
        core.upstream_streaks.forget(identity)
        return Done(removed)

    return Work(run, finish)


def upstream_link(core: Core, key: object, *, agent_id: object = None) -> UpstreamLink | None:
    """The session's active upstream link, or None."""
    link = core.store.upstream_link(query_identity(key, agent_id))
    return UpstreamLink.from_state(link) if link is not None and link.active else None


def upstream_links(core: Core, *, catalog_id: object = None) -> list[UpstreamLink]:
    """Every active upstream link (of one catalog when `catalog_id` is given), by identity."""
    catalog = None if catalog_id is None else check_text(catalog_id, "catalog_id", _MAX_SOURCE_FIELD)
    core.check_open()
    return [
        UpstreamLink.from_state(link)
        for link in core.store.upstream_links(watched_only=False)
        if catalog is None or link.source.catalog_id == catalog
    ]


def apply_verdict(
    core: Core, link: UpstreamLinkState, verdict: Verdict, *, session: SessionState
) -> Work[Applied, tuple[Outcome, Signal | None]]:
    """One monitor verdict in one transaction.

    Nothing is written when the link or the session changed since the scan read them
    (`"aborted"`). Activity records `human_direct_message` (unless nobody watches any more) and
    then advances the marker; if the record fails, the marker stays. The third miss records
    `upstream_missing` and removes the link.
    """
    now = core.clock.now()
    identity = link.identity
    plan = upstream.publication(link, verdict, at_ms=to_epoch_ms(now))
    if isinstance(plan.link_command, AdvanceMarker):  # a provider's marker gets stored: bounded
        check_json(plan.link_command.marker, "next_marker")
    signal = None
    if plan.signal is not None:
        signal = check_signal(
            session_key=link.session_key,
            agent_id=link.agent_id,
            actor_id=None,
            session_id=session.session_id,  # the incarnation the session is known by, when known
            now=now,
            **plan.signal.model_dump(exclude={"occurred_at"}),
            occurred_at=provider_time(plan.signal.occurred_at),
        )
    seen = (session.known, session.session_id)

    def run(tx: WriteTransaction) -> Applied:
        state = tx.session(identity)
        if tx.upstream_link(identity) != link or (state.known, state.session_id) != seen:
            return "aborted", None, [], False
        recorded: SignalRecorded | None = None
        now = False
        facts: list[MaterialSignalSeen] = []
        human = isinstance(verdict, RecordActivity)
        if signal is not None and (not human or _records(state, lambda: tx.has_cursor_on(identity))):
            recorded, facts, now = record_in(tx, signal, spawn_edge=True)
        tx.append_link(identity, upstream.decide(plan.link_command, link))
        if isinstance(verdict, RecordMissing):
            return "missing", recorded, facts, now
        return ("recorded" if recorded is not None else "advanced"), recorded, facts, now

    def finish(outcome: Applied) -> Done[tuple[Outcome, Signal | None]]:
        kind, recorded, facts, now = outcome
        answer = (kind, Signal.from_event(recorded) if recorded is not None else None)
        return Done(
            answer,
            wakes_of(facts),
            recorded=kind != "aborted",
            kinds=(recorded.kind,) if now and recorded is not None else (),
            opened=len(facts),
        )

    return Work(run, finish)


def _records(state: SessionState, watched: Callable[[], bool]) -> bool:
    """An upstream human turn is a human's: it is recorded when someone watches the session."""
    return session.records_human_turn("human", state, watched=watched)


@dataclass
class _Tally:
    """What a pass has done so far (becomes a `TickReport`)."""

    probed: int = 0
    recorded: list[Signal] = field(default_factory=list)
    advanced: int = 0
    missed: list[str] = field(default_factory=list)
    missing: list[Signal] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    failed_links: list[str] = field(default_factory=list)
    failed_catalogs: list[str] = field(default_factory=list)
    unknown_catalogs: list[str] = field(default_factory=list)

    def report(self) -> TickReport:
        return TickReport(
            probed=self.probed,
            recorded=tuple(self.recorded),
            advanced=self.advanced,
            missed=tuple(self.missed),
            missing=tuple(self.missing),
            deferred=tuple(self.deferred),
            ambiguous=tuple(self.ambiguous),
            aborted=tuple(self.aborted),
            discarded=tuple(self.discarded),
            failed_links=tuple(self.failed_links),
            failed_catalogs=tuple(self.failed_catalogs),
            unknown_catalogs=tuple(dict.fromkeys(self.unknown_catalogs)),
        )


@dataclass(frozen=True)
class _Scanned:
    """A probed link with what the pass read before asking the provider."""

    link: UpstreamLinkState
    session: SessionState
    own_texts: tuple[str, ...]
    generation: int


def own_recent_texts(transcripts: Transcripts | None, link: UpstreamLinkState) -> tuple[str, ...]:
    """The session's own recent user texts for self-echo: normalized, newest last, at most 10."""
    if transcripts is None:
        return ()
    texts = transcripts.recent_user_texts(link.session_key, link.agent_id, OWN_TEXTS_LIMIT)
    normalized = [upstream.normalize_text(t) for t in texts if isinstance(t, str)]
    return tuple(t for t in normalized if t)[-OWN_TEXTS_LIMIT:]


class UpstreamPass:
    """One monitor pass: every watched link probed once, each verdict that writes run by `scheduler`.

    With `only`, the pass follows that one session's link, watched or not: a session nobody watches
    gets its marker advanced and nothing recorded, so a later watch never hears of older turns.
    """

    def __init__(
        self,
        core: Core,
        scheduler: Scheduler,
        providers: Mapping[str, UpstreamProvider],
        transcripts: Transcripts | None,
        publication: PublishGate,
        *,
        only: SessionIdentity | None = None,
    ) -> None:
        self._core = core
        self._scheduler = scheduler
        self._providers = providers
        self._transcripts = transcripts
        self._publication = publication
        self._only = only
        self._tally = _Tally()

    def _links(self) -> tuple[list[UpstreamLinkState], Counter[str]]:
        """The links this pass probes, and how many identities hold each session key."""
        store = self._core.store
        if self._only is not None:
            link = store.upstream_link(self._only)
            chosen = [link] if link is not None and link.active else []
            return chosen, Counter(link.session_key for link in chosen)
        keys = Counter(link.session_key for link in store.upstream_links(watched_only=False))
        return store.upstream_links(watched_only=True), keys

    def run(self) -> TickReport:
        """Probe every watched link (or the one followed) once; publish what the answers call for."""
        links, keys = self._links()
        by_catalog: dict[str, list[UpstreamLinkState]] = defaultdict(list)
        for link in links:
            if keys[link.session_key] > 1:  # one key under several agent ids: ownership unclear
                self._tally.ambiguous.append(link.session_key)
            elif self._core.active_runs.active(link.identity):  # the marker waits for the run
                self._tally.deferred.append(link.session_key)
            else:
                by_catalog[link.source.catalog_id].append(link)
        for catalog_id in sorted(by_catalog):
            if self._publication.closed:
                break
            self._scan_catalog(catalog_id, by_catalog[catalog_id])
        return self._tally.report()

    def _scan_catalog(self, catalog_id: str, links: Sequence[UpstreamLinkState]) -> None:
        provider = self._providers.get(catalog_id)
        if provider is None:
            self._tally.unknown_catalogs.append(catalog_id)
            return
        scanned: list[_Scanned] = []
        for link in links:
            try:
                scanned.append(self._prepare(link))
            except Exception as exc:  # noqa: BLE001 - a failure on one link stays with that link
                log_failure("link", link.session_key, exc)
                self._tally.failed_links.append(link.session_key)
        scanned = [s for s in scanned if s.session.known]
        if not scanned:
            return  # a provider is never asked about nothing
        probes = [s.link.probe(s.own_texts) for s in scanned]
        self._tally.probed += len(probes)
        try:
            answers = list(provider.check_upstream_activity(probes))
        except Exception as exc:  # noqa: BLE001 - a failing provider fails its own catalog only
            log_failure("provider", catalog_id, exc)
            self._tally.failed_catalogs.append(catalog_id)
            return
        answer_for: dict[str, UpstreamActivity | UpstreamMissing] = {}
        for answer in answers:
            if isinstance(answer, UpstreamActivity | UpstreamMissing):
                answer_for.setdefault(answer.session_key, answer)  # the first answer per probe counts
        for item in scanned:
            try:
                self._settle(item, answer_for.get(item.link.session_key))
            except Exception as exc:  # noqa: BLE001 - a failure on one link stays with that link
                log_failure("link", item.link.session_key, exc)
                self._tally.failed_links.append(item.link.session_key)

    def _prepare(self, link: UpstreamLinkState) -> _Scanned:
        generation = self._core.active_runs.generation(link.identity)
        session = self._core.store.session(link.identity) or SessionState(
            session_key=link.session_key, agent_id=link.agent_id
        )
        return _Scanned(link, session, own_recent_texts(self._transcripts, link), generation)

    def _settle(self, item: _Scanned, answer: UpstreamActivity | UpstreamMissing | None) -> None:
        """Judge one answer and publish its verdict, unless the monitor stopped meanwhile."""
        link, key = item.link, item.link.session_key
        streaks = self._core.upstream_streaks
        with self._publication.attempt() as allowed:
            if not allowed:
                self._tally.discarded.append(key)
                return
            run_started = self._core.active_runs.started_since(link.identity, item.generation)
            verdict = upstream.judge(answer, streak=streaks.get(link), run_started=run_started)
            match verdict:
                case upstream.ResetStreak():
                    streaks.reset(link)
                case upstream.CountMiss():
                    streaks.set(link, verdict.streak)
                    self._tally.missed.append(key)
                case upstream.Defer():
                    self._tally.deferred.append(key)
                case upstream.RecordActivity() | upstream.AdvanceOnly() | upstream.RecordMissing():
                    self._publish(item, verdict)

    def _publish(
        self, item: _Scanned, verdict: upstream.RecordActivity | upstream.AdvanceOnly | upstream.RecordMissing
    ) -> None:
        link, key = item.link, item.link.session_key
        if isinstance(verdict, upstream.RecordActivity) and item.own_texts != own_recent_texts(
            self._transcripts, link
        ):
            self._tally.aborted.append(key)  # the session sent text meanwhile: self-echo is unsure
            return
        outcome, signal = self._scheduler.run(apply_verdict(self._core, link, verdict, session=item.session))
        if outcome == "aborted":
            self._tally.aborted.append(key)
            return
        if outcome == "missing":
            self._core.upstream_streaks.forget(link.identity)
            if signal is not None:
                self._tally.missing.append(signal)
            return
        self._core.upstream_streaks.reset(link)
        self._tally.advanced += 1
        if signal is not None:
            self._tally.recorded.append(signal)


def tick(
    core: Core,
    scheduler: Scheduler,
    providers: Mapping[str, UpstreamProvider],
    *,
    transcripts: Transcripts | None = None,
    gate: PublishGate | None = None,
    only: SessionIdentity | None = None,
) -> TickReport:
    """One monitor pass; `providers` maps a catalog id to its provider (`only`: one session's link)."""
    core.check_open()
    with core.telemetry.span("sessionwatch.upstream_tick"):
        chosen = dict(providers)
        return UpstreamPass(core, scheduler, chosen, transcripts, gate or PublishGate(), only=only).run()


def follow(
    core: Core,
    scheduler: Scheduler,
    key: object,
    providers: Mapping[str, UpstreamProvider],
    *,
    agent_id: object = None,
    transcripts: Transcripts | None = None,
) -> TickReport:
    """Follow one session's upstream now, watched or not (a host's hook, told the session moved)."""
    return tick(core, scheduler, providers, transcripts=transcripts, only=query_identity(key, agent_id))


def monitor_timing(interval: object, initial_delay: object) -> tuple[float, float]:
    """A monitor's interval and first delay in seconds, else `InvalidQuery` naming the bad one."""
    for name, value in (("interval", interval), ("initial_delay", initial_delay)):
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise InvalidQuery(name, "must be a finite number of seconds")
    assert isinstance(interval, int | float)  # noqa: S101 - checked above, for the type checker
    assert isinstance(initial_delay, int | float)  # noqa: S101
    if interval <= 0 or initial_delay < 0:
        raise InvalidQuery("interval", "must be positive (and initial_delay not negative)")
    return float(interval), float(initial_delay)


def start_monitor(
    core: Core,
    scheduler: Scheduler,
    providers: Mapping[str, UpstreamProvider],
    *,
    transcripts: Transcripts | None,
    interval: object,
    initial_delay: object,
) -> MonitorHandle:
    """Run `tick` every `interval` seconds on a thread, the first after `initial_delay`.

    `stop()` on the handle (or closing the store) ends it; nothing is published afterwards.
    """
    core.check_open()
    every, first = monitor_timing(interval, initial_delay)
    chosen = dict(providers)
    handle = MonitorHandle(
        lambda gate: tick(core, scheduler, chosen, transcripts=transcripts, gate=gate),
        interval=every,
        initial_delay=first,
    )
    return core.monitors.add(handle).start()
