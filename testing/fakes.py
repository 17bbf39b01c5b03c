"""Fakes of the host's ports: a clock that moves when told, a waker that records, fixed transcripts.

Plain classes with no test framework behind them: they satisfy `Clock`, `Waker` and `Transcripts`
structurally.
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


class FakeTranscripts:
    """The host's `Transcripts` port for the upstream monitor: each session's own user texts.

    `texts` maps a session key to its user texts, oldest first. A session in `failing` raises
    `OSError`, as an unavailable transcript store does; `calls` records every question.
    """

    def __init__(self, texts: dict[str, list[str]] | None = None) -> None:
        self.texts = texts or {}
        self.failing: set[str] = set()
        self.calls: list[tuple[str, str, int]] = []

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> list[str]:
        """The session's newest `limit` user texts, oldest first."""
        self.calls.append((session_key, agent_id, limit))
        if session_key in self.failing:
            raise OSError("transcript store unavailable")
        return self.texts.get(session_key, [])[-limit:]
