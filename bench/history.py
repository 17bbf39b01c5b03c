"""A big exported history to measure `import`, `export` and `audit` on (not a timed workload).

`python bench/history.py OUT.jsonl [--signals N]` records N signals (default 1,000,000) through
`record_many` in batches of 1,000, the soak's mix of kinds, the clock advancing a minute per batch,
under a retention that keeps everything (so no prune runs), then exports the store's history to
OUT.jsonl. Then, by hand:

    /usr/bin/time -v sessionwatch import OUT.jsonl --db sqlite:///new.db
    /usr/bin/time -v sessionwatch audit --db sqlite:///new.db
    /usr/bin/time -v sessionwatch export --db sqlite:///new.db > again.jsonl
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/history.py` finds `bench.*`

import sessionwatch
from bench.harness import ManualClock
from bench.soak import BATCH, SECONDS_PER_BATCH, WATCHED, WATCHERS, batch_inputs
from sessionwatch import Retention
from sessionwatch.adapters.history.jsonl import export_history

KEEP_ALL = Retention(days=36_500, max_signals=2**62, prune_interval=timedelta(days=36_500))


def build(out: Path, signals: int) -> int:
    """Record `signals` signals into a scratch store and export its history to `out`; the event count."""
    clock = ManualClock()
    with tempfile.TemporaryDirectory() as scratch:
        url = f"sqlite:///{Path(scratch) / 'history.db'}"
        with sessionwatch.open(url, clock=clock, retention=KEEP_ALL) as watch:
            for watcher in WATCHERS:
                for target in WATCHED:
                    watch.watch(watcher, target)
            for batch in range(1, signals // BATCH + 1):
                clock.advance(SECONDS_PER_BATCH)
                watch.record_many(batch_inputs(batch))
            with out.open("w", encoding="utf-8") as file:
                return export_history(watch.store, file)


def main() -> None:
    """Parse the arguments, build the history, say how many events it holds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--signals", type=int, default=1_000_000)
    args = parser.parse_args()
    started = time.perf_counter()
    events = build(args.out, args.signals)
    print(f"{events:,} events in {args.out} ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
