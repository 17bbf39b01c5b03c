"""The upstream monitor as an asyncio task: one pass every interval, stopped by `await handle.stop()`.

Each pass runs off the loop (its reads, its sync providers and its file reads on a thread); async
providers run on the loop. Closing the gate first means nothing is published once `stop()` began.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self

from sessionwatch.adapters.app.reports import TickReport
from sessionwatch.adapters.upstream.monitor import PublishGate, log_failure


class AsyncMonitorHandle:
    """A running upstream monitor task (`AsyncSessionWatch.start_upstream_monitor`)."""

    def __init__(
        self, tick: Callable[[PublishGate], Awaitable[TickReport]], *, interval: float, initial_delay: float
    ) -> None:
        self._tick = tick
        self._interval = interval
        self._initial_delay = initial_delay
        self._gate = PublishGate()
        self._task: asyncio.Task[None] | None = None
        self._ticks = 0
        self._last: TickReport | None = None
        self._passing = False  # a pass is in flight (`stop()` waits for it; a sleep it cancels)

    def start(self) -> Self:
        """Tick on the running loop: the first pass after `initial_delay`, then one every `interval`."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sessionwatch-upstream")
        return self

    async def _run(self) -> None:
        delay = self._initial_delay
        while not self._gate.closed:
            await asyncio.sleep(delay)
            if self._gate.closed:
                return
            self._passing = True
            try:
                report = await self._tick(self._gate)
            except Exception as exc:  # noqa: BLE001 - one failed pass never ends the monitor
                log_failure("pass", "*", exc)
            else:
                self._ticks += 1
                self._last = report
            finally:
                self._passing = False
            delay = self._interval

    async def stop(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109 - the sync handle's signature
        """Stop ticking; nothing is published after this returns.

        Waits for a pass in flight up to `timeout` (default: one interval); a provider still
        answering after that is abandoned and its answers discarded. True when the task has ended.
        """
        await asyncio.get_running_loop().run_in_executor(None, self._gate.close)  # waits for a publication
        task = self._task
        if task is None or task.done():
            return True
        if not self._passing:
            task.cancel()  # between passes: nothing to wait for
        await asyncio.wait({task}, timeout=self._interval if timeout is None else timeout)
        return task.done()  # else abandoned: the pass ends when its provider answers, publishing nothing

    @property
    def running(self) -> bool:
        """Whether the monitor task is alive."""
        return self._task is not None and not self._task.done()

    @property
    def ticks(self) -> int:
        """How many passes completed."""
        return self._ticks

    @property
    def last_report(self) -> TickReport | None:
        """The report of the last completed pass."""
        return self._last

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
