"""A projection writes the cursors it made in place, and never the model it started from.

`Projection` copies the cursors' mappings on their first write (`evolve_cursors_in`), as it copies
its other views, and `implied_facts_in` copies them once for the commands of one event: what a
replay builds must equal folding one event at a time (a fresh projection each), and the model a
projection started from must stay as it was.
"""

from __future__ import annotations

import copy

from sessionwatch import Actor, SignalInput
from sessionwatch import open as open_watch
from sessionwatch.domain import watch_cursor
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.domain.watch_cursor import CursorFact, CursorKey
from sessionwatch.projections.read_model import (
    CursorsByTarget,
    Projection,
    ReadModel,
    apply_cursor_facts,
    evolve_read_model,
    implied_facts_in,
)
from sessionwatch.testing import FakeClock

TARGET = "agent:main:worker"
OTHER = "agent:main:other"
WATCHERS = ("agent:main:main", "agent:main:observer-1", "agent:main:observer-2")


def _history() -> list[DomainEvent]:
    """Watches by several watchers, notifying and quiet signals, acknowledgements and an unwatch."""
    clock = FakeClock()
    with open_watch("memory://", clock=clock, sweep_on_open=False) as watch:
        for watcher in WATCHERS:
            watch.watch(watcher, TARGET)
        watch.watch(WATCHERS[0], OTHER)
        for n in range(6):
            clock.advance(seconds=1)
            watch.record_many(
                [
                    SignalInput(
                        session_key=TARGET,
                        kind="goal_changed" if n % 2 else "human_direct_message",
                        actor=Actor.system() if n % 2 else Actor.human(),
                        summary=f"step {n}",
                        watchers=[OTHER] if n == 3 else [],
                    ),
                    SignalInput(
                        session_key=OTHER, kind="goal_changed", actor=Actor.system(), summary=f"o{n}"
                    ),
                ]
            )
            if n == 2:
                watch.acknowledge(WATCHERS[1], [TARGET])
            if n == 4:
                watch.unwatch(WATCHERS[2], TARGET)
        return list(watch.store.replay())


def test_a_replay_builds_what_one_event_at_a_time_builds() -> None:
    events = _history()
    one_by_one = ReadModel()
    for event in events:
        one_by_one = evolve_read_model(one_by_one, event)
    projection = Projection()
    for event in events:
        projection.apply(event)
    assert projection.build().cursors == one_by_one.cursors
    assert sum(len(by_watcher) for by_watcher in one_by_one.cursors.values()) >= 3  # cursors were written


def test_a_projection_never_writes_the_model_it_started_from() -> None:
    events = _history()
    half = len(events) // 2
    start = ReadModel()
    for event in events[:half]:
        start = evolve_read_model(start, event)
    kept = copy.deepcopy(dict(start.cursors))
    projection = Projection(start)
    for event in events[half:]:
        projection.apply(event)
    assert dict(start.cursors) == kept
    assert projection.build().cursors != kept  # the later events did change the cursors


def _facts_command_by_command(cursors: CursorsByTarget, event: SignalRecorded) -> list[CursorFact]:
    """The facts a signal implies, each command derived against the cursors the facts before left."""
    identity = SessionIdentity(event.session_key, event.agent_id)
    commands = watch_cursor.react(event, cursors.get(identity, {}), at_ms=event.recorded_at_ms)
    facts: list[CursorFact] = []
    for command in commands:
        key = CursorKey(command.watcher, command.target_key, command.target_agent_id)
        decided = watch_cursor.derive(command, cursors.get(key.target, {}).get(key.watcher))
        cursors = apply_cursor_facts(cursors, decided)
        facts.extend(decided)
    return facts


def test_the_facts_of_a_signal_are_each_derived_after_the_ones_before() -> None:
    model = ReadModel()
    several = 0
    for event in _history():
        if isinstance(event, SignalRecorded):
            before = copy.deepcopy(dict(model.cursors))
            facts = implied_facts_in(model.cursors, event)
            assert facts == _facts_command_by_command(model.cursors, event)
            assert dict(model.cursors) == before  # the cursors it was handed were not written
            several += len(facts) > 1
        model = evolve_read_model(model, event)
    assert several  # some signal implied facts for more than one watcher
