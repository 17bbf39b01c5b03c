"""Wake coalescing, on every store and through both façades, on a fake clock.

With `open(..., wake_coalesce=window)` a watcher woken at `t` is not woken again before
`t + window`; the notices that open for it meanwhile get one trailing wake, sent by the first call
into the store once the clock has passed the window's end, if one of them is still pending then.
Without the setting every notice wakes its watcher at once, as before.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from stores import fresh_store_url

import sessionwatch
from sessionwatch import InvalidQuery, SessionWatch
from sessionwatch.testing import FakeClock, RecordingWaker

MANAGER = "agent:main:main"
OPS = "agent:ops:main"
WORKER = "agent:main:worker"
HELPER = "agent:main:subagent:helper"
WINDOW = 20.0


def reason(target: str) -> str:
    return f"session-state:{target}"


@pytest.fixture
def waker() -> RecordingWaker:
    return RecordingWaker()


@pytest.fixture
def coalescing(store_url: str, clock: FakeClock, waker: RecordingWaker) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store of each kind, its wakes coalesced over `WINDOW` seconds."""
    with sessionwatch.open(store_url, clock=clock, waker=waker, wake_coalesce=WINDOW) as opened:
        yield opened


def human_turn(watch: SessionWatch, target: str = WORKER) -> None:
    assert watch.record_human_message(target, channel="telegram") is not None


def test_a_hundred_notices_in_one_window_wake_their_watcher_twice_leading_and_trailing(
    coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker
) -> None:
    assert coalescing.watch(MANAGER, WORKER)
    for opened in range(100):
        human_turn(coalescing)  # a notice opens: the one before was drained
        if opened < 99:
            assert len(coalescing.drain(MANAGER)) == 1
        clock.advance(seconds=WINDOW / 200)
    assert waker.calls == [(MANAGER, reason(WORKER))]  # the leading wake only, inside the window
    clock.advance(seconds=WINDOW)
    assert len(coalescing.pending_notices(MANAGER)) == 1  # any call delivers the due trailing wake
    assert waker.calls == [(MANAGER, reason(WORKER))] * 2
    coalescing.session_status(WORKER)
    assert len(waker.calls) == 2  # one trailing wake, delivered once


def test_a_notice_drained_inside_the_window_gets_no_trailing_wake(
    coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker
) -> None:
    assert coalescing.watch(MANAGER, WORKER)
    human_turn(coalescing)
    coalescing.drain(MANAGER)
    human_turn(coalescing)  # deferred: inside the window
    assert waker.take() == [(MANAGER, reason(WORKER))]
    coalescing.drain(MANAGER)
    clock.advance(seconds=WINDOW + 1)
    coalescing.pending_notices(MANAGER)
    assert waker.take() == []
    human_turn(coalescing)  # the window ended with nothing owed: woken at once
    assert waker.take() == [(MANAGER, reason(WORKER))]


def test_the_trailing_wake_names_the_latest_notice_it_covers(
    coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker
) -> None:
    assert coalescing.watch(MANAGER, WORKER)
    assert coalescing.watch(MANAGER, "agent:main:other")
    human_turn(coalescing)
    human_turn(coalescing, "agent:main:other")
    assert waker.take() == [(MANAGER, reason(WORKER))]
    clock.advance(seconds=WINDOW)  # exactly the window's end: due
    coalescing.registry_entries()
    assert waker.take() == [(MANAGER, reason("agent:main:other"))]


def test_coalescing_is_per_watcher(coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker) -> None:
    assert coalescing.watch(MANAGER, WORKER)
    human_turn(coalescing)
    assert coalescing.watch(OPS, WORKER)
    coalescing.drain(MANAGER)
    human_turn(coalescing)  # MANAGER inside its window, OPS never woken yet
    assert waker.take() == [(MANAGER, reason(WORKER)), (OPS, reason(WORKER))]
    clock.advance(seconds=WINDOW + 1)
    coalescing.drain(OPS)  # the call first sends MANAGER's trailing wake; OPS drains its own
    assert waker.take() == [(MANAGER, reason(WORKER))]


def test_the_window_restarts_at_the_trailing_wake(
    coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker
) -> None:
    assert coalescing.watch(MANAGER, WORKER)
    human_turn(coalescing)
    coalescing.drain(MANAGER)
    human_turn(coalescing)
    clock.advance(seconds=WINDOW + 1)
    coalescing.drain(MANAGER)  # trailing wake first, then the drain
    human_turn(coalescing)  # inside the window the trailing wake started
    assert waker.take() == [(MANAGER, reason(WORKER))] * 2
    clock.advance(seconds=WINDOW + 1)
    coalescing.pending_notices(MANAGER)
    assert waker.take() == [(MANAGER, reason(WORKER))]


def test_the_sweep_wakes_go_through_the_same_coalescing(
    coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker
) -> None:
    coalescing.upsert_session(MANAGER)
    assert coalescing.watch(MANAGER, WORKER)
    human_turn(coalescing)
    assert waker.take() == [(MANAGER, reason(WORKER))]
    report = coalescing.sweep()  # re-publishes the open notice, inside the window
    assert report.republished == 1
    assert report.woken == ()
    assert waker.take() == []
    clock.advance(seconds=WINDOW + 1)
    coalescing.pending_notices(MANAGER)
    assert waker.take() == [(MANAGER, reason(WORKER))]


def test_a_subagent_watcher_is_never_woken_with_coalescing(
    coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker
) -> None:
    assert coalescing.watch(HELPER, WORKER)
    human_turn(coalescing)
    coalescing.drain(HELPER)
    human_turn(coalescing)
    clock.advance(seconds=WINDOW + 1)
    assert len(coalescing.pending_notices(HELPER)) == 1
    assert waker.calls == []


def test_an_ambient_notice_pending_at_the_windows_end_gets_no_trailing_wake(
    coalescing: SessionWatch, clock: FakeClock, waker: RecordingWaker
) -> None:
    group = "agent:main:telegram:group:42"
    assert coalescing.watch(MANAGER, WORKER)
    human_turn(coalescing)  # the leading wake
    coalescing.record_human_message(group, channel="telegram")  # its main session watches it ambiently
    coalescing.drain(MANAGER)
    human_turn(coalescing)  # deferred: inside the window
    human_turn(coalescing, group)  # an ambient notice opens: queue-only
    coalescing.acknowledge(MANAGER, [WORKER])
    assert [n.provenance for n in coalescing.pending_notices(MANAGER)] == ["ambient"]
    clock.advance(seconds=WINDOW + 1)
    coalescing.pending_notices(MANAGER)
    assert waker.calls == [(MANAGER, reason(WORKER))]


def test_without_the_setting_every_notice_wakes_at_once(
    store_url: str, clock: FakeClock, waker: RecordingWaker
) -> None:
    with sessionwatch.open(store_url, clock=clock, waker=waker) as watch:
        assert watch.watch(MANAGER, WORKER)
        for _ in range(3):
            human_turn(watch)
            watch.drain(MANAGER)
        assert waker.take() == [(MANAGER, reason(WORKER))] * 3
        clock.advance(seconds=WINDOW + 1)
        watch.pending_notices(MANAGER)
        assert waker.take() == []


@pytest.mark.parametrize("bad", [-1, -0.5, math.nan, math.inf, -math.inf, True, False, "20", None])
def test_a_bad_wake_coalesce_is_refused_before_any_store_is_opened(bad: object, tmp_path: Path) -> None:
    path = tmp_path / "never.db"
    with pytest.raises(InvalidQuery) as refused:
        sessionwatch.open(f"sqlite:///{path}", wake_coalesce=bad)  # type: ignore[arg-type]
    assert refused.value.field == "wake_coalesce"
    assert not path.exists()


def test_a_bad_wake_coalesce_is_refused_on_every_store(store_kind: str, tmp_path: Path) -> None:
    with fresh_store_url(store_kind, tmp_path) as url, pytest.raises(InvalidQuery) as refused:
        sessionwatch.open(url, wake_coalesce=-1)
    assert refused.value.field == "wake_coalesce"
