"""Test-only fakes of the host's ports: wakers that probe or fail, the monitor's transcript port.

The recording waker and the fake clock ship in the kit (`sessionwatch.testing`); these add what
only this suite needs.
"""

from __future__ import annotations

from collections.abc import Callable

from sessionwatch.testing import RecordingWaker

WakeProbe = Callable[[str, str], None]
"""Called inside `wake(watcher, reason)`, to look at the store while the host is being woken."""


class ProbingWaker(RecordingWaker):
    """The kit's `RecordingWaker`, which also runs `probe` (when set) inside each wake."""

    def __init__(self, probe: WakeProbe | None = None) -> None:
        super().__init__()
        self.probe = probe

    def wake(self, watcher_key: str, reason: str) -> None:
        super().wake(watcher_key, reason)
        if self.probe is not None:
            self.probe(watcher_key, reason)


class WakeFailedError(RuntimeError):
    """What `FailingWaker` raises: the host's heartbeat is down."""


class FailingWaker(ProbingWaker):
    """A heartbeat that is down: records the attempt in `calls`, runs the probe, then raises."""

    def wake(self, watcher_key: str, reason: str) -> None:
        super().wake(watcher_key, reason)
        raise WakeFailedError(f"heartbeat unavailable for {watcher_key}")


class FakeTranscripts:
    """The host's transcript port for the upstream monitor: each session's own user texts, oldest first.

    A session in `failing` raises `OSError`, as an unavailable transcript store does.
    """

    def __init__(self, texts: dict[str, list[str]] | None = None) -> None:
        self.texts = texts or {}
        self.failing: set[str] = set()
        self.calls: list[tuple[str, str, int]] = []

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> list[str]:
        self.calls.append((session_key, agent_id, limit))
        if session_key in self.failing:
            raise OSError("transcript store unavailable")
        return self.texts.get(session_key, [])[-limit:]
