"""The wake coalescing rule alone (domain/wake_coalescing.py), and its wiring in the core."""

from __future__ import annotations

import math

import pytest

from sessionwatch.adapters.app.core import Core, wake_from_elsewhere
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.wake_coalescing import WakeCoalescing, check_wake_coalesce
from sessionwatch.testing import FakeClock, RecordingWaker

W = "agent:main:main"


def test_a_watcher_without_a_window_is_woken_at_once_and_one_inside_it_is_deferred() -> None:
    rule = WakeCoalescing(10.0)
    assert rule.offer(W, "a", 0.0)
    assert not rule.offer(W, "b", 5.0)
    assert not rule.offer(W, "c", 9.9)
    assert rule.due(9.9) == []
    assert rule.next_due() == 10.0
    assert rule.due(10.0) == [(W, "c")]  # the latest reason it covers
    assert rule.due(10.0) == []  # claimed once


def test_a_settled_trailing_wake_starts_the_next_window() -> None:
    rule = WakeCoalescing(10.0)
    rule.offer(W, "a", 0.0)
    rule.offer(W, "b", 1.0)
    rule.due(12.0)
    assert rule.settle(W, 12.0, woken=True) is None
    assert not rule.offer(W, "c", 21.9)
    assert rule.offer(W, "d", 22.0)  # the window ended unclaimed: at once, covering "c"
    assert rule.next_due() is None


def test_a_claim_with_nothing_pending_forgets_the_window() -> None:
    rule = WakeCoalescing(10.0)
    rule.offer(W, "a", 0.0)
    rule.offer(W, "b", 1.0)
    rule.due(10.0)
    assert rule.settle(W, 10.0, woken=False) is None
    assert rule.windows == {}
    assert rule.offer(W, "c", 10.5)


def test_a_wake_deferred_during_a_claim_that_found_nothing_pending_is_owed_at_once() -> None:
    rule = WakeCoalescing(10.0)
    rule.offer(W, "a", 0.0)
    rule.offer(W, "b", 1.0)
    rule.due(10.0)
    assert not rule.offer(W, "c", 10.0)  # the claim is out: this one waits for its settle
    assert rule.settle(W, 10.0, woken=False) == "c"
    assert not rule.offer(W, "d", 15.0)  # the wake just owed started a window


def test_a_wake_deferred_during_a_claim_that_woke_waits_for_the_next_window() -> None:
    rule = WakeCoalescing(10.0)
    rule.offer(W, "a", 0.0)
    rule.offer(W, "b", 1.0)
    rule.due(10.0)
    rule.offer(W, "c", 10.0)
    assert rule.settle(W, 10.0, woken=True) is None
    assert rule.due(19.9) == []
    assert rule.due(20.0) == [(W, "c")]


def test_an_ended_window_with_nothing_owed_is_dropped() -> None:
    rule = WakeCoalescing(10.0)
    rule.offer(W, "a", 0.0)
    assert rule.due(10.0) == []
    assert rule.windows == {}


@pytest.mark.parametrize("good", [0, 0.0, 0.2, 20, 3600.5])
def test_a_finite_non_negative_number_of_seconds_is_a_window(good: float) -> None:
    assert check_wake_coalesce(good) == float(good)


@pytest.mark.parametrize("bad", [-1, -1e-9, math.nan, math.inf, True, "1", None, [1]])
def test_anything_else_is_refused_naming_wake_coalesce(bad: object) -> None:
    with pytest.raises(InvalidQuery) as refused:
        check_wake_coalesce(bad)
    assert refused.value.field == "wake_coalesce"


def test_wakes_from_another_process_go_through_the_same_coalescing() -> None:
    clock, waker = FakeClock(), RecordingWaker()
    core = Core.build(MemorySignalStore(), clock=clock, waker=waker, wake_coalesce=20.0)
    wake_from_elsewhere(core, W, "agent:main:worker")
    wake_from_elsewhere(core, W, "agent:main:other")
    wake_from_elsewhere(core, "agent:main:subagent:helper", "agent:main:worker")
    assert waker.take() == [(W, "session-state:agent:main:worker")]
    core.close()


def test_a_bad_window_is_refused_by_the_core_too() -> None:
    with pytest.raises(InvalidQuery) as refused:
        Core.build(MemorySignalStore(), wake_coalesce=-1)
    assert refused.value.field == "wake_coalesce"
