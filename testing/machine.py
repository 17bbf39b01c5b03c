"""The notice machine: a Hypothesis state machine that drives one `SessionWatch` and checks it.

Every step is compared with the oracle (`NoticeModel`); a host overrides `open_watch` to run it on
its own store and wiring.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import sessionwatch
from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.domain.errors import InvalidSignal, UnknownSession
from sessionwatch.domain.ports import Clock, Waker
from sessionwatch.domain.signals import Actor, RunOutcome, SignalKind
from sessionwatch.projections.models import Notice, Signal
from sessionwatch.testing.fakes import FakeClock, RecordingWaker
from sessionwatch.testing.machine_world import (
    CRON_GROUP,
    GROUP,
    HOLDER_KEYS,
    IDENTITIES,
    KIND_SUMMARIES,
    MACHINE_ACTORS,
    PRODUCER_WATCHERS,
    TARGETS,
    WATCHERS,
    expect,
    expected_text,
    require,
)
from sessionwatch.testing.model import (
    Identity,
    NoticeModel,
    Pair,
    Positions,
    agent_of,
    identity_of_watcher,
    is_subagent,
    wake_reason,
)


class SessionWatchMachine(RuleBasedStateMachine):
    """The notice protocol under arbitrary interleavings, checked after every step.

    Records of every kind by humans, the system and agents (each watcher itself or another),
    producer watchers, ends of runs naming their requester, watch / unwatch, drains, two-phase
    acknowledgements, resets, deletes, upserts, restarts and clock steps drive one `SessionWatch`;
    a `NoticeModel` says what the store must hold, and the invariants compare cursors, pending
    notices and their exact text, heads, wakes and a replay of the event store with it.

    A host subclasses it and overrides `open_watch` to open its own store and wiring, then runs
    `MyMachine.TestCase` (pytest and unittest collect it). Each example starts from an empty
    store; `tmp_path` is a fresh directory per example, removed afterwards.
    """

    reopen_on_restart: ClassVar[bool] = True
    """The `restart` rule closes the watch and reopens it through `open_watch`, as a host restart
    does. Set False for a store that does not outlive `close()`: the rule then runs the restart
    sweep on the open watch instead (as it always does for a `memory://` store)."""

    notify_terminal_runs: ClassVar[bool] = False
    """Whether the store under test notifies for `run_completed` and `run_failed`: set True, and
    open it with `notify_terminal_runs=True` in `open_watch`, to check that setting."""

    wake_coalesce: ClassVar[float] = 0.0
    """The wake coalescing window (seconds) of the store under test: set it, and open the store
    with `wake_coalesce=self.wake_coalesce` in `open_watch`, to check that a watcher is woken at
    most once per window and that a trailing wake follows at the first call after its end."""
    notify_on_create: ClassVar[bool] = False
    """Whether the store under test lists reported creations on the main session's digest: set
    True, and open it with `notify_on_create=True` in `open_watch`, to check that setting."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp_path = Path(tempfile.mkdtemp(prefix="sessionwatch-machine-"))
        self.clock = FakeClock()
        self.waker = RecordingWaker()
        self.model = NoticeModel(
            notify_terminal_runs=self.notify_terminal_runs,
            wake_coalesce=self.wake_coalesce,
            notify_on_create=self.notify_on_create,
        )
        self.last_sequence = 0
        self.runs = 0  # the runs ended so far: each end gets a run id of its own
        try:
            self.watch = self.open_watch(self.clock, self.waker)
        except BaseException:
            shutil.rmtree(self.tmp_path, ignore_errors=True)
            raise

    def open_watch(self, clock: Clock, waker: Waker) -> SessionWatch:
        """Open the `SessionWatch` under test; override it to open the host's own.

        Called once per example, and again by each `restart` (so it must find the same store
        then). Pass `clock` and `waker` on (a host waker may wrap `waker`); keep the restart
        sweep on (the `open()` default) and a retention that prunes nothing within days.
        """
        return sessionwatch.open(
            "memory://",
            clock=clock,
            waker=waker,
            notify_terminal_runs=self.notify_terminal_runs,
            wake_coalesce=self.wake_coalesce,
            notify_on_create=self.notify_on_create,
        )

    def teardown(self) -> None:
        """Close the watch and remove `tmp_path`."""
        try:
            self.watch.close()
        finally:
            shutil.rmtree(self.tmp_path, ignore_errors=True)

    # ------------------------------------------------------------------------------- helpers

    def stored(self) -> dict[Pair, Positions]:
        """Every cursor in the store, as `(L, N, M)` per pair."""
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
            key, kind=kind, actor=actor, summary=KIND_SUMMARIES[kind], agent_id=agent, watchers=producers
        )
        self._check_recorded(target, signal, actor, producers, before)

    def _check_recorded(
        self,
        target: Identity,
        signal: Signal,
        actor: Actor,
        producers: list[str],
        before: dict[Pair, Positions],
    ) -> None:
        """Compare the store after `signal` (recorded now, naming `producers`) with the model's record."""
        key, agent = target
        kind = signal.kind
        require(
            signal.sequence > self.last_sequence,
            f"sequence {signal.sequence} after {self.last_sequence}: one global counter, strictly increasing",
        )
        self.last_sequence = signal.sequence
        opened = self.model.record(target, signal.sequence, kind, actor, producers)
        after = self.stored()
        wakes = self.waker.take()
        notifying = self.model.notifying
        if kind.value not in notifying and kind is not SignalKind.CHILD_SPAWNED:
            expect(after, before, f"cursors after a log-only {kind.value}")
        if actor.actor_type == "agent" and actor.actor_id is not None and kind.value in notifying:
            mine = (actor.actor_id, key, agent)
            expect(after.get(mine), before.get(mine), "the actor's own cursor after a self-caused signal")
        if self.model.wakes is not None:
            owed = [(w, wake_reason(key)) for w in sorted(opened) if self.model.owes_wake((w, key, agent))]
            self._expect_coalesced(wakes, owed, f"wakes after a {kind.value}")
            return
        calls = set(wakes)
        touched = {w for (w, k, a), lnm in after.items() if (k, a) == target and before.get((w, k, a)) != lnm}
        may_wake = {(w, wake_reason(key)) for w in touched if self.model.owes_wake((w, key, agent))}
        must_wake = {(w, wake_reason(key)) for w in opened if self.model.owes_wake((w, key, agent))}
        if kind.value in notifying:
            require(
                must_wake <= calls <= may_wake,
                f"wakes {sorted(calls)}: must include {sorted(must_wake)}, may include {sorted(may_wake)}",
            )
        else:
            expect(calls, set(), f"wakes after a {kind.value}")

    def _now(self) -> float:
        return self.clock.now().timestamp()

    def _expect_coalesced(self, calls: list[tuple[str, str]], owed: list[tuple[str, str]], what: str) -> None:
        """With coalescing: the wakes `owed` (in order) as the model's windows let them through.

        Exactly the watchers the model wakes now, each once, each for one of the reasons owed.
        """
        if self.model.wakes is None:
            raise AssertionError("only a machine with wake_coalesce coalesces")
        woken = self.model.wakes.offer([watcher for watcher, _ in owed], self._now())
        expect(sorted(w for w, _ in calls), sorted(woken), f"{what} (coalesced, one per watcher)")
        reasons = {reason for _, reason in owed}
        for call in calls:
            require(call[1] in reasons, f"{what}: wake {call} for none of {sorted(reasons)}")

    def _expect_digest(self, watcher: str, digests: list[Notice]) -> None:
        """The digest notices given to `watcher` are exactly the model's one, with its exact text."""
        expected = self.model.digest_text(identity_of_watcher(watcher))
        got = [(n.last_seen, n.text) for n in digests]
        expect(got, [] if expected is None else [expected], f"creation digest of {watcher}")
        for notice in digests:
            expect((notice.target, notice.digest), (watcher, "session_creations"), "digest notice target")

    def _expect_follow_up_wakes(self, watcher: str, follow_ups: Iterable[Identity]) -> None:
        owed = [(watcher, wake_reason(k)) for k, a in follow_ups if self.model.owes_wake((watcher, k, a))]
        if self.model.wakes is not None:
            self._expect_coalesced(self.waker.take(), owed, f"follow-up wakes of {watcher}")
            return
        expect(set(self.waker.take()), set(owed), f"follow-up wakes of {watcher}")

    # --------------------------------------------------------------------------------- rules

    @rule(
        session=st.sampled_from(IDENTITIES),
        kind=st.sampled_from(list(SignalKind)),
        actor=st.sampled_from(MACHINE_ACTORS),
        watchers=st.lists(st.sampled_from(PRODUCER_WATCHERS), max_size=3),
    )
    def record(self, session: Identity, kind: SignalKind, actor: Actor, watchers: list[str]) -> None:
        """`record` any kind on any identity, with producer watchers."""
        spawns_itself = actor.actor_id is not None and identity_of_watcher(actor.actor_id) == session
        if kind is SignalKind.CHILD_SPAWNED and spawns_itself:
            return  # a session spawning itself is outside the protocol
        if kind is SignalKind.CHILD_SPAWNED and self._refuses_spawn_watchers(session, actor, watchers):
            return
        self._record(session, kind, actor, watchers)

    def _refuses_spawn_watchers(self, target: Identity, actor: Actor, watchers: list[str]) -> bool:
        """A spawn seeds only its requester's cursor: other watchers are refused, nothing written."""
        requester = actor.actor_id if actor.actor_type == "agent" else None
        if all(identity_of_watcher(w) == target or w == requester for w in watchers):
            return False
        key, agent = target
        before = self.stored()
        try:
            self.watch.record(
                key,
                kind=SignalKind.CHILD_SPAWNED,
                actor=actor,
                summary=KIND_SUMMARIES[SignalKind.CHILD_SPAWNED],
                agent_id=agent,
                watchers=watchers,
            )
        except InvalidSignal as refused:
            expect(refused.field, "watchers", "the field named by a refused spawn")
        else:
            raise AssertionError(f"a child_spawned with watchers {watchers} other than its requester")
        expect(self.stored(), before, "cursors after a refused spawn")
        return True

    @rule(
        session=st.sampled_from(TARGETS),
        requester=st.sampled_from(PRODUCER_WATCHERS),
        outcome=st.sampled_from(("ok", "error", "timeout", "cancelled")),
    )
    def run_terminal(self, session: Identity, requester: str, outcome: RunOutcome) -> None:
        """`record_run_terminal`: the requester it names is the signal's producer watcher."""
        key, agent = session
        self.runs += 1
        before = self.stored()
        self.waker.take()
        signal = self.watch.record_run_terminal(
            child_key=key, run_id=f"run-{self.runs}", requester_key=requester, outcome=outcome, agent_id=agent
        )
        require(signal is not None, f"the end of a run of {session} was not recorded")
        assert signal is not None  # noqa: S101 - for the type checker; require raised otherwise
        producers = [requester] if identity_of_watcher(requester) != session else []
        self._check_recorded(session, signal, Actor.system(), producers, before)

    @rule(
        session=st.sampled_from(IDENTITIES),
        actor=st.sampled_from(MACHINE_ACTORS),
        session_id=st.sampled_from((None, "s-1", "s-2")),
        internal=st.booleans(),
    )
    def record_session_created(
        self, session: Identity, actor: Actor, session_id: str | None, internal: bool
    ) -> None:
        """A reported creation: registered (a watcher the sweep finds), log-only, it wakes nobody.

        With `notify_on_create`, the key may be listed on its agent's main session's digest.
        """
        key, agent = session
        before = self.stored()
        self.waker.take()
        signal = self.watch.record_session_created(
            key, actor=actor, session_id=session_id, agent_id=agent, internal=internal
        )
        require(signal is not None, f"a creation of {session} was not recorded")
        assert signal is not None  # noqa: S101 - for the type checker; require raised otherwise
        dedupe = f"created:{agent}:{key}:{session_id or ''}"
        expect(signal.dedupe_key, dedupe, "the dedupe key of a created signal")
        if dedupe in self.model.created:
            require(signal.sequence <= self.last_sequence, "a repeated creation answers with its signal")
        else:
            require(signal.sequence > self.last_sequence, "a creation takes the next sequence")
            self.last_sequence = signal.sequence
            self.model.create(session, signal.sequence, actor, dedupe=dedupe, internal=internal)
        self.model.known.add(session)
        self.model.registered.add(session)
        expect(self.stored(), before, "cursors after a created signal")
        expect(self.waker.take(), [], "wakes after a created signal")

    @rule(
        session=st.sampled_from(TARGETS),
        watchers=st.lists(st.sampled_from(PRODUCER_WATCHERS), min_size=1, max_size=4),
        actor=st.sampled_from(MACHINE_ACTORS),
    )
    def record_with_producer_watchers(self, session: Identity, watchers: list[str], actor: Actor) -> None:
        """A notifying `goal_changed` that always names producer watchers."""
        self._record(session, SignalKind.GOAL_CHANGED, actor, watchers)

    @rule(
        watcher=st.sampled_from((*WATCHERS, "global")),
        session=st.sampled_from(IDENTITIES),
        explicit_agent=st.booleans(),
        ambient=st.booleans(),
    )
    def watch_target(self, watcher: str, session: Identity, explicit_agent: bool, ambient: bool) -> None:
        """`watch` starts a cursor at the target's head and never clobbers one.

        An explicit watch promotes an ambient cursor (waking its pending notice); an ambient one never
        downgrades an explicit one.
        """
        key, agent = session
        self.waker.take()
        accepted = self.watch.watch(
            watcher, key, target_agent_id=agent if explicit_agent else None, ambient=ambient
        )
        watcher_identity = identity_of_watcher(watcher)
        expected = (
            watcher_identity is not None
            and watcher_identity != session
            and (explicit_agent or agent_of(key) is not None)
        )
        expect(accepted, expected, f"watch({watcher!r}, {key!r}, explicit agent: {explicit_agent})")
        pair = (watcher, key, agent)
        promoted = accepted and self.model.register(pair, ambient=ambient)
        woken = [(watcher, wake_reason(key))] if promoted and not is_subagent(watcher) else []
        if self.model.wakes is not None:
            self._expect_coalesced(self.waker.take(), woken, "wakes after a watch")
            return
        expect(self.waker.take(), woken, "wakes after a watch")

    @rule(actor=st.sampled_from(MACHINE_ACTORS), session=st.sampled_from((GROUP, CRON_GROUP)))
    def human_turn_in_group(self, actor: Actor, session: Identity) -> None:
        """`record_human_message` into a group: kept only for a human's turn into a watched session.

        Before a human's turn into the group is recorded, the agent's main session becomes its
        ambient watcher at its head, so the turn is kept and leaves that watcher a queue-only
        notice. The cron session's key names a group too, but a cron session is no group.
        """
        key, agent = session
        self.waker.take()
        before = self.stored()
        if actor.actor_type == "human" and session == GROUP:
            self.model.register(("agent:main:main", key, agent), ambient=True)
        watched = any((k, a) == session for _, k, a in self.model.cursors)
        signal = self.watch.record_human_message(key, channel="telegram", actor=actor, agent_id=agent)
        kept = actor.actor_type == "human" and watched
        expect(signal is not None, kept, f"whether a turn by {actor.actor_type} into {key} was kept")
        if signal is None:
            expect(self.waker.take(), [], "wakes after a turn not kept")
            expect(self.stored(), before, "cursors after a turn not kept: nothing written")
            return
        self.last_sequence = signal.sequence
        opened = self.model.record(session, signal.sequence, SignalKind.HUMAN_DIRECT_MESSAGE, actor, ())
        must = [(w, wake_reason(key)) for w in sorted(opened) if self.model.owes_wake((w, key, agent))]
        if self.model.wakes is not None:
            self._expect_coalesced(self.waker.take(), must, "wakes after a turn into a group")
        else:
            expect(set(self.waker.take()), set(must), "wakes after a turn into a group")

    @rule(watcher=st.sampled_from(HOLDER_KEYS), session=st.sampled_from(IDENTITIES))
    def unwatch(self, watcher: str, session: Identity) -> None:
        """`unwatch` removes the cursor, and says whether there was one."""
        key, agent = session
        removed = self.watch.unwatch(watcher, key, target_agent_id=agent)
        expect(removed, self.model.remove((watcher, key, agent)), f"unwatch({watcher!r}, {session})")

    @rule(watcher=st.sampled_from(HOLDER_KEYS))
    def drain(self, watcher: str) -> None:
        """`drain` returns exactly the pending notices and acknowledges them."""
        expected = self.model.pending(watcher)
        self.waker.take()
        everything = self.watch.drain(watcher)
        drained = [n for n in everything if n.digest is None]
        self._expect_digest(watcher, [n for n in everything if n.digest is not None])
        self.model.drain_digest(identity_of_watcher(watcher))
        got = {(n.target, n.target_agent_id): n.last_seen for n in drained}
        expect(got, expected, f"notices drained by {watcher}")
        expect(len(drained), len(expected), f"number of notices drained by {watcher}")
        for notice in drained:
            expect(notice.text, expected_text(notice.target, notice.last_seen), "notice text")
        follow_ups = [(k, a) for k, a in expected if self.model.acknowledge((watcher, k, a))]
        self._expect_follow_up_wakes(watcher, follow_ups)

    @rule(
        watcher=st.sampled_from(HOLDER_KEYS),
        keep=st.lists(st.booleans(), min_size=len(IDENTITIES), max_size=len(IDENTITIES)),
        interleaved=st.none() | st.sampled_from(TARGETS),
    )
    def acknowledge_some(self, watcher: str, keep: list[bool], interleaved: Identity | None) -> None:
        """Two-phase: read the notices, maybe record in between, acknowledge some."""
        notices = self.watch.pending_notices(watcher)
        chosen: list[Notice] = [n for n, k in zip(notices, keep, strict=False) if k]
        if interleaved is not None:  # a signal between reading and acknowledging
            self._record(interleaved, SignalKind.HUMAN_DIRECT_MESSAGE, Actor.human(), ())
        self.waker.take()
        self.watch.acknowledge(watcher, chosen)
        for digest in (n for n in chosen if n.digest is not None):  # through the sequence it showed
            self.model.drain_digest(identity_of_watcher(watcher), digest.last_seen)
        follow_ups = [
            (n.target, n.target_agent_id)
            for n in chosen
            if n.digest is None and self.model.acknowledge((watcher, n.target, n.target_agent_id))
        ]
        self._expect_follow_up_wakes(watcher, follow_ups)

    @rule(identity=st.sampled_from(IDENTITIES))
    def reset(self, identity: Identity) -> None:
        """`reset_session` drops the cursors the session holds; its history stays."""
        key, agent = identity
        self.watch.reset_session(key, agent_id=agent)
        self.model.drop_held_by(identity)
        self.model.forget(identity, deleted=False)

    @rule(identity=st.sampled_from(IDENTITIES))
    def delete(self, identity: Identity) -> None:
        """`delete_session` forgets the identity and every cursor it holds or is watched by."""
        key, agent = identity
        self.watch.delete_session(key, agent_id=agent)
        self.model.drop_held_by(identity)
        self.model.forget(identity, deleted=True)
        self.model.drop_targeting(identity)
        self.model.heads.pop(identity, None)
        self.model.known.discard(identity)
        self.model.registered.discard(identity)

    @rule(identity=st.sampled_from(IDENTITIES))
    def upsert(self, identity: Identity) -> None:
        """`upsert_session` makes the identity known and an existing watcher for the sweep."""
        key, agent = identity
        self.watch.upsert_session(key, agent_id=agent)
        self.model.known.add(identity)
        self.model.registered.add(identity)

    @rule()
    def restart(self) -> None:
        """Reopen the store (an in-memory one: sweep it); open notices are re-frozen and re-woken."""
        self.waker.take()
        reopened = self.reopen_on_restart and not isinstance(self.watch.store, MemorySignalStore)
        if reopened:
            self.watch.close()
            self.watch = self.open_watch(self.clock, self.waker)
            self._require_same_store()
        else:
            self.watch.sweep()
        owed = self.model.sweep()
        if self.model.wakes is None:
            expect(set(self.waker.take()), owed, "wakes of the restart sweep")
            return
        if reopened:
            self.model.wakes.forget()  # coalescing does not survive a restart
        self._expect_coalesced(self.waker.take(), sorted(owed), "wakes of the restart sweep")

    def _require_same_store(self) -> None:
        for key, agent in sorted(self.model.known)[:1]:
            try:
                self.watch.session_status(key, agent_id=agent)
            except UnknownSession:
                raise AssertionError(
                    f"after a restart, open_watch() gave a store that does not know {key!r} ({agent}):"
                    " it must reopen the same store (or set reopen_on_restart = False for a store that"
                    " does not outlive close())"
                ) from None

    @rule(minutes=st.integers(1, 180))
    def advance_clock(self, minutes: int) -> None:
        """Time passes; with coalescing, the next call sends the trailing wakes whose window ended."""
        self.clock.advance(minutes=minutes)
        if self.model.wakes is None:
            return
        self.waker.take()
        self.watch.pending_notices(WATCHERS[0])  # any call into the store delivers them first
        woken = self.model.wakes.trailing(self._now(), self._owes_a_wake)
        reasons = {wake_reason(key) for key, _ in IDENTITIES}
        calls = self.waker.take()
        expect(sorted(w for w, _ in calls), sorted(woken), "trailing wakes (one per watcher)")
        for call in calls:
            require(call[1] in reasons, f"trailing wake {call} for no known target")

    def _owes_a_wake(self, watcher: str) -> bool:
        """Whether the watcher has a pending notice that wakes (not an ambient one)."""
        return any(self.model.owes_wake((watcher, k, a)) for k, a in self.model.pending(watcher))

    # ---------------------------------------------------------------------------- invariants

    @invariant()
    def cursors_are_ordered(self) -> None:
        """`L <= N <= M` for every cursor."""
        for pair, (last_seen, notified, material) in self.stored().items():
            require(last_seen <= notified <= material, f"{pair}: L, N, M = {last_seen, notified, material}")

    @invariant()
    def cursors_match_the_model(self) -> None:
        """The stored cursors are exactly the model's."""
        expect(self.stored(), self.model.cursors, "stored cursors")

    @invariant()
    def provenances_match_the_model(self) -> None:
        """Each stored cursor is explicit or ambient exactly as the model says."""
        stored = {
            (c.watcher, c.target_key, c.target_agent_id): c.provenance
            for c in self.watch.store.read_model().all_cursors()
        }
        expect(stored, self.model.provenances(), "cursor provenances")

    @invariant()
    def one_notice_per_stale_pair_with_the_exact_text(self) -> None:
        """At most one pending notice per (watcher, target), with the byte-stable text."""
        for watcher in {*HOLDER_KEYS, *(w for w, _, _ in self.model.cursors)}:
            everything = self.watch.pending_notices(watcher)
            notices = [n for n in everything if n.digest is None]
            self._expect_digest(watcher, [n for n in everything if n.digest is not None])
            targets = [(n.target, n.target_agent_id) for n in notices]
            expect(len(set(targets)), len(targets), f"distinct targets among {watcher}'s notices")
            got = dict(zip(targets, (n.last_seen for n in notices), strict=True))
            expect(got, self.model.pending(watcher), f"pending notices of {watcher}")
            for notice in notices:
                expect(notice.watcher, watcher, "notice watcher")
                expect(notice.text, expected_text(notice.target, notice.last_seen), "notice text")
                pair = (watcher, notice.target, notice.target_agent_id)
                expect(notice.provenance, self.model.provenances()[pair], f"provenance of {pair}'s notice")

    @invariant()
    def heads_match_the_model(self) -> None:
        """Each known identity's head is its last signal's sequence; an unknown one is unknown."""
        for identity in IDENTITIES:
            key, agent = identity
            try:
                head: int | None = self.watch.session_status(key, agent_id=agent).state_version
            except UnknownSession:
                head = None
            expected = self.model.heads.get(identity, 0) if identity in self.model.known else None
            expect(head, expected, f"head of {identity} (None: unknown session)")

    @invariant()
    def the_audit_is_clean(self) -> None:
        """`audit()` finds nothing: the replay rebuilds the stored read models; every invariant holds."""
        report = self.watch.audit()
        details = "; ".join(f"{v.kind}: {v.detail}" for v in report.violations)
        require(report.ok, f"the audit found violations: {details}")
