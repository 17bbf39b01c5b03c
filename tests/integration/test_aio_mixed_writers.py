"""Sync and async writers on one store at once (a CLI next to an async gateway) keep it exact.

A `SessionWatch` written from `SYNC_THREADS` threads and an `AsyncSessionWatch` written from
`COROUTINES` coroutines share one SQLite file, or one PostgreSQL schema, each through a store of its
own. They record on shared targets (watched) and on sessions of their own, and every fifth record of
every writer carries one of a set of dedupe keys that all writers use. Each signal's `run_id` names
its writer. Afterwards: no two writers were acknowledged the same new sequence and together they are
exactly the stored signals, each dedupe key is stored once and every writer using it got that one
signal back (a writer using a key again gets its own signal again), every head is its session's
highest sequence, and `audit` is clean.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from stores import FILE_STORES, postgres_url

import sessionwatch
import sessionwatch.aio
from sessionwatch import Actor, SessionWatch, Signal

pytestmark = pytest.mark.slow

SYNC_THREADS = 4
SYNC_SIGNALS = 60
COROUTINES = 24
ASYNC_SIGNALS = 10
SHARED = tuple(f"agent:main:shared-{n}" for n in range(4))
WATCHER = "agent:main:main"
DEDUPE_EVERY = 5
DEDUPE_KEYS = 6
"""Writers use `dedupe:0` .. `dedupe:5`, so every key is raced by sync and async writers alike."""


@pytest.fixture(params=FILE_STORES)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.db'}"
    else:
        with postgres_url("sw_aio_mixed") as opened:
            yield opened


def key_and_dedupe(writer: str, index: int, step: int) -> tuple[str, str | None]:
    """Where a writer's step records, and its dedupe key (writers start at different keys)."""
    key = SHARED[step % len(SHARED)] if step % 2 == 0 else f"agent:main:own-{writer}"
    dedupe = f"dedupe:{(step // DEDUPE_EVERY + index) % DEDUPE_KEYS}" if step % DEDUPE_EVERY == 0 else None
    return key, dedupe


def sync_writer(watch: SessionWatch, index: int, go: threading.Event) -> list[Signal]:
    name = f"sync-{index}"
    go.wait()
    signals = []
    for step in range(SYNC_SIGNALS):
        key, dedupe = key_and_dedupe(name, index, step)
        signals.append(
            watch.record(
                key,
                kind="goal_changed",
                actor=Actor.system(),
                summary="goal set",
                run_id=name,
                dedupe_key=dedupe,
            )
        )
    return signals


async def async_writer(watch: sessionwatch.aio.AsyncSessionWatch, index: int) -> list[Signal]:
    name = f"async-{index}"
    signals = []
    for step in range(ASYNC_SIGNALS):
        key, dedupe = key_and_dedupe(name, index, step)
        signals.append(
            await watch.record(
                key,
                kind="goal_changed",
                actor=Actor.system(),
                summary="goal set",
                run_id=name,
                dedupe_key=dedupe,
            )
        )
    return signals


async def write_at_once(url: str, sync: SessionWatch) -> dict[str, list[Signal]]:
    """Every writer at once; what each one's `record` calls returned, by writer."""
    go = threading.Event()
    async with await sessionwatch.aio.open(url, sweep_on_open=False) as watch:
        with ThreadPoolExecutor(SYNC_THREADS) as pool:
            threads = {f"sync-{n}": pool.submit(sync_writer, sync, n, go) for n in range(SYNC_THREADS)}
            coroutines = [async_writer(watch, n) for n in range(COROUTINES)]
            go.set()
            answers = await asyncio.gather(*coroutines)
            returned = {f"async-{n}": signals for n, signals in enumerate(answers)}
            returned |= {name: future.result() for name, future in threads.items()}
    return returned


def test_sync_and_async_writers_on_one_store_keep_sequences_unique_dedupe_exact_and_heads_highest(
    url: str,
) -> None:
    with sessionwatch.open(url) as sync:
        for target in SHARED:
            assert sync.watch(WATCHER, target)
        returned = asyncio.run(write_at_once(url, sync))
        model = sync.store.read_model()
        stored = {s.sequence: s for log in model.signals.values() for s in log}

        # New sequences: each writer's own strictly increasing, no two writers share one, and
        # together they are exactly the stored signals (none lost, none invented).
        own: list[int] = []
        for name, signals in returned.items():
            mine = [s.sequence for s in signals if s.run_id == name]
            repeated = [s for s in signals if s.run_id == name and mine.count(s.sequence) > 1]
            assert all(s.dedupe_key is not None for s in repeated)  # its own dedupe key, used again
            mine = list(dict.fromkeys(mine))
            assert mine == sorted(mine)
            own.extend(mine)
        assert len(own) == len(set(own))
        assert set(own) == set(stored)
        assert len(returned) == SYNC_THREADS + COROUTINES

        # Dedupe keys: stored once, and every writer that used one got that one signal back.
        by_key: dict[str, set[int]] = defaultdict(set)
        for signals in returned.values():
            for signal in signals:
                if signal.dedupe_key is not None:
                    by_key[signal.dedupe_key].add(signal.sequence)
        stored_keys = [s.dedupe_key for s in stored.values() if s.dedupe_key is not None]
        assert sorted(stored_keys) == sorted(by_key) == [f"dedupe:{n}" for n in range(DEDUPE_KEYS)]
        assert all(len(sequences) == 1 for sequences in by_key.values())
        writers_per_key = {key: {s.run_id for s in stored.values() if s.dedupe_key == key} for key in by_key}
        assert all(len(writers) == 1 for writers in writers_per_key.values())

        # Heads: every session's head is its highest sequence.
        for state in sync.store.sessions():
            log = model.signals.get(state.identity, ())
            assert state.head == (log[-1].sequence if log else 0)
        assert_audit_clean(sync)
