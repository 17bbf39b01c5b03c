"""`memory://`: eventsourcing's POPO event store with the read models as one immutable value.

A write works on a private copy of the read model and publishes it by swapping one reference after
the events were inserted, so readers never see half of a transaction (ADR-0005). The read model is
evolved by the pure projection itself: this store is the reference the SQL stores are checked against.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.popo import POPOApplicationRecorder

from sessionwatch.adapters.mapper import cursor_stream_id, decode, session_stream_id, to_stored
from sessionwatch.domain import session
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SessionEvent, SessionState, SignalRecorded
from sessionwatch.domain.watch_cursor import CursorEvent, CursorFact, CursorKey, CursorState
from sessionwatch.projections.models import SessionStatus, StateChange
from sessionwatch.projections.read_model import (
    ReadModel,
    apply_cursor_facts,
    evolve_read_model,
    implied_facts,
)
from sessionwatch.projections.status import build_status, page_after

_REPLAY_PAGE = 1000


def _cursors_of(model: ReadModel, watcher: str, *, pending_only: bool) -> list[CursorState]:
    found = [c for c in model.all_cursors() if c.watcher == watcher and (c.pending or not pending_only)]
    return sorted(found, key=lambda c: (c.target_key, c.target_agent_id))


class _MemoryWrite:
    def __init__(self, store: MemorySignalStore) -> None:
        self._store = store
        self.model = store.model
        self.next = store.last_sequence()
        self.stored: list[StoredEvent] = []
        self._versions: dict[UUID, int] = {}

    def session(self, identity: SessionIdentity) -> SessionState:
        return self.model.sessions.get(identity) or session.initial(identity)

    def signal_by_dedupe(self, dedupe_key: str) -> SignalRecorded | None:
        return self._store.find_dedupe(self.model, dedupe_key)

    def next_sequence(self) -> int:
        self.next += 1
        return self.next

    def _store_event(self, stream: UUID, event: DomainEvent) -> None:
        version = self._versions.get(stream)
        if version is None:
            version = self._store.stream_version(stream)
        self._versions[stream] = version + 1
        self.stored.append(to_stored(stream, version + 1, event))

    def append(self, identity: SessionIdentity, events: Sequence[SessionEvent]) -> list[CursorFact]:
        stream = session_stream_id(identity)
        facts: list[CursorFact] = []
        for event in events:
            self._store_event(stream, event)
            facts.extend(implied_facts(self.model, event))
            self.model = evolve_read_model(self.model, event)
        return facts

    def cursor(self, key: CursorKey) -> CursorState | None:
        return self.model.cursor(key)

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        return _cursors_of(self.model, watcher, pending_only=pending_only)

    def open_cursors(self) -> list[CursorState]:
        return [c for c in self.model.all_cursors() if c.material > c.last_seen]

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


class MemorySignalStore:
    """The in-memory store: the reference implementation the other stores are checked against."""

    def __init__(self) -> None:
        self.recorder = POPOApplicationRecorder()
        self.model = ReadModel()
        self._last_sequence = 0
        self._lock = threading.RLock()

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
        """The newest version stored on a stream, 0 for a new stream."""
        newest = self.recorder.select_events(stream_id, desc=True, limit=1)
        return newest[0].originator_version if newest else 0

    def last_sequence(self) -> int:
        """The counter: the highest sequence ever allocated."""
        return self._last_sequence

    @contextmanager
    def write(self) -> Iterator[_MemoryWrite]:
        """An exclusive write; the new read model is published only after the events are stored."""
        with self._lock:
            tx = _MemoryWrite(self)
            yield tx
            if tx.stored:
                self.recorder.insert_events(tx.stored)
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

    def read_model(self) -> ReadModel:
        """The current read model (an immutable value)."""
        return self.model

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event in insertion order."""
        start = 1
        while True:
            page = self.recorder.select_notifications(start, _REPLAY_PAGE)
            if not page:
                return
            for notification in page:
                yield decode(notification.topic, notification.state)
            start = page[-1].id + 1

    def close(self) -> None:
        """Nothing to release."""
