"""`concurrent`: 8 threads, each recording single signals on its own target (SPEC §15.1).

Each thread records `human_direct_message` signals by a human, one call at a time, on a target of
its own that `agent:main:main` watches (as in `record`). sessionwatch: the 8 threads share one
`SessionWatch` (its documented use: one per process, thread-safe), each call returning only once
its signal is committed. Peer: the same 8 threads, each with its own connection to one file (WAL,
busy timeout 5 s), one transaction per signal. A block starts all 8 threads together and runs them
for 5 s (the mode's block, 0.25 s, in the quick run); the figure is the total signals per second;
rounds are interleaved (peer, sw, ...) and the medians compared.

The file is `threads.py`, not `concurrent.py`: the scripts run with `bench/` first on `sys.path`,
where a `concurrent` module would hide the standard library's package (psycopg imports it).

Target (SPEC §15.1): >= 1.5x the peer's total rate, by group commit across threads. Every signal
is checked afterwards: each target's head equals its thread's last returned sequence.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/threads.py` finds `bench.*`

from bench.harness import (
    AGENT,
    SUMMARY,
    WATCHER,
    Mode,
    Result,
    Synchronous,
    at_least,
    fresh_dir,
    run_script,
    sessionwatch_store,
    settle,
    throughput_result,
)
from bench.peer import PeerStore
from sessionwatch import Actor, SignalKind

NAME = "concurrent"
THREADS = 8
TARGET = at_least(1.5)
KIND = SignalKind.HUMAN_DIRECT_MESSAGE

Worker = Callable[[], int]
"""One thread's call: records one signal, returns its sequence."""


def target_key(index: int) -> str:
    """The `index`-th thread's own target."""
    return f"agent:{AGENT}:subagent:concurrent-{index}"


def peer_record(peer: PeerStore, key: str) -> int:
    """One peer record on `key`, as a thread records it (a `Worker` once bound); its sequence."""
    return peer.record(key, agent_id=AGENT, kind=KIND.value, actor_type="human", summary=SUMMARY).sequence


def block_seconds(mode: Mode) -> float:
    """How long one block of threads runs: 5 s (SPEC §15.1), the mode's block in a quick run."""
    return 5.0 if mode.name == "full" else mode.seconds


def threads_block(workers: list[Worker], seconds: float) -> float:
    """Run every worker on its own thread for `seconds`; total calls per second."""
    settle()
    start_line = threading.Barrier(len(workers) + 1)
    counts = [0] * len(workers)
    failures: list[BaseException] = []
    deadline = 0.0

    def loop(index: int, worker: Worker) -> None:
        start_line.wait()
        try:
            while time.perf_counter() < deadline:
                worker()
                counts[index] += 1
        except BaseException as exc:  # noqa: BLE001 - reported on the main thread below
            failures.append(exc)

    threads = [threading.Thread(target=loop, args=(i, w)) for i, w in enumerate(workers)]
    for thread in threads:
        thread.start()
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    start_line.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if failures:
        raise RuntimeError(f"a worker failed: {failures[0]!r}") from failures[0]
    return sum(counts) / elapsed


def run_setting(mode: Mode, setting: Synchronous) -> Result:
    """Interleaved rounds of 8-thread blocks on one durability setting."""
    seconds = block_seconds(mode)
    with fresh_dir("peer") as peer_dir, fresh_dir("sw") as sw_dir:
        peers = [PeerStore(peer_dir / "peer.db", synchronous=setting) for _ in range(THREADS)]
        with sessionwatch_store(sw_dir, setting) as watch:
            human = Actor.human()
            last: dict[str, int] = {}
            for index in range(THREADS):
                key = target_key(index)
                peers[0].watch(WATCHER, key, AGENT)
                watch.upsert_session(key, spawned_by=WATCHER)
                assert watch.watch(WATCHER, key), "the watcher must be registered"

            def sw_worker(index: int) -> Worker:
                key = target_key(index)

                def call() -> int:
                    sequence = watch.record(key, kind=KIND, actor=human, summary=SUMMARY).sequence
                    last[key] = sequence
                    return sequence

                return call

            peer_workers: list[Worker] = [
                partial(peer_record, peers[i], target_key(i)) for i in range(THREADS)
            ]
            sw_workers = [sw_worker(i) for i in range(THREADS)]
            threads_block(peer_workers, mode.warmup)
            threads_block(sw_workers, mode.warmup)
            peer_rounds: list[float] = []
            sw_rounds: list[float] = []
            for _ in range(mode.rounds):
                peer_rounds.append(threads_block(peer_workers, seconds))
                sw_rounds.append(threads_block(sw_workers, seconds))
            for key, sequence in last.items():
                assert watch.session_status(key).state_version == sequence, f"{key}: a record was lost"
        for peer in peers:
            peer.close()
    extra = {"threads": THREADS, "block_seconds": seconds}
    return throughput_result(NAME, setting, "signals/s", (peer_rounds, sw_rounds), target=TARGET, extra=extra)


def run(mode: Mode) -> list[Result]:
    """Every durability setting of the mode."""
    return [run_setting(mode, setting) for setting in mode.settings]


def main() -> None:
    """Print this workload's table and write `bench/results/concurrent.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
