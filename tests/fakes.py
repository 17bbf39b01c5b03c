"""Test-only fakes of the host's ports: wakers that probe or fail.

The recording waker, the fake clock and the monitor's transcript port ship in the kit
(`sessionwatch.testing`); these add what only this suite needs.
"""

from __future__ import annotations

from collections.abc import Callable

from sessionwatch.testing import FakeTranscripts, RecordingWaker

__all__ = ["FailingWaker", "FakeTranscripts", "ProbingWaker", "WakeFailedError", "WakeProbe"]

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
