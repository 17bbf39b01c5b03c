"""Writes that share a transaction: runs of one kind in one call, and one delivery per batch.

`together.run_all` runs consecutive writes that name the same `together` function in one call
(single records become one batch), and every other write alone, in order. The writer thread hands a
whole batch's outcomes to its `deliver` hook at once (the event-loop scheduler's one hop to the
loop), each write with its own outcome. A fake store stands for the real ones, as in
test_group_commit.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

import pytest

from sessionwatch.adapters.app.together import Outcome, run_all
from sessionwatch.adapters.app.writer import Done, Settled, WriterThread
from sessionwatch.adapters.stores.port import SignalStore, WriteTransaction

WAIT_S = 10


@dataclass(frozen=True)
class Joins:
    """A write that runs with consecutive others of its kind: `together` logs them as one call."""

    name: str

    def __call__(self, tx: WriteTransaction) -> str:
        cast("list[str]", tx).append(self.name)
        return f"{self.name} alone"

    @staticmethod
    def together(tx: WriteTransaction, writes: Sequence[Joins]) -> list[str]:
        cast("list[str]", tx).append("+".join(write.name for write in writes))
        return [f"{write.name} together" for write in writes]


def alone(name: str) -> Callable[[WriteTransaction], str]:
    def work(tx: WriteTransaction) -> str:
        cast("list[str]", tx).append(name)
        return f"{name} alone"

    return work


def test_consecutive_writes_of_one_kind_run_in_one_call_and_the_rest_alone_in_order() -> None:
    tx: list[str] = []
    works: list[Callable[[WriteTransaction], str]] = [
        Joins("a"),
        Joins("b"),
        alone("c"),
        Joins("d"),
        Joins("e"),
        Joins("f"),
        alone("g"),
        Joins("h"),
    ]
    values = run_all(cast("WriteTransaction", tx), works)
    assert tx == ["a+b", "c", "d+e+f", "g", "h"]  # a lone one of the kind runs as itself
    assert values == [
        "a together",
        "b together",
        "c alone",
        "d together",
        "e together",
        "f together",
        "g alone",
        "h alone",
    ]


class GatedStore:
    """Transactions are lists; the first one waits at `gate`, so the writes behind it queue up."""

    def __init__(self) -> None:
        self.committed: list[list[str]] = []
        self.gate = threading.Event()
        self.entered = threading.Event()

    @contextmanager
    def write(self) -> Iterator[list[str]]:
        tx: list[str] = []
        yield tx
        if not self.committed:
            self.entered.set()
            assert self.gate.wait(WAIT_S), "the test never opened the gate"
        self.committed.append(tx)


def test_the_writer_delivers_each_batch_once_each_write_with_its_own_outcome() -> None:
    store = GatedStore()
    deliveries: list[list[Outcome]] = []
    delivered = threading.Semaphore(0)

    def deliver(settled: Settled) -> None:
        deliveries.append([outcome for _, outcome in settled])
        for done, outcome in settled:
            done(outcome)
        delivered.release()

    seen: dict[str, Outcome] = {}

    def done_for(name: str) -> Done:
        return lambda outcome: seen.__setitem__(name, outcome)

    def failing(tx: WriteTransaction) -> str:
        del tx
        raise ValueError("refused")

    writer = WriterThread(cast("SignalStore", store), deliver=deliver)
    try:
        writer.submit(alone("first"), done_for("first"))
        assert store.entered.wait(WAIT_S)  # the first transaction holds the writer ...
        for name in ("b", "c"):
            writer.submit(Joins(name), done_for(name))
        writer.submit(failing, done_for("bad"))
        writer.submit(alone("d"), done_for("d"))
        store.gate.set()  # ... so these four queued behind it and share the next batch
        assert delivered.acquire(timeout=WAIT_S)
        assert delivered.acquire(timeout=WAIT_S)
    finally:
        assert writer.close(WAIT_S)
    assert [len(batch) for batch in deliveries] == [1, 4]
    assert seen["first"] == (True, "first alone")
    assert (seen["b"], seen["c"], seen["d"]) == ((True, "b alone"), (True, "c alone"), (True, "d alone"))
    ok, error = seen["bad"]
    assert not ok
    assert isinstance(error, ValueError)
    # the shared transaction failed on `bad`: it rolled back and each write ran again alone
    assert store.committed == [["first"], ["b"], ["c"], ["d"]]


def test_a_failing_delivery_is_logged_and_the_writer_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    store = GatedStore()
    store.gate.set()
    first = threading.Event()
    after = threading.Event()

    def deliver(settled: Settled) -> None:
        if not first.is_set():
            first.set()
            raise RuntimeError("host callback broke")
        for done, outcome in settled:
            done(outcome)

    writer = WriterThread(cast("SignalStore", store), deliver=deliver)
    try:
        writer.submit(alone("a"), lambda _: None)
        assert first.wait(WAIT_S)
        writer.submit(alone("b"), lambda _: after.set())
        assert after.wait(WAIT_S)  # the writer outlived the failed delivery
    finally:
        assert writer.close(WAIT_S)
    assert "a batch's completions failed (error=RuntimeError)" in caplog.text
    assert store.committed == [["a"], ["b"]]
