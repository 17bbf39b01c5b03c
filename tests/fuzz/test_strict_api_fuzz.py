"""Fuzzing the strict API and the producers on every store (SPEC §3.3, §7.1, §13.1, §15.2).

Every call gets hostile input: malformed and huge keys, unknown kinds, negative or non-integer
`changes_since`, absurd limits, over-long or multi-line summaries, payloads that are not objects,
are over 4 KiB or leave the whitelist, lone surrogates and control characters in every text field.
A call either returns a valid result or raises the documented typed error whose `field` names the
offending input, and a refused call writes nothing: the store's whole state (heads, signals, dedupe
keys, cursors, pending notices, the counter and the event store, tests/snapshots.py) is the same
before and after. The best-effort producers never raise on any of it and return None.

Each test opens one fresh store of each kind, seeded with a spawn, pending notices and explicit
watches, and its examples share it: each example compares the state around its own call.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snapshots import store_state
from strategies import (
    ANY_TEXT,
    FORBIDDEN_CHARACTERS,
    NOT_TEXT,
    PRINTABLE,
    hostile_agent_ids,
    hostile_ids,
    hostile_keys,
    hostile_kinds,
    hostile_occurred_ats,
    hostile_payloads,
    hostile_summaries,
    oversize_text,
)

from sessionwatch import (
    Actor,
    InvalidQuery,
    InvalidSignal,
    SessionStatus,
    SessionWatch,
    Signal,
    SignalInput,
    SignalKind,
    UnknownSession,
)
from sessionwatch.domain.keys import SessionIdentity, agent_id_of, normalize_agent_id
from sessionwatch.domain.signals import MAX_TURNS
from sessionwatch.testing import signal_inputs, signal_kinds

pytestmark = pytest.mark.usefixtures("through_each_facade")  # every case through both façades

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
OPS = "agent:ops:main"
AGENTS = ("main", "ops", "research")

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
"""Examples per test and store: eight tests on three stores stay within the file's ~40 s budget."""


def seed(watch: SessionWatch) -> None:
    """A spawn edge with a pending notice, explicit watches, a bare session and a notice on it."""
    watch.upsert_session(MANAGER)
    watch.upsert_session(OPS)
    watch.upsert_session("global", agent_id="ops")
    assert watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-seed") is not None
    assert watch.record_human_message(CHILD, channel="telegram") is not None
    assert watch.watch(OPS, CHILD)
    assert watch.watch(OPS, "global", target_agent_id="ops")
    assert watch.record_goal_changed("global", summary="goal created", agent_id="ops") is not None
    assert [n.target for n in watch.pending_notices(MANAGER)] == [CHILD]
    assert [n.target for n in watch.pending_notices(OPS)] == ["global"]


@pytest.fixture
def seeded(watch: SessionWatch) -> SessionWatch:
    seed(watch)
    return watch


def record_arguments(item: SignalInput) -> dict[str, object]:
    """`record`'s keyword arguments for an input (the key as `key`)."""
    return {
        "key": item.session_key,
        "kind": item.kind,
        "actor": item.actor,
        "summary": item.summary,
        "payload": item.payload,
        "run_id": item.run_id,
        "occurred_at": item.occurred_at,
        "dedupe_key": item.dedupe_key,
        "agent_id": item.agent_id,
        "watchers": item.watchers,
    }


def truthy(value: object) -> bool:
    """A value a producer does not read as "not given" (`actor or Actor.human()`)."""
    return bool(value)


def call(method: Callable[..., object], *args: object, **kwargs: object) -> object:
    """Call an API method with arguments of any type (the point of a fuzzer)."""
    return method(*args, **kwargs)


def record(watch: SessionWatch, arguments: Mapping[str, object]) -> Signal:
    recorder: Callable[..., Signal] = watch.record
    return recorder(**arguments)


def loose_actor(actor_type: object, actor_id: object) -> Actor:
    """An `Actor` built around its validation, as a careless host could pass one."""
    construct: Callable[..., Actor] = Actor.model_construct
    return construct(actor_type=actor_type, actor_id=actor_id)


def loose_input(arguments: Mapping[str, object]) -> SignalInput:
    """A `SignalInput` built around its validation, so `record_many` sees the hostile value."""
    construct: Callable[..., SignalInput] = SignalInput.model_construct
    return construct(**arguments)


def expect_refused(
    watch: SessionWatch, error: type[InvalidSignal | InvalidQuery], field: str, attempt: Callable[[], object]
) -> None:
    """`attempt` raises `error` naming `field`, and the store is exactly as it was."""
    before = store_state(watch)
    with pytest.raises(error) as raised:
        attempt()
    refusal = raised.value
    assert isinstance(refusal, InvalidSignal | InvalidQuery)
    assert refusal.field == field, refusal
    assert store_state(watch) == before


# ------------------------------------------------------------------- record: one hostile field

RECORD_FIELDS = (
    "session_key",
    "agent_id",
    "kind",
    "actor",
    "actor_id",
    "summary",
    "payload",
    "run_id",
    "occurred_at",
    "dedupe_key",
    "watchers",
)

HOSTILE_ACTORS: st.SearchStrategy[object] = st.one_of(
    st.none(),
    st.sampled_from(("human", "system", MANAGER, {"actor_type": "human"})),
    st.integers(),
    ANY_TEXT.filter(lambda text: text not in ("human", "agent", "system")).map(
        lambda actor_type: loose_actor(actor_type, None)
    ),
)
"""Not an `Actor`, or an `Actor` built around validation with an unknown actor type."""


@st.composite
def hostile_actor_ids(draw: st.DrawFn) -> Actor:
    """An actor whose id is bad text, or, for an agent, not a well-formed session key."""
    actor_type = draw(st.sampled_from(("human", "system", "agent")))
    bad = draw(hostile_ids() | hostile_keys()) if actor_type == "agent" else draw(hostile_ids())
    return loose_actor(actor_type, bad)


@st.composite
def contradicting_agent_ids(draw: st.DrawFn, key: str) -> object:
    """A hostile agent id, or for an agent-qualified key a well-formed one that contradicts it."""
    parsed = agent_id_of(key)
    if parsed is None:
        return draw(hostile_agent_ids())
    return draw(hostile_agent_ids() | st.sampled_from(AGENTS).filter(lambda agent: agent != parsed))


@st.composite
def one_hostile_field(draw: st.DrawFn) -> tuple[dict[str, object], str]:
    """A valid `record` call with exactly one field made hostile, and that field's name."""
    item = draw(signal_inputs())
    arguments = record_arguments(item)
    field = draw(st.sampled_from(RECORD_FIELDS))
    hostile: dict[str, st.SearchStrategy[object]] = {
        "session_key": hostile_keys(),
        "agent_id": contradicting_agent_ids(item.session_key),
        "kind": hostile_kinds(),
        "actor": HOSTILE_ACTORS,
        "actor_id": hostile_actor_ids(),
        "summary": hostile_summaries(),
        "payload": hostile_payloads(SignalKind(item.kind)),
        "run_id": hostile_ids(),
        "occurred_at": hostile_occurred_ats(),
        "dedupe_key": hostile_ids(),
        "watchers": hostile_keys().map(lambda key: (MANAGER, key)),
    }
    value = draw(hostile[field])
    if field == "actor_id":
        arguments["actor"] = value
    else:
        arguments["key" if field == "session_key" else field] = value
    return arguments, field


def test_a_record_with_one_hostile_field_is_refused_naming_it_and_writes_nothing(
    seeded: SessionWatch,
) -> None:
    @FUZZ
    @given(one_hostile_field())
    def refused(case: tuple[dict[str, object], str]) -> None:
        arguments, field = case
        expect_refused(seeded, InvalidSignal, field, lambda: record(seeded, arguments))

    refused()


def test_a_batch_with_one_hostile_item_is_refused_naming_it_and_writes_none_of_it(
    seeded: SessionWatch,
) -> None:
    @FUZZ
    @given(st.lists(signal_inputs(), min_size=1, max_size=4), one_hostile_field(), st.data())
    def refused(items: list[SignalInput], case: tuple[dict[str, object], str], data: st.DataObject) -> None:
        arguments, field = case
        arguments["session_key"] = arguments.pop("key")
        poisoned = loose_input(arguments)
        at = data.draw(st.integers(0, len(items)))
        batch = [*items[:at], poisoned, *items[at:]]
        expect_refused(seeded, InvalidSignal, f"inputs[{at}].{field}", lambda: seeded.record_many(batch))

    refused()


# ------------------------------------------------ record: arbitrary text, checked by an oracle


def forbidden(character: str) -> bool:
    """Controls, lone surrogates, line and paragraph separators (SPEC §13.1, §15.2)."""
    return unicodedata.category(character) in {"Cc", "Cs", "Zl", "Zp"}


def text_ok(value: object, limit: int) -> bool:
    """A one-line, non-blank, printable string of at most `limit` characters."""
    return (
        isinstance(value, str)
        and bool(value.strip())
        and len(value) <= limit
        and not any(forbidden(ch) for ch in value)
    )


def parts_of(key: str) -> list[str]:
    return [part for part in key.strip().split(":") if part]


def key_ok(value: object) -> bool:
    """SPEC §13.1: not malformed (and a key starting with `agent:` is agent-qualified)."""
    if not text_ok(value, 512):
        return False
    assert isinstance(value, str)
    parts = parts_of(value)
    qualified = len(parts) >= 3 and parts[0] == "agent"
    return qualified or not value.strip().startswith("agent:")


def agent_id_ok(value: object) -> bool:
    return text_ok(value, 512) and isinstance(value, str) and ":" not in value and value == value.strip()


@dataclass(frozen=True)
class Fuzzed:
    """One `record` call of arbitrary text, and what SPEC §13.1 says about each field."""

    key: str
    agent_id: str | None
    kind: SignalKind
    actor: Actor
    summary: str
    payload: dict[str, object] | None
    run_id: str | None
    dedupe_key: str | None

    def arguments(self) -> dict[str, object]:
        return {
            "key": self.key,
            "agent_id": self.agent_id,
            "kind": self.kind,
            "actor": self.actor,
            "summary": self.summary,
            "payload": self.payload,
            "run_id": self.run_id,
            "dedupe_key": self.dedupe_key,
        }

    def owner(self) -> str | None:
        """The agent id the identity resolves to, or None when the key and the agent id do not."""
        parts = parts_of(self.key)
        parsed = normalize_agent_id(parts[1]) if len(parts) >= 3 and parts[0] == "agent" else None
        if self.agent_id is None:
            return parsed
        if not agent_id_ok(self.agent_id):
            return None
        if parsed is None:  # a bare key keeps its explicit agent id as given
            return self.agent_id
        # an explicit agent id must normalize to the key's agent (`;` is agent `main`, as in the reference)
        return parsed if normalize_agent_id(self.agent_id) == parsed else None

    def payload_ok(self) -> bool:
        if self.payload is None:
            return True
        for name, value in self.payload.items():
            if name == "turns":
                good = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TURNS
            elif name == "outcome":
                good = value in ("error", "timeout", "cancelled")
            else:
                good = text_ok(value, 4096)
            if not good:
                return False
        return True

    def first_bad_field(self) -> str | None:
        """The field `record` must name: the first invalid one in validation order (§13.1)."""
        actor_id = self.actor.actor_id
        checks = (
            ("session_key", key_ok(self.key)),
            ("agent_id", self.owner() is not None),
            ("actor_id", actor_id is None or text_ok(actor_id, 512)),
            ("actor_id", actor_id is None or self.actor.actor_type != "agent" or key_ok(actor_id)),
            ("run_id", self.run_id is None or text_ok(self.run_id, 512)),
            ("summary", text_ok(self.summary, 200)),
            ("payload", self.payload_ok()),
            ("dedupe_key", self.dedupe_key is None or text_ok(self.dedupe_key, 512)),
        )
        return next((field for field, good in checks if not good), None)


FUZZ_TEXT = st.one_of(st.text(PRINTABLE, min_size=1, max_size=30), ANY_TEXT)
"""Mostly printable text, often anything at all."""
_PAYLOAD_VALUES: dict[str, st.SearchStrategy[object]] = {
    "turns": st.one_of(st.integers(1, 5), st.integers(-2, 2**64), st.just(MAX_TURNS)),
    "outcome": st.one_of(st.sampled_from(("error", "timeout", "cancelled")), FUZZ_TEXT),
    "channel": FUZZ_TEXT,
    "status": FUZZ_TEXT,
}
_WHITELIST = {
    SignalKind.HUMAN_DIRECT_MESSAGE: ("turns", "channel"),
    SignalKind.GOAL_CHANGED: ("status",),
    SignalKind.RUN_FAILED: ("outcome",),
    SignalKind.UPSTREAM_MISSING: ("channel",),
}


@st.composite
def fuzzed_records(draw: st.DrawFn) -> Fuzzed:
    style = draw(st.sampled_from(("qualified", "bare", "any")))
    if style == "qualified":
        key = "agent:" + draw(st.sampled_from(AGENTS)) + ":" + draw(FUZZ_TEXT)
        agent_id = draw(st.none() | st.sampled_from(AGENTS) | FUZZ_TEXT)
    elif style == "bare":
        key = draw(FUZZ_TEXT.filter(lambda text: not text.strip().startswith("agent")))
        agent_id = draw(st.sampled_from(AGENTS) | FUZZ_TEXT)
    else:
        key = draw(ANY_TEXT)
        agent_id = draw(st.none() | FUZZ_TEXT)
    kind = draw(signal_kinds())
    actor_type = draw(st.sampled_from(("human", "agent", "system")))
    actor_id = draw(st.none() | st.just(MANAGER) | st.just(f" {OPS} ") | FUZZ_TEXT)
    names = _WHITELIST.get(kind, ())
    payload = None
    if len(names) > 0 and draw(st.booleans()):
        payload = {name: draw(_PAYLOAD_VALUES[name]) for name in names if draw(st.booleans())} or None
    return Fuzzed(
        key=key,
        agent_id=agent_id,
        kind=kind,
        actor=loose_actor(actor_type, actor_id),
        summary=draw(FUZZ_TEXT | st.text(PRINTABLE, min_size=195, max_size=205)),
        payload=payload,
        run_id=draw(st.none() | FUZZ_TEXT),
        dedupe_key=draw(st.none() | st.sampled_from(("dedupe-a", "dedupe-b")) | FUZZ_TEXT),
    )


def test_a_record_of_arbitrary_text_is_stored_verbatim_or_refused_naming_the_bad_field(
    seeded: SessionWatch,
) -> None:
    @FUZZ
    @given(fuzzed_records())
    def recorded_or_refused(case: Fuzzed) -> None:
        before = store_state(seeded)
        bad = case.first_bad_field()
        if bad is not None:
            expect_refused(seeded, InvalidSignal, bad, lambda: record(seeded, case.arguments()))
            return
        signal = record(seeded, case.arguments())
        existing = before.read_model.dedupe.get(case.dedupe_key) if case.dedupe_key else None
        if existing is not None:  # a duplicate returns the signal already recorded, changing nothing
            assert (signal.session_key, signal.agent_id, signal.sequence) == (*existing[0], existing[1])
            assert store_state(seeded) == before
            return
        actor_id = case.actor.actor_id
        expected_actor = (
            actor_id.strip() if actor_id is not None and case.actor.actor_type == "agent" else actor_id
        )
        assert signal.sequence == before.last_sequence + 1
        assert (signal.session_key, signal.agent_id, signal.kind) == (
            case.key.strip(),
            case.owner(),
            case.kind,
        )
        assert (signal.actor_type, signal.actor_id) == (case.actor.actor_type, expected_actor)
        assert (signal.summary, signal.run_id, signal.dedupe_key) == (
            case.summary,
            case.run_id,
            case.dedupe_key,
        )
        assert signal.payload == case.payload
        status = seeded.session_status(
            case.key, changes_since=signal.sequence - 1, limit=1, agent_id=case.agent_id
        )
        assert status.state_changes is not None
        [change] = status.state_changes.events
        assert (change.sequence, change.summary, change.run_id) == (
            signal.sequence,
            case.summary,
            case.run_id,
        )
        assert change.actor_id == expected_actor
        public = {k: v for k, v in (case.payload or {}).items() if k in ("outcome", "channel", "turns")}
        assert change.payload == (public or None)

    recorded_or_refused()


# ------------------------------------------------------------------------------- the queries

CHANGES_SINCE: st.SearchStrategy[object] = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**63 - 1),
    st.integers(0, 8),
    st.floats(),
    st.booleans(),
    st.text(st.sampled_from("0123456789-. "), max_size=4),
    st.decimals(allow_nan=False, allow_infinity=False, places=0),
    st.fractions(),
    st.lists(st.integers(0, 3), max_size=1),
)
"""`changes_since` values: integers of any size (up to the SQL range), and every other type."""
LIMITS: st.SearchStrategy[object] = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-1, 3),
    st.floats(),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
)
STATUS_TARGETS: st.SearchStrategy[tuple[object, object]] = st.one_of(
    st.sampled_from(((CHILD, None), (MANAGER, None), ("global", "ops"), (CHILD, "main"))),
    st.tuples(hostile_keys(), st.none()),
    st.tuples(st.just("global"), hostile_agent_ids()),
    st.tuples(st.just("global"), st.none()),
)


def since_ok(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def test_session_status_answers_exactly_or_refuses_naming_the_bad_argument_and_writes_nothing(
    seeded: SessionWatch,
) -> None:
    @FUZZ
    @given(STATUS_TARGETS, CHANGES_SINCE, LIMITS)
    def answered(target: tuple[object, object], since: object, limit: object) -> None:
        key, agent = target
        before = store_state(seeded)
        status: Callable[..., object] = seeded.session_status
        if not since_ok(since):
            expect_refused(
                seeded, InvalidQuery, "changes_since", lambda: call(status, key, changes_since=since)
            )
            return
        if not isinstance(limit, int) or isinstance(limit, bool):
            expect_refused(seeded, InvalidQuery, "limit", lambda: call(status, key, limit=limit))
            return
        if not key_ok(key):
            expect_refused(seeded, InvalidQuery, "session_key", lambda: call(status, key, agent_id=agent))
            return
        if (agent is None and agent_id_of(str(key)) is None) or (
            agent is not None and not agent_id_ok(agent)
        ):
            expect_refused(seeded, InvalidQuery, "agent_id", lambda: call(status, key, agent_id=agent))
            return
        answer = call(status, key, changes_since=since, limit=limit, agent_id=agent)
        assert isinstance(answer, SessionStatus)
        assert isinstance(key, str)
        identity = SessionIdentity(key, agent if isinstance(agent, str) else str(agent_id_of(key)))
        log = before.read_model.signals.get(identity, ())
        assert answer.state_version == before.read_model.sessions[identity].head
        if since is None:
            assert answer.state_changes is None
        else:
            assert isinstance(since, int)
            after = [s.sequence for s in log if s.sequence > since]
            page = min(max(limit, 1), 200)
            assert answer.state_changes is not None
            assert [e.sequence for e in answer.state_changes.events] == after[:page]
            assert answer.state_changes.truncated == (len(after) > page)
        assert store_state(seeded) == before  # reading never advances a cursor (SPEC §6.3)

    answered()


def test_an_unknown_session_is_unknown_session_naming_the_key_and_writes_nothing(
    seeded: SessionWatch,
) -> None:
    @FUZZ
    @given(
        st.text(PRINTABLE, min_size=1, max_size=30), st.sampled_from(AGENTS), st.none() | st.integers(0, 9)
    )
    def unknown(rest: str, agent: str, since: int | None) -> None:
        key = f"agent:{agent}:never-seen:{rest}"
        before = store_state(seeded)
        with pytest.raises(UnknownSession) as raised:
            seeded.session_status(key, changes_since=since)
        assert (raised.value.key, str(raised.value)) == (key, f"Unknown sessionKey: {key}")
        assert store_state(seeded) == before

    unknown()


# --------------------------------------------------------------- sessions, watches, notices

Case = tuple[Callable[[], object], type[InvalidSignal | InvalidQuery], str]


@st.composite
def hostile_session_calls(draw: st.DrawFn, watch: SessionWatch) -> Case:
    """One call of the session, watch, notice and upstream API with one hostile argument."""
    key = draw(hostile_keys())
    agent = draw(hostile_agent_ids())
    ident = draw(hostile_ids())
    text_key = draw(hostile_keys().filter(lambda value: isinstance(value, str)))
    w = watch
    cases: list[Case] = [
        (lambda: call(w.upsert_session, key), InvalidSignal, "session_key"),
        (lambda: call(w.upsert_session, "global", agent_id=agent), InvalidSignal, "agent_id"),
        (lambda: call(w.upsert_session, MANAGER, session_id=ident), InvalidSignal, "session_id"),
        (lambda: call(w.upsert_session, CHILD, spawned_by=key), InvalidSignal, "spawned_by"),
        (lambda: call(w.upsert_session, CHILD, parent_session_key=key), InvalidSignal, "parent_session_key"),
        (lambda: call(w.reset_session, key), InvalidSignal, "session_key"),
        (lambda: call(w.reset_session, "global", agent_id=agent), InvalidSignal, "agent_id"),
        (lambda: call(w.delete_session, key), InvalidSignal, "session_key"),
        (lambda: call(w.delete_session, "global", agent_id=agent), InvalidSignal, "agent_id"),
        (lambda: call(w.watch, key, CHILD), InvalidSignal, "watcher_key"),
        (lambda: call(w.watch, MANAGER, key), InvalidSignal, "target_key"),
        (lambda: call(w.unwatch, key, CHILD), InvalidQuery, "watcher_key"),
        (lambda: call(w.unwatch, MANAGER, key), InvalidQuery, "target_key"),
        (lambda: call(w.unwatch, OPS, "global", target_agent_id=agent), InvalidQuery, "agent_id"),
        (lambda: call(w.cursor, key, CHILD), InvalidQuery, "watcher_key"),
        (lambda: call(w.cursor, MANAGER, key), InvalidQuery, "target_key"),
        (lambda: call(w.pending_notices, key), InvalidQuery, "watcher_key"),
        (lambda: call(w.drain, key), InvalidQuery, "watcher_key"),
        (lambda: call(w.acknowledge, key, [CHILD]), InvalidQuery, "watcher_key"),
        (lambda: call(w.acknowledge, MANAGER, [CHILD, text_key]), InvalidQuery, "targets"),
        (lambda: call(w.status_as_of, key, 1), InvalidQuery, "session_key"),
        (lambda: call(w.run_started, key, "run-1"), InvalidSignal, "session_key"),
        (lambda: call(w.run_started, CHILD, ident), InvalidSignal, "run_id"),
        (lambda: call(w.run_ended, CHILD, ident), InvalidSignal, "run_id"),
        (lambda: call(w.upstream_link, key), InvalidQuery, "session_key"),
        (lambda: call(w.unlink_upstream, key), InvalidSignal, "session_key"),
    ]
    link: dict[str, object] = {
        "catalog_id": "claude-code",
        "host_id": "laptop",
        "thread_id": "thread-1",
        "upstream_kind": "claude-jsonl",
        "upstream_ref": "/transcripts/1.jsonl",
        "marker": {"offset": 0},
    }
    field = draw(st.sampled_from(sorted(link)))
    bad_json: st.SearchStrategy[object] = st.one_of(
        st.builds(object), st.just({1j}), oversize_text(4096), st.just({"a": [1] * 3000})
    )
    link[field] = draw(bad_json if field in ("upstream_ref", "marker") else hostile_ids(256))
    cases.append((lambda: call(w.link_upstream, CHILD, **link), InvalidSignal, field))
    cases.append((lambda: call(w.link_upstream, key, **{**link, field: "ok"}), InvalidSignal, "session_key"))
    return draw(st.sampled_from(cases))


def test_session_watch_and_notice_calls_with_a_hostile_argument_are_refused_and_write_nothing(
    seeded: SessionWatch,
) -> None:
    @FUZZ
    @given(st.data())
    def refused(data: st.DataObject) -> None:
        attempt, error, field = data.draw(hostile_session_calls(seeded))
        expect_refused(seeded, error, field, attempt)

    refused()


def test_watch_on_a_bare_target_with_a_hostile_agent_id_answers_false_and_writes_nothing(
    seeded: SessionWatch,
) -> None:
    @FUZZ
    @given(hostile_agent_ids())
    def refused(agent: object) -> None:
        before = store_state(seeded)
        assert call(seeded.watch, MANAGER, "global", target_agent_id=agent) is False
        assert store_state(seeded) == before

    refused()


# --------------------------------------------------------------------------------- producers


@st.composite
def hostile_producer_calls(draw: st.DrawFn, watch: SessionWatch) -> Callable[[], object]:
    """One producer call with one hostile argument; each would record with that argument fixed."""
    key = draw(hostile_keys())
    agent = draw(hostile_agent_ids())
    ident = draw(hostile_ids())
    actor = draw(HOSTILE_ACTORS.filter(truthy) | hostile_actor_ids())  # a falsy actor means the default
    # A channel is trimmed (a line break at either end goes), so the bad character sits inside it.
    inside = st.tuples(st.text(PRINTABLE, min_size=1, max_size=8), st.sampled_from(FORBIDDEN_CHARACTERS))
    channel = draw(
        st.one_of(
            inside.map(lambda drawn: drawn[0] + drawn[1] + drawn[0]),
            oversize_text(200),
            NOT_TEXT.filter(truthy),
        )
    )
    summary = draw(hostile_summaries())
    occurred_at = draw(hostile_occurred_ats())
    outcome = draw(
        st.one_of(ANY_TEXT.filter(lambda text: text not in ("ok", "error", "timeout", "cancelled")), NOT_TEXT)
    )
    run = draw(st.uuids()).hex
    w = watch
    human = w.record_human_message
    goal = w.record_goal_changed
    spawn = w.record_spawn
    terminal = w.record_run_terminal
    compacted = w.record_compacted
    cases: list[Callable[[], object]] = [
        lambda: call(human, key, channel="telegram"),
        lambda: call(human, CHILD, channel=channel),
        lambda: call(human, CHILD, channel="telegram", actor=actor),
        lambda: call(human, CHILD, channel="telegram", run_id=ident),
        lambda: call(human, CHILD, channel="telegram", dedupe_key=ident),
        lambda: call(human, CHILD, channel="telegram", occurred_at=occurred_at),
        lambda: call(human, CHILD, channel="telegram", agent_id=agent),
        lambda: call(goal, key, summary="goal updated"),
        lambda: call(goal, CHILD, summary=summary),
        lambda: call(goal, CHILD, summary="goal updated", actor=actor),
        lambda: call(goal, "global", summary="goal updated", agent_id=agent),
        lambda: call(spawn, requester_key=key, child_key=f"agent:main:subagent:{run}", child_run_id=run),
        lambda: call(spawn, requester_key=MANAGER, child_key=key, child_run_id=run),
        lambda: call(
            spawn, requester_key=MANAGER, child_key=f"agent:main:subagent:{run}", child_run_id=ident
        ),
        lambda: call(
            spawn, requester_key=MANAGER, child_key=f"subagent:{run}", child_run_id=run, agent_id=agent
        ),
        lambda: call(terminal, child_key=key, run_id=run, requester_key=MANAGER, outcome="error"),
        lambda: call(terminal, child_key=CHILD, run_id=ident, requester_key=MANAGER, outcome="error"),
        lambda: call(terminal, child_key=CHILD, run_id=run, requester_key=key, outcome="ok"),
        lambda: call(terminal, child_key=CHILD, run_id=run, requester_key=MANAGER, outcome=outcome),
        lambda: call(
            terminal, child_key="global", run_id=run, requester_key=MANAGER, outcome="ok", agent_id=agent
        ),
        lambda: call(compacted, key, operation_id=run),
        lambda: call(compacted, CHILD, operation_id=ident),
        lambda: call(compacted, CHILD, operation_id=run, session_id=ident),
        lambda: call(compacted, CHILD, operation_id=run, run_id=ident),
        lambda: call(compacted, "global", operation_id=run, agent_id=agent),
        lambda: call(w.record_adopted, key),
        lambda: call(w.record_adopted, "global", agent_id=agent),
    ]
    return draw(st.sampled_from(cases))


def test_producers_never_raise_on_hostile_input_return_none_and_write_nothing(seeded: SessionWatch) -> None:
    @FUZZ
    @given(st.data())
    def swallowed(data: st.DataObject) -> None:
        attempt = data.draw(hostile_producer_calls(seeded))
        before = store_state(seeded)
        assert attempt() is None
        assert store_state(seeded) == before

    swallowed()


def test_the_producer_calls_the_fuzzer_corrupts_record_when_their_arguments_are_valid(
    seeded: SessionWatch,
) -> None:
    """The control for the test above: its None comes from the hostile argument, not from a gate."""
    recorded = [
        seeded.record_human_message(CHILD, channel="telegram", run_id="r", dedupe_key="d", agent_id="main"),
        seeded.record_human_message(CHILD, channel="slack", occurred_at=datetime(2026, 11, 30, tzinfo=UTC)),
        seeded.record_goal_changed(CHILD, summary="goal updated", actor=Actor.human()),
        seeded.record_goal_changed("global", summary="goal updated", agent_id="ops"),
        seeded.record_spawn(
            requester_key=MANAGER, child_key="agent:main:subagent:other", child_run_id="run-a"
        ),
        seeded.record_spawn(
            requester_key=MANAGER, child_key="subagent:bare", child_run_id="run-b", agent_id="main"
        ),
        seeded.record_run_terminal(child_key=CHILD, run_id="run-c", requester_key=MANAGER, outcome="error"),
        seeded.record_run_terminal(
            child_key="global", run_id="run-d", requester_key=MANAGER, outcome="ok", agent_id="ops"
        ),
        seeded.record_compacted(CHILD, operation_id="op-1", session_id="s-1", run_id="r-1"),
        seeded.record_compacted("global", operation_id="op-2", agent_id="ops"),
        seeded.record_adopted(CHILD),
        seeded.record_adopted("global", agent_id="ops"),
    ]
    assert [signal is not None for signal in recorded] == [True] * len(recorded)
    assert [s.sequence for s in recorded if s is not None] == list(range(4, 4 + len(recorded)))


# ------------------------------------------------- collection and kind arguments (typed refusals)

NOT_SEQUENCES: tuple[object, ...] = (None, 5, "agent:main:main")


@pytest.mark.parametrize("watchers", NOT_SEQUENCES)
def test_record_refuses_watchers_that_are_not_a_sequence_of_keys(
    seeded: SessionWatch, watchers: object
) -> None:
    arguments = {"key": CHILD, "kind": "goal_changed", "actor": Actor.system(), "summary": "goal updated"}
    expect_refused(
        seeded, InvalidSignal, "watchers", lambda: record(seeded, {**arguments, "watchers": watchers})
    )


@pytest.mark.parametrize("method", ["record_many", "acknowledge", "sessions_list"])
def test_collection_arguments_that_are_not_collections_are_typed_errors(
    seeded: SessionWatch, method: str
) -> None:
    attempts: dict[str, tuple[Callable[[], object], type[InvalidSignal | InvalidQuery], str]] = {
        "record_many": (lambda: call(seeded.record_many, 5), InvalidSignal, "inputs"),
        "acknowledge": (lambda: call(seeded.acknowledge, MANAGER, 5), InvalidQuery, "targets"),
        "sessions_list": (lambda: call(seeded.sessions_list, kinds=5), InvalidQuery, "kinds"),
    }
    attempt, error, field = attempts[method]
    expect_refused(seeded, error, field, attempt)


@pytest.mark.parametrize("kind", ["main\nspoofed", "main\x00", "\ud800"])
def test_upsert_session_refuses_a_session_kind_with_a_control_character(
    seeded: SessionWatch, kind: str
) -> None:
    expect_refused(seeded, InvalidSignal, "kind", lambda: seeded.upsert_session(MANAGER, kind=kind))


def test_changes_since_beyond_the_sql_integer_range_is_answered_like_any_other(seeded: SessionWatch) -> None:
    status = seeded.session_status(CHILD, changes_since=2**63)
    assert status.state_changes is not None
    assert (status.state_changes.events, status.state_changes.history_gap) == ((), False)
