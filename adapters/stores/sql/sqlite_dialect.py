"""SQLite's side of a write transaction (its `Dialect`), and the cursor reads both its sides share.

Stored events are queued with explicit notification ids and written with the signal rows; the
counters a committed write advanced are remembered by the store's one writer (ADR-0018).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from sessionwatch.adapters.stores.mapper import encode
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql import sqlite_schema as sql
from sessionwatch.adapters.stores.sql.dialect import ArchiveRow
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.watch_cursor import CursorKey, CursorState


def cursors_of(c: sqlite3.Cursor, watcher: str, *, pending_only: bool) -> list[CursorState]:
    """The watcher's cursors (only pending ones when `pending_only`), ordered by target."""
    pending = " AND notified > last_seen" if pending_only else ""
    c.execute(
        f"SELECT {sql.CURSOR_COLUMNS} FROM sw_cursors WHERE watcher=?{pending}"
        " ORDER BY target_key, target_agent_id",
        (watcher,),
    )
    return [sql_rows.cursor_state(row) for row in c.fetchall()]


def cursor(c: sqlite3.Cursor, key: CursorKey) -> CursorState | None:
    """One cursor, or None."""
    c.execute(sql.SELECT_CURSOR, (key.target_key, key.target_agent_id, key.watcher))
    row = c.fetchone()
    return sql_rows.cursor_state(row) if row is not None else None


class SqliteDialect:
    """SQLite's side of one `BEGIN IMMEDIATE` transaction: queued events, cached counters."""

    sql = sql

    def __init__(self, counters: dict[str, int]) -> None:
        self._counters = counters
        self._next: int | None = None
        self._last_notification_id: int | None = None
        self._event_rows: list[tuple[int, object, int, str, bytes]] = []
        self._deferred_indexes = False

    def stream_key(self, stream: UUID) -> object:
        """A stream id as SQLite binds it: its hex text."""
        return stream.hex

    def insert_event(self, raw: sqlite3.Cursor, stream_key: object, version: int, event: DomainEvent) -> int:
        """Queue the event under the next notification id, allocated here (ADR-0017).

        The write lock is held, so nobody else takes ids meanwhile; inserting them explicitly keeps
        AUTOINCREMENT's `sqlite_sequence` above every id ever used (ADR-0025).
        """
        if self._last_notification_id is None:
            self._last_notification_id = self._counter(raw, sql.SELECT_LAST_NOTIFICATION_ID)
        self._last_notification_id += 1
        self._event_rows.append((self._last_notification_id, stream_key, version, event.type, encode(event)))
        return self._last_notification_id

    def has_queued_events(self) -> bool:
        """Whether stored events wait to be written."""
        return bool(self._event_rows)

    def write_queued_events(self, raw: sqlite3.Cursor) -> None:
        """Write the queued stored events in one statement."""
        if len(self._event_rows) == 1:
            raw.execute(sql.INSERT_EVENT, self._event_rows[0])
        elif self._event_rows:
            raw.executemany(sql.INSERT_EVENT, self._event_rows)
        self._event_rows.clear()

    def next_sequence(self, raw: sqlite3.Cursor) -> int:
        """The next sequence: above the counter row (a floor) and every signal row (ADR-0019).

        Nothing else records it: the signal row it becomes does, in the same transaction.
        """
        if self._next is None:
            self._next = self._counter(raw, sql.SELECT_COUNTER)
        self._next += 1
        return self._next

    def _counter(self, raw: sqlite3.Cursor, query: str) -> int:
        """A counter's committed value: remembered from this process's last write, else read."""
        value = self._counters.get(query)
        if value is None:
            raw.execute(query)
            row = raw.fetchone()
            if row is None:  # counters always return a row
                raise LookupError("the store returned no row where one was due")
            value = int(row[0])
        return value

    def cursor(self, statement: sqlite3.Cursor, key: CursorKey) -> CursorState | None:
        """One cursor as of this transaction."""
        return cursor(statement, key)

    def cursors_of(self, statement: sqlite3.Cursor, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors as of this transaction."""
        return cursors_of(statement, watcher, pending_only=pending_only)

    def archive_row(self, row: Sequence[Any]) -> ArchiveRow:
        """A stored-event row, its stream id read back from hex."""
        nid, stream, version, topic, body = row
        return nid, UUID(hex=stream), version, topic, body

    def bulk_insert(
        self, statement: sqlite3.Cursor, table: str, columns: str, rows: Sequence[Sequence[object]]
    ) -> None:
        """`executemany` of one `INSERT`."""
        if rows:
            marks = ",".join("?" * len(rows[0]))
            statement.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)

    def before_load(self, statement: sqlite3.Cursor) -> None:
        """Drop the signal indexes a load would grow row by row (`LOAD_DEFERRED_INDEXES`).

        Inside the load's transaction, so a load that fails leaves them as they were;
        `build_load_indexes` builds them back.
        """
        for name in sql.LOAD_DEFERRED_INDEXES:
            statement.execute(f"DROP INDEX IF EXISTS {name}")
        self._deferred_indexes = True

    def build_load_indexes(self, statement: sqlite3.Cursor) -> None:
        """Build back the indexes `before_load` dropped, over the rows loaded so far (once)."""
        if self._deferred_indexes:
            for create in sql.LOAD_DEFERRED_INDEXES.values():
                statement.execute(create)
            self._deferred_indexes = False

    def after_load(self, statement: sqlite3.Cursor, last_notification_id: int) -> bool:
        """Explicit ids keep AUTOINCREMENT's record above them by themselves: nothing to do."""
        del statement, last_notification_id
        return False

    def before_deleting_signals(self, statement: sqlite3.Cursor) -> None:
        """The counter row is a floor (ADR-0019): raise it to the newest signal before rows go."""
        statement.execute(sql.RAISE_COUNTER)

    def owe_wake(self, watcher: str, target_key: str) -> None:
        """One process writes a SQLite file's wakes itself: nobody else is owed one."""
        del watcher, target_key

    def finish(self, statement: sqlite3.Cursor) -> None:
        """The sequence needs no write of its own: its signal row records it."""
        del statement

    def keep(self, *, wholesale: bool) -> None:
        """Remember the counters this transaction advanced (a wholesale change emptied them)."""
        if not wholesale:
            if self._next is not None:
                self._counters[sql.SELECT_COUNTER] = self._next
            if self._last_notification_id is not None:
                self._counters[sql.SELECT_LAST_NOTIFICATION_ID] = self._last_notification_id
