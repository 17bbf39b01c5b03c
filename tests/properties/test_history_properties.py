"""Export/import properties (SPEC §14, §16): any history survives a move to another store exactly.

Each example plays a drawn history (records, batches, upserts, resets, deletes, clock advances from
`tests/strategies.py`, plus watches, unwatches, drains, acknowledgements, sweeps, prunes under a
small cap, links and unlinks) on one store, exports it, imports it into a fresh store of another
kind, and compares everything a host can read back, the read models and the bytes of a second
export. The same history played on two stores must also export the same bytes. An export cut at
any line boundary (any proper prefix of its lines) is refused, and writes nothing.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from stores import fresh_store_url, needs_postgres
from strategies import (
    AdvanceOp,
    DeleteOp,
    RecordManyOp,
    RecordOp,
    ResetOp,
    UpsertOp,
    operations,
)

import sessionwatch
from sessionwatch import Actor, InvalidSignal, Retention, SessionWatch, SignalInput, UnknownSession
from sessionwatch.adapters.history.jsonl import HistoryError, export_history, import_history
from sessionwatch.adapters.stores.port import SignalStore
from sessionwatch.projections.read_model import fold
from sessionwatch.testing import FakeClock, SessionRef, session_refs

_TMPFS = Path("/dev/shm")  # noqa: S108 - only a parent: TemporaryDirectory makes a private 0700 dir in it
SCRATCH = _TMPFS if _TMPFS.is_dir() else None
EXAMPLES = settings(max_examples=25)
WATCHERS = ("agent:main:main", "agent:main:coordinator", "agent:ops:coordinator", "agent:main:subagent:child")
"""Watchers; two are also `TARGETS`, so resets and deletes of watchers happen."""
TARGETS = (
    SessionRef(key="agent:main:main", agent_id=None, owner="main"),
    SessionRef(key="agent:main:subagent:child", agent_id=None, owner="main"),
    SessionRef(key="global", agent_id="main", owner="main"),
    SessionRef(key="global", agent_id="ops", owner="ops"),
)
"""The sessions most notice steps land on, so watches meet signals (the strategies' hot sessions)."""


@dataclass(frozen=True)
class Watch:
    watcher: str
    target: SessionRef


@dataclass(frozen=True)
class Goal:
    """A notifying signal by the system: it reaches every watcher of the target."""

    target: SessionRef


@dataclass(frozen=True)
class Unwatch:
    watcher: str
    target: SessionRef


@dataclass(frozen=True)
class Drain:
    watcher: str


@dataclass(frozen=True)
class Acknowledge:
    watcher: str
    target: SessionRef


@dataclass(frozen=True)
class Sweep:
    """Run the restart sweep."""


@dataclass(frozen=True)
class Prune:
    """Prune now (forced)."""


@dataclass(frozen=True)
class Link:
    ref: SessionRef
    thread: str
    offset: int


@dataclass(frozen=True)
class Unlink:
    ref: SessionRef


Step: TypeAlias = Any  # a strategies.SessionOp or one of the steps above
_WATCHERS = st.sampled_from(WATCHERS)
_TARGETS = st.sampled_from(TARGETS)
_CHOICES: list[st.SearchStrategy[Step]] = [
    *[operations()] * 5,
    *[st.builds(Goal, _TARGETS)] * 4,
    *[st.builds(Watch, _WATCHERS, _TARGETS)] * 3,
    st.builds(Unwatch, _WATCHERS, _TARGETS),
    st.builds(Drain, _WATCHERS),
    st.builds(Acknowledge, _WATCHERS, _TARGETS),
    st.just(Sweep()),
    st.just(Prune()),
    st.builds(Link, session_refs(), st.sampled_from(("t-1", "t-2")), st.integers(0, 3)),
    st.builds(Unlink, session_refs()),
]
_STEPS: st.SearchStrategy[Step] = st.sampled_from(_CHOICES).flatmap(lambda choice: choice)
HISTORIES = st.lists(_STEPS, min_size=5, max_size=30)


def signal_args(item: SignalInput) -> dict[str, Any]:
    return {
        "agent_id": item.agent_id,
        "kind": item.kind,
        "actor": item.actor,
        "summary": item.summary,
        "payload": item.payload,
        "run_id": item.run_id,
        "occurred_at": item.occurred_at,
        "dedupe_key": item.dedupe_key,
    }


def play(watch: SessionWatch, clock: FakeClock, step: Step) -> None:
    """One step; refusals (an invalid batch, an unknown session) are part of the history too."""
    with contextlib.suppress(InvalidSignal, UnknownSession):
        match step:
            case RecordOp(item=item):
                watch.record(item.session_key, **signal_args(item))
            case RecordManyOp(items=items, poison_at=poison):
                batch = list(items)
                if poison is not None:
                    batch[poison] = batch[poison].model_copy(update={"summary": "two\nlines"})
                watch.record_many(batch)
            case UpsertOp(ref=ref):
                watch.upsert_session(
                    ref.key,
                    agent_id=ref.agent_id,
                    kind=step.kind,
                    session_id=step.session_id,
                    spawned_by=step.spawned_by,
                    parent_session_key=step.parent_session_key,
                )
            case ResetOp(ref=ref):
                watch.reset_session(ref.key, agent_id=ref.agent_id)
            case DeleteOp(ref=ref):
                watch.delete_session(ref.key, agent_id=ref.agent_id)
            case AdvanceOp(minutes=minutes):
                clock.advance(minutes=minutes)
            case _:
                play_notice_step(watch, step)


def play_notice_step(watch: SessionWatch, step: Step) -> None:
    match step:
        case Goal(target=ref):
            watch.record(
                ref.key, agent_id=ref.agent_id, kind="goal_changed", actor=Actor.system(), summary="goal"
            )
        case Watch(watcher=watcher, target=ref):
            watch.watch(watcher, ref.key, target_agent_id=ref.agent_id or ref.owner)
        case Unwatch(watcher=watcher, target=ref):
            watch.unwatch(watcher, ref.key, target_agent_id=ref.agent_id or ref.owner)
        case Drain(watcher=watcher):
            watch.drain(watcher)
        case Acknowledge(watcher=watcher, target=ref):
            watch.acknowledge(watcher, [ref.key.strip()])
        case Sweep():
            watch.sweep()
        case Prune():
            watch.prune()
        case Link(ref=ref, thread=thread, offset=offset):
            watch.link_upstream(
                ref.key,
                agent_id=ref.agent_id,
                catalog_id="claude-code",
                host_id="laptop",
                thread_id=thread,
                upstream_kind="claude-jsonl",
                upstream_ref=f"/transcripts/{thread}.jsonl",
                marker={"offset": offset},
            )
        case Unlink(ref=ref):
            watch.unlink_upstream(ref.key, agent_id=ref.agent_id)
        case _:
            raise AssertionError(f"unknown step {step!r}")


@contextmanager
def fresh_watch(kind: str, clock: FakeClock, max_signals: int) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a brand-new store (never a reused PostgreSQL schema: those keep link rows)."""
    retention = Retention(days=1, max_signals=max_signals)
    with (
        tempfile.TemporaryDirectory(dir=SCRATCH) as directory,
        fresh_store_url(kind, Path(directory)) as url,
        sessionwatch.open(url, clock=clock, retention=retention, sweep_on_open=False) as watch,
    ):
        yield watch


def export_text(store: SignalStore) -> str:
    out = io.StringIO()
    export_history(store, out)
    return out.getvalue()


def observe(watch: SessionWatch, since: list[int]) -> list[object]:
    """Everything a host reads back: sessions, every status, cursors, pending notices, links."""
    model = watch.store.read_model()
    seen: list[object] = [[row.to_json() for row in watch.sessions_list()]]
    for row in watch.sessions_list():
        for changes_since in (None, 0, *since):
            status = watch.session_status(row.session_key, changes_since=changes_since, agent_id=row.agent_id)
            seen.append(status.to_json())
        seen.append(watch.upstream_link(row.session_key, agent_id=row.agent_id))
    seen.extend(
        watch.cursor(c.watcher, c.target_key, target_agent_id=c.target_agent_id) for c in model.all_cursors()
    )
    seen.extend(watch.pending_notices(watcher) for watcher in WATCHERS)
    seen.append(watch.store.upstream_links(watched_only=False))
    seen.append(watch.store.last_sequence())
    return seen


def next_signal(watch: SessionWatch) -> int:
    return watch.record(
        "agent:main:main", kind="goal_changed", actor=Actor.system(), summary="goal updated"
    ).sequence


def describe(watch: SessionWatch, exported: str) -> None:
    """Label the example, so `--hypothesis-show-statistics` shows what the histories exercised."""
    model = watch.store.read_model()
    if '"type":"store.pruned.v5"' in exported:
        event("a prune checkpoint, events compacted away")
    if any(c.pending for c in model.all_cursors()):
        event("pending notices")
    if any(c.material > c.notified > c.last_seen for c in model.all_cursors()):
        event("a follow-up is due after the pending notice")
    if any(not link.active for link in model.links.values()):
        event("an unlinked tombstone")
    if model.links:
        event("upstream links")


PAIRS = (
    pytest.param("memory", "sqlite", id="memory-to-sqlite"),
    pytest.param("sqlite", "memory", id="sqlite-to-memory"),
    pytest.param("postgres", "memory", id="postgres-to-memory", marks=needs_postgres),
    pytest.param("memory", "postgres", id="memory-to-postgres", marks=needs_postgres),
)


@pytest.mark.parametrize(("source_kind", "target_kind"), PAIRS)
@EXAMPLES
@given(history=HISTORIES, max_signals=st.integers(1, 8), since=st.lists(st.integers(0, 40), max_size=2))
def test_an_imported_history_answers_like_its_source_and_exports_the_same_bytes(
    source_kind: str, target_kind: str, history: list[Step], max_signals: int, since: list[int]
) -> None:
    source_clock = FakeClock()
    with fresh_watch(source_kind, source_clock, max_signals) as source:
        for step in history:
            play(source, source_clock, step)
        exported = export_text(source.store)
        describe(source, exported)
        target_clock = FakeClock(source_clock.now())
        with fresh_watch(target_kind, target_clock, max_signals) as target:
            import_history(target.store, exported.splitlines())
            assert observe(target, since) == observe(source, since)
            assert target.store.read_model() == source.store.read_model()
            assert target.store.read_model() == fold(target.store.replay())
            assert export_text(target.store) == exported
            counter = source.store.last_sequence()
            assert next_signal(target) == next_signal(source) == counter + 1


SAME_HISTORY_PAIRS = (
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=needs_postgres),
)


@pytest.mark.parametrize("store_kind", SAME_HISTORY_PAIRS)
@EXAMPLES
@given(history=HISTORIES, max_signals=st.integers(1, 8))
def test_the_same_history_exports_the_same_bytes_from_every_store(
    store_kind: str, history: list[Step], max_signals: int
) -> None:
    memory_clock, other_clock = FakeClock(), FakeClock()
    with (
        fresh_watch("memory", memory_clock, max_signals) as memory,
        fresh_watch(store_kind, other_clock, max_signals) as other,
    ):
        for step in history:
            play(memory, memory_clock, step)
            play(other, other_clock, step)
        assert export_text(other.store) == export_text(memory.store)


CUT_TARGETS = (
    pytest.param("memory", id="memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=needs_postgres),
)


@pytest.mark.parametrize("target_kind", CUT_TARGETS)
@EXAMPLES
@given(history=HISTORIES, max_signals=st.integers(1, 8), data=st.data())
def test_an_export_cut_at_any_line_boundary_is_refused_and_writes_nothing(
    target_kind: str, history: list[Step], max_signals: int, data: st.DataObject
) -> None:
    source_clock = FakeClock()
    with fresh_watch("memory", source_clock, max_signals) as source:
        for step in history:
            play(source, source_clock, step)
        lines = export_text(source.store).splitlines(keepends=True)
    kept = data.draw(st.integers(0, len(lines) - 1), label="lines kept")
    with fresh_watch(target_kind, FakeClock(source_clock.now()), max_signals) as target:
        empty = export_text(target.store)
        with pytest.raises(HistoryError, match=r"^(line 1: no header|no trailer): "):
            import_history(target.store, lines[:kept])
        assert target.store.stored_event_count() == target.store.last_sequence() == 0
        assert export_text(target.store) == empty
