"""Rows of the SQL read models <-> domain values, shared by the SQLite and PostgreSQL stores.

Both stores keep the same tables with the same column order, so one mapping serves both.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, TypeAlias

import orjson

from sessionwatch.domain.keys import SessionIdentity, agent_id_of
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import PUBLIC_PAYLOAD_KEYS, Payload, from_epoch_ms
from sessionwatch.domain.upstream import UpstreamLinkState, UpstreamSource
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.projections.models import StateChange
from sessionwatch.projections.read_model import ReadModel

Row: TypeAlias = Sequence[Any]
"""A result row as a tuple (neither store uses a dict or Row factory)."""


def session_state(row: Row) -> SessionState:
    """A `sw_sessions` row as the Session stream's state."""
    return SessionState(
        session_key=row[0],
        agent_id=row[1],
        known=True,
        session_id=row[2],
        kind=row[3],
        spawned_by=row[4],
        parent_session_key=row[5],
        registered=bool(row[6]),
        head=row[7],
        pruned_through=row[8],
    )


def session_params(state: SessionState, stream_version: int) -> tuple[object, ...]:
    """The `sw_sessions` row of a state at its stream's newest version."""
    return (
        state.session_key,
        state.agent_id,
        state.session_id,
        state.kind,
        state.spawned_by,
        state.parent_session_key,
        int(state.registered),
        state.head,
        state.pruned_through,
        stream_version,
    )


def signal(row: Row) -> SignalRecorded:
    """A `sw_signals` row as the stored event it came from."""
    return SignalRecorded(
        sequence=row[0],
        session_key=row[1],
        agent_id=row[2],
        session_id=row[3],
        kind=row[4],
        actor_type=row[5],
        actor_id=row[6],
        run_id=row[7],
        occurred_at_ms=row[8],
        recorded_at_ms=row[9],
        summary=row[10],
        payload=Payload.model_validate_json(row[11]) if row[11] is not None else None,
        dedupe_key=row[12],
        watchers=tuple(orjson.loads(row[13])) if row[13] is not None else (),
    )


def signal_params(event: SignalRecorded, notification_id: int) -> tuple[object, ...]:
    """The `sw_signals` row of a recorded signal stored at `notification_id`."""
    payload = orjson.dumps(event.payload.as_dict()).decode() if event.payload is not None else None
    watchers = orjson.dumps(list(event.watchers)).decode() if event.watchers else None
    return (
        event.sequence,
        event.session_key,
        event.agent_id,
        event.session_id,
        event.kind.value,
        event.actor_type,
        event.actor_id,
        event.run_id,
        event.occurred_at_ms,
        event.recorded_at_ms,
        event.summary,
        payload,
        event.dedupe_key,
        watchers,
        notification_id,
    )


def state_change(row: Row) -> StateChange:
    """A `changesSince` event straight from its row."""
    payload = None
    if row[6] is not None:
        shown = {k: v for k, v in orjson.loads(row[6]).items() if k in PUBLIC_PAYLOAD_KEYS}
        payload = shown or None
    return StateChange(
        sequence=row[0],
        kind=row[1],
        actor_type=row[2],
        occurred_at=from_epoch_ms(row[5]),
        summary=row[7],
        actor_id=row[3],
        run_id=row[4],
        payload=payload,
    )


def cursor_state(row: Row) -> CursorState:
    """A `sw_cursors` row."""
    return CursorState(
        watcher=row[0],
        target_key=row[1],
        target_agent_id=row[2],
        last_seen=row[3],
        notified=row[4],
        material=row[5],
        updated_at_ms=row[6],
    )


def cursor_params(state: CursorState) -> tuple[object, ...]:
    """The `sw_cursors` row of a cursor (with its watcher's agent id)."""
    return (
        state.watcher,
        state.target_key,
        state.target_agent_id,
        state.last_seen,
        state.notified,
        state.material,
        state.updated_at_ms,
        agent_id_of(state.watcher),
    )


def link_state(row: Row) -> UpstreamLinkState:
    """A `sw_upstream_links` row."""
    return UpstreamLinkState(
        session_key=row[0],
        agent_id=row[1],
        source=UpstreamSource(
            catalog_id=row[2],
            host_id=row[3],
            thread_id=row[4],
            upstream_kind=row[5],
            upstream_ref=orjson.loads(row[6]),
        ),
        marker=orjson.loads(row[7]),
        link_version=row[8],
        active=bool(row[9]),
        last_scanned_at_ms=row[10],
        created_at_ms=row[11],
        updated_at_ms=row[12],
    )


def link_params(state: UpstreamLinkState) -> tuple[object, ...]:
    """The `sw_upstream_links` row of a link (JSON text for the reference and the marker)."""
    source = state.source
    return (
        state.session_key,
        state.agent_id,
        source.catalog_id,
        source.host_id,
        source.thread_id,
        source.upstream_kind,
        orjson.dumps(source.upstream_ref).decode(),
        orjson.dumps(state.marker).decode(),
        state.link_version,
        int(state.active),
        state.last_scanned_at_ms,
        state.created_at_ms,
        state.updated_at_ms,
    )


def read_model(c: Any, sql: ModuleType) -> ReadModel:  # noqa: ANN401 - a DB-API cursor of either driver
    """Every stored read model, loaded whole through `c` with the store's statements `sql`."""
    c.execute(f"SELECT {sql.SESSION_COLUMNS} FROM sw_sessions")
    sessions = {s.identity: s for s in map(session_state, c.fetchall())}
    c.execute(f"SELECT {sql.SIGNAL_COLUMNS} FROM sw_signals ORDER BY sequence")
    signals: dict[SessionIdentity, list[SignalRecorded]] = {}
    for recorded in map(signal, c.fetchall()):
        signals.setdefault(recorded.identity, []).append(recorded)
    c.execute(f"SELECT {sql.CURSOR_COLUMNS} FROM sw_cursors")
    cursors: dict[SessionIdentity, dict[str, CursorState]] = {}
    for state in map(cursor_state, c.fetchall()):
        cursors.setdefault(state.key.target, {})[state.watcher] = state
    c.execute(sql.SELECT_ALL_LINKS)
    links = {link.identity: link for link in map(link_state, c.fetchall())}
    dedupe = {
        s.dedupe_key: (identity, s.sequence)
        for identity, log in signals.items()
        for s in log
        if s.dedupe_key is not None
    }
    return ReadModel(sessions, {k: tuple(v) for k, v in signals.items()}, dedupe, cursors, links)
