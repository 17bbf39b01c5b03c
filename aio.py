"""sessionwatch for asyncio hosts: `await sessionwatch.aio.open(...)` gives an `AsyncSessionWatch`.

Every method of `SessionWatch`, with the same arguments, results and errors, as a coroutine; the
host's ports may be the sync ones or their async forms (`AsyncWaker`, `AsyncUpstreamProvider`,
`AsyncTranscripts`).
"""

from __future__ import annotations

from sessionwatch.adapters.entry.aio import AsyncMonitorHandle, AsyncSessionWatch
from sessionwatch.adapters.entry.aio_open import open as open  # noqa: A004, PLC0414 - mirrors sessionwatch.open
from sessionwatch.domain.ports import AsyncTranscripts, AsyncUpstreamProvider, AsyncWaker

__all__ = [
    "AsyncMonitorHandle",
    "AsyncSessionWatch",
    "AsyncTranscripts",
    "AsyncUpstreamProvider",
    "AsyncWaker",
    "open",
]
