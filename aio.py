"""sessionwatch for asyncio hosts: `await sessionwatch.aio.open(...)` gives an `AsyncSessionWatch`.

Every method of `SessionWatch`, with the same arguments, results and errors, as a coroutine.
"""

from __future__ import annotations

from sessionwatch.adapters.entry.aio import AsyncMonitorHandle, AsyncSessionWatch
from sessionwatch.adapters.entry.aio import open as open  # noqa: A004, PLC0414 - mirrors sessionwatch.open

__all__ = ["AsyncMonitorHandle", "AsyncSessionWatch", "open"]
