"""The WatchCursor stream (SPEC §5, §6, §9): decide / derive / evolve / react / resume, given/when/then.

Every test is pure: it folds given facts into a cursor, runs one command, and compares the events
or the positions `(L, N, M)` that result. Nothing here touches a store or a clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pytest

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionReset,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.signals import ActorType, SignalKind
from sessionwatch.domain.watch_cursor import (
    AcknowledgeNotice,
    CursorDropped,
    CursorFact,
    CursorKey,
    CursorSeeded,
    CursorState,
    DropCursor,
    ImpliedCommand,
    MaterialSignalSeen,
    NoticeAcknowledged,
    NoticeRefrozen,
    ObserveMaterialSignal,
    RefreezeNotice,
    RegisterWatch,
    RemoveWatch,
    SeedCursor,
    WatchRegistered,
    WatchRemoved,
    decide,
    derive,
    evolve,
    react,
    resume,
)

MANAGER = "agent:main:main"
HELPER = "agent:main:subagent:helper"
OPS = "agent:ops:main"
TARGET = SessionIdentity("agent:main:subagent:child", "main")
AT_MS = 1_796_000_000_000
LATER_MS = AT_MS + 60_000

Positions = tuple[int, int, int]


def ids(watcher: str = MANAGER, target: SessionIdentity = TARGET, at_ms: int = AT_MS) -> dict[str, str | int]:
    """The fields every cursor command and fact repeats."""
    return {
        "watcher": watcher,
        "target_key": target.session_key,
        "target_agent_id": target.agent_id,
        "at_ms": at_ms,
    }


def cursor_at(last_seen: int, notified: int, material: int, watcher: str = MANAGER) -> CursorState:
    """A cursor of `watcher` on TARGET at `(L, N, M)`."""
    return CursorState(
        watcher=watcher,
        target_key=TARGET.session_key,
        target_agent_id=TARGET.agent_id,
        last_seen=last_seen,
        notified=notified,
        material=material,
        updated_at_ms=AT_MS,
    )


def given(*facts: CursorFact) -> CursorState | None:
    """Fold the given facts from "no cursor"."""
    return fold(None, facts)


def fold(state: CursorState | None, facts: Iterable[CursorFact]) -> CursorState | None:
    for fact in facts:
        state = evolve(state, fact)
    return state


def positions(state: CursorState | None) -> Positions | None:
    return None if state is None else (state.last_seen, state.notified, state.material)


def signal(
    sequence: int,
    kind: SignalKind = SignalKind.HUMAN_DIRECT_MESSAGE,
    *,
    actor_type: ActorType = "human",
    actor_id: str | None = None,
    watchers: tuple[str, ...] = (),
    target: SessionIdentity = TARGET,
) -> SignalRecorded:
    return SignalRecorded(
        sequence=sequence,
        session_key=target.session_key,
        agent_id=target.agent_id,
        kind=kind,
        actor_type=actor_type,
        actor_id=actor_id,
        occurred_at_ms=AT_MS,
        recorded_at_ms=LATER_MS,
        summary="goal updated" if kind is SignalKind.GOAL_CHANGED else "human message via telegram",
        watchers=watchers,
    )


def holders(*states: CursorState) -> dict[str, CursorState]:
    return {state.watcher: state for state in states}


def observed(commands: Sequence[ImpliedCommand]) -> list[str]:
    """The watchers a list of commands observes a material signal for, in order."""
    assert all(isinstance(c, ObserveMaterialSignal) for c in commands)
    return [c.watcher for c in commands]


def run_implied(state: CursorState | None, command: ImpliedCommand) -> CursorState | None:
    return fold(state, derive(command, state))


LOG_ONLY = (
    SignalKind.RUN_COMPLETED,
    SignalKind.RUN_FAILED,
    SignalKind.COMPACTED,
    SignalKind.ADOPTED,
    SignalKind.CREATED,
)
NOTIFYING = (SignalKind.HUMAN_DIRECT_MESSAGE, SignalKind.UPSTREAM_MISSING, SignalKind.GOAL_CHANGED)


# ----------------------------------------------------------------------------- register (§5.2)


def test_register_starts_the_cursor_at_the_targets_head() -> None:
    events = decide(RegisterWatch(**ids(), head=7), given())
    assert events == [WatchRegistered(**ids(), head=7, provenance="explicit")]
    assert positions(fold(None, events)) == (7, 7, 7)


def test_register_never_clobbers_an_existing_cursor_even_with_a_pending_notice() -> None:
    state = cursor_at(1, 2, 4)
    assert decide(RegisterWatch(**ids(), head=9), state) == []


def test_register_on_an_acknowledged_cursor_also_leaves_it_untouched() -> None:
    assert decide(RegisterWatch(**ids(), head=9), cursor_at(3, 3, 3)) == []


def test_register_stamps_the_cursor_with_the_commands_time() -> None:
    state = fold(None, decide(RegisterWatch(**ids(at_ms=LATER_MS), head=2), None))
    assert state is not None
    assert state.updated_at_ms == LATER_MS


# --------------------------------------------------------------------------------- seed (§5.1)


def test_seed_creates_the_cursor_at_the_spawn_signals_own_sequence() -> None:
    facts = derive(SeedCursor(**ids(), sequence=1), None)
    assert facts == [CursorSeeded(**ids(), sequence=1)]
    assert positions(fold(None, facts)) == (1, 1, 1)


def test_seed_overwrites_even_a_pending_notice() -> None:
    state = cursor_at(1, 2, 4)
    assert state.pending
    after = run_implied(state, SeedCursor(**ids(), sequence=5))
    assert positions(after) == (5, 5, 5)
    assert after is not None
    assert not after.pending


def test_seed_overwrites_an_acknowledged_cursor_too() -> None:
    assert positions(run_implied(cursor_at(3, 3, 3), SeedCursor(**ids(), sequence=8))) == (8, 8, 8)


# ---------------------------------------------------------------------- material update (§6.1)


def test_material_update_freezes_n_at_e_when_no_notice_is_outstanding() -> None:
    facts = derive(ObserveMaterialSignal(**ids(), sequence=2), cursor_at(1, 1, 1))
    assert facts == [MaterialSignalSeen(**ids(), sequence=2, notified=2, last_seen=1)]
    assert positions(fold(cursor_at(1, 1, 1), facts)) == (1, 2, 2)


def test_material_update_keeps_n_frozen_while_a_notice_is_outstanding() -> None:
    after = run_implied(cursor_at(1, 2, 2), ObserveMaterialSignal(**ids(), sequence=3))
    assert positions(after) == (1, 2, 3)


def test_material_update_always_moves_m_to_e() -> None:
    state: CursorState | None = cursor_at(1, 1, 1)
    for sequence in (2, 3, 4):
        state = run_implied(state, ObserveMaterialSignal(**ids(), sequence=sequence))
    assert positions(state) == (1, 2, 4)


def test_material_update_after_an_acknowledgement_freezes_n_again() -> None:
    after = run_implied(cursor_at(4, 4, 4), ObserveMaterialSignal(**ids(), sequence=6))
    assert positions(after) == (4, 6, 6)


def test_material_update_without_a_cursor_creates_it_at_zero_e_e() -> None:
    facts = derive(ObserveMaterialSignal(**ids(), sequence=5), None)
    assert facts == [MaterialSignalSeen(**ids(), sequence=5, notified=5, last_seen=0)]
    assert positions(fold(None, facts)) == (0, 5, 5)


def test_material_update_stamps_updated_at_with_now() -> None:
    after = run_implied(cursor_at(1, 1, 1), ObserveMaterialSignal(**ids(at_ms=LATER_MS), sequence=2))
    assert after is not None
    assert after.updated_at_ms == LATER_MS


@pytest.mark.parametrize("sequence", [2, 3])
def test_material_redelivery_at_or_below_m_is_a_no_op(sequence: int) -> None:
    assert derive(ObserveMaterialSignal(**ids(), sequence=sequence), cursor_at(1, 2, 3)) == []


# ---------------------------------------------------------------------------- acknowledge (§6.3)


def test_acknowledge_moves_l_to_n_and_opens_nothing_when_nothing_more_arrived() -> None:
    events = decide(AcknowledgeNotice(**ids()), cursor_at(1, 2, 2))
    assert events == [NoticeAcknowledged(**ids(), last_seen=2, notified=2)]
    after = fold(cursor_at(1, 2, 2), events)
    assert positions(after) == (2, 2, 2)
    assert after is not None
    assert not after.pending


def test_acknowledge_moves_l_to_n_never_to_the_head_and_opens_one_follow_up() -> None:
    events = decide(AcknowledgeNotice(**ids()), cursor_at(1, 2, 4))
    assert events == [NoticeAcknowledged(**ids(), last_seen=2, notified=4)]
    after = fold(cursor_at(1, 2, 4), events)
    assert positions(after) == (2, 4, 4)
    assert after is not None
    assert after.pending


def test_acknowledging_the_follow_up_closes_the_cursor() -> None:
    state = fold(cursor_at(1, 2, 4), decide(AcknowledgeNotice(**ids()), cursor_at(1, 2, 4)))
    assert state is not None
    assert positions(fold(state, decide(AcknowledgeNotice(**ids()), state))) == (4, 4, 4)


@pytest.mark.parametrize("state", [cursor_at(3, 3, 3), cursor_at(0, 0, 0), None])
def test_acknowledge_with_nothing_pending_is_a_no_op(state: CursorState | None) -> None:
    assert decide(AcknowledgeNotice(**ids()), state) == []


def test_acknowledge_keeps_m() -> None:
    after = fold(cursor_at(1, 2, 4), [NoticeAcknowledged(**ids(), last_seen=2, notified=4)])
    assert after is not None
    assert after.material == 4


# --------------------------------------------------------------------------------- refreeze (§6.5)


def test_refreeze_moves_n_up_to_m_when_m_is_above_l() -> None:
    events = derive(RefreezeNotice(**ids()), cursor_at(1, 2, 4))
    assert events == [NoticeRefrozen(**ids(), notified=4)]
    assert positions(fold(cursor_at(1, 2, 4), events)) == (1, 4, 4)


def test_refreeze_opens_a_cursor_whose_m_is_above_l_even_when_n_equals_l() -> None:
    assert positions(fold(cursor_at(2, 2, 3), derive(RefreezeNotice(**ids()), cursor_at(2, 2, 3)))) == (
        2,
        3,
        3,
    )


@pytest.mark.parametrize("state", [cursor_at(2, 2, 2), cursor_at(0, 0, 0), None])
def test_refreeze_never_reopens_an_acknowledged_cursor(state: CursorState | None) -> None:
    assert derive(RefreezeNotice(**ids()), state) == []


def test_refreeze_of_a_notice_already_frozen_at_m_still_stamps_updated_at() -> None:
    """SPEC §6.5: every open cursor of an existing watcher gets `N := M` and `updated_at := now`."""
    state = cursor_at(1, 4, 4)
    after = fold(state, derive(RefreezeNotice(**ids(at_ms=LATER_MS)), state))
    assert positions(after) == (1, 4, 4)
    assert after is not None
    assert after.updated_at_ms == LATER_MS


def test_refreeze_stamps_updated_at_with_now() -> None:
    state = cursor_at(1, 2, 4)
    after = fold(state, derive(RefreezeNotice(**ids(at_ms=LATER_MS)), state))
    assert after is not None
    assert after.updated_at_ms == LATER_MS


# ---------------------------------------------------------------------------------- remove (§16)


def test_remove_drops_the_cursor() -> None:
    events = decide(RemoveWatch(**ids()), cursor_at(1, 2, 3))
    assert events == [WatchRemoved(**ids())]
    assert fold(cursor_at(1, 2, 3), events) is None


def test_remove_without_a_cursor_is_a_no_op() -> None:
    assert decide(RemoveWatch(**ids()), None) == []


def test_drop_removes_an_existing_cursor_and_ignores_a_missing_one() -> None:
    assert derive(DropCursor(**ids()), cursor_at(1, 2, 2)) == [CursorDropped(**ids())]
    assert run_implied(cursor_at(1, 2, 2), DropCursor(**ids())) is None
    assert derive(DropCursor(**ids()), None) == []


# -------------------------------------------------------------------------------------- react


def test_react_observes_a_notifying_signal_for_every_holder() -> None:
    cursors = holders(cursor_at(1, 1, 1), cursor_at(1, 1, 1, watcher=OPS))
    commands = react(signal(2), cursors, at_ms=LATER_MS)
    assert sorted(observed(commands)) == sorted([MANAGER, OPS])
    assert all(c == ObserveMaterialSignal(**ids(c.watcher, at_ms=LATER_MS), sequence=2) for c in commands)


@pytest.mark.parametrize("kind", NOTIFYING)
def test_react_treats_every_notifying_kind_as_material(kind: SignalKind) -> None:
    commands = react(signal(2, kind), holders(cursor_at(1, 1, 1)), at_ms=AT_MS)
    assert observed(commands) == [MANAGER]


def test_react_suppresses_the_watcher_that_caused_the_signal() -> None:
    cursors = holders(cursor_at(1, 1, 1), cursor_at(1, 1, 1, watcher=OPS))
    commands = react(signal(2, actor_type="agent", actor_id=MANAGER), cursors, at_ms=AT_MS)
    assert observed(commands) == [OPS]


def test_react_suppresses_a_producer_watcher_that_caused_the_signal() -> None:
    event = signal(2, SignalKind.GOAL_CHANGED, actor_type="agent", actor_id=MANAGER, watchers=(MANAGER,))
    assert react(event, {}, at_ms=AT_MS) == []


def test_react_does_not_suppress_a_watcher_for_another_agents_action() -> None:
    commands = react(signal(2, actor_type="agent", actor_id=OPS), holders(cursor_at(1, 1, 1)), at_ms=AT_MS)
    assert observed(commands) == [MANAGER]


@pytest.mark.parametrize("kind", LOG_ONLY)
def test_react_to_a_log_only_kind_touches_no_cursor(kind: SignalKind) -> None:
    event = signal(2, kind, actor_type="system", watchers=(MANAGER, HELPER))
    assert react(event, holders(cursor_at(1, 1, 1, watcher=OPS)), at_ms=AT_MS) == []


def test_react_unites_producer_watchers_and_holders_without_duplicates() -> None:
    event = signal(3, watchers=(MANAGER, HELPER, MANAGER))
    cursors = holders(cursor_at(1, 1, 1), cursor_at(2, 2, 2, watcher=OPS))
    commands = react(event, cursors, at_ms=AT_MS)
    assert sorted(observed(commands)) == sorted([MANAGER, HELPER, OPS])


@pytest.mark.parametrize("bare", ["global", "cron:nightly", "agent:  :x", "agent:main"])
def test_react_drops_producer_watchers_that_are_not_agent_qualified(bare: str) -> None:
    commands = react(signal(2, watchers=(bare, MANAGER)), {}, at_ms=AT_MS)
    assert observed(commands) == [MANAGER]


def test_react_to_child_spawned_seeds_the_requesting_agent_only() -> None:
    event = signal(4, SignalKind.CHILD_SPAWNED, actor_type="agent", actor_id=MANAGER, watchers=(OPS,))
    commands = react(event, holders(cursor_at(1, 2, 3, watcher=HELPER)), at_ms=LATER_MS)
    assert commands == [SeedCursor(**ids(MANAGER, at_ms=LATER_MS), sequence=4)]


@pytest.mark.parametrize(("actor_type", "actor_id"), [("system", None), ("human", MANAGER), ("agent", None)])
def test_react_to_child_spawned_without_an_agent_requester_seeds_nothing(
    actor_type: ActorType, actor_id: str | None
) -> None:
    event = signal(4, SignalKind.CHILD_SPAWNED, actor_type=actor_type, actor_id=actor_id)
    assert react(event, holders(cursor_at(1, 1, 1)), at_ms=AT_MS) == []


def test_react_to_child_spawned_by_a_bare_agent_key_seeds_nothing() -> None:
    event = signal(4, SignalKind.CHILD_SPAWNED, actor_type="agent", actor_id="global")
    assert react(event, {}, at_ms=AT_MS) == []


def test_react_to_a_reset_drops_the_cursors_the_session_holds_as_watcher_only() -> None:
    manager = SessionIdentity(MANAGER, "main")
    held = [CursorKey(MANAGER, TARGET.session_key, TARGET.agent_id), CursorKey(MANAGER, "global", "ops")]
    on_manager = {OPS: cursor_at(1, 2, 2, watcher=OPS)}
    commands = react(
        SessionReset(session_key=manager.session_key, agent_id=manager.agent_id),
        on_manager,
        held_by_session=held,
        at_ms=AT_MS,
    )
    assert commands == [
        DropCursor(watcher=MANAGER, target_key=k.target_key, target_agent_id=k.target_agent_id, at_ms=AT_MS)
        for k in held
    ]


def test_react_to_a_delete_drops_both_sides_once_each() -> None:
    child_watcher = TARGET.session_key
    held = [CursorKey(child_watcher, "agent:main:worker", "main")]
    on_target = holders(cursor_at(1, 2, 2), cursor_at(3, 3, 3, watcher=OPS))
    commands = react(
        SessionDeleted(session_key=TARGET.session_key, agent_id=TARGET.agent_id),
        on_target,
        held_by_session=held,
        at_ms=AT_MS,
    )
    dropped = [(c.watcher, c.target_key, c.target_agent_id) for c in commands]
    assert all(isinstance(c, DropCursor) for c in commands)
    assert sorted(dropped) == sorted(
        [
            (child_watcher, "agent:main:worker", "main"),
            (MANAGER, TARGET.session_key, TARGET.agent_id),
            (OPS, TARGET.session_key, TARGET.agent_id),
        ]
    )


def test_react_to_an_upsert_implies_nothing() -> None:
    event = SessionUpserted(session_key=TARGET.session_key, agent_id=TARGET.agent_id, spawned_by=MANAGER)
    assert react(event, holders(cursor_at(1, 2, 2)), at_ms=AT_MS) == []


# ------------------------------------------------------------------------------------- resume


def test_resume_reissues_an_open_notice_of_an_existing_watcher() -> None:
    assert resume(cursor_at(1, 2, 4), watcher_exists=True, at_ms=LATER_MS) == [
        RefreezeNotice(**ids(at_ms=LATER_MS))
    ]


def test_resume_skips_a_watcher_that_no_longer_exists() -> None:
    assert resume(cursor_at(1, 2, 4), watcher_exists=False, at_ms=AT_MS) == []


def test_resume_never_reopens_an_acknowledged_cursor() -> None:
    assert resume(cursor_at(2, 2, 2), watcher_exists=True, at_ms=AT_MS) == []


def test_resume_then_derive_refreezes_n_at_m() -> None:
    state = cursor_at(1, 2, 4)
    events = [e for c in resume(state, watcher_exists=True, at_ms=AT_MS) for e in derive(c, state)]
    assert positions(fold(state, events)) == (1, 4, 4)


# ------------------------------------------------------------------- §6.6 as a pure process


def play(
    state: CursorState | None, events: Sequence[SignalRecorded], watcher: str = MANAGER
) -> CursorState | None:
    """Run each Session event through react and derive, as the shell does, for one watcher's cursor."""
    for event in events:
        on_target: Mapping[str, CursorState] = {watcher: state} if state is not None else {}
        for command in react(event, on_target, at_ms=event.recorded_at_ms):
            state = run_implied(state, command)
    return state


def acknowledge(state: CursorState | None) -> CursorState | None:
    return fold(state, decide(AcknowledgeNotice(**ids()), state))


def spawned(sequence: int) -> SignalRecorded:
    return signal(sequence, SignalKind.CHILD_SPAWNED, actor_type="agent", actor_id=MANAGER)


def test_worked_example_one_four_signals_one_notice() -> None:
    state = play(None, [spawned(1)])
    assert positions(state) == (1, 1, 1)
    seen = []
    for sequence in (2, 3, 4):
        state = play(state, [signal(sequence)])
        seen.append(positions(state))
    assert seen == [(1, 2, 2), (1, 2, 3), (1, 2, 4)]


def test_worked_example_two_drain_leaves_exactly_one_follow_up() -> None:
    state = play(None, [spawned(1), signal(2), signal(3)])
    state = acknowledge(state)
    assert positions(state) == (2, 3, 3)
    assert state is not None
    assert state.pending
    state = acknowledge(state)
    assert positions(state) == (3, 3, 3)
    assert state is not None
    assert not state.pending


def test_worked_example_three_log_only_signal_leaves_nothing_to_reopen() -> None:
    state = play(None, [spawned(1), signal(2), signal(3, SignalKind.RUN_COMPLETED, actor_type="system")])
    assert positions(state) == (1, 2, 2)
    state = acknowledge(state)
    assert positions(state) == (2, 2, 2)
    assert state is not None
    assert resume(state, watcher_exists=True, at_ms=AT_MS) == []
