"""Hypothesis strategies for the strict API's inputs: session references, kinds, actors, payloads, times.

Pools are small on purpose so that identities, dedupe keys and actors collide and interesting
interleavings (a duplicate dedupe key, a record after a delete) show up within a few examples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import TypeAlias, TypeVar

from hypothesis import strategies as st

from sessionwatch.adapters.entry.watch import SignalInput
from sessionwatch.domain.signals import Actor, SignalKind
from sessionwatch.testing.fakes import START

T = TypeVar("T")

AGENT_IDS = ("main", "ops", "research")
"""Agent ids; each is a valid explicit id (no ':', no spaces)."""

WRITTEN_AGENT_IDS = {
    "main": ("main", "Main", " main "),
    "ops": ("ops", "OPS"),
    "research": ("research", "Research"),
}
"""How a key may write each agent id: any case, padded; each is normalized to the id itself."""
_WRITTEN_OWNERS = {written: owner for owner, writings in WRITTEN_AGENT_IDS.items() for written in writings}

_RESTS = (
    "main",
    "worker-1",
    "telegram:group:42",
    "subagent:child",
    "subagent:child:subagent:grandchild",
    "SubAgent:upper",
    "acp:codex:7f3a",
)
"""What follows `agent:<id>:`; some are subagent keys (`subagent:` matches in any case)."""

SUBAGENT_KEYS = (
    "agent:main:subagent:child",
    "agent:main:subagent:child:subagent:grandchild",
    "agent:ops:SubAgent:probe",
)
"""Agent-qualified subagent keys: never woken, they see their notices on their next turn."""

BARE_KEYS = ("global", "cron:nightly", "hook:deploy", "agents:not-qualified")
"""Keys that are not agent-qualified; each needs an explicit agent id."""

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
"""The summaries the built-in producers write."""

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

    `identity` is `(trimmed key, owning agent id)`, the pair that names a session, computed here independently
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
    """`agent:<id>:<rest>` keys, subagent keys included; sometimes padded, sometimes with the id repeated.

    The id is sometimes written in another case or padded: the key stays as written, its agent id is
    the normalized one.
    """
    owner = draw(st.sampled_from(AGENT_IDS))
    key = f"agent:{draw(st.sampled_from(WRITTEN_AGENT_IDS[owner]))}:{draw(st.sampled_from(_RESTS))}"
    if draw(st.booleans()):
        key = f" {key} "  # keys are trimmed: same identity
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

The two `global` sessions differ only by agent id: they must never mix.
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
    """Agent-qualified subagent keys only (never woken: they read their notices on their next turn)."""
    return _SUBAGENT_KEYS


def bare_keys() -> st.SearchStrategy[str]:
    """Bare keys such as `global`: pass an explicit `agent_id` with them."""
    return _BARE_KEYS


_SIGNAL_KINDS = st.sampled_from(list(SignalKind))


def signal_kinds() -> st.SearchStrategy[SignalKind]:
    """Every signal kind."""
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
    """A valid payload for `kind`: only the keys its kind allows, or none."""
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
"""What `record(occurred_at=...)` accepts: a datetime, epoch milliseconds (int or float), or None."""

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
    """The agent id owning the input's session: explicit, else the one `agent:<id>:...` writes."""
    if item.agent_id is not None:
        return item.agent_id
    written = item.session_key.strip().split(":")[1]
    return _WRITTEN_OWNERS.get(written, written)
