"""The store port: an event store plus its read models, written in one transaction.

`SignalStore` implementations (`MemorySignalStore`, `SqliteSignalStore`, `PostgresSignalStore`)
must behave identically; the contract suite in `tests/contract` runs against each (ADR-0005).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable
from uuid import UUID

from sessionwatch.adapters.stores.archive import JsonlArchive
from sessionwatch.domain.digest import DigestEvent, DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import PruneCutoffs, Retention
from sessionwatch.domain.session import SessionEvent, SessionState, SignalRecorded
from sessionwatch.domain.signals import SignalKind
from sessionwatch.domain.upstream import LinkEvent, UpstreamLinkState
from sessionwatch.domain.watch_cursor import CursorEvent, CursorKey, CursorState, MaterialSignalSeen
from sessionwatch.projections.models import SessionStatus
from sessionwatch.projections.read_model import ReadModel


class StoreError(RuntimeError):
    """The store failed (locked, full, read-only, vanished); nothing of the operation was written."""

    for_now: bool = False
    """A write that cannot run for now (the write lock held elsewhere past its timeout, a full disk),
    while reads still work: `open()` defers its restart sweep rather than fail (ADR-0064)."""


def write_unavailable(message: str) -> StoreError:
    """The `StoreError` of a write that cannot run for now (`for_now`); its class stays `StoreError`."""
    error = StoreError(message)
    error.for_now = True
    return error


def one_line_error(exc: BaseException) -> str:
    """`Class: message` on one line, as the command line prints every error.

    A driver's further lines (libpq's tab-indented hints, a query's `LINE n:`) are joined by `; `;
    a line holding only the caret that points into the query is dropped.
    """
    lines = [line.strip() for line in str(exc).splitlines()]
    kept = [line for line in lines if line and line.strip("^ ")]
    return f"{type(exc).__name__}: {'; '.join(kept)}".strip()


class StoreNotEmptyError(ValueError):
    """`load_history` found history in the store: an import only ever goes into a new, empty store."""


@dataclass(frozen=True, slots=True)
class HistoryTail:
    """What a bulk load writes once its events are in: read models, counter, stream versions, last prune.

    `model` gives the sessions, cursors, upstream links and digests (its signals and dedupe index are not
    read: the retained signals follow from the loaded events themselves).
    """

    model: ReadModel
    sequence: int
    stream_versions: Mapping[UUID, int]
    last_prune_ms: int | None


LOAD_CHUNK = 1000
"""A bulk load writes its events and signal rows this many at a time (bounded memory, one transaction)."""

StoredRow: TypeAlias = tuple[int, UUID, int, str, bytes]
"""One stored event as the event store holds it: notification id, stream id, version, topic, body."""


class StoreSnapshot(Protocol):
    """One consistent read of a store: its events and its read models as of the same instant."""

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event in commit order (consume it before `read_model`)."""
        ...

    def read_model(self, *, like: ReadModel | None = None) -> ReadModel:
        """The stored read models (sharing `like`'s equal values, as `SignalStore.read_model`)."""
        ...

    def tables(self) -> ReadModel:
        """The stored sessions, cursors and upstream links, without the signal log and dedupe index."""
        ...

    def signals(self) -> Iterator[SignalRecorded]:
        """Every stored signal in ascending sequence, read a page at a time."""
        ...

    def dedupe(self) -> Mapping[str, tuple[SessionIdentity, int]] | None:
        """The dedupe index where the store keeps it apart from its signals, else None (the rows are it)."""
        ...


@dataclass(frozen=True, slots=True)
class StoredHistory:
    """One consistent read of the whole event store, for an export.

    `sequence` is the counter (the highest sequence ever allocated, ADR-0006); `stream_versions`
    the newest version of every stream the store knows, compacted or deleted ones included
    (ADR-0008); `events` every stored event in notification order, read lazily from the same
    snapshot while the context that gave this value is open.
    """

    sequence: int
    stream_versions: Mapping[UUID, int]
    events: Iterator[StoredRow]


@dataclass(frozen=True, slots=True)
class PruneCounts:
    """What one prune removed or wrote."""

    cutoffs: PruneCutoffs
    signals_removed: int
    sessions_stamped: int
    cursors_expired: int
    events_deleted: int
    archived: int


@dataclass(frozen=True, slots=True)
class SweepCounts:
    """What one sweep did: the open notices it re-publishes, how many it re-froze, how many it skipped.

    `woken` are the re-published notices owed a wake: all but the ambient ones (queue-only).
    """

    republished: tuple[CursorKey, ...]
    refrozen: int
    skipped: int
    woken: tuple[CursorKey, ...]


class WriteTransaction(Protocol):
    """One atomic write: what it reads reflects what it appended; all of it commits or none."""

    def session(self, identity: SessionIdentity) -> SessionState:
        """The identity's current state (`initial` when unknown)."""
        ...

    def signal_by_dedupe(self, dedupe_key: str) -> SignalRecorded | None:
        """The retained signal that carries `dedupe_key`, globally."""
        ...

    def next_sequence(self) -> int:
        """Allocate the next global sequence: above every sequence ever allocated (ADR-0006)."""
        ...

    def append(self, identity: SessionIdentity, events: Sequence[SessionEvent]) -> list[MaterialSignalSeen]:
        """Store the events on the identity's Session stream and apply them to every read model.

        Returns the notices the events opened (a cursor whose `N` moved to the signal): the
        watchers the shell wakes after the commit.
        """
        ...

    def append_signals(self, signals: Sequence[SignalRecorded]) -> list[MaterialSignalSeen]:
        """`append` of freshly decided signals of any sessions, stored in the order given.

        Returns the notices they opened, in the order of the signals that opened them.
        """
        ...

    def sweep(self, at_ms: int) -> SweepCounts:
        """The restart sweep at `at_ms`.

        Re-freezes every open notice of an existing watcher, recorded as one `NoticesSwept` event
        when anything changed.
        """
        ...

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor as of this transaction."""
        ...

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors (only those with `N > L` when `pending_only`), ordered by target."""
        ...

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        """Whether any registered cursor targets the identity (the human-message gate)."""
        ...

    def prune(self, now_ms: int, policy: Retention, archive: JsonlArchive | None) -> PruneCounts:
        """Prune the read models, record `SignalsPruned`, and truncate the event store.

        The stored events a replay no longer needs are deleted: everything before that event but
        the retained signals (ADR-0008).
        """
        ...

    def append_cursor(
        self, key: CursorKey, events: Sequence[CursorEvent], *, before: CursorState | None
    ) -> None:
        """Store the events on the pair's WatchCursor stream and apply them to the cursor view.

        `before` is the cursor as this transaction read it (the state the events were decided on).
        """
        ...

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        """The identity's upstream link as of this transaction, a tombstone included (ADR-0010)."""
        ...

    def append_link(self, identity: SessionIdentity, events: Sequence[LinkEvent]) -> None:
        """Store the events on the identity's UpstreamLink stream and apply them to the link view."""
        ...

    def digest(self, identity: SessionIdentity) -> DigestState | None:
        """The main session's pending creation digest as of this transaction (ADR-0047)."""
        ...

    def append_digest(self, identity: SessionIdentity, events: Sequence[DigestEvent]) -> None:
        """Store the events on the main session's Digest stream and apply them to the digest view."""
        ...


class SignalStore(Protocol):
    """An event store and the read models projected from it."""

    def write(self) -> AbstractContextManager[WriteTransaction]:
        """Begin an exclusive write transaction; it commits when the block exits cleanly."""
        ...

    def session(self, identity: SessionIdentity) -> SessionState | None:
        """The state of a known identity, else None."""
        ...

    def sessions(self) -> list[SessionState]:
        """Every known identity, ordered by key then agent id."""
        ...

    def status(
        self, identity: SessionIdentity, changes_since: int | None, limit: int
    ) -> SessionStatus | None:
        """`session_status` from one consistent read, or None for an unknown identity."""
        ...

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor, or None."""
        ...

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors (only pending ones when `pending_only`), ordered by target."""
        ...

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        """Whether any cursor targets the identity: some session watches it."""
        ...

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        """The identity's upstream link, a tombstone included, or None."""
        ...

    def upstream_links(self, *, watched_only: bool) -> list[UpstreamLinkState]:
        """Every active upstream link (only targets of a cursor when `watched_only`), by identity."""
        ...

    def digest(self, identity: SessionIdentity) -> DigestState | None:
        """The main session's pending creation digest, or None (ADR-0047)."""
        ...

    def last_prune_ms(self) -> int | None:
        """When the last prune ran (local clock, epoch ms), None if never."""
        ...

    def stored_event_count(self) -> int:
        """How many stored events the event store holds (it stays bounded, ADR-0008)."""
        ...

    def last_sequence(self) -> int:
        """The counter: the highest sequence ever allocated (ADR-0006)."""
        ...

    def stored_history(self) -> AbstractContextManager[StoredHistory]:
        """One consistent snapshot of the event store, its counter and its stream versions."""
        ...

    def load_history(
        self,
        events: Iterable[tuple[UUID, int, DomainEvent]],
        tail: HistoryTail | Callable[[], HistoryTail],
    ) -> int:
        """Bulk-load an imported history into this empty store in one transaction; count the signals kept.

        `events` are read once, lazily, and stored in order on their own streams and versions (new
        notification ids 1..n), `LOAD_CHUNK` at a time. The retained signals follow from them by the
        fold's rules (a `SignalRecorded` adds its signal, linked to its stored event; a
        `SessionDeleted` drops its identity's; a `SignalsPruned` drops what its cut-offs remove).
        Then `tail` (called once the events are exhausted, when it is a callable) gives the
        sessions, cursors and links to write exactly, the counter, and stream versions every stream
        keeps at least (so none is ever reused). Raises `StoreNotEmptyError`, writing nothing, when
        the store holds any history or has allocated a sequence; anything `events` or `tail` raises
        rolls the whole load back.
        """
        ...

    def read_model(self, *, like: ReadModel | None = None) -> ReadModel:
        """The stored read models, for comparison with a replay.

        With `like`, a stored row equal to `like`'s value may be read as that very value (an audit
        then compares by identity where they agree); the result is what is stored either way.
        """
        ...

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event in commit order."""
        ...

    def snapshot(self) -> AbstractContextManager[StoreSnapshot]:
        """One read of events and read models as of the same instant (what `audit` compares)."""
        ...

    def set_notifying_kinds(self, kinds: frozenset[SignalKind]) -> None:
        """Which kinds notify watchers on this store from now on (`signals.notifying_kinds`)."""
        ...

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...


@runtime_checkable
class CrossProcessWakes(Protocol):
    """A store shared by several processes that tells this one of notices opened elsewhere."""

    def listen_for_wakes(self, deliver: Callable[[str, str], None]) -> None:
        """Call `deliver(watcher_key, target_key)` for notices that other processes open, until `close()`.

        Returns once listening. After a lost connection it reconnects and delivers every pending
        notice, so no wake is missed; `deliver` may run on another thread (ADR-0009).
        """
        ...
