"""PostgreSQL's side of a write transaction (its `Dialect`), and the cursor reads both its sides share.

Every writer reads the counter row under the write lock and writes it once before the commit; the
notices a write opened are NOTIFYed to the other processes with it (ADR-0009).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from psycopg import Cursor
from psycopg.rows import TupleRow

from sessionwatch.adapters.stores.mapper import encode
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.sql import postgres_schema as sql
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.dialect import ArchiveRow
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import is_subagent_key
from sessionwatch.domain.watch_cursor import CursorKey, CursorState


def cursors_of(c: Cursor, watcher: str, *, pending_only: bool) -> list[CursorState]:
    """The watcher's cursors (only pending ones when `pending_only`), ordered by target."""
    c.execute(sql.SELECT_PENDING_OF if pending_only else sql.SELECT_CURSORS_OF, (watcher,))
    return [sql_rows.cursor_state(row) for row in c.fetchall()]


def cursor(c: Cursor, key: CursorKey) -> CursorState | None:
    """One cursor, or None."""
    c.execute(sql.SELECT_CURSOR, (key.target_key, key.target_agent_id, key.watcher))
    row = c.fetchone()
    return sql_rows.cursor_state(row) if row is not None else None


def one(c: Cursor) -> TupleRow:
    """The one row the last statement returned (aggregates and counters always return one)."""
    row = c.fetchone()
    if row is None:  # aggregates and counters always return a row
        raise StoreError("PostgreSQL returned no row where one was due")
    return row


class PostgresDialect:
    """PostgreSQL's side of one transaction holding the write lock: the counter and the wakes it owes."""

    sql = sql

    def __init__(self, counter: int, wake_payload: Callable[[str, str], str]) -> None:
        self._counter = self._next = counter
        self._wake_payload = wake_payload
        self._wakes: dict[tuple[str, str], None] = {}

    def stream_key(self, stream: UUID) -> object:
        """A stream id as psycopg binds it: the UUID itself."""
        return stream

    def insert_event(self, raw: Cursor, stream_key: object, version: int, event: DomainEvent) -> int:
        """Insert the event; its `bigserial` notification id comes back."""
        raw.execute(sql.INSERT_EVENT, (stream_key, version, event.type, encode(event)))
        return int(one(raw)[0])

    def has_queued_events(self) -> bool:
        """Events are inserted at once: none wait."""
        return False

    def write_queued_events(self, raw: Cursor) -> None:
        """Events are inserted at once: nothing to write."""
        del raw

    def next_sequence(self, raw: Cursor) -> int:
        """The next sequence after the counter row read under the lock; written once, in `finish`."""
        del raw
        self._next += 1
        return self._next

    def cursor(self, statement: Cursor, key: CursorKey) -> CursorState | None:
        """One cursor as of this transaction."""
        return cursor(statement, key)

    def cursors_of(self, statement: Cursor, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors as of this transaction."""
        return cursors_of(statement, watcher, pending_only=pending_only)

    def archive_row(self, row: Sequence[Any]) -> ArchiveRow:
        """A stored-event row, its body as bytes."""
        nid, stream, version, topic, body = row
        return nid, stream, version, topic, bytes(body)

    def bulk_insert(
        self, statement: Cursor, table: str, columns: str, rows: Sequence[Sequence[object]]
    ) -> None:
        """`COPY ... FROM STDIN`."""
        if rows:
            with statement.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    def before_load(self, statement: Cursor) -> None:
        """`COPY` fills the indexes as it goes: nothing to drop."""
        del statement

    def build_load_indexes(self, statement: Cursor) -> None:
        """Nothing was dropped: nothing to build."""
        del statement

    def after_load(self, statement: Cursor, last_notification_id: int) -> bool:
        """Move the `bigserial` past the loaded ids; the loaded tables are analyzed after the commit."""
        if not last_notification_id:
            return False
        statement.execute(sql.SET_NOTIFICATION_ID, (last_notification_id,))
        return True

    def before_deleting_signals(self, statement: Cursor) -> None:
        """The counter row is written by every write that takes a sequence: no floor to raise."""
        del statement

    def owe_wake(self, watcher: str, target_key: str) -> None:
        """Owe `watcher` a cross-process wake (ADR-0009); subagents are never woken."""
        if not is_subagent_key(watcher):
            self._wakes[watcher, target_key] = None

    def finish(self, statement: Cursor) -> None:
        """Write the counter once, and NOTIFY the wakes (delivered only if the commit succeeds)."""
        if self._next != self._counter:
            statement.execute(sql.WRITE_COUNTER, (self._next,))
        if self._wakes:
            payloads = [self._wake_payload(watcher, target) for watcher, target in self._wakes]
            statement.execute(sql.NOTIFY_WAKES, (sql.WAKE_CHANNEL, payloads))

    def keep(self, *, wholesale: bool) -> None:
        """Nothing outlives a transaction: every writer reads the counter under the lock."""
        del wholesale
