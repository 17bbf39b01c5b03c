# Generated from adapters/entry/aio_upstream.py by tests/async_to_sync.py (`make generate`): edit that.
"""The upstream monitor of the sync façade: link adopted sessions, tick, run the monitor on a thread.

A room of `SessionWatch` (its base class): the use cases of `adapters/app/upstream.py`, a pass
run on the caller's thread, a monitor on a thread of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from sessionwatch.adapters.app import upstream
from sessionwatch.adapters.app.core import Core
from sessionwatch.adapters.app.reports import TickReport
from sessionwatch.adapters.app.scheduler import CallerScheduler
from sessionwatch.adapters.app.upstream import Outcome
from sessionwatch.adapters.upstream.monitor import MonitorHandle
from sessionwatch.domain.ports import Transcripts, UpstreamProvider
from sessionwatch.domain.session import SessionState
from sessionwatch.domain.upstream import AdvanceOnly, RecordActivity, RecordMissing, UpstreamLinkState
from sessionwatch.projections.models import Signal, UpstreamLink


class Upstream:
    """The upstream methods of `SessionWatch`, over the core and scheduler it builds."""

    _core: Core
    _scheduler: CallerScheduler

    def _open_core(self) -> Core:
        """The core, for what runs without a store call (as before the façade was closed)."""
        return self._core

    def link_upstream(
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
        return self._scheduler.run(
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

    def unlink_upstream(self, key: str, *, agent_id: str | None = None) -> UpstreamLink | None:
        """Remove the session's upstream link; returns the link removed, None when there was none."""
        return self._scheduler.run(upstream.unlink_upstream(self._core, key, agent_id=agent_id))

    def upstream_link(self, key: str, *, agent_id: str | None = None) -> UpstreamLink | None:
        """The session's active upstream link, or None."""
        return self._scheduler.read(upstream.upstream_link, self._core, key, agent_id=agent_id)

    def upstream_links(self, *, catalog_id: str | None = None) -> list[UpstreamLink]:
        """Every active upstream link (of one catalog when `catalog_id` is given)."""
        return self._scheduler.read(upstream.upstream_links, self._core, catalog_id=catalog_id)

    def upstream_tick(
        self, providers: Mapping[str, UpstreamProvider], *, transcripts: Transcripts | None = None
    ) -> TickReport:
        """One upstream monitor pass; `providers` maps a catalog id to its provider (async: off the loop)."""
        return upstream.tick(self._core, self._scheduler, providers, transcripts=transcripts)

    def follow_upstream(
        self,
        key: str,
        providers: Mapping[str, UpstreamProvider],
        *,
        agent_id: str | None = None,
        transcripts: Transcripts | None = None,
    ) -> TickReport:
        """Follow this session's upstream link now, watched or not (a host's hook, told the session moved).

        A session nobody watches has its marker advanced and nothing recorded.
        """
        return upstream.follow(
            self._core, self._scheduler, key, providers, agent_id=agent_id, transcripts=transcripts
        )

    def start_upstream_monitor(
        self,
        providers: Mapping[str, UpstreamProvider],
        *,
        transcripts: Transcripts | None = None,
        interval: float = 60.0,
        initial_delay: float = 15.0,
    ) -> MonitorHandle:
        """Run `upstream_tick` every `interval` seconds on a thread, the first after `initial_delay`.

        The asyncio façade runs it as a task on its loop instead, stopped by `aclose()`.
        """
        return upstream.start_monitor(
            self._core,
            self._scheduler,
            providers,
            transcripts=transcripts,
            interval=interval,
            initial_delay=initial_delay,
        )

    def apply_upstream_verdict(
        self,
        link: UpstreamLinkState,
        verdict: RecordActivity | AdvanceOnly | RecordMissing,
        *,
        session: SessionState,
    ) -> tuple[Outcome, Signal | None]:
        """Publish one monitor verdict in one transaction (the monitor's; hosts call `upstream_tick`)."""
        return self._scheduler.run(upstream.apply_verdict(self._core, link, verdict, session=session))
