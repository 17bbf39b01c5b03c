"""The event-loop scheduler: a use case's `Work` for coroutines, run on the store's writer thread.

Writes go to the writer thread, which commits together what many coroutines submitted; a caller's
coroutine resumes only once its own write is durable. What follows the commit runs on the loop:
the result, the wakes (an async waker as a task on the loop, a sync one on a thread of its own,
never awaited by the write that opened the notice), and a prune when one is due. A record is
answered once the prune it made due has run, as the sync façade answers it: the caller's next call
finds the store that prune left. Reads run on a small pool of threads: no store call ever runs on
the loop's thread.

A write submitted is not taken back: cancelling the coroutine that awaits it leaves the write to
commit or fail as a whole, and its wakes are still published. A write not yet submitted (a
coroutine cancelled before it ran) is never written.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, ParamSpec, TypeVar

from sessionwatch.adapters.app import maintenance
from sessionwatch.adapters.app.clock import SystemClock
from sessionwatch.adapters.app.coalescing import Timer, checked
from sessionwatch.adapters.app.core import (
    CLOSED,
    Core,
    Done,
    Wake,
    Work,
    failed,
    logger,
    observed,
    publish,
    wake_done,
)
from sessionwatch.adapters.app.together import Outcome
from sessionwatch.adapters.app.writer import Settled, WriterThread, call_each
from sessionwatch.adapters.stores.port import StoreError, SweepCounts

P = ParamSpec("P")
R = TypeVar("R")

READER_THREADS: Final = 4
"""Threads answering reads for one store (SQLite reads run in parallel on WAL readers)."""


def is_async_waker(waker: object) -> bool:
    """Whether the waker's `wake` is a coroutine function (`async def wake(...)`)."""
    return inspect.iscoroutinefunction(getattr(waker, "wake", None))


class LoopScheduler:
    """Runs the core's work for one event loop: writes on the writer thread, reads on reader threads."""

    def __init__(self, core: Core, loop: asyncio.AbstractEventLoop) -> None:
        self._core = core
        self._loop = loop
        self.writer = WriterThread(core.opened_store, deliver=self._deliver)
        self._readers = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="sessionwatch-reader")
        self._wakes = ThreadPoolExecutor(1, thread_name_prefix="sessionwatch-waker")  # sync wakers, in order
        self._async_waker = is_async_waker(core.waker)
        self._tasks: set[asyncio.Future[Any]] = set()  # wakes and prunes in flight
        self._pruning: asyncio.Future[None] | None = None  # the prune check (or prune) after a record
        self._recorded = False  # a write of the batch being finished recorded signals
        self._held: list[Callable[[], None]] = []  # its answers, given once its prune check is done
        self._committed = 0.0  # when the batch being finished committed (with telemetry on)
        self.closed = False
        if core.coalescer is not None:  # trailing wakes: checked on the writer thread, sent from the loop
            timers = self._start_timer if isinstance(core.clock, SystemClock) else None
            core.coalescer.hand_off(self._hand_off_trailing, start_timer=timers)

    # ------------------------------------------------------------------------------- writes

    def run(self, work: Work[Any, R]) -> asyncio.Future[R]:
        """Run `work` on the writer thread; await its result once it committed (its wakes published after)."""
        return self._submit(work, await_wakes=False)

    def run_woken(self, work: Work[Any, R]) -> asyncio.Future[tuple[R, list[str]]]:
        """`run`, and the watchers its wakes reached (awaited before the answer)."""
        return self._submit(work, await_wakes=True)

    async def settle(self, step: Work[Any, R] | R) -> R:
        """Run a use case's answer when it is work; an answer it gave without writing, as it is."""
        return await self.run(step) if isinstance(step, Work) else step

    def _submit(self, work: Work[Any, Any], *, await_wakes: bool) -> asyncio.Future[Any]:
        if self._core.telemetry.on:  # the one check telemetry costs when off
            return self._submit_observed(work, await_wakes)
        self._check_open()
        answer: asyncio.Future[Any] = self._loop.create_future()
        # submitted now: a later cancellation cannot take it back; finished on the loop
        self.writer.submit(work.run, functools.partial(self._finish, work, answer, await_wakes))
        return answer

    def _submit_observed(self, work: Work[Any, Any], await_wakes: bool) -> asyncio.Future[Any]:
        """`_submit` in the work's span, its facts counted after the commit (`observed`)."""
        telemetry = self._core.telemetry
        counted, span = observed(telemetry, work)
        try:
            self._check_open()
        except StoreError as exc:
            failed(telemetry, span, exc)
            raise
        answer: asyncio.Future[Any] = self._loop.create_future()

        def finish(outcome: Outcome) -> None:
            ok, value = outcome
            if not ok:
                failed(telemetry, span, value)
            self._finish(counted, answer, await_wakes, outcome)

        self.writer.submit(counted.run, finish)
        return answer

    def _deliver(self, settled: Settled) -> None:
        """On the writer thread: one hop to the loop for a whole committed batch."""
        self._loop.call_soon_threadsafe(self._finish_batch, settled)

    def _finish_batch(self, settled: Settled) -> None:
        """On the loop: each write's outcome, then one prune check for the batch if it recorded."""
        if self._core.telemetry.on:
            self._committed = time.perf_counter()  # the wake delay counts from here
        call_each(settled)
        if self._core.sweep_owed and not self.closed and any(ok for _, (ok, _) in settled):
            owed = maintenance.owed_sweep(self._core)
            if owed is not None:
                self._track(self._sweep_owed(owed))
        if self._recorded:
            self._recorded = False
            held, self._held = self._held, []
            self._prune_after_record(held)

    def _finish(
        self,
        work: Work[Any, Any],
        answer: asyncio.Future[Any],
        await_wakes: bool,
        outcome: Outcome,
    ) -> None:
        """On the loop, after the commit: the result, the wakes, a due prune (even if nobody waits now).

        `answer` gets the work's value, or with `await_wakes` the value and the watchers woken. A
        write that recorded is answered after the batch's prune check (`_prune_after_record`).
        """
        ok, value = outcome
        if not ok:
            if not answer.done():
                answer.set_exception(value)
            return
        try:
            result: Done[Any] = work.finish(value)
        except Exception as exc:  # noqa: BLE001 - the caller's own error, as the sync scheduler gives it
            if not answer.done():
                answer.set_exception(exc)
            return
        owed = self._core.coalesced(result.wakes) if result.wakes else ()
        if await_wakes:
            woken: asyncio.Future[list[str]] | None = self._track(self._publish(owed))
        else:
            self.publish_in_background(owed)
            woken = None
        give = functools.partial(_answer_after, answer, result.value, woken)
        if result.recorded:
            self._recorded = True  # the batch's prune check follows its last outcome
            self._held.append(give)
        else:
            give()

    def _prune_after_record(self, held: list[Callable[[], None]]) -> None:
        """Answer the batch's records once the prune they made due has run (or none was due).

        The timer is read on the loop (no store call); whether another process pruned meanwhile is
        read off it. One prune check at a time: a batch committed while one runs is answered after
        it. A write `aclose` finished starts none: the next open prunes if due.
        """
        if self._pruning is None and (self.closed or not maintenance.prune_timer_due(self._core)):
            call_all(held)
            return
        if self._pruning is None:
            self._pruning = self._track(self._prune_if_due())
        self._pruning.add_done_callback(lambda _: call_all(held))

    async def _sweep_owed(self, owed: Work[SweepCounts, SweepCounts]) -> None:
        """The start-up sweep `open()` deferred, now that a write of this process committed."""
        try:
            await self.run_woken(owed)
        except Exception as exc:  # noqa: BLE001 - the write is committed; the next one tries again
            maintenance.sweep_failed(self._core, exc)

    async def _prune_if_due(self) -> None:
        try:
            due = await self.read(maintenance.prune_if_due, self._core)  # the throttle may read the store
            if due is not None:
                await self.run(due)
        except Exception as exc:  # noqa: BLE001 - the record is committed; pruning retries next time
            logger.warning("sessionwatch: prune failed (error=%s)", type(exc).__name__)
        finally:
            self._pruning = None

    # ------------------------------------------------------------------------------- wakes

    def publish_in_background(self, wakes: Iterable[Wake]) -> None:
        """Publish wakes without waiting for them (on the loop's thread)."""
        if not wakes:  # nearly every record opens no notice
            return
        wakes = list(wakes)
        if wakes and self._core.waker is not None:
            self._track(self._publish(wakes))

    def _publish(self, wakes: Iterable[Wake]) -> asyncio.Future[list[str]]:
        waker, wakes = self._core.waker, list(wakes)
        if waker is None or not wakes:
            done: asyncio.Future[list[str]] = self._loop.create_future()
            done.set_result([])
            return done
        telemetry, committed = self._core.telemetry, self._committed
        if self._async_waker:
            return self._loop.create_task(self._publish_async(wakes, committed))
        return asyncio.wrap_future(
            self._wakes.submit(publish, waker, wakes, telemetry, committed), loop=self._loop
        )

    async def _publish_async(self, wakes: list[Wake], committed: float) -> list[str]:
        woken: list[str] = []
        wake: Callable[[str, str], Coroutine[Any, Any, None]] = self._core.waker.wake  # type: ignore[union-attr,assignment]
        telemetry = self._core.telemetry
        for watcher, reason in dict.fromkeys(wakes):
            asked = time.perf_counter()
            error: Exception | None = None
            try:
                await wake(watcher, reason)
            except Exception as exc:  # noqa: BLE001 - a failing waker never undoes a committed record
                error = exc
            wake_done(woken, watcher, reason, error, telemetry=telemetry, delay_s=asked - committed)
        return woken

    def _hand_off_trailing(self, claims: list[Wake]) -> None:
        """From any thread: the coalescer's due claims, checked on the writer thread, sent from the loop.

        On the loop (a write polling before it is submitted, a timer) the check is queued at once,
        ahead of that write, so it sees the store as the call found it.
        """
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:  # no loop runs on this thread
            on_loop = False
        if on_loop:
            self._deliver_trailing(claims)
        else:
            self._loop.call_soon_threadsafe(self._deliver_trailing, claims)

    def _deliver_trailing(self, claims: list[Wake]) -> None:
        """On the loop: queue the check on the writer thread; `idle` waits for it and its wakes."""
        coalescer = self._core.coalescer
        if self.closed or coalescer is None:
            return
        checked_all: asyncio.Future[None] = self._loop.create_future()

        def finish(outcome: Outcome) -> None:
            ok, pending = outcome
            if self._core.telemetry.on:
                self._committed = time.perf_counter()  # a trailing wake's delay counts from its check
            self.publish_in_background(coalescer.settle(claims, pending if ok else [True] * len(claims)))
            if not checked_all.done():
                checked_all.set_result(None)

        self._track(checked_all)
        try:
            self.writer.submit(functools.partial(checked, claims), finish)
        except StoreError:  # the writer is closing: the store's windows go with it
            checked_all.set_result(None)

    def _start_timer(self, delay_s: float, fire: Callable[[], None]) -> Timer:
        """From any thread: `fire` on the loop after `delay_s` (`loop.call_later`), cancelled by `aclose`."""
        return LoopTimer(self._loop, delay_s, fire)

    async def idle(self) -> None:
        """Wait until no wake or prune started by an earlier write is still running."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _track(self, future: Coroutine[Any, Any, R] | asyncio.Future[R]) -> asyncio.Future[R]:
        """Keep a background task alive until it is done (the loop keeps only weak references)."""
        task = asyncio.ensure_future(future, loop=self._loop)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ------------------------------------------------------------------------------- reads

    async def read(self, query: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Answer a read on a reader thread."""
        self._check_open()
        return await self._loop.run_in_executor(self._readers, functools.partial(query, *args, **kwargs))

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(CLOSED)
        if self._core.coalescer is not None:
            self._core.coalescer.poll()  # due trailing wakes first, as every call into the core

    # ---------------------------------------------------------------------------- shutdown

    async def aclose(self) -> None:
        """Finish the wakes and prunes in flight, then the queued writes and their wakes; close the store."""
        if self.closed:
            return
        if self._core.coalescer is not None:
            self._core.coalescer.close()  # its timer cancelled: no trailing wake after this
        await self.idle()
        self.closed = True
        await self._loop.run_in_executor(self._readers, self.writer.close)
        await self.idle()  # the wakes of the writes it just finished
        await self._loop.run_in_executor(self._readers, self._core.close)
        await asyncio.to_thread(self._readers.shutdown)  # joins them, off the loop
        await asyncio.to_thread(self._wakes.shutdown)


class LoopTimer:
    """A `loop.call_later` that may be started and cancelled from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delay_s: float, fire: Callable[[], None]) -> None:
        self._loop = loop
        self._fire = fire
        self._handle: asyncio.TimerHandle | None = None
        self._cancelled = False
        loop.call_soon_threadsafe(self._start, loop, delay_s)

    def _start(self, loop: asyncio.AbstractEventLoop, delay_s: float) -> None:
        if not self._cancelled:
            self._handle = loop.call_later(delay_s, self._fired)

    def _fired(self) -> None:
        if not self._cancelled:
            self._fire()

    def cancel(self) -> None:
        """Keep it from firing (from any thread: the flag is read on the loop before it fires)."""
        self._cancelled = True
        try:
            self._loop.call_soon_threadsafe(self._drop)
        except RuntimeError:  # the loop is closed: nothing of it fires any more
            return

    def _drop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()  # on the loop, where a timer handle may be cancelled


def _answer(answer: asyncio.Future[Any], value: object) -> None:
    """Answer the awaiting coroutine, unless it was cancelled meanwhile."""
    if not answer.done():
        answer.set_result(value)


def _answer_after(
    answer: asyncio.Future[Any], value: object, woken: asyncio.Future[list[str]] | None
) -> None:
    """Answer with `value`, or once `woken` is done with `value` and the watchers its wakes reached."""
    if woken is None:
        _answer(answer, value)
    else:
        woken.add_done_callback(lambda wakes: _answer(answer, (value, wakes.result())))


def call_all(answers: list[Callable[[], None]]) -> None:
    """Give each held answer, in order."""
    for give in answers:
        give()
