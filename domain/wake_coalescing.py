"""Wake coalescing: at most one wake per watcher per window, the rest covered by one trailing wake.

A watcher woken at `t` is not woken again before `t + window`. A wake offered for it inside the
window is deferred; once the window has ended, one trailing wake covers every wake deferred into
it, provided the watcher still has a pending notice then (the caller checks the store and settles
the claim). The trailing wake starts the next window. Coalescing is per watcher key; the reason a
trailing wake carries is the reason of the latest wake it covers (`session-state:<target_key>`).

Pure: times are seconds on the store's clock, handed in by the caller; nothing here reads a clock,
a store or a thread. The caller serializes the calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sessionwatch.domain.errors import InvalidQuery

Wake = tuple[str, str]
"""(watcher key, reason) of one wake."""


def check_wake_coalesce(value: object) -> float:
    """The coalescing window in seconds: a finite number, 0 or more (0: no coalescing).

    `InvalidQuery` naming `wake_coalesce` for anything else (a bool, NaN, an infinity, a negative
    number, a string).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidQuery("wake_coalesce", "must be a number of seconds (0 turns coalescing off)")
    if not math.isfinite(value) or value < 0:
        raise InvalidQuery("wake_coalesce", f"must be a finite number of seconds, 0 or more, not {value!r}")
    return float(value)


@dataclass(slots=True)
class Window:
    """One watcher's window: when it ends, the wake deferred into it, whether its claim is out."""

    ends: float
    """The first instant the watcher may be woken again."""
    owed: str | None = None
    """The reason of the latest wake deferred into this window; None: nothing deferred."""
    claimed: bool = False
    """A trailing wake was claimed (`due`) and is not settled yet: new wakes wait for the settle."""


class WakeCoalescing:
    """The windows of every watcher woken recently; a watcher without one is woken at once."""

    def __init__(self, window: float) -> None:
        self.window = window
        self.windows: dict[str, Window] = {}

    def offer(self, watcher: str, reason: str, now: float) -> bool:
        """Whether to wake `watcher` now (True: a new window starts); else the wake is deferred."""
        current = self.windows.get(watcher)
        if current is None or (now >= current.ends and not current.claimed):
            self.windows[watcher] = Window(now + self.window)  # covers anything still owed
            return True
        current.owed = reason
        return False

    def due(self, now: float) -> list[Wake]:
        """Claim the trailing wakes whose window has ended; each claim must be `settle`d.

        Windows that ended with nothing owed are dropped here (a watcher without one is woken at
        once, as it would be by its ended window), so the state stays as small as the watchers
        woken within the last window.
        """
        claims = []
        for watcher, current in list(self.windows.items()):
            if current.claimed or now < current.ends:
                continue
            if current.owed is None:
                del self.windows[watcher]
                continue
            claims.append((watcher, current.owed))
            current.owed, current.claimed = None, True
        return claims

    def settle(self, watcher: str, now: float, *, woken: bool) -> str | None:
        """Settle a claim: `woken` when the trailing wake went out (the watcher had a pending notice).

        A woken watcher's next window starts now; wakes deferred during the claim wait for its end.
        Not woken: the window is forgotten, unless a wake was deferred during the claim, whose
        reason is returned: that wake is owed now, and starts a new window.
        """
        current = self.windows.get(watcher)
        if current is None:
            return None
        current.claimed = False
        if woken:
            current.ends = now + self.window
            return None
        owed = current.owed
        if owed is None:
            del self.windows[watcher]
            return None
        current.owed, current.ends = None, now + self.window
        return owed

    def next_due(self) -> float | None:
        """When the earliest trailing wake not claimed yet falls due; None when none is owed."""
        ends = [w.ends for w in self.windows.values() if w.owed is not None and not w.claimed]
        return min(ends, default=None)
