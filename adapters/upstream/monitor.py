"""The upstream monitor's shell (SPEC §10): one pass over the watched links, and the thread running it.

A pass reads the links, skips the ambiguous ones and those with an active run, groups the rest by
catalog, asks each catalog's provider once, and hands every answer to `domain.upstream.judge`. A
verdict that writes goes through `SessionWatch.apply_upstream_verdict`: one transaction that first
re-checks that the link and the session did not change during the scan. Provider failures stay with
their catalog, and a failure on one link stays with that link.

The missing streaks and the active runs live in this process, not in the store (ADR-0010): a
restart starts every streak afresh (an upstream is declared missing later, never wrongly), and a
crash leaves no run behind that would block a link forever.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self

from sessionwatch.domain import upstream
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.ports import Transcripts, UpstreamProvider
from sessionwatch.domain.session import SessionState
from sessionwatch.domain.upstream import (
    OWN_TEXTS_LIMIT,
    UpstreamActivity,
    UpstreamLinkState,
    UpstreamMissing,
)
from sessionwatch.projections.models import Signal, TickReport

if TYPE_CHECKING:
    from sessionwatch.adapters.entry.watch import SessionWatch

logger = logging.getLogger("sessionwatch")

Outcome = Literal["recorded", "advanced", "missing", "aborted"]
"""What a written verdict did: `aborted` when the link or the session changed during the scan."""


class ActiveRuns:
    """The runs this process has started and not ended, per session (thread-safe).

    Every start also bumps the session's generation, so a run that started *and ended* during a
    scan is still seen as "a run started during the scan" (SPEC §10).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[SessionIdentity, set[str]] = {}
        self._generation: Counter[SessionIdentity] = Counter()

    def start(self, identity: SessionIdentity, run_id: str) -> None:
        """A run of the session began."""
        with self._lock:
            self._runs.setdefault(identity, set()).add(run_id)
            self._generation[identity] += 1

    def end(self, identity: SessionIdentity, run_id: str) -> None:
        """A run of the session ended (an unknown run id changes nothing)."""
        with self._lock:
            runs = self._runs.get(identity)
            if runs is not None:
                runs.discard(run_id)
                if not runs:
                    del self._runs[identity]

    def active(self, identity: SessionIdentity) -> bool:
        """Whether a run of the session is in flight."""
        with self._lock:
            return identity in self._runs

    def generation(self, identity: SessionIdentity) -> int:
        """How many runs of the session have started so far."""
        with self._lock:
            return self._generation[identity]

    def started_since(self, identity: SessionIdentity, generation: int) -> bool:
        """Whether a run is active now or started after `generation` was read."""
        with self._lock:
            return identity in self._runs or self._generation[identity] != generation


@dataclass
class MissingStreaks:
    """Consecutive misses of each session's current link version (thread-safe).

    One entry per session: a streak counted for another link version reads as 0, so a re-link
    starts a fresh streak, while a pass still judging the old version sees that version's streak
    (and its write then finds the link changed).
    """

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _misses: dict[SessionIdentity, tuple[int, int]] = field(default_factory=dict)

    def get(self, link: UpstreamLinkState) -> int:
        """The link version's current streak."""
        with self._lock:
            version, misses = self._misses.get(link.identity, (link.link_version, 0))
            return misses if version == link.link_version else 0

    def set(self, link: UpstreamLinkState, misses: int) -> None:
        """Record the link version's streak."""
        with self._lock:
            self._misses[link.identity] = (link.link_version, misses)

    def reset(self, link: UpstreamLinkState) -> None:
        """Start the link version's streak afresh."""
        with self._lock:
            if self._misses.get(link.identity, (None, 0))[0] == link.link_version:
                del self._misses[link.identity]

    def forget(self, identity: SessionIdentity) -> None:
        """Drop the session's streak (its link is gone)."""
        with self._lock:
            self._misses.pop(identity, None)


class Publication:
    """The gate between a pass and the store: once closed, no result is published (SPEC §13).

    `stop()` closes it while holding the lock, so a publication in flight completes first and none
    starts afterwards.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def attempt(self) -> Iterator[bool]:
        """Hold the gate for one publication; yields False once closed."""
        with self._lock:
            yield not self._closed

    def close(self) -> None:
        """Refuse every later publication; waits for one in flight."""
        with self._lock:
            self._closed = True

    @property
    def closed(self) -> bool:
        """Whether publications are refused."""
        return self._closed


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


def _log_failure(what: str, name: str, exc: BaseException) -> None:
    logger.warning(
        "sessionwatch: upstream %s failed (%s=%r error=%s)",
        what,
        "catalog_id" if what == "provider" else "session_key",
        name,
        type(exc).__name__,
        extra={"upstream": what, "subject": name, "error": type(exc).__name__},
    )


class UpstreamPass:
    """One monitor pass over a `SessionWatch` (SPEC §10)."""

    def __init__(
        self,
        watch: SessionWatch,
        providers: Mapping[str, UpstreamProvider],
        transcripts: Transcripts | None,
        publication: Publication,
    ) -> None:
        self._watch = watch
        self._providers = providers
        self._transcripts = transcripts
        self._publication = publication
        self._tally = _Tally()

    def run(self) -> TickReport:
        """Probe every watched link once; publish what the answers call for."""
        store = self._watch.store
        keys = Counter(link.session_key for link in store.upstream_links(watched_only=False))
        by_catalog: dict[str, list[UpstreamLinkState]] = defaultdict(list)
        for link in store.upstream_links(watched_only=True):
            if keys[link.session_key] > 1:  # one key under several agent ids: ownership unclear
                self._tally.ambiguous.append(link.session_key)
            elif self._watch.active_runs.active(link.identity):  # the marker waits for the run
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
                _log_failure("link", link.session_key, exc)
                self._tally.failed_links.append(link.session_key)
        scanned = [s for s in scanned if s.session.known]
        if not scanned:
            return  # a provider is never asked about nothing
        probes = [s.link.probe(s.own_texts) for s in scanned]
        self._tally.probed += len(probes)
        try:
            answers = list(provider.check_upstream_activity(probes))
        except Exception as exc:  # noqa: BLE001 - a failing provider fails its own catalog only
            _log_failure("provider", catalog_id, exc)
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
                _log_failure("link", item.link.session_key, exc)
                self._tally.failed_links.append(item.link.session_key)

    def _prepare(self, link: UpstreamLinkState) -> _Scanned:
        generation = self._watch.active_runs.generation(link.identity)
        session = self._watch.store.session(link.identity) or SessionState(
            session_key=link.session_key, agent_id=link.agent_id
        )
        return _Scanned(link, session, own_recent_texts(self._transcripts, link), generation)

    def _settle(self, item: _Scanned, answer: UpstreamActivity | UpstreamMissing | None) -> None:
        """Judge one answer and publish its verdict, unless the monitor stopped meanwhile."""
        link, key = item.link, item.link.session_key
        streaks = self._watch.upstream_streaks
        with self._publication.attempt() as allowed:
            if not allowed:
                self._tally.discarded.append(key)
                return
            run_started = self._watch.active_runs.started_since(link.identity, item.generation)
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
        outcome, signal = self._watch.apply_upstream_verdict(link, verdict, session=item.session)
        if outcome == "aborted":
            self._tally.aborted.append(key)
            return
        if outcome == "missing":
            self._watch.upstream_streaks.forget(link.identity)
            if signal is not None:
                self._tally.missing.append(signal)
            return
        self._watch.upstream_streaks.reset(link)
        self._tally.advanced += 1
        if signal is not None:
            self._tally.recorded.append(signal)


class MonitorHandle:
    """A running upstream monitor (`SessionWatch.start_upstream_monitor`); `stop()` ends it."""

    def __init__(
        self, tick: Callable[[Publication], TickReport], *, interval: float, initial_delay: float
    ) -> None:
        self._tick = tick
        self._interval = interval
        self._initial_delay = initial_delay
        self._publication = Publication()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._ticks = 0
        self._last: TickReport | None = None
        self._thread = threading.Thread(target=self._run, name="sessionwatch-upstream", daemon=True)

    def start(self) -> Self:
        """Begin ticking: the first pass after `initial_delay`, then one every `interval`."""
        self._thread.start()
        return self

    def _run(self) -> None:
        delay = self._initial_delay
        while not self._stopping.wait(delay):
            try:
                report = self._tick(self._publication)
            except Exception as exc:  # noqa: BLE001 - one failed pass never ends the monitor
                _log_failure("pass", "*", exc)
            else:
                with self._lock:
                    self._ticks += 1
                    self._last = report
            delay = self._interval

    def stop(self, timeout: float | None = None) -> bool:
        """Stop ticking; nothing is published after this returns.

        Waits for a pass in flight up to `timeout` (default: one interval); a provider still
        answering after that is abandoned and its answers are discarded. Returns True when the
        monitor thread has ended.
        """
        self._stopping.set()
        self._publication.close()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(self._interval if timeout is None else timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        """Whether the monitor thread is alive."""
        return self._thread.is_alive()

    @property
    def ticks(self) -> int:
        """How many passes completed."""
        with self._lock:
            return self._ticks

    @property
    def last_report(self) -> TickReport | None:
        """The report of the last completed pass."""
        with self._lock:
            return self._last

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
