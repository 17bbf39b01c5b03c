"""Wake coalescing's wiring: the rule (`domain/wake_coalescing.py`) on the store's clock and store.

`offer` filters the wakes a write (or the sweep, or another process) owes: those the rule defers
wait for their window's end. `poll` claims the trailing wakes that are due and hands them over;
every call into the core polls first, so a fake clock makes delivery deterministic. With the system
clock a timer polls too, at the earliest window's end, so a trailing wake goes out without any
further call; closing cancels it, and none fires after. The check a claim settles on reads the
store (`still_pending`), so it runs where store calls may: the caller's thread (sync façade), or
the writer thread ahead of the write that polled (the event-loop scheduler hands claims over with
`hand_off`), so it sees the store as the call found it.

Nothing survives the process: after a restart the sweep wakes every watcher with an open notice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from sessionwatch.adapters.stores.port import SignalStore
from sessionwatch.domain.ports import Clock
from sessionwatch.domain.wake_coalescing import Wake, WakeCoalescing
from sessionwatch.domain.watch_cursor import CursorState

logger = logging.getLogger("sessionwatch")

SLACK_S = 0.005
"""A timer fires this much after the window's end, so the clock it reads has passed it."""


class Timer(Protocol):
    """A started timer: `cancel` keeps it from firing (harmless once it fired)."""

    def cancel(self) -> None:
        """Keep the timer from firing."""
        ...


StartTimer = Callable[[float, Callable[[], None]], Timer]
"""Start a timer calling the function after so many seconds."""


def thread_timer(delay_s: float, fire: Callable[[], None]) -> Timer:
    """A daemon `threading.Timer` (the sync façade's)."""
    timer = threading.Timer(delay_s, fire)
    timer.name = "sessionwatch-coalesce-timer"
    timer.daemon = True
    timer.start()
    return timer


class PendingCursors(Protocol):
    """What the check reads: a store, or a write transaction."""

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors (only those with a pending notice)."""
        ...


def still_pending(store: PendingCursors, watcher: str) -> bool:
    """Whether a trailing wake is still owed to `watcher`: it has a pending notice that wakes.

    The one place that decides it: a watcher that drained meanwhile gets no trailing wake, nor one
    whose only pending notices are ambient (queue-only, never woken).
    """
    return any(not cursor.ambient for cursor in store.cursors_of(watcher, pending_only=True))


def checked(claims: Sequence[Wake], source: PendingCursors) -> list[bool]:
    """Whether each claim's watcher still has a notice that wakes; only reads (safe to run again).

    A check that fails counts as pending: a wake is never lost to an error.
    """
    pending = []
    for watcher, _ in claims:
        try:
            pending.append(still_pending(source, watcher))
        except Exception as exc:  # noqa: BLE001 - unsure: wake
            logger.warning("sessionwatch: trailing wake check failed (error=%s)", type(exc).__name__)
            pending.append(True)
    return pending


class WakeCoalescer:
    """One store's coalescing: the rule's state under a lock, the timer, the delivery of claims.

    Thread-safe. `send` publishes wakes (the core's `publish` for the sync façade).
    """

    def __init__(
        self,
        window: float,
        clock: Clock,
        store: SignalStore,
        *,
        send: Callable[[list[Wake]], object],
        timers: bool,
    ) -> None:
        self._rule = WakeCoalescing(window)
        self._clock = clock
        self._store = store
        self._lock = threading.Lock()
        self._firing = threading.RLock()  # held by a firing timer's delivery; `close` waits for it
        self._hand_off: Callable[[list[Wake]], object] = lambda claims: send(self.trailing(claims))
        self._start_timer: StartTimer | None = thread_timer if timers else None
        self._timer: Timer | None = None
        self._armed_for: float | None = None
        self.closed = False

    @property
    def window(self) -> float:
        """The window in seconds."""
        return self._rule.window

    def hand_off(self, deliver: Callable[[list[Wake]], object], *, start_timer: StartTimer | None) -> None:
        """Claims go to `deliver` (to run `trailing` where store calls may), timers to `start_timer`.

        The event-loop scheduler's: `start_timer` is None unless the clock is the system clock.
        """
        self._hand_off = deliver
        if self._start_timer is not None:
            self._start_timer = start_timer

    def _now(self) -> float:
        return self._clock.now().timestamp()

    def offer(self, wakes: Sequence[Wake]) -> list[Wake]:
        """The wakes to send now; the rule defers the others to their window's end (a timer armed)."""
        if not wakes:
            return []
        now = self._now()
        with self._lock:
            now_wakes = [(w, r) for w, r in wakes if self._rule.offer(w, r, now)]
        if len(now_wakes) < len(wakes):
            self._arm()
        return now_wakes

    def poll(self) -> None:
        """Claim the trailing wakes that are due and hand them over; nothing once closed."""
        if not self._rule.windows:  # nearly every call: nobody woken within the window
            return
        now = self._now()
        with self._lock:
            claims = [] if self.closed else self._rule.due(now)
        if claims:
            self._hand_off(claims)

    def trailing(self, claims: Sequence[Wake]) -> list[Wake]:
        """Check and settle claims on the store: the trailing wakes to send now."""
        return self.settle(claims, checked(claims, self._store))

    def settle(self, claims: Sequence[Wake], pending: Sequence[bool]) -> list[Wake]:
        """Settle claims on what `checked` found: the trailing wakes to send now."""
        wakes: list[Wake] = []
        now = self._now()
        for (watcher, reason), woken in zip(claims, pending, strict=True):
            with self._lock:
                owed = self._rule.settle(watcher, now, woken=woken)
            if woken:
                wakes.append((watcher, reason))
            elif owed is not None:
                wakes.append((watcher, owed))
        self._arm()
        return wakes

    # ------------------------------------------------------------------------------- timers

    def _arm(self) -> None:
        """Have a timer fire at the earliest trailing wake owed, unless one fires earlier already."""
        if self._start_timer is None:
            return
        with self._lock:
            due = self._rule.next_due()
            if self.closed or due is None or (self._armed_for is not None and self._armed_for <= due):
                return
            if self._timer is not None:
                self._timer.cancel()
            self._armed_for = due
            self._timer = self._start_timer(max(0.0, due - self._now()) + SLACK_S, self._fire)

    def _fire(self) -> None:
        """The timer: poll, then re-arm for what is still owed (a later window, or an early fire)."""
        with self._firing:
            with self._lock:
                self._timer, self._armed_for = None, None
                if self.closed:
                    return
            self.poll()
            self._arm()

    def close(self) -> None:
        """Cancel the timer and claim nothing more; waits for a firing timer's delivery to end."""
        with self._firing, self._lock:
            self.closed = True
            if self._timer is not None:
                self._timer.cancel()
            self._timer, self._armed_for = None, None
