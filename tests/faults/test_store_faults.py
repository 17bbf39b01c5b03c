"""Store faults (SPEC §3.3, §15.2): a failing store never fails the host, and recording resumes after it.

Each fault is real, not a mock of the store:
- locked: another connection holds SQLite's write lock (`BEGIN IMMEDIATE`) past the busy timeout;
- full: the database lives on a tiny tmpfs that a filler file has filled (the tests run as root, which
  may mount; the filler is removed to clear it);
- read-only: `chattr +i` makes the database and its WAL immutable, which stops root too (the `-shm`
  index is left alone: SQLite maps it, and writing an immutable mapping is a SIGBUS, not an error);
- moved: the file is renamed away while open, then back; deleted: it is unlinked while open.

During each fault: every best-effort producer returns None, the host's action goes on, and exactly one
structured log line names the session key and the kind, never the summary or the channel; the strict
API (`record`, `record_many`, `drain`) raises `StoreError`, also on a connection opened during the
fault. Once it clears, the same `SessionWatch` records again (no reopen), every acknowledged signal is
there, and the audit is clean. A deleted file never clears: every write fails until the host reopens,
and no empty database is made in its place. On PostgreSQL: the write lock held by another session
past `lock_timeout`, and the store's session terminated (`pg_terminate_backend`) inside a write
transaction and while it waits for the write lock, and its network path stalled (a proxy that stops
forwarding) inside a write transaction. On both stores and both façades: callers sharing a
transaction behind another connection's write lock each wait about one lock wait, not one each.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import os
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from auditing import assert_audit_clean
from facades import BlockingWatch, on_loop
from freezable_proxy import FreezableProxy
from stores import FILE_STORES, PG_URL, admin, needs_postgres, postgres_url, with_query

import sessionwatch
from sessionwatch import Actor, SessionWatch, Signal, SignalInput, StoreError
from sessionwatch.adapters.stores import sqlite as sqlite_store
from sessionwatch.adapters.stores.postgres_connections import lock_wait_bound
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.adapters.stores.urls import parse_url
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
WORKER = "agent:main:subagent:worker"
CHANNEL = "hidden-channel-0417"
SUMMARY = "hidden goal summary 0417"
"""Caller text that must never reach a log line."""
LOCK_TIMEOUT_S = 1
JOIN_TIMEOUT_S = 120.0
"""A deadlock guard only."""


@dataclass(frozen=True)
class Producer:
    key: str
    kind: str
    call: Callable[[SessionWatch], Signal | None]


PRODUCERS = (
    Producer(WORKER, "human_direct_message", lambda w: w.record_human_message(WORKER, channel=CHANNEL)),
    Producer(WORKER, "goal_changed", lambda w: w.record_goal_changed(WORKER, summary=SUMMARY)),
    Producer(
        "agent:main:subagent:second",
        "child_spawned",
        lambda w: w.record_spawn(
            requester_key=MANAGER, child_key="agent:main:subagent:second", child_run_id="run-2"
        ),
    ),
    Producer(
        WORKER,
        "run_failed",
        lambda w: w.record_run_terminal(
            child_key=WORKER, run_id="run-1", requester_key=MANAGER, outcome="timeout"
        ),
    ),
    Producer(WORKER, "compacted", lambda w: w.record_compacted(WORKER, operation_id="op-1")),
    Producer(WORKER, "adopted", lambda w: w.record_adopted(WORKER)),
)
"""Every best-effort producer, each writing on a watched session."""


def goal(watch: SessionWatch) -> Signal:
    return watch.record(WORKER, kind="goal_changed", actor=Actor.system(), summary="goal updated")


def batch() -> list[SignalInput]:
    return [
        SignalInput(session_key=WORKER, kind="goal_changed", actor=Actor.system(), summary="goal updated"),
        SignalInput(session_key=MANAGER, kind="compacted", actor=Actor.system(), summary="session compacted"),
    ]


def host_turn(watch: SessionWatch, producer: Producer) -> tuple[str, Signal | None]:
    """The host's own action with a recording inside it: it completes whatever the store does."""
    recorded = producer.call(watch)
    return "turn completed", recorded


def sessionwatch_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("sessionwatch")]


def assert_producers_fail_quietly(watch: SessionWatch, caplog: pytest.LogCaptureFixture) -> None:
    """During a fault: None from each producer, the host's action done, one line each, no caller text."""
    for producer in PRODUCERS:
        caplog.clear()
        assert host_turn(watch, producer) == ("turn completed", None)
        lines = sessionwatch_lines(caplog)
        assert len(lines) == 1, [line.getMessage() for line in lines]
        line = lines[0]
        assert line.levelno == logging.WARNING
        structured = {name: vars(line).get(name) for name in ("session_key", "signal_kind", "reason")}
        assert structured == {
            "session_key": producer.key,
            "signal_kind": producer.kind,
            "reason": "StoreError",
        }
        assert producer.key in line.getMessage()
        assert producer.kind in line.getMessage()
        for text in (CHANNEL, SUMMARY):
            assert text not in line.getMessage()
            assert all(text not in str(value) for value in vars(line).values())


def assert_strict_api_raises(watch: SessionWatch) -> None:
    with pytest.raises(StoreError):
        goal(watch)
    with pytest.raises(StoreError):
        watch.record_many(batch())
    with pytest.raises(StoreError):
        watch.drain(MANAGER)


def given_acknowledged_history(watch: SessionWatch) -> list[int]:
    """A spawn seeds the manager's cursor on the worker, then a goal change opens its notice."""
    spawn = watch.record_spawn(requester_key=MANAGER, child_key=WORKER, child_run_id="run-0")
    assert spawn is not None
    return [spawn.sequence, goal(watch).sequence]


def assert_recording_resumes(watch: SessionWatch, acknowledged: list[int]) -> None:
    """After the fault: the same watch records, drains and audits clean; nothing acknowledged is gone."""
    after = goal(watch)
    assert after.sequence == acknowledged[-1] + 1, "no failed attempt consumed or committed a sequence"
    human = watch.record_human_message(WORKER, channel=CHANNEL)
    assert human is not None
    assert human.sequence == after.sequence + 1
    assert [(n.target, n.last_seen) for n in watch.drain(MANAGER)] == [(WORKER, acknowledged[0])]
    assert [s.sequence for s in watch.record_many(batch())] == [human.sequence + 1, human.sequence + 2]
    acknowledged += [after.sequence, human.sequence]
    assert_history(watch, acknowledged)


def assert_history(watch: SessionWatch, acknowledged: list[int]) -> None:
    status = watch.session_status(WORKER, changes_since=0)
    assert status.state_changes is not None
    stored = [e.sequence for e in status.state_changes.events]
    assert set(acknowledged) <= set(stored), f"acknowledged {acknowledged}, stored {stored}"
    assert status.state_version == max(stored)
    assert_audit_clean(watch)


# ------------------------------------------------------------------------------------- SQLite faults


class Fault(Protocol):
    def inject(self) -> None: ...

    def clear(self) -> None: ...


class WriteLockHeld:
    """Another connection holds the write lock past the store's busy timeout."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._holder: sqlite3.Connection | None = None

    def inject(self) -> None:
        self._holder = sqlite3.connect(self._path, isolation_level=None)
        self._holder.execute("BEGIN IMMEDIATE")

    def clear(self) -> None:
        assert self._holder is not None
        self._holder.execute("ROLLBACK")
        self._holder.close()


class DiskFull:
    """A filler file takes every free block of the tiny filesystem the database lives on."""

    def __init__(self, path: Path) -> None:
        self._filler = path.with_name("filler")

    def inject(self) -> None:
        fd = os.open(self._filler, os.O_CREAT | os.O_WRONLY, 0o600)
        try:
            with suppress(OSError):  # ENOSPC: full
                while True:
                    os.write(fd, b"\0" * 65536)
            with suppress(OSError):
                while True:
                    os.write(fd, b"\0")
        finally:
            os.close(fd)
        assert shutil.disk_usage(self._filler.parent).free == 0

    def clear(self) -> None:
        self._filler.unlink()


class Immutable:
    """`chattr +i` on the database and its WAL: no write reaches them, not even root's."""

    def __init__(self, path: Path) -> None:
        self._files = [str(path), f"{path}-wal"]

    def inject(self) -> None:
        subprocess.run(["chattr", "+i", *self._files], check=True)

    def clear(self) -> None:
        subprocess.run(["chattr", "-i", *self._files], check=True)


class MovedAway:
    """The database file is renamed while the store has it open, then renamed back."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._away = path.with_name("moved-away.db")

    def inject(self) -> None:
        self._path.rename(self._away)

    def clear(self) -> None:
        self._away.rename(self._path)


@contextmanager
def tiny_filesystem(directory: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted on `directory` (root may mount), unmounted afterwards."""
    directory.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(directory)], check=True)
    try:
        yield directory
    finally:
        if subprocess.run(["umount", str(directory)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(directory)], check=True)  # a failed test left a file open


FAULTS: dict[str, Callable[[Path], Fault]] = {
    "locked": WriteLockHeld,
    "full": DiskFull,
    "read-only": Immutable,
    "moved": MovedAway,
}


@pytest.fixture
def store_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    if request.node.callspec.params["fault"] == "full":
        with tiny_filesystem(tmp_path / "tiny") as mounted:
            yield mounted
    else:
        yield tmp_path


@pytest.mark.parametrize("fault", FAULTS)
def test_a_sqlite_fault_fails_only_the_strict_api_and_recording_resumes_once_it_clears(
    store_dir: Path, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sessionwatch")
    path = store_dir / "state.db"
    injected = FAULTS[fault](path)
    with SessionWatch(SqliteSignalStore(path, lock_timeout=LOCK_TIMEOUT_S), clock=FakeClock()) as watch:
        acknowledged = given_acknowledged_history(watch)

        injected.inject()
        try:
            assert_producers_fail_quietly(watch, caplog)
            assert_strict_api_raises(watch)
            # A reader holds the pooled connection: the write opens another one during the fault.
            with watch.store.snapshot(), pytest.raises(StoreError):
                goal(watch)
        finally:
            injected.clear()

        assert_recording_resumes(watch, acknowledged)
        assert_history(watch, acknowledged)
    with sessionwatch.open(f"sqlite:///{path}", sweep_on_open=False) as reopened:
        assert_history(reopened, acknowledged)


def test_a_database_deleted_while_open_fails_every_write_and_is_never_recreated(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sessionwatch")
    path = tmp_path / "state.db"
    with SessionWatch(SqliteSignalStore(path, lock_timeout=LOCK_TIMEOUT_S), clock=FakeClock()) as watch:
        acknowledged = given_acknowledged_history(watch)

        path.unlink()
        assert_producers_fail_quietly(watch, caplog)
        assert_strict_api_raises(watch)
        with watch.store.snapshot():
            with pytest.raises(StoreError):
                goal(watch)
            with pytest.raises(StoreError):  # a reader that needs a connection of its own
                watch.session_status(WORKER)
        assert watch.session_status(WORKER).state_version == acknowledged[-1], "the open file still reads"
        assert not path.exists(), "no empty database was created in its place"
    assert not path.exists()


def test_a_store_opened_by_a_relative_path_keeps_its_file_when_the_host_changes_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(home)
    with SessionWatch(SqliteSignalStore("state.db"), clock=FakeClock()) as watch:
        acknowledged = given_acknowledged_history(watch)
        monkeypatch.chdir(elsewhere)
        with watch.store.snapshot():  # the write below opens a connection of its own, from `elsewhere`
            acknowledged.append(goal(watch).sequence)
        assert_recording_resumes(watch, acknowledged)
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    with sessionwatch.open(f"sqlite:///{home / 'state.db'}", sweep_on_open=False) as reopened:
        assert_history(reopened, acknowledged)


def test_every_writer_queued_behind_a_locked_database_gets_store_error(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    writers = 8
    with SessionWatch(SqliteSignalStore(path, lock_timeout=LOCK_TIMEOUT_S), clock=FakeClock()) as watch:
        acknowledged = given_acknowledged_history(watch)
        lock = WriteLockHeld(path)
        outcomes: list[BaseException | Signal] = []
        start = threading.Barrier(writers)

        def write() -> None:
            start.wait()
            try:
                outcomes.append(goal(watch))
            except Exception as exc:  # noqa: BLE001 - the outcome under test
                outcomes.append(exc)

        threads = [threading.Thread(target=write) for _ in range(writers)]
        lock.inject()
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(JOIN_TIMEOUT_S)
            assert not any(thread.is_alive() for thread in threads), "a writer never returned"
        finally:
            lock.clear()
        assert [type(outcome) for outcome in outcomes] == [StoreError] * writers, outcomes
        assert_recording_resumes(watch, acknowledged)


# ------------------------------------------------------------------------------------ PostgreSQL faults


@pytest.fixture
def pg_url() -> Iterator[str]:
    with postgres_url("sw_faults") as url:
        yield url


def schema_of(url: str) -> str:
    parsed = parse_url(url).postgres
    assert parsed is not None
    return parsed.schema


@contextmanager
def pg_write_lock_held(url: str) -> Iterator[None]:
    """Another session holds the store's write lock (the counter row), as a stuck writer would."""
    with closing(psycopg.connect(PG_URL, autocommit=True)) as holder:
        holder.execute("BEGIN")
        holder.execute(f"SELECT value FROM {schema_of(url)}.sw_meta WHERE name = 'sequence' FOR UPDATE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")


@needs_postgres
def test_a_postgres_write_lock_held_past_lock_timeout_fails_only_the_strict_api(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sessionwatch")
    with sessionwatch.open(with_query(pg_url, lock_timeout="0.05"), clock=FakeClock()) as watch:
        acknowledged = given_acknowledged_history(watch)
        with pg_write_lock_held(pg_url):
            assert_producers_fail_quietly(watch, caplog)
            assert_strict_api_raises(watch)
        assert_recording_resumes(watch, acknowledged)
    with sessionwatch.open(pg_url, sweep_on_open=False) as reopened:
        assert_history(reopened, acknowledged)


class TerminatingClock(FakeClock):
    """A clock that, once armed, terminates the store's server sessions the next time it is read.

    `drain` reads the clock inside its write transaction, after its first statement: the session
    dies mid-transaction, as on a server restart or an administrator's `pg_terminate_backend`.
    """

    def __init__(self, application_name: str) -> None:
        super().__init__()
        self.application_name = application_name
        self.armed = False
        self.terminated = 0

    def now(self) -> datetime:
        if self.armed:
            self.armed = False
            rows = admin().execute(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = %s",
                (self.application_name,),
            )
            self.terminated = sum(1 for (killed,) in rows.fetchall() if killed)
        return super().now()


@needs_postgres
def test_a_postgres_session_terminated_inside_a_drain_acknowledges_nothing_and_the_next_drain_works(
    pg_url: str,
) -> None:
    name = "sw_faults_terminated"
    clock = TerminatingClock(name)
    with sessionwatch.open(with_query(pg_url, application_name=name), clock=clock) as watch:
        acknowledged = given_acknowledged_history(watch)
        clock.armed = True
        with pytest.raises(StoreError):
            watch.drain(MANAGER)
        assert clock.terminated >= 1
        assert [(n.target, n.last_seen) for n in watch.pending_notices(MANAGER)] == [
            (WORKER, acknowledged[0])
        ]
        assert_recording_resumes(watch, acknowledged)


def backend_waiting_for_a_lock(application_name: str) -> int | None:
    """The server process of the store's session that waits for a lock, if any."""
    row = (
        admin()
        .execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = 'Lock'",
            (application_name,),
        )
        .fetchone()
    )
    return None if row is None else int(str(row[0]))


@needs_postgres
def test_a_postgres_session_terminated_while_waiting_for_the_write_lock_is_replaced_and_the_write_lands_once(
    pg_url: str,
) -> None:
    name = "sw_faults_waiting"
    with sessionwatch.open(
        with_query(pg_url, application_name=name, lock_timeout="30"), clock=FakeClock()
    ) as watch:
        acknowledged = given_acknowledged_history(watch)
        outcome: list[Signal | BaseException] = []

        def write() -> None:
            try:
                outcome.append(goal(watch))
            except Exception as exc:  # noqa: BLE001 - the outcome under test
                outcome.append(exc)

        writer = threading.Thread(target=write)
        with pg_write_lock_held(pg_url):
            writer.start()
            deadline = time.monotonic() + JOIN_TIMEOUT_S
            while (waiting := backend_waiting_for_a_lock(name)) is None:  # an observed state, polled
                assert time.monotonic() < deadline, "the writer never queued for the write lock"
                time.sleep(0.01)
            killed = admin().execute("SELECT pg_terminate_backend(%s, 10000)", (waiting,)).fetchone()
            assert killed == (True,)
            while backend_waiting_for_a_lock(name) in (None, waiting):  # its replacement queues again
                assert time.monotonic() < deadline, "the writer did not come back on a new session"
                time.sleep(0.01)
        writer.join(JOIN_TIMEOUT_S)
        assert not writer.is_alive()
        assert [type(o) for o in outcome] == [Signal]
        signal = outcome[0]
        assert isinstance(signal, Signal)
        assert signal.sequence == acknowledged[-1] + 1
        acknowledged.append(signal.sequence)
        assert_history(watch, acknowledged)


# ------------------------------------------------------------- many callers behind a held write lock

CALLERS = 4
"""Callers sharing transactions behind another connection's write lock: half strict, half producers."""
SQLITE_LOCK_TIMEOUT_S = 1
PG_LOCK_TIMEOUT_S = 0.5
WAIT_MARGIN = 2.5
"""A caller waits for at most the batch it queued behind and its own (ADR-0061): twice the lock wait,
with room for a loaded machine. Before ADR-0061 the callers of one failed batch waited about
(batch size + 1) lock waits, each write re-run alone against the same held lock."""


class _QuickLockSqliteStore(SqliteSignalStore):
    """The SQLite store with a 1 s busy timeout, as the URL cannot set one."""

    def __init__(self, path: str | Path, **options: Any) -> None:
        super().__init__(path, lock_timeout=SQLITE_LOCK_TIMEOUT_S, **options)


@contextmanager
def sqlite_write_lock_held(path: Path) -> Iterator[None]:
    lock = WriteLockHeld(path)
    lock.inject()
    try:
        yield
    finally:
        lock.clear()


def strict_call(key: str) -> Callable[[Any], Any]:
    return lambda w: w.record(key, kind="goal_changed", actor=Actor.system(), summary="goal updated")


def producer_call(key: str) -> Callable[[Any], Any]:
    return lambda w: w.record_human_message(key, channel=CHANNEL)


def timed_callers(watch: Any, calls: list[Callable[[Any], Any]]) -> list[tuple[float, object]]:
    """Each call's seconds and outcome (its value or its exception), all started together.

    Threads on the sync façade; coroutines gathered on the loop on the asyncio façade.
    """
    if isinstance(watch, BlockingWatch):

        async def one(call: Callable[[Any], Any]) -> tuple[float, object]:
            started = time.monotonic()
            try:
                outcome: object = await call(watch.facade)
            except Exception as exc:  # noqa: BLE001 - the outcome under test
                outcome = exc
            return time.monotonic() - started, outcome

        async def together() -> list[tuple[float, object]]:
            return list(await asyncio.gather(*(one(call) for call in calls)))

        return on_loop(together())
    results: list[tuple[float, object]] = [(math.inf, None)] * len(calls)
    start = threading.Barrier(len(calls))

    def run(index: int) -> None:
        start.wait()
        started = time.monotonic()
        try:
            outcome: object = calls[index](watch)
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcome = exc
        results[index] = (time.monotonic() - started, outcome)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT_S)
    assert not any(thread.is_alive() for thread in threads), "a caller never returned"
    return results


@pytest.mark.usefixtures("through_each_facade")
@pytest.mark.parametrize("store", FILE_STORES)
def test_callers_sharing_a_transaction_wait_about_one_lock_wait_behind_a_held_lock_not_one_each(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with contextlib.ExitStack() as stack:
        if store == "sqlite":
            monkeypatch.setattr(sqlite_store, "SqliteSignalStore", _QuickLockSqliteStore)
            path = tmp_path / "state.db"
            url = f"sqlite:///{path}"
            bound = float(SQLITE_LOCK_TIMEOUT_S)  # SQLite's busy timeout, one attempt
            hold: Callable[[], contextlib.AbstractContextManager[None]] = functools.partial(
                sqlite_write_lock_held, path
            )
        else:
            base = stack.enter_context(postgres_url("sw_faults"))
            url = with_query(base, lock_timeout=str(PG_LOCK_TIMEOUT_S))
            bound = lock_wait_bound(PG_LOCK_TIMEOUT_S)  # every attempt's lock_timeout and the backoffs
            hold = functools.partial(pg_write_lock_held, base)
        watch = stack.enter_context(sessionwatch.open(url, clock=FakeClock()))
        keys = [f"agent:main:subagent:w{index}" for index in range(CALLERS)]
        watch.upsert_session(MANAGER)
        for key in keys:
            watch.upsert_session(key)
            watch.watch(MANAGER, key)  # a producer on a watched session records, or returns None on failure
        assert isinstance(producer_call(keys[1])(watch), Signal)
        calls = [(strict_call if index % 2 == 0 else producer_call)(key) for index, key in enumerate(keys)]
        with hold():
            results = timed_callers(watch, calls)
        waited = [round(seconds, 2) for seconds, _ in results]
        outcomes = [type(outcome).__name__ for _, outcome in results]
        assert outcomes == ["StoreError", "NoneType"] * (CALLERS // 2), (outcomes, waited)
        assert max(waited) < WAIT_MARGIN * bound, f"seconds per caller {waited}, lock wait {bound:.2f} s"
        assert isinstance(strict_call(keys[0])(watch), Signal)  # the lock released, recording resumes


# ------------------------------------------------------------- a PostgreSQL path that stops answering

STATEMENT_TIMEOUT_S = 1
NETWORK_TIMEOUT_S = 1
ANSWER_MARGIN = 1.5
"""A call on a silent connection fails within statement_timeout + network_timeout (ADR-0062), with
room for a loaded machine. Before ADR-0062 it waited until the path answered again."""


class FreezingClock(FakeClock):
    """A clock that, once armed, freezes the proxy the next time it is read (inside a drain's write)."""

    def __init__(self, proxy: FreezableProxy) -> None:
        super().__init__()
        self.proxy = proxy
        self.armed = False

    def now(self) -> datetime:
        if self.armed:
            self.armed = False
            self.proxy.freeze()
        return super().now()


def through(proxy: FreezableProxy, url: str) -> str:
    """`url` with its host and port replaced by the proxy's."""
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{proxy.port}"))


@needs_postgres
def test_a_postgres_connection_that_stops_answering_fails_its_writer_in_bounded_time_and_frees_the_lock(
    pg_url: str,
) -> None:
    server = urlsplit(PG_URL)
    with FreezableProxy((server.hostname or "127.0.0.1", server.port or 5432)) as proxy:
        url = with_query(
            through(proxy, pg_url),
            statement_timeout=str(STATEMENT_TIMEOUT_S),
            network_timeout=str(NETWORK_TIMEOUT_S),
        )
        bound = STATEMENT_TIMEOUT_S + NETWORK_TIMEOUT_S  # the documented bound on any one answer
        clock = FreezingClock(proxy)
        outcome: list[tuple[float, object]] = []
        with (
            sessionwatch.open(url, clock=clock) as watch,
            sessionwatch.open(pg_url, clock=FakeClock()) as other,
        ):
            acknowledged = given_acknowledged_history(watch)

            def drain() -> None:
                started = time.monotonic()
                try:
                    result: object = watch.drain(MANAGER)
                except Exception as exc:  # noqa: BLE001 - the outcome under test
                    result = exc
                outcome.append((time.monotonic() - started, result))

            clock.armed = True  # the drain's write transaction holds the write lock when its path stalls
            writer = threading.Thread(target=drain, daemon=True)
            writer.start()
            writer.join(3 * bound)
            try:
                assert not writer.is_alive(), f"the drain still waits after {3 * bound:g} s"
                ((seconds, result),) = outcome
                assert isinstance(result, StoreError), result
                assert seconds < ANSWER_MARGIN * bound, f"failed after {seconds:.2f} s, bound {bound:g} s"
                started = time.monotonic()
                after = goal(other)  # another writer: the server ended the silent transaction and its lock
                waited = time.monotonic() - started
            finally:
                proxy.thaw()
                proxy.close()
                writer.join(JOIN_TIMEOUT_S)
            assert after.sequence == acknowledged[-1] + 1, "the stalled drain committed nothing"
            assert waited < bound, f"the other writer waited {waited:.2f} s"
            assert [(n.target, n.last_seen) for n in other.pending_notices(MANAGER)] == [
                (WORKER, acknowledged[0])
            ]
