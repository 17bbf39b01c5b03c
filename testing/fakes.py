"""Fakes of the host's ports for tests: a clock that moves only when told, a waker that records.

Plain classes with no test framework behind them: they satisfy `Clock` and `Waker` structurally.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""Where a `FakeClock` starts unless told otherwise."""


class FakeClock:
    """A `Clock` that only moves when a test says so."""

    def __init__(self, start: datetime = START) -> None:
        self.current = start

    def now(self) -> datetime:
        """The current fake time (aware UTC)."""
        return self.current

    def advance(self, **delta: float) -> datetime:
        """Move forward by `timedelta(**delta)` (`advance(minutes=5)`) and return the new time."""
        self.current += timedelta(**delta)
        return self.current


class RecordingWaker:
    """A `Waker` that records every `(watcher, reason)` it is asked to wake."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def wake(self, watcher_key: str, reason: str) -> None:
        """Record the wake."""
        self.calls.append((watcher_key, reason))

    def take(self) -> list[tuple[str, str]]:
        """The wakes since the last `take`, forgetting them."""
        calls, self.calls = self.calls, []
        return calls
