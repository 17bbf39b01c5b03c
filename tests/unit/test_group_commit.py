"""Group commit (ADR-0016): writers that queue together share one transaction, each gets its own outcome.

A fake store stands for the real ones: `write()` yields a list to append to, which "commits" (joins
the committed log) when the block exits without an error. A writer blocked inside the transaction
holds the lead until the others have queued, so the sharing is deterministic.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

import pytest

from sessionwatch.adapters.app.group_commit import GroupCommit
from sessionwatch.adapters.stores.port import SignalStore, StoreError, WriteTransaction

WAIT_S = 10


class FakeStore:
    """Transactions are lists; a committed one joins `committed`; `fail_commit` fails the next commit.

    `fail_begin` transactions from the next one on cannot begin (the write lock held elsewhere):
    `write()` raises `StoreError` before its block runs, once `begin_gate` (if any) is set.
    """

    def __init__(self) -> None:
        self.committed: list[list[str]] = []
        self.fail_commit = False
        self.fail_begin = 0
        self.begin_gate: threading.Event | None = None
        self.begun = 0
        self.refused_on: list[int] = []  # the thread of each transaction that could not begin
        self.committed_on: list[int] = []  # the thread that ran each transaction that began

    @contextmanager
    def write(self) -> Iterator[list[str]]:
        if self.fail_begin:
            if self.begin_gate is not None:
                assert self.begin_gate.wait(WAIT_S), "the gate never opened"
            self.fail_begin -= 1
            self.refused_on.append(threading.get_ident())
            raise StoreError("LockNotAvailable: canceling statement due to lock timeout")
        self.begun += 1
        tx: list[str] = []
        yield tx
        self.committed_on.append(threading.get_ident())
        if self.fail_commit:
            self.fail_commit = False
            raise OSError("disk full")
        self.committed.append(tx)


def group(store: FakeStore) -> GroupCommit:
    return GroupCommit(cast("SignalStore", store))


def writing(name: str, *, fail: bool = False) -> Callable[[WriteTransaction], str]:
    def work(tx: WriteTransaction) -> str:
        if fail:
            raise ValueError(f"{name} refused")
        cast("list[str]", tx).append(name)
        return f"{name} done"

    return work


def run_queued_behind_a_blocked_leader(
    writes: GroupCommit,
    others: dict[str, Callable[[WriteTransaction], str]],
    leader: Callable[[WriteTransaction], str] | None = None,
) -> dict[str, Any]:
    """The leader's write waits until every other writer has queued; returns each writer's outcome."""
    queued = threading.Event()
    outcomes: dict[str, Any] = {}
    leaders_own = leader or writing("leader")

    def leader_work(tx: WriteTransaction) -> str:
        assert queued.wait(WAIT_S), "the other writers never queued"
        return leaders_own(tx)

    def call(name: str, work: Callable[[WriteTransaction], str]) -> None:
        try:
            outcomes[name] = writes.run(work)
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcomes[name] = exc

    leading = threading.Thread(target=call, args=("leader", leader_work))
    leading.start()
    while not writes._leading:  # the leader holds the lead before anyone else arrives
        threading.Event().wait(0.001)
    threads = [threading.Thread(target=call, args=item) for item in others.items()]
    for thread in threads:
        thread.start()
    while len(writes._queue) < len(others):
        threading.Event().wait(0.001)
    queued.set()
    for thread in [leading, *threads]:
        thread.join(WAIT_S)
        assert not thread.is_alive(), "a writer never returned"
    return outcomes


def test_a_lone_writer_has_a_transaction_of_its_own() -> None:
    store = FakeStore()
    assert group(store).run(writing("a")) == "a done"
    assert store.committed == [["a"]]


def test_writers_that_queue_behind_a_transaction_share_the_next_one() -> None:
    store = FakeStore()
    writes = group(store)
    outcomes = run_queued_behind_a_blocked_leader(writes, {n: writing(n) for n in ("b", "c", "d")})
    assert outcomes == {"leader": "leader done", "b": "b done", "c": "c done", "d": "d done"}
    assert store.committed[0] == ["leader"]
    assert sorted(store.committed[1]) == ["b", "c", "d"]  # one shared transaction, in queue order
    assert len(store.committed) == 2
    assert not writes._leading  # the lead is free again


def test_a_failing_write_fails_alone_and_the_others_commit() -> None:
    store = FakeStore()
    writes = group(store)
    outcomes = run_queued_behind_a_blocked_leader(
        writes, {"b": writing("b"), "bad": writing("bad", fail=True), "d": writing("d")}
    )
    assert isinstance(outcomes["bad"], ValueError)
    assert str(outcomes["bad"]) == "bad refused"
    assert (outcomes["b"], outcomes["d"]) == ("b done", "d done")
    assert sorted(tx[0] for tx in store.committed[1:]) == ["b", "d"]  # each ran again alone
    assert all(len(tx) == 1 for tx in store.committed[1:])


def test_a_failed_commit_is_retried_one_by_one() -> None:
    store = FakeStore()
    writes = group(store)

    def fail_next_commit(tx: WriteTransaction) -> str:
        store.fail_commit = True  # the shared transaction fails at its commit, not in any write
        return writing("b")(tx)

    outcomes = run_queued_behind_a_blocked_leader(writes, {"b": fail_next_commit, "c": writing("c")})
    # The retry runs b's work again, which arms one more failed commit: only b sees it.
    assert isinstance(outcomes["b"], OSError)
    assert outcomes["c"] == "c done"
    assert store.committed[-1] == ["c"]


def test_a_shared_transaction_that_cannot_begin_fails_every_write_at_once_none_runs_alone() -> None:
    store = FakeStore()
    writes = group(store)

    def lock_the_next_transaction_out(tx: WriteTransaction) -> str:
        store.fail_begin = 1  # only the next begin fails: a write re-run alone would commit
        return writing("leader")(tx)

    outcomes = run_queued_behind_a_blocked_leader(
        writes, {n: writing(n) for n in ("b", "c", "d")}, leader=lock_the_next_transaction_out
    )
    assert outcomes["leader"] == "leader done"
    refused = [outcomes[name] for name in ("b", "c", "d")]
    assert [type(outcome) for outcome in refused] == [StoreError] * 3, refused
    assert len({id(outcome) for outcome in refused}) == 3, "each caller raises an exception of its own"
    assert store.committed == [["leader"]]
    assert store.begun == 1  # the leader's: after the shared one could not begin, none ran alone


def test_writes_re_run_alone_stop_at_the_first_that_cannot_begin() -> None:
    store = FakeStore()
    writes = group(store)

    def fail_and_lock_the_next_transaction_out(_tx: WriteTransaction) -> str:
        store.fail_begin = 1  # the first write re-run alone finds the lock held
        raise ValueError("b refused")

    outcomes = run_queued_behind_a_blocked_leader(
        writes, {"b": fail_and_lock_the_next_transaction_out, "c": writing("c"), "d": writing("d")}
    )
    refused = [outcomes[name] for name in ("b", "c", "d")]
    assert [type(outcome) for outcome in refused] == [StoreError] * 3, refused
    assert store.committed == [["leader"]]
    assert store.begun == 2  # the leader's and the shared one: nothing ran alone after the refusal


def test_a_batch_that_cannot_begin_fails_together_and_its_leader_hands_on_the_lead() -> None:
    store = FakeStore()
    writes = group(store)
    store.fail_begin = 1
    store.begin_gate = threading.Event()
    outcomes: dict[str, Any] = {}

    def call(name: str) -> None:
        try:
            outcomes[name] = writes.run(writing(name))
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcomes[name] = exc

    leader = threading.Thread(target=call, args=("a",))
    leader.start()
    while not (writes._leading and not writes._queue):  # the leader took its batch and waits
        threading.Event().wait(0.001)
    others = [threading.Thread(target=call, args=(name,)) for name in ("b", "c")]
    for thread in others:
        thread.start()
    while len(writes._queue) < len(others):
        threading.Event().wait(0.001)
    store.begin_gate.set()  # the leader's transaction fails to begin: the lock was held
    for thread in [leader, *others]:
        thread.join(WAIT_S)
        assert not thread.is_alive(), "a writer never returned"
    assert isinstance(outcomes["a"], StoreError)
    assert (outcomes["b"], outcomes["c"]) == ("b done", "c done")
    assert store.committed == [["b", "c"]]  # the queued writers' batch, led by one of them
    assert store.refused_on == [leader.ident]
    assert store.committed_on != [leader.ident]  # the failed batch ended the lead: its caller returned
    assert not writes._leading


def test_a_lone_failing_write_raises_to_its_caller() -> None:
    store = FakeStore()
    with pytest.raises(ValueError, match="a refused"):
        group(store).run(writing("a", fail=True))
    assert store.committed == []


def _thread_running(
    work: Callable[[WriteTransaction], str], idents: list[int]
) -> Callable[[WriteTransaction], str]:
    def recorded(tx: WriteTransaction) -> str:
        idents.append(threading.get_ident())
        return work(tx)

    return recorded


@pytest.mark.parametrize(("batches_led", "third_on_the_leader"), [(2, False), (4, True)])
def test_a_leader_runs_the_batches_that_keep_queuing_up_to_its_bound(
    batches_led: int, third_on_the_leader: bool
) -> None:
    store = FakeStore()
    writes = group(store)
    writes.BATCHES_LED = batches_led
    idents: list[int] = []
    late: list[threading.Thread] = []
    outcomes: dict[str, Any] = {}

    def queue_a_late_writer(tx: WriteTransaction) -> str:
        # runs inside the second batch: a third writer queues before that batch ends
        thread = threading.Thread(
            target=lambda: outcomes.update(e=writes.run(_thread_running(writing("e"), idents)))
        )
        thread.start()
        late.append(thread)
        while not writes._queue:
            threading.Event().wait(0.001)
        return writing("b")(tx)

    outcomes.update(
        run_queued_behind_a_blocked_leader(writes, {"b": _thread_running(queue_a_late_writer, idents)})
    )
    late[0].join(WAIT_S)
    assert outcomes == {"leader": "leader done", "b": "b done", "e": "e done"}
    assert store.committed == [["leader"], ["b"], ["e"]]
    second_batch_thread, third_batch_thread = idents  # the leader's thread ran the second batch
    assert (third_batch_thread == second_batch_thread) is third_on_the_leader
    assert not writes._leading


def test_a_lone_writer_never_yields(monkeypatch: pytest.MonkeyPatch) -> None:
    yields: list[float] = []
    monkeypatch.setattr("sessionwatch.adapters.app.group_commit.time.sleep", yields.append)
    store = FakeStore()
    writes = group(store)
    for name in ("a", "b", "c"):
        writes.run(writing(name))
    assert yields == []
    assert store.committed == [["a"], ["b"], ["c"]]


def test_a_leader_yields_until_as_many_writers_as_last_time_have_queued(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writes = group(FakeStore())
    yields: list[float] = []
    monkeypatch.setattr("sessionwatch.adapters.app.group_commit.time.sleep", yields.append)
    writes._last = 3
    writes._queue = [object(), object(), object()]  # type: ignore[list-item] # only counted
    writes._gather()
    assert yields == [], "the writers are back: no wait"
    writes._queue = [object()]  # type: ignore[list-item]
    writes._gather()
    assert yields == [0] * GroupCommit.YIELDS, "a bounded wait for writers that do not come"
