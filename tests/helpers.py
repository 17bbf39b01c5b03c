"""Test doubles shared by the suites: small fakes, never mocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class FakeClock:
    """A clock that only moves when a test says so."""

    def __init__(self, start: datetime = START) -> None:
        self.current = start

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> datetime:
        self.current += timedelta(**delta)
        return self.current
