"""The bounded-memory audit reports exactly what the whole-model audit reports.

A history with watches, dedupe keys, a prune checkpoint, a deleted session and signals after them
is recorded in memory; its stored read model is then damaged in one way per case, and both audits
(`projections.audit_stream.audit` over the snapshot's pages, `audit.replay` + `audit.compare` over
whole models) must give the same violations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

import sessionwatch
from sessionwatch import Actor, Retention, SignalInput
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.projections.audit import compare, replay
from sessionwatch.projections.audit_stream import audit as stream_audit
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
WORKERS = tuple(f"agent:main:subagent:w{n}" for n in range(4))


def _history() -> MemorySignalStore:
    clock = FakeClock()
    with sessionwatch.open("memory://", clock=clock, retention=Retention(max_signals=120)) as watch:
        for worker in WORKERS[:2]:
            watch.watch(MANAGER, worker)
        for batch in range(4):
            clock.advance(minutes=5)
            watch.record_many(
                [
                    SignalInput(
                        session_key=WORKERS[i % 4],
                        kind="human_direct_message" if i % 5 else "compacted",
                        actor=Actor.human() if i % 5 else Actor.system(),
                        summary="human message" if i % 5 else "session compacted",
                        dedupe_key=None if i % 5 else f"op-{batch}-{i}",
                    )
                    for i in range(60)
                ]
            )
            watch.prune(force=True)
        watch.delete_session(WORKERS[3])
        watch.record_human_message(WORKERS[1], channel="telegram")
        store = watch.store
        assert isinstance(store, MemorySignalStore)
        return store


def _logs(model: ReadModel, change: Callable[[list[SignalRecorded]], None], worker: int) -> ReadModel:
    identity = SessionIdentity(WORKERS[worker], "main")
    log = list(model.signals[identity])
    change(log)
    return replace(model, signals={**model.signals, identity: tuple(log)})


def _first_popped(log: list[SignalRecorded]) -> None:
    log.pop(0)


def _summary_changed(log: list[SignalRecorded]) -> None:
    log[1] = log[1].model_copy(update={"summary": "x\ny"})


def _moved(model: ReadModel) -> ReadModel:
    a, b = SessionIdentity(WORKERS[0], "main"), SessionIdentity(WORKERS[1], "main")
    moved = model.signals[a][-1]
    return replace(
        model,
        signals={
            **model.signals,
            a: model.signals[a][:-1],
            b: tuple(sorted((*model.signals[b], moved), key=lambda s: s.sequence)),
        },
    )


def _head_lowered(model: ReadModel) -> ReadModel:
    identity = SessionIdentity(WORKERS[2], "main")
    return replace(model, sessions={**model.sessions, identity: replace(model.sessions[identity], head=1)})


def _cursor_changed(model: ReadModel) -> ReadModel:
    target = SessionIdentity(WORKERS[0], "main")
    by_watcher = model.cursors[target]
    cursor = by_watcher[MANAGER].model_copy(update={"notified": by_watcher[MANAGER].material})
    return replace(model, cursors={**model.cursors, target: {**by_watcher, MANAGER: cursor}})


def _dedupe_dropped(model: ReadModel) -> ReadModel:
    return replace(model, dedupe=dict(list(model.dedupe.items())[1:]))


DAMAGE: dict[str, Callable[[ReadModel], ReadModel]] = {
    "none": lambda model: model,
    "a signal missing": lambda model: _logs(model, _first_popped, 0),
    "a signal changed": lambda model: _logs(model, _summary_changed, 1),
    "a signal on another session": _moved,
    "a head below its signals": _head_lowered,
    "a cursor changed": _cursor_changed,
    "a dedupe key dropped": _dedupe_dropped,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_the_streamed_audit_matches_the_whole_one(damage: Callable[[ReadModel], ReadModel]) -> None:
    store = _history()
    store.model = damage(store.model)
    with store.snapshot() as snapshot:
        whole = replay(snapshot.replay())
        expected = [*whole.violations, *compare(snapshot.read_model(), whole.rebuilt)]
        streamed = stream_audit(
            snapshot.replay, snapshot.tables(), snapshot.signals(), stored_dedupe=snapshot.dedupe()
        )
    assert streamed is not None
    violations, replayed = streamed
    assert replayed == whole.events_replayed
    assert sorted((v.kind, v.detail) for v in violations) == sorted((v.kind, v.detail) for v in expected)
    assert bool(expected) == (damage is not DAMAGE["none"]), [v.kind for v in expected]
