"""The prune as set-based SQL: the SQL twin of `projections.retention.prune`.

In one transaction: stamp the affected sessions' watermarks, delete what the window and the cap
remove (archiving it first when asked, read and written a page at a time so memory stays flat
whatever the count), expire idle cursors, then checkpoint the read models in one `SignalsPruned`
event and truncate the event store before it (ADR-0026).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Final

from sessionwatch.adapters.stores.archive import JsonlArchive
from sessionwatch.adapters.stores.mapper import STORE_STREAM_ID
from sessionwatch.adapters.stores.port import PruneCounts
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.dialect import ArchiveRow, SqlTransaction
from sessionwatch.domain.retention import PruneCutoffs, Retention, SignalsPruned, compaction_due

ARCHIVE_PAGE: Final = 1000
"""Removed signals the archive reads at a time."""


def prune(tx: SqlTransaction, now_ms: int, policy: Retention, archive: JsonlArchive | None) -> PruneCounts:
    """Prune inside `tx` at `now_ms` under `policy`; the counts of what went."""
    sql, c = tx.sql, tx.statement
    occurred_before = now_ms - policy.window_ms
    c.execute(sql.CAP_THROUGH, (occurred_before, policy.max_signals))
    row = c.fetchone()
    cutoffs = PruneCutoffs(
        at_ms=now_ms,
        occurred_before_ms=occurred_before,
        through_sequence=row[0] if row is not None else 0,
        cursors_updated_before_ms=now_ms - policy.window_ms,
    )
    removed = {"cut": cutoffs.occurred_before_ms, "through": cutoffs.through_sequence}
    archived = 0
    if archive is not None:
        archived = archive.append(_removed_events(tx, removed))
    c.execute(sql.STAMP_WATERMARKS, removed)
    stamped = c.rowcount
    tx.dialect.before_deleting_signals(c)
    c.execute(sql.DELETE_REMOVED, removed)
    signals_removed = c.rowcount
    c.execute(sql.EXPIRE_CURSORS, (cutoffs.cursors_updated_before_ms,))
    expired = c.rowcount
    tx.changed_wholesale()  # heads and watermarks changed under the cache
    c.execute(sql.STAMP_LAST_PRUNE, (now_ms,))
    counts = PruneCounts(cutoffs, signals_removed, stamped, expired, events_deleted=0, archived=archived)
    tx.vacuum_due = signals_removed > 0
    if not (signals_removed or expired):
        c.execute(sql.COUNT_REPLACEABLE_EVENTS)
        replaceable, entries = tx.one()
        if not compaction_due(replaceable, entries):
            return counts  # nothing changed and too little to compact: a prune that writes no event
    c.execute(sql.SELECT_SESSIONS)
    sessions = tuple(sql_rows.session_state(r) for r in c.fetchall())
    c.execute(sql.SELECT_ALL_CURSORS)
    cursors = tuple(sql_rows.cursor_state(r) for r in c.fetchall())
    c.execute(sql.SELECT_ALL_LINKS)
    links = tuple(sql_rows.link_state(r) for r in c.fetchall())
    digests = sql_rows.digests(c, sql)  # bounded by their fold, never pruned: carried (ADR-0047)
    _, checkpoint = tx.store_event(
        STORE_STREAM_ID,
        SignalsPruned(cutoffs=cutoffs, sessions=sessions, cursors=cursors, links=links, digests=digests),
    )
    c = tx.statement  # the checkpoint is written first
    c.execute(sql.TRUNCATE_EVENTS, (checkpoint,))
    tx.vacuum_due = tx.vacuum_due or c.rowcount > 0
    return replace(counts, events_deleted=c.rowcount)


def _removed_events(tx: SqlTransaction, removed: dict[str, int]) -> Iterator[ArchiveRow]:
    """The stored events of the signals the prune removes, in sequence order, read a page at a time."""
    c = tx.statement
    after = 0
    while True:
        c.execute(tx.sql.SELECT_REMOVED_EVENTS, {**removed, "after": after, "page": ARCHIVE_PAGE})
        page = c.fetchall()
        for row in page:
            yield tx.dialect.archive_row(row[1:])
        if len(page) < ARCHIVE_PAGE:
            return
        after = page[-1][0]
