"""`record`: one `human_direct_message` by a human on a target with one watcher, steady state.

sessionwatch: the strict `record(...)` on a target watched by `agent:main:main` through `watch()`
(a registered cursor: the strict `record` passes no producer watchers, so without it the target
would have no watcher at all and the material update would touch nothing); the watcher is also the
target's spawn-edge parent (`upsert_session(target, spawned_by=...)`). Peer: one transaction per
signal on a target with one registered cursor row. Both sides move that one cursor on every signal.
Ratio: sessionwatch ops/s / peer ops/s.
Targets (SPEC §15.1): >= 0.35x at NORMAL, >= 0.6x at FULL.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/record.py` finds `bench.*`

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
from sessionwatch import Actor, SignalKind

NAME = "record"
TARGETS: dict[Synchronous, Target] = {"normal": at_least(0.35), "full": at_least(0.6)}


def run_setting(mode: Mode, setting: Synchronous) -> Result:
    """Interleaved rounds of single-signal records on one durability setting."""
    with fresh_dir("peer") as peer_dir, fresh_dir("sw") as sw_dir:
        peer = PeerStore(peer_dir / "peer.db", synchronous=setting)
        peer.watch(WATCHER, TARGET, AGENT)
        with sessionwatch_store(sw_dir, setting) as watch:
            watch.upsert_session(TARGET, spawned_by=WATCHER)
            assert watch.watch(WATCHER, TARGET), "the watcher must be registered"
            human = Actor.human()
            kind = SignalKind.HUMAN_DIRECT_MESSAGE

            def peer_call() -> int:
                peer.record(TARGET, agent_id=AGENT, kind=kind.value, actor_type="human", summary=SUMMARY)
                return 1

            def sw_call() -> int:
                watch.record(TARGET, kind=kind, actor=human, summary=SUMMARY)
                return 1

            rounds = interleave(peer_call, sw_call, mode)
            peer_head = peer.head(TARGET, AGENT)
            sw_head = watch.session_status(TARGET).state_version
            cursor = watch.cursor(WATCHER, TARGET)
            assert cursor is not None, "the watcher must hold a cursor"
            assert cursor.material == sw_head, "every signal must move the watcher's cursor"
        peer.close()
    return throughput_result(
        NAME,
        setting,
        "ops/s",
        rounds,
        target=TARGETS[setting],
        extra={"peer_head": peer_head, "sw_head": sw_head},
    )


def run(mode: Mode) -> list[Result]:
    """Every durability setting of the mode."""
    return [run_setting(mode, setting) for setting in mode.settings]


def main() -> None:
    """Print this workload's table and write `bench/results/record.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
