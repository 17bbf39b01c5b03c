"""Load (SPEC §15.2): 8 threads record, drain, watch and read on one store for a sustained run.

Each thread records (strict `record`, `record_many` and the human-message producer) on four shared
targets, some with dedupe keys every thread uses, drains its own watcher, re-registers watches and
reads the targets back; one thread per target also starts watching mid-run. On memory, SQLite and
PostgreSQL: no thread deadlocks (joined with a timeout) or fails; every returned signal is stored
under the session it was recorded on; sequences are unique, rise in each thread's call order and are
dense (1..counter, nothing lost or skipped); every reader sees at least what it wrote; every cursor
reached its target's last material signal; the audit is clean.

`SESSIONWATCH_LOAD_SECONDS` sets how long the threads run (default 3 s per store).
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

import pytest
from auditing import assert_audit_clean

import sessionwatch
from sessionwatch import Actor, SessionWatch, Signal, SignalInput, SignalKind
from sessionwatch.testing import FakeClock

pytestmark = pytest.mark.slow

SECONDS = float(os.environ.get("SESSIONWATCH_LOAD_SECONDS", "3"))
THREADS = 8
JOIN_TIMEOUT_S = SECONDS + 120.0
"""A deadlock guard only: the threads stop by themselves after `SECONDS`."""
TARGETS = tuple(f"agent:main:load-target-{n}" for n in range(4))
NOTIFYING = {SignalKind.HUMAN_DIRECT_MESSAGE, SignalKind.GOAL_CHANGED}


def watcher_of(thread: int) -> str:
    return f"agent:main:load-watcher-{thread}"


def rover_of(thread: int) -> str:
    """A watcher that starts watching one target mid-run."""
    return f"agent:main:load-rover-{thread}"


@dataclass
class Worker:
    """One thread's view: what it recorded, what it was given back, what its rover saw on registering."""

    index: int
    returned: list[Signal] = field(default_factory=list)
    dedupe: dict[str, int] = field(default_factory=dict)
    rover_target: str = ""
    rover_registered_material: int = -1
    stale_reads: list[str] = field(default_factory=list)
    drained: int = 0

    @property
    def run_id(self) -> str:
        return f"thread-{self.index}"

    def mine(self) -> list[Signal]:
        """The signals this thread recorded (not existing ones a duplicate dedupe key returned)."""
        return [s for s in self.returned if s.run_id == self.run_id]


def one_round(watch: SessionWatch, worker: Worker, n: int) -> None:
    """The thread's n-th step: a write of some kind, then a read of what it wrote."""
    target = TARGETS[(worker.index + n) % len(TARGETS)]
    if n % 5 == 0:
        signals = watch.record_many(
            [
                SignalInput(
                    session_key=target,
                    kind="goal_changed",
                    actor=Actor.system(),
                    summary="goal updated",
                    run_id=worker.run_id,
                ),
                SignalInput(
                    session_key=TARGETS[(worker.index + n + 1) % len(TARGETS)],
                    kind="human_direct_message",
                    actor=Actor.human(),
                    summary="human message via load",
                    run_id=worker.run_id,
                ),
                SignalInput(
                    session_key=target,
                    kind="run_completed",
                    actor=Actor.system(),
                    summary="child run completed",
                    run_id=worker.run_id,
                ),
            ]
        )
        worker.returned.extend(signals)
    elif n % 5 == 1:
        recorded = watch.record_human_message(target, channel="load", run_id=worker.run_id)
        assert recorded is not None, "the target is watched: a human turn is recorded"
        worker.returned.append(recorded)
    else:
        dedupe = f"load:{n}" if n % 10 == 2 else None  # every thread uses it: one of them records it
        signal = watch.record(
            target,
            kind="human_direct_message" if n % 2 else "goal_changed",
            actor=Actor.human() if n % 2 else Actor.system(),
            summary="human message via load" if n % 2 else "goal updated",
            run_id=worker.run_id,
            dedupe_key=dedupe,
        )
        worker.returned.append(signal)
        if dedupe is not None:
            worker.dedupe[dedupe] = signal.sequence
    last = worker.returned[-1]
    seen = watch.session_status(last.session_key).state_version
    if seen < last.sequence:
        worker.stale_reads.append(f"{last.session_key}: read {seen} after writing {last.sequence}")
    if n % 7 == 3:
        worker.drained += len(watch.drain(watcher_of(worker.index)))
    if n % 11 == 4:
        assert watch.watch(watcher_of(worker.index), target), "re-watching keeps the cursor"
    if n == 20:
        worker.rover_target = target
        assert watch.watch(rover_of(worker.index), target)
        cursor = watch.cursor(rover_of(worker.index), target)
        assert cursor is not None
        worker.rover_registered_material = cursor.material


def run_threads(watch: SessionWatch) -> list[Worker]:
    workers = [Worker(index) for index in range(THREADS)]
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(worker: Worker) -> None:
        try:
            start.wait()
            deadline = time.monotonic() + SECONDS
            n = 0
            while time.monotonic() < deadline or n <= 20:  # every rover registers
                one_round(watch, worker, n)
                n += 1
        except BaseException as exc:
            errors.append(exc)
            raise

    threads = [
        threading.Thread(target=work, args=(worker,), name=f"load-{worker.index}") for worker in workers
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT_S)
    stuck = [thread.name for thread in threads if thread.is_alive()]
    assert not stuck, f"deadlocked: {stuck}"
    assert not errors, errors
    return workers


def check_signals(watch: SessionWatch, workers: list[Worker]) -> dict[str, int]:
    """Every returned signal stored once, dense sequences, one signal per dedupe key, exact heads.

    Returns each target's last material (notifying) sequence.
    """
    model = watch.store.read_model()
    stored = {s.sequence: s for log in model.signals.values() for s in log}
    for worker in workers:
        assert not worker.stale_reads, worker.stale_reads
        mine = [s.sequence for s in worker.mine()]
        assert mine == sorted(set(mine)), f"thread {worker.index}: sequences rise in call order"
    recorded = [s for worker in workers for s in worker.mine()]
    sequences = [s.sequence for s in recorded]
    assert len(sequences) == len(set(sequences)), "no sequence was handed to two signals"
    assert set(sequences) == set(stored), "every returned signal is stored, and nothing else"
    assert set(stored) == set(range(1, watch.store.last_sequence() + 1)), "sequences are dense"
    for signal in recorded:
        kept = stored[signal.sequence]
        assert (kept.session_key, kept.kind, kept.run_id) == (signal.session_key, signal.kind, signal.run_id)

    by_key: dict[str, set[int]] = defaultdict(set)
    for worker in workers:
        for key, sequence in worker.dedupe.items():
            by_key[key].add(sequence)
    assert all(len(found) == 1 for found in by_key.values()), "a dedupe key gives every thread one signal"
    assert {k: next(iter(v)) for k, v in by_key.items()} == {k: seq for k, (_, seq) in model.dedupe.items()}

    last_material = {}
    for target in TARGETS:
        on_target = [s for s in stored.values() if s.session_key == target]
        assert watch.session_status(target).state_version == max(s.sequence for s in on_target)
        last_material[target] = max(s.sequence for s in on_target if s.kind in NOTIFYING)
    return last_material


def check_cursors(watch: SessionWatch, workers: list[Worker], last_material: dict[str, int]) -> None:
    """Every cursor reached its target's last material signal, and the last drains acknowledge it."""
    for worker in workers:
        for target in TARGETS:
            cursor = watch.cursor(watcher_of(worker.index), target)
            assert cursor is not None
            assert cursor.material == last_material[target], (worker.index, target)
        rover = watch.cursor(rover_of(worker.index), worker.rover_target)
        assert rover is not None
        assert rover.material == max(worker.rover_registered_material, last_material[worker.rover_target])

    for worker in workers:
        for watcher in (watcher_of(worker.index), rover_of(worker.index)):
            watch.drain(watcher)
            watch.drain(watcher)  # the follow-up notice the first drain may have left
            assert watch.pending_notices(watcher) == []
        for target in TARGETS:
            cursor = watch.cursor(watcher_of(worker.index), target)
            assert cursor is not None
            assert cursor.last_seen == cursor.notified == cursor.material == last_material[target]
    assert sum(worker.drained for worker in workers) > 0, "drains ran during the load"


def test_eight_threads_recording_draining_and_watching_lose_nothing_and_never_deadlock(
    store_url: str,
) -> None:
    with sessionwatch.open(store_url, clock=FakeClock()) as watch:
        for target in TARGETS:
            watch.upsert_session(target)
            for index in range(THREADS):
                assert watch.watch(watcher_of(index), target)
        workers = run_threads(watch)
        check_cursors(watch, workers, check_signals(watch, workers))
        assert_audit_clean(watch)
