"""Forty processes open one PostgreSQL store at once while writers write and sweeps run (ADR-0063).

A gateway restarting its processes together must start: every `open()` runs the restart sweep,
which re-freezes the open cursors (`sw_cursors`) and appends stored events, while other processes
record signals. An `open()` that ran the schema's DDL in its own transaction (a `CREATE INDEX IF
NOT EXISTS` waits for a share lock on `sw_cursors`, after it took one on `stored_events`) could
deadlock with another process's sweep; an open of a current schema now runs no DDL at all.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from stores import needs_postgres, postgres_url

import sessionwatch
from sessionwatch import Actor

pytestmark = [pytest.mark.slow, needs_postgres]

OPENERS = 40
WRITERS = 3
TARGETS = tuple(f"agent:main:target-{n}" for n in range(8))
WATCHERS = tuple(f"agent:main:watcher-{n}" for n in range(6))
EXIT_TIMEOUT = 300.0

OPENER = r"""
import sys
from concurrent.futures import ThreadPoolExecutor
import sessionwatch

url = sys.argv[1]
sys.stdout.write("ready\n")
sys.stdout.flush()
sys.stdin.readline()  # every opener starts at once
try:
    with sessionwatch.open(url) as watch:
        pass
except Exception as exc:
    sys.stdout.write(f"failed {type(exc).__name__}: {exc}\n")
else:
    sys.stdout.write("opened\n")
"""

WRITER = r"""
import sys
from concurrent.futures import ThreadPoolExecutor
import sessionwatch
from sessionwatch import Actor

url, index = sys.argv[1], int(sys.argv[2])
targets = [f"agent:main:target-{n}" for n in range(8)]
with sessionwatch.open(url, sweep_on_open=False) as watch:
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    for i in range(200):
        target = targets[(i + index) % len(targets)]
        watch.record(target, kind="human_direct_message", actor=Actor.human(), summary=f"w{index}-{i}")
        if i % 10 == 9:
            watch.sweep()
sys.stdout.write("done\n")
"""


def _start(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _prepare(url: str) -> None:
    """Every watcher watches every target, each with a pending notice: each sweep re-freezes them all."""
    with sessionwatch.open(url) as watch:
        for watcher in WATCHERS:
            watch.upsert_session(watcher)
        for target in TARGETS:
            watch.upsert_session(target)
            for watcher in WATCHERS:
                watch.watch(watcher, target)
            watch.record(target, kind="human_direct_message", actor=Actor.human(), summary="pending")


def test_forty_concurrent_opens_all_open_while_writers_write_and_sweeps_run() -> None:
    with postgres_url("sw_opens", durable=True) as url:
        _prepare(url)
        children = [_start(WRITER, url, str(n)) for n in range(WRITERS)]
        children += [_start(OPENER, url) for _ in range(OPENERS)]
        try:
            for child in children:
                assert child.stdout is not None
                assert child.stdout.readline() == "ready\n"
            for child in children:
                assert child.stdin is not None
                child.stdin.write("go\n")
                child.stdin.flush()
            outputs = [child.communicate(timeout=EXIT_TIMEOUT)[0].strip() for child in children]
        finally:
            for child in children:
                child.kill()
                child.wait()
        assert [child.returncode for child in children] == [0] * len(children)
        assert outputs[:WRITERS] == ["done"] * WRITERS
        failed = [line for line in outputs[WRITERS:] if line != "opened"]
        assert failed == [], f"{len(failed)} of {OPENERS} opens failed: {failed[:3]}"


def test_forty_concurrent_opens_of_a_new_schema_create_it_once() -> None:
    """The first opener creates the schema under the advisory lock; each other one finds it current."""
    with postgres_url("sw_opens", durable=True) as url:
        barrier = threading.Barrier(OPENERS)

        def open_one() -> int:
            barrier.wait()
            with sessionwatch.open(url, sweep_on_open=False) as watch:
                return watch.store.last_sequence()

        with ThreadPoolExecutor(OPENERS) as pool:
            assert list(pool.map(lambda _: open_one(), range(OPENERS))) == [0] * OPENERS
        with sessionwatch.open(url) as watch:
            watch.record(TARGETS[0], kind="human_direct_message", actor=Actor.human(), summary="after")
            assert watch.store.last_sequence() == 1
