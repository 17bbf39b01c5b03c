"""Wake coalescing never leaves a pending notice without a wake, and never wakes twice in a window.

Arbitrary sequences of notice-opening records, drains and clock steps drive a store opened with
`wake_coalesce` (memory, through both façades). After every clock step and one call into the store,
each watcher with a pending notice opened since its last wake is still inside the window that wake
started (its trailing wake is not due yet); and no watcher was ever woken twice within a window.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sessionwatch
from sessionwatch import SessionWatch
from sessionwatch.testing import FakeClock

WINDOW = 10.0
WATCHERS = ("agent:main:main", "agent:ops:main", "agent:main:subagent:helper")
SUBAGENT = WATCHERS[2]
TARGETS = ("agent:main:worker", "agent:main:other")

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("record"), st.sampled_from(TARGETS)),
        st.tuples(st.just("drain"), st.sampled_from(WATCHERS)),
        st.tuples(st.just("advance"), st.integers(0, int(2.5 * WINDOW))),
    ),
    max_size=40,
)


@dataclass
class StampingWaker:
    """Records each wake with the fake clock's time at the moment it was asked."""

    clock: FakeClock
    wakes: list[tuple[str, float]] = field(default_factory=list)

    def wake(self, watcher_key: str, reason: str) -> None:
        assert reason.startswith("session-state:")
        self.wakes.append((watcher_key, self.clock.now().timestamp()))


Pending = dict[str, set[tuple[str, int]]]
"""Per watcher, its pending notices as (target, last seen)."""


def pending_of(watch: SessionWatch) -> Pending:
    return {w: {(n.target, n.last_seen) for n in watch.pending_notices(w)} for w in WATCHERS}


@dataclass
class Owed:
    """What the wakes seen so far leave owed: per watcher its last wake, its first uncovered notice."""

    before: Pending
    owed_since: dict[str, float] = field(default_factory=dict)
    last_woken: dict[str, float] = field(default_factory=dict)

    def step(self, wakes: list[tuple[str, float]], after: Pending, now: float) -> None:
        """One call's wakes (each checked against its watcher's window) and the notices it opened."""
        for watcher, at in wakes:
            previous = self.last_woken.get(watcher)
            assert previous is None or at >= previous + WINDOW, f"{watcher} woken twice in a window"
            self.last_woken[watcher] = at
        woken = {w for w, _ in wakes}
        for watcher in WATCHERS:
            if not after[watcher] or watcher in woken:
                self.owed_since.pop(watcher, None)
            elif after[watcher] - self.before[watcher]:
                self.owed_since.setdefault(watcher, now)
        self.before = after

    def check_nothing_overdue(self, now: float) -> None:
        """Every watcher owed a wake is still inside the window its last wake started."""
        for watcher in self.owed_since:
            if watcher == SUBAGENT:
                continue
            assert watcher in self.last_woken, f"{watcher} has a pending notice and was never woken"
            assert now < self.last_woken[watcher] + WINDOW, f"{watcher}'s trailing wake is due but not sent"


@pytest.mark.usefixtures("through_each_facade")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(steps=STEPS)
def test_a_pending_notice_is_never_left_without_a_wake_and_no_watcher_is_woken_twice_in_a_window(
    steps: list[tuple[str, object]],
) -> None:
    clock = FakeClock()
    waker = StampingWaker(clock)
    with sessionwatch.open("memory://", clock=clock, waker=waker, wake_coalesce=WINDOW) as watch:
        for watcher in WATCHERS:
            for target in TARGETS:
                assert watch.watch(watcher, target)
        owed = Owed(pending_of(watch))
        for action, argument in steps:
            seen = len(waker.wakes)
            if action == "record":
                watch.record_human_message(str(argument), channel="telegram")
            elif action == "drain":
                watch.drain(str(argument))
            else:
                clock.advance(seconds=int(str(argument)))
                watch.registry_entries()  # one call into the store
            now = clock.now().timestamp()
            owed.step(waker.wakes[seen:], pending_of(watch), now)
            if action == "advance":
                owed.check_nothing_overdue(now)
        assert SUBAGENT not in owed.last_woken
