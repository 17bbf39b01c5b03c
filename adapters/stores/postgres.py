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
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Final, TypeVar
from uuid import UUID

import orjson
import psycopg
from eventsourcing.persistence import Notification
from psycopg import errors as pg_errors
from psycopg.rows import TupleRow

from sessionwatch.adapters.stores.port import HistoryTail, StoredHistory, StoreError, one_line_error
from sessionwatch.adapters.stores.postgres_connections import (
    BACKOFF_S,
    LOCK_ATTEMPTS,
    Connection,
    Connections,
    Cursor,
    connect,
    connect_kwargs,
    is_connection_loss,
    millis,
    redacted,
)
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


T = TypeVar("T")

_REPLAY_PAGE = 1000
_RETRIED_AT_LOCK: Final = (
    pg_errors.LockNotAvailable,  # lock_timeout: another writer held the lock too long
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
)
_SESSION_EVENTS: Final = (SessionUpserted, SignalRecorded, SessionReset, SessionDeleted)


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
            self._connections = Connections(url)
        except psycopg.Error as exc:  # libpq cannot parse the URL; its message may quote the password
            raise InvalidStoreUrl(f"url: {redacted(str(exc), url.conninfo).strip()}") from None
        self._listener: PostgresWakeListener | None = None
        self._begin = f"BEGIN; SET LOCAL idle_in_transaction_session_timeout = {millis(url.network_timeout)}"
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
        serialization failure or a deadlock with jittered backoff (`LOCK_ATTEMPTS` in all), and a
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
                lost = isinstance(exc, psycopg.Error) and is_connection_loss(conn, exc)
                if not lost:
                    with suppress(psycopg.Error):
                        conn.rollback()
                self._connections.give_back(conn)
                if isinstance(exc, _RETRIED_AT_LOCK) and attempt + 1 < LOCK_ATTEMPTS:
                    attempt += 1
                    self.lock_retries += 1
                    time.sleep(random.uniform(0.5, 1.5) * BACKOFF_S * attempt)  # noqa: S311 - jitter only
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
                        if attempt == 1 and is_connection_loss(conn, exc):
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
        return connect(self.url.conninfo, connect_kwargs(self.url, "-listener"))

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
