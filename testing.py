"""The test kit for embedders (SPEC §16): Hypothesis strategies, a fake clock and the notice machine.

`SessionWatchMachine` checks a `SessionWatch` against its own model of the SPEC rules; a host
overrides `open_watch` to run it on its own store and wiring. Needs the `testing` extra
(`pip install 'sessionwatch[testing]'`); `import sessionwatch` never imports this module.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import ClassVar, TypeAlias, TypeVar

try:
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
except ImportError as exc:  # the extra is optional: say how to get it
    raise ImportError(
        "sessionwatch.testing needs Hypothesis: pip install 'sessionwatch[testing]'", name=exc.name
    ) from exc

import sessionwatch
from sessionwatch.adapters.entry.watch import SessionWatch, SignalInput
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.domain.errors import InvalidSignal, UnknownSession
from sessionwatch.domain.ports import Clock, Waker
from sessionwatch.domain.signals import Actor, SignalKind
from sessionwatch.projections.models import Notice

__all__ = [
    "AGENT_IDS",
    "BARE_KEYS",
    "CHANNELS",
    "DEDUPE_KEYS",
    "FIXED_SUMMARIES",
    "HOT_REFS",
    "RUN_IDS",
    "SESSION_KINDS",
    "START",
    "SUBAGENT_KEYS",
    "FakeClock",
    "NoticeModel",
    "OccurredAt",
    "RecordingWaker",
    "SessionRef",
    "SessionWatchMachine",
    "actors",
    "agent_ids",
    "agent_qualified_keys",
    "agent_qualified_refs",
    "bare_keys",
    "bare_refs",
    "channels",
    "dedupe_keys",
    "occurred_ats",
    "owner_of",
    "payloads",
    "run_ids",
    "session_refs",
    "signal_inputs",
    "signal_kinds",
    "subagent_keys",
    "summaries",
    "weighted",
]

T = TypeVar("T")

# ------------------------------------------------------------------------------------ fakes

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""Where a `FakeClock` starts unless told otherwise."""


class FakeClock:
    """A `Clock` that only moves when a test says so."""

    def __init__(self, start: datetime = START) -> None:
        self.current = start

    def now(self) -> datetime:
        """The current fake time (aware UTC)."""
        return self.current

    def advance(self, **delta: float) -> datetime:
        """Move forward by `timedelta(**delta)` (`advance(minutes=5)`) and return the new time."""
        self.current += timedelta(**delta)
        return self.current


class RecordingWaker:
    """A `Waker` that records every `(watcher, reason)` it is asked to wake."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def wake(self, watcher_key: str, reason: str) -> None:
        """Record the wake."""
        self.calls.append((watcher_key, reason))

    def take(self) -> list[tuple[str, str]]:
        """The wakes since the last `take`, forgetting them."""
        calls, self.calls = self.calls, []
        return calls


# ------------------------------------------------------------------------------- strategies
# Pools are small on purpose so that identities, dedupe keys and actors collide and interesting
# interleavings (a duplicate dedupe key, a record after a delete) show up within a few examples.

AGENT_IDS = ("main", "ops", "research")
"""Agent ids; each is a valid explicit id (no ':', no spaces)."""

_RESTS = (
    "main",
    "worker-1",
    "telegram:group:42",
    "subagent:child",
    "subagent:child:subagent:grandchild",
    "SubAgent:upper",
    "acp:codex:7f3a",
)
"""What follows `agent:<id>:`; some are subagent keys (SPEC §2, case-insensitive)."""

SUBAGENT_KEYS = (
    "agent:main:subagent:child",
    "agent:main:subagent:child:subagent:grandchild",
    "agent:ops:SubAgent:probe",
)
"""Agent-qualified subagent keys: never woken, they see their notices on their next turn (SPEC §6.4)."""

BARE_KEYS = ("global", "cron:nightly", "hook:deploy", "Agent:not-qualified")
"""Keys that are not agent-qualified; each needs an explicit agent id (SPEC §2, §5.3)."""

SESSION_KINDS = ("main", "group", "cron", "hook", "node", "other")
"""Values of `upsert_session(kind=...)`."""

CHANNELS = ("telegram", "slack", "claude-code", "  web  ", "Канал", "チャンネル")
"""Channel names, padded and non-ASCII ones included."""

FIXED_SUMMARIES = (
    "human message via telegram",
    "human message via unknown",
    "child session spawned",
    "child run completed",
    "child run failed",
    "child run timed out",
    "child run cancelled",
    "session compacted",
    "session adopted",
    "upstream missing via claude-code",
    "goal created",
    "goal updated",
    "goal cleared",
)
"""The producers' summaries (SPEC §4)."""

DEDUPE_KEYS = (
    "child-spawned:run-1",
    "run-terminal:run-2",
    "compacted:op-3",
    "upstream:agent:main:main:src:9",
    "upstream-missing:global:src:1",
)
"""A small global pool, so that duplicate dedupe keys are frequent."""

RUN_IDS = ("run-1", "run-2", "run-3")
"""A small pool of run ids."""


@dataclass(frozen=True)
class SessionRef:
    """How a test names a session: the `key` and `agent_id` it passes, and the identity they mean.

    `identity` is `(trimmed key, owning agent id)`, the SPEC §2 pair, computed here independently
    of the code under test.
    """

    key: str
    agent_id: str | None
    owner: str

    @property
    def identity(self) -> tuple[str, str]:
        """The session identity `(session_key, agent_id)` this reference resolves to."""
        return (self.key.strip(), self.owner)


@st.composite
def agent_qualified_refs(draw: st.DrawFn) -> SessionRef:
    """`agent:<id>:<rest>` keys, subagent keys included; sometimes padded, sometimes with the id repeated."""
    owner = draw(st.sampled_from(AGENT_IDS))
    key = f"agent:{owner}:{draw(st.sampled_from(_RESTS))}"
    if draw(st.booleans()):
        key = f" {key} "  # keys are trimmed (SPEC §2): same identity
    explicit = owner if draw(st.booleans()) else None  # an id that agrees with the key is allowed
    return SessionRef(key=key, agent_id=explicit, owner=owner)


@st.composite
def bare_refs(draw: st.DrawFn) -> SessionRef:
    """Bare keys such as `global`, always with their explicit agent id."""
    owner = draw(st.sampled_from(AGENT_IDS))
    return SessionRef(key=draw(st.sampled_from(BARE_KEYS)), agent_id=owner, owner=owner)


HOT_REFS = (
    SessionRef(key="agent:main:main", agent_id=None, owner="main"),
    SessionRef(key="agent:main:subagent:child", agent_id=None, owner="main"),
    SessionRef(key="global", agent_id="main", owner="main"),
    SessionRef(key="global", agent_id="ops", owner="ops"),
)
"""A few identities most operations land on, so deletes and dedupe keys meet earlier records.

The two `global` sessions differ only by agent id (SPEC §5.3): they must never mix.
"""


def weighted(*choices: tuple[int, st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """Draw from one of `choices`, picked in proportion to its weight (shrinks towards the first)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


_AGENT_IDS = st.sampled_from(AGENT_IDS)
_SESSION_REFS = weighted((2, st.sampled_from(HOT_REFS)), (1, agent_qualified_refs()), (1, bare_refs()))
_AGENT_QUALIFIED_KEYS = agent_qualified_refs().map(lambda ref: ref.key.strip())
_SUBAGENT_KEYS = st.sampled_from(SUBAGENT_KEYS)
_BARE_KEYS = st.sampled_from(BARE_KEYS)


def agent_ids() -> st.SearchStrategy[str]:
    """Explicit agent ids (`agent_id=...`)."""
    return _AGENT_IDS


def session_refs() -> st.SearchStrategy[SessionRef]:
    """Any session reference the strict API accepts: agent-qualified, subagent and bare keys."""
    return _SESSION_REFS


def agent_qualified_keys() -> st.SearchStrategy[str]:
    """Agent-qualified keys, trimmed, subagent keys included: valid watchers, actors and spawn edges."""
    return _AGENT_QUALIFIED_KEYS


def subagent_keys() -> st.SearchStrategy[str]:
    """Agent-qualified subagent keys only (never woken, SPEC §6.4)."""
    return _SUBAGENT_KEYS


def bare_keys() -> st.SearchStrategy[str]:
    """Bare keys such as `global`: pass an explicit `agent_id` with them."""
    return _BARE_KEYS


_SIGNAL_KINDS = st.sampled_from(list(SignalKind))


def signal_kinds() -> st.SearchStrategy[SignalKind]:
    """Every SPEC §3.1 kind."""
    return _SIGNAL_KINDS


_ACTORS = st.one_of(
    st.just(Actor.human()),
    st.sampled_from(("alice", "bob")).map(Actor.human),
    _AGENT_QUALIFIED_KEYS.map(Actor.agent),
    st.just(Actor.system()),
)


def actors() -> st.SearchStrategy[Actor]:
    """Humans (named or not), agents acting from an agent-qualified key, and the system."""
    return _ACTORS


_LINE_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
    min_size=1,
    max_size=200,
).filter(lambda text: bool(text.strip()))
_SUMMARIES = st.one_of(st.sampled_from(FIXED_SUMMARIES), _LINE_TEXT)


def summaries() -> st.SearchStrategy[str]:
    """One short line: the producers' fixed phrases, or any non-blank single line of <= 200 chars."""
    return _SUMMARIES


_CHANNEL_VALUES = st.one_of(st.sampled_from(CHANNELS), _LINE_TEXT.map(lambda text: text[:64]))


def channels() -> st.SearchStrategy[str]:
    """Channel names for `record_human_message(channel=...)` and payloads: the pool, or any short line."""
    return _CHANNEL_VALUES


_NO_PAYLOAD: st.SearchStrategy[dict[str, object] | None] = st.none()
_PAYLOADS: dict[SignalKind, st.SearchStrategy[dict[str, object] | None]] = {
    SignalKind.HUMAN_DIRECT_MESSAGE: _NO_PAYLOAD
    | st.fixed_dictionaries({}, optional={"turns": st.integers(1, 50), "channel": _CHANNEL_VALUES}),
    SignalKind.GOAL_CHANGED: _NO_PAYLOAD
    | st.fixed_dictionaries({"status": st.sampled_from(("created", "updated", "cleared", "blocked"))}),
    SignalKind.RUN_FAILED: _NO_PAYLOAD
    | st.fixed_dictionaries({"outcome": st.sampled_from(("error", "timeout", "cancelled"))}),
    SignalKind.UPSTREAM_MISSING: _NO_PAYLOAD | st.fixed_dictionaries({"channel": _CHANNEL_VALUES}),
}


def payloads(kind: SignalKind) -> st.SearchStrategy[dict[str, object] | None]:
    """A valid payload for `kind`: only its whitelisted keys (SPEC §13.1), or none."""
    return _PAYLOADS.get(kind, _NO_PAYLOAD)


_DEDUPE_KEYS = st.none() | st.sampled_from(DEDUPE_KEYS)


def dedupe_keys() -> st.SearchStrategy[str | None]:
    """No dedupe key, or one from a small global pool (so duplicates happen)."""
    return _DEDUPE_KEYS


_RUN_IDS = st.none() | st.sampled_from(RUN_IDS)


def run_ids() -> st.SearchStrategy[str | None]:
    """No run id, or one from a small pool."""
    return _RUN_IDS


OccurredAt: TypeAlias = datetime | int | float | None
"""What `record(occurred_at=...)` accepts (SPEC §13.1)."""

_START_MS = int(START.timestamp() * 1000)
_SPAN_MS = 3 * 24 * 3600 * 1000
_AWARE = st.integers(-3 * 24 * 60, 3 * 24 * 60).map(lambda minutes: START + timedelta(minutes=minutes))
_OCCURRED_ATS: st.SearchStrategy[OccurredAt] = st.one_of(
    st.none(),
    st.sampled_from((math.nan, math.inf, -math.inf)),
    st.integers(_START_MS - _SPAN_MS, _START_MS + _SPAN_MS),
    st.floats(_START_MS - _SPAN_MS, _START_MS + _SPAN_MS, allow_nan=False),
    _AWARE,
    st.builds(
        lambda moment, hours: moment.astimezone(timezone(timedelta(hours=hours))),
        _AWARE,
        st.integers(-12, 12),
    ),
    st.just(datetime(2026, 1, 1, tzinfo=UTC)),
)


def occurred_ats() -> st.SearchStrategy[OccurredAt]:
    """Display times around `START`: missing, non-finite, epoch ms or aware datetimes in any offset."""
    return _OCCURRED_ATS


@st.composite
def signal_inputs(draw: st.DrawFn, refs: st.SearchStrategy[SessionRef] | None = None) -> SignalInput:
    """A valid `SignalInput` of any kind, with a payload that fits its kind, on a session of `refs`."""
    ref = draw(refs if refs is not None else _SESSION_REFS)
    kind = draw(_SIGNAL_KINDS)
    return SignalInput(
        session_key=ref.key,
        agent_id=ref.agent_id,
        kind=kind,
        actor=draw(_ACTORS),
        summary=draw(_SUMMARIES),
        payload=draw(payloads(kind)),
        run_id=draw(_RUN_IDS),
        occurred_at=draw(_OCCURRED_ATS),
        dedupe_key=draw(_DEDUPE_KEYS),
    )


def owner_of(item: SignalInput) -> str:
    """The agent id owning the input's session: explicit, else parsed from `agent:<id>:...`."""
    if item.agent_id is not None:
        return item.agent_id
    return item.session_key.strip().split(":")[1]


# --------------------------------------------------------------------- the notice machine

Identity: TypeAlias = tuple[str, str]
"""(session key, agent id): the SPEC §2 session identity."""
Pair: TypeAlias = tuple[str, str, str]
"""(watcher key, target key, target agent id): one cursor."""
Positions: TypeAlias = tuple[int, int, int]
"""(L, N, M)."""

_WATCHERS = ("agent:main:main", "agent:ops:main", "agent:main:subagent:helper", "agent:ops:SubAgent:probe")
"""Agent-qualified watchers; the last two are subagent keys (never woken, SPEC §6.4)."""

_TARGETS: tuple[Identity, ...] = (
    ("agent:main:worker", "main"),
    ("agent:main:subagent:child", "main"),
    ("global", "main"),
    ("global", "ops"),
)
"""Watched sessions; the two `global`s differ only by agent id and must never mix (SPEC §5.3)."""

_OUTSIDER = "agent:research:outsider"
"""An agent that is never upserted: it may hold a seeded cursor, the sweep must skip it."""

_QUALIFIED_PARTS = 3  # agent, id, rest


def _agent_of(key: str) -> str | None:
    """The agent id of `agent:<id>:<rest>` (SPEC §2), else None."""
    parts = [part for part in key.strip().split(":") if part]
    return parts[1] if len(parts) >= _QUALIFIED_PARTS and parts[0] == "agent" else None


def _identity_of_watcher(key: str) -> Identity | None:
    agent = _agent_of(key)
    return None if agent is None else (key.strip(), agent)


def _is_subagent(key: str) -> bool:
    parts = [part for part in key.strip().split(":") if part]
    return _agent_of(key) is not None and ":".join(parts[2:]).lower().startswith("subagent:")


def _expected_text(target: str, last_seen: int) -> str:
    """SPEC §6.2, spelled out here rather than imported."""
    return (
        f'Session "{target}" changed (other actor). Reconcile before acting: '
        f'session_status sessionKey "{target}" changesSince {last_seen}.'
    )


def _reason(target: str) -> str:
    return f"session-state:{target}"


def _expect(actual: object, expected: object, what: str) -> None:
    """Fail with both values (an explicit raise: checks must survive `python -O`)."""
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


_IDENTITIES: tuple[Identity, ...] = (
    *_TARGETS,
    *(identity for identity in map(_identity_of_watcher, _WATCHERS) if identity is not None),
)
_HOLDER_KEYS = (*_WATCHERS, "agent:main:worker", _OUTSIDER)
"""Every key that can come to hold a cursor in the machine."""
_PRODUCER_WATCHERS = (*_WATCHERS, "agent:main:worker", "global", "cron:nightly")
_MACHINE_ACTORS = (
    Actor.human(),
    Actor.human("alice"),
    Actor.system(),
    *(Actor.agent(w) for w in _WATCHERS),
    Actor.agent("agent:main:worker"),
    Actor.agent(_OUTSIDER),
)
_NOTIFYING = frozenset({"human_direct_message", "upstream_missing", "goal_changed"})
_KIND_SUMMARIES = {
    SignalKind.HUMAN_DIRECT_MESSAGE: "human message via telegram",
    SignalKind.UPSTREAM_MISSING: "upstream missing via claude-code",
    SignalKind.GOAL_CHANGED: "goal updated",
    SignalKind.CHILD_SPAWNED: "child session spawned",
    SignalKind.RUN_COMPLETED: "child run completed",
    SignalKind.RUN_FAILED: "child run failed",
    SignalKind.COMPACTED: "session compacted",
    SignalKind.ADOPTED: "session adopted",
}


class NoticeModel:
    """What the SPEC says the store holds: cursors, heads, known and registered identities.

    Written from the SPEC rules (§5, §6, §9), never from sessionwatch's domain functions.
    """

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
            if actor.actor_type == "agent" and requester is not None and _agent_of(requester) is not None:
                self.cursors[(requester, key, agent)] = (sequence, sequence, sequence)  # SPEC §5.1
            return set()
        if kind.value not in _NOTIFYING:
            return set()
        holders = [w for (w, k, a) in self.cursors if (k, a) == target]
        opened = set()
        for watcher in dict.fromkeys([*watchers, *holders]):
            if _agent_of(watcher) is None or watcher == actor.actor_id:
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
        """Forget the cursors `identity` holds as a watcher (reset and delete, SPEC §9)."""
        self.cursors = {p: v for p, v in self.cursors.items() if _identity_of_watcher(p[0]) != identity}

    def drop_targeting(self, identity: Identity) -> None:
        """Forget the cursors on `identity` as a target (delete, SPEC §9)."""
        self.cursors = {p: v for p, v in self.cursors.items() if (p[1], p[2]) != identity}

    def sweep(self) -> set[tuple[str, str]]:
        """SPEC §6.5: re-freeze `N := M` for open cursors of existing watchers; the wakes owed."""
        wakes = set()
        for (watcher, key, agent), (last_seen, _, material) in list(self.cursors.items()):
            if material > last_seen and _identity_of_watcher(watcher) in self.registered:
                self.cursors[(watcher, key, agent)] = (last_seen, material, material)
                if not _is_subagent(watcher):
                    wakes.add((watcher, _reason(key)))
        return wakes


class SessionWatchMachine(RuleBasedStateMachine):
    """The notice protocol under arbitrary interleavings (SPEC §4, §5, §6, §9), checked after every step.

    Records of every kind by humans, the system and agents (each watcher itself or another),
    producer watchers, watch / unwatch, drains, two-phase acknowledgements, resets, deletes,
    upserts, restarts and clock steps drive one `SessionWatch`; a `NoticeModel` says what the
    store must hold, and the invariants compare cursors, pending notices and their exact text,
    heads, wakes and a replay of the event store with it.

    A host subclasses it and overrides `open_watch` to open its own store and wiring, then runs
    `MyMachine.TestCase` (pytest and unittest collect it). Each example starts from an empty
    store; `tmp_path` is a fresh directory per example, removed afterwards.
    """

    reopen_on_restart: ClassVar[bool] = True
    """The `restart` rule closes the watch and reopens it through `open_watch`, as a host restart
    does. Set False for a store that does not outlive `close()`: the rule then runs the restart
    sweep on the open watch instead (as it always does for a `memory://` store)."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp_path = Path(tempfile.mkdtemp(prefix="sessionwatch-machine-"))
        self.clock = FakeClock()
        self.waker = RecordingWaker()
        self.model = NoticeModel()
        self.last_sequence = 0
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
        return sessionwatch.open("memory://", clock=clock, waker=waker)

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
        producers = [w for w in watchers if _identity_of_watcher(w) != target]  # never the session itself
        before = self.stored()
        self.waker.take()
        signal = self.watch.record(
            key, kind=kind, actor=actor, summary=_KIND_SUMMARIES[kind], agent_id=agent, watchers=producers
        )
        _require(
            signal.sequence > self.last_sequence,
            f"sequence {signal.sequence} after {self.last_sequence}: one global counter, strictly increasing",
        )
        self.last_sequence = signal.sequence
        opened = self.model.record(target, signal.sequence, kind, actor, producers)
        after = self.stored()
        calls = set(self.waker.take())
        if kind.value not in _NOTIFYING and kind is not SignalKind.CHILD_SPAWNED:
            _expect(after, before, f"cursors after a log-only {kind.value}")
        if actor.actor_type == "agent" and actor.actor_id is not None and kind.value in _NOTIFYING:
            mine = (actor.actor_id, key, agent)
            _expect(after.get(mine), before.get(mine), "the actor's own cursor after a self-caused signal")
        touched = {w for (w, k, a), lnm in after.items() if (k, a) == target and before.get((w, k, a)) != lnm}
        may_wake = {(w, _reason(key)) for w in touched if not _is_subagent(w)}
        must_wake = {(w, _reason(key)) for w in opened if not _is_subagent(w)}
        if kind.value in _NOTIFYING:
            _require(
                must_wake <= calls <= may_wake,
                f"wakes {sorted(calls)}: must include {sorted(must_wake)}, may include {sorted(may_wake)}",
            )
        else:
            _expect(calls, set(), f"wakes after a {kind.value}")

    def _expect_follow_up_wakes(self, watcher: str, follow_ups: Iterable[str]) -> None:
        expected = set() if _is_subagent(watcher) else {(watcher, _reason(key)) for key in follow_ups}
        _expect(set(self.waker.take()), expected, f"follow-up wakes of {watcher}")

    # --------------------------------------------------------------------------------- rules

    @rule(
        session=st.sampled_from(_IDENTITIES),
        kind=st.sampled_from(list(SignalKind)),
        actor=st.sampled_from(_MACHINE_ACTORS),
        watchers=st.lists(st.sampled_from(_PRODUCER_WATCHERS), max_size=3),
    )
    def record(self, session: Identity, kind: SignalKind, actor: Actor, watchers: list[str]) -> None:
        """`record` any kind on any identity, with producer watchers (SPEC §5, §6.1)."""
        spawns_itself = actor.actor_id is not None and _identity_of_watcher(actor.actor_id) == session
        if kind is SignalKind.CHILD_SPAWNED and spawns_itself:
            return  # a session spawning itself is outside the SPEC
        if kind is SignalKind.CHILD_SPAWNED and self._refuses_spawn_watchers(session, actor, watchers):
            return
        self._record(session, kind, actor, watchers)

    def _refuses_spawn_watchers(self, target: Identity, actor: Actor, watchers: list[str]) -> bool:
        """A spawn seeds only its requester's cursor: other watchers are refused, nothing written."""
        requester = actor.actor_id if actor.actor_type == "agent" else None
        if all(_identity_of_watcher(w) == target or w == requester for w in watchers):
            return False
        key, agent = target
        before = self.stored()
        try:
            self.watch.record(
                key,
                kind=SignalKind.CHILD_SPAWNED,
                actor=actor,
                summary=_KIND_SUMMARIES[SignalKind.CHILD_SPAWNED],
                agent_id=agent,
                watchers=watchers,
            )
        except InvalidSignal as refused:
            _expect(refused.field, "watchers", "the field named by a refused spawn")
        else:
            raise AssertionError(f"a child_spawned with watchers {watchers} other than its requester")
        _expect(self.stored(), before, "cursors after a refused spawn")
        return True

    @rule(
        session=st.sampled_from(_TARGETS),
        watchers=st.lists(st.sampled_from(_PRODUCER_WATCHERS), min_size=1, max_size=4),
        actor=st.sampled_from(_MACHINE_ACTORS),
    )
    def record_with_producer_watchers(self, session: Identity, watchers: list[str], actor: Actor) -> None:
        """A notifying `goal_changed` that always names producer watchers."""
        self._record(session, SignalKind.GOAL_CHANGED, actor, watchers)

    @rule(
        watcher=st.sampled_from((*_WATCHERS, "global")),
        session=st.sampled_from(_IDENTITIES),
        explicit_agent=st.booleans(),
    )
    def watch_target(self, watcher: str, session: Identity, explicit_agent: bool) -> None:
        """`watch` starts a cursor at the target's head and never clobbers one (SPEC §5.2)."""
        key, agent = session
        self.waker.take()
        accepted = self.watch.watch(watcher, key, target_agent_id=agent if explicit_agent else None)
        watcher_identity = _identity_of_watcher(watcher)
        expected = (
            watcher_identity is not None
            and watcher_identity != session
            and (explicit_agent or _agent_of(key) is not None)
        )
        _expect(accepted, expected, f"watch({watcher!r}, {key!r}, explicit agent: {explicit_agent})")
        pair = (watcher, key, agent)
        if accepted and pair not in self.model.cursors:
            head = self.model.heads.get(session, 0)
            self.model.cursors[pair] = (head, head, head)  # SPEC §5.2: starts at the head
        _expect(self.waker.take(), [], "wakes after a watch")

    @rule(watcher=st.sampled_from(_HOLDER_KEYS), session=st.sampled_from(_IDENTITIES))
    def unwatch(self, watcher: str, session: Identity) -> None:
        """`unwatch` removes the cursor, and says whether there was one."""
        key, agent = session
        removed = self.watch.unwatch(watcher, key, target_agent_id=agent)
        _expect(removed, (watcher, key, agent) in self.model.cursors, f"unwatch({watcher!r}, {session})")
        self.model.cursors.pop((watcher, key, agent), None)

    @rule(watcher=st.sampled_from(_HOLDER_KEYS))
    def drain(self, watcher: str) -> None:
        """`drain` returns exactly the pending notices and acknowledges them (SPEC §6.3)."""
        expected = self.model.pending(watcher)
        self.waker.take()
        drained = self.watch.drain(watcher)
        got = {(n.target, n.target_agent_id): n.last_seen for n in drained}
        _expect(got, expected, f"notices drained by {watcher}")
        _expect(len(drained), len(expected), f"number of notices drained by {watcher}")
        for notice in drained:
            _expect(notice.text, _expected_text(notice.target, notice.last_seen), "notice text (SPEC §6.2)")
        follow_ups = [k for k, a in expected if self.model.acknowledge((watcher, k, a))]
        self._expect_follow_up_wakes(watcher, follow_ups)

    @rule(
        watcher=st.sampled_from(_HOLDER_KEYS),
        keep=st.lists(st.booleans(), min_size=len(_IDENTITIES), max_size=len(_IDENTITIES)),
        interleaved=st.none() | st.sampled_from(_TARGETS),
    )
    def acknowledge_some(self, watcher: str, keep: list[bool], interleaved: Identity | None) -> None:
        """Two-phase: read the notices, maybe record in between, acknowledge some (SPEC §6.3)."""
        notices = self.watch.pending_notices(watcher)
        chosen: list[Notice] = [n for n, k in zip(notices, keep, strict=False) if k]
        if interleaved is not None:  # a signal between reading and acknowledging
            self._record(interleaved, SignalKind.HUMAN_DIRECT_MESSAGE, Actor.human(), ())
        self.waker.take()
        self.watch.acknowledge(watcher, chosen)
        follow_ups = [
            n.target for n in chosen if self.model.acknowledge((watcher, n.target, n.target_agent_id))
        ]
        self._expect_follow_up_wakes(watcher, follow_ups)

    @rule(identity=st.sampled_from(_IDENTITIES))
    def reset(self, identity: Identity) -> None:
        """`reset_session` drops the cursors the session holds; its history stays (SPEC §9)."""
        key, agent = identity
        self.watch.reset_session(key, agent_id=agent)
        self.model.drop_held_by(identity)

    @rule(identity=st.sampled_from(_IDENTITIES))
    def delete(self, identity: Identity) -> None:
        """`delete_session` forgets the identity and every cursor it holds or is watched by (SPEC §9)."""
        key, agent = identity
        self.watch.delete_session(key, agent_id=agent)
        self.model.drop_held_by(identity)
        self.model.drop_targeting(identity)
        self.model.heads.pop(identity, None)
        self.model.known.discard(identity)
        self.model.registered.discard(identity)

    @rule(identity=st.sampled_from(_IDENTITIES))
    def upsert(self, identity: Identity) -> None:
        """`upsert_session` makes the identity known and an existing watcher for the sweep."""
        key, agent = identity
        self.watch.upsert_session(key, agent_id=agent)
        self.model.known.add(identity)
        self.model.registered.add(identity)

    @rule()
    def restart(self) -> None:
        """Reopen the store (an in-memory one: sweep it); open notices are re-frozen and re-woken (§6.5)."""
        self.waker.take()
        if self.reopen_on_restart and not isinstance(self.watch.store, MemorySignalStore):
            self.watch.close()
            self.watch = self.open_watch(self.clock, self.waker)
            self._require_same_store()
        else:
            self.watch.sweep()
        _expect(set(self.waker.take()), self.model.sweep(), "wakes of the restart sweep")

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
        """Time passes."""
        self.clock.advance(minutes=minutes)

    # ---------------------------------------------------------------------------- invariants

    @invariant()
    def cursors_are_ordered(self) -> None:
        """`L <= N <= M` for every cursor."""
        for pair, (last_seen, notified, material) in self.stored().items():
            _require(last_seen <= notified <= material, f"{pair}: L, N, M = {last_seen, notified, material}")

    @invariant()
    def cursors_match_the_model(self) -> None:
        """The stored cursors are exactly the model's."""
        _expect(self.stored(), self.model.cursors, "stored cursors")

    @invariant()
    def one_notice_per_stale_pair_with_the_exact_text(self) -> None:
        """At most one pending notice per (watcher, target), with the byte-stable text (SPEC §6.2, §6.3)."""
        for watcher in {*_HOLDER_KEYS, *(w for w, _, _ in self.model.cursors)}:
            notices = self.watch.pending_notices(watcher)
            targets = [(n.target, n.target_agent_id) for n in notices]
            _expect(len(set(targets)), len(targets), f"distinct targets among {watcher}'s notices")
            got = dict(zip(targets, (n.last_seen for n in notices), strict=True))
            _expect(got, self.model.pending(watcher), f"pending notices of {watcher}")
            for notice in notices:
                _expect(notice.watcher, watcher, "notice watcher")
                _expect(notice.text, _expected_text(notice.target, notice.last_seen), "notice text")

    @invariant()
    def heads_match_the_model(self) -> None:
        """Each known identity's head is its last signal's sequence; an unknown one is unknown."""
        for identity in _IDENTITIES:
            key, agent = identity
            try:
                head: int | None = self.watch.session_status(key, agent_id=agent).state_version
            except UnknownSession:
                head = None
            expected = self.model.heads.get(identity, 0) if identity in self.model.known else None
            _expect(head, expected, f"head of {identity} (None: unknown session)")

    @invariant()
    def the_audit_is_clean(self) -> None:
        """`audit()` finds nothing: the replay rebuilds the stored read models; SPEC §14 invariants hold."""
        report = self.watch.audit()
        details = "; ".join(f"{v.kind}: {v.detail}" for v in report.violations)
        _require(report.ok, f"the audit found violations: {details}")
