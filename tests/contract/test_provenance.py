"""Watch provenance and ambient group watches, on every store and through both façades.

A cursor is `explicit` (asked for, a spawn edge, a producer's watcher) or `ambient`. Before a human
turn into a group session is recorded, its agent's main session becomes an ambient watcher of it, so
that turn (the first one too) leaves it a notice; an ambient cursor's
notices are queue-only (pending and drained as any, never woken); an explicit watch promotes an
ambient cursor, keeping its positions; an ambient registration never downgrades an explicit one;
a run's end, where it notifies, reaches an ambient cursor only when the producer named it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from auditing import assert_audit_clean
from fakes import ProbingWaker
from stores import fresh_store_url

import sessionwatch
from sessionwatch import Actor, SessionWatch, SignalKind
from sessionwatch.adapters.history.jsonl import export_history, import_history
from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.signals import notifying_kinds
from sessionwatch.testing import FakeClock

MAIN = "agent:main:main"
GROUP = "agent:main:telegram:group:42"
OTHER_GROUP = "agent:ops:discord:channel:7"
DIRECT = "agent:main:telegram:direct:alice"
COORDINATOR = "agent:main:coordinator"
CHILD = "agent:main:subagent:child"


@pytest.fixture
def woken(store_url: str, clock: FakeClock, waker: ProbingWaker) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store of each kind whose wakes `waker` records."""
    with sessionwatch.open(store_url, clock=clock, waker=waker) as opened:
        yield opened


def provenance(watch: SessionWatch, watcher: str, target: str) -> tuple[str, int, int, int] | None:
    cursor = watch.cursor(watcher, target)
    if cursor is None:
        return None
    return cursor.provenance, cursor.last_seen, cursor.notified, cursor.material


def human(watch: SessionWatch, key: str, n: int) -> int | None:
    signal = watch.record_human_message(key, channel="telegram", dedupe_key=f"{key}:{n}")
    return signal.sequence if signal is not None else None


def woken_for(waker: ProbingWaker, watcher: str) -> list[str]:
    return [reason for who, reason in waker.calls if who == watcher]


def test_the_first_human_turn_in_a_group_leaves_its_main_session_a_queue_only_notice(
    woken: SessionWatch, waker: ProbingWaker
) -> None:
    e = human(woken, GROUP, 1)  # the main session watches the group from its head before the turn
    assert e is not None
    assert provenance(woken, MAIN, GROUP) == ("ambient", 0, e, e)
    (notice,) = woken.pending_notices(MAIN)
    assert (notice.target, notice.last_seen, notice.provenance) == (GROUP, 0, "ambient")
    f = human(woken, GROUP, 2)
    assert provenance(woken, MAIN, GROUP) == ("ambient", 0, e, f)
    assert woken_for(waker, MAIN) == []  # queue-only: never woken
    assert_audit_clean(woken)


def test_a_group_with_history_is_watched_ambiently_from_its_head_before_the_turn(watch: SessionWatch) -> None:
    head = watch.record(GROUP, kind=SignalKind.COMPACTED, actor=Actor.system(), summary="session compacted")
    e = human(watch, GROUP, 1)
    assert e is not None
    assert provenance(watch, MAIN, GROUP) == ("ambient", head.sequence, e, e)
    assert [n.last_seen for n in watch.drain(MAIN)] == [head.sequence]


def test_a_group_registered_with_kind_group_is_watched_ambiently_whatever_its_key(
    watch: SessionWatch,
) -> None:
    watch.upsert_session("agent:main:team-room", kind="group")
    e = human(watch, "agent:main:team-room", 1)
    assert provenance(watch, MAIN, "agent:main:team-room") == ("ambient", 0, e, e)


def test_a_turn_into_a_session_that_is_no_group_registers_no_ambient_watch(watch: SessionWatch) -> None:
    watch.upsert_session(DIRECT, kind="main")
    human(watch, DIRECT, 1)
    assert watch.cursor(MAIN, DIRECT) is None


@pytest.mark.parametrize("key", ["agent:main:cron:nightly:group:42", "agent:main:Cron:sweep:channel:7"])
def test_a_cron_session_whose_key_names_a_group_is_watched_by_no_main_session(
    watch: SessionWatch, key: str
) -> None:
    human(watch, key, 1)
    human(watch, key, 2)
    assert watch.cursor(MAIN, key) is None


def test_a_spawned_child_whose_key_or_kind_says_group_is_watched_by_no_main_session(
    watch: SessionWatch,
) -> None:
    keyed = "agent:main:telegram:group:99"  # its key says group
    registered = "agent:main:subagent:room"  # registered as a group
    for run, child in enumerate((keyed, registered)):
        assert watch.record_spawn(requester_key=COORDINATOR, child_key=child, child_run_id=f"r{run}")
    watch.upsert_session(registered, kind="group")
    for child in (keyed, registered):
        assert human(watch, child, 1) is not None  # its spawn edge watches it
        assert watch.cursor(MAIN, child) is None
        assert [n.target for n in watch.pending_notices(COORDINATOR) if n.target == child] == [child]


def test_an_agents_turn_into_a_group_registers_no_ambient_watch(watch: SessionWatch) -> None:
    watch.record_human_message(GROUP, channel="telegram", actor=Actor.agent(COORDINATOR))
    assert watch.cursor(MAIN, GROUP) is None


def test_the_ambient_watcher_is_the_groups_own_agents_main_session(watch: SessionWatch) -> None:
    e = human(watch, OTHER_GROUP, 1)
    assert provenance(watch, "agent:ops:main", OTHER_GROUP) == ("ambient", 0, e, e)
    assert watch.cursor(MAIN, OTHER_GROUP) is None


def test_main_key_names_the_main_session_that_watches_groups(store_url: str, clock: FakeClock) -> None:
    with sessionwatch.open(store_url, clock=clock, main_key="home") as watch:
        e = human(watch, GROUP, 1)
        assert provenance(watch, "agent:main:home", GROUP) == ("ambient", 0, e, e)
        assert watch.cursor(MAIN, GROUP) is None


def test_a_group_never_watches_itself_ambiently(store_url: str, clock: FakeClock) -> None:
    with sessionwatch.open(store_url, clock=clock, main_key="telegram:group:42") as watch:
        assert human(watch, GROUP, 1) is None  # nobody watches it: an ordinary unwatched turn
        assert watch.cursor(GROUP, GROUP) is None


@pytest.mark.parametrize("main_key", ["", " main", "agent:main:main", "two\nlines", 7])
def test_a_malformed_main_key_is_refused_naming_it(store_url: str, main_key: object) -> None:
    with pytest.raises(InvalidQuery) as refused:
        sessionwatch.open(store_url, main_key=main_key)  # type: ignore[arg-type]
    assert refused.value.field == "main_key"


def test_an_ambient_watch_is_queue_only_drained_as_any_and_never_woken(
    woken: SessionWatch, waker: ProbingWaker
) -> None:
    assert woken.watch(MAIN, DIRECT, target_agent_id="main", ambient=True)
    e = human(woken, DIRECT, 1)
    assert e is not None
    (notice,) = woken.drain(MAIN)
    assert (notice.target, notice.last_seen, notice.provenance) == (DIRECT, 0, "ambient")
    assert provenance(woken, MAIN, DIRECT) == ("ambient", e, e, e)
    assert woken_for(waker, MAIN) == []


def test_an_explicit_watch_promotes_an_ambient_cursor_keeping_its_positions_and_wakes_its_notice(
    woken: SessionWatch, waker: ProbingWaker
) -> None:
    d = human(woken, GROUP, 1)
    e = human(woken, GROUP, 2)
    assert d is not None
    assert e is not None
    assert woken.watch(MAIN, GROUP)
    assert provenance(woken, MAIN, GROUP) == ("explicit", 0, d, e)
    assert woken_for(waker, MAIN) == [f"session-state:{GROUP}"]  # its pending notice is owed a wake now
    f = human(woken, GROUP, 3)
    assert provenance(woken, MAIN, GROUP) == ("explicit", 0, d, f)
    assert woken.drain(MAIN)[0].provenance == "explicit"


def test_promoting_an_ambient_cursor_keeps_its_age_so_it_expires_when_it_would_have(
    watch: SessionWatch, clock: FakeClock
) -> None:
    human(watch, GROUP, 1)
    cursor = watch.cursor(MAIN, GROUP)
    assert cursor is not None
    clock.advance(days=20)
    assert watch.watch(MAIN, GROUP)  # promoted: explicit now, its last update still the turn's
    promoted = watch.cursor(MAIN, GROUP)
    assert promoted is not None
    assert (promoted.provenance, promoted.updated_at) == ("explicit", cursor.updated_at)
    clock.advance(days=11)  # 31 days after its last update, 11 after its promotion
    watch.prune()
    assert watch.cursor(MAIN, GROUP) is None
    assert_audit_clean(watch)


def test_an_ambient_registration_never_downgrades_an_explicit_watch(
    woken: SessionWatch, waker: ProbingWaker
) -> None:
    assert woken.watch(MAIN, GROUP, target_agent_id="main")
    assert woken.watch(MAIN, GROUP, target_agent_id="main", ambient=True)
    e = human(woken, GROUP, 1)  # the group turn's ambient registration leaves the explicit cursor too
    assert e is not None
    assert provenance(woken, MAIN, GROUP) == ("explicit", 0, e, e)
    assert woken_for(waker, MAIN) == [f"session-state:{GROUP}"]


def test_unwatching_an_ambient_cursor_lasts_until_the_next_human_turn(watch: SessionWatch) -> None:
    d = human(watch, GROUP, 1)
    assert d is not None
    assert watch.unwatch(MAIN, GROUP)
    assert watch.cursor(MAIN, GROUP) is None
    e = human(watch, GROUP, 2)  # the main session watches anew from the head, then hears of the turn
    assert e is not None
    assert provenance(watch, MAIN, GROUP) == ("ambient", d, e, e)


def test_a_run_end_that_notifies_skips_ambient_cursors_unless_the_producer_named_the_watcher(
    store_url: str, clock: FakeClock
) -> None:
    waker = ProbingWaker()
    with sessionwatch.open(store_url, clock=clock, waker=waker, notify_terminal_runs=True) as watch:
        spawned = watch.record_spawn(requester_key=COORDINATOR, child_key=CHILD, child_run_id="run-1")
        assert spawned is not None
        s = spawned.sequence
        assert watch.watch(MAIN, CHILD, ambient=True)
        assert watch.watch("agent:ops:main", CHILD, target_agent_id="main", ambient=True)
        ended = watch.record(  # the producer names MAIN: notified, still queue-only
            CHILD,
            kind=SignalKind.RUN_COMPLETED,
            actor=Actor.system(),
            summary="child run completed",
            run_id="run-1",
            watchers=[MAIN],
        )
        assert ended is not None
        e = ended.sequence
        assert provenance(watch, COORDINATOR, CHILD) == ("explicit", s, e, e)
        assert provenance(watch, MAIN, CHILD) == ("ambient", s, e, e)
        assert provenance(watch, "agent:ops:main", CHILD) == ("ambient", s, s, s)
        assert woken_for(waker, COORDINATOR) == [f"session-state:{CHILD}"]
        assert woken_for(waker, MAIN) == []
        assert_audit_clean(watch)


def test_the_sweep_refreezes_an_ambient_notice_without_waking_it(
    store_url: str, clock: FakeClock, waker: ProbingWaker
) -> None:
    with sessionwatch.open(store_url, clock=clock, waker=waker) as watch:
        watch.upsert_session(MAIN)
        human(watch, GROUP, 1)
        human(watch, GROUP, 2)
        assert watch.watch(COORDINATOR, GROUP)
        watch.upsert_session(COORDINATOR)
        human(watch, GROUP, 3)
        waker.calls.clear()
        clock.advance(seconds=1)
        report = watch.sweep()
        assert report.republished == 2
        assert waker.calls == [(COORDINATOR, f"session-state:{GROUP}")]
        assert watch.cursor(MAIN, GROUP) is not None
        assert_audit_clean(watch)


def test_reset_delete_and_prune_treat_ambient_cursors_as_any(watch: SessionWatch, clock: FakeClock) -> None:
    human(watch, GROUP, 1)
    human(watch, OTHER_GROUP, 1)
    watch.reset_session(MAIN)  # a reset drops the cursors the session holds
    assert watch.cursor(MAIN, GROUP) is None
    watch.delete_session(OTHER_GROUP)  # a deletion those on it
    assert watch.cursor("agent:ops:main", OTHER_GROUP) is None
    human(watch, GROUP, 2)
    assert watch.cursor(MAIN, GROUP) is not None
    clock.advance(days=40)
    watch.prune()  # an idle cursor expires, ambient or not
    assert watch.cursor(MAIN, GROUP) is None
    assert_audit_clean(watch)


def test_provenance_survives_a_reopen_and_an_export_and_import(
    store_url: str, store_kind: str, clock: FakeClock, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with sessionwatch.open(store_url, clock=clock) as watch:
        human(watch, GROUP, 1)
        human(watch, GROUP, 2)
        assert watch.watch(COORDINATOR, GROUP)
        expected = [provenance(watch, w, GROUP) for w in (MAIN, COORDINATOR)]
        assert_audit_clean(watch)
        exported = io.StringIO()
        export_history(watch.store, exported)
    if store_kind != "memory":  # a memory store ends with its process
        with sessionwatch.open(store_url, clock=clock) as reopened:
            assert [provenance(reopened, w, GROUP) for w in (MAIN, COORDINATOR)] == expected
    lines = exported.getvalue().splitlines()
    with (
        fresh_store_url(store_kind, tmp_path_factory.mktemp("imported")) as target_url,
        sessionwatch.open(target_url, clock=clock, sweep_on_open=False) as target,
    ):
        import_history(target.store, lines, notifying=notifying_kinds(terminal_runs=False))
        assert [provenance(target, w, GROUP) for w in (MAIN, COORDINATOR)] == expected
        assert_audit_clean(target)
