"""The upstream link stream and the monitor's pure rules (SPEC §10, §13.1), given/when/then.

Every test is pure: it folds given link events, decides one command (or judges one provider
answer), and compares the events, the link or the verdict. Nothing here touches a store, a
provider or a clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, TypeAlias

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue, ValidationError

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.upstream import (
    MAX_DEDUPE_ID,
    MAX_DEDUPE_KEY,
    MISSES_BEFORE_MISSING,
    AdvanceMarker,
    AdvanceOnly,
    CountMiss,
    Defer,
    LinkCommand,
    LinkEvent,
    LinkUpstream,
    RecordActivity,
    RecordMissing,
    ResetStreak,
    Unlink,
    UpstreamActivity,
    UpstreamAnswer,
    UpstreamLinked,
    UpstreamLinkState,
    UpstreamMarkerAdvanced,
    UpstreamMissing,
    UpstreamProbe,
    UpstreamSource,
    UpstreamUnlinked,
    Verdict,
    activity_dedupe_key,
    activity_summary,
    decide,
    evolve,
    judge,
    missing_dedupe_key,
    missing_summary,
    normalize_text,
    publication,
    turns_payload,
)

SESSION = "agent:main:adopted"
AGENT = "main"
CATALOG = "claude-code"
AT_MS = 1_796_000_000_000
LATER_MS = AT_MS + 60_000
LATEST_MS = LATER_MS + 60_000

START: JsonValue = {"offset": 0}
MIDDLE: JsonValue = {"offset": 120}
END: JsonValue = {"offset": 480}

HEX16 = re.compile(r"[0-9a-f]{16}")
MARKER_DIGEST = re.compile(r"m[0-9a-f]{16}")  # no dedupe id: the next marker's digest stands in
ID_DIGEST = re.compile(r"d[0-9a-f]{16}")  # an unclean dedupe id: its own digest (never a marker's)


def source(
    ref: JsonValue = None, *, catalog_id: str = CATALOG, thread_id: str = "thread-1"
) -> UpstreamSource:
    """Where a link points; by default a local transcript file of `thread_id`."""
    return UpstreamSource(
        catalog_id=catalog_id,
        host_id="laptop",
        thread_id=thread_id,
        upstream_kind="transcript",
        upstream_ref={"path": f"/home/me/.claude/{thread_id}.jsonl"} if ref is None else ref,
    )


SOURCE = source()
OTHER_SOURCE = source(thread_id="thread-2")


def ids(at_ms: int = AT_MS) -> dict[str, str | int]:
    """The fields every link command and event repeats."""
    return {"session_key": SESSION, "agent_id": AGENT, "at_ms": at_ms}


def link(src: UpstreamSource = SOURCE, marker: JsonValue = START, at_ms: int = AT_MS) -> LinkUpstream:
    return LinkUpstream(**ids(at_ms), source=src, marker=marker)


def advance(link_version: int, marker: JsonValue, at_ms: int = LATER_MS) -> AdvanceMarker:
    return AdvanceMarker(**ids(at_ms), link_version=link_version, marker=marker)


def unlink(
    link_version: int | None = None,
    reason: Literal["unlinked", "missing"] = "unlinked",
    at_ms: int = LATER_MS,
) -> Unlink:
    return Unlink(**ids(at_ms), reason=reason, link_version=link_version)


def fold(state: UpstreamLinkState | None, events: Iterable[LinkEvent]) -> UpstreamLinkState | None:
    for event in events:
        state = evolve(state, event)
    return state


def run(state: UpstreamLinkState | None, *commands: LinkCommand) -> UpstreamLinkState | None:
    """Decide and fold each command in turn, as the shell does."""
    for command in commands:
        state = fold(state, decide(command, state))
    return state


def present(state: UpstreamLinkState | None) -> UpstreamLinkState:
    assert state is not None
    return state


def linked_at(marker: JsonValue = START, src: UpstreamSource = SOURCE) -> UpstreamLinkState:
    """A fresh version-1 link at `marker`, created at AT_MS."""
    return present(run(None, link(src, marker)))


def tombstone() -> UpstreamLinkState:
    """A version-1 link that was unlinked at LATER_MS."""
    return present(run(linked_at(), unlink()))


def activity(
    next_marker: JsonValue = MIDDLE, human_turns: int = 1, dedupe_id: str | None = None
) -> UpstreamActivity:
    return UpstreamActivity(
        session_key=SESSION, human_turns=human_turns, next_marker=next_marker, dedupe_id=dedupe_id
    )


MISSING = UpstreamMissing(session_key=SESSION)


# ---------------------------------------------------------------------------- link (§10)


def test_first_link_starts_version_one_at_the_commands_marker() -> None:
    events = decide(link(), None)
    assert events == [UpstreamLinked(**ids(), link_version=1, source=SOURCE, marker=START)]
    state = present(fold(None, events))
    assert (state.link_version, state.marker, state.active) == (1, START, True)
    assert (state.created_at_ms, state.updated_at_ms, state.last_scanned_at_ms) == (AT_MS, AT_MS, None)
    assert state.identity == SessionIdentity(SESSION, AGENT)
    assert state.source == SOURCE


def test_relink_to_the_same_source_keeps_the_read_marker_and_starts_a_new_version() -> None:
    state = present(run(linked_at(START), advance(1, MIDDLE)))
    events = decide(link(SOURCE, START, at_ms=LATEST_MS), state)
    assert events == [UpstreamLinked(**ids(LATEST_MS), link_version=2, source=SOURCE, marker=MIDDLE)]
    after = present(fold(state, events))
    assert (after.link_version, after.marker, after.active) == (2, MIDDLE, True)
    assert (after.created_at_ms, after.updated_at_ms) == (AT_MS, LATEST_MS)


def test_relink_to_a_source_whose_ref_lists_its_keys_in_another_order_is_the_same_source() -> None:
    state = linked_at(MIDDLE, source({"path": "/t.jsonl", "inode": 7}))
    events = decide(link(source({"inode": 7, "path": "/t.jsonl"}), START, at_ms=LATER_MS), state)
    assert [(e.link_version, e.marker) for e in events if isinstance(e, UpstreamLinked)] == [(2, MIDDLE)]


def test_relink_to_another_source_rebases_to_the_commands_marker() -> None:
    state = present(run(linked_at(START), advance(1, MIDDLE)))
    events = decide(link(OTHER_SOURCE, END, at_ms=LATEST_MS), state)
    assert events == [UpstreamLinked(**ids(LATEST_MS), link_version=2, source=OTHER_SOURCE, marker=END)]
    after = present(fold(state, events))
    assert (after.source, after.marker, after.link_version) == (OTHER_SOURCE, END, 2)


def test_every_relink_bumps_the_version_by_one() -> None:
    state = run(None, link(), link(), link(OTHER_SOURCE), link())
    assert present(state).link_version == 4


# -------------------------------------------------------------------------------- advance marker


def test_advance_of_the_current_version_moves_the_marker_and_stamps_last_scanned() -> None:
    state = linked_at(START)
    events = decide(advance(1, MIDDLE, at_ms=LATER_MS), state)
    assert events == [UpstreamMarkerAdvanced(**ids(LATER_MS), link_version=1, marker=MIDDLE)]
    after = present(fold(state, events))
    assert (after.marker, after.last_scanned_at_ms, after.updated_at_ms) == (MIDDLE, LATER_MS, LATER_MS)
    assert (after.link_version, after.created_at_ms, after.active) == (1, AT_MS, True)


@pytest.mark.parametrize("stale_version", [0, 2, 5])
def test_advance_for_another_link_version_is_a_no_op(stale_version: int) -> None:
    assert decide(advance(stale_version, END), linked_at(START)) == []


def test_advance_after_a_relink_with_the_old_version_is_a_no_op() -> None:
    state = run(linked_at(START), link())
    assert decide(advance(1, END), state) == []


def test_advance_to_the_marker_already_held_is_a_no_op() -> None:
    assert decide(advance(1, {"offset": 0}), linked_at(START)) == []


@pytest.mark.parametrize("state", [None, tombstone()], ids=["no link", "tombstone"])
def test_advance_without_an_active_link_is_a_no_op(state: UpstreamLinkState | None) -> None:
    assert decide(advance(1, END), state) == []


# ---------------------------------------------------------------------------------------- unlink


@pytest.mark.parametrize("reason", ["unlinked", "missing"])
def test_unlink_leaves_a_tombstone_that_keeps_the_link_version(
    reason: Literal["unlinked", "missing"],
) -> None:
    state = present(run(None, link(), link()))
    events = decide(unlink(reason=reason, at_ms=LATEST_MS), state)
    assert events == [UpstreamUnlinked(**ids(LATEST_MS), link_version=2, reason=reason)]
    after = present(fold(state, events))
    assert (after.active, after.link_version, after.updated_at_ms) == (False, 2, LATEST_MS)
    assert (after.source, after.marker, after.created_at_ms) == (state.source, state.marker, AT_MS)


def test_unlink_of_the_current_version_by_number_removes_it() -> None:
    events = decide(unlink(link_version=1), linked_at())
    assert events == [UpstreamUnlinked(**ids(LATER_MS), link_version=1, reason="unlinked")]


@pytest.mark.parametrize("state", [None, tombstone()], ids=["no link", "tombstone"])
def test_unlink_without_an_active_link_is_a_no_op(state: UpstreamLinkState | None) -> None:
    assert decide(unlink(), state) == []


def test_unlink_of_a_stale_link_version_is_a_no_op() -> None:
    """The monitor's third miss of version 1 must not remove the version-2 link made meanwhile."""
    state = run(linked_at(), link())
    assert decide(unlink(link_version=1, reason="missing"), state) == []


# --------------------------------------------------------------------------- link after tombstone


def test_link_after_a_tombstone_gets_a_higher_version_and_a_fresh_start() -> None:
    dead = present(run(None, link(), link(), advance(2, MIDDLE), unlink()))
    events = decide(link(SOURCE, START, at_ms=LATEST_MS), dead)
    assert events == [UpstreamLinked(**ids(LATEST_MS), link_version=3, source=SOURCE, marker=START)]
    after = present(fold(dead, events))
    assert (after.link_version, after.active, after.marker) == (3, True, START)
    assert (after.created_at_ms, after.updated_at_ms, after.last_scanned_at_ms) == (
        LATEST_MS,
        LATEST_MS,
        None,
    )


def test_link_after_a_tombstone_never_reuses_its_missing_dedupe_key() -> None:
    dead = tombstone()
    relinked = present(run(dead, link(at_ms=LATEST_MS)))
    assert relinked.link_version > dead.link_version
    assert missing_dedupe_key(relinked) != missing_dedupe_key(dead)


@pytest.mark.parametrize(
    "event",
    [
        UpstreamMarkerAdvanced(**ids(), link_version=1, marker=MIDDLE),
        UpstreamUnlinked(**ids(), link_version=1, reason="missing"),
    ],
    ids=["marker advanced", "unlinked"],
)
def test_evolve_of_a_later_fact_without_a_link_stays_without_one(event: LinkEvent) -> None:
    assert evolve(None, event) is None


# ---------------------------------------------------------------------------------- judge (§10)


def test_judge_no_answer_resets_the_missing_streak() -> None:
    assert judge(None, streak=2, run_started=False) == ResetStreak()


@pytest.mark.parametrize(("streak", "counted"), [(0, 1), (1, 2)])
def test_judge_first_and_second_miss_are_counted(streak: int, counted: int) -> None:
    assert judge(MISSING, streak=streak, run_started=False) == CountMiss(streak=counted)


@pytest.mark.parametrize(("streak", "counted"), [(0, 1), (1, 2)])
def test_judge_first_and_second_miss_are_counted_even_while_a_run_started(streak: int, counted: int) -> None:
    assert judge(MISSING, streak=streak, run_started=True) == CountMiss(streak=counted)


def test_judge_third_consecutive_miss_records_missing() -> None:
    assert judge(MISSING, streak=MISSES_BEFORE_MISSING - 1, run_started=False) == RecordMissing()


def test_judge_third_miss_while_a_run_started_is_deferred() -> None:
    assert judge(MISSING, streak=MISSES_BEFORE_MISSING - 1, run_started=True) == Defer()


@pytest.mark.parametrize("turns", [1, 3])
def test_judge_activity_with_human_turns_records_activity(turns: int) -> None:
    answer = activity(human_turns=turns)
    assert judge(answer, streak=2, run_started=False) == RecordActivity(activity=answer)


def test_judge_activity_without_human_turns_only_advances_the_marker() -> None:
    answer = activity(human_turns=0)
    assert judge(answer, streak=2, run_started=False) == AdvanceOnly(activity=answer)


@pytest.mark.parametrize("turns", [0, 1, 4])
def test_judge_any_activity_while_a_run_started_is_deferred(turns: int) -> None:
    assert judge(activity(human_turns=turns), streak=0, run_started=True) == Defer()


# ----------------------------------------------------------- judge as the shell drives it (property)

AnswerKind: TypeAlias = Literal["nothing", "missing", "scanned", "human"]
Step: TypeAlias = tuple[AnswerKind, bool]
"""One tick for one link: what the provider answered, and whether a run started during the scan."""

steps_strategy = st.lists(
    st.tuples(st.sampled_from(("nothing", "missing", "scanned", "human")), st.booleans()),
    max_size=40,
)


def answer_of(kind: AnswerKind, tick: int) -> UpstreamAnswer | None:
    match kind:
        case "nothing":
            return None
        case "missing":
            return MISSING
        case "scanned":
            return activity({"offset": tick}, human_turns=0)
        case "human":
            return activity({"offset": tick}, human_turns=1 + tick % 3)


def drive_shell(steps: Sequence[Step]) -> tuple[list[Verdict], list[int]]:
    """The shell's streak bookkeeping around `judge`; the streak after each tick. Missing ends it."""
    streak = 0
    verdicts: list[Verdict] = []
    streaks: list[int] = []
    for tick, (kind, run_started) in enumerate(steps):
        verdict = judge(answer_of(kind, tick), streak=streak, run_started=run_started)
        verdicts.append(verdict)
        if isinstance(verdict, RecordMissing):
            break
        if isinstance(verdict, ResetStreak | AdvanceOnly | RecordActivity):
            streak = 0
        elif isinstance(verdict, CountMiss):
            streak = verdict.streak
        # a Defer leaves the streak as it was
        streaks.append(streak)
    return verdicts, streaks


def model(steps: Sequence[Step]) -> tuple[int | None, set[int], list[int]]:
    """SPEC §10 read directly: (tick of the missing record, deferred ticks, miss streak after each tick).

    Only *counted* answers matter: an answer deferred for a run is as if never given. Missing is
    recorded at the first tick whose answer makes the last three counted answers all misses,
    unless a run started then (deferred, not counted).
    """
    counted: list[AnswerKind] = []
    deferred: set[int] = set()
    streaks: list[int] = []
    for tick, (kind, run_started) in enumerate(steps):
        third_miss = kind == "missing" and [*counted[-2:], kind] == ["missing"] * MISSES_BEFORE_MISSING
        if third_miss and not run_started:
            return tick, deferred, streaks
        if (third_miss or kind in {"scanned", "human"}) and run_started:
            deferred.add(tick)
        else:
            counted.append(kind)
        streaks.append(trailing_misses(counted))
    return None, deferred, streaks


def trailing_misses(counted: Sequence[AnswerKind]) -> int:
    misses = 0
    for kind in reversed(counted):
        if kind != "missing":
            break
        misses += 1
    return misses


@given(steps_strategy)
def test_judge_records_missing_exactly_at_the_third_counted_consecutive_miss(steps: list[Step]) -> None:
    verdicts, streaks = drive_shell(steps)
    recorded_at, deferred, model_streaks = model(steps)
    recorded = [tick for tick, v in enumerate(verdicts) if isinstance(v, RecordMissing)]
    assert recorded == ([] if recorded_at is None else [recorded_at])
    assert recorded in ([], [len(verdicts) - 1])  # never two, and nothing is judged after it
    assert {tick for tick, v in enumerate(verdicts) if isinstance(v, Defer)} == deferred
    assert streaks == model_streaks


@given(steps_strategy)
def test_judge_defer_never_changes_the_streak_and_only_happens_during_a_run(steps: list[Step]) -> None:
    verdicts, streaks = drive_shell(steps)
    before = [0, *streaks]
    for tick, verdict in enumerate(verdicts):
        if isinstance(verdict, Defer):
            assert steps[tick][1]
            assert streaks[tick] == before[tick]
        if isinstance(verdict, CountMiss):
            assert 0 < verdict.streak < MISSES_BEFORE_MISSING


# --------------------------------------------------------------------------------- dedupe keys


def test_activity_dedupe_key_is_session_source_and_dedupe_id() -> None:
    key = activity_dedupe_key(linked_at(), activity(dedupe_id="0-120"))
    assert key == f"upstream:{SESSION}:{SOURCE.key}:0-120"


def test_activity_dedupe_key_keeps_a_dedupe_id_of_exactly_the_limit() -> None:
    dedupe_id = "d" * MAX_DEDUPE_ID
    assert activity_dedupe_key(linked_at(), activity(dedupe_id=dedupe_id)).endswith(f":{dedupe_id}")


def test_activity_dedupe_key_without_a_dedupe_id_follows_the_next_marker() -> None:
    state = linked_at()
    key = activity_dedupe_key(state, activity(MIDDLE))
    assert key.startswith(f"upstream:{SESSION}:{SOURCE.key}:")
    assert MARKER_DIGEST.fullmatch(key.rsplit(":", 1)[1])
    assert activity_dedupe_key(state, activity({"offset": 120}, human_turns=3)) == key
    assert activity_dedupe_key(state, activity(END)) != key


def test_activity_dedupe_key_without_a_dedupe_id_ignores_the_key_order_of_the_marker() -> None:
    state = linked_at()
    first = activity_dedupe_key(state, activity({"offset": 1, "inode": 2}))
    assert activity_dedupe_key(state, activity({"inode": 2, "offset": 1})) == first


@pytest.mark.parametrize(
    "dedupe_id",
    ["x" * (MAX_DEDUPE_ID + 1), "0-120\n", "two\nlines", "carriage\rreturn", "line\u2028separator"],
    ids=["too long", "trailing newline", "newline", "carriage return", "line separator"],
)
def test_activity_dedupe_key_replaces_an_unclean_dedupe_id_by_a_digest(dedupe_id: str) -> None:
    key = activity_dedupe_key(linked_at(), activity(dedupe_id=dedupe_id))
    prefix = f"upstream:{SESSION}:{SOURCE.key}:"
    assert key.startswith(prefix)
    assert ID_DIGEST.fullmatch(key.removeprefix(prefix))
    assert activity_dedupe_key(linked_at(), activity(dedupe_id=dedupe_id)) == key


def test_activity_dedupe_key_digests_distinct_long_dedupe_ids_apart() -> None:
    state = linked_at()
    first = activity_dedupe_key(state, activity(dedupe_id="a" * 100))
    assert activity_dedupe_key(state, activity(dedupe_id="a" * 99 + "b")) != first


def test_activity_dedupe_key_of_a_long_dedupe_id_depends_on_the_id_only() -> None:
    state = linked_at()
    dedupe_id = "msg-" + "0" * MAX_DEDUPE_ID
    first = activity_dedupe_key(state, activity(MIDDLE, dedupe_id=dedupe_id))
    assert activity_dedupe_key(state, activity(END, dedupe_id=dedupe_id)) == first


def test_activity_dedupe_key_of_a_very_long_session_key_is_bounded_deterministic_and_distinct() -> None:
    long_key = "agent:main:" + "s" * 600
    state = present(
        run(
            None, LinkUpstream(session_key=long_key, agent_id=AGENT, source=SOURCE, marker=START, at_ms=AT_MS)
        )
    )
    other = state.model_copy(update={"session_key": long_key + "t"})
    key = activity_dedupe_key(state, activity(dedupe_id="0-120"))
    assert len(key) <= MAX_DEDUPE_KEY
    assert key.startswith("upstream:")
    assert activity_dedupe_key(state, activity(dedupe_id="0-120")) == key
    assert activity_dedupe_key(other, activity(dedupe_id="0-120")) != key
    assert activity_dedupe_key(state, activity(dedupe_id="0-121")) != key


def test_missing_dedupe_key_is_once_per_link_version_and_source() -> None:
    first = linked_at()
    key = missing_dedupe_key(first)
    assert key == f"upstream-missing:{SESSION}:{SOURCE.key}:1"
    assert missing_dedupe_key(present(run(first, link()))) != key
    assert missing_dedupe_key(first.model_copy(update={"source": OTHER_SOURCE})) != key


def test_missing_dedupe_key_of_a_very_long_session_key_is_bounded() -> None:
    state = linked_at().model_copy(update={"session_key": "agent:main:" + "s" * 600})
    key = missing_dedupe_key(state)
    assert len(key) <= MAX_DEDUPE_KEY
    assert key.startswith("upstream-missing:")
    assert missing_dedupe_key(state.model_copy(update={"link_version": 2})) != key


def test_source_key_is_sixteen_hex_characters() -> None:
    assert HEX16.fullmatch(SOURCE.key)


def test_source_key_ignores_the_key_order_of_the_upstream_ref() -> None:
    forward = source({"path": "/t.jsonl", "inode": 7, "nested": {"a": 1, "b": [1, 2]}})
    backward = source({"nested": {"b": [1, 2], "a": 1}, "inode": 7, "path": "/t.jsonl"})
    assert forward.key == backward.key


@pytest.mark.parametrize(
    "other",
    [
        source({"path": "/home/me/.claude/thread-1.jsonl", "inode": 7}),
        source({"path": "/home/me/.claude/thread-9.jsonl"}),
        source(catalog_id="codex"),
        OTHER_SOURCE,
    ],
    ids=["extra ref field", "other ref", "other catalog", "other thread"],
)
def test_source_key_differs_for_a_different_source(other: UpstreamSource) -> None:
    assert other.key != SOURCE.key


# --------------------------------------------------------------- JSON identity of sources and markers


def test_relink_to_a_ref_differing_only_in_json_type_is_another_source() -> None:
    state = linked_at(MIDDLE, source({"n": 1}))
    rebased = source({"n": True})
    assert rebased.key != state.source.key
    events = decide(link(rebased, START, at_ms=LATER_MS), state)
    assert events == [UpstreamLinked(**ids(LATER_MS), link_version=2, source=rebased, marker=START)]


def test_advance_to_a_marker_differing_only_in_json_type_moves_it() -> None:
    events = decide(advance(1, {"done": True}), linked_at({"done": 1}))
    assert events == [UpstreamMarkerAdvanced(**ids(LATER_MS), link_version=1, marker={"done": True})]


# ------------------------------------------------------------------------ texts and payloads


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("hello", "hello"),
        ("  hello   world  ", "hello world"),
        ("line one\nline two\r\n\tend", "line one line two end"),
        ("   ", ""),
        ("", ""),
        ("déjà\u00a0vu", "déjà vu"),
    ],
)
def test_normalize_text_collapses_whitespace_runs_and_trims_the_ends(text: str, normalized: str) -> None:
    assert normalize_text(text) == normalized


@pytest.mark.parametrize(("turns", "payload"), [(0, None), (1, None), (2, {"turns": 2}), (17, {"turns": 17})])
def test_turns_payload_names_only_a_burst(turns: int, payload: dict[str, object] | None) -> None:
    assert turns_payload(turns) == payload


@pytest.mark.parametrize(
    ("catalog_id", "name"),
    [("claude-code", "claude-code"), ("  codex  ", "codex"), ("", "unknown"), ("  ", "unknown")],
)
def test_summaries_name_the_catalog(catalog_id: str, name: str) -> None:
    assert activity_summary(catalog_id) == f"human message via {name}"
    assert missing_summary(catalog_id) == f"upstream missing via {name}"


def test_probe_carries_every_field_of_the_link() -> None:
    state = present(run(linked_at(START), advance(1, MIDDLE)))
    texts = ("first prompt", "second prompt")
    assert state.probe(texts) == UpstreamProbe(
        session_key=SESSION,
        agent_id=AGENT,
        catalog_id=CATALOG,
        host_id="laptop",
        thread_id="thread-1",
        upstream_kind="transcript",
        upstream_ref={"path": "/home/me/.claude/thread-1.jsonl"},
        marker=MIDDLE,
        own_recent_user_texts=texts,
    )


def test_activity_with_negative_human_turns_is_rejected() -> None:
    with pytest.raises(ValidationError):
        UpstreamActivity(session_key=SESSION, human_turns=-1, next_marker=END)


# ------------------------------------------------------------------ what a writing verdict writes


def test_recorded_activity_plans_a_human_signal_then_the_marker_advance() -> None:
    state = linked_at()
    burst = activity(MIDDLE, human_turns=3, dedupe_id="0-120")
    plan = publication(state, RecordActivity(activity=burst), at_ms=LATER_MS)
    assert plan.signal is not None
    assert (plan.signal.kind.value, plan.signal.actor_type) == ("human_direct_message", "human")
    assert plan.signal.summary == f"human message via {state.source.catalog_id}"
    assert plan.signal.payload == {"turns": 3}
    assert plan.signal.dedupe_key == activity_dedupe_key(state, burst)
    assert plan.link_command == advance(1, MIDDLE)


def test_scanned_only_activity_plans_no_signal_and_the_marker_advance() -> None:
    plan = publication(linked_at(), AdvanceOnly(activity=activity(END, human_turns=0)), at_ms=LATER_MS)
    assert plan.signal is None
    assert plan.link_command == advance(1, END)


def test_a_third_miss_plans_upstream_missing_then_the_unlink_of_that_version() -> None:
    state = present(run(linked_at(), link()))  # version 2
    plan = publication(state, RecordMissing(), at_ms=LATER_MS)
    assert plan.signal is not None
    assert (plan.signal.kind.value, plan.signal.actor_type) == ("upstream_missing", "system")
    assert plan.signal.summary == f"upstream missing via {state.source.catalog_id}"
    assert plan.signal.payload == {"channel": state.source.catalog_id}
    assert plan.signal.dedupe_key == missing_dedupe_key(state)
    assert plan.link_command == unlink(2, "missing")
