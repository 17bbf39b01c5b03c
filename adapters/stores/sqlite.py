"""`sqlite:///path`: eventsourcing's SQLite event store and the read-model tables in one file.

Every write runs in one `BEGIN IMMEDIATE` transaction that inserts the stored events and applies
them to the read models, so a returned record is visible and a crash leaves nothing half-done
(ADR-0005). Sequences come from a counter row that never goes down, never from rowids (ADR-0006).
The cursor facts a signal implies are applied as one set-based statement, like the peer's (ADR-0007).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeAlias
from urllib.parse import quote
from uuid import UUID

from eventsourcing.persistence import ConnectionPoolClosedError, PersistenceError
from eventsourcing.sqlite import SQLiteConnection, SQLiteConnectionPool, SQLiteDatastore

from sessionwatch.adapters.stores.port import HistoryTail, StoredHistory, StoreError, write_unavailable
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql import sqlite_schema as sql
from sessionwatch.adapters.stores.sql.migrate import migrate, refuse_newer
from sessionwatch.adapters.stores.sql.queue import WriteCache
from sessionwatch.adapters.stores.sql.sqlite_dialect import SqliteDialect, cursor, cursors_of
from sessionwatch.adapters.stores.sql.write import SqlWrite
from sessionwatch.adapters.stores.sqlite_recorder import SqliteEventRecorder
from sessionwatch.domain.digest import DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import (
    SessionState,
)
from sessionwatch.domain.signals import NOTIFYING_KINDS, SignalKind
from sessionwatch.domain.upstream import UpstreamLinkState
from sessionwatch.domain.watch_cursor import (
    CursorKey,
    CursorState,
)
from sessionwatch.projections.models import SessionStatus
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.projections.status import build_status

Synchronous: TypeAlias = Literal["normal", "full"]
logger = logging.getLogger("sessionwatch")
_DEFAULT_LOCK_TIMEOUT = 5
_WAL_SIZE_LIMIT = 16 * 1024 * 1024
# A prune that leaves at least this share of the file's pages free, and this many, gives them back
# to the file system with a VACUUM (ADR-0034); smaller ones leave them for the next records to reuse.
RECLAIM_FREE_SHARE = 0.25
RECLAIM_MIN_PAGES = 1024
_STORE_FAULTS = (sqlite3.Error, PersistenceError, ConnectionPoolClosedError)
"""What a failing file, lock or pool raises (eventsourcing wraps `sqlite3` errors in its own)."""
_WAITED_FOR_A_LOCK = ("SQLITE_BUSY", "SQLITE_LOCKED")
_FOR_NOW = (*_WAITED_FOR_A_LOCK, "SQLITE_FULL")
"""What makes a write impossible for now while reads go on: another writer's lock, a full disk."""


class _CannotConnectError(StoreError):
    """A pooled connection could not be made (the file vanished, is unreadable, or stayed locked)."""


class _PooledConnection(SQLiteConnection):
    """A connection that knows whether its file could be written when it was opened.

    SQLite opens a write-protected file (read-only mount, immutable, no permission) read-only
    without an error, and such a connection stays read-only after the protection is lifted.
    """

    def __init__(self, sqlite_conn: sqlite3.Connection, max_age: float | None, *, writable: bool) -> None:
        super().__init__(sqlite_conn=sqlite_conn, max_age=max_age)
        self.writable = writable


def _connect(db_name: str, synchronous: Synchronous, lock_timeout: int | None) -> sqlite3.Connection:
    """A connection to the existing file (`mode=rw`): one that vanished is never created afresh.

    A new empty database in its place would adopt the old file's `-wal` and lose what it holds.
    Statements are cached (256, see `_Pool`), in WAL with the chosen `synchronous`, autocommit
    (transactions are begun explicitly).
    """
    try:
        raw = sqlite3.connect(
            f"file:{quote(os.fsencode(db_name))}?mode=rw",
            uri=True,
            check_same_thread=False,
            isolation_level=None,
            cached_statements=_Pool.STATEMENT_CACHE,
            timeout=lock_timeout or _DEFAULT_LOCK_TIMEOUT,
        )
    except sqlite3.Error as exc:
        raise _CannotConnectError(f"cannot connect to {db_name}: {exc}") from exc
    try:
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute(f"PRAGMA journal_size_limit={_WAL_SIZE_LIMIT}")  # a prune's WAL is not kept forever
        raw.execute(f"PRAGMA synchronous={synchronous.upper()}")
    except sqlite3.Error as exc:
        raw.close()
        raise _CannotConnectError(f"cannot connect to {db_name}: {exc}") from exc
    return raw


def _reclaim(cursor: sqlite3.Cursor) -> None:
    """After a committed prune: VACUUM when a large share of the file is free pages (ADR-0034).

    The WAL is checkpointed and truncated after it, so the main file shrinks now rather than at the
    next automatic checkpoint. A failure (a reader holding the file, the disk full) only logs: the
    prune is committed, and the next one tries again.
    """
    try:
        pages = int(cursor.execute("PRAGMA page_count").fetchone()[0])
        free = int(cursor.execute("PRAGMA freelist_count").fetchone()[0])
        if free < RECLAIM_MIN_PAGES or free < pages * RECLAIM_FREE_SHARE:
            return
        cursor.execute("VACUUM")
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        logger.warning("sessionwatch: vacuum after prune failed (error=%s)", type(exc).__name__)


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

    def get_connection(
        self, timeout: float | None = None, *, is_writer: bool | None = None
    ) -> SQLiteConnection:
        """eventsourcing's, except that a connection that cannot be made gives its place back.

        eventsourcing 9.5 takes the writer lock (or counts a reader) before it creates a connection,
        and keeps it when that fails: every later write would wait `pool_timeout` and fail.
        """
        try:
            return super().get_connection(timeout, is_writer=is_writer)
        except _CannotConnectError:
            if is_writer is True:  # what `put_connection` undoes for a connection given back
                self._num_writers -= 1
                self._writer_lock.release()
            elif is_writer is False:
                with self._no_readers:
                    self._num_readers -= 1
            raise

    def _create_connection(self) -> SQLiteConnection:
        raw = _connect(self.db_name, self.synchronous, self.lock_timeout)
        return _PooledConnection(raw, self.max_age, writable=os.access(self.db_name, os.W_OK))

    def put_connection(self, conn: SQLiteConnection) -> None:
        """Take a connection back; one opened read-only is closed, so no later write ever gets it.

        One given back after `close` is closed here, by the thread that used it.
        """
        with self._put_condition:  # reentrant: eventsourcing's takes it again
            if self._closed:
                self._in_use.pop(id(conn), None)
                conn.close()
                return
            if isinstance(conn, _PooledConnection) and not conn.writable:
                conn.close()
            super().put_connection(conn)

    def close(self) -> None:
        """Close the idle connections now, and each one in use when it is given back.

        eventsourcing 9.5 also closes the connections in use, from the closing thread; a SQLite
        connection closed while another thread runs a statement on it can crash the interpreter.
        """
        with self._put_condition:
            self._closed = True
            while self._pool:
                self._pool.popleft().close()


class _Datastore(SQLiteDatastore):
    def __init__(self, db_name: str, *, synchronous: Synchronous, lock_timeout: int) -> None:
        super().__init__(db_name, lock_timeout=lock_timeout)
        self.pool.close()
        self.pool = _Pool(synchronous=synchronous, db_name=db_name, lock_timeout=lock_timeout)


def _file_identity(path: Path | str) -> tuple[int, int] | None:
    """The (device, inode) of the file at `path`, None when there is none."""
    try:
        found = os.stat(path)  # noqa: PTH116 - every write asks: a str path skips pathlib's layers
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _abandon(connection: sqlite3.Connection, exc: BaseException) -> bool:
    """Roll a failed write back; close its connection unless it merely waited for a lock.

    A connection that hit a read-only, full or failing file is not used again: SQLite opens a
    connection read-only when the file is write-protected, and it would stay so after the fault.
    Returns whether the connection was closed.
    """
    try:
        connection.rollback()
    except sqlite3.Error:
        connection.close()
        return True
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", None) or ""  # absent on errors sqlite3 raises itself
        if not name.startswith(_WAITED_FOR_A_LOCK):
            connection.close()
            return True
    return False


def _ensure_private_file(path: Path) -> None:
    """Create a new database file readable by its owner only."""
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
        self.notifying = NOTIFYING_KINDS
        """The kinds that notify watchers (`notify_terminal_runs` widens it, `set_notifying_kinds`)."""
        self._schema_ready = False
        self._synchronous: Synchronous = synchronous
        self._lock_timeout = lock_timeout
        self._writing = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._closed = False
        self._cache = WriteCache()
        self._data_version: int | None = None
        try:
            has_directory = self.path.parent.is_dir()
        except OSError as exc:  # a name too long, for one
            raise StoreError(f"cannot open {self.path}: {exc.strerror or exc}") from exc
        if not has_directory:
            raise StoreError(f"cannot open {self.path}: directory {self.path.parent} does not exist")
        try:
            _ensure_private_file(self.path)
            self._absolute = self.path.absolute()  # what it names must not change with the working directory
            self._absolute_text = str(self._absolute)
            self._file = _file_identity(self._absolute)
            self._datastore = _Datastore(
                str(self._absolute), synchronous=synchronous, lock_timeout=lock_timeout
            )
            self.recorder = SqliteEventRecorder(self._datastore, sql.EVENTS_TABLE)
            self._create_schema(lock_timeout)
        except Exception as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc

    def _create_schema(self, lock_timeout: float) -> None:
        """Create or migrate the tables in one `BEGIN IMMEDIATE` transaction, unless they are current.

        A store at the current version is only read (ADR-0064): opening it needs neither the write
        lock, which another process may hold for seconds (a prune), nor free disk. Processes opening
        a new file together race for its first write (and for switching it to WAL, which SQLite may
        refuse at once rather than wait): a locked file is retried until `lock_timeout` has passed.
        """
        if self._stored_version() == sql.SCHEMA_VERSION:
            self._schema_ready = True
            return
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

    def _stored_version(self) -> int | None:
        """The schema version the file holds, by one read; None before the tables exist (a new file)."""
        with self._one_statement() as c:
            c.execute(sql.SELECT_META_TABLE)
            if c.fetchone() is None:
                return None
        with self._one_statement() as c:
            c.execute(sql.SELECT_SCHEMA_VERSION)
            row = c.fetchone()
        if row is None:
            return None
        refuse_newer(int(row[0]), sql)
        return int(row[0])

    @contextmanager
    def write(self) -> Iterator[SqlWrite]:
        """An exclusive write transaction (`BEGIN IMMEDIATE`), committed when the block exits.

        Every write of this store runs on its one writer connection, one at a time (ADR-0018). It
        writes nothing and raises `StoreError` when the file at `path` is no longer the one this
        store opened (moved or deleted while open): SQLite would go on writing to the detached file,
        and a signal acknowledged there is lost with it.
        """
        waited = self._lock_timeout or _DEFAULT_LOCK_TIMEOUT  # as long as SQLite waits for its lock
        if not self._writing.acquire(timeout=waited):
            raise write_unavailable(f"timed out after {waited} s waiting for this store's writer")
        try:
            connection = self._writer_connection()
            cursor = connection.cursor()
            try:
                cursor.execute("BEGIN IMMEDIATE")
                self._check_same_file()
                self._check_data_version(cursor)
                if not self._schema_ready:
                    for statement in sql.SCHEMA:
                        cursor.execute(statement)
                    migrate(cursor, sql)
                    self._cache.clear()
                tx = SqlWrite(cursor, SqliteDialect(self._cache.counters), self._cache, self.notifying)
                yield tx
                tx.finish()
                connection.commit()
            except BaseException as exc:
                if _abandon(connection, exc):
                    self._writer = None
                raise
            tx.keep()
            self._schema_ready = True
            if tx.vacuum_due:
                _reclaim(cursor)
        except _STORE_FAULTS as exc:
            name = getattr(exc, "sqlite_errorname", None) or getattr(exc.__cause__, "sqlite_errorname", "")
            message = f"{type(exc).__name__}: {exc}"
            raise (write_unavailable if str(name).startswith(_FOR_NOW) else StoreError)(message) from exc
        finally:
            self._writing.release()

    def _writer_connection(self) -> sqlite3.Connection:
        """The writer connection, opened again after a fault closed it."""
        if self._writer is None:
            if self._closed:
                raise StoreError(f"{self.path}: the store is closed")
            self._writer = _connect(str(self._absolute), self._synchronous, self._lock_timeout)
            self._data_version = None  # a new connection counts other connections' commits afresh
        return self._writer

    def _check_data_version(self, cursor: sqlite3.Cursor) -> None:
        """Empty the write cache when another connection committed since this one last wrote.

        SQLite's `data_version` changes on a connection exactly when some other connection (another
        process, or a replaced writer) committed; this store's own commits leave it alone.
        """
        cursor.execute("PRAGMA data_version")
        version = cursor.fetchone()[0]
        if version != self._data_version:
            self._cache.clear()
            self._data_version = version

    def _check_same_file(self) -> None:
        """Raise `StoreError` unless the file at `path` is still the one this store opened."""
        if _file_identity(self._absolute_text) != self._file:
            raise StoreError(f"{self.path} was moved or deleted while open: nothing written")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Cursor]:
        try:
            with self._datastore.transaction(commit=False) as cursor:
                yield cursor.sqlite_cursor
        except _STORE_FAULTS as exc:
            raise StoreError(f"{type(exc).__name__}: {exc}") from exc

    @contextmanager
    def _one_statement(self) -> Iterator[sqlite3.Cursor]:
        """A cursor for a single statement: no BEGIN/ROLLBACK around it, one statement is one snapshot.

        The cursor is closed on the way out, which ends the statement and with it the snapshot, so a
        pooled connection never holds an old WAL snapshot.
        """
        try:
            with self._datastore.get_connection(commit=False) as connection:
                cursor = connection.cursor().sqlite_cursor
                try:
                    yield cursor
                finally:
                    cursor.close()
        except _STORE_FAULTS as exc:
            raise StoreError(f"{type(exc).__name__}: {exc}") from exc

    def session(self, identity: SessionIdentity) -> SessionState | None:
        """The state of a known identity."""
        with self._one_statement() as c:
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
        """`session_status` from one statement, hence one snapshot."""
        with self._one_statement() as c:
            if changes_since is None:
                c.execute(sql.SELECT_SESSION, identity)
                row = c.fetchone()
                return build_status(sql_rows.session_state(row), None) if row is not None else None
            key, agent = identity
            c.execute(
                sql.SELECT_STATUS_JSON,
                {"key": key, "agent": agent, "since": changes_since, "rows": limit + 1},
            )
            row = c.fetchone()
            if row is None:
                return None
        state, first, events = sql_rows.session_state(row), row[-2], sql_rows.state_changes(row[-1])
        page = events[:limit]
        return build_status(state, changes_since, page, truncated=len(events) > limit, first_retained=first)

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor, or None."""
        with self._read() as c:
            return cursor(c, key)

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors, ordered by target."""
        with self._read() as c:
            return cursors_of(c, watcher, pending_only=pending_only)

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        """Whether any cursor targets the identity (one indexed row)."""
        with self._read() as c:
            c.execute(sql.SELECT_ANY_CURSOR_ON, identity)
            return c.fetchone() is not None

    def digest(self, identity: SessionIdentity) -> DigestState | None:
        """The main session's creation digest row."""
        with self._read() as c:
            c.execute(sql.SELECT_DIGEST, identity)
            row = c.fetchone()
        return sql_rows.digest_state(row) if row is not None else None

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        """The identity's link row, a tombstone included."""
        with self._read() as c:
            c.execute(sql.SELECT_LINK, identity)
            row = c.fetchone()
        return sql_rows.link_state(row) if row is not None else None

    def upstream_links(self, *, watched_only: bool) -> list[UpstreamLinkState]:
        """Every active link (only cursor targets when `watched_only`), by identity."""
        with self._read() as c:
            c.execute(sql.SELECT_WATCHED_LINKS if watched_only else sql.SELECT_ACTIVE_LINKS)
            return [sql_rows.link_state(row) for row in c.fetchall()]

    def read_model(self, *, like: ReadModel | None = None) -> ReadModel:
        """The stored read models, loaded whole (sharing `like`'s equal values)."""
        with self._read() as c:
            return sql_rows.read_model(c, sql, like=like)

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event in commit order, from one read snapshot."""
        with self.snapshot() as snapshot:
            yield from snapshot.replay()

    @contextmanager
    def snapshot(self) -> Iterator[sql_rows.SqlSnapshot]:
        """One read transaction (a WAL snapshot) for events and read models alike."""
        with self._read() as c:
            yield sql_rows.SqlSnapshot(c, sql)

    @contextmanager
    def stored_history(self) -> Iterator[StoredHistory]:
        """One read transaction (a WAL snapshot): the counter, every stream's version, the events paged."""
        with self._read() as c:
            c.execute(sql.SELECT_COUNTER)
            sequence = int(c.fetchone()[0])
            versions = sql_rows.stream_versions(c, sql)
            yield StoredHistory(sequence, versions, sql_rows.stored_rows(c, sql))

    def load_history(
        self,
        events: Iterable[tuple[UUID, int, DomainEvent]],
        tail: HistoryTail | Callable[[], HistoryTail],
    ) -> int:
        """Bulk-load an imported history into this empty store in one `BEGIN IMMEDIATE` transaction."""
        with self.write() as tx:
            return tx.load_history(events, tail)

    def durability(self) -> Synchronous:
        """The `synchronous` setting a pooled connection actually runs with."""
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
            c.execute(sql.SELECT_COUNTER)
            return int(c.fetchone()[0])

    def set_notifying_kinds(self, kinds: frozenset[SignalKind]) -> None:
        """Which kinds notify watchers on this store from now on (the façade's setting)."""
        self.notifying = kinds

    def close(self) -> None:
        """Close the writer and every pooled connection."""
        acquired = self._writing.acquire(timeout=self._lock_timeout or _DEFAULT_LOCK_TIMEOUT)  # a write ends
        try:
            self._closed = True
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        finally:
            if acquired:
                self._writing.release()
        self._datastore.close()
