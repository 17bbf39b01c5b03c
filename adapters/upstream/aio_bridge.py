"""An upstream pass for the async façade: on a thread of its own, its async ports answered by the loop.

The pass's thread waits for each write on the loop's writer, and for an async provider's or
transcript port's answer on the loop; a sync port answers on the pass's thread as it is. None of
them is ever called on the loop's thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, TypeVar

from sessionwatch.adapters.app import upstream
from sessionwatch.adapters.app.core import Core, Work
from sessionwatch.adapters.app.loop_scheduler import LoopScheduler
from sessionwatch.adapters.app.reports import TickReport
from sessionwatch.adapters.upstream.monitor import PublishGate
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.ports import AsyncTranscripts, AsyncUpstreamProvider, Transcripts, UpstreamProvider
from sessionwatch.domain.upstream import UpstreamActivity, UpstreamMissing, UpstreamProbe

R = TypeVar("R")


async def upstream_pass(
    core: Core,
    scheduler: LoopScheduler,
    loop: asyncio.AbstractEventLoop,
    providers: Mapping[str, UpstreamProvider | AsyncUpstreamProvider],
    *,
    transcripts: Transcripts | AsyncTranscripts | None,
    gate: PublishGate,
    only: SessionIdentity | None = None,
) -> TickReport:
    """One upstream pass on a daemon thread of its own; async providers and transcripts answer from the loop.

    Not a reader thread: a provider that never answers must not keep `aclose()` from joining them,
    nor a process from exiting.
    """
    bridge = LoopBridge(scheduler, loop)
    blocking = {catalog: BlockingProvider(p, loop) for catalog, p in providers.items()}
    reader = BlockingTranscripts(transcripts, loop) if transcripts is not None else None
    done: asyncio.Future[TickReport] = loop.create_future()

    def settle(outcome: tuple[bool, Any]) -> None:
        if not done.done():
            ok, value = outcome
            done.set_result(value) if ok else done.set_exception(value)

    def run_pass() -> None:
        try:
            report = upstream.tick(core, bridge, blocking, transcripts=reader, gate=gate, only=only)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            loop.call_soon_threadsafe(settle, (False, exc))
        else:
            loop.call_soon_threadsafe(settle, (True, report))

    threading.Thread(target=run_pass, name="sessionwatch-upstream-pass", daemon=True).start()
    return await done


class LoopBridge:
    """The loop scheduler as a pass on its thread sees it: each write awaited from there."""

    def __init__(self, scheduler: LoopScheduler, loop: asyncio.AbstractEventLoop) -> None:
        self._scheduler = scheduler
        self._loop = loop

    def run(self, work: Work[Any, R]) -> R:
        """Run `work` on the writer thread and wait for it (from a thread other than the loop's)."""

        async def on_the_loop() -> R:
            return await self._scheduler.run(work)

        return asyncio.run_coroutine_threadsafe(on_the_loop(), self._loop).result()


def answer(value: R | Awaitable[R], loop: asyncio.AbstractEventLoop) -> R:
    """A port's answer, from a thread other than the loop's: awaited on the loop when it is awaitable."""
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):

        async def wait() -> R:
            return await value  # type: ignore[no-any-return]

        return asyncio.run_coroutine_threadsafe(wait(), loop).result()
    return value  # type: ignore[return-value]


class BlockingProvider:
    """A sync or async `UpstreamProvider`, called from the pass's thread."""

    def __init__(
        self, provider: UpstreamProvider | AsyncUpstreamProvider, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._provider = provider
        self._loop = loop

    def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> Sequence[UpstreamActivity | UpstreamMissing]:
        """The provider's answers (an async provider's, awaited on the loop)."""
        return answer(self._provider.check_upstream_activity(probes), self._loop)


class BlockingTranscripts:
    """A sync or async `Transcripts` port, called from the pass's thread."""

    def __init__(self, transcripts: Transcripts | AsyncTranscripts, loop: asyncio.AbstractEventLoop) -> None:
        self._transcripts = transcripts
        self._loop = loop

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> Sequence[str]:
        """The session's own recent texts (an async port's, awaited on the loop)."""
        return answer(self._transcripts.recent_user_texts(session_key, agent_id, limit), self._loop)
