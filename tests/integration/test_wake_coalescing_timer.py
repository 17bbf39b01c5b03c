"""On the system clock a timer sends the trailing wake, without any further call; never after close.

Through both façades (a thread's timer for the sync one, the loop's `call_later` for the asyncio
one). The clock is the system clock held still while the notices open, so the second notice lands
inside the window whatever the machine's speed; once let go it runs as the system clock does. The
tests wait on an event with a generous timeout and assert nothing about speed.
"""

from __future__ import annotations

import threading
from datetime import datetime

import pytest

import sessionwatch
from sessionwatch.adapters.app.clock import SystemClock

MANAGER = "agent:main:main"
WORKER = "agent:main:worker"
REASON = f"session-state:{WORKER}"
WINDOW = 0.2
PATIENCE_S = 30.0


class HeldSystemClock(SystemClock):
    """The system clock, held at the instant it was made until `let_go`."""

    def __init__(self) -> None:
        self.held: datetime | None = super().now()

    def now(self) -> datetime:
        return self.held if self.held is not None else super().now()

    def let_go(self) -> None:
        self.held = None


class SecondWake:
    """A waker whose `second` event is set by the second wake."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.second = threading.Event()

    def wake(self, watcher_key: str, reason: str) -> None:
        self.calls.append((watcher_key, reason))
        if len(self.calls) >= 2:
            self.second.set()


@pytest.mark.usefixtures("through_each_facade")
def test_the_timer_sends_the_trailing_wake_without_any_further_call() -> None:
    clock, waker = HeldSystemClock(), SecondWake()
    with sessionwatch.open("memory://", clock=clock, waker=waker, wake_coalesce=WINDOW) as watch:
        assert watch.watch(MANAGER, WORKER)
        watch.record_human_message(WORKER, channel="telegram")
        watch.drain(MANAGER)
        watch.record_human_message(WORKER, channel="telegram")  # inside the window: deferred
        assert waker.calls == [(MANAGER, REASON)]
        clock.let_go()
        assert waker.second.wait(PATIENCE_S)
        assert waker.calls == [(MANAGER, REASON)] * 2


@pytest.mark.usefixtures("through_each_facade")
def test_the_timer_does_not_fire_after_close() -> None:
    clock, waker = HeldSystemClock(), SecondWake()
    with sessionwatch.open("memory://", clock=clock, waker=waker, wake_coalesce=WINDOW) as watch:
        assert watch.watch(MANAGER, WORKER)
        watch.record_human_message(WORKER, channel="telegram")
        watch.drain(MANAGER)
        watch.record_human_message(WORKER, channel="telegram")
    clock.let_go()
    assert not waker.second.wait(WINDOW * 5)  # the window has long ended: a live timer would have sent it
    assert waker.calls == [(MANAGER, REASON)]
    assert not [t for t in threading.enumerate() if t.name == "sessionwatch-coalesce-timer"]


@pytest.mark.usefixtures("through_each_facade")
def test_a_timer_that_fires_before_the_clock_reached_the_windows_end_tries_again() -> None:
    clock, waker = HeldSystemClock(), SecondWake()
    with sessionwatch.open("memory://", clock=clock, waker=waker, wake_coalesce=WINDOW) as watch:
        assert watch.watch(MANAGER, WORKER)
        watch.record_human_message(WORKER, channel="telegram")
        watch.drain(MANAGER)
        watch.record_human_message(WORKER, channel="telegram")
        assert not waker.second.wait(WINDOW * 3)  # the timer fired with the clock still held: not due
        clock.let_go()
        assert waker.second.wait(PATIENCE_S)
        assert waker.calls == [(MANAGER, REASON)] * 2
