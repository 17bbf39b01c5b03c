"""`batch`: `record_many` of 100 signals per call vs the peer's 100 per-signal transactions.

The signal is the one of `record` (a `human_direct_message` by a human on a target with one
registered watcher: `watch()` for sessionwatch, a cursor row for the peer).
Ratio: sessionwatch signals/s / peer signals/s. Targets (SPEC §15.1): >= 3x at NORMAL, >= 5x at FULL.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/batch.py` finds `bench.*`

from bench.harness import (
    AGENT,
    SUMMARY,
    TARGET,
    WATCHER,
    Mode,
    Result,
    Synchronous,
    Target,
    at_least,
    fresh_dir,
    interleave,
    run_script,
    sessionwatch_store,
    throughput_result,
)
from bench.peer import PeerStore
from sessionwatch import Actor, SignalInput, SignalKind

NAME = "batch"
BATCH = 100
TARGETS: dict[Synchronous, Target] = {"normal": at_least(3.0), "full": at_least(5.0)}


def run_setting(mode: Mode, setting: Synchronous) -> Result:
    """Interleaved rounds of 100-signal batches on one durability setting."""
    with fresh_dir("peer") as peer_dir, fresh_dir("sw") as sw_dir:
        peer = PeerStore(peer_dir / "peer.db", synchronous=setting)
        peer.watch(WATCHER, TARGET, AGENT)
        with sessionwatch_store(sw_dir, setting) as watch:
            watch.upsert_session(TARGET, spawned_by=WATCHER)
            assert watch.watch(WATCHER, TARGET), "the watcher must be registered"
            kind = SignalKind.HUMAN_DIRECT_MESSAGE
            inputs = [
                SignalInput(session_key=TARGET, kind=kind, actor=Actor.human(), summary=SUMMARY)
                for _ in range(BATCH)
            ]

            def peer_call() -> int:
                for _ in range(BATCH):
                    peer.record(TARGET, agent_id=AGENT, kind=kind.value, actor_type="human", summary=SUMMARY)
                return BATCH

            def sw_call() -> int:
                return len(watch.record_many(inputs))

            rounds = interleave(peer_call, sw_call, mode)
            cursor = watch.cursor(WATCHER, TARGET)
            assert cursor is not None, "the watcher must hold a cursor"
            assert cursor.material == watch.session_status(TARGET).state_version, "the cursor must move"
        peer.close()
    extra = {"batch": BATCH}
    return throughput_result(NAME, setting, "signals/s", rounds, target=TARGETS[setting], extra=extra)


def run(mode: Mode) -> list[Result]:
    """Every durability setting of the mode."""
    return [run_setting(mode, setting) for setting in mode.settings]


def main() -> None:
    """Print this workload's table and write `bench/results/batch.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
