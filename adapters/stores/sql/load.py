"""Loading an imported history into an empty SQL store: every table bulk-inserted in one transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from uuid import UUID

from sessionwatch.adapters.stores.mapper import encode, session_stream_id
from sessionwatch.adapters.stores.port import StoreNotEmptyError
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.dialect import SqlTransaction
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.projections.read_model import ReadModel


def load_history(
    tx: SqlTransaction,
    events: Sequence[tuple[UUID, int, DomainEvent]],
    model: ReadModel,
    *,
    sequence: int,
    stream_versions: Mapping[UUID, int],
    last_prune_ms: int | None,
) -> None:
    """`SignalStore.load_history` inside `tx`: check the store is empty, then bulk-insert.

    The stored events get the notification ids 1..n (no other id exists in an empty store) so
    the signal rows can name theirs before anything is inserted.
    """
    sql, c, dialect = tx.sql, tx.statement, tx.dialect
    tx.changed_wholesale()
    c.execute(sql.SELECT_HISTORY_PRESENT)
    counter, present = tx.one()
    if counter or present:
        raise StoreNotEmptyError(
            f"the store already holds history (sequence counter at {counter}); import into a new, empty store"
        )
    versions = dict(stream_versions)
    event_rows: list[tuple[object, ...]] = []
    signal_ids: dict[int, int] = {}
    for notification_id, (stream, version, event) in enumerate(events, 1):
        event_rows.append((notification_id, dialect.stream_key(stream), version, event.type, encode(event)))
        if isinstance(event, SignalRecorded):
            signal_ids[event.sequence] = notification_id
        versions[stream] = max(versions.get(stream, 0), version)
    dialect.bulk_insert(c, sql.EVENTS_TABLE, sql.LOADED_EVENT_COLUMNS, event_rows)
    tx.vacuum_due = dialect.after_load(c, len(event_rows)) or tx.vacuum_due
    sessions = sorted(model.sessions.values(), key=lambda s: (s.session_key, s.agent_id))
    carried = {session_stream_id(s.identity) for s in sessions}
    rows = [sql_rows.session_params(s, versions.get(session_stream_id(s.identity), 0)) for s in sessions]
    dialect.bulk_insert(c, "sw_sessions", f"{sql.SESSION_COLUMNS}, stream_version", rows)
    signals = sorted((s for log in model.signals.values() for s in log), key=lambda s: s.sequence)
    rows = [sql_rows.signal_params(s, signal_ids[s.sequence]) for s in signals]
    dialect.bulk_insert(c, "sw_signals", f"{sql.SIGNAL_COLUMNS}, notification_id", rows)
    rows = [sql_rows.cursor_params(cursor) for cursor in model.all_cursors()]
    dialect.bulk_insert(c, "sw_cursors", f"{sql.CURSOR_COLUMNS}, watcher_agent_id", rows)
    rows = [sql_rows.link_params(model.links[identity]) for identity in sorted(model.links)]
    dialect.bulk_insert(c, "sw_upstream_links", sql.LINK_COLUMNS, rows)
    rows = [(dialect.stream_key(s), v) for s, v in sorted(versions.items()) if s not in carried]
    dialect.bulk_insert(c, "sw_streams", "stream_id, version", rows)
    c.execute(sql.WRITE_COUNTER, (sequence,))
    if last_prune_ms is None:
        c.execute(sql.CLEAR_LAST_PRUNE)
    else:
        c.execute(sql.STAMP_LAST_PRUNE, (last_prune_ms,))
