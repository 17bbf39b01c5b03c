"""Retention and pruning (SPEC §8, §7.1, §2, §6.5): every store runs this suite.

Pruning removes signals older than the age window, then all but the newest `max_signals` globally;
it stamps each affected session's prune watermark, never lowers a head, expires cursors by
`updated_at`, compacts the event store and optionally archives what it removed.
"""

from __future__ import annotations

import functools
import json
import math
import stat
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from auditing import assert_audit_clean
from facades import back_to_back
from pydantic import ValidationError
from stores import FILE_STORES, fresh_store_url

import sessionwatch
from sessionwatch import (
    Actor,
    PruneReport,
    Retention,
    SessionWatch,
    Signal,
    SignalInput,
    StateChanges,
    UnknownSession,
)
from sessionwatch.adapters.stores.archive import read_archive
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.signals import to_epoch_ms
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
WORKER = "agent:main:worker"
OTHER = "agent:ops:worker"
WATCHER = "agent:main:coordinator"
SECOND_WATCHER = "agent:ops:coordinator"

SIGNAL_TYPE = "session.signal_recorded.v1"

Opener = Callable[..., SessionWatch]


@pytest.fixture
def open_with(store_url: str, clock: FakeClock) -> Iterator[Opener]:
    """Open a fresh store of each kind with a chosen retention policy (and the fake clock)."""
    opened: list[SessionWatch] = []

    def opener(retention: Retention | None = None, **options: Any) -> SessionWatch:
        watch = sessionwatch.open(store_url, clock=clock, retention=retention or Retention(), **options)
        opened.append(watch)
        return watch

    yield opener
    for watch in opened:
        watch.close()


def goal(watch: SessionWatch, key: str = WORKER, **fields: Any) -> Signal:
    """A notifying signal by the system (it reaches every watcher of the session)."""
    return watch.record(key, kind="goal_changed", actor=Actor.system(), summary="goal updated", **fields)


def compacted(watch: SessionWatch, key: str, operation: str) -> Signal:
    """A log-only signal carrying a dedupe key."""
    return watch.record(
        key,
        kind="compacted",
        actor=Actor.system(),
        summary="session compacted",
        dedupe_key=f"compacted:{operation}",
    )


def changes(watch: SessionWatch, key: str, since: int = 0, *, agent_id: str | None = None) -> StateChanges:
    status = watch.session_status(key, changes_since=since, agent_id=agent_id)
    assert status.state_changes is not None
    return status.state_changes


def retained(watch: SessionWatch, key: str, *, agent_id: str | None = None) -> list[int]:
    """Every retained sequence of the session (paged through)."""
    found: list[int] = []
    since = 0
    while True:
        page = changes(watch, key, since, agent_id=agent_id)
        found.extend(change.sequence for change in page.events)
        if not page.truncated:
            return found
        since = page.events[-1].sequence


def head(watch: SessionWatch, key: str, *, agent_id: str | None = None) -> int:
    return watch.session_status(key, agent_id=agent_id).state_version


def watermark(watch: SessionWatch, key: str, agent_id: str = "main") -> int:
    state = watch.store.session(SessionIdentity(key, agent_id))
    assert state is not None
    return state.pruned_through


def all_retained(watch: SessionWatch) -> set[int]:
    """Every retained sequence in the store, from the stored read model."""
    model = watch.store.read_model()
    return {signal.sequence for log in model.signals.values() for signal in log}


def assert_replay_matches(watch: SessionWatch) -> None:
    assert_audit_clean(watch)


def ago(clock: FakeClock, **delta: float) -> datetime:
    return clock.now() - timedelta(**delta)


# ------------------------------------------------------------------------------------ age pruning


def test_age_prune_removes_exactly_the_signals_whose_occurred_at_is_older_than_the_window(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with(Retention(days=1))
    start = clock.now()
    # After advancing two hours the cut-off is start - 22 h; occurred_at exactly at it is not older.
    older = goal(watch, occurred_at=start - timedelta(hours=23))
    just_older = goal(watch, occurred_at=start - timedelta(hours=22, milliseconds=1))
    at_cut = goal(watch, occurred_at=start - timedelta(hours=22))
    recent = goal(watch, occurred_at=start - timedelta(hours=1))
    now = goal(watch)
    clock.advance(hours=2)

    report = watch.prune()

    assert report.ran
    assert report.signals_removed == 2
    assert report.occurred_before == start - timedelta(hours=22)
    assert retained(watch, WORKER) == [at_cut.sequence, recent.sequence, now.sequence]
    assert {older.sequence, just_older.sequence}.isdisjoint(all_retained(watch))


def test_age_prune_uses_occurred_at_not_the_local_recording_time(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(days=1))
    back_dated = goal(watch, occurred_at=ago(clock, hours=23, minutes=30))
    current = goal(watch)
    clock.advance(hours=1)  # recorded one hour ago, but it occurred 24 h 30 min ago

    watch.prune()

    assert retained(watch, WORKER) == [current.sequence]
    assert back_dated.sequence < current.sequence


# ------------------------------------------------------------------------------------- the cap


def test_the_cap_keeps_exactly_the_newest_signals_globally(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=5))
    keys = (WORKER, CHILD, MANAGER)
    recorded = [goal(watch, keys[i % 3] if i % 4 else WORKER).sequence for i in range(13)]

    report = watch.prune()

    newest = sorted(recorded)[-5:]
    assert sorted(all_retained(watch)) == newest
    assert sorted(retained(watch, WORKER) + retained(watch, CHILD) + retained(watch, MANAGER)) == newest
    assert report.signals_removed == 8
    assert report.through_sequence == sorted(recorded)[-6]


def test_the_cap_is_global_not_per_session(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=3))
    busy = [goal(watch, WORKER).sequence for _ in range(4)]
    quiet = goal(watch, CHILD).sequence

    watch.prune()

    assert retained(watch, WORKER) == busy[-2:]
    assert retained(watch, CHILD) == [quiet]


def test_the_cap_applies_after_age_to_what_age_keeps(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(days=1, max_signals=2))
    sequences = []
    for index in range(6):  # even positions occurred long ago, odd ones just now
        when = ago(clock, hours=23) if index % 2 == 0 else None
        sequences.append(goal(watch, occurred_at=when).sequence)
    clock.advance(hours=2)

    watch.prune()

    # Age removes the three old ones; the cap then keeps the newest two of the three survivors.
    # (Capping first would keep only sequences[5].)
    assert retained(watch, WORKER) == [sequences[3], sequences[5]]


def test_a_cap_larger_than_the_log_removes_nothing(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=10))
    recorded = [goal(watch).sequence for _ in range(10)]

    report = watch.prune()

    assert report.signals_removed == 0
    assert report.through_sequence == 0
    assert retained(watch, WORKER) == recorded


# ----------------------------------------------------------------------------- heads and watermarks


def test_a_head_survives_the_pruning_of_all_its_rows(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with()
    recorded = [goal(watch, CHILD).sequence for _ in range(3)]
    clock.advance(days=31)

    watch.prune()

    assert head(watch, CHILD) == recorded[-1]
    assert retained(watch, CHILD) == []
    assert [row.state_version for row in watch.sessions_list() if row.session_key == CHILD] == [recorded[-1]]


def test_a_fully_pruned_session_reports_head_plus_one_and_a_gap_exactly_below_its_watermark(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    goal(watch, MANAGER)
    recorded = [goal(watch, CHILD).sequence for _ in range(3)]
    last = recorded[-1]
    clock.advance(days=31)

    watch.prune()

    assert watermark(watch, CHILD) == last
    for since in (0, recorded[0], last - 1):
        page = changes(watch, CHILD, since)
        assert page.history_gap is True
        assert page.events == ()
        assert page.earliest_available_sequence == last + 1
    for since in (last, last + 1, last + 100):
        page = changes(watch, CHILD, since)
        assert page.history_gap is False
        assert page.earliest_available_sequence == last + 1


def test_earliest_available_sequence_after_full_pruning_is_head_plus_one_and_zero_without_a_head(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    watch.upsert_session(MANAGER)
    last = [goal(watch, CHILD).sequence for _ in range(2)][-1]
    clock.advance(days=31)

    watch.prune()

    assert changes(watch, CHILD).earliest_available_sequence == last + 1
    assert changes(watch, MANAGER).earliest_available_sequence == 0
    assert changes(watch, MANAGER).history_gap is False
    assert head(watch, MANAGER) == 0


def test_earliest_available_sequence_is_the_smallest_retained_after_a_partial_prune(
    open_with: Opener,
) -> None:
    watch = open_with(Retention(max_signals=3))
    recorded = [goal(watch).sequence for _ in range(5)]

    watch.prune()

    page = changes(watch, WORKER)
    assert page.earliest_available_sequence == recorded[2]
    assert [c.sequence for c in page.events] == recorded[2:]


def test_the_watermark_is_the_highest_removed_sequence_of_that_session(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=3))
    a1 = goal(watch, WORKER).sequence
    b1 = goal(watch, CHILD).sequence
    a2 = goal(watch, WORKER).sequence
    b_kept = [goal(watch, CHILD).sequence for _ in range(3)]

    report = watch.prune()

    assert report.through_sequence == a2
    assert watermark(watch, WORKER) == a2
    assert watermark(watch, CHILD) == b1  # its own highest removed, not the global cut-off
    assert retained(watch, CHILD) == b_kept
    assert a1 < b1 < a2
    assert changes(watch, CHILD, b1 - 1).history_gap is True
    assert changes(watch, CHILD, b1).history_gap is False


def test_the_watermark_only_rises(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(days=1))
    kept_longer = goal(watch).sequence  # occurred now
    older = goal(watch, occurred_at=ago(clock, hours=23)).sequence  # a higher sequence, older
    clock.advance(hours=2)

    watch.prune()

    assert retained(watch, WORKER) == [kept_longer]
    assert watermark(watch, WORKER) == older
    clock.advance(hours=23)

    report = watch.prune()

    assert report.signals_removed == 1
    assert report.sessions_stamped == 0
    assert retained(watch, WORKER) == []
    assert watermark(watch, WORKER) == older  # removing the lower sequence does not lower it
    assert head(watch, WORKER) == older
    assert changes(watch, WORKER, kept_longer).history_gap is True


def test_a_prune_that_removes_nothing_of_a_session_leaves_its_watermark(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=2))
    first = goal(watch, WORKER).sequence
    goal(watch, CHILD)
    goal(watch, CHILD)
    watch.prune()
    assert watermark(watch, WORKER) == first

    goal(watch, CHILD)
    watch.prune()

    assert watermark(watch, WORKER) == first
    assert watermark(watch, CHILD) > first


def test_watermarks_are_stamped_for_many_sessions_in_one_prune(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with()
    keys = [f"agent:main:worker-{n}" for n in range(12)]
    last: dict[str, int] = {}
    for _ in range(3):
        for key in keys:
            last[key] = goal(watch, key).sequence
    watch.record("global", agent_id="ops", kind="goal_changed", actor=Actor.system(), summary="goal set")
    bare_head = head(watch, "global", agent_id="ops")
    clock.advance(days=31)

    report = watch.prune()

    assert report.sessions_stamped == len(keys) + 1
    assert report.signals_removed == 3 * len(keys) + 1
    for key in keys:
        assert watermark(watch, key) == last[key]
        assert head(watch, key) == last[key]
        assert changes(watch, key, last[key] - 1).history_gap is True
        assert changes(watch, key, last[key]).history_gap is False
    assert watermark(watch, "global", "ops") == bare_head


def test_a_prune_never_creates_a_head_or_a_session(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with()
    goal(watch, WORKER)
    watch.upsert_session(MANAGER)
    watch.watch(WATCHER, WORKER)
    before = {(row.session_key, row.agent_id, row.state_version) for row in watch.sessions_list()}
    clock.advance(days=31)

    watch.prune()

    after = {(row.session_key, row.agent_id, row.state_version) for row in watch.sessions_list()}
    assert after == before
    with pytest.raises(UnknownSession):
        watch.session_status(WATCHER)


# -------------------------------------------------------------------------------- history gaps


def test_sparse_sequences_of_a_session_are_not_a_history_gap(open_with: Opener) -> None:
    watch = open_with()
    mine = []
    for _ in range(4):
        mine.append(goal(watch, WORKER).sequence)
        goal(watch, CHILD)
        goal(watch, MANAGER)

    for since in (0, 1, mine[0], mine[0] + 1, mine[2]):
        page = changes(watch, WORKER, since)
        assert page.history_gap is False
        assert page.earliest_available_sequence == mine[0]
        assert [c.sequence for c in page.events] == [s for s in mine if s > since]


def test_rows_deleted_with_their_session_are_not_a_gap_after_re_creation(open_with: Opener) -> None:
    watch = open_with()
    old = [goal(watch, CHILD).sequence for _ in range(3)]
    watch.delete_session(CHILD)
    fresh = goal(watch, CHILD).sequence

    for since in (0, old[0], old[-1], fresh - 1):
        page = changes(watch, CHILD, since)
        assert page.history_gap is False
        assert page.earliest_available_sequence == fresh
    assert head(watch, CHILD) == fresh


def test_a_pruned_then_deleted_session_starts_again_without_a_watermark(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    last = [goal(watch, CHILD).sequence for _ in range(3)][-1]
    clock.advance(days=31)
    watch.prune()
    assert changes(watch, CHILD, 0).history_gap is True

    watch.delete_session(CHILD)
    fresh = goal(watch, CHILD).sequence

    assert fresh > last
    page = changes(watch, CHILD, 0)
    assert page.history_gap is False
    assert page.earliest_available_sequence == fresh
    assert watermark(watch, CHILD) == 0
    assert_replay_matches(watch)


def test_a_history_gap_appears_only_through_pruning(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=4))
    mine = []
    for _ in range(4):
        mine.append(goal(watch, WORKER).sequence)
        goal(watch, CHILD)
    watch.delete_session(CHILD)  # rows deleted otherwise: no gap anywhere
    assert all(changes(watch, WORKER, since).history_gap is False for since in range(mine[-1] + 1))

    for _ in range(3):
        goal(watch, MANAGER)
    watch.prune()  # keeps the newest 4: WORKER's last and MANAGER's three

    assert retained(watch, WORKER) == [mine[-1]]
    assert watermark(watch, WORKER) == mine[-2]
    for since in range(mine[-1] + 2):
        assert changes(watch, WORKER, since).history_gap is (since < mine[-2])


# ---------------------------------------------------------------------------------------- cursors


def test_a_cursor_not_updated_within_the_window_expires(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with()
    goal(watch, WORKER)
    assert watch.watch(WATCHER, WORKER)
    clock.advance(days=20)
    assert watch.watch(SECOND_WATCHER, WORKER)
    clock.advance(days=11)

    report = watch.prune()

    assert report.cursors_expired == 1
    assert watch.cursor(WATCHER, WORKER) is None
    recent = watch.cursor(SECOND_WATCHER, WORKER)
    assert recent is not None
    assert recent.updated_at == clock.now() - timedelta(days=11)


def test_a_material_update_refreshes_updated_at_and_keeps_the_cursor(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    goal(watch, WORKER)
    watch.watch(WATCHER, WORKER)
    clock.advance(days=20)
    signal = goal(watch, WORKER)
    cursor = watch.cursor(WATCHER, WORKER)
    assert cursor is not None
    assert cursor.updated_at == clock.now()
    assert cursor.material == signal.sequence
    clock.advance(days=11)  # 31 days after the watch, 11 after the material update

    watch.prune()

    assert watch.cursor(WATCHER, WORKER) is not None


def test_acknowledging_refreshes_updated_at_and_keeps_the_cursor(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with()
    goal(watch, WORKER)
    watch.watch(WATCHER, WORKER)
    clock.advance(days=5)
    goal(watch, WORKER)
    clock.advance(days=20)
    assert len(watch.drain(WATCHER)) == 1
    cursor = watch.cursor(WATCHER, WORKER)
    assert cursor is not None
    assert cursor.updated_at == clock.now()
    clock.advance(days=29)  # 54 days after the watch, 34 after the signal, 29 after the drain

    watch.prune()

    assert watch.cursor(WATCHER, WORKER) is not None
    clock.advance(days=2)

    report = watch.prune()

    assert report.cursors_expired == 1
    assert watch.cursor(WATCHER, WORKER) is None


def test_a_log_only_signal_does_not_refresh_a_cursor(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with()
    goal(watch, WORKER)
    watch.watch(WATCHER, WORKER)
    clock.advance(days=20)
    compacted(watch, WORKER, "op-1")
    clock.advance(days=11)

    watch.prune()

    assert watch.cursor(WATCHER, WORKER) is None


def test_an_expired_pending_notice_goes_with_its_cursor(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with()
    goal(watch, WORKER)
    watch.watch(WATCHER, WORKER)
    goal(watch, WORKER)
    assert len(watch.pending_notices(WATCHER)) == 1
    clock.advance(days=31)

    watch.prune()

    assert watch.pending_notices(WATCHER) == []
    assert_replay_matches(watch)


def test_the_sweep_refreshes_an_open_notice_before_its_prune_so_the_cursor_survives(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    watch.upsert_session(WATCHER)  # the watcher exists: the sweep re-freezes its open notice
    goal(watch, WORKER)
    watch.watch(WATCHER, WORKER)
    watch.watch(SECOND_WATCHER, WORKER)  # never upserted: skipped by the sweep
    goal(watch, WORKER)
    clock.advance(days=31)

    report = watch.sweep()

    assert report.prune is not None
    assert report.prune.cursors_expired == 1
    kept = watch.cursor(WATCHER, WORKER)
    assert kept is not None
    assert kept.updated_at == clock.now()
    assert watch.cursor(SECOND_WATCHER, WORKER) is None
    assert len(watch.pending_notices(WATCHER)) == 1


# ------------------------------------------------------------------------------- when prunes run


def test_a_zero_prune_interval_prunes_after_every_record(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=2, prune_interval=timedelta(0)))

    recorded = [goal(watch).sequence for _ in range(5)]

    assert retained(watch, WORKER) == recorded[-2:]


def test_a_prune_is_throttled_to_once_an_interval_after_the_last_one(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with(Retention(max_signals=1))
    watch.prune()
    clock.advance(minutes=59)

    assert watch.prune(force=False).ran is False
    clock.advance(minutes=2)

    assert watch.prune(force=False).ran is True
    assert watch.prune(force=False).ran is False
    assert watch.prune(force=True).ran is True


def test_the_prune_throttle_at_exactly_one_hour_does_not_prune_and_one_millisecond_later_does(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with(Retention(max_signals=1))
    watch.prune()
    first = goal(watch).sequence
    clock.advance(hours=1)

    assert watch.prune(force=False).ran is False  # exactly an hour old is not older than an hour
    second = goal(watch).sequence
    assert retained(watch, WORKER) == [first, second]  # the record did not prune either
    clock.advance(milliseconds=1)
    third = goal(watch).sequence

    assert retained(watch, WORKER) == [third]  # an hour and a millisecond: the record pruned


def test_a_prune_without_force_one_millisecond_past_the_hour_runs(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with(Retention(max_signals=1))
    watch.prune()
    clock.advance(hours=1, milliseconds=1)

    assert watch.prune(force=False).ran is True


def test_a_record_within_the_hour_after_a_prune_does_not_prune_and_one_after_it_does(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with(Retention(max_signals=1))
    watch.prune()
    clock.advance(minutes=30)
    first = goal(watch).sequence
    clock.advance(minutes=29)
    second = goal(watch).sequence

    assert retained(watch, WORKER) == [first, second]  # 59 minutes: no prune yet
    clock.advance(minutes=2)
    third = goal(watch).sequence

    assert retained(watch, WORKER) == [third]  # 61 minutes: the record pruned to the cap
    assert watermark(watch, WORKER) == second
    assert watch.prune(force=False).ran is False  # the record's prune restarted the interval


def test_record_many_prunes_after_its_batch_when_due(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(max_signals=2))
    clock.advance(minutes=61)
    batch = [
        SignalInput(session_key=WORKER, kind="goal_changed", actor=Actor.system(), summary="goal set")
    ] * 5

    recorded = watch.record_many(batch)

    assert retained(watch, WORKER) == [s.sequence for s in recorded[-2:]]


def _status_since(watch: Any, *, since: int) -> Any:
    return watch.session_status(WORKER, changes_since=since)


def test_the_call_right_after_a_record_that_made_a_prune_due_sees_that_prune(
    open_with: Opener, clock: FakeClock
) -> None:
    """A record answers once the prune it made due has run, so the very next call sees its gap.

    Through either façade, every time: the status that follows the record, with nothing awaited in
    between, reports the history gap the prune left (a prune still running behind the answer would
    be seen by that status only sometimes, hence the repetitions).
    """
    watch = open_with(Retention(max_signals=1))
    for _ in range(25):
        older = goal(watch)  # within the hour after the last prune: no prune follows it
        clock.advance(minutes=61)
        since = older.sequence - 1
        newer, status = back_to_back(
            watch,
            lambda w: w.record(WORKER, kind="goal_changed", actor=Actor.system(), summary="goal updated"),
            functools.partial(_status_since, since=since),
        )
        assert status.state_changes.history_gap is True
        assert [change.sequence for change in status.state_changes.events] == [newer.sequence]


def test_the_throttle_counts_from_opening_a_never_pruned_store(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(max_signals=1), sweep_on_open=False)
    goal(watch)
    clock.advance(minutes=59)
    goal(watch)

    assert len(retained(watch, WORKER)) == 2
    assert watch.prune(force=False).ran is False
    clock.advance(minutes=2)
    last = goal(watch).sequence

    assert retained(watch, WORKER) == [last]


def test_the_store_remembers_when_the_last_prune_ran(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(sweep_on_open=False)
    assert watch.store.last_prune_ms() is None
    goal(watch)
    clock.advance(minutes=5)

    watch.prune()  # it removes nothing, but it ran

    assert watch.store.last_prune_ms() == to_epoch_ms(clock.now())
    clock.advance(minutes=5)
    watch.prune()
    assert watch.store.last_prune_ms() == to_epoch_ms(clock.now())


def test_the_sweep_runs_a_forced_prune(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(max_signals=2))
    assert watch.prune().ran  # a prune just ran: the throttle would skip the next one
    recorded = [goal(watch).sequence for _ in range(5)]
    clock.advance(minutes=1)

    report = watch.sweep()

    assert report.prune is not None
    assert report.prune.ran is True
    assert report.prune.signals_removed == 3
    assert retained(watch, WORKER) == recorded[-2:]


def test_opening_runs_the_sweep_and_its_forced_prune(open_with: Opener) -> None:
    watch = open_with()

    assert watch.startup_sweep is not None
    assert watch.startup_sweep.prune is not None
    assert watch.startup_sweep.prune.ran is True


# ----------------------------------------------------------------------- sequences and dedupe keys


def test_pruning_then_recording_gives_sequences_above_every_old_one(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    old = [goal(watch, key).sequence for key in (WORKER, CHILD, MANAGER, WORKER)]
    clock.advance(days=31)
    watch.prune()
    watch.delete_session(WORKER)

    fresh = [goal(watch, key).sequence for key in (WORKER, CHILD, OTHER)]

    assert min(fresh) > max(old)
    assert fresh == sorted(set(fresh))
    assert head(watch, CHILD) == fresh[1]


def test_a_pruned_dedupe_key_can_be_recorded_again_as_a_new_signal(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    first = compacted(watch, CHILD, "op-1")
    assert compacted(watch, CHILD, "op-1") == first  # retained: a duplicate changes nothing
    clock.advance(days=31)
    watch.prune()

    again = compacted(watch, CHILD, "op-1")

    assert again.sequence > first.sequence
    assert again.dedupe_key == first.dedupe_key
    assert head(watch, CHILD) == again.sequence
    assert retained(watch, CHILD) == [again.sequence]
    assert compacted(watch, CHILD, "op-1") == again
    assert_replay_matches(watch)


def test_a_retained_dedupe_key_still_deduplicates_after_a_prune(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=2))
    goal(watch, WORKER)
    goal(watch, WORKER)
    kept = compacted(watch, CHILD, "op-7")
    watch.prune()

    assert compacted(watch, CHILD, "op-7") == kept
    assert head(watch, CHILD) == kept.sequence


# ----------------------------------------------------------------------------------- replay


def test_replay_after_pruning_equals_the_stored_read_model(open_with: Opener) -> None:
    watch = open_with(Retention(max_signals=3))
    watch.upsert_session(MANAGER)
    watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1")
    for _ in range(4):
        goal(watch, CHILD)
    watch.watch(WATCHER, WORKER)
    goal(watch, WORKER)

    watch.prune()

    assert_replay_matches(watch)


def test_replay_equals_the_stored_read_model_across_prunes_and_interleaved_operations(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with(Retention(days=2, max_signals=4))
    steps: list[Callable[[], object]] = [
        lambda: watch.upsert_session(MANAGER),
        lambda: watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1"),
        lambda: watch.watch(WATCHER, WORKER),
        lambda: goal(watch, WORKER),
        lambda: watch.record_human_message(CHILD, channel="telegram"),
        watch.prune,
        lambda: goal(watch, CHILD),
        lambda: watch.drain(MANAGER),
        lambda: clock.advance(hours=30),
        lambda: compacted(watch, WORKER, "op-1"),
        lambda: watch.watch(SECOND_WATCHER, CHILD),
        watch.prune,
        lambda: goal(watch, CHILD),
        lambda: watch.drain(WATCHER),
        lambda: watch.delete_session(WORKER),
        lambda: goal(watch, OTHER),
        lambda: watch.reset_session(MANAGER),
        lambda: clock.advance(hours=20),
        watch.prune,
        lambda: watch.unwatch(SECOND_WATCHER, CHILD),
        lambda: goal(watch, WORKER),
        watch.sweep,
        lambda: clock.advance(days=3),
        watch.prune,
        lambda: goal(watch, CHILD),
    ]
    for step in steps:
        step()
        assert_replay_matches(watch)


# ------------------------------------------------------------------------ event store compaction


def test_pruning_everything_leaves_only_the_prune_event_in_the_event_store(
    open_with: Opener, clock: FakeClock
) -> None:
    watch = open_with()
    watch.upsert_session(MANAGER)
    watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1")
    for _ in range(20):
        goal(watch, CHILD)
        goal(watch, WORKER)
    watch.watch(WATCHER, WORKER)
    watch.drain(MANAGER)
    watch.delete_session(WORKER)
    before = watch.store.stored_event_count()
    clock.advance(days=31)

    report = watch.prune()

    assert watch.store.stored_event_count() == 1
    assert report.events_deleted == before
    assert [type(event).__name__ for event in watch.store.replay()] == ["SignalsPruned"]
    assert head(watch, CHILD) > 0
    assert_replay_matches(watch)


def test_after_a_prune_the_event_store_holds_the_retained_signals_and_the_prune_event(
    open_with: Opener,
) -> None:
    watch = open_with(Retention(max_signals=5))
    watch.upsert_session(MANAGER)
    watch.watch(WATCHER, WORKER)
    for _ in range(15):
        goal(watch, WORKER)
        goal(watch, CHILD)

    watch.prune()

    assert watch.store.stored_event_count() == 5 + 1
    assert_replay_matches(watch)


def test_the_event_store_stays_small_over_repeated_prunes(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(max_signals=3))
    for _ in range(5):
        for _ in range(10):
            goal(watch, WORKER)
            watch.watch(WATCHER, WORKER)
            watch.drain(WATCHER)
        clock.advance(minutes=1)
        watch.prune()
        assert watch.store.stored_event_count() == 3 + 1
        assert_replay_matches(watch)


def test_a_prune_with_nothing_to_do_writes_no_event(open_with: Opener, clock: FakeClock) -> None:
    watch = open_with(Retention(max_signals=3))
    for _ in range(6):
        goal(watch)
    watch.watch(WATCHER, WORKER)
    watch.prune()
    count = watch.store.stored_event_count()
    history = list(watch.store.replay())
    clock.advance(minutes=1)

    report = watch.prune()

    assert report.ran is True
    assert (report.signals_removed, report.cursors_expired, report.events_deleted) == (0, 0, 0)
    assert watch.store.stored_event_count() == count
    assert list(watch.store.replay()) == history


def test_a_prune_of_a_log_of_only_retained_signals_writes_no_event(open_with: Opener) -> None:
    watch = open_with()
    for _ in range(3):
        goal(watch)
    count = watch.store.stored_event_count()

    report = watch.prune()

    assert report.events_deleted == 0
    assert watch.store.stored_event_count() == count == 3


# ---------------------------------------------------------------------------------------- archive


def archived_sequences(path: Path) -> list[int]:
    sequences = []
    for line in read_archive(path):
        data = line["data"]
        assert isinstance(data, dict)
        sequences.append(int(data["sequence"]))
    return sequences


def test_the_archive_receives_exactly_the_pruned_signals(
    open_with: Opener, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "archive.jsonl"
    watch = open_with(Retention(days=1, max_signals=4, archive=str(path)))
    keys = (WORKER, CHILD, MANAGER)
    for index in range(12):
        occurred = ago(clock, hours=23) if index % 5 == 0 else None
        goal(watch, keys[index % 3], occurred_at=occurred)
    watch.watch(WATCHER, WORKER)
    before = {key: retained(watch, key) for key in keys}
    clock.advance(hours=2)

    report = watch.prune()

    after = {key: retained(watch, key) for key in keys}
    gone = sorted(set().union(*before.values()) - set().union(*after.values()))
    assert archived_sequences(path) == gone
    assert report.archived == len(gone) == report.signals_removed
    assert set().union(*after.values()).isdisjoint(archived_sequences(path))


def test_archive_lines_are_stored_signal_events_as_json(
    open_with: Opener, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "archive.jsonl"
    watch = open_with(Retention(archive=str(path)))
    recorded = [goal(watch, CHILD), compacted(watch, WORKER, "op-1")]
    watch.watch(WATCHER, WORKER)
    watch.upsert_session(MANAGER)
    clock.advance(days=31)

    watch.prune()

    lines = path.read_bytes().splitlines()
    assert len(lines) == 2
    parsed = [json.loads(line) for line in lines]
    for line, signal in zip(parsed, recorded, strict=True):
        assert set(line) == {"id", "stream", "version", "type", "data"}
        assert line["type"] == SIGNAL_TYPE
        assert isinstance(line["id"], int)
        assert isinstance(line["version"], int)
        assert isinstance(line["stream"], str)
        assert line["data"]["sequence"] == signal.sequence
        assert line["data"]["session_key"] == signal.session_key
    assert parsed == read_archive(path)


def test_the_archive_accumulates_across_prunes_without_repeating_a_signal(
    open_with: Opener, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "archive.jsonl"
    watch = open_with(Retention(max_signals=2, archive=str(path)))
    recorded: list[int] = []
    for _ in range(3):
        recorded.extend(goal(watch).sequence for _ in range(4))
        clock.advance(minutes=1)
        watch.prune()

    assert archived_sequences(path) == recorded[:-2]
    assert retained(watch, WORKER) == recorded[-2:]


def test_the_archive_never_repeats_a_stored_event_identity_after_a_session_is_re_created(
    open_with: Opener, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "archive.jsonl"
    watch = open_with(Retention(archive=str(path)))
    first = goal(watch, CHILD)
    clock.advance(days=31)
    watch.prune()
    watch.delete_session(CHILD)
    watch.prune()  # the deleted incarnation's remaining events are compacted away
    second = goal(watch, CHILD)
    clock.advance(days=31)

    watch.prune()

    lines = read_archive(path)
    assert archived_sequences(path) == [first.sequence, second.sequence]
    identities = [(line["stream"], line["version"]) for line in lines]
    assert len(set(identities)) == len(identities), identities  # ids and versions are never reused
    assert len({line["id"] for line in lines}) == len(lines)


def test_a_deleted_sessions_signals_are_not_archived_by_a_later_prune(
    open_with: Opener, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "archive.jsonl"
    watch = open_with(Retention(archive=str(path)))
    goal(watch, CHILD)
    kept = goal(watch, WORKER)
    watch.delete_session(CHILD)
    clock.advance(days=31)

    report = watch.prune()

    assert archived_sequences(path) == [kept.sequence]
    assert report.archived == report.signals_removed == 1


def test_the_archive_file_is_readable_by_its_owner_only(
    open_with: Opener, clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "archive.jsonl"
    watch = open_with(Retention(archive=str(path)))
    goal(watch)
    clock.advance(days=31)

    watch.prune()

    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_prune_that_removes_nothing_writes_no_archive_line(open_with: Opener, tmp_path: Path) -> None:
    path = tmp_path / "archive.jsonl"
    watch = open_with(Retention(archive=str(path)))
    goal(watch)

    report = watch.prune()

    assert report.archived == 0
    assert not path.exists() or path.read_bytes() == b""


# ------------------------------------------------------------------------------ every store agrees


@pytest.mark.parametrize("other_kind", FILE_STORES)
def test_every_store_prunes_the_same_history_as_the_memory_store(tmp_path: Path, other_kind: str) -> None:
    reports: list[tuple[PruneReport, int]] = []
    models: list[ReadModel] = []
    for kind in ("memory", other_kind):
        clock = FakeClock()
        with (
            fresh_store_url(kind, tmp_path) as url,
            sessionwatch.open(url, clock=clock, retention=Retention(days=1, max_signals=5)) as watch,
        ):
            watch.upsert_session(MANAGER)
            watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1")
            watch.watch(WATCHER, WORKER)
            for index in range(12):
                occurred = clock.now() - timedelta(hours=23) if index % 4 == 0 else None
                goal(watch, (WORKER, CHILD, OTHER)[index % 3], occurred_at=occurred)
            watch.drain(MANAGER)
            clock.advance(hours=2)
            reports.append((watch.prune(), watch.store.stored_event_count()))
            models.append(watch.store.read_model())

    assert reports[0] == reports[1]
    assert reports[0][0].signals_removed > 0
    assert models[0] == models[1]


# ------------------------------------------------------------------------------ a reopened store


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_the_throttle_counts_from_the_stored_last_prune_after_reopening(store_url: str) -> None:
    clock = FakeClock()
    url = store_url
    policy = Retention(max_signals=1)
    with sessionwatch.open(url, clock=clock, retention=policy) as watch:
        watch.prune()
    clock.advance(minutes=40)
    with sessionwatch.open(url, clock=clock, retention=policy, sweep_on_open=False) as watch:
        goal(watch)
        clock.advance(minutes=19)
        goal(watch)
        assert len(retained(watch, WORKER)) == 2  # 59 minutes after the stored prune
        clock.advance(minutes=2)
        last = goal(watch).sequence
        assert retained(watch, WORKER) == [last]


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_the_throttle_counts_from_the_last_prune_of_any_process_sharing_the_store(store_url: str) -> None:
    clock = FakeClock()
    url = store_url
    policy = Retention(max_signals=1)
    with sessionwatch.open(url, clock=clock, retention=policy) as first:
        clock.advance(minutes=50)
        with sessionwatch.open(url, clock=clock, retention=policy) as second:  # its sweep prunes now
            pruned_at = second.store.last_prune_ms()
            assert pruned_at == to_epoch_ms(clock.now())
            goal(second)
            goal(second)
        clock.advance(minutes=11)  # 61 minutes after the first opened, 11 after the last prune

        goal(first)

        assert len(retained(first, WORKER)) == 3
        assert first.store.last_prune_ms() == pruned_at


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_sequences_stay_above_every_pruned_or_deleted_one_after_reopening(store_url: str) -> None:
    clock = FakeClock()
    url = store_url
    with sessionwatch.open(url, clock=clock) as watch:
        old = [goal(watch, key).sequence for key in (WORKER, CHILD, WORKER)]
        clock.advance(days=31)
        watch.prune()
        watch.delete_session(CHILD)
    with sessionwatch.open(url, clock=clock) as watch:
        fresh = goal(watch, CHILD).sequence
        assert fresh > max(old)
        assert head(watch, WORKER) == old[-1]
        assert changes(watch, WORKER).earliest_available_sequence == old[-1] + 1
        assert changes(watch, CHILD).history_gap is False
        assert_replay_matches(watch)


# ------------------------------------------------------------------------------------- the policy


@pytest.mark.parametrize("days", [0, -1, math.nan, math.inf])
def test_a_retention_window_must_be_a_finite_positive_number_of_days(days: float) -> None:
    with pytest.raises(ValidationError):
        Retention(days=days)


@pytest.mark.parametrize("max_signals", [0, -5])
def test_the_cap_must_keep_at_least_one_signal(max_signals: int) -> None:
    with pytest.raises(ValidationError):
        Retention(max_signals=max_signals)


def test_the_default_retention_is_thirty_days_and_fifty_thousand_signals_pruned_hourly() -> None:
    policy = Retention()

    assert (policy.days, policy.max_signals, policy.archive) == (30, 50_000, None)
    assert policy.prune_interval == timedelta(hours=1)
