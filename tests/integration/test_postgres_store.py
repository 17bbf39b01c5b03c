"""The PostgreSQL store beyond the contract suite (ADR-0009): timeouts, retries, lost connections, VACUUM.

A lost server is simulated by a TCP relay in front of the real one that the test cuts (every
connection dropped, new ones refused at once) and restores; a killed session by
`pg_terminate_backend`. The write lock is held from another connection, as a stuck writer would.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import psycopg
import pytest
from auditing import assert_audit_clean
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg.conninfo import conninfo_to_dict
from stores import PG_URL, admin, needs_postgres, postgres_url, with_query

import sessionwatch
from sessionwatch import Actor, InvalidStoreUrl, SessionWatch, Signal, StoreError
from sessionwatch.adapters.extras import install_hint
from sessionwatch.adapters.stores.postgres import PostgresSignalStore
from sessionwatch.adapters.stores.postgres_connections import connect_kwargs
from sessionwatch.adapters.stores.urls import DEFAULT_SCHEMA, PostgresUrl, parse_url

WORKER = "agent:main:worker"
WATCHER = "agent:main:coordinator"
WAIT_S = 60.0


def goal(watch: SessionWatch, key: str = WORKER) -> Signal:
    return watch.record(key, kind="goal_changed", actor=Actor.human(), summary="goal updated")


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` until it holds; fail (naming `what`) only after a generous deadline."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)


def schema_of(url: str) -> str:
    parsed = parse_url(url).postgres
    assert parsed is not None
    return parsed.schema


# ------------------------------------------------------------------------------------- URLs


def test_postgresql_urls_name_a_schema_and_bound_every_wait() -> None:
    parsed = parse_url("postgres://u@db.example:6432/gw?schema=gw_state&lock_timeout=2.5&sslmode=require")

    assert parsed.scheme == "postgresql"
    assert parsed.postgres is not None
    assert parsed.postgres.schema == "gw_state"
    assert parsed.postgres.lock_timeout == 2.5
    assert (parsed.postgres.statement_timeout, parsed.postgres.connect_timeout) == (30.0, 10.0)
    assert parsed.postgres.conninfo == "postgresql://u@db.example:6432/gw?sslmode=require"


def test_every_connection_finds_a_dead_peer_within_network_timeout_from_either_end() -> None:
    parsed = parse_url("postgresql://u@db/gw?network_timeout=12").postgres
    assert parsed is not None
    assert parsed.network_timeout == 12.0
    settings = connect_kwargs(parsed)
    idle, interval, probes = (settings[f"keepalives_{name}"] for name in ("idle", "interval", "count"))
    assert (settings["keepalives"], settings["tcp_user_timeout"]) == (1, 12_000)
    assert isinstance(idle, int)
    assert isinstance(interval, int)
    assert isinstance(probes, int)
    assert idle + interval * probes <= 12  # the client's probes give up within network_timeout
    server = f"-c tcp_keepalives_idle={idle} -c tcp_keepalives_interval={interval}"
    assert f"{server} -c tcp_keepalives_count={probes} -c tcp_user_timeout=12000" in str(settings["options"])
    default = PostgresUrl("postgresql://u@db/gw", network_timeout=10.0)
    assert parse_url("postgresql://u@db/gw").postgres == default


def test_libpq_keepalive_settings_in_the_url_are_kept() -> None:
    parsed = parse_url("postgresql://u@db/gw?keepalives_idle=60&tcp_user_timeout=90000").postgres
    assert parsed is not None
    settings = connect_kwargs(parsed)
    assert "keepalives_idle" not in settings
    assert "tcp_user_timeout" not in settings
    assert settings["keepalives_interval"] == 1  # the ones it does not set still follow network_timeout


def test_without_a_schema_parameter_the_store_has_a_schema_of_its_own() -> None:
    parsed = parse_url("postgresql://u@host/db").postgres

    assert parsed is not None
    assert parsed.schema == DEFAULT_SCHEMA == "sessionwatch"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u@host/db?schema=Upper",
        "postgresql://u@host/db?schema=a-b",
        "postgresql://u@host/db?schema=1abc",
        "postgresql://u@host/db?schema=" + "a" * 64,
        "postgresql://u@host/db?lock_timeout=0",
        "postgresql://u@host/db?statement_timeout=-1",
        "postgresql://u@host/db?connect_timeout=soon",
        "postgresql://u@host/db?lock_timeout=inf",
        "postgresql://u@host/db?network_timeout=0",
    ],
)
def test_a_postgresql_url_that_cannot_be_understood_is_refused_before_connecting(url: str) -> None:
    with pytest.raises(InvalidStoreUrl):
        sessionwatch.open(url)


def test_the_sqlite_durability_setting_is_refused_for_postgresql() -> None:
    with pytest.raises(ValueError, match="synchronous"):
        sessionwatch.open("postgresql://u@127.0.0.1:1/db", synchronous="full")


WITHOUT_PSYCOPG = """
import sys
sys.modules["psycopg"] = None  # as if the `postgres` extra were not installed: importing it fails
import sessionwatch
with sessionwatch.open("memory://") as watch:
    pass
try:
    sessionwatch.open("postgresql://u@127.0.0.1:1/db")
except sessionwatch.StoreError as exc:
    print(exc)
"""


def test_without_psycopg_sessionwatch_works_and_a_postgresql_url_names_the_extra_to_install() -> None:
    done = subprocess.run([sys.executable, "-c", WITHOUT_PSYCOPG], capture_output=True, text=True, check=True)

    assert f"the postgres extra: {install_hint('postgres')}" in done.stdout
    assert "pip install 'psycopg[binary]" in done.stdout


# ---------------------------------------------------------------------------------- the store


@pytest.fixture
def url() -> Iterator[str]:
    with postgres_url("sw_pg") as opened:
        yield opened


@needs_postgres
def test_every_connection_runs_in_the_schema_with_the_url_timeouts(url: str) -> None:
    with sessionwatch.open(with_query(url, lock_timeout="1.5", statement_timeout="20")) as watch:
        store = watch.store
        assert isinstance(store, PostgresSignalStore)
        goal(watch)
        query = (
            "SELECT current_schema(), current_setting('lock_timeout'),"
            " current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')"
        )
        settings = store._read(lambda c: c.execute(query).fetchone())
    assert settings == (schema_of(url), "1500ms", "20s", "1min")


@needs_postgres
def test_every_connection_has_the_keepalives_on_the_server_too_and_a_write_a_short_idle_limit(
    url: str,
) -> None:
    with sessionwatch.open(with_query(url, network_timeout="4")) as watch:
        store = watch.store
        assert isinstance(store, PostgresSignalStore)
        query = "SELECT current_setting('tcp_user_timeout'), current_setting('tcp_keepalives_idle')"
        assert store._read(lambda c: c.execute(query).fetchone()) == ("4000", "2")  # milliseconds, seconds
        with store.write() as tx:
            tx.raw.execute("SELECT current_setting('idle_in_transaction_session_timeout')")
            assert tx.raw.fetchone() == ("4s",)  # the server ends a silent write, and frees its lock


@needs_postgres
def test_eventsourcing_reads_the_stored_events_with_its_own_postgresql_recorder(url: str) -> None:
    with sessionwatch.open(url) as watch:
        watch.watch(WATCHER, WORKER)
        goal(watch)
        ours = [(n.id, n.topic, n.state) for n in watch.store.select_notifications(1, 100)]  # type: ignore[attr-defined]
    given = conninfo_to_dict(PG_URL)
    datastore = PostgresDatastore(
        dbname=str(given.get("dbname", "")),
        host=str(given.get("host", "")),
        port=str(given.get("port", "5432")),
        user=str(given.get("user", "")),
        password=str(given.get("password", "")),
        schema=schema_of(url),
    )
    try:
        recorder = PostgresApplicationRecorder(datastore)
        theirs = [(n.id, n.topic, n.state) for n in recorder.select_notifications(1, 100)]
        assert recorder.max_notification_id() == ours[-1][0]
    finally:
        datastore.close()
    assert theirs == ours
    assert [topic for _, topic, _ in ours] == ["cursor.watch_registered.v2", "session.signal_recorded.v1"]


@needs_postgres
def test_writers_on_many_threads_of_one_process_get_unique_sequences(url: str) -> None:
    with sessionwatch.open(url) as watch:
        returned: list[int] = []

        def write(index: int) -> None:
            returned.extend(goal(watch, f"agent:main:thread-{index % 3}").sequence for _ in range(25))

        threads = [threading.Thread(target=write, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert sorted(returned) == list(range(1, 201))
        assert_audit_clean(watch)


@needs_postgres
def test_a_prune_that_deleted_rows_vacuums_the_tables_it_deleted_from(url: str) -> None:
    with sessionwatch.open(url, retention=sessionwatch.Retention(max_signals=2)) as watch:
        for _ in range(5):
            goal(watch)
        report = watch.prune()
    assert report.signals_removed == 3
    admin().execute("SELECT pg_stat_clear_snapshot()")
    vacuumed = (
        admin()
        .execute(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = %s AND last_vacuum IS NOT NULL"
            " ORDER BY relname",
            (schema_of(url),),
        )
        .fetchall()
    )
    assert vacuumed == [("stored_events",), ("sw_signals",)]


# ----------------------------------------------------------------------------- the write lock


@contextlib.contextmanager
def write_lock_held(url: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """Hold the store's write lock from another session, as a stuck writer in another process would."""
    with psycopg.connect(PG_URL, autocommit=True) as holder:
        holder.execute("BEGIN")
        holder.execute(f"SELECT value FROM {schema_of(url)}.sw_meta WHERE name = 'sequence' FOR UPDATE")
        yield holder


@needs_postgres
def test_a_writer_that_finds_the_write_lock_held_retries_and_then_records(url: str) -> None:
    with sessionwatch.open(with_query(url, lock_timeout="0.2")) as watch:
        store = watch.store
        assert isinstance(store, PostgresSignalStore)
        results: list[Signal] = []
        with write_lock_held(url) as holder:
            writer = threading.Thread(target=lambda: results.append(goal(watch)))
            writer.start()
            wait_until(lambda: store.lock_retries >= 1, "the writer timed out on the lock and retried")
            holder.execute("ROLLBACK")
            writer.join(WAIT_S)
        assert [s.sequence for s in results] == [1]
        assert watch.session_status(WORKER).state_version == 1


@needs_postgres
def test_a_writer_never_waits_forever_for_the_write_lock(url: str, caplog: pytest.LogCaptureFixture) -> None:
    with sessionwatch.open(with_query(url, lock_timeout="0.1")) as watch:
        watch.upsert_session(WORKER)
        with write_lock_held(url):
            with pytest.raises(StoreError, match="LockNotAvailable"):
                goal(watch)
            with caplog.at_level(logging.WARNING, logger="sessionwatch"):
                assert watch.record_goal_changed(WORKER, summary="goal updated") is None
        warnings = [r for r in caplog.records if r.name == "sessionwatch"]
        assert len(warnings) == 1
        assert "StoreError" in warnings[0].getMessage()
        assert watch.session_status(WORKER).state_version == 0
        assert goal(watch).sequence == 1


# ------------------------------------------------------------------------------- lost connections


class Relay:
    """A TCP relay to the PostgreSQL server that a test can cut and restore."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._up = True
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            with self._lock:
                if not self._up:
                    client.close()  # the server is gone: refused at once
                    continue
                upstream = socket.create_connection(self._target)
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Drop every relayed connection and refuse new ones, as a server that went away."""
        with self._lock:
            self._up = False
            doomed, self._sockets = self._sockets, []
        for sock in doomed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def restore(self) -> None:
        with self._lock:
            self._up = True

    def close(self) -> None:
        self.cut()
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
        self._server.close()
        self._accepting.join(WAIT_S)


@pytest.fixture
def relay() -> Iterator[Relay]:
    parts = urlsplit(PG_URL)
    opened = Relay(parts.hostname or "127.0.0.1", parts.port or 5432)
    try:
        yield opened
    finally:
        opened.close()


def through(relay: Relay, url: str) -> str:
    parts = urlsplit(url)
    credentials = parts.netloc.rpartition("@")[0]
    netloc = f"{credentials}@127.0.0.1:{relay.port}" if credentials else f"127.0.0.1:{relay.port}"
    return with_query(parts._replace(netloc=netloc).geturl(), connect_timeout="2")


@needs_postgres
def test_a_lost_server_fails_the_strict_api_and_producers_and_the_store_reconnects_once_it_is_back(
    url: str, relay: Relay, caplog: pytest.LogCaptureFixture
) -> None:
    with sessionwatch.open(through(relay, url)) as watch:
        watch.watch(WATCHER, WORKER)
        before = goal(watch)

        relay.cut()
        with pytest.raises(StoreError):
            goal(watch)
        with caplog.at_level(logging.WARNING, logger="sessionwatch"):
            assert watch.record_human_message(WORKER, channel="telegram") is None
        with pytest.raises(StoreError):
            watch.session_status(WORKER)
        warnings = [r for r in caplog.records if r.name == "sessionwatch"]
        assert len(warnings) == 1
        assert WORKER in warnings[0].getMessage()

        relay.restore()
        after = goal(watch)
        assert after.sequence == before.sequence + 1  # nothing of the failed attempts was written
        assert watch.session_status(WORKER).state_version == after.sequence
        assert watch.pending_notices(WATCHER)[0].last_seen == 0
        assert_audit_clean(watch)


@needs_postgres
def test_killed_sessions_are_replaced_without_failing_the_next_call(url: str) -> None:
    named = with_query(url, application_name="sw_killed_sessions")
    with sessionwatch.open(named) as watch:
        goal(watch)
        pids = (
            admin()
            .execute(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = %s",
                ("sw_killed_sessions",),
            )
            .fetchall()
        )
        assert pids
        assert all(killed for (killed,) in pids)

        assert goal(watch).sequence == 2
        assert watch.session_status(WORKER).state_version == 2
