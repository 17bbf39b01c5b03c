"""The notice protocol as set-based SQL: material updates, seeds, drops and the restart sweep.

Each function is the SQL twin of a pure rule in `domain.watch_cursor` (the contract tests feed
both the same tables and compare the rows): one statement per rule, like the peer's, however many
watchers a target has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from sessionwatch.adapters.stores.mapper import STORE_STREAM_ID
from sessionwatch.adapters.stores.port import SweepCounts
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.dialect import SqlTransaction
from sessionwatch.domain import watch_cursor
from sessionwatch.domain.keys import SessionIdentity, agent_id_of
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionEvent,
    SessionMetaUpdated,
    SessionReset,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.signals import NOTIFYING_KINDS
from sessionwatch.domain.watch_cursor import AMBIENT, EXPLICIT, CursorKey, MaterialSignalSeen, NoticesSwept


def apply_implied(
    tx: SqlTransaction, identity: SessionIdentity, event: SessionEvent
) -> list[MaterialSignalSeen]:
    """The SQL form of `read_model.implied_facts`; the notices the event opened (the watchers to wake)."""
    sql = tx.sql
    match event:
        case SignalRecorded() if event.kind in tx.notifying:
            return material_update(tx, [event])
        case SignalRecorded():  # seeding needs no cursor state: it overwrites
            for command in watch_cursor.react(event, {}, at_ms=event.recorded_at_ms):
                for fact in watch_cursor.derive(command, None):
                    seeded = watch_cursor.evolve(None, fact)
                    if seeded is not None:
                        tx.statement.execute(sql.UPSERT_CURSOR, sql_rows.cursor_params(seeded))
            return []
        case SessionReset():
            drop_cursors(tx, identity, deleted=False)
            tx.statement.execute(sql.DELETE_DIGEST, identity)  # a reset main session's digest goes
            return []
        case SessionDeleted():
            drop_cursors(tx, identity, deleted=True)
            tx.dialect.before_deleting_signals(tx.statement)
            tx.statement.execute(sql.DELETE_SESSION_SIGNALS, identity)
            tx.statement.execute(sql.DELETE_LINK, identity)  # its link goes too
            tx.statement.execute(sql.DELETE_DIGEST, identity)  # and its creation digest
            return []
        case SessionUpserted() | SessionMetaUpdated():  # registry events imply nothing for cursors
            return []
        case _:
            assert_never(event)


def material_update(tx: SqlTransaction, run: Sequence[SignalRecorded]) -> list[MaterialSignalSeen]:
    """The material update for every holder but the actor, in one statement like the peer's.

    `run` is one notifying signal, or several in a row on one target by one actor naming no
    producer watcher: applying them one by one moves `N` (if no notice was open) to the first
    and `M` to the last, so one statement with both does the same. Then a `(0, e, e)` cursor
    for each producer watcher without one. Returns the notices this opened (`N` moved to the
    first signal); it touches only `sw_cursors`, so it needs nothing queued written first.
    """
    first, last = run[0], run[-1]
    e = first.sequence
    ambient_too = first.kind in NOTIFYING_KINDS  # a run's end, where it notifies, skips ambient cursors
    raw = tx.raw
    params: dict[str, object] = {
        "first": e,
        "e": last.sequence,
        "now": last.recorded_at_ms,
        "key": first.session_key,
        "agent": first.agent_id,
        "actor": first.actor_id,
    }
    raw.execute(tx.sql.MATERIAL_UPDATE, {**params, "ambient_too": 1 if ambient_too else 0})
    rows = raw.fetchall()
    updated = {watcher for watcher, _, _, _ in rows}
    opened = [(watcher, seen, ambient) for watcher, seen, notified, ambient in rows if notified == e]
    for watcher in watch_cursor.notified_watchers(first, first.watchers, (), tx.notifying):
        if watcher not in updated:
            new = (watcher, first.session_key, first.agent_id, e, e, first.recorded_at_ms)
            raw.execute(tx.sql.INSERT_NEW_CURSOR, (*new, agent_id_of(watcher)))
            if raw.rowcount == 1:  # a cursor that had seen this signal already is left alone
                opened.append((watcher, 0, 0))
            elif not ambient_too:  # its ambient cursor, which the producer named: notified all the same
                raw.execute(tx.sql.MATERIAL_UPDATE_NAMED, {**params, "watcher": watcher})
                named = raw.fetchall()
                opened.extend((w, seen, ambient) for w, seen, notified, ambient in named if notified == e)
    return [
        MaterialSignalSeen(
            watcher=watcher,
            target_key=first.session_key,
            target_agent_id=first.agent_id,
            at_ms=first.recorded_at_ms,
            sequence=e,
            notified=e,
            last_seen=seen,
            provenance=AMBIENT if ambient else EXPLICIT,
        )
        for watcher, seen, ambient in opened
    ]


def drop_cursors(tx: SqlTransaction, identity: SessionIdentity, *, deleted: bool) -> None:
    """Reset drops the cursors the session holds; deletion also those on it."""
    if watch_cursor.watcher_identity(identity.session_key) == identity:
        tx.statement.execute(tx.sql.DROP_CURSORS_OF_WATCHER, (identity.session_key,))
    if deleted:
        tx.statement.execute(tx.sql.DROP_CURSORS_ON_TARGET, identity)


def sweep(tx: SqlTransaction, at_ms: int) -> SweepCounts:
    """The SQL form of `read_model.plan_sweep`.

    One statement re-freezes every open notice of an existing watcher; one `NoticesSwept` event
    records it when anything changed (ADR-0026).
    """
    c = tx.statement
    c.execute(tx.sql.SELECT_REPUBLISHED)
    rows = c.fetchall()
    republished = [CursorKey(*row[:3]) for row in rows]
    woken = [CursorKey(*row[:3]) for row in rows if not row[3]]  # an ambient notice is queue-only
    c.execute(tx.sql.COUNT_OPEN)
    open_count = int(tx.one()[0])
    c.execute(tx.sql.REFREEZE, {"now": at_ms})
    refrozen = c.rowcount
    if refrozen:
        tx.store_event(STORE_STREAM_ID, NoticesSwept(at_ms=at_ms))
    for key in woken:
        tx.dialect.owe_wake(key.watcher, key.target_key)
    return SweepCounts(tuple(republished), refrozen, open_count - len(republished), tuple(woken))
