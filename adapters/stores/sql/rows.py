"""Rows of the SQL read models <-> domain values, shared by the SQLite and PostgreSQL stores.

Both stores keep the same tables with the same column order, so one mapping serves both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter
from types import ModuleType
from typing import Any, TypeAlias, TypeVar
from uuid import UUID

import orjson
from pydantic import TypeAdapter

from sessionwatch.adapters.stores.mapper import decode, session_stream_id
from sessionwatch.adapters.stores.port import StoredRow
from sessionwatch.domain.digest import DigestEntry, DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity, agent_id_of
from sessionwatch.domain.registry import SessionMeta
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import PUBLIC_PAYLOAD_KEYS, Payload, from_epoch_ms
from sessionwatch.domain.upstream import UpstreamLinkState, UpstreamSource
from sessionwatch.domain.watch_cursor import AMBIENT, EXPLICIT, CursorState
from sessionwatch.projections.models import StateChange
from sessionwatch.projections.read_model import ReadModel

T = TypeVar("T")
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
        meta=SessionMeta.model_validate_json(row[9]) if row[9] is not None else None,
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
        meta_text(state.meta),
        stream_version,
    )


def meta_text(meta: SessionMeta | None) -> str | None:
    """A session's registry metadata as stored: compact JSON of the fields set, NULL for none."""
    return (
        orjson.dumps(meta.model_dump(mode="json", exclude_defaults=True)).decode()
        if meta is not None
        else None
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
    return (event.sequence, *_plain_columns(event), payload, event.dedupe_key, watchers, notification_id)


_plain_values: Callable[[SignalRecorded], tuple[object, ...]] = attrgetter(
    "session_key",
    "agent_id",
    "session_id",
    "kind",
    "actor_type",
    "actor_id",
    "run_id",
    "occurred_at_ms",
    "recorded_at_ms",
    "summary",
)
"""The values of the `sw_signals` columns from `session_key` to `summary`, read in one call; the
kind is its `StrEnum` member, which equals its stored text."""


def _plain_columns(event: SignalRecorded) -> tuple[object, ...]:
    """The `sw_signals` columns from `session_key` to `summary`, as bound (the kind as its text)."""
    values = _plain_values(event)
    return (*values[:3], event.kind.value, *values[4:])


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


_STATE_CHANGES: TypeAdapter[list[StateChange]] = TypeAdapter(list[StateChange])


def state_changes(page: str | None) -> list[StateChange]:
    """A page of `changesSince` events from the JSON array the store built, in sequence order."""
    return sorted(_STATE_CHANGES.validate_json(page or "[]"), key=attrgetter("sequence"))


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
        provenance=AMBIENT if row[7] else EXPLICIT,
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
        1 if state.ambient else 0,
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


def digest_state(row: Row) -> DigestState:
    """A `sw_digests` row."""
    return DigestState(
        session_key=row[0],
        agent_id=row[1],
        entries=tuple(DigestEntry(sequence=q, key=k) for q, k in orjson.loads(row[2])),
    )


def digest_params(state: DigestState) -> tuple[object, ...]:
    """The `sw_digests` row of a digest (its entries as compact JSON pairs)."""
    entries = orjson.dumps([[entry.sequence, entry.key] for entry in state.entries]).decode()
    return (state.session_key, state.agent_id, entries)


def digests(c: Any, sql: ModuleType) -> tuple[DigestState, ...]:  # noqa: ANN401 - a DB-API cursor
    """Every stored digest, ordered by main session."""
    c.execute(sql.SELECT_ALL_DIGESTS)
    return tuple(digest_state(row) for row in c.fetchall())


def read_model(c: Any, sql: ModuleType, *, like: ReadModel | None = None, signals: bool = True) -> ReadModel:  # noqa: ANN401
    """Every stored read model, loaded whole through `c` with the store's statements `sql`.

    With `like` (a replay, for an audit), a row that equals the row of `like`'s value is read as
    that value itself instead of a new model: the result is still exactly what is stored, and
    comparing it with `like` costs an identity check wherever they agree.
    """
    like = like or ReadModel()
    c.execute(f"SELECT {sql.SESSION_COLUMNS} FROM sw_sessions")
    sessions: dict[SessionIdentity, SessionState] = {}
    for row in c.fetchall():
        known = like.sessions.get(SessionIdentity(row[0], row[1]))
        state = _reuse(known, row, lambda s: session_params(s, 0)[:-1], session_state)
        sessions[state.identity] = state
    logs: dict[SessionIdentity, list[SignalRecorded]] = {}
    if signals:
        c.execute(f"SELECT {sql.SIGNAL_COLUMNS} FROM sw_signals ORDER BY sequence")
        by_sequence = {s.sequence: s for log in like.signals.values() for s in log}
        for row in c.fetchall():
            known_signal = by_sequence.get(row[0])
            recorded = (
                known_signal if known_signal is not None and _same_signal(known_signal, row) else signal(row)
            )
            logs.setdefault(SessionIdentity(recorded.session_key, recorded.agent_id), []).append(recorded)
    c.execute(f"SELECT {sql.CURSOR_COLUMNS} FROM sw_cursors")
    cursors: dict[SessionIdentity, dict[str, CursorState]] = {}
    for row in c.fetchall():
        known_cursor = like.cursors.get(SessionIdentity(row[1], row[2]), {}).get(row[0])
        cursor = _reuse(known_cursor, row, lambda k: cursor_params(k)[:-1], cursor_state)
        cursors.setdefault(cursor.key.target, {})[cursor.watcher] = cursor
    c.execute(sql.SELECT_ALL_LINKS)
    links: dict[SessionIdentity, UpstreamLinkState] = {}
    for row in c.fetchall():
        link = _reuse(like.links.get(SessionIdentity(row[0], row[1])), row, link_params, link_state)
        links[link.identity] = link
    dedupe = {
        s.dedupe_key: (identity, s.sequence)
        for identity, log in logs.items()
        for s in log
        if s.dedupe_key is not None
    }
    stored_digests = {d.identity: d for d in digests(c, sql)}
    return ReadModel(sessions, {k: tuple(v) for k, v in logs.items()}, dedupe, cursors, links, stored_digests)


def _reuse(
    known: T | None, row: Row, params: Callable[[T], tuple[object, ...]], parse: Callable[[Row], T]
) -> T:
    """`known` itself when `row` is exactly its row, else the value `row` holds."""
    return known if known is not None and params(known) == tuple(row) else parse(row)


def _same_signal(event: SignalRecorded, row: Row) -> bool:
    """Whether a `sw_signals` row (without its notification id) is exactly the row of `event`."""
    if row[11] is None and row[13] is None and event.payload is None and not event.watchers:
        return row[1:11] == _plain_values(event) and row[12] == event.dedupe_key
    return tuple(row[1:]) == signal_params(event, 0)[1:-1]  # payload and watchers as stored text


def _stream_id(value: object) -> UUID:
    """A stream id as either driver returns it: a `uuid` (PostgreSQL) or its hex text (SQLite)."""
    return value if isinstance(value, UUID) else UUID(str(value))


def stream_versions(c: Any, sql: ModuleType) -> dict[UUID, int]:  # noqa: ANN401 - a DB-API cursor
    """The newest version of every stream the store knows (ADR-0008).

    A stream's version lives in `sw_streams` (cursor, link and store streams, deleted or unlisted
    sessions), in its session's row, or only in its stored events; the newest of the three counts.
    """
    versions: dict[UUID, int] = {}

    def keep(stream: UUID, version: int) -> None:
        versions[stream] = max(versions.get(stream, 0), int(version))

    c.execute(sql.SELECT_STREAM_VERSIONS)
    for stream, version in c.fetchall():
        keep(_stream_id(stream), version)
    c.execute(sql.SELECT_SESSION_STREAM_VERSIONS)
    for session_key, agent_id, version in c.fetchall():
        keep(session_stream_id(SessionIdentity(session_key, agent_id)), version)
    c.execute(sql.SELECT_EVENT_STREAM_VERSIONS)
    for stream, version in c.fetchall():
        keep(_stream_id(stream), version)
    return versions


def stored_rows(c: Any, sql: ModuleType, page_size: int = 1000) -> Iterator[StoredRow]:  # noqa: ANN401
    """Every stored event in notification order, read `page_size` at a time through `c`."""
    after = 0
    while True:
        c.execute(sql.SELECT_EVENTS_AFTER, (after, page_size))
        page = c.fetchall()
        if not page:
            return
        for notification_id, stream, version, topic, state in page:
            yield notification_id, _stream_id(stream), version, topic, bytes(state)
        after = page[-1][0]


def replay(c: Any, sql: ModuleType, page_size: int = 1000) -> Iterator[DomainEvent]:  # noqa: ANN401
    """Every stored event, decoded, in notification order, read `page_size` at a time through `c`."""
    after = 0
    while True:
        c.execute(sql.SELECT_BODIES_AFTER, (after, page_size))
        page = c.fetchall()
        if not page:
            return
        for _, topic, state in page:
            yield decode(topic, state)
        after = page[-1][0]


class SqlSnapshot:
    """A `StoreSnapshot` over one read transaction of either SQL store (its cursor `c`)."""

    def __init__(self, c: Any, sql: ModuleType, page_size: int = 1000) -> None:  # noqa: ANN401
        self._c = c
        self._sql = sql
        self._page_size = page_size

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event, decoded, in commit order."""
        return replay(self._c, self._sql, self._page_size)

    def read_model(self, *, like: ReadModel | None = None) -> ReadModel:
        """The stored read models as of the same transaction."""
        return read_model(self._c, self._sql, like=like)

    def tables(self) -> ReadModel:
        """The stored sessions, cursors and links as of the same transaction (no signal is read)."""
        return read_model(self._c, self._sql, signals=False)

    def dedupe(self) -> None:
        """None: the signal rows' `dedupe_key` column is the index."""

    def signals(self) -> Iterator[SignalRecorded]:
        """Every stored signal in ascending sequence, `page_size` at a time."""
        after = -1
        while True:
            self._c.execute(self._sql.SELECT_SIGNALS_AFTER, (after, self._page_size))
            page = self._c.fetchall()
            if not page:
                return
            for row in page:
                yield signal(row)
            after = page[-1][0]
