"""Terminal runs may notify, on every store and through both façades.

With `notify_terminal_runs=True`, `run_completed` and `run_failed` notify the spawn-edge, explicit and
producer watchers as any notifying kind does; by default they stay log-only. The replay, the audit
and an import follow the store's setting, so they rebuild exactly the cursors the writes left.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from fakes import ProbingWaker
from stores import fresh_store_url

import sessionwatch
from sessionwatch import Actor, SessionWatch, SignalKind
from sessionwatch.adapters.history.jsonl import export_history, import_history
from sessionwatch.domain.signals import notifying_kinds
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
COORDINATOR = "agent:main:coordinator"
CHILD = "agent:main:subagent:child"


@pytest.fixture
def notifying(store_url: str, clock: FakeClock, waker: ProbingWaker) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store of each kind, with terminal runs notifying."""
    with sessionwatch.open(store_url, clock=clock, waker=waker, notify_terminal_runs=True) as opened:
        yield opened


def lnm(watch: SessionWatch, watcher: str, target: str) -> tuple[int, int, int] | None:
    cursor = watch.cursor(watcher, target)
    return None if cursor is None else (cursor.last_seen, cursor.notified, cursor.material)


def spawn(watch: SessionWatch, run: str = "run-1") -> int:
    signal = watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id=run)
    assert signal is not None
    return signal.sequence


def end(watch: SessionWatch, outcome: str = "ok", run: str = "run-1", requester: str = MANAGER) -> int:
    signal = watch.record_run_terminal(
        child_key=CHILD,
        run_id=run,
        requester_key=requester,
        outcome=outcome,  # type: ignore[arg-type]
    )
    assert signal is not None
    return signal.sequence


def test_by_default_a_terminal_run_stays_log_only(watch: SessionWatch) -> None:
    s = spawn(watch)
    end(watch, "ok")
    end(watch, "error", run="run-2")
    assert lnm(watch, MANAGER, CHILD) == (s, s, s)
    assert watch.pending_notices(MANAGER) == []


def test_a_completed_run_notifies_the_spawn_edge_watcher_when_terminal_runs_notify(
    notifying: SessionWatch, waker: ProbingWaker
) -> None:
    s = spawn(notifying)
    e = end(notifying, "ok")
    assert lnm(notifying, MANAGER, CHILD) == (s, e, e)
    assert [(n.target, n.last_seen) for n in notifying.pending_notices(MANAGER)] == [(CHILD, s)]
    assert (MANAGER, f"session-state:{CHILD}") in waker.calls


@pytest.mark.parametrize("outcome", ["error", "timeout", "cancelled"])
def test_a_failed_run_notifies_an_explicit_watcher_when_terminal_runs_notify(
    notifying: SessionWatch, outcome: str
) -> None:
    spawn(notifying)
    assert notifying.watch(COORDINATOR, CHILD)
    head = notifying.session_status(CHILD).state_version
    e = end(notifying, outcome)
    assert lnm(notifying, COORDINATOR, CHILD) == (head, e, e)
    assert [n.last_seen for n in notifying.pending_notices(COORDINATOR)] == [head]


def test_a_terminal_run_reaches_a_producer_watcher_without_a_cursor_from_zero(
    notifying: SessionWatch,
) -> None:
    signal = notifying.record(
        CHILD,
        kind=SignalKind.RUN_COMPLETED,
        actor=Actor.system(),
        summary="child run completed",
        watchers=(COORDINATOR,),
    )
    e = signal.sequence
    assert lnm(notifying, COORDINATOR, CHILD) == (0, e, e)
    assert [n.last_seen for n in notifying.pending_notices(COORDINATOR)] == [0]


@pytest.mark.parametrize("before", ["never-watched", "reset", "not-the-spawner"])
def test_a_terminal_run_reaches_its_requester_without_a_cursor_from_zero(
    notifying: SessionWatch, waker: ProbingWaker, before: str
) -> None:
    """The requester `record_run_terminal` names is a producer watcher: no cursor, one from `(0, e, e)`."""
    requester = MANAGER
    if before == "reset":  # the spawner's cursor went with its reset
        spawn(notifying)
        notifying.reset_session(MANAGER)
    elif before == "not-the-spawner":
        spawn(notifying)
        requester = COORDINATOR
    e = end(notifying, "error", requester=requester)
    assert lnm(notifying, requester, CHILD) == (0, e, e)
    [notice] = notifying.pending_notices(requester)
    assert (notice.target, notice.last_seen, notice.provenance) == (CHILD, 0, "explicit")
    assert (requester, f"session-state:{CHILD}") in waker.calls
    assert_audit_clean(notifying)


def test_a_terminal_run_gives_a_requester_holding_an_ambient_cursor_a_queue_only_notice(
    notifying: SessionWatch, waker: ProbingWaker
) -> None:
    assert notifying.watch(COORDINATOR, CHILD, target_agent_id="main", ambient=True)
    e = end(notifying, "ok", requester=COORDINATOR)
    cursor = notifying.cursor(COORDINATOR, CHILD)
    assert cursor is not None
    assert (cursor.provenance, cursor.last_seen, cursor.notified, cursor.material) == ("ambient", 0, e, e)
    assert [n.provenance for n in notifying.pending_notices(COORDINATOR)] == ["ambient"]
    assert [who for who, _ in waker.calls if who == COORDINATOR] == []  # queue-only: never woken
    assert_audit_clean(notifying)


def test_by_default_a_terminal_run_leaves_its_requester_without_a_cursor(watch: SessionWatch) -> None:
    end(watch, "ok", requester=COORDINATOR)
    assert watch.cursor(COORDINATOR, CHILD) is None
    assert watch.pending_notices(COORDINATOR) == []


def test_a_terminal_run_by_the_watcher_itself_notifies_it_not(notifying: SessionWatch) -> None:
    s = spawn(notifying)
    notifying.record(
        CHILD, kind=SignalKind.RUN_FAILED, actor=Actor.agent(MANAGER), summary="child run failed"
    )
    assert lnm(notifying, MANAGER, CHILD) == (s, s, s)


def test_drain_then_a_second_terminal_run_opens_one_follow_up(notifying: SessionWatch) -> None:
    s = spawn(notifying)
    first = end(notifying, "ok")
    second = end(notifying, "error", run="run-2")
    assert [n.last_seen for n in notifying.drain(MANAGER)] == [s]
    assert lnm(notifying, MANAGER, CHILD) == (first, second, second)
    assert [n.last_seen for n in notifying.drain(MANAGER)] == [first]
    assert notifying.pending_notices(MANAGER) == []


def test_the_replay_and_the_audit_follow_the_stores_setting(notifying: SessionWatch) -> None:
    spawn(notifying)
    end(notifying, "ok")
    notifying.watch(COORDINATOR, CHILD)
    end(notifying, "cancelled", run="run-2")
    notifying.drain(MANAGER)
    assert notifying.rebuild_read_model().cursors == notifying.store.read_model().cursors
    assert_audit_clean(notifying)


@pytest.mark.parametrize("elsewhere", [False, True], ids=["one-process", "second-process"])
def test_an_import_into_a_store_with_terminal_runs_notifying_rebuilds_their_cursors(
    notifying: SessionWatch, store_kind: str, tmp_path: Path, elsewhere: bool
) -> None:
    spawn(notifying)
    end(notifying, "ok")
    notifying.watch(COORDINATOR, CHILD)
    end(notifying, "error", run="run-2")
    exported = io.StringIO()
    export_history(notifying.store, exported)
    with (
        fresh_store_url(store_kind, tmp_path, "imported.db") as url,
        sessionwatch.open(url, sweep_on_open=False, notify_terminal_runs=True) as target,
    ):
        lines = exported.getvalue().splitlines(keepends=True)
        import_history(
            target.store, lines, check_elsewhere=elsewhere, notifying=notifying_kinds(terminal_runs=True)
        )
        assert target.store.read_model().cursors == notifying.store.read_model().cursors
        assert_audit_clean(target)
