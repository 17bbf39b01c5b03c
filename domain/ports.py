"""Ports the host implements: typing protocols only, no behaviour (the async ones for `sessionwatch.aio`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from sessionwatch.domain.upstream import UpstreamActivity, UpstreamMissing, UpstreamProbe


@runtime_checkable
class Clock(Protocol):
    """The local clock: heads, cursors and pruning use it, never a signal's display time."""

    def now(self) -> datetime:
        """The current time as an aware UTC datetime."""
        ...


@runtime_checkable
class Waker(Protocol):
    """The host's heartbeat: wakes a watcher's turn."""

    def wake(self, watcher_key: str, reason: str) -> None:
        """Ask the host to run `watcher_key`'s turn soon; `reason` is `session-state:<target>`."""
        ...


@runtime_checkable
class UpstreamProvider(Protocol):
    """Answers the monitor's probes for one catalog: activity, missing, or nothing.

    At most one answer per probe, matched by session key; a probe without an answer means nothing
    changed. Raising fails this catalog's probes for this tick only.
    """

    def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> Sequence[UpstreamActivity | UpstreamMissing]:
        """Check each probe's upstream from its marker; never called with an empty list."""
        ...


@runtime_checkable
class Transcripts(Protocol):
    """The host's transcript store, read at call time so the store never holds message text."""

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> Sequence[str]:
        """The session's own most recent user message texts, newest last, at most `limit`."""
        ...


@runtime_checkable
class AsyncWaker(Protocol):
    """`Waker` for asyncio hosts: `wake` is a coroutine, run as a task on the event loop."""

    async def wake(self, watcher_key: str, reason: str) -> None:
        """Ask the host to run `watcher_key`'s turn soon; `reason` is `session-state:<target>`."""
        ...


@runtime_checkable
class AsyncUpstreamProvider(Protocol):
    """`UpstreamProvider` for asyncio hosts: answered on the event loop."""

    async def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> Sequence[UpstreamActivity | UpstreamMissing]:
        """Check each probe's upstream from its marker; never called with an empty list."""
        ...


@runtime_checkable
class AsyncTranscripts(Protocol):
    """`Transcripts` for asyncio hosts: answered on the event loop."""

    async def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> Sequence[str]:
        """The session's own most recent user message texts, newest last, at most `limit`."""
        ...
