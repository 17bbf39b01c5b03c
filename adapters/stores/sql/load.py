"""Loading an imported history into an empty SQL store: bulk inserts in bounded chunks, one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from sessionwatch.adapters.stores.mapper import encode, session_stream_id
from sessionwatch.adapters.stores.port import LOAD_CHUNK, HistoryTail, StoreNotEmptyError
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.dialect import SqlTransaction
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import SessionDeleted, SignalRecorded


def load_history(
    tx: SqlTransaction,
    events: Iterable[tuple[UUID, int, DomainEvent]],
    tail: HistoryTail | Callable[[], HistoryTail],
) -> int:
    """`SignalStore.load_history` inside `tx`: check the store is empty, bulk-insert, count the signals kept.

    The stored events get the notification ids 1..n (no other id exists in an empty store), so a
    signal row names its event as it is written. The signal rows follow the fold's rules as the
    events come: a deletion or a prune checkpoint first writes the rows pending, then deletes what
    it removes, so Python holds at most `LOAD_CHUNK` events and rows at a time. What the dialect
    would maintain row by row for nothing (SQLite's secondary signal indexes) it drops first and
    builds back over the rows, before the first delete and at the end (ADR-0072), all inside `tx`.
    """
    sql, c, dialect = tx.sql, tx.statement, tx.dialect
    tx.changed_wholesale()
    c.execute(sql.SELECT_HISTORY_PRESENT)
    counter, present = tx.one()
    if counter or present:
        raise StoreNotEmptyError(
            f"the store already holds history (sequence counter at {counter}); import into a new, empty store"
        )
    dialect.before_load(c)
    versions, last_id, retained = _load_events(tx, events)
    dialect.build_load_indexes(c)
    tx.vacuum_due = dialect.after_load(c, last_id) or tx.vacuum_due
    end = tail() if callable(tail) else tail
    _load_tail(tx, versions, end)
    return retained


def _load_events(
    tx: SqlTransaction, events: Iterable[tuple[UUID, int, DomainEvent]]
) -> tuple[dict[UUID, int], int, int]:
    """Write the events and their signal rows; each stream's newest version, the last id, the signals kept."""
    sql, c, dialect = tx.sql, tx.statement, tx.dialect
    event_rows: list[tuple[object, ...]] = []
    signal_rows: list[tuple[object, ...]] = []
    retained = 0

    def flush() -> None:
        dialect.bulk_insert(c, sql.EVENTS_TABLE, sql.LOADED_EVENT_COLUMNS, event_rows)
        dialect.bulk_insert(c, "sw_signals", f"{sql.SIGNAL_COLUMNS}, notification_id", signal_rows)
        event_rows.clear()
        signal_rows.clear()

    streams: dict[UUID, list[Any]] = {}  # each stream's key as bound, and its newest version
    notification_id = 0
    for notification_id, (stream, version, event) in enumerate(events, 1):
        seen = streams.get(stream)
        if seen is None:
            seen = streams[stream] = [dialect.stream_key(stream), version]
        elif version > seen[1]:
            seen[1] = version
        event_rows.append((notification_id, seen[0], version, event.type, encode(event)))
        match event:
            case SignalRecorded():
                signal_rows.append(sql_rows.signal_params(event, notification_id))
                retained += 1
            case SessionDeleted():
                flush()
                dialect.build_load_indexes(c)  # the delete looks its rows up by session
                c.execute(sql.DELETE_SESSION_SIGNALS, (event.session_key, event.agent_id))
                retained -= c.rowcount
            case SignalsPruned():
                flush()
                dialect.build_load_indexes(c)  # the delete looks its rows up by age
                cutoffs = event.cutoffs
                c.execute(
                    sql.DELETE_REMOVED,
                    {"cut": cutoffs.occurred_before_ms, "through": cutoffs.through_sequence},
                )
                retained -= c.rowcount
            # any other event writes no row here: the tail writes what the fold left
        if len(event_rows) >= LOAD_CHUNK:
            flush()
    flush()
    versions = {stream: version for stream, (_, version) in streams.items()}
    return versions, notification_id, retained


def _load_tail(tx: SqlTransaction, versions: dict[UUID, int], end: HistoryTail) -> None:
    """Write the sessions, cursors, links, digests, stream versions, counter and last prune."""
    sql, c, dialect = tx.sql, tx.statement, tx.dialect
    model = end.model
    for stream, version in end.stream_versions.items():
        versions[stream] = max(versions.get(stream, 0), version)
    sessions = sorted(model.sessions.values(), key=lambda s: (s.session_key, s.agent_id))
    carried = {session_stream_id(s.identity) for s in sessions}
    rows = [sql_rows.session_params(s, versions.get(session_stream_id(s.identity), 0)) for s in sessions]
    dialect.bulk_insert(c, "sw_sessions", f"{sql.SESSION_COLUMNS}, stream_version", rows)
    rows = [sql_rows.cursor_params(cursor) for cursor in model.all_cursors()]
    dialect.bulk_insert(c, "sw_cursors", f"{sql.CURSOR_COLUMNS}, watcher_agent_id", rows)
    rows = [sql_rows.link_params(model.links[identity]) for identity in sorted(model.links)]
    dialect.bulk_insert(c, "sw_upstream_links", sql.LINK_COLUMNS, rows)
    rows = [sql_rows.digest_params(model.digests[identity]) for identity in sorted(model.digests)]
    dialect.bulk_insert(c, "sw_digests", sql.DIGEST_COLUMNS, rows)
    rows = [(dialect.stream_key(s), v) for s, v in sorted(versions.items()) if s not in carried]
    dialect.bulk_insert(c, "sw_streams", "stream_id, version", rows)
    c.execute(sql.WRITE_COUNTER, (end.sequence,))
    if end.last_prune_ms is None:
        c.execute(sql.CLEAR_LAST_PRUNE)
    else:
        c.execute(sql.STAMP_LAST_PRUNE, (end.last_prune_ms,))
