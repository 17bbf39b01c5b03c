"""`store.recorder` of the SQLite store: eventsourcing's application recorder over the store's table.

The store's own writes insert their rows themselves (`sql_write`); this recorder is the way other
eventsourcing code reads, and may write, the same `stored_events` table. It keeps eventsourcing's
recorder contract on that table: notification ids from its AUTOINCREMENT column, never reused, and
rows read by position, as the store's pooled connections return tuples.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from eventsourcing.persistence import Notification, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

from sessionwatch.adapters.stores.sql import sqlite_schema as sql

_EVENT_COLUMNS = "originator_id, originator_version, topic, state"


class SqliteEventRecorder(SQLiteApplicationRecorder):
    """eventsourcing's application recorder over a table whose notification ids are never reused."""

    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = sql.EVENTS_TABLE) -> None:
        super().__init__(datastore, events_table_name)
        # The notification id is left to AUTOINCREMENT: one above every id the table ever held, the
        # id the store's own write gives its next event (`SELECT_LAST_NOTIFICATION_ID` + 1).
        self.insert_events_statement = (
            f"INSERT INTO {self.events_table_name} ({_EVENT_COLUMNS}) VALUES (?,?,?,?)"
        )
        self.select_events_statement = (
            f"SELECT {_EVENT_COLUMNS} FROM {self.events_table_name} WHERE originator_id=? "
        )
        self.select_max_notification_id_statement = (
            f"SELECT MAX(notification_id) FROM {self.events_table_name}"
        )

    def construct_create_table_statements(self) -> list[str]:
        """The whole schema: events, counter and read-model tables, created together."""
        return list(sql.SCHEMA)

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        """A stream's events by version, between `gt` (excluded) and `lte`, at most `limit`."""
        statement = self.select_events_statement
        params: list[object] = [originator_id.hex if isinstance(originator_id, UUID) else originator_id]
        if gt is not None:
            statement += "AND originator_version>? "
            params.append(gt)
        if lte is not None:
            statement += "AND originator_version<=? "
            params.append(lte)
        statement += f"ORDER BY originator_version {'DESC' if desc else 'ASC'}"
        if limit is not None:
            statement += " LIMIT ?"
            params.append(limit)
        with self.datastore.transaction(commit=False) as c:
            c.execute(statement, params)
            return [
                StoredEvent(
                    originator_id=self.convert_originator_id(row[0]),
                    originator_version=row[1],
                    topic=row[2],
                    state=row[3],
                )
                for row in c.fetchall()
            ]

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        """Notifications by `notification_id` (the declared AUTOINCREMENT column)."""
        clauses: list[str] = []
        params: list[object] = []
        if start is not None:
            clauses.append("notification_id >= ?" if inclusive_of_start else "notification_id > ?")
            params.append(start)
        if stop is not None:
            clauses.append("notification_id <= ?")
            params.append(stop)
        if topics:
            clauses.append(f"topic IN ({','.join('?' * len(topics))})")
            params.extend(topics)
        where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
        statement = (
            f"SELECT notification_id, {_EVENT_COLUMNS} "
            f"FROM {self.events_table_name} {where}ORDER BY notification_id LIMIT ?"
        )
        params.append(limit)
        with self.datastore.transaction(commit=False) as c:
            c.execute(statement, params)
            return [
                Notification(
                    id=row[0],
                    originator_id=self.convert_originator_id(row[1]),
                    originator_version=row[2],
                    topic=row[3],
                    state=row[4],
                )
                for row in c.fetchall()
            ]
