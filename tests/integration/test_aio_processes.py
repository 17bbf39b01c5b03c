"""An asyncio host's process ends, closed or not, and keeps every write it was told was recorded.

A child Python process opens an `AsyncSessionWatch` (with a sync waker, so a waker thread runs too),
lets 64 coroutines record 4 signals each, prints the sequences they were acknowledged, and returns
from `asyncio.run`: once without any close (no `aclose`, no `async with`), once after `aclose()`.
The process must end within `EXIT_BOUND` seconds of printing, every acknowledged signal must be in
the store, and `audit` must be clean. After `aclose()` no thread but the main one is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from stores import FILE_STORES, postgres_url

import sessionwatch

pytestmark = pytest.mark.slow

COROUTINES = 64
SIGNALS_EACH = 4
EXIT_BOUND = 5.0
"""Seconds from the child's last line to its exit (the only timed bound: a hung exit fails here)."""
START_PATIENCE = 120.0
"""How long the child may take to start and record (a failure bound, not a measured figure)."""

CHILD = r"""
import asyncio, json, sys, threading
import sessionwatch.aio
from sessionwatch import Actor

url, ending = sys.argv[1], sys.argv[2]
woken = []

class ListWaker:
    def wake(self, watcher_key, reason):
        woken.append(watcher_key)

async def main():
    watch = await sessionwatch.aio.open(url, waker=ListWaker())
    for n in range(8):
        await watch.watch("agent:main:main", f"agent:main:worker-{n}")

    async def writer(index):
        sequences = []
        for step in range(SIGNALS_EACH):
            signal = await watch.record(
                f"agent:main:worker-{(index + step) % 8}",
                kind="goal_changed",
                actor=Actor.system(),
                summary=f"goal {index}.{step}",
            )
            sequences.append(signal.sequence)
        return sequences

    acknowledged = await asyncio.gather(*(writer(i) for i in range(COROUTINES)))
    if ending == "aclose":
        await watch.aclose()
    return [seq for sequences in acknowledged for seq in sequences]

sequences = asyncio.run(main())
others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
print(json.dumps({"sequences": sequences, "threads": others}), flush=True)
""".replace("SIGNALS_EACH", str(SIGNALS_EACH)).replace("COROUTINES", str(COROUTINES))


@pytest.fixture(params=FILE_STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.db'}"
    else:
        with postgres_url("sw_aio_exit", durable=True) as url:
            yield url


def run_child(url: str, ending: str) -> dict[str, list[object]]:
    """Run the child; its report once printed, after checking it then exits within the bound."""
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, url, ending], stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            line = child.stdout.readline()  # the report is printed after asyncio.run returned
            assert line, f"the child printed nothing and exited with {child.wait(START_PATIENCE)}"
            try:
                code = child.wait(timeout=EXIT_BOUND)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the process did not end within {EXIT_BOUND} s of its last write ({ending})")
        finally:
            child.kill()
    assert code == 0
    report: dict[str, list[object]] = json.loads(line)
    return report


def assert_every_acknowledged_signal_is_stored(url: str, acknowledged: list[object]) -> None:
    sequences = [int(str(seq)) for seq in acknowledged]
    assert len(sequences) == len(set(sequences)) == COROUTINES * SIGNALS_EACH
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        stored = {s.sequence for log in watch.store.read_model().signals.values() for s in log}
        assert stored == set(sequences)
        assert_audit_clean(watch)


def test_a_process_that_never_closes_its_async_store_still_exits_and_keeps_every_acknowledged_write(
    store: str,
) -> None:
    report = run_child(store, "no-close")

    assert_every_acknowledged_signal_is_stored(store, report["sequences"])


def test_aclose_leaves_no_thread_behind_and_the_process_exits(store: str) -> None:
    report = run_child(store, "aclose")

    assert report["threads"] == []
    assert_every_acknowledged_signal_is_stored(store, report["sequences"])
