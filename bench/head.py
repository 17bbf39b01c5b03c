"""`head`: `session_status(key)` without `changes_since` (the state version alone).

Both stores hold 50 sessions with 50 signals each (the `reconcile` mix); calls rotate over them.
Every call is timed; the figure per round is the median latency. Target (SPEC §15.1): sessionwatch's
median <= 100 us. The peer's head read (`status` without `changes_since`: one indexed lookup of the
heads row) is shown for context, and the ratio is peer time / sessionwatch time.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/head.py` finds `bench.*`

from bench.harness import (
    AGENT,
    Mode,
    Result,
    at_most_us,
    interleave,
    latency_block,
    latency_result,
    run_script,
)
from bench.reconcile import SESSIONS, loaded_stores, session_key

NAME = "head"
SIGNALS = 50 * SESSIONS
TARGET = at_most_us(100.0)


def run(mode: Mode) -> list[Result]:
    """One result: median microseconds of a head read (NORMAL; reads do not depend on it)."""
    with loaded_stores(SIGNALS) as loaded:
        peer, watch = loaded.peer, loaded.watch
        keys = [session_key(s) for s in range(SESSIONS)]
        for key in keys:
            assert watch.session_status(key).state_version == peer.status(key, AGENT)["stateVersion"]
        turn = {"peer": 0, "sw": 0}

        def peer_call() -> int:
            n = turn["peer"] = (turn["peer"] + 1) % SESSIONS
            peer.status(keys[n], AGENT)
            return 1

        def sw_call() -> int:
            n = turn["sw"] = (turn["sw"] + 1) % SESSIONS
            watch.session_status(keys[n])
            return 1

        rounds = interleave(peer_call, sw_call, mode, block=latency_block)
    return [latency_result(NAME, "normal", rounds, target=TARGET, extra={"signals": SIGNALS})]


def main() -> None:
    """Print this workload's table and write `bench/results/head.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
