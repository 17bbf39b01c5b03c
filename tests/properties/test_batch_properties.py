"""`record_many` is recording each input in turn, inside one transaction (ADR-0017).

A batch's consecutive notifying signals on one target by one actor share one §6.1 statement, and
its rows are written together. Nothing of that may be observable: the signals returned, every
cursor, the pending notices and the wakes must equal those of the same inputs recorded one by one,
on every store, whatever the actors, producer watchers, dedupe keys and kinds.

Single records that share a transaction (group commit, the writer thread) run as one such batch
(`recording.RecordOne`): each caller must still get exactly its own signal and its own wakes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import pytest
from auditing import assert_audit_clean
from hypothesis import given, settings
from hypothesis import strategies as st
from stores import STORES, fresh_store_url

import sessionwatch
from sessionwatch import Actor, SessionWatch, Signal, SignalInput, SignalKind
from sessionwatch.adapters.app import recording
from sessionwatch.adapters.app.core import Core, publish
from sessionwatch.adapters.app.together import Outcome, run_together
from sessionwatch.testing import FakeClock, RecordingWaker, weighted

_TMPFS = Path("/dev/shm")  # noqa: S108 - only a parent: TemporaryDirectory makes a private 0700 dir in it
SCRATCH = _TMPFS if _TMPFS.is_dir() else None

TARGETS = ("agent:main:t1", "agent:main:t2")
WATCHERS = ("agent:main:w1", "agent:main:w2", "agent:ops:w3")
REGISTERED = (
    ("agent:main:w1", "agent:main:t1"),
    ("agent:main:w2", "agent:main:t1"),
    ("agent:ops:w3", "agent:main:t2"),
)
PRODUCER_WATCHERS = ((), ("agent:main:w2",), ("agent:main:w4",))
"""None (most signals), one that already holds a cursor on t1, and one that holds none anywhere."""
ACTORS = (
    Actor.human(),
    Actor.human("h-1"),
    Actor.agent("agent:main:w1"),
    Actor.agent("agent:main:w2"),
    Actor.system(),
)
KINDS = (
    SignalKind.HUMAN_DIRECT_MESSAGE,
    SignalKind.GOAL_CHANGED,
    SignalKind.UPSTREAM_MISSING,
    SignalKind.COMPACTED,
    SignalKind.ADOPTED,
)
"""Notifying kinds and, in between, signals that only seed cursors (SPEC §5.1, §6.1)."""


@dataclass(frozen=True)
class Batch:
    items: tuple[SignalInput, ...]


@dataclass(frozen=True)
class Drain:
    watcher: str


Step: TypeAlias = Batch | Drain

_INPUTS = st.builds(
    SignalInput,
    session_key=st.sampled_from(TARGETS),
    kind=st.sampled_from(KINDS),
    actor=st.sampled_from(ACTORS),
    summary=st.just("state changed"),
    # mostly none, so that runs form; sometimes one, which must cut the run it is in
    watchers=weighted((6, st.just(())), (1, st.sampled_from(PRODUCER_WATCHERS[1:]))),
    dedupe_key=weighted((6, st.none()), (1, st.sampled_from(("dup-1", "dup-2")))),
)
# Runs on one target are what the batching changes: most batches repeat an input a few times.
_BATCH_ITEMS = st.lists(st.tuples(_INPUTS, st.integers(1, 4)), min_size=1, max_size=5).map(
    lambda runs: tuple(item for item, times in runs for _ in range(times))
)
_STEPS: st.SearchStrategy[Step] = st.one_of(
    st.builds(Batch, _BATCH_ITEMS),
    st.builds(Batch, _BATCH_ITEMS),
    st.builds(Drain, st.sampled_from(WATCHERS)),
)


@contextmanager
def _twin_watches(
    store_kind: str,
) -> Iterator[tuple[SessionWatch, RecordingWaker, SessionWatch, RecordingWaker]]:
    """Two fresh stores of one kind, each with its own clock (kept equal) and waker."""
    with ExitStack() as stack:
        pair = []
        for _ in range(2):
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(dir=SCRATCH)))
            url = stack.enter_context(fresh_store_url(store_kind, directory, reuse=True))
            waker = RecordingWaker()
            watch = stack.enter_context(sessionwatch.open(url, clock=FakeClock(), waker=waker))
            for target in TARGETS:
                watch.upsert_session(target)
            for watcher, target in REGISTERED:
                assert watch.watch(watcher, target)
            waker.take()
            pair.append((watch, waker))
        (batched, batched_wakes), (single, single_wakes) = pair
        yield batched, batched_wakes, single, single_wakes


def _one_by_one(watch: SessionWatch, items: tuple[SignalInput, ...]) -> list[Signal]:
    return [
        watch.record(
            item.session_key,
            kind=item.kind,
            actor=item.actor,
            summary=item.summary,
            watchers=item.watchers,
            dedupe_key=item.dedupe_key,
        )
        for item in items
    ]


def _observed(watch: SessionWatch) -> tuple[object, ...]:
    """Every cursor a watcher could hold, and every watcher's pending notices."""
    everyone = (*WATCHERS, "agent:main:w4")
    cursors = tuple(watch.cursor(watcher, target) for watcher in everyone for target in TARGETS)
    return cursors, tuple(tuple(watch.pending_notices(watcher)) for watcher in everyone)


@pytest.mark.parametrize("store_kind", STORES)
@settings(max_examples=60, deadline=None)
@given(steps=st.lists(_STEPS, min_size=1, max_size=6))
def test_record_many_equals_recording_each_input_in_turn(store_kind: str, steps: list[Step]) -> None:
    with _twin_watches(store_kind) as (batched, batched_wakes, single, single_wakes):
        for step in steps:
            match step:
                case Batch(items=items):
                    assert batched.record_many(items) == _one_by_one(single, items)
                case Drain(watcher=watcher):
                    assert batched.drain(watcher) == single.drain(watcher)
            assert batched_wakes.take() == single_wakes.take()
            assert _observed(batched) == _observed(single)
        assert_audit_clean(batched)


def _sharing_one_transaction(
    watch: SessionWatch, waker: RecordingWaker, items: tuple[SignalInput, ...]
) -> list[Signal]:
    """Each input as its own `record` write, all run together in one transaction, as callers would."""
    core = Core.build(watch.store, clock=watch.clock, waker=waker, retention=watch.retention)
    works = [recording.record(recording.draft(core, **item.__dict__)) for item in items]
    assert all(isinstance(work.run, recording.RecordOne) for work in works)
    outcomes: dict[int, Outcome] = {}
    run_together(core.store, [work.run for work in works], outcomes.__setitem__)
    signals = []
    for index, work in enumerate(works):
        committed, value = outcomes[index]
        assert committed, value
        done = work.finish(value)
        publish(waker, done.wakes)  # each caller publishes its own wakes, as the schedulers do
        signals.append(done.value)
    return signals


@pytest.mark.parametrize("store_kind", STORES)
@settings(max_examples=60, deadline=None)
@given(steps=st.lists(_STEPS, min_size=1, max_size=6))
def test_records_sharing_a_transaction_equal_recording_each_in_turn(
    store_kind: str, steps: list[Step]
) -> None:
    with _twin_watches(store_kind) as (shared, shared_wakes, single, single_wakes):
        for step in steps:
            match step:
                case Batch(items=items):
                    assert _sharing_one_transaction(shared, shared_wakes, items) == _one_by_one(single, items)
                case Drain(watcher=watcher):
                    assert shared.drain(watcher) == single.drain(watcher)
            assert shared_wakes.take() == single_wakes.take()
            assert _observed(shared) == _observed(single)
        assert_audit_clean(shared)
