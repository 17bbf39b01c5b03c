"""What differs between the SQL stores inside one write transaction: the dialect object.

`SqlWrite` holds every rule and asks its dialect only how this driver binds a stream id, inserts a
stored event, takes sequences, bulk-loads a table, and what the store owes at the edges of a write
(SQLite raises its counter's floor before signal rows go; PostgreSQL notifies other processes).
One dialect object serves one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, Protocol, TypeAlias
from uuid import UUID

from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.signals import SignalKind
from sessionwatch.domain.watch_cursor import CursorKey, CursorState

ArchiveRow: TypeAlias = tuple[int, UUID, int, str, bytes]
"""A removed signal's stored-event row as the prune archive takes it."""

Cursor: TypeAlias = Any
"""A DB-API cursor of either driver (`sqlite3.Cursor`, `psycopg.Cursor`)."""


class Dialect(Protocol):
    """One SQL store's side of a write transaction."""

    @property
    def sql(self) -> ModuleType:
        """The store's schema module: the same statement names in each dialect."""
        ...

    def stream_key(self, stream: UUID) -> object:
        """How this driver binds a stream id."""
        ...

    def insert_event(self, raw: Cursor, stream_key: object, version: int, event: DomainEvent) -> int:
        """Insert (or queue) one stored event on the stream; return its notification id."""
        ...

    def has_queued_events(self) -> bool:
        """Whether `insert_event` queued stored events not yet written."""
        ...

    def write_queued_events(self, raw: Cursor) -> None:
        """Write the stored events `insert_event` queued, if any."""
        ...

    def next_sequence(self, raw: Cursor) -> int:
        """Allocate the next global sequence inside this transaction."""
        ...

    def cursor(self, statement: Cursor, key: CursorKey) -> CursorState | None:
        """One cursor as of this transaction."""
        ...

    def cursors_of(self, statement: Cursor, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors as of this transaction, ordered by target."""
        ...

    def archive_row(self, row: Sequence[Any]) -> ArchiveRow:
        """A removed signal's stored-event row as the archive takes it."""
        ...

    def bulk_insert(
        self, statement: Cursor, table: str, columns: str, rows: Sequence[Sequence[object]]
    ) -> None:
        """Insert many rows into an empty table in one go (`executemany`, `COPY`)."""
        ...

    def before_load(self, statement: Cursor) -> None:
        """Before a bulk load into the empty store: drop what the load would maintain row by row."""
        ...

    def build_load_indexes(self, statement: Cursor) -> None:
        """Build back what `before_load` dropped (before a delete needs it, and once the rows are in)."""
        ...

    def after_load(self, statement: Cursor, last_notification_id: int) -> bool:
        """What the driver needs once stored events were loaded with explicit ids; whether to analyze."""
        ...

    def before_deleting_signals(self, statement: Cursor) -> None:
        """What must happen before signal rows are deleted."""
        ...

    def owe_wake(self, watcher: str, target_key: str) -> None:
        """A notice this write opened, which another process sharing the store may have to wake."""
        ...

    def finish(self, statement: Cursor) -> None:
        """Before the commit, after everything queued was written."""
        ...

    def keep(self, *, wholesale: bool) -> None:
        """After the commit: remember what this transaction allocated (unless it changed rows wholesale)."""
        ...


class SqlTransaction(Protocol):
    """What the rule modules (`notices`, `prune`, `load`) use of the write transaction they run in."""

    raw: Cursor
    """The cursor for statements that touch no queued table."""
    dialect: Dialect
    sql: ModuleType
    vacuum_due: bool
    notifying: frozenset[SignalKind]
    """The kinds that notify watchers, the store's setting (`signals.notifying_kinds`)."""

    @property
    def statement(self) -> Cursor:
        """The cursor for any statement, with everything queued written first."""
        ...

    def one(self) -> Sequence[Any]:
        """The one row the last statement returned."""
        ...

    def store_event(self, stream: UUID, event: DomainEvent) -> tuple[int, int]:
        """Insert one stored event; its stream version and notification id."""
        ...

    def changed_wholesale(self) -> None:
        """Rows changed beyond what the transaction tracks: its caches go."""
        ...
