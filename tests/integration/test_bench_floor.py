"""The benchmark's floor writes with sessionwatch's own SQL: it must keep up with the schema.

`bench/floor.py` records through the SQLite statements of the store (the floor the concurrent
workload is measured against); a statement that gains a parameter breaks it, which only a bench run
would otherwise show. One floor write, checked as the workload checks it.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root holds `bench`

from bench.floor import FloorStore, floor_draft, floor_set_up
from bench.threads import target_key


def test_a_floor_write_moves_the_watched_sessions_head_and_its_watchers_material(tmp_path: Path) -> None:
    keys = [target_key(0), target_key(1)]
    store = FloorStore(tmp_path / "sessionwatch.db", "normal", floor_set_up(tmp_path, "normal", keys))
    try:
        recorded = []
        for key in keys:  # one draft per write, as the workload's workers do
            with store.write() as tx:
                recorded.extend(tx.record([floor_draft(key, datetime.now(UTC))]))
        assert [event.session_key for event in recorded] == keys
        store.check()  # each head and its watcher's material is the newest signal
        assert sorted(store.last.values()) == [event.sequence for event in recorded]
    finally:
        store.close()
