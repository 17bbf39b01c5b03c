"""`audit`: `audit()` over the benchmark store, in events replayed per second (SPEC §15.1).

The store is `reconcile`'s: 50,000 `human_direct_message` signals over 50 sessions, loaded with
`record_many` (NORMAL). Each round runs one whole `audit()` (replay every stored event, rebuild
every read model, read the stored ones, diff, check the invariants) and takes
`AuditReport.events_replayed / seconds`; the figure is the median over the rounds, after one
warm-up audit. Every audit must be clean and replay every stored event.

Target (SPEC §15.1): sessionwatch's median >= 30,000 events/s. Context, not a target: the peer
reading its whole state (every head, cursor and signal, each signal mapped to its §7.1 event) in
rows per second; the peer has no audit, so the ratio is only a scale (sw events/s / peer rows/s).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/audit.py` finds `bench.*`

from bench.harness import (
    Mode,
    Result,
    run_script,
    settle,
    sw_at_least,
    throughput_result,
)
from bench.reconcile import SIGNALS, loaded_stores

NAME = "audit"
TARGET = sw_at_least(30_000, "events/s")


def run(mode: Mode) -> list[Result]:
    """One result: audit events/s (median of rounds) against the peer's whole-state read (context)."""
    with loaded_stores() as loaded:
        peer, watch = loaded.peer, loaded.watch
        stored = watch.store.stored_event_count()
        warm = watch.audit()
        assert warm.ok, warm.violations
        assert warm.events_replayed == stored, "the audit must replay every stored event"
        peer.scan()
        peer_rounds: list[float] = []
        sw_rounds: list[float] = []
        for _ in range(mode.rounds):
            settle()
            start = time.perf_counter()
            rows = peer.scan()
            peer_rounds.append(rows / (time.perf_counter() - start))
            settle()
            report = watch.audit()
            assert report.ok, report.violations
            sw_rounds.append(report.events_replayed / report.seconds)
        extra = {"signals": SIGNALS, "stored_events": stored}
    return [
        throughput_result(NAME, "normal", "events/s", (peer_rounds, sw_rounds), target=TARGET, extra=extra)
    ]


def main() -> None:
    """Print this workload's table and write `bench/results/audit.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
