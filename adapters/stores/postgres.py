"""`postgresql://`: the SQLite store's design on PostgreSQL, for several gateway processes (ADR-0009).

Every write is one READ COMMITTED transaction that first locks the counter row (`sw_meta.sequence
FOR UPDATE`): writers in every process run one at a time, as under SQLite's `BEGIN IMMEDIATE`, so
sequences, dedupe checks and the commit order of events (which the implied cursor facts depend
on, ADR-0007) are those of one serial history. The stored events and the read models are written in
that transaction (ADR-0005); the wakes it owes other processes are NOTIFYed in it too, so PostgreSQL
delivers them only if it commits. Every wait is bounded (connect, lock and statement timeouts),
and so is a connection that stops answering (`network_timeout`, ADR-0062): TCP keepalives and
`tcp_user_timeout` on both ends, a write transaction ended by the server once its client has been
silent that long (so its write lock is released), and no call waiting longer than
`statement_timeout + network_timeout` for any one answer.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Final, NoReturn, TypeAlias, TypeVar
from urllib.parse import unquote, urlsplit
from uuid import UUID

import orjson
import psycopg
from eventsourcing.persistence import Notification
from psycopg import errors as pg_errors
from psycopg.abc import PQGen
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg.rows import TupleRow

from sessionwatch.adapters.stores.port import HistoryTail, StoredHistory, StoreError, one_line_error
from sessionwatch.adapters.stores.postgres_listener import Deliver, PostgresWakeListener
from sessionwatch.adapters.stores.sql import postgres_schema as sql
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.migrate import migrate, refuse_newer
from sessionwatch.adapters.stores.sql.postgres_dialect import PostgresDialect, cursor, cursors_of, one
from sessionwatch.adapters.stores.sql.write import SqlWrite
from sessionwatch.adapters.stores.urls import InvalidStoreUrl, PostgresUrl
from sessionwatch.domain.digest import DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionReset,
    SessionState,
    SessionUpserted,
    SignalRecorded,
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

logger = logging.getLogger("sessionwatch")

Connection: TypeAlias = psycopg.Connection[TupleRow]
Cursor: TypeAlias = psycopg.Cursor[TupleRow]

T = TypeVar("T")
RV = TypeVar("RV")

_REPLAY_PAGE = 1000
_LOCK_ATTEMPTS: Final = 4
"""How often a writer tries to take the write lock before the write fails with `StoreError`."""
_BACKOFF_S: Final = 0.05
_IDLE_IN_TRANSACTION_S: Final = 60
"""A client that hangs inside a transaction loses it (and the write lock) after this long."""
_IDLE_CONNECTIONS: Final = 4
_KEEPALIVE_PROBES: Final = 3
_POLL_S: Final = 0.1
"""How often a wait for the server wakes to let an interrupt (Ctrl-C) through, as psycopg's does."""
_RETRIED_AT_LOCK: Final = (
    pg_errors.LockNotAvailable,  # lock_timeout: another writer held the lock too long
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
)
_SESSION_EVENTS: Final = (SessionUpserted, SignalRecorded, SessionReset, SessionDeleted)


def lock_wait_bound(lock_timeout: float) -> float:
    """The longest a write waits for the write lock held elsewhere before `StoreError` (ADR-0061).

    Every attempt's `lock_timeout` and the longest jittered backoff between the attempts.
    """
    backoff = sum(1.5 * _BACKOFF_S * attempt for attempt in range(1, _LOCK_ATTEMPTS))
    return _LOCK_ATTEMPTS * lock_timeout + backoff


def _millis(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def keepalive_timing(network_timeout: float) -> tuple[int, int]:
    """Seconds of silence before the first TCP keepalive probe, and between probes (3 of them).

    Together at most `network_timeout`, unless that is under 4 s (TCP counts whole seconds, 1 at least).
    """
    idle = max(1, int(network_timeout // 2))
    interval = max(1, int((network_timeout - idle) // _KEEPALIVE_PROBES))
    return idle, interval


def connect_kwargs(url: PostgresUrl, role: str = "") -> dict[str, object]:
    """The settings of every connection: the schema, and a bound on every wait (ADR-0009, ADR-0062).

    The URL's own libpq `options` (e.g. `-c synchronous_commit=off`) come first; ours are appended.
    The application name is the URL's (default `sessionwatch`), plus `role` for the listener. TCP
    keepalives and `tcp_user_timeout` follow `network_timeout` on the client (unless the URL sets
    libpq's own) and on the server, so a dead peer is found from either end.
    """
    idle, interval = keepalive_timing(url.network_timeout)
    user_timeout = _millis(url.network_timeout)
    ours = (
        f"-c search_path={url.schema} -c lock_timeout={_millis(url.lock_timeout)}"
        f" -c statement_timeout={_millis(url.statement_timeout)}"
        f" -c idle_in_transaction_session_timeout={_IDLE_IN_TRANSACTION_S * 1000}"
        f" -c tcp_keepalives_idle={idle} -c tcp_keepalives_interval={interval}"
        f" -c tcp_keepalives_count={_KEEPALIVE_PROBES} -c tcp_user_timeout={user_timeout}"
    )
    given = conninfo_to_dict(url.conninfo)
    theirs = given.get("options")
    client = {
        "keepalives": 1,
        "keepalives_idle": idle,
        "keepalives_interval": interval,
        "keepalives_count": _KEEPALIVE_PROBES,
        "tcp_user_timeout": user_timeout,
    }
    return {
        "autocommit": True,
        "connect_timeout": max(1, round(url.connect_timeout)),
        "application_name": f"{given.get('application_name') or 'sessionwatch'}{role}",
        "options": f"{theirs} {ours}" if theirs else ours,
        **{name: value for name, value in client.items() if name not in given},
    }


def answer_bound(url: PostgresUrl) -> float:
    """The longest a call waits for any one answer from the server before `StoreError` (ADR-0062).

    The server answers every statement within `statement_timeout` (a lock wait included); a
    connection silent for `network_timeout` beyond that is dead.
    """
    return url.statement_timeout + url.network_timeout


class _AnsweringConnection(psycopg.Connection[TupleRow]):
    """A connection on which no wait for the server lasts longer than `answer_within` (ADR-0062).

    TCP keepalives and `tcp_user_timeout` find a path that drops packets, but not a peer whose
    kernel still acknowledges them while nothing comes back (a stalled proxy or pooler): this
    bound does. A wait that reaches it closes the connection (its state is unknown) and raises
    `OperationalError`, which the store reports as a lost connection.
    """

    answer_within: float | None = None

    def wait(self, gen: PQGen[RV], interval: float = _POLL_S, timeout: float | None = None) -> RV:
        limit = timeout if timeout is not None else self.answer_within
        try:
            return super().wait(gen, interval, limit)
        except pg_errors._WaitTimeout:  # noqa: SLF001 - psycopg's own, raised only by a wait's timeout
            self.pgconn.finish()
            raise psycopg.OperationalError(
                f"no answer from the server within {limit:g} s (statement_timeout + network_timeout);"
                " the connection was closed"
            ) from None


def _redacted(message: str, conninfo: str) -> str:
    """`message` with the URL, and its password in every spelling, replaced by `***`.

    libpq quotes what it cannot use (a percent-encoded token, sometimes the whole URI), and a
    password must never reach an exception, a log line or the CLI's stderr.
    """
    secrets = {conninfo}
    with suppress(ValueError):
        password = urlsplit(conninfo).password
        if password:
            secrets |= {password, unquote(password)}
    with suppress(psycopg.Error):
        parsed = conninfo_to_dict(conninfo).get("password")
        if parsed:
            secrets.add(str(parsed))
    for secret in sorted(secrets, key=len, reverse=True):
        message = message.replace(secret, "***")
    return message


def _raise_redacted(exc: psycopg.Error, conninfo: str) -> NoReturn:
    """Re-raise `exc`, or an error of its class without the credentials its message quotes."""
    message = str(exc)
    clean = _redacted(message, conninfo)
    if clean == message:
        raise exc
    raise type(exc)(clean) from None  # the original, which quotes the password, is not chained


def _connect(conninfo: str, settings: dict[str, object], answer_within: float | None = None) -> Connection:
    """`psycopg.connect`, whose errors never carry the URL's password.

    With `answer_within`, no wait for the server on the connection lasts longer (`_AnsweringConnection`).
    """
    try:
        if answer_within is None:
            return psycopg.connect(conninfo, **settings)  # type: ignore[arg-type]
        conn = _AnsweringConnection.connect(conninfo, **settings)  # type: ignore[arg-type]
    except psycopg.Error as exc:
        _raise_redacted(exc, conninfo)
    conn.answer_within = answer_within
    return conn


class _Connections:
    """A small pool: connections are made on demand, broken ones are dropped, a few idle ones kept.

    A connection lost with the server is discarded when it comes back (with every idle one, which
    most likely went with it), so the next call connects afresh: the store reconnects by itself,
    without background threads or backoff timers.
    """

    def __init__(self, url: PostgresUrl) -> None:
        self._conninfo = url.conninfo
        self._kwargs = connect_kwargs(url)
        self._answer_within = answer_bound(url)
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self) -> Connection:
        """An idle connection, or a new one."""
        with self._lock:
            if self._closed:
                raise StoreError("the store is closed")
            if self._idle:
                return self._idle.pop()
        return _connect(self._conninfo, self._kwargs, self._answer_within)

    def give_back(self, conn: Connection) -> None:
        """Keep a healthy idle connection; close anything else."""
        healthy = not conn.closed and not conn.broken
        reusable = healthy and conn.info.transaction_status == TransactionStatus.IDLE
        doomed: list[Connection] = []
        with self._lock:
            if reusable and not self._closed and len(self._idle) < _IDLE_CONNECTIONS:
                self._idle.append(conn)
                return
            if not healthy:
                doomed, self._idle = self._idle, []
        for dead in (conn, *doomed):
            dead.close()

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A connection for one transaction (or one autocommit statement)."""
        conn = self.take()
        try:
            yield conn
        finally:
            self.give_back(conn)

    def close(self) -> None:
        """Close the idle connections; connections in use are closed when given back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _is_connection_loss(conn: Connection, exc: psycopg.Error) -> bool:
    return conn.closed or conn.broken or isinstance(exc, psycopg.InterfaceError)


def _stored_version(c: Cursor) -> int | None:
    """The schema version the store holds (a newer one refused), or None before it exists.

    Reads the catalog and one row of `sw_meta` without a lock on any table others write.
    """
    c.execute(sql.SELECT_META_TABLE)
    if one(c)[0] is None:
        return None
    c.execute(sql.SELECT_SCHEMA_VERSION)
    row = c.fetchone()
    if row is None:
        return None
    refuse_newer(int(row[0]), sql)
    return int(row[0])


def _wrap(exc: BaseException) -> StoreError:
    return StoreError(one_line_error(exc))


class PostgresSignalStore:
    """The shared store: one PostgreSQL schema, written by any number of processes."""

    def __init__(self, url: PostgresUrl) -> None:
        self.url = url
        self.notifying = NOTIFYING_KINDS
        """The kinds that notify watchers (`notify_terminal_runs` widens it, `set_notifying_kinds`)."""
        self.schema = url.schema
        self.origin = uuid.uuid4().hex
        """This store instance's token in wake payloads: its own listener skips its own wakes."""
        try:
            self._connections = _Connections(url)
        except psycopg.Error as exc:  # libpq cannot parse the URL; its message may quote the password
            raise InvalidStoreUrl(f"url: {_redacted(str(exc), url.conninfo).strip()}") from None
        self._listener: PostgresWakeListener | None = None
        self._begin = f"BEGIN; SET LOCAL idle_in_transaction_session_timeout = {_millis(url.network_timeout)}"
        """A write's begin: the server ends it, and frees the write lock, once its client is silent
        for `network_timeout` (ADR-0062); other transactions keep the longer idle limit."""
        self.lock_retries = 0
        """How often a writer of this store found the write lock held past `lock_timeout` and retried."""
        try:
            self._create_schema()
        except psycopg.Error as exc:
            self._connections.close()
            raise StoreError(f"cannot open PostgreSQL schema {self.schema!r}: {_wrap(exc)}") from exc

    def _create_schema(self) -> None:
        """Create or migrate the schema once, whichever process comes first; a current one is left alone.

        An open of a current schema (the common case: every process after the first) reads its
        version, one row, and runs no DDL: DDL on tables other processes write (`CREATE INDEX IF NOT
        EXISTS` takes a share lock on its table even when the index exists) could deadlock with
        their sweeps and writes (ADR-0063). Creation and migration run in one transaction under an
        advisory lock, so concurrent openers wait for the first; each then finds the version current.
        """
        with self._connections.connection() as conn, conn.cursor() as c:
            if _stored_version(c) == sql.SCHEMA_VERSION:
                return
        with self._connections.connection() as conn, conn.transaction(), conn.cursor() as c:
            c.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"sessionwatch.schema:{self.schema}",))
            if _stored_version(c) == sql.SCHEMA_VERSION:
                return  # another opener created or migrated it while this one waited for the lock
            c.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
            c.execute(f"SET LOCAL search_path TO {self.schema}")
            for statement in sql.SCHEMA:
                c.execute(statement)
            migrate(c, sql)

    def _wake_payload(self, watcher: str, target_key: str) -> str:
        body = {"schema": self.schema, "origin": self.origin, "watcher": watcher, "target": target_key}
        return orjson.dumps(body).decode()

    # ----------------------------------------------------------------------------------- writes

    @contextmanager
    def write(self) -> Iterator[SqlWrite]:
        """An exclusive write transaction (the counter row's lock), committed when the block exits."""
        try:
            conn, counter = self._begin_locked()
            try:
                with conn.cursor() as c:
                    tx = SqlWrite(c, PostgresDialect(counter, self._wake_payload), notifying=self.notifying)
                    try:
                        yield tx
                        tx.finish()
                    except BaseException:
                        if not conn.closed:
                            with suppress(psycopg.Error):
                                conn.rollback()
                        raise
                    conn.commit()
                    if tx.vacuum_due:
                        self._vacuum(c)
            finally:
                self._connections.give_back(conn)
        except psycopg.Error as exc:
            raise _wrap(exc) from exc

    def _begin_locked(self) -> tuple[Connection, int]:
        """Begin and take the write lock; return the connection and the counter.

        Only this step is ever retried, because nothing was written yet: a lock timeout, a
        serialization failure or a deadlock with jittered backoff (`_LOCK_ATTEMPTS` in all), and a
        connection found dead once, on a fresh connection. Once the caller's block runs, a failure
        rolls back and raises `StoreError`: the block is the caller's decision, never re-run here.
        """
        attempt = 0
        replaced = False
        while True:
            conn = self._connections.take()
            try:
                with conn.cursor() as c:
                    c.execute(self._begin)
                    c.execute(sql.LOCK_AND_READ_COUNTER)
                    return conn, int(one(c)[0])
            except BaseException as exc:
                lost = isinstance(exc, psycopg.Error) and _is_connection_loss(conn, exc)
                if not lost:
                    with suppress(psycopg.Error):
                        conn.rollback()
                self._connections.give_back(conn)
                if isinstance(exc, _RETRIED_AT_LOCK) and attempt + 1 < _LOCK_ATTEMPTS:
                    attempt += 1
                    self.lock_retries += 1
                    time.sleep(random.uniform(0.5, 1.5) * _BACKOFF_S * attempt)  # noqa: S311 - jitter only
                elif lost and not replaced:
                    replaced = True
                else:
                    raise

    def _vacuum(self, c: Cursor) -> None:
        """After a prune deleted rows: the events table's autovacuum settings never reclaim them."""
        try:
            c.execute(sql.VACUUM)
        except psycopg.Error as exc:  # the prune is committed; the next one vacuums again
            logger.warning("sessionwatch: vacuum after prune failed (error=%s)", type(exc).__name__)

    # ------------------------------------------------------------------------------------ reads

    def _read(self, query: Callable[[Cursor], T], *, snapshot: bool = False) -> T:
        """Run `query` as one read: autocommit, or with `snapshot` one REPEATABLE READ transaction.

        Reads change nothing, so one that finds its connection dead runs again on a fresh one.
        """
        for attempt in (1, 2):
            try:
                with self._connections.connection() as conn, conn.cursor() as c:
                    try:
                        if not snapshot:
                            return query(c)
                        with conn.transaction():
                            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                            return query(c)
                    except psycopg.OperationalError as exc:
                        if attempt == 1 and _is_connection_loss(conn, exc):
                            continue
                        raise
            except psycopg.Error as exc:
                raise _wrap(exc) from exc
        raise AssertionError("unreachable: the second attempt returns or raises")

    def session(self, identity: SessionIdentity) -> SessionState | None:
        """The state of a known identity."""

        def query(c: Cursor) -> SessionState | None:
            c.execute(sql.SELECT_SESSION, identity)
            row = c.fetchone()
            return sql_rows.session_state(row) if row is not None else None

        return self._read(query)

    def sessions(self) -> list[SessionState]:
        """Every known identity, ordered by key then agent id."""

        def query(c: Cursor) -> list[SessionState]:
            c.execute(sql.SELECT_SESSIONS)
            return [sql_rows.session_state(row) for row in c.fetchall()]

        return self._read(query)

    def status(
        self, identity: SessionIdentity, changes_since: int | None, limit: int
    ) -> SessionStatus | None:
        """`session_status` from one statement, hence one snapshot."""
        if changes_since is None:
            state = self.session(identity)
            return build_status(state, None) if state is not None else None

        def query(c: Cursor) -> list[TupleRow]:
            c.execute(sql.SELECT_STATUS, (changes_since, limit + 1, *identity))
            return c.fetchall()

        rows = self._read(query)
        if not rows:
            return None
        state = sql_rows.session_state(rows[0])
        events = [row[11:] for row in rows if row[11] is not None]
        page = [sql_rows.state_change(event) for event in events[:limit]]
        truncated = len(events) > limit
        return build_status(state, changes_since, page, truncated=truncated, first_retained=rows[0][10])

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor, or None."""
        return self._read(lambda c: cursor(c, key))

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors, ordered by target."""
        return self._read(lambda c: cursors_of(c, watcher, pending_only=pending_only))

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        """Whether any cursor targets the identity (one indexed row)."""

        def query(c: Cursor) -> bool:
            c.execute(sql.SELECT_ANY_CURSOR_ON, identity)
            return c.fetchone() is not None

        return self._read(query)

    def digest(self, identity: SessionIdentity) -> DigestState | None:
        """The main session's creation digest row."""

        def query(c: Cursor) -> DigestState | None:
            c.execute(sql.SELECT_DIGEST, identity)
            row = c.fetchone()
            return sql_rows.digest_state(row) if row is not None else None

        return self._read(query)

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        """The identity's link row, a tombstone included."""

        def query(c: Cursor) -> UpstreamLinkState | None:
            c.execute(sql.SELECT_LINK, identity)
            row = c.fetchone()
            return sql_rows.link_state(row) if row is not None else None

        return self._read(query)

    def upstream_links(self, *, watched_only: bool) -> list[UpstreamLinkState]:
        """Every active link (only cursor targets when `watched_only`), by identity."""
        statement = sql.SELECT_WATCHED_LINKS if watched_only else sql.SELECT_ACTIVE_LINKS

        def query(c: Cursor) -> list[UpstreamLinkState]:
            c.execute(statement)
            return [sql_rows.link_state(row) for row in c.fetchall()]

        return self._read(query)

    def read_model(self, *, like: ReadModel | None = None) -> ReadModel:
        """The stored read models, loaded whole from one snapshot (sharing `like`'s equal values)."""
        return self._read(lambda c: sql_rows.read_model(c, sql, like=like), snapshot=True)

    def select_notifications(self, start: int, limit: int) -> list[Notification]:
        """Stored events from notification id `start`, in commit order (ids are allocated under the lock)."""

        def query(c: Cursor) -> list[Notification]:
            c.execute(sql.SELECT_NOTIFICATIONS, (start, limit))
            return [
                Notification(
                    id=nid, originator_id=stream, originator_version=v, topic=topic, state=bytes(body)
                )
                for nid, stream, v, topic, body in c.fetchall()
            ]

        return self._read(query)

    def replay(self) -> Iterator[DomainEvent]:
        """Every stored event in commit order, paged, from one snapshot."""
        with self.snapshot() as snapshot:
            yield from snapshot.replay()

    @contextmanager
    def snapshot(self) -> Iterator[sql_rows.SqlSnapshot]:
        """One REPEATABLE READ, READ ONLY transaction for events and read models alike."""
        try:
            with self._connections.connection() as conn, conn.cursor() as c, conn.transaction():
                c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield sql_rows.SqlSnapshot(c, sql, _REPLAY_PAGE)
        except psycopg.Error as exc:
            raise _wrap(exc) from exc

    @contextmanager
    def stored_history(self) -> Iterator[StoredHistory]:
        """One REPEATABLE READ transaction: the counter, every stream's version, the events paged."""
        try:
            with self._connections.connection() as conn, conn.cursor() as c, conn.transaction():
                c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                c.execute(sql.SELECT_COUNTER)
                sequence = int(one(c)[0])
                versions = sql_rows.stream_versions(c, sql)
                yield StoredHistory(sequence, versions, sql_rows.stored_rows(c, sql, _REPLAY_PAGE))
        except psycopg.Error as exc:
            raise _wrap(exc) from exc

    def load_history(
        self,
        events: Iterable[tuple[UUID, int, DomainEvent]],
        tail: HistoryTail | Callable[[], HistoryTail],
    ) -> int:
        """Bulk-load an imported history into this empty store in one transaction holding the write lock."""
        with self.write() as tx:
            return tx.load_history(events, tail)

    def _scalar(self, statement: str) -> int | None:
        def query(c: Cursor) -> int | None:
            c.execute(statement)
            row = c.fetchone()
            return int(row[0]) if row is not None else None

        return self._read(query)

    def last_prune_ms(self) -> int | None:
        """When the last prune ran, by any process."""
        return self._scalar(sql.SELECT_LAST_PRUNE)

    def stored_event_count(self) -> int:
        """How many stored events the events table holds."""
        return self._scalar(f"SELECT COUNT(*) FROM {sql.EVENTS_TABLE}") or 0

    def last_sequence(self) -> int:
        """The counter: the highest sequence ever allocated."""
        return self._scalar(sql.SELECT_COUNTER) or 0

    # ------------------------------------------------------------------------- cross-process wakes

    def listen_for_wakes(self, deliver: Deliver) -> None:
        """Deliver `(watcher, target_key)` of notices other processes open, until `close()`."""
        if self._listener is not None:
            raise RuntimeError("this store already has a wake listener")
        listener = PostgresWakeListener(
            self._listener_connection, schema=self.schema, origin=self.origin, deliver=deliver
        )
        listener.start_listening()
        self._listener = listener

    def _listener_connection(self) -> Connection:
        """The listener's own connection, with no bound on its waits: a LISTEN may be quiet for hours.

        TCP keepalives (every connection's, after `network_timeout` of silence) find a dead peer.
        """
        return _connect(self.url.conninfo, connect_kwargs(self.url, "-listener"))

    @property
    def listener(self) -> PostgresWakeListener | None:
        """The wake listener, once `listen_for_wakes` started it."""
        return self._listener

    def set_notifying_kinds(self, kinds: frozenset[SignalKind]) -> None:
        """Which kinds notify watchers on this store from now on (the façade's setting)."""
        self.notifying = kinds

    def close(self) -> None:
        """Stop the listener and close every idle connection; the store is unusable afterwards."""
        if self._listener is not None:
            self._listener.stop()
        self._connections.close()
