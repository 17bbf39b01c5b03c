"""Cross-process wakes: a thread that LISTENs for the notices other processes open.

A writer NOTIFYs, inside its transaction, one payload per wake it owes (PostgreSQL delivers them
only on commit). This listener, on its own connection, hands every payload of its schema that
another store instance sent to `deliver(watcher, target_key)`. When the connection is lost it
reconnects with backoff, LISTENs again and then **catches up**: it delivers every pending notice
(`N > L`) of the durable view, the source of truth, so no wake is missed across a reconnect
(ADR-0009). A wake only prompts the host; the notice itself is always in the store.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import select
import threading
from collections.abc import Callable
from typing import Final, TypeAlias

import orjson
import psycopg
from psycopg.rows import TupleRow

from sessionwatch.adapters.stores.port import StoreError, one_line_error
from sessionwatch.adapters.stores.sql import postgres_schema as sql
from sessionwatch.domain.keys import is_subagent_key

logger = logging.getLogger("sessionwatch")

Connection: TypeAlias = psycopg.Connection[TupleRow]
Deliver: TypeAlias = Callable[[str, str], None]
"""`deliver(watcher_key, target_key)`: a notice for the watcher on the target is pending."""

_IDLE_PING_S: Final = 30.0
"""A quiet connection is pinged this often, so a silently dead one is noticed."""
_BACKOFF_FIRST_S: Final = 0.05
_BACKOFF_MAX_S: Final = 5.0
_STOP_JOIN_S: Final = 10.0


class PostgresWakeListener:
    """LISTEN on one connection in a daemon thread; deliver wakes that other processes owe."""

    def __init__(
        self, connect: Callable[[], Connection], *, schema: str, origin: str, deliver: Deliver
    ) -> None:
        self._connect = connect
        self._schema = schema
        self._origin = origin
        self._deliver = deliver
        self._stop = threading.Event()
        self._wakeup_read, self._wakeup_write = os.pipe()
        self._conn: Connection | None = None
        self._thread: threading.Thread | None = None
        self.connects = 0
        """How many times the listener connected and LISTENed: 1 + the reconnects."""

    @property
    def backend_pid(self) -> int | None:
        """The server process id of the current LISTEN connection."""
        conn = self._conn
        return conn.info.backend_pid if conn is not None and not conn.closed else None

    def start_listening(self) -> None:
        """LISTEN now (a failure raises `StoreError`), then keep listening in a daemon thread."""
        try:
            self._conn = self._listen()
        except psycopg.Error as exc:
            self._close_pipe()
            raise StoreError(f"cannot LISTEN for wakes: {one_line_error(exc)}") from exc
        self._thread = threading.Thread(target=self._run, name="sessionwatch-wake-listener", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop listening and close the connection; returns once the thread has ended."""
        self._stop.set()
        with contextlib.suppress(OSError):
            os.write(self._wakeup_write, b"x")
        if self._thread is not None:
            self._thread.join(_STOP_JOIN_S)
        if self._thread is None or not self._thread.is_alive():
            self._close_pipe()

    def _close_pipe(self) -> None:
        for fd in (self._wakeup_read, self._wakeup_write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _listen(self) -> Connection:
        conn = self._connect()
        try:
            conn.execute(f"LISTEN {sql.WAKE_CHANNEL}")
        except BaseException:
            conn.close()
            raise
        self.connects += 1
        return conn

    def _run(self) -> None:
        conn = self._conn
        while conn is not None and not self._stop.is_set():
            try:
                self._pump(conn)
            except (psycopg.Error, OSError) as exc:
                logger.warning(
                    "sessionwatch: wake listener lost its connection (error=%s)", type(exc).__name__
                )
            conn.close()
            conn = self._conn = self._reconnect()
        if conn is not None:
            conn.close()

    def _pump(self, conn: Connection) -> None:
        """Deliver notifications until the stop is asked for or the connection fails."""
        while not self._stop.is_set():
            ready, _, _ = select.select([conn.fileno(), self._wakeup_read], [], [], _IDLE_PING_S)
            if self._stop.is_set():
                return
            if not ready:
                conn.execute("SELECT 1")
                continue
            for notify in conn.notifies(timeout=0):
                self._handle(notify.payload)

    def _reconnect(self) -> Connection | None:
        """Connect and LISTEN again with jittered backoff, then catch up; None once stopped."""
        delay = _BACKOFF_FIRST_S
        while not self._stop.wait(delay * random.uniform(0.5, 1.0)):  # noqa: S311 - jitter only
            try:
                conn = self._listen()
            except psycopg.Error:
                delay = min(delay * 2, _BACKOFF_MAX_S)
                continue
            try:
                self._catch_up(conn)
            except psycopg.Error:
                conn.close()
                continue
            return conn
        return None

    def _catch_up(self, conn: Connection) -> None:
        """Deliver every pending notice: whatever was NOTIFYed while no one listened is among them."""
        pending = conn.execute(sql.SELECT_PENDING).fetchall()
        for watcher, target in dict.fromkeys((str(w), str(t)) for w, t in pending):
            if not is_subagent_key(watcher):
                self._call(watcher, target)

    def _handle(self, payload: str) -> None:
        try:
            body = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return  # not one of ours
        if not isinstance(body, dict) or body.get("schema") != self._schema:
            return
        watcher, target = body.get("watcher"), body.get("target")
        if body.get("origin") == self._origin or not isinstance(watcher, str) or not isinstance(target, str):
            return  # this process published its own wakes after its commit
        self._call(watcher, target)

    def _call(self, watcher: str, target: str) -> None:
        try:
            self._deliver(watcher, target)
        except Exception as exc:  # noqa: BLE001 - a failing host never stops the listener
            logger.warning("sessionwatch: cross-process wake failed (error=%s)", type(exc).__name__)
