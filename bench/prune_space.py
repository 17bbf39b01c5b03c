"""How much of the file a big prune gives back (not a timed workload).

`python bench/prune_space.py [--signals 200000] [--keep 50000]` records the signals (the soak's mix,
a retention that keeps everything), prunes all but `--keep` with a cap, and prints the file's size
and free pages before and after, next to a fresh store holding the signals left (the pruned
store's history imported into a new file).
"""

from __future__ import annotations

import argparse
import functools
import sqlite3
import sys
import tempfile
from contextlib import closing
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/prune_space.py` finds `bench.*`

import sessionwatch
from bench.harness import ManualClock
from bench.history import KEEP_ALL
from bench.soak import BATCH, SECONDS_PER_BATCH, batch_inputs
from sessionwatch import Retention
from sessionwatch.adapters.history.jsonl import history_lines, import_history


def pages(path: Path) -> tuple[int, int, int]:
    """The file's size in bytes, its page count and its free pages, the WAL checkpointed first."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        count = int(db.execute("PRAGMA page_count").fetchone()[0])
        free = int(db.execute("PRAGMA freelist_count").fetchone()[0])
    return path.stat().st_size, count, free


def show(label: str, path: Path) -> int:
    """Print one line about the file at `path`; its size."""
    size, count, free = pages(path)
    print(f"{label:<28} {size / 1e6:8.1f} MB  {count:>8,} pages  {free:>8,} free")
    return size


def main() -> None:
    """Record, measure, prune, measure, compare with a fresh store."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", type=int, default=200_000)
    parser.add_argument("--keep", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        big, fresh = Path(scratch) / "big.db", Path(scratch) / "fresh.db"
        clock = ManualClock()
        with sessionwatch.open(f"sqlite:///{big}", clock=clock, retention=KEEP_ALL) as watch:
            for batch in range(1, args.signals // BATCH + 1):
                clock.advance(SECONDS_PER_BATCH)
                watch.record_many(batch_inputs(batch))
        show(f"{args.signals:,} signals", big)
        policy = Retention(days=36_500, max_signals=args.keep)
        opened = functools.partial(sessionwatch.open, clock=clock, retention=policy, sweep_on_open=False)
        with opened(f"sqlite:///{big}") as watch:
            removed = watch.prune(force=True).signals_removed
            after = show(f"after pruning {removed:,}", big)
            with (
                opened(f"sqlite:///{fresh}") as new,
                closing(history_lines(watch.store)) as lines,
            ):
                import_history(new.store, lines)
        size = show(f"fresh store, {args.keep:,} signals", fresh)
        print(f"pruned file / fresh file: {after / size:.2f}x")


if __name__ == "__main__":
    main()
