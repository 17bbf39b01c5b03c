"""`reconcile`: `session_status(key, changes_since=v)` returning a full page of 200 events.

Both stores hold the same 50,000 signals over 50 sessions, interleaved round-robin (so a session's
sequences are sparse, as in production), with a realistic mix of kinds, actors, run ids and
payloads. sessionwatch is loaded with `record_many` in chunks of 1,000, the peer with `executemany`
in one transaction; both WAL files are then checkpointed. `v` is the sequence of each session's
500th signal, so 500 events follow it: a full page of 200, `truncated: true`. Calls rotate over the
50 sessions. Before timing, the two answers are checked equal as §7.1 JSON.

Ratio: sessionwatch calls/s / peer calls/s (the peer's whole read path: head and watermark, page of
limit + 1 rows, earliest retained sequence, row mapping). Target (SPEC §15.1): >= 0.5x.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/reconcile.py` finds `bench.*`

from bench.harness import (
    AGENT,
    Mode,
    Result,
    at_least,
    checkpoint,
    fresh_dir,
    interleave,
    now_ms,
    parse_mode,
    print_table,
    sessionwatch_store,
    throughput_result,
    write_results,
)
from bench.peer import PeerSignal, PeerStore
from sessionwatch import Actor, SessionWatch, SignalInput

NAME = "reconcile"
SIGNALS = 50_000
SESSIONS = 50
CHUNK = 1_000
PAGE = 200
SINCE_INDEX = 499  # v = the sequence of each session's 500th signal: 500 events follow
TARGET = at_least(0.5)
MANAGER = "agent:main:main"


def session_key(index: int) -> str:
    """The key of the benchmark's `index`-th session."""
    return f"agent:{AGENT}:subagent:worker-{index:02d}"


def signal(i: int, base_ms: int) -> PeerSignal:
    """The `i`-th signal of the load: one of a fixed mix of kinds, actors and payloads."""
    key = session_key(i % SESSIONS)
    occurred = base_ms + i
    match i % 20:
        case 0:
            return PeerSignal(
                key,
                AGENT,
                "goal_changed",
                "agent",
                "goal updated",
                actor_id=MANAGER,
                occurred_at=occurred,
                payload={"status": "active"},
            )
        case 1:
            return PeerSignal(
                key,
                AGENT,
                "run_failed",
                "system",
                "child run failed",
                run_id=f"run-{i}",
                occurred_at=occurred,
                payload={"outcome": "error"},
            )
        case 2:
            return PeerSignal(
                key,
                AGENT,
                "run_completed",
                "system",
                "child run completed",
                run_id=f"run-{i}",
                occurred_at=occurred,
            )
        case 3:
            return PeerSignal(
                key,
                AGENT,
                "compacted",
                "system",
                "session compacted",
                occurred_at=occurred,
                dedupe_key=f"compacted:op-{i}",
            )
        case 4 | 5:
            return PeerSignal(
                key,
                AGENT,
                "human_direct_message",
                "human",
                "human message via telegram",
                occurred_at=occurred,
                payload={"turns": 2, "channel": "telegram"},
            )
        case _:
            return PeerSignal(
                key,
                AGENT,
                "human_direct_message",
                "human",
                "human message via telegram",
                occurred_at=occurred,
            )


def as_input(s: PeerSignal) -> SignalInput:
    """The same signal as a sessionwatch `SignalInput`."""
    actor = Actor(actor_type=s.actor_type, actor_id=s.actor_id)
    return SignalInput(
        session_key=s.session_key,
        kind=s.kind,
        actor=actor,
        summary=s.summary,
        payload=s.payload,
        run_id=s.run_id,
        occurred_at=s.occurred_at,
        dedupe_key=s.dedupe_key,
    )


@dataclass(frozen=True)
class Loaded:
    """Both stores holding the same history, and how long each load took."""

    peer: PeerStore
    watch: SessionWatch
    peer_load_seconds: float
    sw_load_seconds: float


@contextmanager
def loaded_stores(signals: int = SIGNALS) -> Iterator[Loaded]:
    """A peer and a sessionwatch store (NORMAL) loaded with the same `signals` signals."""
    base = now_ms() - signals - 60_000  # inside sessionwatch's [now - 24 h, now] window
    history = [signal(i, base) for i in range(signals)]
    with fresh_dir("peer") as peer_dir, fresh_dir("sw") as sw_dir:
        peer = PeerStore(peer_dir / "peer.db", synchronous="normal")
        start = time.perf_counter()
        peer.bulk_load(history)
        peer_seconds = time.perf_counter() - start
        checkpoint(peer_dir / "peer.db")
        with sessionwatch_store(sw_dir, "normal") as watch:
            inputs = [as_input(s) for s in history]
            start = time.perf_counter()
            for offset in range(0, len(inputs), CHUNK):
                watch.record_many(inputs[offset : offset + CHUNK])
            sw_seconds = time.perf_counter() - start
            checkpoint(sw_dir / "sessionwatch.db")
            try:
                yield Loaded(peer, watch, peer_seconds, sw_seconds)
            finally:
                peer.close()


def since(session: int) -> int:
    """`v` for a session: the sequence of its 500th signal (sequences are i + 1, round-robin)."""
    return SINCE_INDEX * SESSIONS + session + 1


def check_same_answer(loaded: Loaded) -> None:
    """Both stores must give the same §7.1 JSON, a full truncated page, before anything is timed."""
    for session in (0, SESSIONS // 2, SESSIONS - 1):
        key, v = session_key(session), since(session)
        expected = loaded.peer.status(key, AGENT, v, PAGE)
        actual = loaded.watch.session_status(key, changes_since=v, limit=PAGE).to_json()
        assert actual == expected, f"{key}: sessionwatch and the peer disagree"
        changes = expected["stateChanges"]
        assert len(changes["events"]) == PAGE, "the page must be full"
        assert changes["truncated"], "more events must follow the page"


def run(mode: Mode) -> list[Result]:
    """One result: calls/s of the full-page reconciliation (NORMAL; reads do not depend on it)."""
    with loaded_stores() as loaded:
        check_same_answer(loaded)
        peer, watch = loaded.peer, loaded.watch
        keys = [session_key(s) for s in range(SESSIONS)]
        sinces = [since(s) for s in range(SESSIONS)]
        turn = {"peer": 0, "sw": 0}

        def peer_call() -> int:
            n = turn["peer"] = (turn["peer"] + 1) % SESSIONS
            peer.status(keys[n], AGENT, sinces[n], PAGE)
            return 1

        def sw_call() -> int:
            n = turn["sw"] = (turn["sw"] + 1) % SESSIONS
            watch.session_status(keys[n], changes_since=sinces[n], limit=PAGE)
            return 1

        rounds = interleave(peer_call, sw_call, mode)
        extra = {
            "signals": SIGNALS,
            "sessions": SESSIONS,
            "page": PAGE,
            "peer_load_seconds": loaded.peer_load_seconds,
            "sw_load_seconds": loaded.sw_load_seconds,
            "sw_load_signals_per_second": SIGNALS / loaded.sw_load_seconds,
        }
    return [throughput_result(NAME, "normal", "calls/s", rounds, target=TARGET, extra=extra)]


def main() -> None:
    """Print this workload's table and write `bench/results/reconcile.json`."""
    mode = parse_mode(__doc__ or NAME)
    results = run(mode)
    print_table(results)
    for result in results:
        print(
            f"(load: peer {result.extra['peer_load_seconds']:.2f} s, "
            f"sessionwatch {result.extra['sw_load_seconds']:.2f} s for {SIGNALS:,} signals)"
        )
    write_results(NAME, results, mode)


if __name__ == "__main__":
    main()
