"""Cursor provenance as pure rules: registration, promotion, queue-only notices, ambient group watchers.

An ambient cursor is made by an ambient registration only; every other way a cursor comes to be (a
spawn edge, a producer's watcher, an explicit watch) is explicit. An explicit registration promotes
an ambient cursor and keeps its positions; nothing ever turns an explicit cursor ambient.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import NOTIFYING_KINDS, SignalKind, notifying_kinds
from sessionwatch.domain.watch_cursor import (
    AcknowledgeNotice,
    CursorFact,
    CursorState,
    ObserveMaterialSignal,
    Provenance,
    RegisterWatch,
    SeedCursor,
    WatchPromoted,
    WatchRegistered,
    ambient_watcher,
    decide,
    derive,
    evolve,
    is_group_session,
    react,
)

MAIN = "agent:main:main"
OPS = "agent:ops:main"
GROUP = SessionIdentity("agent:main:telegram:group:42", "main")
AT_MS = 1_796_000_000_000


def ids(watcher: str = MAIN, at_ms: int = AT_MS) -> dict[str, str | int]:
    return {
        "watcher": watcher,
        "target_key": GROUP.session_key,
        "target_agent_id": GROUP.agent_id,
        "at_ms": at_ms,
    }


def fold(state: CursorState | None, facts: Iterable[CursorFact]) -> CursorState | None:
    for fact in facts:
        state = evolve(state, fact)
    return state


def register(
    state: CursorState | None, provenance: Provenance, head: int = 5, at_ms: int = AT_MS
) -> CursorState | None:
    return fold(state, decide(RegisterWatch(**ids(at_ms=at_ms), head=head, provenance=provenance), state))


def observe(state: CursorState | None, sequence: int) -> CursorState | None:
    return fold(state, derive(ObserveMaterialSignal(**ids(), sequence=sequence), state))


def terminal(sequence: int, watchers: tuple[str, ...] = ()) -> SignalRecorded:
    return SignalRecorded(
        sequence=sequence,
        session_key=GROUP.session_key,
        agent_id=GROUP.agent_id,
        kind=SignalKind.RUN_COMPLETED,
        actor_type="system",
        occurred_at_ms=AT_MS,
        recorded_at_ms=AT_MS,
        summary="child run completed",
        watchers=watchers,
    )


def test_an_ambient_registration_starts_an_ambient_cursor_at_the_head() -> None:
    events = decide(RegisterWatch(**ids(), head=5, provenance="ambient"), None)
    assert events == [WatchRegistered(**ids(), head=5, provenance="ambient")]
    state = fold(None, events)
    assert state is not None
    assert (state.provenance, state.last_seen, state.notified, state.material) == ("ambient", 5, 5, 5)


def test_an_explicit_registration_promotes_an_ambient_cursor_and_keeps_its_pending_notice() -> None:
    pending = observe(register(None, "ambient"), 9)
    events = decide(RegisterWatch(**ids(at_ms=AT_MS + 1), head=9), pending)
    assert events == [WatchPromoted(**ids(at_ms=AT_MS + 1))]
    promoted = fold(pending, events)
    assert promoted is not None
    assert (promoted.provenance, promoted.last_seen, promoted.notified, promoted.material) == (
        "explicit",
        5,
        9,
        9,
    )
    assert promoted.updated_at_ms == AT_MS  # its age is the cursor's own: a promotion does not refresh it


def test_an_ambient_registration_never_downgrades_an_explicit_cursor() -> None:
    explicit = register(None, "explicit")
    assert decide(RegisterWatch(**ids(), head=7, provenance="ambient"), explicit) == []


def test_a_material_signal_and_an_acknowledgement_keep_an_ambient_cursor_ambient() -> None:
    pending = observe(register(None, "ambient"), 9)
    assert pending is not None
    assert (pending.provenance, pending.pending) == ("ambient", True)
    drained = fold(pending, decide(AcknowledgeNotice(**ids()), pending))
    assert drained is not None
    assert (drained.provenance, drained.pending) == ("ambient", False)


def test_a_spawn_edge_overwrites_an_ambient_cursor_with_an_explicit_one() -> None:
    seeded = fold(register(None, "ambient"), derive(SeedCursor(**ids(), sequence=8), None))
    assert seeded is not None
    assert seeded.provenance == "explicit"


def test_a_run_end_that_notifies_skips_an_ambient_holder_and_reaches_an_explicit_one() -> None:
    ambient = register(None, "ambient")
    assert ambient is not None
    explicit = ambient.model_copy(update={"watcher": OPS, "provenance": "explicit"})
    holders = {MAIN: ambient, OPS: explicit}
    commands = react(terminal(9), holders, at_ms=AT_MS, notifying=notifying_kinds(terminal_runs=True))
    assert [c.watcher for c in commands] == [OPS]


def test_a_run_end_reaches_an_ambient_cursor_whose_watcher_the_producer_named() -> None:
    ambient = register(None, "ambient")
    assert ambient is not None
    commands = react(
        terminal(9, (MAIN,)), {MAIN: ambient}, at_ms=AT_MS, notifying=notifying_kinds(terminal_runs=True)
    )
    assert [c.watcher for c in commands] == [MAIN]


def test_the_main_session_of_the_groups_agent_watches_a_group_and_no_other_session() -> None:
    group = SessionState(session_key=GROUP.session_key, agent_id="main")
    assert is_group_session(group)
    assert ambient_watcher(group) == MAIN
    assert ambient_watcher(group, "home") == "agent:main:home"
    registered = SessionState(session_key="agent:ops:room", agent_id="ops", kind="group")
    assert ambient_watcher(registered) == OPS
    direct = SessionState(session_key="agent:main:telegram:direct:alice", agent_id="main")
    assert ambient_watcher(direct) is None
    assert ambient_watcher(group, "telegram:group:42") is None  # never the group watching itself


def session(key: str, *, kind: str = "main", spawned_by: str | None = None) -> SessionState:
    return SessionState(session_key=key, agent_id="main", known=True, kind=kind, spawned_by=spawned_by)


@pytest.mark.parametrize(
    "state",
    [
        session("agent:main:telegram:group:42", spawned_by=MAIN),
        session("agent:main:subagent:room", kind="group", spawned_by="agent:main:coordinator"),
        session("agent:main:cron:nightly:group:42"),
        session("agent:main:CRON:nightly:channel:7"),
        session("agent:main: cron:nightly:group:42", kind="group"),
        session("cron:nightly:group:42"),
        session("agent:main:telegram:group:42", kind="cron"),
        session("global", kind="group"),
        session("unknown", kind="group"),
    ],
    ids=lambda state: f"{state.session_key}|{state.kind}|{state.spawned_by}",
)
def test_a_spawned_child_a_cron_session_and_the_sentinel_keys_are_never_groups(state: SessionState) -> None:
    assert not is_group_session(state)
    assert ambient_watcher(state) is None


@pytest.mark.parametrize(
    "state",
    [
        session("agent:main:telegram:group:42"),
        session("agent:main:slack:channel:crew"),
        session("agent:main:room", kind="group"),
        session("agent:main:telegram:group:cron:42"),  # `cron:` later in the key: still a group
        session("agent:main:telegram:group:42", kind="main"),  # the key says group: the kind is a default
        session("team-room", kind="group"),  # a bare key, registered as a group
    ],
    ids=lambda state: f"{state.session_key}|{state.kind}",
)
def test_a_session_registered_or_keyed_as_a_group_is_one(state: SessionState) -> None:
    assert is_group_session(state)


ACTS = st.lists(
    st.one_of(
        st.tuples(st.just("register"), st.sampled_from(["explicit", "ambient"])),
        st.tuples(st.just("signal"), st.sampled_from(sorted(NOTIFYING_KINDS))),
        st.tuples(st.just("acknowledge"), st.none()),
    ),
    max_size=12,
)


@given(ACTS)
def test_once_explicit_a_cursor_stays_explicit_and_positions_never_move_back(
    acts: list[tuple[str, object]],
) -> None:
    state: CursorState | None = None
    sequence = 0
    for step, (act, arg) in enumerate(acts, 1):
        before = state
        if act == "register":
            state = register(state, arg, head=sequence, at_ms=AT_MS + step)  # type: ignore[arg-type]
            if before is not None:  # a registration of a cursor changes its provenance at most
                assert state is not None
                assert state.model_copy(update={"provenance": before.provenance}) == before
        elif act == "signal":
            sequence += 1
            state = observe(state, sequence)
        else:
            state = fold(state, decide(AcknowledgeNotice(**ids()), state))
        assert state is not None or before is None
        if before is not None and state is not None:
            if before.provenance == "explicit":
                assert state.provenance == "explicit"
            assert state.last_seen >= before.last_seen
            assert state.notified >= before.notified
            assert state.material >= before.material
            assert state.last_seen <= state.notified <= state.material
