"""A SQLite store opens for reading while another process holds the write lock or the disk is full (ADR-0064).

The lock is held the way a long prune holds it: another process in `BEGIN IMMEDIATE` (here a
second Python process, so the lock is a file lock between processes, as in production). The open
used to write (the schema statements, then the start-up sweep) and failed after the busy timeout
with `database is locked`, as did every CLI command, the read-only ones too. Now a store at the
current schema version is only read when it opens, and a start-up sweep that cannot write is
deferred to the next write this process commits.

The full disk is SQLite's own `SQLITE_FULL` ("database or disk is full"), produced by giving the
store's connections a `max_page_count` of the file's current size: every write that needs one page
more fails exactly as on a full file system, while reads go on. (A real full tmpfs needs a mount,
which a test run may not be allowed; the error path in SQLite and in the store is the same one.)
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from sqlite3 import Connection

import pytest
from cli_runs import cli

import sessionwatch
import sessionwatch.aio
from sessionwatch import Actor
from sessionwatch.adapters.stores import sqlite as sqlite_store

pytestmark = pytest.mark.slow

TARGET = "agent:main:target"
WATCHERS = tuple(f"agent:main:watcher-{n}" for n in range(150))

HOLDER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE sw_meta SET value = value WHERE name = 'sequence'")
sys.stdout.write("held\n")
sys.stdout.flush()
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


class Wakes:
    """A waker that keeps the watchers it was asked to wake."""

    def __init__(self) -> None:
        self.watchers: list[str] = []

    def wake(self, watcher_key: str, target_key: str) -> None:  # noqa: ARG002 - the port's shape
        self.watchers.append(watcher_key)


def _prepare(path: Path) -> str:
    """A store whose every watcher has an open notice on the target: the start-up sweep writes."""
    url = f"sqlite:///{path}"
    with sessionwatch.open(url) as watch:
        watch.upsert_session(TARGET)
        for watcher in WATCHERS:
            watch.upsert_session(watcher)
            watch.watch(watcher, TARGET)
        watch.record(TARGET, kind="human_direct_message", actor=Actor.human(), summary="pending")
    return url


@contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """Another process holds the store's write lock (`BEGIN IMMEDIATE`) until the block ends."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout is not None
        assert holder.stdin is not None
        assert holder.stdout.readline() == "held\n"
        try:
            yield
        finally:
            holder.stdin.write("release\n")
            holder.stdin.flush()
            holder.wait(timeout=30)


def _check_reads(watch: sessionwatch.SessionWatch) -> None:
    assert {s.session_key for s in watch.sessions_list()} >= {TARGET, *WATCHERS}
    assert [n.target for n in watch.pending_notices(WATCHERS[0])] == [TARGET]


def test_the_default_open_reads_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    url = _prepare(tmp_path / "state.db")
    wakes = Wakes()
    with write_lock_held(tmp_path / "state.db"):
        started = time.monotonic()
        watch = sessionwatch.open(url, waker=wakes)  # failed after 5 s: database is locked
        opened_s = time.monotonic() - started
        try:
            _check_reads(watch)
            assert watch.startup_sweep is None  # deferred, not run
            assert wakes.watchers == []
        except BaseException:
            watch.close()
            raise
    with watch:
        # the lock is free: the first write commits, and the deferred sweep runs after it
        watch.record("agent:main:other", kind="goal_changed", actor=Actor.human(), summary="next")
        assert sorted(set(wakes.watchers)) == sorted(WATCHERS)
        wakes.watchers.clear()
        watch.record("agent:main:other", kind="goal_changed", actor=Actor.human(), summary="again")
        assert wakes.watchers == []  # owed once, run once
    sys.stderr.write(f"opened in {opened_s:.2f} s with the write lock held elsewhere\n")


def test_an_open_without_the_sweep_needs_no_write_lock(tmp_path: Path) -> None:
    url = _prepare(tmp_path / "state.db")
    with write_lock_held(tmp_path / "state.db"), sessionwatch.open(url, sweep_on_open=False) as watch:
        _check_reads(watch)  # the lock is held throughout: an open that needed it would have failed


def test_read_only_commands_answer_while_another_process_holds_the_write_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "state.db"
    _prepare(path)
    with write_lock_held(path):
        listed = cli(capsys, "list", "--db", str(path))
        status = cli(capsys, "status", TARGET, "--db", str(path))
        notices = cli(capsys, "notices", WATCHERS[0], "--db", str(path))
        watched = cli(capsys, "watched", WATCHERS[0], "--db", str(path))
        audit = cli(capsys, "audit", "--db", str(path))
        export = cli(capsys, "export", "--db", str(path))
    for outcome in (listed, status, notices, watched, audit, export):
        assert (outcome.code, outcome.err) == (0, "")
    assert TARGET in listed.out
    assert TARGET in notices.out
    assert TARGET in watched.out
    assert TARGET in export.out


@contextmanager
def disk_full_at_current_size(monkeypatch: pytest.MonkeyPatch, path: Path) -> Iterator[None]:
    """Every connection the store makes can grow the file by no page: writes fail with SQLITE_FULL."""
    with sqlite3.connect(path) as probe:
        pages = int(probe.execute("PRAGMA page_count").fetchone()[0])
    real = sqlite_store._connect  # the one seam every connection of the store is made by

    def full(db_name: str, synchronous: sqlite_store.Synchronous, lock_timeout: int | None) -> Connection:
        raw = real(db_name, synchronous, lock_timeout)
        raw.execute(f"PRAGMA max_page_count = {pages}")
        return raw

    with monkeypatch.context() as patched:
        patched.setattr(sqlite_store, "_connect", full)
        yield


def test_the_default_open_reads_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = _prepare(tmp_path / "state.db")
    wakes = Wakes()
    with (
        disk_full_at_current_size(monkeypatch, tmp_path / "state.db"),
        sessionwatch.open(url, waker=wakes) as watch,  # failed: database or disk is full
    ):
        _check_reads(watch)
        assert watch.startup_sweep is None
        with pytest.raises(sessionwatch.StoreError, match="full"):
            watch.record("agent:main:other", kind="goal_changed", actor=Actor.human(), summary="x")
        _check_reads(watch)  # nothing half-written
    assert wakes.watchers == []


def test_the_async_open_reads_while_the_write_lock_is_held_and_sweeps_after_its_first_write(
    tmp_path: Path,
) -> None:
    url = _prepare(tmp_path / "state.db")
    wakes = Wakes()

    async def scenario() -> None:
        with write_lock_held(tmp_path / "state.db"):
            watch = await sessionwatch.aio.open(url, waker=wakes)
            assert watch.startup_sweep is None
            assert [n.target for n in await watch.pending_notices(WATCHERS[0])] == [TARGET]
        try:
            await watch.record("agent:main:other", kind="goal_changed", actor=Actor.human(), summary="next")
        finally:
            await watch.aclose()  # finishes what is in flight: the deferred sweep and its wakes

    asyncio.run(scenario())
    assert sorted(set(wakes.watchers)) == sorted(WATCHERS)
