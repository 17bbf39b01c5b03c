"""Connections to a PostgreSQL store: their settings, the bounds on every wait, a small pool.

Every wait is bounded (connect, lock and statement timeouts), and so is a connection that stops
answering (`network_timeout`, ADR-0062); no error carries the URL's password.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Final, NoReturn, TypeAlias, TypeVar
from urllib.parse import unquote, urlsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg.abc import PQGen
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg.rows import TupleRow

from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.urls import PostgresUrl

Connection: TypeAlias = psycopg.Connection[TupleRow]
Cursor: TypeAlias = psycopg.Cursor[TupleRow]

RV = TypeVar("RV")

LOCK_ATTEMPTS: Final = 4
"""How often a writer tries to take the write lock before the write fails with `StoreError`."""
BACKOFF_S: Final = 0.05
_IDLE_IN_TRANSACTION_S: Final = 60
"""A client that hangs inside a transaction loses it (and the write lock) after this long."""
_IDLE_CONNECTIONS: Final = 4
_KEEPALIVE_PROBES: Final = 3
_POLL_S: Final = 0.1
"""How often a wait for the server wakes to let an interrupt (Ctrl-C) through, as psycopg's does."""


def lock_wait_bound(lock_timeout: float) -> float:
    """The longest a write waits for the write lock held elsewhere before `StoreError` (ADR-0061).

    Every attempt's `lock_timeout` and the longest jittered backoff between the attempts.
    """
    backoff = sum(1.5 * BACKOFF_S * attempt for attempt in range(1, LOCK_ATTEMPTS))
    return LOCK_ATTEMPTS * lock_timeout + backoff


def millis(seconds: float) -> int:
    """Whole milliseconds, 1 at least, as PostgreSQL's timeout settings take them."""
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
    user_timeout = millis(url.network_timeout)
    ours = (
        f"-c search_path={url.schema} -c lock_timeout={millis(url.lock_timeout)}"
        f" -c statement_timeout={millis(url.statement_timeout)}"
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


def redacted(message: str, conninfo: str) -> str:
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


def raise_redacted(exc: psycopg.Error, conninfo: str) -> NoReturn:
    """Re-raise `exc`, or an error of its class without the credentials its message quotes."""
    message = str(exc)
    clean = redacted(message, conninfo)
    if clean == message:
        raise exc
    raise type(exc)(clean) from None  # the original, which quotes the password, is not chained


def connect(conninfo: str, settings: dict[str, object], answer_within: float | None = None) -> Connection:
    """`psycopg.connect`, whose errors never carry the URL's password.

    With `answer_within`, no wait for the server on the connection lasts longer (`_AnsweringConnection`).
    """
    try:
        if answer_within is None:
            return psycopg.connect(conninfo, **settings)  # type: ignore[arg-type]
        conn = _AnsweringConnection.connect(conninfo, **settings)  # type: ignore[arg-type]
    except psycopg.Error as exc:
        raise_redacted(exc, conninfo)
    conn.answer_within = answer_within
    return conn


class Connections:
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
        return connect(self._conninfo, self._kwargs, self._answer_within)

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


def is_connection_loss(conn: Connection, exc: psycopg.Error) -> bool:
    """Whether `exc` on `conn` means the connection to the server is gone."""
    return conn.closed or conn.broken or isinstance(exc, psycopg.InterfaceError)
