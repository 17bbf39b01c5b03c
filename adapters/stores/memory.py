"""`memory://`: eventsourcing's POPO event store with the read models as one immutable value.

A write works on a private copy of the read model and publishes it by swapping one reference after
the events were inserted, so readers never see half of a transaction (ADR-0005). The read model is
evolved by the pure projection itself: this store is the reference the SQL stores are checked against.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.popo import POPOApplicationRecorder

from sessionwatch.adapters.stores.archive import JsonlArchive
from sessionwatch.adapters.stores.mapper import (
    CHECKPOINT_TOPICS,
    STORE_STREAM_ID,
    cursor_stream_id,
    decode,
    digest_stream_id,
    link_stream_id,
    replay,
    session_stream_id,
    to_stored,
)
from sessionwatch.adapters.stores.port import (
    HistoryTail,
    PruneCounts,
    StoredHistory,
    StoreNotEmptyError,
    SweepCounts,
)
from sessionwatch.domain import session
from sessionwatch.domain.digest import DigestEvent, DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import Retention, compaction_due
from sessionwatch.domain.session import SessionEvent, SessionState, SignalRecorded
from sessionwatch.domain.signals import NOTIFYING_KINDS, SignalKind
from sessionwatch.domain.upstream import LinkEvent, UpstreamLinkState
from sessionwatch.domain.watch_cursor import (
    CursorEvent,
    CursorKey,
    CursorState,
    MaterialSignalSeen,
    NoticesSwept,
)
from sessionwatch.projections.models import SessionStatus, StateChange
from sessionwatch.projections.read_model import (
    ReadModel,
    apply_cursor_facts,
    evolve_read_model,
    fold,
    implied_facts,
    plan_sweep,
)
from sessionwatch.projections.retention import plan_prune, prune
from sessionwatch.projections.status import build_status, page_after


class MemoryEventRecorder(POPOApplicationRecorder):
    """eventsourcing's POPO recorder keyed by notification id, so events can be deleted.

    POPO keeps events in a list whose positions are the notification ids; deleting from it would
    renumber every later event. Here ids come from a counter and survive deletion (ADR-0006, 0008).
    """

    def __init__(self) -> None:
        super().__init__()
        self._by_id: dict[int, StoredEvent] = {}
        self._ids: list[int] = []  # ascending
        self._last_id = 0

    def _update_table(self, stored_events: Sequence[StoredEvent], **_: object) -> Sequence[int] | None:
        ids = []
        for s in stored_events:
            self._last_id += 1
            self._by_id[self._last_id] = s
            self._ids.append(self._last_id)
            self._stored_events_index[str(s.originator_id)][s.originator_version] = self._last_id
            ids.append(self._last_id)
        return ids

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        """A stream's events by version (the POPO semantics over the id-keyed table)."""
        with self._database_lock:
            index = self._stored_events_index[str(originator_id)]
            versions = sorted(v for v in index if (gt is None or v > gt) and (lte is None or v <= lte))
            if desc:
                versions.reverse()
            return [self._by_id[index[v]] for v in versions[:limit]]

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        """Notifications in id order from `start`."""
        with self._database_lock:
            first = 1 if start is None else (start if inclusive_of_start else start + 1)
            results: list[Notification] = []
            for nid in self._ids[bisect.bisect_left(self._ids, first) :]:
                if stop is not None and nid > stop:
                    break
                s = self._by_id[nid]
                if topics and s.topic not in topics:
                    continue
                results.append(
                    Notification(
                        id=nid,
                        originator_id=s.originator_id,
                        originator_version=s.originator_version,
                        topic=s.topic,
                        state=s.state,
                    )
                )
                if len(results) == limit:
                    break
            return results

    def max_notification_id(self) -> int | None:
        """The highest id ever assigned (ids are never reused)."""
        return self._last_id or None

    def all_events(self) -> list[tuple[int, StoredEvent]]:
        """Every stored event with its id, in id order."""
        with self._database_lock:
            return [(nid, self._by_id[nid]) for nid in self._ids]

    def stored_event(self, notification_id: int) -> StoredEvent | None:
        """One stored event by id."""
        return self._by_id.get(notification_id)

    def delete_before(self, notification_id: int, keep: set[int]) -> int:
        """Delete every event with a lower id, except `keep`; return how many were deleted."""
        with self._database_lock:
            doomed = [nid for nid in self._ids if nid < notification_id and nid not in keep]
            for nid in doomed:
                s = self._by_id.pop(nid)
                versions = self._stored_events_index[str(s.originator_id)]
                versions.pop(s.originator_version, None)
                if not versions:
                    del self._stored_events_index[str(s.originator_id)]
            gone = set(doomed)
            self._ids = [nid for nid in self._ids if nid not in gone]
            return len(doomed)

    def __len__(self) -> int:
        return len(self._ids)


def _cursors_of(model: ReadModel, watcher: str, *, pending_only: bool) -> list[CursorState]:
    found = [c for c in model.all_cursors() if c.watcher == watcher and (c.pending or not pending_only)]
    return sorted(found, key=lambda c: (c.target_key, c.target_agent_id))


class _MemoryWrite:
    def __init__(self, store: MemorySignalStore) -> None:
        self._store = store
        self.model = store.model
        self.next = store.last_sequence()
        self.stored: list[StoredEvent] = []
        self.signal_at: dict[int, int] = {}  # position in `stored` -> the signal's sequence
        self.checkpoint_at: int | None = None  # position in `stored` of a SignalsPruned event
        self.pruned_at_ms: int | None = None
        self.versions: dict[UUID, int] = {}

    def session(self, identity: SessionIdentity) -> SessionState:
        return self.model.sessions.get(identity) or session.initial(identity)

    def signal_by_dedupe(self, dedupe_key: str) -> SignalRecorded | None:
        return self._store.find_dedupe(self.model, dedupe_key)

    def next_sequence(self) -> int:
        self.next += 1
        return self.next

    def _store_event(self, stream: UUID, event: DomainEvent) -> None:
        version = self.versions.get(stream, self._store.stream_version(stream)) + 1
        self.versions[stream] = version
        if isinstance(event, SignalRecorded):
            self.signal_at[len(self.stored)] = event.sequence
        self.stored.append(to_stored(stream, version, event))

    def append(self, identity: SessionIdentity, events: Sequence[SessionEvent]) -> list[MaterialSignalSeen]:
        stream = session_stream_id(identity)
        opened: list[MaterialSignalSeen] = []
        for event in events:
            self._store_event(stream, event)
            notifying = self._store.notifying
            opened.extend(
                f
                for f in implied_facts(self.model, event, notifying)
                if isinstance(f, MaterialSignalSeen) and f.notified == f.sequence
            )
            self.model = evolve_read_model(self.model, event, notifying)
        return opened

    def append_signals(self, signals: Sequence[SignalRecorded]) -> list[MaterialSignalSeen]:
        opened: list[MaterialSignalSeen] = []
        for signal in signals:
            opened.extend(self.append(signal.identity, [signal]))
        return opened

    def sweep(self, at_ms: int) -> SweepCounts:
        plan = plan_sweep(self.model, at_ms)
        if plan.facts:
            event = NoticesSwept(at_ms=at_ms)
            self._store_event(STORE_STREAM_ID, event)
            self.model = evolve_read_model(self.model, event)
        woken = tuple(c.key for c in plan.republished if not c.ambient)
        return SweepCounts(tuple(c.key for c in plan.republished), len(plan.facts), plan.skipped, woken)

    def cursor(self, key: CursorKey) -> CursorState | None:
        return self.model.cursor(key)

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        return _cursors_of(self.model, watcher, pending_only=pending_only)

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        return bool(self.model.cursors.get(identity))

    def append_cursor(
        self,
        key: CursorKey,
        events: Sequence[CursorEvent],
        *,
        before: CursorState | None,  # noqa: ARG002 - the private read model already holds it
    ) -> None:
        stream = cursor_stream_id(key)
        for event in events:
            self._store_event(stream, event)
        self.model = replace(self.model, cursors=apply_cursor_facts(self.model.cursors, events))

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        return self.model.links.get(identity)

    def append_link(self, identity: SessionIdentity, events: Sequence[LinkEvent]) -> None:
        stream = link_stream_id(identity)
        for event in events:
            self._store_event(stream, event)
            self.model = evolve_read_model(self.model, event)

    def digest(self, identity: SessionIdentity) -> DigestState | None:
        return self.model.digests.get(identity)

    def append_digest(self, identity: SessionIdentity, events: Sequence[DigestEvent]) -> None:
        stream = digest_stream_id(identity)
        for event in events:
            self._store_event(stream, event)
            self.model = evolve_read_model(self.model, event)

    def prune(self, now_ms: int, policy: Retention, archive: JsonlArchive | None) -> PruneCounts:
        outcome = prune(self.model, plan_prune(self.model, now_ms, policy))
        archived = 0
        if archive is not None:
            archived = archive.append(self._store.archive_rows(s.sequence for s in outcome.removed))
        self.model = outcome.model
        self.pruned_at_ms = now_ms
        counts = PruneCounts(
            cutoffs=outcome.event.cutoffs,
            signals_removed=len(outcome.removed),
            sessions_stamped=len(outcome.stamped),
            cursors_expired=len(outcome.expired),
            events_deleted=0,
            archived=archived,
        )
        retained = {s.sequence for log in self.model.signals.values() for s in log}
        stored = [*self._store.recorder.all_events(), *((None, s) for s in self.stored)]
        kept_signals = sum(
            1 for seq in (*self._store.signal_ids, *self.signal_at.values()) if seq in retained
        )
        replaceable = sum(1 for _, s in stored if s.topic not in CHECKPOINT_TOPICS) - kept_signals
        cursors = sum(len(by) for by in self.model.cursors.values())
        due = compaction_due(replaceable, len(self.model.sessions) + cursors + len(self.model.links))
        if not (counts.signals_removed or counts.cursors_expired or due):
            return counts  # nothing changed and too little to compact: a prune that writes no event
        self.checkpoint_at = len(self.stored)
        self._store_event(STORE_STREAM_ID, outcome.event)
        return replace(counts, events_deleted=len(stored) - kept_signals)


class _MemorySnapshot:
    """A `StoreSnapshot` of the memory store."""

    def __init__(self, events: list[StoredEvent], model: ReadModel) -> None:
        self._events = events
        self._model = model

    def replay(self) -> Iterator[DomainEvent]:
        return (decode(s.topic, s.state) for s in self._events)

    def read_model(self, *, like: ReadModel | None = None) -> ReadModel:  # noqa: ARG002 - no rows to read
        return self._model

    def tables(self) -> ReadModel:
        return replace(self._model, signals={}, dedupe={})

    def dedupe(self) -> Mapping[str, tuple[SessionIdentity, int]]:
        return self._model.dedupe

    def signals(self) -> Iterator[SignalRecorded]:
        """Every signal in ascending sequence, named as the log holding it names it (as a row is)."""
        placed = [
            s
            if s.identity == identity
            else s.model_copy(update={"session_key": identity.session_key, "agent_id": identity.agent_id})
            for identity, log in self._model.signals.items()
            for s in log
        ]
        return iter(sorted(placed, key=lambda s: s.sequence))


class MemorySignalStore:
    """The in-memory store: the reference implementation the other stores are checked against."""

    def __init__(self) -> None:
        self.recorder = MemoryEventRecorder()
        self.model = ReadModel()
        self.signal_ids: dict[int, int] = {}  # a stored signal's sequence -> its notification id
        self._versions: dict[UUID, int] = {}  # newest version per stream; never goes down
        self._last_sequence = 0
        self._last_prune_ms: int | None = None
        self._lock = threading.RLock()
        self.notifying = NOTIFYING_KINDS
        """The kinds that notify watchers (`notify_terminal_runs` widens it, `set_notifying_kinds`)."""

    def set_notifying_kinds(self, kinds: frozenset[SignalKind]) -> None:
        """Which kinds notify watchers on this store from now on (the façade's setting)."""
        self.notifying = kinds

    @staticmethod
    def find_dedupe(model: ReadModel, dedupe_key: str) -> SignalRecorded | None:
        """The retained signal carrying `dedupe_key` in `model`."""
        found = model.dedupe.get(dedupe_key)
        if found is None:
            return None
        identity, sequence = found
        log = model.signals.get(identity, ())
        page, _ = page_after(log, sequence - 1, 1)
        return page[0] if page else None

    def stream_version(self, stream_id: UUID) -> int:
        """The newest version written on a stream, 0 for a new stream (kept even once pruned)."""
        return self._versions.get(stream_id, 0)

    def last_sequence(self) -> int:
        """The counter: the highest sequence ever allocated."""
        return self._last_sequence

    def last_prune_ms(self) -> int | None:
        """When the last prune ran."""
        return self._last_prune_ms

    def stored_event_count(self) -> int:
        """How many stored events the recorder holds."""
        return len(self.recorder)

    def archive_rows(self, sequences: Iterable[int]) -> list[tuple[int, UUID, int, str, bytes]]:
        """The stored events of signals, for the archive."""
        rows = []
        for sequence in sequences:
            nid = self.signal_ids.get(sequence)
            stored = self.recorder.stored_event(nid) if nid is not None else None
            if stored is not None and nid is not None:
                stream = stored.originator_id
                rows.append((nid, UUID(str(stream)), stored.originator_version, stored.topic, stored.state))
        return rows

    @contextmanager
    def write(self) -> Iterator[_MemoryWrite]:
        """An exclusive write; the new read model is published only after the events are stored."""
        with self._lock:
            tx = _MemoryWrite(self)
            yield tx
            ids = list(self.recorder.insert_events(tx.stored) or []) if tx.stored else []
            for position, sequence in tx.signal_at.items():
                self.signal_ids[sequence] = ids[position]
            if tx.checkpoint_at is not None:
                retained = {s.sequence for log in tx.model.signals.values() for s in log}
                self.signal_ids = {q: nid for q, nid in self.signal_ids.items() if q in retained}
                self.recorder.delete_before(ids[tx.checkpoint_at], keep=set(self.signal_ids.values()))
            if tx.pruned_at_ms is not None:
                self._last_prune_ms = tx.pruned_at_ms
            self._versions.update(tx.versions)
            self.model = tx.model
            self._last_sequence = tx.next

    def session(self, identity: SessionIdentity) -> SessionState | None:
        """The state of a known identity."""
        return self.model.sessions.get(identity)

    def sessions(self) -> list[SessionState]:
        """Every known identity, ordered by key then agent id."""
        return sorted(self.model.sessions.values(), key=lambda s: (s.session_key, s.agent_id))

    def status(
        self, identity: SessionIdentity, changes_since: int | None, limit: int
    ) -> SessionStatus | None:
        """`session_status` over one snapshot of the read model."""
        model = self.model
        state = model.sessions.get(identity)
        if state is None:
            return None
        if changes_since is None:
            return build_status(state, None)
        log = model.signals.get(identity, ())
        page, truncated = page_after(log, changes_since, limit)
        first = log[0].sequence if log else None
        changes = [StateChange.from_event(s) for s in page]
        return build_status(state, changes_since, changes, truncated=truncated, first_retained=first)

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor, or None."""
        return self.model.cursor(key)

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors, ordered by target."""
        return _cursors_of(self.model, watcher, pending_only=pending_only)

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        """Whether any cursor targets the identity."""
        return bool(self.model.cursors.get(identity))

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        """The identity's upstream link, a tombstone included."""
        return self.model.links.get(identity)

    def digest(self, identity: SessionIdentity) -> DigestState | None:
        """The main session's pending creation digest."""
        return self.model.digests.get(identity)

    def upstream_links(self, *, watched_only: bool) -> list[UpstreamLinkState]:
        """Every active link, only cursor targets when `watched_only`."""
        model = self.model
        return [link for link in model.active_links() if not watched_only or model.cursors.get(link.identity)]

    def read_model(self, *, like: ReadModel | None = None) -> ReadModel:  # noqa: ARG002 - no rows to read
        """The current read model (an immutable value)."""
        return self.model

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event in commit order."""
        return replay(self.recorder)

    @contextmanager
    def snapshot(self) -> Iterator[_MemorySnapshot]:
        """The events and the read model one committed write left, taken together under the lock."""
        with self._lock:
            events = [stored for _, stored in self.recorder.all_events()]
            model = self.model
        yield _MemorySnapshot(events, model)

    @contextmanager
    def stored_history(self) -> Iterator[StoredHistory]:
        """The event store, counter and stream versions as one committed write left them."""
        with self._lock:
            events = self.recorder.all_events()
            versions = dict(self._versions)
            sequence = self._last_sequence
        rows = (
            (nid, UUID(str(s.originator_id)), s.originator_version, s.topic, s.state) for nid, s in events
        )
        yield StoredHistory(sequence, versions, rows)

    def load_history(
        self,
        events: Iterable[tuple[UUID, int, DomainEvent]],
        tail: HistoryTail | Callable[[], HistoryTail],
    ) -> int:
        """Bulk-load an imported history into this empty store: insert the events, publish the read models.

        The signals and dedupe index are the fold's of the events; the rest is `tail`'s model.
        """
        with self._lock:
            if self._last_sequence or len(self.recorder) or self._versions or self.model != ReadModel():
                raise StoreNotEmptyError(
                    f"the store already holds history (sequence counter at {self._last_sequence});"
                    " import into a new, empty store"
                )
            loaded = list(events)  # a memory store holds them all anyway
            end = tail() if callable(tail) else tail
            stored = [to_stored(stream, version, event) for stream, version, event in loaded]
            ids = list(self.recorder.insert_events(stored) or []) if stored else []
            versions = dict(end.stream_versions)
            for nid, (stream, version, event) in zip(ids, loaded, strict=True):
                versions[stream] = max(versions.get(stream, 0), version)
                if isinstance(event, SignalRecorded):
                    self.signal_ids[event.sequence] = nid
            folded = fold(event for _, _, event in loaded)
            self._versions = versions
            self.model = replace(end.model, signals=folded.signals, dedupe=folded.dedupe)
            self._last_sequence = end.sequence
            self._last_prune_ms = end.last_prune_ms
            return sum(len(log) for log in folded.signals.values())

    def close(self) -> None:
        """Nothing to release."""
