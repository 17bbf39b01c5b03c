"""The migration step that moves rows stored before agent ids were normalized (ADR-0055).

Before, an agent-qualified key's agent id was stored as its second part was written
(`agent:Main:x` under `Main`); it is normalized now (`main`). The mapper reads old stored events
under the normalized ids; this step moves the read-model rows the same way, so that the rows and a
replay of the events agree and a call naming the key reaches its history. Keys are never changed.
"""

from __future__ import annotations

from types import ModuleType
from uuid import UUID

from sessionwatch.adapters.stores.mapper import session_stream_id
from sessionwatch.adapters.stores.sql.dialect import Cursor
from sessionwatch.domain.keys import SessionIdentity, stored_agent_id


def move_stored_agent_ids(cursor: Cursor, sql: ModuleType) -> None:
    """Give every row the agent id its stored `(key, agent id)` pair reads as now.

    A moved session's row restarts its stream (the stream id is a digest of the identity): the old
    stream's version is kept in `sw_streams`, as for a deleted session, so no (stream, version) is
    ever reused, and the row's own version starts again at 0 for the stream of its new identity.
    """
    cursor.execute(sql.SELECT_SESSION_STREAM_VERSIONS)
    for key, agent, version in cursor.fetchall():
        now = stored_agent_id(key, agent)
        if now != agent:
            stream = session_stream_id(SessionIdentity(key, agent))
            cursor.execute(sql.UPSERT_STREAM, (_bound(stream, sql), version))
            cursor.execute(sql.MOVE_SESSION_AGENT_ID, (now, key, agent))
    for select_pairs, move in sql.MOVE_AGENT_IDS:
        cursor.execute(select_pairs)
        moves = [
            (now, key, agent)
            for key, agent in cursor.fetchall()
            if (now := stored_agent_id(key, agent)) != agent
        ]
        for move_one in moves:
            cursor.execute(move, move_one)


def _bound(stream: UUID, sql: ModuleType) -> object:
    """A stream id as the store's driver binds it."""
    return stream.hex if sql.STREAM_IDS_AS_HEX else stream
