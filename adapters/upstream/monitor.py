"""The upstream monitor's thread: one pass every interval, and the gate that stops publications.

The pass itself is a use case (`adapters.app.upstream.UpstreamPass`); this module only runs it on
a daemon thread and closes the gate on `stop()`, so that nothing is published afterwards.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Self

from sessionwatch.adapters.app.reports import TickReport

logger = logging.getLogger("sessionwatch")


class PublishGate:
    """The gate between a pass and the store: once closed, no result of the pass is published.

    `stop()` closes it while holding the lock, so a publication in flight completes first and none
    starts afterwards.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def attempt(self) -> Iterator[bool]:
        """Hold the gate for one publication; yields False once closed."""
        with self._lock:
            yield not self._closed

    def close(self) -> None:
        """Refuse every later publication; waits for one in flight."""
        with self._lock:
            self._closed = True

    @property
    def closed(self) -> bool:
        """Whether publications are refused."""
        return self._closed


def log_failure(what: str, name: str, exc: BaseException) -> None:
    """Log one line for a failed pass, provider or link (its name and the error class only)."""
    logger.warning(
        "sessionwatch: upstream %s failed (%s=%r error=%s)",
        what,
        "catalog_id" if what == "provider" else "session_key",
        name,
        type(exc).__name__,
        extra={"upstream": what, "subject": name, "error": type(exc).__name__},
    )


class MonitorHandle:
    """A running upstream monitor (`SessionWatch.start_upstream_monitor`); `stop()` ends it."""

    def __init__(
        self, tick: Callable[[PublishGate], TickReport], *, interval: float, initial_delay: float
    ) -> None:
        self._tick = tick
        self._interval = interval
        self._initial_delay = initial_delay
        self._publication = PublishGate()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._ticks = 0
        self._last: TickReport | None = None
        self._thread = threading.Thread(target=self._run, name="sessionwatch-upstream", daemon=True)

    def start(self) -> Self:
        """Begin ticking: the first pass after `initial_delay`, then one every `interval`."""
        self._thread.start()
        return self

    def _run(self) -> None:
        delay = self._initial_delay
        while not self._stopping.wait(delay):
            try:
                report = self._tick(self._publication)
            except Exception as exc:  # noqa: BLE001 - one failed pass never ends the monitor
                log_failure("pass", "*", exc)
            else:
                with self._lock:
                    self._ticks += 1
                    self._last = report
            delay = self._interval

    def stop(self, timeout: float | None = None) -> bool:
        """Stop ticking; nothing is published after this returns.

        Waits for a pass in flight up to `timeout` (default: one interval); a provider still
        answering after that is abandoned and its answers are discarded. Returns True when the
        monitor thread has ended.
        """
        self._stopping.set()
        self._publication.close()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(self._interval if timeout is None else timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        """Whether the monitor thread is alive."""
        return self._thread.is_alive()

    @property
    def ticks(self) -> int:
        """How many passes completed."""
        with self._lock:
            return self._ticks

    @property
    def last_report(self) -> TickReport | None:
        """The report of the last completed pass."""
        with self._lock:
            return self._last

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class Monitors:
    """The monitors started over one store, stopped together when it closes (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handles: list[MonitorHandle] = []

    def add(self, handle: MonitorHandle) -> MonitorHandle:
        """Keep `handle` to stop it with the others."""
        with self._lock:
            self._handles.append(handle)
        return handle

    def stop_all(self) -> None:
        """Stop every monitor kept so far."""
        with self._lock:
            handles, self._handles = self._handles, []
        for handle in handles:
            handle.stop()
