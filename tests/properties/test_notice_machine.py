"""The notice protocol under arbitrary interleavings (SPEC §4, §5, §6, §9), on every store.

A Hypothesis state machine drives one `SessionWatch` with records of every kind by humans, the
system and agents (each watcher itself or another), producer watchers, watch / unwatch, drains,
two-phase acknowledgements, resets, deletes, upserts, restarts and clock steps. It keeps its own
model of `(L, N, M)` per (watcher, target identity) pair, written from the SPEC rules and never
from the domain functions, and after every step compares the store with it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import ClassVar

import pytest
from fakes import FakeWaker
from helpers import FakeClock
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from stores import fresh_store_url, needs_postgres

import sessionwatch
from sessionwatch import Actor, Notice, SessionWatch, SignalKind, UnknownSession

Identity = tuple[str, str]
"""(session key, agent id): the SPEC §2 session identity."""
Pair = tuple[str, str, str]
"""(watcher key, target key, target agent id): one cursor."""
Positions = tuple[int, int, int]
"""(L, N, M)."""

WATCHERS = ("agent:main:main", "agent:ops:main", "agent:main:subagent:helper", "agent:ops:SubAgent:probe")
"""Agent-qualified watchers; the last two are subagent keys (never woken, SPEC §6.4)."""

TARGETS: tuple[Identity, ...] = (
    ("agent:main:worker", "main"),
    ("agent:main:subagent:child", "main"),
    ("global", "main"),
    ("global", "ops"),
)
"""Watched sessions; the two `global`s differ only by agent id and must never mix (SPEC §5.3)."""

OUTSIDER = "agent:research:outsider"
"""An agent that is never upserted: it may hold a seeded cursor, the sweep must skip it."""


def agent_of(key: str) -> str | None:
    """The agent id of `agent:<id>:<rest>` (SPEC §2), else None."""
    parts = [part for part in key.strip().split(":") if part]
    return parts[1] if len(parts) >= 3 and parts[0] == "agent" else None


def identity_of_watcher(key: str) -> Identity | None:
    agent = agent_of(key)
    return None if agent is None else (key.strip(), agent)


def is_subagent(key: str) -> bool:
    parts = [part for part in key.strip().split(":") if part]
    return agent_of(key) is not None and ":".join(parts[2:]).lower().startswith("subagent:")


def expected_text(target: str, last_seen: int) -> str:
    """SPEC §6.2, spelled out here rather than imported."""
    return (
        f'Session "{target}" changed (other actor). Reconcile before acting: '
        f'session_status sessionKey "{target}" changesSince {last_seen}.'
    )


def reason(target: str) -> str:
    return f"session-state:{target}"


IDENTITIES: tuple[Identity, ...] = (
    *TARGETS,
    *(identity for identity in map(identity_of_watcher, WATCHERS) if identity is not None),
)
HOLDER_KEYS = (*WATCHERS, "agent:main:worker", OUTSIDER)
"""Every key that can come to hold a cursor in this machine."""
PRODUCER_WATCHERS = (*WATCHERS, "agent:main:worker", "global", "cron:nightly")
ACTORS = (
    Actor.human(),
    Actor.human("alice"),
    Actor.system(),
    *(Actor.agent(w) for w in WATCHERS),
    Actor.agent("agent:main:worker"),
    Actor.agent(OUTSIDER),
)
NOTIFYING = frozenset({"human_direct_message", "upstream_missing", "goal_changed"})
SUMMARIES = {
    SignalKind.HUMAN_DIRECT_MESSAGE: "human message via telegram",
    SignalKind.UPSTREAM_MISSING: "upstream missing via claude-code",
    SignalKind.GOAL_CHANGED: "goal updated",
    SignalKind.CHILD_SPAWNED: "child session spawned",
    SignalKind.RUN_COMPLETED: "child run completed",
    SignalKind.RUN_FAILED: "child run failed",
    SignalKind.COMPACTED: "session compacted",
    SignalKind.ADOPTED: "session adopted",
}

MACHINE_SETTINGS = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class Model:
    """What the SPEC says the store holds: cursors, heads, known and registered identities."""

    def __init__(self) -> None:
        self.cursors: dict[Pair, Positions] = {}
        self.heads: dict[Identity, int] = {}
        self.known: set[Identity] = set()
        self.registered: set[Identity] = set()  # upserted and not deleted (SPEC §13)

    def pending(self, watcher: str) -> dict[Identity, int]:
        """The watcher's pending notices: target identity → L, exactly where `N > L` (SPEC §6.3)."""
        return {(k, a): lnm[0] for (w, k, a), lnm in self.cursors.items() if w == watcher and lnm[1] > lnm[0]}

    def record(
        self, target: Identity, sequence: int, kind: SignalKind, actor: Actor, watchers: Iterable[str]
    ) -> set[str]:
        """Apply one recorded signal; return the watchers whose notice became pending by it."""
        key, agent = target
        self.heads[target] = sequence
        self.known.add(target)
        if kind is SignalKind.CHILD_SPAWNED:
            requester = actor.actor_id
            if actor.actor_type == "agent" and requester is not None and agent_of(requester) is not None:
                self.cursors[(requester, key, agent)] = (sequence, sequence, sequence)  # SPEC §5.1
            return set()
        if kind.value not in NOTIFYING:
            return set()
        holders = [w for (w, k, a) in self.cursors if (k, a) == target]
        opened = set()
        for watcher in dict.fromkeys([*watchers, *holders]):
            if agent_of(watcher) is None or watcher == actor.actor_id:
                continue
            last_seen, notified, _ = self.cursors.get((watcher, key, agent), (0, 0, 0))
            if notified == last_seen:
                opened.add(watcher)
                notified = sequence
            self.cursors[(watcher, key, agent)] = (last_seen, notified, sequence)  # SPEC §6.1
        return opened

    def acknowledge(self, pair: Pair) -> bool:
        """SPEC §6.3: `L := N`, then `N := M` when `M > N`; True when a follow-up is pending."""
        last_seen, notified, material = self.cursors[pair]
        if notified <= last_seen:
            return False
        self.cursors[pair] = (notified, material, material)
        return material > notified

    def drop_held_by(self, identity: Identity) -> None:
        self.cursors = {p: v for p, v in self.cursors.items() if identity_of_watcher(p[0]) != identity}

    def drop_targeting(self, identity: Identity) -> None:
        self.cursors = {p: v for p, v in self.cursors.items() if (p[1], p[2]) != identity}

    def sweep(self) -> set[tuple[str, str]]:
        """SPEC §6.5: re-freeze `N := M` for open cursors of existing watchers; the wakes owed."""
        wakes = set()
        for (watcher, key, agent), (last_seen, _, material) in list(self.cursors.items()):
            if material > last_seen and identity_of_watcher(watcher) in self.registered:
                self.cursors[(watcher, key, agent)] = (last_seen, material, material)
                if not is_subagent(watcher):
                    wakes.add((watcher, reason(key)))
        return wakes


class NoticeMachine(RuleBasedStateMachine):
    """One SessionWatch on a fresh store of `store_kind`, checked against `Model` after every step."""

    store_kind: ClassVar[str] = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="notice-machine-"))
        self.stack = ExitStack()
        self.url = self.stack.enter_context(
            fresh_store_url(self.store_kind, self.tmp, "machine.db", reuse=True)
        )
        self.clock = FakeClock()
        self.waker = FakeWaker()
        self.watch: SessionWatch = sessionwatch.open(self.url, clock=self.clock, waker=self.waker)
        self.model = Model()
        self.last_sequence = 0

    def teardown(self) -> None:
        self.watch.close()
        self.stack.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ------------------------------------------------------------------------------- helpers

    def stored(self) -> dict[Pair, Positions]:
        return {
            (c.watcher, c.target_key, c.target_agent_id): (c.last_seen, c.notified, c.material)
            for c in self.watch.store.read_model().all_cursors()
        }

    def _record(self, target: Identity, kind: SignalKind, actor: Actor, watchers: Iterable[str]) -> None:
        key, agent = target
        producers = [w for w in watchers if identity_of_watcher(w) != target]  # never the session itself
        before = self.stored()
        self.waker.take()
        signal = self.watch.record(
            key, kind=kind, actor=actor, summary=SUMMARIES[kind], agent_id=agent, watchers=producers
        )
        assert signal.sequence > self.last_sequence  # one global counter, strictly increasing
        self.last_sequence = signal.sequence
        opened = self.model.record(target, signal.sequence, kind, actor, producers)
        after = self.stored()
        calls = set(self.waker.take())
        if kind.value not in NOTIFYING and kind is not SignalKind.CHILD_SPAWNED:
            assert after == before  # log-only kinds touch no cursor
        if actor.actor_type == "agent" and actor.actor_id is not None and kind.value in NOTIFYING:
            mine = (actor.actor_id, key, agent)
            assert after.get(mine) == before.get(mine)  # no notice for a self-caused signal
        touched = {w for (w, k, a), lnm in after.items() if (k, a) == target and before.get((w, k, a)) != lnm}
        may_wake = {(w, reason(key)) for w in touched if not is_subagent(w)}
        must_wake = {(w, reason(key)) for w in opened if not is_subagent(w)}
        if kind.value in NOTIFYING:
            assert must_wake <= calls <= may_wake
        else:
            assert calls == set()

    def _expect_follow_up_wakes(self, watcher: str, follow_ups: Iterable[str]) -> None:
        expected = set() if is_subagent(watcher) else {(watcher, reason(key)) for key in follow_ups}
        assert set(self.waker.take()) == expected

    # --------------------------------------------------------------------------------- rules

    @rule(
        session=st.sampled_from(IDENTITIES),
        kind=st.sampled_from(list(SignalKind)),
        actor=st.sampled_from(ACTORS),
        watchers=st.lists(st.sampled_from(PRODUCER_WATCHERS), max_size=3),
    )
    def record(self, session: Identity, kind: SignalKind, actor: Actor, watchers: list[str]) -> None:
        spawns_itself = actor.actor_id is not None and identity_of_watcher(actor.actor_id) == session
        if kind is SignalKind.CHILD_SPAWNED and spawns_itself:
            return  # a session spawning itself is outside the SPEC
        self._record(session, kind, actor, watchers)

    @rule(
        session=st.sampled_from(TARGETS),
        watchers=st.lists(st.sampled_from(PRODUCER_WATCHERS), min_size=1, max_size=4),
        actor=st.sampled_from(ACTORS),
    )
    def record_with_producer_watchers(self, session: Identity, watchers: list[str], actor: Actor) -> None:
        self._record(session, SignalKind.GOAL_CHANGED, actor, watchers)

    @rule(
        watcher=st.sampled_from((*WATCHERS, "global")),
        session=st.sampled_from(IDENTITIES),
        explicit_agent=st.booleans(),
    )
    def watch_target(self, watcher: str, session: Identity, explicit_agent: bool) -> None:
        key, agent = session
        self.waker.take()
        accepted = self.watch.watch(watcher, key, target_agent_id=agent if explicit_agent else None)
        watcher_identity = identity_of_watcher(watcher)
        expected = (
            watcher_identity is not None
            and watcher_identity != session
            and (explicit_agent or agent_of(key) is not None)
        )
        assert accepted == expected
        pair = (watcher, key, agent)
        if accepted and pair not in self.model.cursors:
            head = self.model.heads.get(session, 0)
            self.model.cursors[pair] = (head, head, head)  # SPEC §5.2: starts at the head
        assert self.waker.take() == []

    @rule(watcher=st.sampled_from(HOLDER_KEYS), session=st.sampled_from(IDENTITIES))
    def unwatch(self, watcher: str, session: Identity) -> None:
        key, agent = session
        removed = self.watch.unwatch(watcher, key, target_agent_id=agent)
        assert removed == ((watcher, key, agent) in self.model.cursors)
        self.model.cursors.pop((watcher, key, agent), None)

    @rule(watcher=st.sampled_from(HOLDER_KEYS))
    def drain(self, watcher: str) -> None:
        expected = self.model.pending(watcher)
        self.waker.take()
        drained = self.watch.drain(watcher)
        assert {(n.target, n.target_agent_id): n.last_seen for n in drained} == expected
        assert len(drained) == len(expected)
        for notice in drained:
            assert notice.text == expected_text(notice.target, notice.last_seen)
        follow_ups = [k for k, a in expected if self.model.acknowledge((watcher, k, a))]
        self._expect_follow_up_wakes(watcher, follow_ups)

    @rule(
        watcher=st.sampled_from(HOLDER_KEYS),
        keep=st.lists(st.booleans(), min_size=len(IDENTITIES), max_size=len(IDENTITIES)),
        interleaved=st.none() | st.sampled_from(TARGETS),
    )
    def acknowledge_some(self, watcher: str, keep: list[bool], interleaved: Identity | None) -> None:
        notices = self.watch.pending_notices(watcher)
        chosen: list[Notice] = [n for n, k in zip(notices, keep, strict=False) if k]
        if interleaved is not None:  # a signal between reading and acknowledging (two-phase)
            self._record(interleaved, SignalKind.HUMAN_DIRECT_MESSAGE, Actor.human(), ())
        self.waker.take()
        self.watch.acknowledge(watcher, chosen)
        follow_ups = [
            n.target for n in chosen if self.model.acknowledge((watcher, n.target, n.target_agent_id))
        ]
        self._expect_follow_up_wakes(watcher, follow_ups)

    @rule(identity=st.sampled_from(IDENTITIES))
    def reset(self, identity: Identity) -> None:
        key, agent = identity
        self.watch.reset_session(key, agent_id=agent)
        self.model.drop_held_by(identity)  # SPEC §9: the target-side history stays

    @rule(identity=st.sampled_from(IDENTITIES))
    def delete(self, identity: Identity) -> None:
        key, agent = identity
        self.watch.delete_session(key, agent_id=agent)
        self.model.drop_held_by(identity)
        self.model.drop_targeting(identity)
        self.model.heads.pop(identity, None)
        self.model.known.discard(identity)
        self.model.registered.discard(identity)

    @rule(identity=st.sampled_from(IDENTITIES))
    def upsert(self, identity: Identity) -> None:
        key, agent = identity
        self.watch.upsert_session(key, agent_id=agent)
        self.model.known.add(identity)
        self.model.registered.add(identity)

    @rule()
    def restart(self) -> None:
        self.waker.take()
        if self.store_kind != "memory":  # a store that outlives the process: reopen it
            self.watch.close()
            self.watch = sessionwatch.open(self.url, clock=self.clock, waker=self.waker)
        else:
            self.watch.sweep()
        expected = self.model.sweep()
        assert set(self.waker.take()) == expected

    @rule(minutes=st.integers(1, 180))
    def advance_clock(self, minutes: int) -> None:
        self.clock.advance(minutes=minutes)

    # ---------------------------------------------------------------------------- invariants

    @invariant()
    def cursors_are_ordered(self) -> None:
        for last_seen, notified, material in self.stored().values():
            assert last_seen <= notified <= material

    @invariant()
    def cursors_match_the_model(self) -> None:
        assert self.stored() == self.model.cursors

    @invariant()
    def one_notice_per_stale_pair_with_the_exact_text(self) -> None:
        for watcher in {*HOLDER_KEYS, *(w for w, _, _ in self.model.cursors)}:
            notices = self.watch.pending_notices(watcher)
            targets = [(n.target, n.target_agent_id) for n in notices]
            assert len(targets) == len(set(targets))
            assert dict(zip(targets, (n.last_seen for n in notices), strict=True)) == self.model.pending(
                watcher
            )
            for notice in notices:
                assert notice.watcher == watcher
                assert notice.text == expected_text(notice.target, notice.last_seen)

    @invariant()
    def heads_match_the_model(self) -> None:
        for identity in IDENTITIES:
            key, agent = identity
            if identity in self.model.known:
                assert self.watch.session_status(key, agent_id=agent).state_version == self.model.heads.get(
                    identity, 0
                )
            else:
                with pytest.raises(UnknownSession):
                    self.watch.session_status(key, agent_id=agent)

    @invariant()
    def replay_rebuilds_the_stored_read_model(self) -> None:
        assert self.watch.rebuild_read_model() == self.watch.store.read_model()


class SqliteNoticeMachine(NoticeMachine):
    """The same machine on a SQLite file in its own temporary directory; a restart reopens the file."""

    store_kind = "sqlite"


class PostgresNoticeMachine(NoticeMachine):
    """The same machine on a PostgreSQL schema of its own; a restart reopens it."""

    store_kind = "postgres"


@pytest.mark.parametrize(
    "machine",
    [
        pytest.param(NoticeMachine, id="memory"),
        pytest.param(SqliteNoticeMachine, id="sqlite"),
        pytest.param(PostgresNoticeMachine, id="postgres", marks=needs_postgres),
    ],
)
def test_notice_machine_matches_the_spec_model(machine: type[NoticeMachine]) -> None:
    run_state_machine_as_test(machine, settings=MACHINE_SETTINGS)
