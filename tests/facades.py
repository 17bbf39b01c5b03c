"""Both façades behind one sync API, so one suite runs through each (never a copied suite).

`open_blocking(url, ...)` opens an `AsyncSessionWatch` on a background event loop and wraps it in
`BlockingWatch`, which has the sync façade's methods: each call runs the coroutine on that loop and
waits for its answer, then for the wakes and prunes it left in the background, so a test sees what
the sync façade leaves after the same call. `through_each_facade` swaps `sessionwatch.open` for it.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

import sessionwatch
import sessionwatch.aio
from sessionwatch.aio import AsyncMonitorHandle, AsyncSessionWatch

T = TypeVar("T")
FACADES = ("sync", "async")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """One event loop for the test session, running on a daemon thread."""
    global _loop  # noqa: PLW0603 - one loop per process, made on first use
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="test-event-loop", daemon=True).start()
        return _loop


def on_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the background loop and wait for its result."""
    return asyncio.run_coroutine_threadsafe(coroutine, background_loop()).result()


class BlockingHandle:
    """An `AsyncMonitorHandle` with the sync handle's `stop()`."""

    def __init__(self, handle: AsyncMonitorHandle) -> None:
        self._handle = handle

    def stop(self, timeout: float | None = None) -> bool:
        return on_loop(self._handle.stop(timeout))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class BlockingWatch:
    """The async façade with the sync one's calls (see the module docstring)."""

    def __init__(self, watch: AsyncSessionWatch) -> None:
        self.facade = watch

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.facade, name)
        if inspect.iscoroutinefunction(attribute):
            return functools.partial(self._call, attribute)
        return attribute

    def _call(self, method: Callable[..., Coroutine[Any, Any, T]], *args: Any, **kwargs: Any) -> T:
        # A call made from inside a wake (a waker that reads the store) must not wait for that wake.
        inside_a_wake = threading.current_thread().name.startswith("sessionwatch-")

        async def call_and_settle() -> T:
            try:
                return await method(*args, **kwargs)
            finally:
                if not inside_a_wake:
                    await self.facade.settled()

        return on_loop(call_and_settle())

    def start_upstream_monitor(self, *args: Any, **kwargs: Any) -> BlockingHandle:
        return BlockingHandle(self._call(self.facade.start_upstream_monitor, *args, **kwargs))

    def close(self) -> None:
        on_loop(self.facade.aclose())

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_blocking(url: str | None = None, **options: Any) -> BlockingWatch:
    """`sessionwatch.aio.open(url, **options)` on the background loop, wrapped."""
    return BlockingWatch(on_loop(sessionwatch.aio.open(url, **options)))


def use_facade(facade: str, monkeypatch: Any) -> None:
    """Make `sessionwatch.open` open the named façade for the rest of the test."""
    if facade == "async":
        monkeypatch.setattr(sessionwatch, "open", open_blocking)


def back_to_back(watch: Any, *calls: Callable[[Any], Any]) -> list[Any]:
    """Make the calls one right after another, nothing awaited between them; their answers, in order.

    Through the asyncio façade they run in one coroutine on its loop, each awaited as a host awaits
    it, without waiting for what the call before left running in the background: what one call
    answers must already hold for the next. Through the sync façade they are plain calls in turn.
    """
    if not isinstance(watch, BlockingWatch):
        return [call(watch) for call in calls]

    async def in_turn() -> list[Any]:
        return [await call(watch.facade) for call in calls]

    try:
        return on_loop(in_turn())
    finally:
        on_loop(watch.facade.settled())
