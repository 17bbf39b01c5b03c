"""The SQLite store builds a `changesSince` page as one JSON array (ADR-0015): it answers exactly as the fold.

Every answer is compared with `status_as_of`'s fold over the same signals (the reference semantics),
including what the JSON path treats specially: payloads cut to their public keys (and dropped when
none is left), and display times up to 1970-08-20, written as ISO text rather than as epoch ms.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import sessionwatch
from sessionwatch import Actor, SessionWatch
from sessionwatch.domain.signals import from_epoch_ms
from sessionwatch.testing import FakeClock

KEY = "agent:main:worker"


@pytest.fixture
def watch(tmp_path: Path, clock: FakeClock) -> SessionWatch:
    opened = sessionwatch.open(f"sqlite:///{tmp_path / 'state.db'}", clock=clock)
    opened.record(
        KEY, kind="goal_changed", actor=Actor.system(), summary="goal updated", payload={"status": "active"}
    )
    opened.record_spawn(requester_key="agent:main:main", child_key=KEY, child_run_id="r1")
    opened.record_run_terminal(child_key=KEY, run_id="r1", requester_key="agent:main:main", outcome="timeout")
    opened.record(
        KEY,
        kind="human_direct_message",
        actor=Actor.human(),
        summary="human message via telegram",
        payload={"channel": "telegram", "turns": 3},
        run_id="run-7",
    )
    return opened


def folded(watch: SessionWatch, since: int) -> dict[str, object]:
    return watch.status_as_of(KEY, watch.store.last_sequence(), changes_since=since).to_json()


def test_the_json_page_answers_exactly_as_the_fold(watch: SessionWatch) -> None:
    for since in range(5):
        assert watch.session_status(KEY, changes_since=since).to_json() == folded(watch, since)
    events = watch.session_status(KEY, changes_since=0).to_json()["stateChanges"]["events"]
    assert [e.get("payload") for e in events] == [
        None,
        None,
        {"outcome": "timeout"},
        {"channel": "telegram", "turns": 3},
    ]


def test_a_truncated_page_keeps_its_order_and_flag(watch: SessionWatch) -> None:
    status = watch.session_status(KEY, changes_since=0, limit=2)
    assert status.state_changes is not None
    assert [e.sequence for e in status.state_changes.events] == [1, 2]
    assert status.state_changes.truncated
    assert status.to_json() == watch.status_as_of(KEY, 4, changes_since=0, limit=2).to_json()


@pytest.mark.parametrize("occurred_ms", [0, 123, 19_999_999_999, 20_000_000_000, -86_400_000])
def test_early_display_times_come_back_exact(watch: SessionWatch, tmp_path: Path, occurred_ms: int) -> None:
    with sqlite3.connect(tmp_path / "state.db") as raw:
        raw.execute("UPDATE sw_signals SET occurred_at_ms = ? WHERE sequence = 1", (occurred_ms,))
    status = watch.session_status(KEY, changes_since=0)
    assert status.state_changes is not None
    assert status.state_changes.events[0].occurred_at == from_epoch_ms(occurred_ms)


def test_a_status_read_holds_no_snapshot_once_answered(watch: SessionWatch, tmp_path: Path) -> None:
    # Each read is one statement on a pooled connection; a statement left open would pin the WAL.
    for since in (None, 0, 2):
        watch.session_status(KEY, changes_since=since)
        watch.record(KEY, kind="goal_changed", actor=Actor.system(), summary="goal updated")
        with sqlite3.connect(tmp_path / "state.db") as other:
            busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0, "a reader still holds a snapshot: the WAL cannot be truncated"
