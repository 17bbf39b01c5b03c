"""Signal-log properties that hold on every store (SPEC §2, §3.2, §7.1, §9, CONVENTIONS §5, §7).

Each example opens a fresh store (a new temporary SQLite file, or memory) with its own fake clock,
plays a drawn history, and checks the store against a model kept here, independent of the core.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from hypothesis import given, settings
from hypothesis import strategies as st
from stores import FILE_STORES, STORES, fresh_store_url
from strategies import (
    AdvanceOp,
    DeleteOp,
    RecordManyOp,
    RecordOp,
    ResetOp,
    SessionOp,
    UpsertOp,
    operation_lists,
)

import sessionwatch
from sessionwatch import (
    InvalidSignal,
    SessionEntry,
    SessionWatch,
    Signal,
    SignalInput,
    StateChange,
    UnknownSession,
)
from sessionwatch.testing import FakeClock, SessionRef, owner_of, session_refs, signal_inputs

# Creating a SQLite file costs fsyncs; on tmpfs a fresh store per example is ~10x cheaper. Durability
# is the crash test's subject (tests/integration/test_crash.py), not these properties'.
_TMPFS = Path("/dev/shm")  # noqa: S108 - only a parent: TemporaryDirectory makes a private 0700 dir in it
SCRATCH = _TMPFS if _TMPFS.is_dir() else None
HISTORIES = settings(max_examples=50)
"""Examples per history property, whatever the profile: each replays up to 25 operations on a fresh
store, for every store; 50 keep the file well under a minute on 2 cores with PostgreSQL included."""
PUBLIC_PAYLOAD_KEYS = ("outcome", "channel", "turns")
MAX_PAGE = 200

Identity = tuple[str, str]


@contextmanager
def fresh_watch(store_kind: str, clock: FakeClock) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a brand-new store: fixtures do not reset between Hypothesis examples."""
    with (
        tempfile.TemporaryDirectory(dir=SCRATCH) as directory,
        fresh_store_url(store_kind, Path(directory), reuse=True) as url,
        sessionwatch.open(url, clock=clock) as watch,
    ):
        yield watch


def identity_of(item: SignalInput) -> Identity:
    return (item.session_key.strip(), owner_of(item))


def ref_of(item: SignalInput) -> SessionRef:
    return SessionRef(key=item.session_key, agent_id=item.agent_id, owner=owner_of(item))


def poisoned(op: RecordManyOp) -> list[SignalInput]:
    """The batch with its `poison_at` item made invalid (a two-line summary, SPEC §3.3)."""
    return [
        item.model_copy(update={"summary": "two\nlines"}) if index == op.poison_at else item
        for index, item in enumerate(op.items)
    ]


def expected_change(signal: Signal) -> StateChange:
    """What `changesSince` must show for a recorded signal: its fields, the payload restricted (§7.1)."""
    public = {k: v for k, v in (signal.payload or {}).items() if k in PUBLIC_PAYLOAD_KEYS}
    return StateChange(
        sequence=signal.sequence,
        kind=signal.kind,
        actor_type=signal.actor_type,
        occurred_at=signal.occurred_at,
        summary=signal.summary,
        actor_id=signal.actor_id,
        run_id=signal.run_id,
        payload=public or None,
    )


@dataclass
class LogModel:
    """The signal log as the SPEC describes it, kept by the test alongside the store.

    `logs` holds every known identity with the signals recorded on it, ascending; `dedupe` every
    retained dedupe key; `refs` a way to name every identity ever touched, deleted ones included.
    """

    logs: dict[Identity, list[Signal]] = field(default_factory=dict)
    dedupe: dict[str, Signal] = field(default_factory=dict)
    refs: dict[Identity, SessionRef] = field(default_factory=dict)
    last_sequence: int = 0

    def head(self, identity: Identity) -> int:
        log = self.logs.get(identity, [])
        return log[-1].sequence if log else 0

    def expect_record(self, item: SignalInput, returned: Signal) -> bool:
        """Check one `record` answer against the model and apply it; True when it was a new signal."""
        identity = identity_of(item)
        self.refs.setdefault(identity, ref_of(item))
        existing = self.dedupe.get(item.dedupe_key) if item.dedupe_key is not None else None
        if existing is not None:
            assert returned == existing, "a duplicate dedupe key must return the existing signal"
            return False
        assert returned.sequence > self.last_sequence, "sequences come from one rising counter"
        assert (returned.session_key, returned.agent_id) == identity
        assert returned.kind == item.kind
        assert returned.summary == item.summary
        assert returned.dedupe_key == item.dedupe_key
        self.last_sequence = returned.sequence
        self.logs.setdefault(identity, []).append(returned)
        if item.dedupe_key is not None:
            self.dedupe[item.dedupe_key] = returned
        return True

    def upsert(self, ref: SessionRef) -> None:
        self.refs.setdefault(ref.identity, ref)
        self.logs.setdefault(ref.identity, [])

    def delete(self, ref: SessionRef) -> None:
        self.refs.setdefault(ref.identity, ref)
        dropped = self.logs.pop(ref.identity, [])
        for signal in dropped:
            if signal.dedupe_key is not None:
                del self.dedupe[signal.dedupe_key]


def play_record(watch: SessionWatch, item: SignalInput) -> Signal:
    """`record` with every field of `item`."""
    return watch.record(
        item.session_key,
        kind=item.kind,
        actor=item.actor,
        summary=item.summary,
        payload=item.payload,
        run_id=item.run_id,
        occurred_at=item.occurred_at,
        dedupe_key=item.dedupe_key,
        agent_id=item.agent_id,
    )


def play_upsert(watch: SessionWatch, op: UpsertOp) -> SessionEntry:
    """`upsert_session` with every field of `op`."""
    return watch.upsert_session(
        op.ref.key,
        agent_id=op.ref.agent_id,
        kind=op.kind,
        session_id=op.session_id,
        spawned_by=op.spawned_by,
        parent_session_key=op.parent_session_key,
    )


def play_batch(watch: SessionWatch, model: LogModel, op: RecordManyOp) -> set[Identity]:
    """`record_many`: every answer checked against the model; a poisoned batch writes nothing."""
    if op.poison_at is not None:
        with pytest.raises(InvalidSignal):
            watch.record_many(poisoned(op))
        for item in op.items:  # named, so the checks look at them: they must be as they were
            model.refs.setdefault(identity_of(item), ref_of(item))
        return set()
    answers = watch.record_many(op.items)
    assert len(answers) == len(op.items)
    return {
        identity_of(item)
        for item, returned in zip(op.items, answers, strict=True)
        if model.expect_record(item, returned)
    }


def play(watch: SessionWatch, clock: FakeClock, model: LogModel, op: SessionOp) -> set[Identity]:
    """Apply one operation to the store and the model; the identities that got a new signal."""
    match op:
        case RecordOp(item=item):
            return {identity_of(item)} if model.expect_record(item, play_record(watch, item)) else set()
        case RecordManyOp():
            return play_batch(watch, model, op)
        case UpsertOp(ref=ref):
            play_upsert(watch, op)
            model.upsert(ref)
        case ResetOp(ref=ref):
            watch.reset_session(ref.key, agent_id=ref.agent_id)
            model.refs.setdefault(ref.identity, ref)
        case DeleteOp(ref=ref):
            watch.delete_session(ref.key, agent_id=ref.agent_id)
            model.delete(ref)
        case AdvanceOp(minutes=minutes):
            clock.advance(minutes=minutes)
    return set()


def head_of(watch: SessionWatch, ref: SessionRef) -> int | None:
    """The session's `stateVersion`, or None when the identity is unknown."""
    try:
        return watch.session_status(ref.key, agent_id=ref.agent_id).state_version
    except UnknownSession:
        return None


def all_changes(watch: SessionWatch, ref: SessionRef, since: int, limit: int = MAX_PAGE) -> list[StateChange]:
    """Every change after `since`, following `truncated` page by page."""
    changes: list[StateChange] = []
    cursor = since
    while True:
        status = watch.session_status(ref.key, changes_since=cursor, limit=limit, agent_id=ref.agent_id)
        page = status.state_changes
        assert page is not None, "stateChanges is present whenever changesSince is given"
        assert len(page.events) <= limit
        assert all(change.sequence > cursor for change in page.events), "a page starts after its cursor"
        changes.extend(page.events)
        if not page.truncated:
            return changes
        assert len(page.events) == limit, "a truncated page is a full page"
        cursor = page.events[-1].sequence


def check_heads(watch: SessionWatch, model: LogModel) -> None:
    for identity, ref in model.refs.items():
        expected = model.head(identity) if identity in model.logs else None
        assert head_of(watch, ref) == expected, f"head of {identity}"


# --------------------------------------------------------------------------------- (a) heads


@pytest.mark.parametrize("store_kind", STORES)
@HISTORIES
@given(ops=operation_lists())
def test_heads_rise_strictly_and_equal_the_highest_returned_sequence_of_each_session(
    store_kind: str, ops: list[SessionOp]
) -> None:
    clock = FakeClock()
    model = LogModel()
    with fresh_watch(store_kind, clock) as watch:
        for op in ops:
            before = {identity: head_of(watch, ref) for identity, ref in model.refs.items()}
            fresh = play(watch, clock, model, op)
            for identity in fresh:
                earlier = before.get(identity)
                now = head_of(watch, model.refs[identity])
                assert now is not None
                assert earlier is None or now > earlier, f"a new signal raises the head of {identity}"
            check_heads(watch, model)


# ---------------------------------------------------------------------------- (b) changesSince


@pytest.mark.parametrize("store_kind", STORES)
@HISTORIES
@given(ops=operation_lists(), data=st.data())
def test_changes_since_returns_exactly_the_sessions_later_signals_in_ascending_order(
    store_kind: str, ops: list[SessionOp], data: st.DataObject
) -> None:
    clock = FakeClock()
    model = LogModel()
    with fresh_watch(store_kind, clock) as watch:
        for op in ops:
            play(watch, clock, model, op)
        limit = data.draw(st.sampled_from((1, 2, 3, MAX_PAGE)), label="page limit")
        for identity, ref in model.refs.items():
            if identity not in model.logs:
                with pytest.raises(UnknownSession):
                    watch.session_status(ref.key, changes_since=0, agent_id=ref.agent_id)
                continue
            log = model.logs[identity]
            cursors = {0, model.head(identity), model.head(identity) + 7, model.last_sequence}
            cursors |= {s.sequence for s in log[:3]}
            cursors.add(data.draw(st.integers(0, model.last_sequence + 1), label=f"since {identity}"))
            for since in sorted(cursors):
                expected = [expected_change(s) for s in log if s.sequence > since]
                assert all_changes(watch, ref, since, limit) == expected, f"{identity} since {since}"
            page = watch.session_status(ref.key, changes_since=0, agent_id=ref.agent_id).state_changes
            assert page is not None
            assert page.earliest_available_sequence == (log[0].sequence if log else 0)
            assert page.history_gap is False, "nothing was pruned, so no history gap"


@pytest.mark.parametrize("store_kind", STORES)
@settings(max_examples=8)
@given(
    refs=st.lists(session_refs(), min_size=2, max_size=2, unique_by=lambda ref: ref.identity),
    busy=st.integers(MAX_PAGE + 1, 2 * MAX_PAGE + 30),
    quiet=st.integers(1, 40),
    data=st.data(),
)
def test_changes_since_pages_through_more_than_two_hundred_signals(
    store_kind: str, refs: list[SessionRef], busy: int, quiet: int, data: st.DataObject
) -> None:
    """One session gets more than a page of signals, interleaved with another session's."""
    order = data.draw(st.permutations([0] * busy + [1] * quiet), label="interleaving")
    inputs = [
        SignalInput(
            session_key=refs[which].key,
            agent_id=refs[which].agent_id,
            kind="goal_changed",
            actor=sessionwatch.Actor.system(),
            summary=f"goal updated {index}",
        )
        for index, which in enumerate(order)
    ]
    model = LogModel()
    with fresh_watch(store_kind, FakeClock()) as watch:
        for start in range(0, len(inputs), 150):
            play(watch, FakeClock(), model, RecordManyOp(items=tuple(inputs[start : start + 150])))
        for ref in refs:
            log = model.logs[ref.identity]
            since = data.draw(st.sampled_from([0, *(s.sequence for s in log[:5]), log[-1].sequence]))
            later = [s for s in log if s.sequence > since]
            status = watch.session_status(ref.key, changes_since=since, agent_id=ref.agent_id)
            assert status.state_changes is not None
            assert status.state_changes.truncated == (len(later) > MAX_PAGE)
            assert all_changes(watch, ref, since) == [expected_change(s) for s in later]
        assert len(model.logs[refs[0].identity]) > MAX_PAGE


# ------------------------------------------------------------------------------- (c) dedupe


@pytest.mark.parametrize("store_kind", STORES)
@HISTORIES
@given(
    ops=operation_lists(max_size=12),
    pair=st.tuples(signal_inputs(), signal_inputs()),
    dedupe_key=st.sampled_from(("run-terminal:r-9", "child-spawned:c-1")),
    batched=st.booleans(),
)
def test_a_duplicate_dedupe_key_returns_the_existing_signal_and_changes_nothing(
    store_kind: str,
    ops: list[SessionOp],
    pair: tuple[SignalInput, SignalInput],
    dedupe_key: str,
    batched: bool,
) -> None:
    first, second = (item.model_copy(update={"dedupe_key": dedupe_key}) for item in pair)
    clock = FakeClock()
    model = LogModel()
    with fresh_watch(store_kind, clock) as watch:
        for op in ops:
            play(watch, clock, model, op)
        original = watch.record_many([first])[0]
        model.expect_record(first, original)
        model.refs.setdefault(identity_of(second), ref_of(second))
        stored_before = watch.store.read_model()
        events_before = sum(1 for _ in watch.store.replay())
        heads_before = {identity: head_of(watch, ref) for identity, ref in model.refs.items()}
        clock.advance(minutes=5)

        again = watch.record_many([second])[0] if batched else play_record(watch, second)

        assert again == original
        assert sum(1 for _ in watch.store.replay()) == events_before, "no event is appended"
        assert watch.store.read_model() == stored_before, "no read model changes"
        assert {identity: head_of(watch, ref) for identity, ref in model.refs.items()} == heads_before
        fresh = watch.record(
            "agent:main:after",
            kind="compacted",
            actor=sessionwatch.Actor.system(),
            summary="session compacted",
        )
        assert fresh.sequence > model.last_sequence, "the counter keeps rising after a duplicate"


@pytest.mark.parametrize("store_kind", STORES)
@given(items=st.lists(signal_inputs(), min_size=2, max_size=8))
def test_a_dedupe_key_repeated_inside_one_batch_is_recorded_once(
    store_kind: str, items: list[SignalInput]
) -> None:
    batch = [item.model_copy(update={"dedupe_key": "compacted:op-1"}) for item in items]
    with fresh_watch(store_kind, FakeClock()) as watch:
        answers = watch.record_many(batch)
        assert all(answer == answers[0] for answer in answers)
        first = identity_of(batch[0])
        ref = ref_of(batch[0])
        assert [c.sequence for c in all_changes(watch, ref, 0)] == [answers[0].sequence]
        assert answers[0].session_key == first[0]
        for item in batch[1:]:
            if identity_of(item) != first:
                assert head_of(watch, ref_of(item)) is None, "a deduplicated input creates no session"


# ------------------------------------------------------------------------------ (d) rebuild


@pytest.mark.parametrize("store_kind", STORES)
@HISTORIES
@given(ops=operation_lists())
def test_rebuilding_every_read_model_from_the_event_store_gives_the_stored_read_models(
    store_kind: str, ops: list[SessionOp]
) -> None:
    clock = FakeClock()
    model = LogModel()
    with fresh_watch(store_kind, clock) as watch:
        for op in ops:
            play(watch, clock, model, op)
            assert_audit_clean(watch)
        stored = watch.store.read_model()
        assert {i for i, log in model.logs.items() if log} == set(stored.signals)
        assert set(model.logs) == set(stored.sessions)


# --------------------------------------------------------------------------- (e) store parity


def outcome(watch: SessionWatch, clock: FakeClock, op: SessionOp) -> object:
    """What an operation answers, as plain data: the signals recorded, or the error raised."""
    try:
        match op:
            case RecordOp(item=item):
                return play_record(watch, item).model_dump()
            case RecordManyOp():
                items = op.items if op.poison_at is None else poisoned(op)
                return [s.model_dump() for s in watch.record_many(items)]
            case UpsertOp():
                return play_upsert(watch, op).model_dump()
            case ResetOp(ref=ref):
                watch.reset_session(ref.key, agent_id=ref.agent_id)
            case DeleteOp(ref=ref):
                watch.delete_session(ref.key, agent_id=ref.agent_id)
            case AdvanceOp(minutes=minutes):
                clock.advance(minutes=minutes)
    except (InvalidSignal, UnknownSession) as exc:
        return (type(exc).__name__, str(exc))
    return None


def observe(watch: SessionWatch, refs: list[SessionRef], cursors: list[int]) -> list[object]:
    """Everything a host can read back: the sessions list and every status, as wire JSON."""
    seen: list[object] = [[row.to_json() for row in watch.sessions_list()]]
    for ref in refs:
        for since in (None, *cursors):
            try:
                seen.append(
                    watch.session_status(ref.key, changes_since=since, agent_id=ref.agent_id).to_json()
                )
            except UnknownSession as exc:
                seen.append(str(exc))
    return seen


def refs_in(ops: list[SessionOp]) -> list[SessionRef]:
    refs: dict[Identity, SessionRef] = {}
    for op in ops:
        match op:
            case RecordOp(item=item):
                refs.setdefault(identity_of(item), ref_of(item))
            case RecordManyOp(items=items):
                for item in items:
                    refs.setdefault(identity_of(item), ref_of(item))
            case UpsertOp(ref=ref) | ResetOp(ref=ref) | DeleteOp(ref=ref):
                refs.setdefault(ref.identity, ref)
            case AdvanceOp():
                pass
    return list(refs.values())


@pytest.mark.parametrize("store_kind", FILE_STORES)
@HISTORIES
@given(ops=operation_lists(), cursors=st.lists(st.integers(0, 40), min_size=1, max_size=3))
def test_every_store_answers_like_the_memory_store_for_the_same_history(
    store_kind: str, ops: list[SessionOp], cursors: list[int]
) -> None:
    memory_clock, other_clock = FakeClock(), FakeClock()
    refs = refs_in(ops)
    with fresh_watch("memory", memory_clock) as memory, fresh_watch(store_kind, other_clock) as other:
        for op in ops:
            assert outcome(memory, memory_clock, op) == outcome(other, other_clock, op), op
        assert observe(memory, refs, cursors) == observe(other, refs, cursors)
        assert memory.sessions_list() == other.sessions_list()
