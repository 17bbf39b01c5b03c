"""Small fakes of the host's ports for the notice suites: wakers that record, probe or fail."""

from __future__ import annotations

from collections.abc import Callable

WakeProbe = Callable[[str, str], None]
"""Called inside `wake(watcher, reason)`, to look at the store while the host is being woken."""


class FakeWaker:
    """The host's heartbeat port (SPEC §6.4): records every `(watcher, reason)` it is asked to wake."""

    def __init__(self, probe: WakeProbe | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.probe = probe

    def wake(self, watcher_key: str, reason: str) -> None:
        self.calls.append((watcher_key, reason))
        if self.probe is not None:
            self.probe(watcher_key, reason)

    def take(self) -> list[tuple[str, str]]:
        """The calls since the last `take`, forgetting them."""
        calls, self.calls = self.calls, []
        return calls


class WakeFailedError(RuntimeError):
    """What `FailingWaker` raises: the host's heartbeat is down."""


class FailingWaker:
    """A heartbeat that is down: records the attempt, runs the probe, then raises."""

    def __init__(self, probe: WakeProbe | None = None) -> None:
        self.attempts: list[tuple[str, str]] = []
        self.probe = probe

    def wake(self, watcher_key: str, reason: str) -> None:
        self.attempts.append((watcher_key, reason))
        if self.probe is not None:
            self.probe(watcher_key, reason)
        raise WakeFailedError(f"heartbeat unavailable for {watcher_key}")
