"""Writers in several processes on one store (SPEC §15.2, ADR-0009): 4 on PostgreSQL, 2 on a SQLite file.

Every writer records 2,000 signals: half on four targets that all writers share (watched by two
watchers, one of which is also an actor and one of which a writer drains as it goes), half on its
own session; every tenth carries a dedupe key that every writer uses too. Each signal's `run_id`
names its writer, so a writer can tell the signals it recorded from the existing ones a duplicate
dedupe key returned. Afterwards: sequences are unique and increasing per writer, nothing was lost
or invented, each dedupe key is stored once, every head is its session's highest sequence, every
cursor holds the first and the last material signal of its target, and the replay rebuilds the
stored read models (what `audit` will check).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from stores import needs_postgres, postgres_url

import sessionwatch
from sessionwatch import Actor, SessionWatch, SignalKind
from sessionwatch.domain.keys import SessionIdentity

pytestmark = pytest.mark.slow

SIGNALS_PER_WRITER = 2000
SHARED = tuple(f"agent:main:shared-{n}" for n in range(4))
WATCHER = "agent:main:watcher"
"""Watches every shared target and is sometimes the actor of a signal on one (self-suppression)."""
DRAINED = "agent:main:drained"
"""Watches every shared target; writer 0 drains its notices every 50 signals, racing the others."""
EXIT_TIMEOUT = 600.0

WRITER = r"""
import json, sys
import sessionwatch
from sessionwatch import Actor

url, index, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shared = [f"agent:main:shared-{n}" for n in range(4)]
me = f"writer-{index}"
recorded = []
with sessionwatch.open(url) as watch:
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()  # every writer starts at once
    for i in range(count):
        if i % 2 == 0:
            key = shared[(i // 2 + index) % len(shared)]
        else:
            key = f"agent:main:own-{index}"
        kind = ("human_direct_message", "goal_changed", "human_direct_message", "run_completed")[i % 4]
        actor = Actor.agent("agent:main:watcher") if i % 6 == 0 else Actor.human()
        dedupe = f"shared:{i // 10}" if i % 10 == 0 else None
        summary = "goal updated" if kind == "goal_changed" else "human message via test"
        if kind == "run_completed":
            summary = "child run completed"
        signal = watch.record(
            key, kind=kind, actor=actor, summary=summary, run_id=me, dedupe_key=dedupe
        )
        recorded.append([signal.sequence, signal.run_id, signal.dedupe_key, signal.session_key])
        if index == 0 and i % 50 == 49:
            watch.drain("agent:main:drained")
sys.stdout.write(json.dumps(recorded) + "\n")
"""


def run_writers(url: str, writers: int) -> list[list[list[object]]]:
    """Start the writers together; return what each one's `record` calls returned, in order."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, str(index), str(SIGNALS_PER_WRITER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for index in range(writers)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline() == "ready\n"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        outputs = [child.communicate(timeout=EXIT_TIMEOUT)[0] for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert [child.returncode for child in children] == [0] * writers
    return [json.loads(output) for output in outputs]


def prepare(url: str) -> None:
    """The shared targets exist and both watchers watch each of them from head 0."""
    with sessionwatch.open(url) as watch:
        for target in SHARED:
            watch.upsert_session(target)
            assert watch.watch(WATCHER, target) is True
            assert watch.watch(DRAINED, target) is True


def check(watch: SessionWatch, returned: list[list[list[object]]]) -> None:
    model = watch.store.read_model()
    stored = {s.sequence: s for log in model.signals.values() for s in log}

    # Sequences: each writer's own signals in strictly increasing order, no two writers share one,
    # and together they are exactly the stored signals (none lost, none invented).
    own: list[int] = []
    for index, calls in enumerate(returned):
        mine = [int(str(seq)) for seq, run, _, _ in calls if run == f"writer-{index}"]
        assert mine == sorted(set(mine))
        own.extend(mine)
    assert len(own) == len(set(own))
    assert set(own) == set(stored)

    # Dedupe keys: stored once, and every writer got that one signal back.
    by_key: dict[str, set[int]] = defaultdict(set)
    for calls in returned:
        for seq, _, dedupe, _ in calls:
            if dedupe is not None:
                by_key[str(dedupe)].add(int(str(seq)))
    stored_keys = [s.dedupe_key for s in stored.values() if s.dedupe_key is not None]
    assert len(stored_keys) == len(set(stored_keys)) == len(by_key) == SIGNALS_PER_WRITER // 10
    assert all(len(sequences) == 1 for sequences in by_key.values())
    assert {k: next(iter(v)) for k, v in by_key.items()} == {k: seq for k, (_, seq) in model.dedupe.items()}

    # Heads: every session's head is its highest sequence.
    for state in watch.store.sessions():
        log = model.signals.get(state.identity, ())
        assert state.head == (log[-1].sequence if log else 0)

    # Cursors: M is the target's last material signal not caused by the watcher; the undrained
    # watcher's N is its first one (the notice froze there); the drained one is pending exactly
    # while M > L.
    for target in SHARED:
        log = model.signals[SessionIdentity(target, "main")]
        for watcher in (WATCHER, DRAINED):
            material = [
                s.sequence
                for s in log
                if s.kind in (SignalKind.HUMAN_DIRECT_MESSAGE, SignalKind.GOAL_CHANGED)
                and s.actor_id != watcher
            ]
            cursor = watch.cursor(watcher, target)
            assert cursor is not None
            assert cursor.material == material[-1]
            if watcher == WATCHER:
                assert (cursor.last_seen, cursor.notified) == (0, material[0])
            else:
                assert cursor.last_seen <= cursor.notified <= cursor.material
                assert (cursor.notified > cursor.last_seen) == (cursor.material > cursor.last_seen)

    assert watch.rebuild_read_model() == model
    # The counter never went back: the next signal follows the highest one any writer recorded.
    after = watch.record(SHARED[0], kind=SignalKind.ADOPTED, actor=Actor.system(), summary="session adopted")
    assert after.sequence == max(own) + 1


@pytest.fixture
def shared_postgres() -> Iterator[str]:
    with postgres_url("sw_multiprocess", durable=True) as url:
        yield url


@needs_postgres
def test_four_processes_writing_one_postgresql_schema_lose_and_duplicate_nothing(
    shared_postgres: str,
) -> None:
    prepare(shared_postgres)
    returned = run_writers(shared_postgres, 4)
    with sessionwatch.open(shared_postgres, sweep_on_open=False) as watch:
        check(watch, returned)


def test_two_processes_writing_one_sqlite_file_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    prepare(url)
    returned = run_writers(url, 2)
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        check(watch, returned)
