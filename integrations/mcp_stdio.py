"""The stdio server's input, read so that SIGINT ends the server at once. Needs the `mcp` extra.

The SDK reads stdin on a worker thread that a cancelled read waits for: a client that stops its
server with SIGINT while keeping stdin open (Claude Code does) waited for a line that never came.
Here a daemon thread of its own reads the lines and hands them to the loop, so a cancelled reader
leaves at once, and the thread, blocked on a read, never keeps the process from ending.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import BinaryIO

import anyio


class InterruptibleLines(anyio.AsyncFile[str]):
    """The lines of a binary stream as UTF-8 text, read on a daemon thread (for `stdio_server(stdin=...)`)."""

    def __init__(self, stream: BinaryIO) -> None:
        super().__init__(TextIOWrapper(stream, encoding="utf-8", errors="replace"))
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()

        def read() -> None:
            try:
                with contextlib.suppress(OSError, ValueError):  # stdin closed under the reader: it ended
                    for raw in iter(self._stream.readline, b""):
                        loop.call_soon_threadsafe(lines.put_nowait, raw)
            finally:
                with contextlib.suppress(RuntimeError):  # the loop closed first: nobody reads any more
                    loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read, name="sessionwatch-mcp-stdin", daemon=True).start()
        while (raw := await lines.get()) is not None:
            yield raw.decode("utf-8", errors="replace")


def interruptible_stdin() -> InterruptibleLines:
    """The process's stdin for the stdio transport."""
    return InterruptibleLines(sys.stdin.buffer)
