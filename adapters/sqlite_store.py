"""`sqlite:///path`: eventsourcing's SQLite event store and the read-model tables in one file.

Every write runs in one `BEGIN IMMEDIATE` transaction that inserts the stored events and applies
them to the read models, so a returned record is visible and a crash leaves nothing half-done
(ADR-0005). Sequences come from a counter row that never goes down, never from rowids (ADR-0006).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeAlias

import orjson
from eventsourcing.persistence import Notification
from eventsourcing.sqlite import (
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteCursor,
    SQLiteDatastore,
)

from sessionwatch.adapters.mapper import decode, encode, session_stream_id
from sessionwatch.adapters.store import StoreError
from sessionwatch.domain import session
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SessionDeleted, SessionEvent, SessionState, SignalRecorded
from sessionwatch.domain.signals import PUBLIC_PAYLOAD_KEYS, Payload, from_epoch_ms
from sessionwatch.projections.models import SessionStatus, StateChange
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.projections.status import build_status

Synchronous: TypeAlias = Literal["normal", "full"]
SCHEMA_VERSION = 1
EVENTS_TABLE = "stored_events"
_REPLAY_PAGE = 1000

_SCHEMA = (
    # The notification id is AUTOINCREMENT: plain rowids restart at 1 once the newest rows are
    # deleted, and a projection tracking positions would then skip new events (ADR-0006).
    (
        f"CREATE TABLE IF NOT EXISTS {EVENTS_TABLE} ("
        " notification_id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " originator_id TEXT NOT NULL,"
        " originator_version INTEGER NOT NULL,"
        " topic TEXT NOT NULL,"
        " state BLOB NOT NULL,"
        " UNIQUE (originator_id, originator_version))"
    ),
    "CREATE TABLE IF NOT EXISTS sw_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT OR IGNORE INTO sw_meta (name, value) VALUES ('sequence', 0)",
    f"INSERT OR IGNORE INTO sw_meta (name, value) VALUES ('schema_version', {SCHEMA_VERSION})",
    (
        "CREATE TABLE IF NOT EXISTS sw_sessions ("
        " session_key TEXT NOT NULL,"
        " agent_id TEXT NOT NULL,"
        " session_id TEXT,"
        " kind TEXT NOT NULL,"
        " spawned_by TEXT,"
        " parent_session_key TEXT,"
        " head INTEGER NOT NULL,"
        " pruned_through INTEGER NOT NULL,"
        " PRIMARY KEY (session_key, agent_id)) WITHOUT ROWID"
    ),
    (
        "CREATE TABLE IF NOT EXISTS sw_signals ("
        " sequence INTEGER PRIMARY KEY,"  # allocated by the counter, never by SQLite
        " session_key TEXT NOT NULL,"
        " agent_id TEXT NOT NULL,"
        " session_id TEXT,"
        " kind TEXT NOT NULL,"
        " actor_type TEXT NOT NULL,"
        " actor_id TEXT,"
        " run_id TEXT,"
        " occurred_at_ms INTEGER NOT NULL,"
        " summary TEXT NOT NULL,"
        " payload TEXT,"
        " dedupe_key TEXT UNIQUE)"
    ),
    "CREATE INDEX IF NOT EXISTS sw_signals_by_session ON sw_signals (session_key, agent_id, sequence)",
)

_SESSION_COLUMNS = (
    "session_key, agent_id, session_id, kind, spawned_by, parent_session_key, head, pruned_through"
)
_SIGNAL_COLUMNS = (
    "sequence, session_key, agent_id, session_id, kind, actor_type, actor_id, run_id,"
    " occurred_at_ms, summary, payload, dedupe_key"
)
_UPSERT_SESSION = (
    f"INSERT INTO sw_sessions ({_SESSION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)"
    " ON CONFLICT (session_key, agent_id) DO UPDATE SET session_id=excluded.session_id,"
    " kind=excluded.kind, spawned_by=excluded.spawned_by,"
    " parent_session_key=excluded.parent_session_key, head=excluded.head,"
    " pruned_through=excluded.pruned_through"
)
_INSERT_SIGNAL = f"INSERT INTO sw_signals ({_SIGNAL_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
_INSERT_EVENT = (
    f"INSERT INTO {EVENTS_TABLE} (originator_id, originator_version, topic, state) VALUES (?,?,?,?)"
)
_SELECT_PAGE = (
    "SELECT sequence, kind, actor_type, actor_id, run_id, occurred_at_ms, payload, summary FROM sw_signals"
    " WHERE session_key=? AND agent_id=? AND sequence>? ORDER BY sequence LIMIT ?"
)
_SELECT_SESSION = f"SELECT {_SESSION_COLUMNS} FROM sw_sessions WHERE session_key=? AND agent_id=?"


def _state(row: sqlite3.Row) -> SessionState:
    return SessionState(
        session_key=row[0],
        agent_id=row[1],
        known=True,
        session_id=row[2],
        kind=row[3],
        spawned_by=row[4],
        parent_session_key=row[5],
        head=row[6],
        pruned_through=row[7],
    )


def _signal(row: sqlite3.Row) -> SignalRecorded:
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
        summary=row[9],
        payload=Payload.model_validate_json(row[10]) if row[10] is not None else None,
        dedupe_key=row[11],
    )


def _state_change(row: sqlite3.Row) -> StateChange:
    """A `changesSince` event straight from its row: the reconcile hot path builds one model per row."""
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


def _session_params(state: SessionState) -> tuple[object, ...]:
    return (
        state.session_key,
        state.agent_id,
        state.session_id,
        state.kind,
        state.spawned_by,
        state.parent_session_key,
        state.head,
        state.pruned_through,
    )


def _signal_params(event: SignalRecorded) -> tuple[object, ...]:
    payload = orjson.dumps(event.payload.as_dict()).decode() if event.payload is not None else None
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
        event.summary,
        payload,
        event.dedupe_key,
    )


class _Pool(SQLiteConnectionPool):
    """eventsourcing's pool, with the durability setting applied to every new connection."""

    def __init__(self, *, synchronous: Synchronous, db_name: str, lock_timeout: int) -> None:
        self.synchronous = synchronous
        super().__init__(db_name=db_name, lock_timeout=lock_timeout)

    def _create_connection(self) -> SQLiteConnection:
        connection = super()._create_connection()
        cursor = connection.cursor()
        cursor.execute(f"PRAGMA synchronous={self.synchronous.upper()}")
        return connection


class _Datastore(SQLiteDatastore):
    def __init__(self, db_name: str, *, synchronous: Synchronous, lock_timeout: int) -> None:
        super().__init__(db_name, lock_timeout=lock_timeout)
        self.pool.close()
        self.pool = _Pool(synchronous=synchronous, db_name=db_name, lock_timeout=lock_timeout)


class SqliteEventRecorder(SQLiteApplicationRecorder):
    """eventsourcing's application recorder over a table whose notification ids are never reused."""

    def construct_create_table_statements(self) -> list[str]:
        """The schema above: events, counter and read-model tables, created together."""
        return list(_SCHEMA)

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
            "SELECT notification_id, originator_id, originator_version, topic, state "
            f"FROM {EVENTS_TABLE} {where}ORDER BY notification_id LIMIT ?"
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


class _SqliteWrite:
    """One `BEGIN IMMEDIATE` transaction; caches what it has read or written."""

    def __init__(self, cursor: SQLiteCursor) -> None:
        self._c = cursor
        self._states: dict[SessionIdentity, SessionState] = {}
        self._versions: dict[SessionIdentity, int] = {}
        self._next: int | None = None
        self.allocated = False

    def session(self, identity: SessionIdentity) -> SessionState:
        state = self._states.get(identity)
        if state is None:
            self._c.execute(_SELECT_SESSION, identity)
            row = self._c.fetchone()
            state = _state(row) if row is not None else session.initial(identity)
            self._states[identity] = state
        return state

    def signal_by_dedupe(self, dedupe_key: str) -> SignalRecorded | None:
        self._c.execute(f"SELECT {_SIGNAL_COLUMNS} FROM sw_signals WHERE dedupe_key=?", (dedupe_key,))
        row = self._c.fetchone()
        return _signal(row) if row is not None else None

    def next_sequence(self) -> int:
        if self._next is None:
            self._c.execute("SELECT value FROM sw_meta WHERE name='sequence'")
            self._next = int(self._c.fetchone()[0])
        self._next += 1
        return self._next

    def append(self, identity: SessionIdentity, events: Sequence[SessionEvent]) -> None:
        stream = session_stream_id(identity)
        version = self._versions.get(identity)
        if version is None:
            self._c.execute(
                f"SELECT MAX(originator_version) FROM {EVENTS_TABLE} WHERE originator_id=?",
                (stream.hex,),
            )
            version = self._c.fetchone()[0] or 0
        state = self.session(identity)
        for event in events:
            version += 1
            self._c.execute(_INSERT_EVENT, (stream.hex, version, event.type, encode(event)))
            state = session.evolve(state, event)
            if isinstance(event, SignalRecorded):
                self._c.execute(_INSERT_SIGNAL, _signal_params(event))
            if isinstance(event, SessionDeleted):
                self._c.execute("DELETE FROM sw_signals WHERE session_key=? AND agent_id=?", identity)
                self._c.execute("DELETE FROM sw_sessions WHERE session_key=? AND agent_id=?", identity)
            else:
                self._c.execute(_UPSERT_SESSION, _session_params(state))
        self._states[identity] = state
        self._versions[identity] = version

    def finish(self) -> None:
        if self._next is not None:
            self._c.execute("UPDATE sw_meta SET value=? WHERE name='sequence'", (self._next,))


def _ensure_private_file(path: Path) -> None:
    """Create a new database file readable by its owner only (SPEC §15.2)."""
    if path.exists():
        return
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)


class SqliteSignalStore:
    """The embedded default store: one SQLite file in WAL mode."""

    def __init__(
        self, path: str | Path, *, synchronous: Synchronous = "normal", lock_timeout: int = 5
    ) -> None:
        if synchronous not in ("normal", "full"):
            raise ValueError(f"synchronous: must be 'normal' or 'full', not {synchronous!r}")
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise StoreError(f"cannot open {self.path}: directory {self.path.parent} does not exist")
        try:
            _ensure_private_file(self.path)
            self._datastore = _Datastore(str(self.path), synchronous=synchronous, lock_timeout=lock_timeout)
            self.recorder = SqliteEventRecorder(self._datastore, EVENTS_TABLE)
            self.recorder.create_table()
        except (OSError, sqlite3.Error, Exception) as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc

    @contextmanager
    def write(self) -> Iterator[_SqliteWrite]:
        """An exclusive write transaction (`BEGIN IMMEDIATE`), committed when the block exits."""
        try:
            with self._datastore.get_connection(commit=True) as connection:
                cursor = connection.cursor()
                cursor.execute("BEGIN IMMEDIATE")
                try:
                    tx = _SqliteWrite(cursor)
                    yield tx
                    tx.finish()
                except BaseException:
                    connection.rollback()
                    raise
                connection.commit()
        except sqlite3.Error as exc:
            raise StoreError(f"{type(exc).__name__}: {exc}") from exc

    @contextmanager
    def _read(self) -> Iterator[SQLiteCursor]:
        try:
            with self._datastore.transaction(commit=False) as cursor:
                yield cursor
        except sqlite3.Error as exc:
            raise StoreError(f"{type(exc).__name__}: {exc}") from exc

    def session(self, identity: SessionIdentity) -> SessionState | None:
        """The state of a known identity."""
        with self._read() as c:
            c.execute(_SELECT_SESSION, identity)
            row = c.fetchone()
        return _state(row) if row is not None else None

    def sessions(self) -> list[SessionState]:
        """Every known identity, ordered by key then agent id."""
        with self._read() as c:
            c.execute(f"SELECT {_SESSION_COLUMNS} FROM sw_sessions ORDER BY session_key, agent_id")
            return [_state(row) for row in c.fetchall()]

    def status(
        self, identity: SessionIdentity, changes_since: int | None, limit: int
    ) -> SessionStatus | None:
        """`session_status` from one read transaction."""
        with self._read() as c:
            c.execute(_SELECT_SESSION, identity)
            row = c.fetchone()
            if row is None:
                return None
            state = _state(row)
            if changes_since is None:
                return build_status(state, None)
            c.execute(_SELECT_PAGE, (*identity, changes_since, limit + 1))
            rows = c.fetchall()
            c.execute("SELECT MIN(sequence) FROM sw_signals WHERE session_key=? AND agent_id=?", identity)
            first = c.fetchone()[0]
        page = [_state_change(r) for r in rows[:limit]]
        return build_status(state, changes_since, page, truncated=len(rows) > limit, first_retained=first)

    def read_model(self) -> ReadModel:
        """The stored read models, loaded whole."""
        with self._read() as c:
            c.execute(f"SELECT {_SESSION_COLUMNS} FROM sw_sessions")
            sessions = {s.identity: s for s in map(_state, c.fetchall())}
            c.execute(f"SELECT {_SIGNAL_COLUMNS} FROM sw_signals ORDER BY sequence")
            signals: dict[SessionIdentity, list[SignalRecorded]] = {}
            for signal in map(_signal, c.fetchall()):
                signals.setdefault(signal.identity, []).append(signal)
        dedupe = {
            s.dedupe_key: (identity, s.sequence)
            for identity, log in signals.items()
            for s in log
            if s.dedupe_key is not None
        }
        return ReadModel(sessions, {k: tuple(v) for k, v in signals.items()}, dedupe)

    def replay(self) -> Iterator[SessionEvent]:
        """Every stored event in commit order, paged."""
        start = 1
        while True:
            page = self.recorder.select_notifications(start, _REPLAY_PAGE)
            if not page:
                return
            for notification in page:
                yield decode(notification.topic, notification.state)
            start = page[-1].id + 1

    def durability(self) -> Synchronous:
        """The `synchronous` setting a pooled connection actually runs with (SPEC §15.1)."""
        with self._read() as c:
            c.execute("PRAGMA synchronous")
            level = int(c.fetchone()[0])
        return "full" if level >= 2 else "normal"  # noqa: PLR2004 - SQLite: 1 NORMAL, 2 FULL, 3 EXTRA

    def last_sequence(self) -> int:
        """The counter: the highest sequence ever allocated."""
        with self._read() as c:
            c.execute("SELECT value FROM sw_meta WHERE name='sequence'")
            return int(c.fetchone()[0])

    def close(self) -> None:
        """Close every pooled connection."""
        self._datastore.close()
