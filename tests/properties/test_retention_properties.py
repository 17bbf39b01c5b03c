"""Retention properties (SPEC §8, §7.1, §2) on every store, against an independent model.

Each example opens a fresh store with a small cap and a one-day window, then runs records (single
and batched, several sessions, display times anywhere around the 24 h clamp window, dedupe keys
from a small pool), clock advances, forced and throttled prunes, sweeps, watches, drains and
deletes. The model applies the SPEC §8 rule itself: age (`occurred_at < now - window`) first,
then the newest `max_signals` of what age keeps, watermarks rising to each session's highest
removed sequence, prunes after records once an interval has passed since the last one.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TypeAlias

import pytest
from auditing import assert_audit_clean
from hypothesis import event, given
from hypothesis import strategies as st
from stores import STORES, fresh_store_url

import sessionwatch
from sessionwatch import Actor, Retention, SessionWatch, Signal, SignalInput, UnknownSession
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.signals import to_epoch_ms
from sessionwatch.domain.watch_cursor import CursorKey, CursorState
from sessionwatch.testing import FakeClock

SESSIONS = (
    SessionIdentity("agent:main:worker", "main"),
    SessionIdentity("agent:main:subagent:child", "main"),
    SessionIdentity("global", "main"),
    SessionIdentity("global", "ops"),
)
WATCHERS = ("agent:main:coordinator", "agent:ops:coordinator", "agent:main:worker")
DEDUPE_KEYS = ("compacted:op-1", "compacted:op-2", "run-terminal:run-3")
KINDS = ("goal_changed", "compacted", "human_direct_message")

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
CLAMP_MS = DAY_MS  # occurred_at is clamped into [now - 24 h, now] (SPEC §3.2)
INTERVAL_MS = HOUR_MS  # the default prune interval
MAX_OPERATIONS = 40


# ------------------------------------------------------------------------------------ operations


@dataclass(frozen=True)
class Item:
    session: int
    kind: str
    back_minutes: int | None  # occurred_at = now - back_minutes (None: now); beyond 24 h is clamped
    dedupe: int | None


@dataclass(frozen=True)
class Record:
    item: Item


@dataclass(frozen=True)
class RecordMany:
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Advance:
    minutes: int
    seconds: int  # 0 or 1: whole-minute advances reach the throttle's boundary exactly


@dataclass(frozen=True)
class Prune:
    force: bool


@dataclass(frozen=True)
class Sweep:
    pass


@dataclass(frozen=True)
class Watch:
    watcher: int
    target: int


@dataclass(frozen=True)
class Drain:
    watcher: int


@dataclass(frozen=True)
class Delete:
    session: int


Operation: TypeAlias = Record | RecordMany | Advance | Prune | Sweep | Watch | Drain | Delete

_ITEMS = st.builds(
    Item,
    session=st.integers(0, len(SESSIONS) - 1),
    kind=st.sampled_from(KINDS),
    back_minutes=st.none() | st.integers(0, 30 * 60),
    dedupe=st.none() | st.integers(0, len(DEDUPE_KEYS) - 1),
)
_CHOICES: list[st.SearchStrategy[Operation]] = [
    *[st.builds(Record, _ITEMS)] * 5,
    *[st.builds(RecordMany, st.lists(_ITEMS, min_size=1, max_size=4).map(tuple))] * 2,
    *[st.builds(Advance, st.integers(0, 30 * 60), st.just(1))] * 2,  # hours: signals age past the window
    st.builds(Advance, st.integers(0, 90), st.integers(0, 1)),  # minutes: around the hourly throttle
    st.builds(Prune, st.booleans()),
    st.just(Sweep()),
    *[st.builds(Watch, st.integers(0, len(WATCHERS) - 1), st.integers(0, len(SESSIONS) - 1))] * 2,
    st.builds(Drain, st.integers(0, len(WATCHERS) - 1)),
    st.builds(Delete, st.integers(0, len(SESSIONS) - 1)),
]
_OPERATIONS: st.SearchStrategy[Operation] = st.one_of(*_CHOICES)
HISTORIES = st.lists(_OPERATIONS, min_size=12, max_size=MAX_OPERATIONS)


# ------------------------------------------------------------------------------------------ model


@dataclass
class Kept:
    identity: SessionIdentity
    occurred_ms: int
    dedupe_key: str | None


@dataclass
class Model:
    """What SPEC §8 says the store holds, computed without the code under test."""

    window_ms: int
    max_signals: int
    now_ms: int
    last_prune_ms: int
    signals: dict[int, Kept] = field(default_factory=dict)
    heads: dict[SessionIdentity, int] = field(default_factory=dict)
    watermarks: dict[SessionIdentity, int] = field(default_factory=dict)
    highest_sequence: int = 0
    pruned_dedupe: dict[str, bool] = field(default_factory=dict)

    def dedupe(self, key: str) -> int | None:
        return next((seq for seq, kept in self.signals.items() if kept.dedupe_key == key), None)

    def record(self, item: Item, sequence: int) -> None:
        identity = SESSIONS[item.session]
        key = None if item.dedupe is None else DEDUPE_KEYS[item.dedupe]
        existing = None if key is None else self.dedupe(key)
        if existing is not None:
            event("a retained dedupe key was recorded again")
            assert sequence == existing, "a retained dedupe key returns the existing signal"
            return
        assert sequence > self.highest_sequence, "a new sequence is above every old one (SPEC §2)"
        if key is not None and self.pruned_dedupe.get(key):
            event("a pruned dedupe key was recorded again as a new signal")
        self.highest_sequence = sequence
        back = 0 if item.back_minutes is None else item.back_minutes * 60_000
        self.signals[sequence] = Kept(identity, self.now_ms - min(back, CLAMP_MS), key)
        self.heads[identity] = sequence

    def prune(self) -> int:
        """Apply SPEC §8 at now; return the cursor cut-off."""
        cut = self.now_ms - self.window_ms
        survivors = sorted(
            (seq for seq, kept in self.signals.items() if kept.occurred_ms >= cut), reverse=True
        )
        keep = set(survivors[: self.max_signals])
        removed = sorted(set(self.signals) - keep)
        if removed:
            event("a prune removed signals")
        if any(kept.occurred_ms < cut for kept in self.signals.values()):
            event("a prune removed signals by age")
        for sequence in removed:
            gone = self.signals.pop(sequence)
            identity = gone.identity
            if gone.dedupe_key is not None:
                self.pruned_dedupe[gone.dedupe_key] = True
            self.watermarks[identity] = max(self.watermarks.get(identity, 0), sequence)
        self.last_prune_ms = self.now_ms
        return cut

    def prune_if_due(self) -> int | None:
        if self.now_ms - self.last_prune_ms > INTERVAL_MS:  # older than the interval, not at it
            return self.prune()
        return None

    def delete(self, identity: SessionIdentity) -> None:
        self.signals = {seq: kept for seq, kept in self.signals.items() if kept.identity != identity}
        self.heads.pop(identity, None)
        self.watermarks.pop(identity, None)

    def retained(self, identity: SessionIdentity) -> list[int]:
        return sorted(seq for seq, kept in self.signals.items() if kept.identity == identity)


# ------------------------------------------------------------------------------------------ runner


def signal_input(item: Item, clock: FakeClock) -> SignalInput:
    identity = SESSIONS[item.session]
    return SignalInput(
        session_key=identity.session_key,
        agent_id=identity.agent_id,
        kind=item.kind,
        actor=Actor.human() if item.kind == "human_direct_message" else Actor.system(),
        summary={
            "goal_changed": "goal updated",
            "compacted": "session compacted",
            "human_direct_message": "human message via telegram",
        }[item.kind],
        occurred_at=None if item.back_minutes is None else clock.now() - timedelta(minutes=item.back_minutes),
        dedupe_key=None if item.dedupe is None else DEDUPE_KEYS[item.dedupe],
    )


def record(watch: SessionWatch, item: SignalInput) -> Signal:
    return watch.record(
        item.session_key,
        agent_id=item.agent_id,
        kind=item.kind,
        actor=item.actor,
        summary=item.summary,
        occurred_at=item.occurred_at,
        dedupe_key=item.dedupe_key,
    )


def cursors(watch: SessionWatch) -> dict[CursorKey, CursorState]:
    return {c.key: c for c in watch.store.read_model().all_cursors()}


def check_cursor_expiry(
    before: dict[CursorKey, CursorState], after: dict[CursorKey, CursorState], cut: int
) -> None:
    """After a prune: no cursor older than the cut-off is left, and none updated since it was removed."""
    assert all(c.updated_at_ms >= cut for c in after.values()), "a stale cursor survived the prune"
    fresh = {key for key, c in before.items() if c.updated_at_ms >= cut}
    if len(fresh) < len(before):
        event("a prune expired a cursor")
    assert fresh <= set(after), "a cursor updated within the window was expired"


def check_against_model(watch: SessionWatch, model: Model, heads_seen: dict[SessionIdentity, int]) -> None:
    for identity in SESSIONS:
        if identity not in model.heads:
            with pytest.raises(UnknownSession):
                watch.session_status(identity.session_key, agent_id=identity.agent_id)
            heads_seen.pop(identity, None)
            continue
        head = model.heads[identity]
        status = watch.session_status(identity.session_key, agent_id=identity.agent_id)
        assert status.state_version >= heads_seen.get(identity, 0), "a head was lowered"
        heads_seen[identity] = status.state_version
        assert status.state_version == head
        kept = model.retained(identity)
        mark = model.watermarks.get(identity, 0)
        for since in sorted({0, mark - 1, mark, mark + 1, head, *kept[:1]} - {-1}):
            page = watch.session_status(identity.session_key, changes_since=since, agent_id=identity.agent_id)
            changes = page.state_changes
            assert changes is not None
            assert [c.sequence for c in changes.events] == [s for s in kept if s > since]
            assert changes.history_gap is (since < mark), "historyGap is exactly changesSince < watermark"
            if changes.history_gap:
                event("a history gap was reported")
            assert changes.earliest_available_sequence == (kept[0] if kept else head + 1 if head else 0)
    stored = watch.store.read_model()
    assert {s.sequence for log in stored.signals.values() for s in log} == set(model.signals)
    assert {i: s.pruned_through for i, s in stored.sessions.items() if s.pruned_through} == {
        i: m for i, m in model.watermarks.items() if m
    }
    assert_audit_clean(watch)  # the replay equals the stored read models, and every invariant holds


def apply(operation: Operation, watch: SessionWatch, clock: FakeClock, model: Model) -> int | None:
    """Run one operation on the store and the model; the cursor cut-off of any prune it ran."""
    match operation:
        case Record(item):
            model.record(item, record(watch, signal_input(item, clock)).sequence)
            return model.prune_if_due()
        case RecordMany(items):
            recorded = watch.record_many([signal_input(item, clock) for item in items])
            for item, signal in zip(items, recorded, strict=True):
                model.record(item, signal.sequence)
            return model.prune_if_due()
        case Advance(minutes, seconds):
            clock.advance(minutes=minutes, seconds=seconds)
            model.now_ms = to_epoch_ms(clock.now())
        case Prune(force):
            due = force or model.now_ms - model.last_prune_ms > INTERVAL_MS
            assert watch.prune(force=force).ran is due, "forced, or an interval after the last prune"
            return model.prune() if due else None
        case Sweep():
            swept = watch.sweep().prune
            assert swept is not None
            assert swept.ran, "the sweep's prune is forced"
            return model.prune()
        case Watch(watcher, target):
            identity = SESSIONS[target]
            watch.watch(WATCHERS[watcher], identity.session_key, target_agent_id=identity.agent_id)
        case Drain(watcher):
            watch.drain(WATCHERS[watcher])
        case Delete(session):
            identity = SESSIONS[session]
            watch.delete_session(identity.session_key, agent_id=identity.agent_id)
            model.delete(identity)
    return None


def run_history(url: str, history: list[Operation], max_signals: int) -> None:
    clock = FakeClock()
    with sessionwatch.open(url, clock=clock, retention=Retention(days=1, max_signals=max_signals)) as watch:
        opened = to_epoch_ms(clock.now())  # opening ran the sweep and its forced prune
        model = Model(window_ms=DAY_MS, max_signals=max_signals, now_ms=opened, last_prune_ms=opened)
        heads_seen: dict[SessionIdentity, int] = {}
        for operation in history:
            before = cursors(watch)
            cut = apply(operation, watch, clock, model)
            if cut is not None:
                check_cursor_expiry(before, cursors(watch), cut)
            check_against_model(watch, model, heads_seen)


@pytest.mark.parametrize("store_kind", STORES)
@given(history=HISTORIES, max_signals=st.integers(1, 20) | st.integers(1, 4))
def test_pruning_keeps_heads_watermarks_gaps_and_sequences_as_the_spec_rule_says(
    store_kind: str, history: list[Operation], max_signals: int
) -> None:
    with (
        tempfile.TemporaryDirectory() as directory,
        fresh_store_url(store_kind, Path(directory), reuse=True) as url,
    ):
        run_history(url, history, max_signals)
