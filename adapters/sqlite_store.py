"""`sqlite:///path`: eventsourcing's SQLite event store and the read-model tables in one file.

Every write runs in one `BEGIN IMMEDIATE` transaction that inserts the stored events and applies
them to the read models, so a returned record is visible and a crash leaves nothing half-done
(ADR-0005). Sequences come from a counter row that never goes down, never from rowids (ADR-0006).
The cursor facts a signal implies are applied as one set-based statement, like the peer's (ADR-0007).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Literal, TypeAlias
from uuid import UUID

from eventsourcing.persistence import Notification
from eventsourcing.sqlite import (
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteDatastore,
)

from sessionwatch.adapters import sql_rows
from sessionwatch.adapters import sqlite_schema as sql
from sessionwatch.adapters.archive import JsonlArchive
from sessionwatch.adapters.mapper import (
    STORE_STREAM_ID,
    cursor_stream_id,
    encode,
    replay,
    session_stream_id,
)
from sessionwatch.adapters.store import PruneCounts, StoreError, SweepCounts
from sessionwatch.domain import session, watch_cursor
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity, agent_id_of
from sessionwatch.domain.retention import PruneCutoffs, Retention, SignalsPruned, compaction_due
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionEvent,
    SessionReset,
    SessionState,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.signals import NOTIFYING_KINDS
from sessionwatch.domain.watch_cursor import (
    CursorEvent,
    CursorKey,
    CursorState,
    MaterialSignalSeen,
    NoticesSwept,
)
from sessionwatch.projections.models import SessionStatus
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.projections.status import build_status

Synchronous: TypeAlias = Literal["normal", "full"]
_DEFAULT_LOCK_TIMEOUT = 5
_WAL_SIZE_LIMIT = 16 * 1024 * 1024


class _Pool(SQLiteConnectionPool):
    """eventsourcing's pool, with connections made for this workload.

    eventsourcing 9.5 opens connections with `cached_statements=True`, which `sqlite3` reads as a
    cache of ONE prepared statement, so every statement of a transaction was parsed again on every
    call. Connections here keep 256, run in WAL with the chosen `synchronous`, and return tuples.
    """

    STATEMENT_CACHE = 256

    def __init__(self, *, synchronous: Synchronous, db_name: str, lock_timeout: int) -> None:
        self.synchronous = synchronous
        super().__init__(db_name=db_name, lock_timeout=lock_timeout)

    def _create_connection(self) -> SQLiteConnection:
        raw = sqlite3.connect(
            self.db_name,
            check_same_thread=False,
            isolation_level=None,  # autocommit: transactions are begun explicitly
            cached_statements=self.STATEMENT_CACHE,
            timeout=self.lock_timeout or _DEFAULT_LOCK_TIMEOUT,
        )
        try:
            raw.execute("PRAGMA journal_mode=WAL")
            raw.execute(f"PRAGMA journal_size_limit={_WAL_SIZE_LIMIT}")  # a prune's WAL is not kept forever
            raw.execute(f"PRAGMA synchronous={self.synchronous.upper()}")
        except sqlite3.Error as exc:
            raw.close()
            raise StoreError(f"cannot connect to {self.db_name}: {exc}") from exc
        return SQLiteConnection(sqlite_conn=raw, max_age=self.max_age)


class _Datastore(SQLiteDatastore):
    def __init__(self, db_name: str, *, synchronous: Synchronous, lock_timeout: int) -> None:
        super().__init__(db_name, lock_timeout=lock_timeout)
        self.pool.close()
        self.pool = _Pool(synchronous=synchronous, db_name=db_name, lock_timeout=lock_timeout)


class SqliteEventRecorder(SQLiteApplicationRecorder):
    """eventsourcing's application recorder over a table whose notification ids are never reused."""

    def construct_create_table_statements(self) -> list[str]:
        """The whole schema: events, counter and read-model tables, created together."""
        return list(sql.SCHEMA)

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
            f"FROM {sql.EVENTS_TABLE} {where}ORDER BY notification_id LIMIT ?"
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


def _cursors_of(c: sqlite3.Cursor, watcher: str, *, pending_only: bool) -> list[CursorState]:
    pending = " AND notified > last_seen" if pending_only else ""
    c.execute(
        f"SELECT {sql.CURSOR_COLUMNS} FROM sw_cursors WHERE watcher=?{pending}"
        " ORDER BY target_key, target_agent_id",
        (watcher,),
    )
    return [sql_rows.cursor_state(row) for row in c.fetchall()]


def _cursor(c: sqlite3.Cursor, key: CursorKey) -> CursorState | None:
    c.execute(sql.SELECT_CURSOR, (key.target_key, key.target_agent_id, key.watcher))
    row = c.fetchone()
    return sql_rows.cursor_state(row) if row is not None else None


class _SqliteWrite:
    """One `BEGIN IMMEDIATE` transaction; caches what it has read or written."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._c = cursor
        self._states: dict[SessionIdentity, SessionState] = {}
        self._versions: dict[UUID, int] = {}
        self._next: int | None = None
        self._written = 0

    def session(self, identity: SessionIdentity) -> SessionState:
        state = self._states.get(identity)
        if state is None:
            self._c.execute(sql.SELECT_SESSION, identity)
            row = self._c.fetchone()
            if row is None:
                state = session.initial(identity)
            else:
                state = sql_rows.session_state(row)
                self._versions[session_stream_id(identity)] = row[-1]
            self._states[identity] = state
        return state

    def signal_by_dedupe(self, dedupe_key: str) -> SignalRecorded | None:
        self._c.execute(f"SELECT {sql.SIGNAL_COLUMNS} FROM sw_signals WHERE dedupe_key=?", (dedupe_key,))
        row = self._c.fetchone()
        return sql_rows.signal(row) if row is not None else None

    def next_sequence(self) -> int:
        if self._next is None:  # the first allocation takes and writes one number in one statement
            self._c.execute("UPDATE sw_meta SET value = value + 1 WHERE name='sequence' RETURNING value")
            self._next = self._written = int(self._c.fetchone()[0])
            return self._next
        self._next += 1
        return self._next

    def _store_event(self, stream: UUID, event: DomainEvent) -> tuple[int, int]:
        """Insert one stored event; return its stream version and notification id."""
        version = self._versions.get(stream)
        if version is None:
            self._c.execute(sql.SELECT_STREAM_VERSION, {"s": stream.hex})
            version = int(self._c.fetchone()[0])
        version += 1
        self._c.execute(sql.INSERT_EVENT, (stream.hex, version, event.type, encode(event)))
        self._versions[stream] = version
        if not isinstance(event, SessionUpserted | SignalRecorded | SessionReset | SessionDeleted):
            # cursor and store streams: no read-model row carries their version (sw_sessions does)
            self._c.execute(sql.UPSERT_STREAM, (stream.hex, version))
        return version, int(self._c.lastrowid or 0)

    def append(self, identity: SessionIdentity, events: Sequence[SessionEvent]) -> list[MaterialSignalSeen]:
        stream = session_stream_id(identity)
        state = self.session(identity)
        opened: list[MaterialSignalSeen] = []
        for event in events:
            version, notification_id = self._store_event(stream, event)
            opened.extend(self._apply_implied(identity, event))
            state = session.evolve(state, event)
            if isinstance(event, SignalRecorded):
                self._c.execute(sql.INSERT_SIGNAL, sql_rows.signal_params(event, notification_id))
            if isinstance(event, SessionDeleted):
                self._c.execute("DELETE FROM sw_signals WHERE session_key=? AND agent_id=?", identity)
                self._c.execute(sql.UPSERT_STREAM, (stream.hex, version))  # the row goes; its version stays
            if state.known:
                self._c.execute(sql.UPSERT_SESSION, sql_rows.session_params(state, version))
            else:  # deleted, or reset while known only by its cursors: not listed (as the fold)
                self._c.execute("DELETE FROM sw_sessions WHERE session_key=? AND agent_id=?", identity)
        self._states[identity] = state
        return opened

    def _apply_implied(self, identity: SessionIdentity, event: SessionEvent) -> list[MaterialSignalSeen]:
        """The SQL form of `read_model.implied_facts` (the contract suite keeps them equal).

        Returns the notices the event opened (what the shell wakes watchers for).
        """
        match event:
            case SignalRecorded() if event.kind in NOTIFYING_KINDS:
                return self._material_update(event)
            case SignalRecorded():  # seeding (SPEC §5.1) needs no cursor state: it overwrites
                for command in watch_cursor.react(event, {}, at_ms=event.recorded_at_ms):
                    for fact in watch_cursor.derive(command, None):
                        seeded = watch_cursor.evolve(None, fact)
                        if seeded is not None:
                            self._c.execute(sql.UPSERT_CURSOR, sql_rows.cursor_params(seeded))
                return []
            case SessionReset() | SessionDeleted():
                self._drop_cursors(identity, deleted=isinstance(event, SessionDeleted))
                return []
            case _:
                return []

    def _material_update(self, signal: SignalRecorded) -> list[MaterialSignalSeen]:
        """SPEC §6.1 for every holder but the actor in one statement, like the peer's.

        Then a `(0, e, e)` cursor for each producer watcher without one. Returns the notices this
        opened (`N` moved to `e`).
        """
        e = signal.sequence
        params = {"e": e, "now": signal.recorded_at_ms, "key": signal.session_key, "agent": signal.agent_id}
        self._c.execute(sql.MATERIAL_UPDATE, {**params, "actor": signal.actor_id})
        rows = self._c.fetchall()
        updated = {watcher for watcher, _, _ in rows}
        opened = [(watcher, last) for watcher, last, notified in rows if notified == e]
        for watcher in watch_cursor.notified_watchers(signal, signal.watchers, ()):
            if watcher not in updated:
                self._c.execute(
                    sql.INSERT_NEW_CURSOR,
                    (
                        watcher,
                        signal.session_key,
                        signal.agent_id,
                        e,
                        e,
                        signal.recorded_at_ms,
                        agent_id_of(watcher),
                    ),
                )
                opened.append((watcher, 0))
        return [
            MaterialSignalSeen(
                watcher=watcher,
                target_key=signal.session_key,
                target_agent_id=signal.agent_id,
                at_ms=signal.recorded_at_ms,
                sequence=e,
                notified=e,
                last_seen=last,
            )
            for watcher, last in opened
        ]

    def _drop_cursors(self, identity: SessionIdentity, *, deleted: bool) -> None:
        clauses = []
        params: list[str] = []
        if watch_cursor.watcher_identity(identity.session_key) == identity:
            clauses.append("watcher = ?")
            params.append(identity.session_key)
        if deleted:
            clauses.append("(target_key = ? AND target_agent_id = ?)")
            params.extend(identity)
        if clauses:
            self._c.execute(f"DELETE FROM sw_cursors WHERE {' OR '.join(clauses)}", params)

    def sweep(self, at_ms: int) -> SweepCounts:
        """The SQL form of `read_model.plan_sweep`.

        One statement re-freezes every open notice of an existing watcher; one `NoticesSwept` event
        records it when anything changed (ADR-0007).
        """
        self._c.execute(sql.SELECT_REPUBLISHED)
        republished = [CursorKey(*row) for row in self._c.fetchall()]
        self._c.execute(sql.COUNT_OPEN)
        open_count = int(self._c.fetchone()[0])
        self._c.execute(sql.REFREEZE, {"now": at_ms})
        refrozen = self._c.rowcount
        if refrozen:
            self._store_event(STORE_STREAM_ID, NoticesSwept(at_ms=at_ms))
        return SweepCounts(tuple(republished), refrozen, open_count - len(republished))

    def cursor(self, key: CursorKey) -> CursorState | None:
        return _cursor(self._c, key)

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        return _cursors_of(self._c, watcher, pending_only=pending_only)

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        self._c.execute("SELECT 1 FROM sw_cursors WHERE target_key=? AND target_agent_id=? LIMIT 1", identity)
        return self._c.fetchone() is not None

    def append_cursor(
        self, key: CursorKey, events: Sequence[CursorEvent], *, before: CursorState | None
    ) -> None:
        stream = cursor_stream_id(key)
        state = before
        for event in events:
            self._store_event(stream, event)
            state = watch_cursor.evolve(state, event)
        if state is None:
            self._c.execute(sql.DELETE_CURSOR, (key.target_key, key.target_agent_id, key.watcher))
        else:
            self._c.execute(sql.UPSERT_CURSOR, sql_rows.cursor_params(state))

    def prune(self, now_ms: int, policy: Retention, archive: JsonlArchive | None) -> PruneCounts:
        """The SQL form of `projections.retention.prune` (the contract suite keeps them equal)."""
        c = self._c
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
            c.execute(sql.SELECT_REMOVED_EVENTS, removed)
            archived = archive.append((nid, UUID(hex=s), v, t, b) for nid, s, v, t, b in c.fetchall())
        c.execute(sql.STAMP_WATERMARKS, removed)
        stamped = c.rowcount
        c.execute(sql.DELETE_REMOVED, removed)
        signals_removed = c.rowcount
        c.execute("DELETE FROM sw_cursors WHERE updated_at_ms < ?", (cutoffs.cursors_updated_before_ms,))
        expired = c.rowcount
        self._states.clear()  # heads and watermarks changed under the cache
        c.execute("INSERT OR REPLACE INTO sw_meta (name, value) VALUES ('last_prune_ms', ?)", (now_ms,))
        counts = PruneCounts(cutoffs, signals_removed, stamped, expired, events_deleted=0, archived=archived)
        if not (signals_removed or expired):
            c.execute(sql.COUNT_REPLACEABLE_EVENTS)
            if not compaction_due(*c.fetchone()):
                return counts  # nothing changed and too little to compact: a prune that writes no event
        c.execute(f"SELECT {sql.SESSION_COLUMNS} FROM sw_sessions ORDER BY session_key, agent_id")
        sessions = tuple(sql_rows.session_state(r) for r in c.fetchall())
        c.execute(
            f"SELECT {sql.CURSOR_COLUMNS} FROM sw_cursors ORDER BY watcher, target_key, target_agent_id"
        )
        cursors = tuple(sql_rows.cursor_state(r) for r in c.fetchall())
        _, checkpoint = self._store_event(
            STORE_STREAM_ID, SignalsPruned(cutoffs=cutoffs, sessions=sessions, cursors=cursors)
        )
        c.execute(sql.TRUNCATE_EVENTS, (checkpoint,))
        return replace(counts, events_deleted=c.rowcount)

    def finish(self) -> None:
        if self._next is not None and self._next != self._written:
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
        self._schema_ready = False
        if not self.path.parent.is_dir():
            raise StoreError(f"cannot open {self.path}: directory {self.path.parent} does not exist")
        try:
            _ensure_private_file(self.path)
            self._datastore = _Datastore(str(self.path), synchronous=synchronous, lock_timeout=lock_timeout)
            self.recorder = SqliteEventRecorder(self._datastore, sql.EVENTS_TABLE)
            self._create_schema(lock_timeout)
        except Exception as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc

    def _create_schema(self, lock_timeout: float) -> None:
        """Create the tables in one `BEGIN IMMEDIATE` transaction, whichever process comes first.

        Processes opening a new file together race for its first write (and for switching it to
        WAL, which SQLite may refuse at once rather than wait): a locked file is retried until
        `lock_timeout` has passed.
        """
        deadline = time.monotonic() + lock_timeout
        while True:
            try:
                with self.write():
                    pass  # `write()` runs the schema statements first (below)
            except StoreError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
            else:
                return

    @contextmanager
    def write(self) -> Iterator[_SqliteWrite]:
        """An exclusive write transaction (`BEGIN IMMEDIATE`), committed when the block exits."""
        try:
            with self._datastore.get_connection(commit=True) as connection:
                cursor = connection.cursor().sqlite_cursor  # the plain sqlite3 cursor: rowcount, speed
                cursor.execute("BEGIN IMMEDIATE")
                if not self._schema_ready:
                    for statement in sql.SCHEMA:
                        cursor.execute(statement)
                try:
                    tx = _SqliteWrite(cursor)
                    yield tx
                    tx.finish()
                except BaseException:
                    connection.rollback()
                    raise
                connection.commit()
                self._schema_ready = True
        except sqlite3.Error as exc:
            raise StoreError(f"{type(exc).__name__}: {exc}") from exc

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Cursor]:
        try:
            with self._datastore.transaction(commit=False) as cursor:
                yield cursor.sqlite_cursor
        except sqlite3.Error as exc:
            raise StoreError(f"{type(exc).__name__}: {exc}") from exc

    def session(self, identity: SessionIdentity) -> SessionState | None:
        """The state of a known identity."""
        with self._read() as c:
            c.execute(sql.SELECT_SESSION, identity)
            row = c.fetchone()
        return sql_rows.session_state(row) if row is not None else None

    def sessions(self) -> list[SessionState]:
        """Every known identity, ordered by key then agent id."""
        with self._read() as c:
            c.execute(f"SELECT {sql.SESSION_COLUMNS} FROM sw_sessions ORDER BY session_key, agent_id")
            return [sql_rows.session_state(row) for row in c.fetchall()]

    def status(
        self, identity: SessionIdentity, changes_since: int | None, limit: int
    ) -> SessionStatus | None:
        """`session_status` from one read transaction."""
        with self._read() as c:
            c.execute(sql.SELECT_SESSION, identity)
            row = c.fetchone()
            if row is None:
                return None
            state = sql_rows.session_state(row)
            if changes_since is None:
                return build_status(state, None)
            c.execute(sql.SELECT_PAGE, (*identity, changes_since, limit + 1))
            rows = c.fetchall()
            c.execute("SELECT MIN(sequence) FROM sw_signals WHERE session_key=? AND agent_id=?", identity)
            first = c.fetchone()[0]
        page = [sql_rows.state_change(r) for r in rows[:limit]]
        return build_status(state, changes_since, page, truncated=len(rows) > limit, first_retained=first)

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor, or None."""
        with self._read() as c:
            return _cursor(c, key)

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors, ordered by target."""
        with self._read() as c:
            return _cursors_of(c, watcher, pending_only=pending_only)

    def read_model(self) -> ReadModel:
        """The stored read models, loaded whole."""
        with self._read() as c:
            c.execute(f"SELECT {sql.SESSION_COLUMNS} FROM sw_sessions")
            sessions = {s.identity: s for s in map(sql_rows.session_state, c.fetchall())}
            c.execute(f"SELECT {sql.SIGNAL_COLUMNS} FROM sw_signals ORDER BY sequence")
            signals: dict[SessionIdentity, list[SignalRecorded]] = {}
            for signal in map(sql_rows.signal, c.fetchall()):
                signals.setdefault(signal.identity, []).append(signal)
            c.execute(f"SELECT {sql.CURSOR_COLUMNS} FROM sw_cursors")
            cursors: dict[SessionIdentity, dict[str, CursorState]] = {}
            for state in map(sql_rows.cursor_state, c.fetchall()):
                cursors.setdefault(state.key.target, {})[state.watcher] = state
        dedupe = {
            s.dedupe_key: (identity, s.sequence)
            for identity, log in signals.items()
            for s in log
            if s.dedupe_key is not None
        }
        return ReadModel(sessions, {k: tuple(v) for k, v in signals.items()}, dedupe, cursors)

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event in commit order."""
        return replay(self.recorder)

    def durability(self) -> Synchronous:
        """The `synchronous` setting a pooled connection actually runs with (SPEC §15.1)."""
        with self._read() as c:
            c.execute("PRAGMA synchronous")
            level = int(c.fetchone()[0])
        return "full" if level >= 2 else "normal"  # noqa: PLR2004 - SQLite: 1 NORMAL, 2 FULL, 3 EXTRA

    def last_prune_ms(self) -> int | None:
        """When the last prune ran."""
        with self._read() as c:
            c.execute("SELECT value FROM sw_meta WHERE name='last_prune_ms'")
            row = c.fetchone()
        return int(row[0]) if row is not None else None

    def stored_event_count(self) -> int:
        """How many stored events the events table holds."""
        with self._read() as c:
            c.execute(f"SELECT COUNT(*) FROM {sql.EVENTS_TABLE}")
            return int(c.fetchone()[0])

    def last_sequence(self) -> int:
        """The counter: the highest sequence ever allocated."""
        with self._read() as c:
            c.execute("SELECT value FROM sw_meta WHERE name='sequence'")
            return int(c.fetchone()[0])

    def close(self) -> None:
        """Close every pooled connection."""
        self._datastore.close()
