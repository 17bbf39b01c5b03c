"""The writer thread: every write of one store runs on one thread; writes queued together share a transaction.

A caller submits a write (a function of the write transaction) and a callback; the thread takes
everything queued, runs it in one transaction and commits once, then hands the whole batch's
callbacks, each with its own outcome, to `deliver` in one call (by default it calls them there, on
the writer thread; the event-loop scheduler moves them to its loop in one hop). If the shared
transaction fails, each of its writes runs again alone, so a failure reaches only the caller whose
write failed; one that could not begin (the write lock held elsewhere) fails them all at once
(ADR-0061), so no caller waits for the lock longer than the batch before its own and its own. A
write is never run after it was submitted and the writer closed: it gets
`StoreError("the store is closed")`.

The thread is a daemon: a host that never closes the store still exits. `close()` finishes what
was queued before it, then stops and joins the thread.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Final

from sessionwatch.adapters.app.together import Outcome, Write, run_together
from sessionwatch.adapters.stores.port import SignalStore, StoreError

logger = logging.getLogger("sessionwatch")

Done = Callable[[Outcome], None]

Settled = list[tuple[Done, Outcome]]
"""A batch's callbacks, each with its write's outcome, in the order the writes were submitted."""

BATCH_LIMIT: Final = 512
"""The most writes one transaction carries."""


class WriterThread:
    """Runs submitted writes on one daemon thread, batching what queued together (thread-safe)."""

    def __init__(
        self,
        store: SignalStore,
        *,
        deliver: Callable[[Settled], None] | None = None,
        name: str = "sessionwatch-writer",
    ) -> None:
        self._store = store
        self._deliver = deliver or call_each
        self._queue: deque[tuple[Write, Done]] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._closing = False
        self._idle = False  # the writer waits for work: a submission must wake it
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    @property
    def ident(self) -> int | None:
        """The writer thread's id (tests check that no store call runs elsewhere)."""
        return self._thread.ident

    def submit(self, work: Write, done: Done) -> None:
        """Queue `work`; `done(outcome)` is delivered once, when the write committed or failed."""
        with self._ready:
            if self._closing:
                raise StoreError("the store is closed")
            self._queue.append((work, done))
            if self._idle:  # a busy writer takes the queue when its batch is done
                self._ready.notify()

    def close(self, timeout: float | None = None) -> bool:
        """Finish the writes queued so far, then stop; True when the thread has ended."""
        with self._ready:
            self._closing = True
            self._ready.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _serve(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closing:
                    self._idle = True
                    self._ready.wait()
                    self._idle = False
                if not self._queue:  # closing, and nothing left
                    return
                batch = [self._queue.popleft() for _ in range(min(len(self._queue), BATCH_LIMIT))]
            self._execute(batch)

    def _execute(self, batch: list[tuple[Write, Done]]) -> None:
        outcomes: dict[int, Outcome] = {}

        def settle(index: int, outcome: Outcome) -> None:
            outcomes[index] = outcome

        try:
            run_together(self._store, [work for work, _ in batch], settle)
        except BaseException as exc:  # an interrupt: nobody's unsettled write is known to have committed
            for index in range(len(batch)):
                outcomes.setdefault(index, (False, exc))
            raise
        finally:
            settled = [(done, outcomes[index]) for index, (_, done) in enumerate(batch)]
            try:
                self._deliver(settled)
            except Exception as exc:  # noqa: BLE001 - the writes are settled; the writer goes on
                logger.warning("sessionwatch: a batch's completions failed (error=%s)", type(exc).__name__)


def call_each(settled: Settled) -> None:
    """Hand each write its outcome, in order; a failing callback is logged and stops nothing else."""
    for done, outcome in settled:
        try:
            done(outcome)
        except Exception as exc:  # noqa: BLE001 - one caller's callback must not stop the others
            logger.warning("sessionwatch: a write's completion failed (error=%s)", type(exc).__name__)
