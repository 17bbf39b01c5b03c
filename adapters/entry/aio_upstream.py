"""The upstream monitor of the asyncio façade: link adopted sessions, tick, run the monitor on the loop.

A room of `AsyncSessionWatch` (its base class): the same use cases as `SessionWatch`'s upstream
methods (`adapters/app/upstream.py`), a pass running its provider calls off the loop
(`adapters/upstream/aio_bridge.py`), a monitor as a loop task.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from sessionwatch.adapters.app import upstream
from sessionwatch.adapters.app.core import Core
from sessionwatch.adapters.app.loop_scheduler import LoopScheduler
from sessionwatch.adapters.app.reports import TickReport
from sessionwatch.adapters.app.upstream import Outcome
from sessionwatch.adapters.upstream.aio_monitor import AsyncMonitorHandle
from sessionwatch.domain.ports import AsyncTranscripts, AsyncUpstreamProvider, Transcripts, UpstreamProvider
from sessionwatch.domain.session import SessionState
from sessionwatch.domain.upstream import AdvanceOnly, RecordActivity, RecordMissing, UpstreamLinkState
from sessionwatch.projections.models import Signal, UpstreamLink

if True:  # ASYNC: what only the asyncio façade has; `else:` holds what only the sync one has
    import asyncio

    from sessionwatch.adapters.app.checks import query_identity
    from sessionwatch.adapters.app.core import CLOSED
    from sessionwatch.adapters.stores.port import StoreError
    from sessionwatch.adapters.upstream.aio_bridge import upstream_pass
    from sessionwatch.adapters.upstream.monitor import PublishGate
    from sessionwatch.domain.keys import SessionIdentity


class AsyncUpstream:
    """The upstream methods of `AsyncSessionWatch`, over the core, scheduler and loop it builds."""

    _core: Core
    _scheduler: LoopScheduler
    if True:  # ASYNC
        _loop: asyncio.AbstractEventLoop
        _monitors: list[AsyncMonitorHandle]

        def _open_core(self) -> Core:
            """The core, for what runs on the loop without a store call; `StoreError` once closed."""
            if self._scheduler.closed:
                raise StoreError(CLOSED)
            return self._core

    else:

        def _open_core(self) -> Core:
            """The core, for what runs without a store call (as before the façade was closed)."""
            return self._core

    async def link_upstream(
        self,
        key: str,
        *,
        catalog_id: str,
        host_id: str,
        thread_id: str,
        upstream_kind: str,
        upstream_ref: JsonValue,
        marker: JsonValue,
        agent_id: str | None = None,
    ) -> UpstreamLink:
        """Link an adopted session to its upstream; the session is registered if new."""
        return await self._scheduler.run(
            upstream.link_upstream(
                self._core,
                key,
                catalog_id=catalog_id,
                host_id=host_id,
                thread_id=thread_id,
                upstream_kind=upstream_kind,
                upstream_ref=upstream_ref,
                marker=marker,
                agent_id=agent_id,
            )
        )

    async def unlink_upstream(self, key: str, *, agent_id: str | None = None) -> UpstreamLink | None:
        """Remove the session's upstream link; returns the link removed, None when there was none."""
        return await self._scheduler.run(upstream.unlink_upstream(self._core, key, agent_id=agent_id))

    async def upstream_link(self, key: str, *, agent_id: str | None = None) -> UpstreamLink | None:
        """The session's active upstream link, or None."""
        return await self._scheduler.read(upstream.upstream_link, self._core, key, agent_id=agent_id)

    async def upstream_links(self, *, catalog_id: str | None = None) -> list[UpstreamLink]:
        """Every active upstream link (of one catalog when `catalog_id` is given)."""
        return await self._scheduler.read(upstream.upstream_links, self._core, catalog_id=catalog_id)

    if True:  # ASYNC

        async def _upstream_pass(
            self,
            providers: Mapping[str, UpstreamProvider | AsyncUpstreamProvider],
            transcripts: Transcripts | AsyncTranscripts | None,
            *,
            only: SessionIdentity | None = None,
        ) -> TickReport:
            """A pass (of every link, or of `only`'s) on a thread of its own, its wakes published after."""
            return await upstream_pass(
                self._open_core(),
                self._scheduler,
                self._loop,
                providers,
                transcripts=transcripts,
                gate=PublishGate(),
                only=only,
            )

    async def upstream_tick(
        self,
        providers: Mapping[str, UpstreamProvider | AsyncUpstreamProvider],
        *,
        transcripts: Transcripts | AsyncTranscripts | None = None,
    ) -> TickReport:
        """One upstream monitor pass; `providers` maps a catalog id to its provider (async: off the loop)."""
        if True:  # ASYNC
            return await self._upstream_pass(providers, transcripts)
        else:
            return upstream.tick(self._core, self._scheduler, providers, transcripts=transcripts)

    async def follow_upstream(
        self,
        key: str,
        providers: Mapping[str, UpstreamProvider | AsyncUpstreamProvider],
        *,
        agent_id: str | None = None,
        transcripts: Transcripts | AsyncTranscripts | None = None,
    ) -> TickReport:
        """Follow this session's upstream link now, watched or not (a host's hook, told the session moved).

        A session nobody watches has its marker advanced and nothing recorded.
        """
        if True:  # ASYNC
            return await self._upstream_pass(providers, transcripts, only=query_identity(key, agent_id))
        else:
            return upstream.follow(
                self._core, self._scheduler, key, providers, agent_id=agent_id, transcripts=transcripts
            )

    async def start_upstream_monitor(
        self,
        providers: Mapping[str, UpstreamProvider | AsyncUpstreamProvider],
        *,
        transcripts: Transcripts | AsyncTranscripts | None = None,
        interval: float = 60.0,
        initial_delay: float = 15.0,
    ) -> AsyncMonitorHandle:
        """Run `upstream_tick` every `interval` seconds on a thread, the first after `initial_delay`.

        The asyncio façade runs it as a task on its loop instead, stopped by `aclose()`.
        """
        if True:  # ASYNC
            every, first = upstream.monitor_timing(interval, initial_delay)
            core, chosen = self._open_core(), dict(providers)
            handle = AsyncMonitorHandle(
                lambda gate: upstream_pass(
                    core, self._scheduler, self._loop, chosen, transcripts=transcripts, gate=gate
                ),
                interval=every,
                initial_delay=first,
            )
            self._monitors.append(handle)
            return handle.start()
        else:
            return upstream.start_monitor(
                self._core,
                self._scheduler,
                providers,
                transcripts=transcripts,
                interval=interval,
                initial_delay=initial_delay,
            )

    async def apply_upstream_verdict(
        self,
        link: UpstreamLinkState,
        verdict: RecordActivity | AdvanceOnly | RecordMissing,
        *,
        session: SessionState,
    ) -> tuple[Outcome, Signal | None]:
        """Publish one monitor verdict in one transaction (the monitor's; hosts call `upstream_tick`)."""
        return await self._scheduler.run(upstream.apply_verdict(self._core, link, verdict, session=session))
