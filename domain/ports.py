"""Ports the host implements (SPEC §13): typing protocols only, no behaviour."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """The local clock: heads, cursors and pruning use it, never a signal's display time."""

    def now(self) -> datetime:
        """The current time as an aware UTC datetime."""
        ...


@runtime_checkable
class Waker(Protocol):
    """The host's heartbeat: wakes a watcher's turn (SPEC §6.4)."""

    def wake(self, watcher_key: str, reason: str) -> None:
        """Ask the host to run `watcher_key`'s turn soon; `reason` is `session-state:<target>`."""
        ...
