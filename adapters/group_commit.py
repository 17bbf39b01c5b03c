"""Group commit: threads that record at the same time share one write transaction (ADR-0016).

A thread that finds no transaction running leads: it takes every write queued so far, runs them in
order inside one transaction and commits once. Threads that arrive meanwhile queue; when the leader
is done it hands the lead to the first of them, which takes the whole queue in turn. Nobody's call
returns before the transaction holding its write has committed, so a returned record is durable and
visible to the caller's next read (read-your-writes), exactly as with a transaction of its own.

If any write of a shared transaction fails, the transaction rolls back and each of its writes runs
again alone, so a failure reaches only the caller whose write failed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from sessionwatch.adapters.store import SignalStore, WriteTransaction

T = TypeVar("T")


class _Write(Generic[T]):
    """One caller's write: its work, then its outcome, and whether it now leads."""

    def __init__(self, work: Callable[[WriteTransaction], T]) -> None:
        self.work = work
        self.ready: threading.Event | None = None  # only a writer that waits needs one
        self.leads = False
        self.value: T | None = None
        self.error: BaseException | None = None

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value] # set by the transaction that ran it


def _wake(write: _Write[object]) -> None:
    if write.ready is not None:  # every writer but the one that led waits on its own event
        write.ready.set()


class GroupCommit:
    """Runs writes on `store`, sharing one transaction among the writes that queue up together."""

    def __init__(self, store: SignalStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._queue: list[_Write[object]] = []
        self._leading = False
        self._shared = False  # whether the last transaction carried more than one write

    def run(self, work: Callable[[WriteTransaction], T]) -> T:
        """Run `work` in a write transaction (perhaps shared) and return its result once committed."""
        mine = _Write(work)
        with self._lock:
            self._queue.append(mine)  # type: ignore[arg-type] # outcomes are read back by their owner
            if not self._leading:
                self._leading = mine.leads = True
            else:
                mine.ready = threading.Event()
        if mine.ready is not None:
            mine.ready.wait()
            if not mine.leads:  # a leader ran it
                return mine.outcome()
        elif self._shared:  # writers were sharing a moment ago: let them queue before we start
            time.sleep(0)
        with self._lock:
            batch, self._queue = self._queue, []
            self._shared = len(batch) > 1
        try:
            self._execute(batch)
        finally:
            with self._lock:
                if self._queue:  # the next leader takes what queued meanwhile
                    self._queue[0].leads = True
                    _wake(self._queue[0])
                else:
                    self._leading = False
        return mine.outcome()

    def _execute(self, batch: list[_Write[object]]) -> None:
        try:
            try:
                with self._store.write() as tx:
                    values = [write.work(tx) for write in batch]
            except Exception as exc:  # noqa: BLE001 - whose write failed is found by running each alone
                if len(batch) == 1:
                    batch[0].error = exc
                    return
                self._one_by_one(batch)
                return
            for write, value in zip(batch, values, strict=True):
                write.value = value
        except BaseException as exc:  # an interrupt: nobody's write is known to have committed
            for write in batch:
                if write.value is None and write.error is None:
                    write.error = exc
            raise
        finally:
            for write in batch:
                if not write.leads:
                    _wake(write)

    def _one_by_one(self, batch: list[_Write[object]]) -> None:
        """After a shared transaction failed: each write in its own, so each caller gets its own outcome."""
        for write in batch:
            try:
                with self._store.write() as tx:
                    write.value = write.work(tx)
            except Exception as exc:  # noqa: BLE001 - handed to the caller whose write it was
                write.error = exc
