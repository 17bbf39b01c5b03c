"""The restart sweep over a real SQLite file (SPEC §6.3, §6.5, §13.1): close, reopen, and look.

`open()` runs the sweep once: every open cursor (`M > L`) of a watcher that was upserted and not
deleted is re-frozen at `N := M` and its notice re-published (non-subagent watchers woken); an
acknowledged cursor is never reopened, and pending notices are durable across the restart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from auditing import assert_audit_clean
from fakes import ProbingWaker

import sessionwatch
from sessionwatch import Actor, SessionWatch, SignalKind
from sessionwatch.domain.watch_cursor import NoticesSwept
from sessionwatch.testing import FakeClock, RecordingWaker

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
WORKER = "agent:main:worker"
HELPER = "agent:main:subagent:helper"

Positions = tuple[int, int, int]


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'restart.db'}"


def lnm(watch: SessionWatch, watcher: str, target: str) -> Positions | None:
    cursor = watch.cursor(watcher, target)
    return None if cursor is None else (cursor.last_seen, cursor.notified, cursor.material)


def pending(watch: SessionWatch, watcher: str) -> list[tuple[str, int, str]]:
    return [(n.target, n.last_seen, n.text) for n in watch.pending_notices(watcher)]


def human(watch: SessionWatch, key: str = CHILD) -> int:
    return watch.record(
        key, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="human message via telegram"
    ).sequence


def spawn(watch: SessionWatch, requester: str = MANAGER, child: str = CHILD, run: str = "run-1") -> int:
    signal = watch.record_spawn(requester_key=requester, child_key=child, child_run_id=run)
    assert signal is not None
    return signal.sequence


def event_count(watch: SessionWatch) -> int:
    return sum(1 for _ in watch.store.replay())


def stale_child(url: str, clock: FakeClock, *, upsert_manager: bool = True) -> int:
    """Before the restart: the manager's cursor on the child at `(s, s+1, s+2)`; returns `s`."""
    with sessionwatch.open(url, clock=clock) as watch:
        if upsert_manager:
            watch.upsert_session(MANAGER)
        s = spawn(watch)
        human(watch)
        human(watch)
        assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 2)
    return s


def test_closing_and_reopening_keeps_pending_notices(url: str, clock: FakeClock) -> None:
    with sessionwatch.open(url, clock=clock) as watch:
        s = spawn(watch)
        human(watch)
        assert watch.watch(HELPER, WORKER) is True
        w = human(watch, WORKER)
        before = {key: watch.pending_notices(key) for key in (MANAGER, HELPER)}
    with sessionwatch.open(url, clock=clock, sweep_on_open=False) as watch:
        assert {key: watch.pending_notices(key) for key in (MANAGER, HELPER)} == before
        assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 1)
        assert lnm(watch, HELPER, WORKER) == (0, w, w)
    with sessionwatch.open(url, clock=clock) as watch:
        assert {key: watch.pending_notices(key) for key in (MANAGER, HELPER)} == before


def test_sweep_on_open_refreezes_n_to_m_and_wakes_an_existing_watcher(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker) as watch:
        assert lnm(watch, MANAGER, CHILD) == (s, s + 2, s + 2)
        assert waker.calls == [(MANAGER, f"session-state:{CHILD}")]
        assert [(n.target, n.last_seen) for n in watch.pending_notices(MANAGER)] == [(CHILD, s)]
        assert_audit_clean(watch)


def test_the_sweep_wakes_after_its_commit(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    seen: list[Positions | None] = []
    waker = ProbingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker, sweep_on_open=False) as watch:
        waker.probe = lambda watcher, _reason: seen.append(lnm(watch, watcher, CHILD))
        watch.sweep()
    assert seen == [(s, s + 2, s + 2)]


def test_a_drain_after_the_sweep_acknowledges_up_to_m_with_no_follow_up(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    with sessionwatch.open(url, clock=clock) as watch:
        [notice] = watch.drain(MANAGER)
        assert notice.last_seen == s
        assert lnm(watch, MANAGER, CHILD) == (s + 2, s + 2, s + 2)
        assert watch.pending_notices(MANAGER) == []


def test_sweep_stamps_updated_at_with_now_on_every_cursor_it_reissues(url: str, clock: FakeClock) -> None:
    """SPEC §6.5: `N := M`, `updated_at := now`, for every open cursor of an existing watcher."""
    with sessionwatch.open(url, clock=clock) as watch:
        watch.upsert_session(MANAGER)
        spawn(watch)
        human(watch)
        human(watch)
        assert watch.watch(MANAGER, WORKER) is True
        human(watch, WORKER)
    restarted_at = clock.advance(days=2)
    with sessionwatch.open(url, clock=clock) as watch:
        for target in (CHILD, WORKER):
            cursor = watch.cursor(MANAGER, target)
            assert cursor is not None
            assert cursor.updated_at == restarted_at


def test_sweep_skips_a_watcher_that_was_never_upserted(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock, upsert_manager=False)
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker) as watch:
        assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 2)
        assert waker.calls == []
        assert [(n.target, n.last_seen) for n in watch.pending_notices(MANAGER)] == [(CHILD, s)]
        report = watch.sweep()
        assert (report.refrozen, report.republished, report.woken) == (0, 0, ())
        assert report.skipped_missing_watchers == 1


def test_sweep_skips_a_watcher_that_was_deleted(url: str, clock: FakeClock) -> None:
    with sessionwatch.open(url, clock=clock) as watch:
        watch.upsert_session(MANAGER)
        watch.delete_session(MANAGER)
        s = spawn(watch)
        human(watch)
        human(watch)
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker) as watch:
        assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 2)
        assert waker.calls == []


def test_a_reset_watcher_still_exists_for_the_sweep(url: str, clock: FakeClock) -> None:
    with sessionwatch.open(url, clock=clock) as watch:
        watch.upsert_session(MANAGER)
        watch.reset_session(MANAGER)
        s = spawn(watch)
        human(watch)
        human(watch)
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker) as watch:
        assert lnm(watch, MANAGER, CHILD) == (s, s + 2, s + 2)
        assert waker.calls == [(MANAGER, f"session-state:{CHILD}")]


def test_sweep_refreezes_a_subagent_watcher_without_waking_it(url: str, clock: FakeClock) -> None:
    with sessionwatch.open(url, clock=clock) as watch:
        watch.upsert_session(MANAGER)
        watch.upsert_session(HELPER)
        assert watch.watch(HELPER, WORKER) is True
        assert watch.watch(MANAGER, WORKER) is True
        w1 = human(watch, WORKER)
        w2 = human(watch, WORKER)
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker, sweep_on_open=False) as watch:
        report = watch.sweep()
        assert lnm(watch, HELPER, WORKER) == (0, w2, w2)
        assert lnm(watch, MANAGER, WORKER) == (0, w2, w2)
        assert waker.calls == [(MANAGER, f"session-state:{WORKER}")]
        assert (report.refrozen, report.republished, report.woken) == (2, 2, (MANAGER,))
        assert w1 < w2


def test_sweep_never_reopens_an_acknowledged_cursor_across_a_restart(url: str, clock: FakeClock) -> None:
    with sessionwatch.open(url, clock=clock) as watch:
        watch.upsert_session(MANAGER)
        s = spawn(watch)
        human(watch)
        assert watch.record_run_terminal(child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="ok")
        assert len(watch.drain(MANAGER)) == 1
        assert lnm(watch, MANAGER, CHILD) == (s + 1, s + 1, s + 1)
        before = watch.store.read_model()
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker) as watch:
        assert watch.startup_sweep is not None
        assert (watch.startup_sweep.refrozen, watch.startup_sweep.republished) == (0, 0)
        assert lnm(watch, MANAGER, CHILD) == (s + 1, s + 1, s + 1)
        assert watch.pending_notices(MANAGER) == []
        assert waker.calls == []
        assert watch.store.read_model() == before
        assert not any(isinstance(e, NoticesSwept) for e in watch.store.replay())


def test_sweep_on_open_false_does_not_sweep(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker, sweep_on_open=False) as watch:
        assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 2)
        assert waker.calls == []
        report = watch.sweep()
        assert (report.refrozen, report.republished, report.woken) == (1, 1, (MANAGER,))
        assert lnm(watch, MANAGER, CHILD) == (s, s + 2, s + 2)


def test_a_second_sweep_changes_nothing_but_republishes(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    waker = RecordingWaker()
    with sessionwatch.open(url, clock=clock, waker=waker) as watch:
        assert waker.take() == [(MANAGER, f"session-state:{CHILD}")]
        model = watch.store.read_model()
        notices = watch.pending_notices(MANAGER)
        report = watch.sweep()
        assert (report.refrozen, report.republished, report.woken) == (0, 1, (MANAGER,))
        assert waker.take() == [(MANAGER, f"session-state:{CHILD}")]
        assert watch.store.read_model() == model
        assert watch.pending_notices(MANAGER) == notices
        assert lnm(watch, MANAGER, CHILD) == (s, s + 2, s + 2)


def test_reopening_twice_keeps_one_notice_with_the_same_text(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    with sessionwatch.open(url, clock=clock) as watch:
        first = pending(watch, MANAGER)
    clock.advance(hours=3)
    with sessionwatch.open(url, clock=clock) as watch:
        assert pending(watch, MANAGER) == first
        assert [(target, seen) for target, seen, _ in first] == [(CHILD, s)]


def test_signals_after_the_restart_extend_the_same_notice(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    with sessionwatch.open(url, clock=clock) as watch:
        e = human(watch)
        assert e > s + 2
        assert lnm(watch, MANAGER, CHILD) == (s, s + 2, e)
        [notice] = watch.drain(MANAGER)
        assert notice.last_seen == s
        assert lnm(watch, MANAGER, CHILD) == (s + 2, e, e)
        assert [(n.target, n.last_seen) for n in watch.pending_notices(MANAGER)] == [(CHILD, s + 2)]


def test_the_restart_keeps_sequences_rising(url: str, clock: FakeClock) -> None:
    s = stale_child(url, clock)
    clock.advance(minutes=1)
    with sessionwatch.open(url, clock=clock) as watch:
        assert human(watch) == s + 3
        assert_audit_clean(watch)
