"""Group commit: threads that record at the same time share one write transaction (ADR-0016).

A thread that finds no transaction running leads: it takes every write queued so far, runs them in
order inside one transaction and commits once. Threads that arrive meanwhile queue; when the leader
is done it hands the lead to the first of them, which takes the whole queue in turn. Nobody's call
returns before the transaction holding its write has committed, so a returned record is durable and
visible to the caller's next read (read-your-writes), exactly as with a transaction of its own.

If any write of a shared transaction fails, the transaction rolls back and each of its writes runs
again alone (`together.run_together`), so a failure reaches only the caller whose write failed. A
transaction that could not begin (the write lock held elsewhere) answers every write in it with that
error at once (ADR-0061): a caller waits for at most the transaction running when it queued and its
own, each about one lock wait, however many callers share them.

A leader lets the writers of its last batch queue again before the next one (`_gather`), and runs
a few batches in a row while writers keep coming (`BATCHES_LED`), so one commit serves them all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from sessionwatch.adapters.app.together import Outcome, run_together
from sessionwatch.adapters.stores.port import SignalStore, WriteTransaction

T = TypeVar("T")


class _Write(Generic[T]):
    """One caller's write: its work, then its outcome, and whether it now leads."""

    def __init__(self, work: Callable[[WriteTransaction], T]) -> None:
        self.work = work
        self.ready: threading.Lock | None = None  # held while it waits: only a writer that waits has one
        self.leads = False
        self.value: T | None = None
        self.error: BaseException | None = None

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value] # set by the transaction that ran it


def _wake(write: _Write[object]) -> None:
    if write.ready is not None:  # every writer but the one that led waits on its own lock
        write.ready.release()


class GroupCommit:
    """Runs writes on `store`, sharing one transaction among the writes that queue up together."""

    BATCHES_LED = 4
    """The most batches one leader runs before it hands the lead to a queued writer."""
    YIELDS = 16
    """The most times a leader yields the GIL to let writers queue before a batch (`_gather`)."""

    def __init__(self, store: SignalStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._queue: list[_Write[object]] = []
        self._leading = False
        self._last = 1  # how many writes the last transaction carried

    def run(self, work: Callable[[WriteTransaction], T]) -> T:
        """Run `work` in a write transaction (perhaps shared) and return its result once committed."""
        mine = _Write(work)
        with self._lock:
            self._queue.append(mine)  # type: ignore[arg-type] # outcomes are read back by their owner
            if not self._leading:
                self._leading = mine.leads = True
            else:
                mine.ready = threading.Lock()
                mine.ready.acquire()  # released by whoever wakes this writer: the cheapest wait there is
        if mine.ready is not None:
            mine.ready.acquire()
            if not mine.leads:  # a leader ran it
                return mine.outcome()
        self._lead()
        return mine.outcome()

    def _lead(self) -> None:
        """Run what is queued, batch after batch while writers keep queuing, then pass the lead on.

        Leading a few batches in a row spares a wake-up per batch; the bound keeps the leader's own
        call from waiting long (it returns after at most `BATCHES_LED` commits). A batch that failed
        (perhaps after a full lock wait) ends the lead at once: the leader's call never waits for a
        second batch behind a held lock (ADR-0061).
        """
        for led in range(1, self.BATCHES_LED + 1):
            self._gather()
            with self._lock:
                batch, self._queue = self._queue, []
                self._last = len(batch)
            try:
                self._execute(batch)
            except BaseException:
                self._pass_lead()
                raise
            failed = any(write.error is not None for write in batch)
            with self._lock:
                if not self._queue or led == self.BATCHES_LED or failed:
                    self._pass_lead_locked()
                    return

    def _gather(self) -> None:
        """Let the writers of the last batch queue again before the next one starts (ADR-0016).

        They were just woken and need the GIL to come back; yielding it to them, a bounded number
        of times, makes the next batch as large as the last and its commit serve them all. A lone
        writer (the last batch had one write) never waits.
        """
        for _ in range(self.YIELDS):
            if len(self._queue) >= self._last:
                return
            time.sleep(0)

    def _pass_lead(self) -> None:
        with self._lock:
            self._pass_lead_locked()

    def _pass_lead_locked(self) -> None:
        """The first queued writer leads next (it takes what queued meanwhile); else nobody leads."""
        if self._queue:
            self._queue[0].leads = True
            _wake(self._queue[0])
        else:
            self._leading = False

    def _execute(self, batch: list[_Write[object]]) -> None:
        def settle(index: int, outcome: Outcome) -> None:
            committed, value = outcome
            if committed:
                batch[index].value = value
            else:
                batch[index].error = value

        try:
            run_together(self._store, [write.work for write in batch], settle)
        except BaseException as exc:  # an interrupt: nobody's unsettled write is known to have committed
            for write in batch:
                if write.value is None and write.error is None:
                    write.error = exc
            raise
        finally:
            for write in batch:
                if not write.leads:
                    _wake(write)
