"""`concurrent-async`: 64 coroutines on one `AsyncSessionWatch`, 8 per target, vs the peer's 8 threads.

Each coroutine records `human_direct_message` signals by a human, one call at a time, on one of 8
targets that `agent:main:main` watches (as in `record`), awaiting each call until its signal is
committed. All 64 run on one event loop, with one `AsyncSessionWatch` (`sessionwatch.aio.open`).
Peer: the `concurrent` workload's 8 threads, each with its own connection, one transaction per
signal. A block runs for 5 s (the mode's block, 0.25 s, in the quick run); rounds are interleaved
(peer, sw, ...) and the medians compared.

Meanwhile a ticker on the same loop sleeps 1 ms at a time and notes how late each wake-up came:
the `loop-lag` line is the 99th percentile of that lateness over every sessionwatch block, so a
store call that ran on the loop (or a long stretch of work there) shows up as lag.

Targets (SPEC §15.1): >= 2x the peer's total rate at NORMAL, >= 4x at FULL; loop lag p99 <= 5 ms.
Every signal is checked afterwards: each target's head equals the highest sequence returned on it.

For context, the same rounds measure `floor-async`: 64 coroutines handing *floor records* (see
bench/floor.py: the least a record of this design costs) to the same writer thread, one hop to the
loop per batch, as `AsyncSessionWatch` does. No implementation of this design on this machine
beats that line's ratio to the peer.

The file is `coroutines.py`, not `asyncio.py`: the scripts run with `bench/` first on `sys.path`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import cast

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/coroutines.py` finds `bench.*`

import sessionwatch.aio
from bench.floor import FloorStore, FloorWrite, floor_draft, floor_set_up
from bench.harness import (
    AGENT,
    CONTEXT,
    SUMMARY,
    WATCHER,
    Mode,
    Result,
    Synchronous,
    at_least,
    fresh_dir,
    run_script,
    settle,
    sw_at_most,
    sw_only_result,
    throughput_result,
)
from bench.peer import PeerStore
from bench.threads import THREADS, Worker, block_seconds, peer_record, threads_block
from sessionwatch import Actor, Signal, SignalKind
from sessionwatch.adapters.app.together import Outcome
from sessionwatch.adapters.app.writer import Settled, WriterThread, call_each
from sessionwatch.adapters.stores.port import SignalStore
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.domain.session import SignalDraft, SignalRecorded

NAME = "concurrent-async"
LAG = "loop-lag"
FLOOR = "floor-async"
COROUTINES = 64
TARGETS = 8
TICK = 0.001
TARGETS_BY_SETTING = {"normal": at_least(2.0), "full": at_least(4.0)}
LAG_TARGET = sw_at_most(5.0, "ms")
KIND = SignalKind.HUMAN_DIRECT_MESSAGE


def target_key(index: int) -> str:
    """The `index`-th of the 8 targets."""
    return f"agent:{AGENT}:subagent:async-{index}"


@dataclass
class Coroutines:
    """The sessionwatch side: one façade on one loop, the highest sequence returned per target."""

    watch: AsyncSessionWatch
    last: dict[str, int] = field(default_factory=dict)
    lateness: list[float] = field(default_factory=list)
    """Every tick's lateness (seconds past its 1 ms) over the timed blocks."""

    async def block(self, seconds: float, *, timed: bool) -> float:
        """64 coroutines recording for `seconds` while the ticker runs; total signals per second."""
        deadline = time.perf_counter() + seconds
        human = Actor.human()
        counts = [0] * COROUTINES

        async def record(index: int) -> None:
            key = target_key(index % TARGETS)
            watch, last = self.watch, self.last
            while time.perf_counter() < deadline:
                signal = await watch.record(key, kind=KIND, actor=human, summary=SUMMARY)
                last[key] = max(last.get(key, 0), signal.sequence)
                counts[index] += 1

        async def tick() -> list[float]:
            late: list[float] = []
            while time.perf_counter() < deadline:
                asked = time.perf_counter()
                await asyncio.sleep(TICK)
                late.append(time.perf_counter() - asked - TICK)
            return late

        start = time.perf_counter()
        ticker = asyncio.create_task(tick())
        await asyncio.gather(*(record(i) for i in range(COROUTINES)))
        elapsed = time.perf_counter() - start
        late = await ticker
        if timed:
            self.lateness.extend(late)
        return sum(counts) / elapsed


class FloorCoroutines:
    """Floor records from 64 coroutines through a writer thread, one hop to the loop per batch."""

    def __init__(self, store: FloorStore, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.writer = WriterThread(cast("SignalStore", store), deliver=self._deliver)

    def _deliver(self, settled: Settled) -> None:
        self.loop.call_soon_threadsafe(call_each, settled)

    async def block(self, seconds: float) -> float:
        """64 coroutines recording floor records for `seconds`; total signals per second."""
        deadline = time.perf_counter() + seconds
        counts = [0] * COROUTINES
        loop, writer = self.loop, self.writer

        async def record(index: int) -> None:
            key = target_key(index % TARGETS)
            while time.perf_counter() < deadline:
                draft = floor_draft(key, datetime.now(UTC))
                answer: asyncio.Future[list[SignalRecorded]] = loop.create_future()
                writer.submit(partial(_floor_write, draft), partial(_answer, answer))
                (event,) = await answer
                Signal.from_event(event)
                counts[index] += 1

        start = time.perf_counter()
        await asyncio.gather(*(record(i) for i in range(COROUTINES)))
        return sum(counts) / (time.perf_counter() - start)


def _floor_write(draft: SignalDraft, tx: object) -> list[SignalRecorded]:
    return cast("FloorWrite", tx).record([draft])


def _answer(answer: asyncio.Future[list[SignalRecorded]], outcome: Outcome) -> None:
    ok, value = outcome
    if ok:
        answer.set_result(value)
    else:
        answer.set_exception(value)


def run_setting(mode: Mode, setting: Synchronous) -> list[Result]:
    """Interleaved rounds: the peer's 8 threads, then 64 coroutines, on one durability setting."""
    seconds = block_seconds(mode)
    keys = [target_key(index) for index in range(TARGETS)]
    with (
        fresh_dir("peer") as peer_dir,
        fresh_dir("floor") as floor_dir,
        fresh_dir("sw") as sw_dir,
        asyncio.Runner() as runner,
    ):
        peers = [PeerStore(peer_dir / "peer.db", synchronous=setting) for _ in range(THREADS)]
        peer_workers: list[Worker] = [
            partial(peer_record, peers[i], target_key(i % TARGETS)) for i in range(THREADS)
        ]
        for key in keys:
            peers[0].watch(WATCHER, key, AGENT)
        floor_store = FloorStore(
            floor_dir / "sessionwatch.db", setting, floor_set_up(floor_dir, setting, keys)
        )
        floor = FloorCoroutines(floor_store, runner.get_loop())
        url = f"sqlite:///{sw_dir / 'sessionwatch.db'}"
        watch = runner.run(sessionwatch.aio.open(url, synchronous=setting))
        try:
            runner.run(_watch_targets(watch))
            side = Coroutines(watch)

            def sw_block(seconds: float, *, timed: bool = True) -> float:
                settle()
                return runner.run(side.block(seconds, timed=timed))

            def floor_block(seconds: float) -> float:
                settle()
                return runner.run(floor.block(seconds))

            threads_block(peer_workers, mode.warmup)
            floor_block(mode.warmup)
            sw_block(mode.warmup, timed=False)
            peer_rounds: list[float] = []
            floor_rounds: list[float] = []
            sw_rounds: list[float] = []
            for _ in range(mode.rounds):
                peer_rounds.append(threads_block(peer_workers, seconds))
                floor_rounds.append(floor_block(seconds))
                sw_rounds.append(sw_block(seconds))
            runner.run(_check_heads(watch, side.last))
        finally:
            runner.run(watch.aclose())
            floor.writer.close()
        floor_store.check()
        floor_store.close()
        for peer in peers:
            peer.close()
    extra = {"coroutines": COROUTINES, "targets": TARGETS, "peer_threads": THREADS, "block_seconds": seconds}
    rate = throughput_result(
        NAME, setting, "signals/s", (peer_rounds, sw_rounds), target=TARGETS_BY_SETTING[setting], extra=extra
    )
    floor_rate = throughput_result(
        FLOOR, setting, "signals/s", (peer_rounds, floor_rounds), target=CONTEXT, extra=extra
    )
    return [rate, floor_rate, _lag_result(setting, side.lateness)]


async def _watch_targets(watch: AsyncSessionWatch) -> None:
    for index in range(TARGETS):
        key = target_key(index)
        await watch.upsert_session(key, spawned_by=WATCHER)
        if not await watch.watch(WATCHER, key):
            raise AssertionError("the watcher must be registered")


async def _check_heads(watch: AsyncSessionWatch, last: dict[str, int]) -> None:
    for key, sequence in last.items():
        head = (await watch.session_status(key)).state_version
        if head != sequence:
            raise AssertionError(f"{key}: head {head}, but {sequence} was returned: a record was lost")


def _lag_result(setting: Synchronous, lateness: list[float]) -> Result:
    """The 99th percentile of the ticker's lateness, in milliseconds."""
    ordered = sorted(lateness)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000.0
    extra = {
        "ticks": len(ordered),
        "median_ms": statistics.median(ordered) * 1000.0,
        "max_ms": ordered[-1] * 1000.0,
    }
    return sw_only_result(LAG, setting, "ms", p99, target=LAG_TARGET, extra=extra)


def run(mode: Mode) -> list[Result]:
    """Every durability setting of the mode."""
    return [result for setting in mode.settings for result in run_setting(mode, setting)]


def main() -> None:
    """Print this workload's table and write `bench/results/concurrent-async.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
