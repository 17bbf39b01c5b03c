"""The notice protocol end to end (SPEC §4, §5, §6, §9, §13): every store runs this suite.

Sequences are taken from the signals the store returns (a fresh store numbers them consecutively),
so each worked example of SPEC §6.6 is checked with exact `(L, N, M)` tuples after every step.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from auditing import assert_audit_clean
from fakes import FailingWaker, ProbingWaker

import sessionwatch
from sessionwatch import (
    Actor,
    InvalidSignal,
    SessionWatch,
    Signal,
    SignalInput,
    SignalKind,
    UnknownSession,
    notice_text,
)
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
WORKER = "agent:main:worker"
OTHER = "agent:main:other"
HELPER = "agent:main:subagent:helper"
OPS = "agent:ops:main"

Positions = tuple[int, int, int]


@pytest.fixture
def awake(store_url: str, clock: FakeClock, waker: ProbingWaker) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store of each kind, with a recording waker."""
    with sessionwatch.open(store_url, clock=clock, waker=waker) as opened:
        yield opened


def lnm(watch: SessionWatch, watcher: str, target: str, agent_id: str | None = None) -> Positions | None:
    """The cursor's `(L, N, M)`, or None."""
    cursor = watch.cursor(watcher, target, target_agent_id=agent_id)
    return None if cursor is None else (cursor.last_seen, cursor.notified, cursor.material)


def pending(watch: SessionWatch, watcher: str) -> list[tuple[str, int]]:
    """`(target, changesSince)` of every pending notice of the watcher."""
    return [(n.target, n.last_seen) for n in watch.pending_notices(watcher)]


def spawn(watch: SessionWatch, child: str = CHILD, run: str = "run-1", requester: str = MANAGER) -> int:
    signal = watch.record_spawn(requester_key=requester, child_key=child, child_run_id=run)
    assert signal is not None
    return signal.sequence


def human(watch: SessionWatch, key: str = CHILD, *, agent_id: str | None = None) -> int:
    """A human turn through the strict API (no gate): the signal's sequence."""
    signal = watch.record(
        key,
        kind=SignalKind.HUMAN_DIRECT_MESSAGE,
        actor=Actor.human(),
        summary="human message via telegram",
        agent_id=agent_id,
    )
    return signal.sequence


def goal(watch: SessionWatch, key: str, actor: Actor, *, watchers: tuple[str, ...] = ()) -> Signal:
    return watch.record(
        key, kind=SignalKind.GOAL_CHANGED, actor=actor, summary="goal updated", watchers=watchers
    )


def event_count(watch: SessionWatch) -> int:
    return sum(1 for _ in watch.store.replay())


def changes(watch: SessionWatch, key: str, since: int) -> list[int]:
    status = watch.session_status(key, changes_since=since)
    assert status.state_changes is not None
    return [change.sequence for change in status.state_changes.events]


# ------------------------------------------------------------------------- §6.6 worked examples


def test_worked_example_one_seed_then_three_human_signals_give_one_notice(watch: SessionWatch) -> None:
    s = spawn(watch)
    assert lnm(watch, MANAGER, CHILD) == (s, s, s)
    assert pending(watch, MANAGER) == []
    steps = []
    for _ in range(3):
        human(watch)
        steps.append(lnm(watch, MANAGER, CHILD))
    assert steps == [(s, s + 1, s + 1), (s, s + 1, s + 2), (s, s + 1, s + 3)]
    assert pending(watch, MANAGER) == [(CHILD, s)]


def test_worked_example_two_drain_opens_exactly_one_follow_up_then_closes(watch: SessionWatch) -> None:
    s = spawn(watch)
    human(watch)
    human(watch)
    assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 2)
    drained = watch.drain(MANAGER)
    assert [(n.target, n.last_seen) for n in drained] == [(CHILD, s)]
    assert lnm(watch, MANAGER, CHILD) == (s + 1, s + 2, s + 2)
    assert pending(watch, MANAGER) == [(CHILD, s + 1)]
    drained = watch.drain(MANAGER)
    assert [(n.target, n.last_seen) for n in drained] == [(CHILD, s + 1)]
    assert lnm(watch, MANAGER, CHILD) == (s + 2, s + 2, s + 2)
    assert pending(watch, MANAGER) == []
    assert watch.drain(MANAGER) == []


def test_worked_example_three_log_only_signal_is_not_reopened_by_the_sweep(watch: SessionWatch) -> None:
    s = spawn(watch)
    human(watch)
    terminal = watch.record_run_terminal(child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="ok")
    assert terminal is not None
    assert terminal.sequence == s + 2
    assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 1)
    assert [(n.target, n.last_seen) for n in watch.drain(MANAGER)] == [(CHILD, s)]
    assert lnm(watch, MANAGER, CHILD) == (s + 1, s + 1, s + 1)
    assert pending(watch, MANAGER) == []
    report = watch.sweep()
    assert (report.refrozen, report.republished) == (0, 0)
    assert lnm(watch, MANAGER, CHILD) == (s + 1, s + 1, s + 1)
    assert pending(watch, MANAGER) == []


# ------------------------------------------------------------------------------ notice text


def test_notice_text_is_byte_exact(watch: SessionWatch) -> None:
    s = spawn(watch)
    human(watch)
    expected = (
        'Session "agent:main:subagent:child" changed (other actor). Reconcile before acting: '
        f'session_status sessionKey "agent:main:subagent:child" changesSince {s}.'
    )
    [notice] = watch.pending_notices(MANAGER)
    assert notice.text.encode() == expected.encode()
    assert notice_text(CHILD, s) == expected
    assert (notice.watcher, notice.target, notice.target_agent_id, notice.last_seen) == (
        MANAGER,
        CHILD,
        "main",
        s,
    )


def test_twenty_rapid_changes_give_one_byte_identical_notice(watch: SessionWatch) -> None:
    s = spawn(watch)
    human(watch)
    first = watch.pending_notices(MANAGER)
    for _ in range(19):
        human(watch)
    assert watch.pending_notices(MANAGER) == first
    assert len(first) == 1
    assert lnm(watch, MANAGER, CHILD) == (s, s + 1, s + 20)


# ------------------------------------------------------------------------ explicit watch (§5.2)


def test_explicit_watch_starts_at_the_head_and_history_before_never_notifies(watch: SessionWatch) -> None:
    watch.upsert_session(WORKER)
    before = [human(watch, WORKER) for _ in range(3)]
    assert watch.watch(MANAGER, WORKER) is True
    h = before[-1]
    assert lnm(watch, MANAGER, WORKER) == (h, h, h)
    assert pending(watch, MANAGER) == []
    e = human(watch, WORKER)
    assert lnm(watch, MANAGER, WORKER) == (h, e, e)
    assert pending(watch, MANAGER) == [(WORKER, h)]
    assert changes(watch, WORKER, h) == [e]


def test_explicit_watch_of_a_session_with_no_signals_starts_at_zero(watch: SessionWatch) -> None:
    watch.upsert_session(WORKER)
    assert watch.watch(MANAGER, WORKER) is True
    assert lnm(watch, MANAGER, WORKER) == (0, 0, 0)
    assert pending(watch, MANAGER) == []


def test_rewatch_returns_true_and_never_clobbers_a_pending_notice(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, WORKER) is True
    e = human(watch, WORKER)
    human(watch, WORKER)
    before = watch.cursor(MANAGER, WORKER)
    events = event_count(watch)
    assert watch.watch(MANAGER, WORKER) is True
    assert watch.cursor(MANAGER, WORKER) == before
    assert lnm(watch, MANAGER, WORKER) == (0, e, e + 1)
    assert pending(watch, MANAGER) == [(WORKER, 0)]
    assert event_count(watch) == events


def test_rewatch_does_not_reset_a_seeded_cursor(watch: SessionWatch) -> None:
    s = spawn(watch)
    e = human(watch)
    assert watch.watch(MANAGER, CHILD) is True
    assert lnm(watch, MANAGER, CHILD) == (s, e, e)


@pytest.mark.parametrize(
    ("watcher", "target", "agent_id"),
    [
        (MANAGER, MANAGER, None),
        (MANAGER, f"  {MANAGER} ", None),
        (MANAGER, MANAGER, "main"),
        ("global", WORKER, None),
        ("cron:nightly", WORKER, None),
        (MANAGER, "global", None),
    ],
    ids=["self", "self-padded", "self-explicit-agent", "bare-watcher", "bare-cron-watcher", "bare-target"],
)
def test_watch_is_refused_and_writes_nothing(
    watch: SessionWatch, watcher: str, target: str, agent_id: str | None
) -> None:
    watch.upsert_session(WORKER)
    human(watch, WORKER)
    model = watch.store.read_model()
    events = event_count(watch)
    assert watch.watch(watcher, target, target_agent_id=agent_id) is False
    assert watch.store.read_model() == model
    assert event_count(watch) == events
    assert watch.store.read_model().all_cursors() == []


def test_a_bare_target_with_its_agent_id_is_agent_scoped(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, "global", target_agent_id="ops") is True
    human(watch, "global", agent_id="main")
    assert lnm(watch, MANAGER, "global", "ops") == (0, 0, 0)
    assert lnm(watch, MANAGER, "global", "main") is None
    assert pending(watch, MANAGER) == []
    e = human(watch, "global", agent_id="ops")
    assert lnm(watch, MANAGER, "global", "ops") == (0, e, e)
    [notice] = watch.pending_notices(MANAGER)
    assert (notice.target, notice.target_agent_id, notice.last_seen) == ("global", "ops", 0)
    assert notice.text == notice_text("global", 0)


# ---------------------------------------------------------------------- producer watchers (§5.1)


def test_producer_watcher_without_a_cursor_gets_zero_e_e_and_changes_since_zero(watch: SessionWatch) -> None:
    signal = goal(watch, WORKER, Actor.system(), watchers=(MANAGER,))
    e = signal.sequence
    assert lnm(watch, MANAGER, WORKER) == (0, e, e)
    [notice] = watch.pending_notices(MANAGER)
    assert notice.last_seen == 0
    assert notice.text.endswith("changesSince 0.")


def test_producer_watchers_are_deduplicated_with_holders_and_bare_keys_dropped(watch: SessionWatch) -> None:
    assert watch.watch(OTHER, WORKER) is True
    e = goal(watch, WORKER, Actor.system(), watchers=(MANAGER, MANAGER, OTHER, "global")).sequence
    cursors = watch.store.read_model().all_cursors()
    assert sorted((c.watcher, c.last_seen, c.notified, c.material) for c in cursors) == [
        (MANAGER, 0, e, e),
        (OTHER, 0, e, e),
    ]
    assert pending(watch, MANAGER) == [(WORKER, 0)]
    assert pending(watch, OTHER) == [(WORKER, 0)]


def test_producer_watcher_with_a_cursor_gets_an_ordinary_material_update(watch: SessionWatch) -> None:
    s = spawn(watch)
    e = goal(watch, CHILD, Actor.system(), watchers=(MANAGER,)).sequence
    assert lnm(watch, MANAGER, CHILD) == (s, e, e)


def test_goal_change_notifies_the_spawn_edge_watcher(watch: SessionWatch) -> None:
    watch.upsert_session(CHILD, spawned_by=MANAGER)
    signal = watch.record_goal_changed(CHILD, summary="goal updated")
    assert signal is not None
    assert lnm(watch, MANAGER, CHILD) == (0, signal.sequence, signal.sequence)
    assert pending(watch, MANAGER) == [(CHILD, 0)]


def test_goal_change_notifies_the_parent_when_there_is_no_spawner(watch: SessionWatch) -> None:
    watch.upsert_session(CHILD, parent_session_key=OTHER)
    signal = watch.record_goal_changed(CHILD, summary="goal created")
    assert signal is not None
    assert lnm(watch, OTHER, CHILD) == (0, signal.sequence, signal.sequence)


# ---------------------------------------------------------------------- self-suppression (§6.1)


def test_a_watcher_gets_no_notice_for_its_own_action(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, WORKER) is True
    assert watch.watch(OTHER, WORKER) is True
    e = goal(watch, WORKER, Actor.agent(MANAGER)).sequence
    assert lnm(watch, MANAGER, WORKER) == (0, 0, 0)
    assert pending(watch, MANAGER) == []
    assert lnm(watch, OTHER, WORKER) == (0, e, e)


def test_a_producer_watcher_gets_no_cursor_for_its_own_action(watch: SessionWatch) -> None:
    goal(watch, WORKER, Actor.agent(MANAGER), watchers=(MANAGER,))
    assert lnm(watch, MANAGER, WORKER) is None
    assert pending(watch, MANAGER) == []


def test_self_suppression_keeps_an_outstanding_notice_as_it_was(watch: SessionWatch) -> None:
    s = spawn(watch)
    e = human(watch)
    goal(watch, CHILD, Actor.agent(MANAGER))
    assert lnm(watch, MANAGER, CHILD) == (s, e, e)
    assert pending(watch, MANAGER) == [(CHILD, s)]


def test_self_suppression_matches_a_padded_actor_key(watch: SessionWatch) -> None:
    """Keys are trimmed (SPEC §2): ` agent:main:main ` acting is the watcher itself."""
    assert watch.watch(MANAGER, WORKER) is True
    goal(watch, WORKER, Actor.agent(f" {MANAGER} "))
    assert lnm(watch, MANAGER, WORKER) == (0, 0, 0)
    assert pending(watch, MANAGER) == []


def test_a_spawn_recorded_by_a_padded_requester_key_seeds_the_requesters_cursor(watch: SessionWatch) -> None:
    """Keys are trimmed (SPEC §2): the seed belongs to `agent:main:main`, reachable by its key."""
    signal = watch.record(
        CHILD,
        kind=SignalKind.CHILD_SPAWNED,
        actor=Actor.agent(f" {MANAGER} "),
        summary="child session spawned",
    )
    s = signal.sequence
    assert lnm(watch, MANAGER, CHILD) == (s, s, s)
    assert [c.watcher for c in watch.store.read_model().all_cursors()] == [MANAGER]


def test_a_strict_spawn_naming_its_requester_as_watcher_seeds_the_requester(watch: SessionWatch) -> None:
    """The reference's call shape: the requester is the agent actor and the one producer watcher."""
    signal = watch.record(
        CHILD,
        kind=SignalKind.CHILD_SPAWNED,
        actor=Actor.agent(MANAGER),
        summary="child session spawned",
        watchers=(MANAGER,),
    )
    s = signal.sequence
    assert lnm(watch, MANAGER, CHILD) == (s, s, s)
    assert [c.watcher for c in watch.store.read_model().all_cursors()] == [MANAGER]


@pytest.mark.parametrize(
    ("actor", "watchers"),
    [
        (Actor.agent(MANAGER), (OTHER,)),
        (Actor.agent(MANAGER), (MANAGER, OTHER)),
        (Actor.system(), (MANAGER,)),
        (Actor.human(), (OTHER,)),
    ],
    ids=["other-watcher", "requester-and-other", "system-actor", "human-actor"],
)
def test_a_strict_spawn_seeds_only_its_requester_and_refuses_other_watchers(
    watch: SessionWatch, actor: Actor, watchers: tuple[str, ...]
) -> None:
    """ADR-0023: a spawn seeds its agent actor's cursor; a watcher it would leave out is refused."""
    assert watch.watch(OTHER, CHILD) is True
    before = (watch.store.read_model().all_cursors(), event_count(watch))
    with pytest.raises(InvalidSignal) as refused:
        watch.record(
            CHILD,
            kind=SignalKind.CHILD_SPAWNED,
            actor=actor,
            summary="child session spawned",
            watchers=watchers,
        )
    assert refused.value.field == "watchers"
    with pytest.raises(InvalidSignal):
        watch.record_many(
            [
                SignalInput(
                    session_key=CHILD,
                    kind=SignalKind.CHILD_SPAWNED,
                    actor=actor,
                    summary="child session spawned",
                    watchers=watchers,
                )
            ]
        )
    assert (watch.store.read_model().all_cursors(), event_count(watch)) == before


# ------------------------------------------------------------------------- log-only kinds (§3.1)


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        (SignalKind.RUN_COMPLETED, None),
        (SignalKind.RUN_FAILED, {"outcome": "error"}),
        (SignalKind.COMPACTED, None),
        (SignalKind.ADOPTED, None),
        (SignalKind.CREATED, None),
    ],
)
def test_log_only_kinds_create_no_notice(
    watch: SessionWatch, kind: SignalKind, payload: dict[str, object] | None
) -> None:
    s = spawn(watch)
    assert watch.watch(OTHER, CHILD) is True
    before = watch.store.read_model().all_cursors()
    signal = watch.record(
        CHILD, kind=kind, actor=Actor.human(), summary="session adopted", payload=payload, watchers=(WORKER,)
    )
    assert watch.store.read_model().all_cursors() == before
    assert lnm(watch, MANAGER, CHILD) == (s, s, s)
    assert lnm(watch, WORKER, CHILD) is None
    assert pending(watch, MANAGER) == pending(watch, OTHER) == pending(watch, WORKER) == []
    assert changes(watch, CHILD, s) == [signal.sequence]


def test_log_only_producers_create_no_notice(watch: SessionWatch) -> None:
    s = spawn(watch)
    assert watch.record_run_terminal(child_key=CHILD, run_id="r", requester_key=MANAGER, outcome="timeout")
    assert watch.record_compacted(CHILD, operation_id="op-1")
    assert watch.record_adopted(CHILD)
    assert lnm(watch, MANAGER, CHILD) == (s, s, s)
    assert pending(watch, MANAGER) == []


@pytest.mark.parametrize("actor", [Actor.system(), Actor.human()], ids=["system", "human"])
def test_child_spawned_without_an_agent_requester_touches_no_cursor(
    watch: SessionWatch, actor: Actor
) -> None:
    assert watch.watch(MANAGER, CHILD) is True
    watch.record(CHILD, kind=SignalKind.CHILD_SPAWNED, actor=actor, summary="child session spawned")
    assert [(c.watcher, c.target_key) for c in watch.store.read_model().all_cursors()] == [(MANAGER, CHILD)]
    assert lnm(watch, MANAGER, CHILD) == (0, 0, 0)
    assert pending(watch, MANAGER) == []


def test_a_second_spawn_reseeds_the_requester_and_notifies_no_other_holder(watch: SessionWatch) -> None:
    spawn(watch)
    e = human(watch)
    assert watch.watch(OTHER, CHILD) is True
    again = spawn(watch, run="run-2")
    assert lnm(watch, MANAGER, CHILD) == (again, again, again)
    assert pending(watch, MANAGER) == []
    assert lnm(watch, OTHER, CHILD) == (e, e, e)
    assert pending(watch, OTHER) == []


def test_a_duplicate_spawn_changes_no_cursor(watch: SessionWatch) -> None:
    s = spawn(watch)
    e = human(watch)
    assert spawn(watch) == s
    assert lnm(watch, MANAGER, CHILD) == (s, e, e)


# ---------------------------------------------------------------------- human-message gate (§4)


def test_human_message_gate_opens_for_a_session_with_a_registered_cursor(watch: SessionWatch) -> None:
    watch.upsert_session(WORKER)
    assert watch.record_human_message(WORKER, channel="telegram") is None
    assert watch.session_status(WORKER).state_version == 0
    assert watch.watch(OTHER, WORKER) is True
    signal = watch.record_human_message(WORKER, channel="telegram")
    assert signal is not None
    assert lnm(watch, OTHER, WORKER) == (0, signal.sequence, signal.sequence)
    assert pending(watch, OTHER) == [(WORKER, 0)]


def test_human_message_gate_closes_again_after_unwatch(watch: SessionWatch) -> None:
    watch.upsert_session(WORKER)
    assert watch.watch(OTHER, WORKER) is True
    assert watch.unwatch(OTHER, WORKER) is True
    assert watch.record_human_message(WORKER, channel="telegram") is None
    assert watch.session_status(WORKER).state_version == 0


def test_a_cursor_on_another_agents_global_does_not_open_the_gate(watch: SessionWatch) -> None:
    watch.upsert_session("global", agent_id="main")
    assert watch.watch(MANAGER, "global", target_agent_id="ops") is True
    assert watch.record_human_message("global", channel="web", agent_id="main") is None
    assert watch.record_human_message("global", channel="web", agent_id="ops") is not None


# ------------------------------------------------------------------------------ cleanup (§5.4, §9)


def test_reset_of_the_watcher_deletes_its_cursors_but_not_the_targets_history(watch: SessionWatch) -> None:
    watch.upsert_session(MANAGER)
    s = spawn(watch)
    e = human(watch)
    assert watch.watch(MANAGER, WORKER) is True
    assert watch.watch(OTHER, MANAGER) is True
    m = human(watch, MANAGER)
    watch.reset_session(MANAGER)
    assert lnm(watch, MANAGER, CHILD) is None
    assert lnm(watch, MANAGER, WORKER) is None
    assert pending(watch, MANAGER) == []
    assert changes(watch, CHILD, 0) == [s, e]
    assert watch.session_status(CHILD).state_version == e
    assert lnm(watch, OTHER, MANAGER) == (0, m, m)


def test_reset_of_the_target_keeps_the_watchers_cursor(watch: SessionWatch) -> None:
    s = spawn(watch)
    e = human(watch)
    watch.reset_session(CHILD)
    assert lnm(watch, MANAGER, CHILD) == (s, e, e)


def test_reset_of_a_watcher_never_upserted_deletes_its_cursors(watch: SessionWatch) -> None:
    """SPEC §9: a reset deletes the cursors the session holds, whether or not it was registered."""
    watch.upsert_session(WORKER)
    assert watch.watch(MANAGER, WORKER) is True
    watch.reset_session(MANAGER)
    assert lnm(watch, MANAGER, WORKER) is None


def test_reset_of_a_watcher_never_seen_leaves_it_unknown(watch: SessionWatch) -> None:
    """SPEC §13: a session is known once upserted or recorded on; a reset is neither."""
    assert watch.watch(MANAGER, WORKER) is True
    watch.reset_session(MANAGER)
    with pytest.raises(UnknownSession):
        watch.session_status(MANAGER)
    assert [row.session_key for row in watch.sessions_list()] == []
    assert_audit_clean(watch)


def test_delete_of_the_watcher_deletes_its_cursor(watch: SessionWatch) -> None:
    watch.upsert_session(MANAGER)
    spawn(watch)
    human(watch)
    watch.delete_session(MANAGER)
    assert lnm(watch, MANAGER, CHILD) is None
    assert pending(watch, MANAGER) == []
    assert watch.session_status(CHILD).state_version > 0


def test_delete_of_the_target_deletes_the_cursor(watch: SessionWatch) -> None:
    spawn(watch)
    human(watch)
    assert watch.watch(OTHER, CHILD) is True
    watch.delete_session(CHILD)
    assert watch.store.read_model().all_cursors() == []
    assert pending(watch, MANAGER) == []


def test_delete_of_a_watcher_never_upserted_deletes_its_cursors(watch: SessionWatch) -> None:
    """SPEC §9: every cursor where the deleted session is the watcher goes."""
    spawn(watch)
    watch.delete_session(MANAGER)
    assert lnm(watch, MANAGER, CHILD) is None


def test_delete_of_a_target_never_recorded_on_deletes_the_cursor(watch: SessionWatch) -> None:
    """SPEC §9: every cursor where the deleted session is the target goes, even at (0, 0, 0)."""
    assert watch.watch(MANAGER, WORKER) is True
    watch.delete_session(WORKER)
    assert lnm(watch, MANAGER, WORKER) is None


def test_delete_of_one_agents_global_leaves_the_other_agents_cursor(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, "global", target_agent_id="main") is True
    assert watch.watch(MANAGER, "global", target_agent_id="ops") is True
    e = human(watch, "global", agent_id="main")
    human(watch, "global", agent_id="ops")
    watch.delete_session("global", agent_id="ops")
    assert lnm(watch, MANAGER, "global", "ops") is None
    assert lnm(watch, MANAGER, "global", "main") == (0, e, e)


def test_unwatch_returns_true_then_false_and_stops_notices(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, WORKER) is True
    human(watch, WORKER)
    assert watch.unwatch(MANAGER, WORKER) is True
    assert lnm(watch, MANAGER, WORKER) is None
    assert pending(watch, MANAGER) == []
    assert watch.unwatch(MANAGER, WORKER) is False
    human(watch, WORKER)
    assert lnm(watch, MANAGER, WORKER) is None


def test_unwatch_of_a_bare_target_names_its_agent(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, "global", target_agent_id="main") is True
    assert watch.watch(MANAGER, "global", target_agent_id="ops") is True
    assert watch.unwatch(MANAGER, "global", target_agent_id="ops") is True
    assert lnm(watch, MANAGER, "global", "main") == (0, 0, 0)
    assert lnm(watch, MANAGER, "global", "ops") is None


# ------------------------------------------------------------------------- draining (§6.3)


def test_pending_notices_does_not_acknowledge(watch: SessionWatch) -> None:
    s = spawn(watch)
    e = human(watch)
    first = watch.pending_notices(MANAGER)
    assert watch.pending_notices(MANAGER) == first
    assert lnm(watch, MANAGER, CHILD) == (s, e, e)
    assert [(n.target, n.last_seen) for n in first] == [(CHILD, s)]


def test_ack_opens_exactly_one_follow_up_for_interleaved_signals(watch: SessionWatch) -> None:
    s = spawn(watch)
    e1 = human(watch)
    notices = watch.pending_notices(MANAGER)
    e2 = human(watch)
    e3 = human(watch)
    watch.acknowledge(MANAGER, notices)
    assert lnm(watch, MANAGER, CHILD) == (e1, e3, e3)
    assert pending(watch, MANAGER) == [(CHILD, e1)]
    assert changes(watch, CHILD, s) == [e1, e2, e3]
    assert changes(watch, CHILD, e1) == [e2, e3]
    watch.acknowledge(MANAGER, watch.pending_notices(MANAGER))
    assert lnm(watch, MANAGER, CHILD) == (e3, e3, e3)
    assert pending(watch, MANAGER) == []


def test_ack_by_target_key_acknowledges_that_target_only(watch: SessionWatch) -> None:
    spawn(watch)
    e = human(watch)
    assert watch.watch(MANAGER, WORKER) is True
    w = human(watch, WORKER)
    watch.acknowledge(MANAGER, [CHILD])
    assert lnm(watch, MANAGER, CHILD) == (e, e, e)
    assert lnm(watch, MANAGER, WORKER) == (0, w, w)
    assert pending(watch, MANAGER) == [(WORKER, 0)]


def test_ack_of_an_unwatched_target_changes_nothing(watch: SessionWatch) -> None:
    spawn(watch)
    human(watch)
    model = watch.store.read_model()
    watch.acknowledge(MANAGER, [WORKER])
    watch.acknowledge(OTHER, [CHILD])
    assert watch.store.read_model() == model


def test_drain_acknowledges_every_target_and_returns_one_notice_each(watch: SessionWatch) -> None:
    s = spawn(watch)
    e = human(watch)
    assert watch.watch(MANAGER, "global", target_agent_id="ops") is True
    assert human(watch, "global", agent_id="main") == e + 1
    g = human(watch, "global", agent_id="ops")
    drained = watch.drain(MANAGER)
    assert sorted((n.target, n.target_agent_id, n.last_seen) for n in drained) == [
        (CHILD, "main", s),
        ("global", "ops", 0),
    ]
    assert lnm(watch, MANAGER, CHILD) == (e, e, e)
    assert lnm(watch, MANAGER, "global", "ops") == (g, g, g)
    assert pending(watch, MANAGER) == []


def test_drain_of_another_watcher_leaves_this_watchers_notice(watch: SessionWatch) -> None:
    s = spawn(watch)
    human(watch)
    assert watch.drain(OTHER) == []
    assert pending(watch, MANAGER) == [(CHILD, s)]


def test_session_status_never_advances_a_cursor(watch: SessionWatch) -> None:
    s = spawn(watch)
    human(watch)
    human(watch)
    before = watch.cursor(MANAGER, CHILD)
    for since in (None, 0, s, s + 1, s + 2, s + 50):
        watch.session_status(CHILD, changes_since=since)
    assert watch.cursor(MANAGER, CHILD) == before
    assert pending(watch, MANAGER) == [(CHILD, s)]


# ------------------------------------------------------------------------------- wakes (§6.4)


def test_a_notice_wakes_a_non_subagent_watcher_with_the_target_reason(
    awake: SessionWatch, waker: ProbingWaker
) -> None:
    assert awake.watch(MANAGER, WORKER) is True
    waker.take()
    human(awake, WORKER)
    assert waker.take() == [(MANAGER, f"session-state:{WORKER}")]


def test_a_subagent_watcher_is_not_woken_but_holds_its_notice(
    awake: SessionWatch, waker: ProbingWaker
) -> None:
    assert awake.watch(MANAGER, WORKER) is True
    assert awake.watch(HELPER, WORKER) is True
    waker.take()
    human(awake, WORKER)
    assert waker.take() == [(MANAGER, f"session-state:{WORKER}")]
    assert pending(awake, HELPER) == [(WORKER, 0)]


def test_a_subagent_producer_watcher_is_not_woken(awake: SessionWatch, waker: ProbingWaker) -> None:
    awake.upsert_session(CHILD, spawned_by=HELPER)
    signal = awake.record_goal_changed(CHILD, summary="goal updated")
    assert signal is not None
    assert waker.take() == []
    assert pending(awake, HELPER) == [(CHILD, 0)]


def test_no_wake_for_a_self_caused_or_log_only_signal(awake: SessionWatch, waker: ProbingWaker) -> None:
    spawn(awake)
    assert awake.watch(OPS, CHILD) is True
    waker.take()
    goal(awake, CHILD, Actor.agent(MANAGER))
    awake.record_compacted(CHILD, operation_id="op-1")
    assert waker.take() == [(OPS, f"session-state:{CHILD}")]
    assert pending(awake, MANAGER) == []


def test_the_wake_comes_after_the_commit(awake: SessionWatch, waker: ProbingWaker) -> None:
    seen: list[tuple[int, list[tuple[str, int]]]] = []

    def probe(watcher: str, reason: str) -> None:
        target = reason.removeprefix("session-state:")
        seen.append((awake.session_status(target).state_version, pending(awake, watcher)))

    waker.probe = probe
    awake.upsert_session(WORKER)
    assert awake.watch(MANAGER, WORKER) is True
    e = human(awake, WORKER)
    assert seen == [(e, [(WORKER, 0)])]


def test_the_follow_up_of_a_drain_wakes_the_watcher_after_the_commit(
    awake: SessionWatch, waker: ProbingWaker
) -> None:
    s = spawn(awake)
    human(awake)
    e = human(awake)
    seen: list[Positions | None] = []
    waker.probe = lambda watcher, _reason: seen.append(lnm(awake, watcher, CHILD))
    waker.take()
    awake.drain(MANAGER)
    assert waker.take() == [(MANAGER, f"session-state:{CHILD}")]
    assert seen == [(s + 1, e, e)]
    awake.drain(MANAGER)
    assert waker.take() == []


def test_a_failing_waker_changes_no_stored_state_and_is_logged(
    store_url: str, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    snapshots: list[ReadModel] = []
    waker = FailingWaker()
    with sessionwatch.open(store_url, clock=clock, waker=waker) as watch:
        waker.probe = lambda _watcher, _reason: snapshots.append(watch.store.read_model())
        assert watch.watch(MANAGER, WORKER) is True
        with caplog.at_level(logging.WARNING, logger="sessionwatch"):
            signal = goal(watch, WORKER, Actor.human())
        assert signal.kind is SignalKind.GOAL_CHANGED
        assert waker.calls == [(MANAGER, f"session-state:{WORKER}")]
        assert snapshots == [watch.store.read_model()]
        assert lnm(watch, MANAGER, WORKER) == (0, signal.sequence, signal.sequence)
        assert watch.session_status(WORKER).state_version == signal.sequence
        assert_audit_clean(watch)
    failures = [r for r in caplog.records if r.name == "sessionwatch" and r.levelno == logging.WARNING]
    assert len(failures) == 1
    assert "wake failed" in failures[0].getMessage()
    assert MANAGER in failures[0].getMessage()


def test_a_failing_waker_never_undoes_a_drain_or_a_sweep(store_url: str, clock: FakeClock) -> None:
    waker = FailingWaker()
    with sessionwatch.open(store_url, clock=clock, waker=waker) as watch:
        watch.upsert_session(MANAGER)
        s = spawn(watch)
        human(watch)
        e = human(watch)
        assert len(watch.drain(MANAGER)) == 1
        assert lnm(watch, MANAGER, CHILD) == (s + 1, e, e)
        report = watch.sweep()
        assert report.woken == ()
        assert report.republished == 1
        assert lnm(watch, MANAGER, CHILD) == (s + 1, e, e)
        assert pending(watch, MANAGER) == [(CHILD, s + 1)]


def test_being_woken_twice_changes_nothing(awake: SessionWatch, waker: ProbingWaker) -> None:
    awake.upsert_session(MANAGER)
    s = spawn(awake)
    human(awake)
    waker.take()
    awake.sweep()
    model = awake.store.read_model()
    events = event_count(awake)
    awake.sweep()
    assert waker.take() == [(MANAGER, f"session-state:{CHILD}")] * 2
    assert awake.store.read_model() == model
    assert event_count(awake) == events
    assert pending(awake, MANAGER) == [(CHILD, s)]


# ---------------------------------------------------------------------------------- replay


def test_replay_rebuilds_the_stored_cursors_after_a_mixed_notice_workload(
    watch: SessionWatch, clock: FakeClock
) -> None:
    watch.upsert_session(MANAGER)
    watch.upsert_session(OTHER)
    spawn(watch)
    spawn(watch, child=HELPER, run="run-h")
    human(watch)
    assert watch.watch(OTHER, CHILD) is True
    assert watch.watch(MANAGER, "global", target_agent_id="ops") is True
    assert watch.watch(OPS, WORKER) is True
    clock.advance(minutes=5)
    human(watch, "global", agent_id="ops")
    goal(watch, WORKER, Actor.agent(OPS), watchers=(MANAGER, "global"))
    notices = watch.pending_notices(OTHER)
    human(watch)
    watch.acknowledge(OTHER, notices)
    watch.drain(MANAGER)
    human(watch)
    watch.record_run_terminal(child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="error")
    clock.advance(hours=1)
    watch.sweep()
    assert watch.unwatch(OPS, WORKER) is True
    watch.reset_session(OTHER)
    watch.delete_session(HELPER)
    human(watch, WORKER)
    assert watch.store.read_model().all_cursors() != []
    assert_audit_clean(watch)
