"""Run every benchmark workload, print one table, write `bench/results/run.json`.

`python bench/run.py --quick` finishes in 80-90 s on two cores (the soak scaled to 240,000
signals); without `--quick` each workload runs more and longer rounds and the soak records its full
1,000,000 signals (several minutes more). Each workload also writes `bench/results/<name>.json`.
`pg_record` (PostgreSQL, against a raw psycopg peer) runs when a server answers at
`$SESSIONWATCH_PG_URL` and otherwise prints why it is skipped.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/run.py` finds `bench.*`

from bench import (
    audit,
    batch,
    cli,
    coroutines,
    fanout,
    floor,
    head,
    hook,
    import_history,
    pg_record,
    prune,
    reconcile,
    record,
    soak,
    sweep,
    threads,
)
from bench.harness import HEADER, Mode, Result, format_row, parse_mode, print_table, write_results

WORKLOADS: tuple[tuple[str, Callable[[Mode], list[Result]]], ...] = (
    (record.NAME, record.run),
    (batch.NAME, batch.run),
    (threads.NAME, floor.run_concurrent),  # at NORMAL against the floor (bench/floor.py), at FULL the peer
    (coroutines.NAME, coroutines.run),
    (pg_record.NAME, pg_record.run),  # PostgreSQL: skipped, saying why, when no server answers
    (reconcile.NAME, reconcile.run),
    (head.NAME, head.run),
    (fanout.NAME, fanout.run),
    (sweep.NAME, sweep.run),
    (prune.NAME, prune.run),
    (audit.NAME, audit.run),
    (import_history.NAME, import_history.run),  # against a snapshot of main before issue 30
    (soak.NAME, soak.run),
    (cli.NAME, cli.run),  # fresh processes against `python -I -c pass`, the interpreter floor
    (hook.NAME, hook.run),  # likewise, the Claude Code hook
)


def main() -> None:
    """Run the workloads in turn, printing each line as it is measured, then the whole table."""
    mode = parse_mode(__doc__ or "sessionwatch benchmarks")
    started = time.perf_counter()
    print(f"mode {mode.name}: {mode.rounds} rounds x {mode.seconds:g} s, settings {','.join(mode.settings)}")
    print(HEADER, flush=True)
    everything: list[Result] = []
    spent: dict[str, float] = {}
    for name, run in WORKLOADS:
        start = time.perf_counter()
        results = run(mode)
        spent[name] = time.perf_counter() - start
        for result in results:
            print(format_row(result), flush=True)
        if results:  # `pg_record` returns none without a PostgreSQL server (it printed why)
            write_results(name, results, mode)
        everything.extend(results)
    elapsed = time.perf_counter() - started
    print()
    print_table(everything)
    counted = [result for result in everything if result.target.counted]
    met = sum(result.met for result in counted)
    print(f"{met}/{len(counted)} targets met in {elapsed:.0f} s")
    print("time per workload (set-up included): " + ", ".join(f"{n} {s:.0f} s" for n, s in spent.items()))
    print(
        "ratio: record, batch, concurrent, concurrent-async, reconcile, pg-record, pg-batch:"
        " sessionwatch rate / peer rate (concurrent-floor: / the floor's rate);"
        " head, prune: peer time /"
        " sessionwatch time (bigger is better, target >=);\n"
        "       fan-out, sweep: sessionwatch time / peer time (smaller is better, target <=);"
        " fan-scale: time(1,000) / time(100);\n"
        "       cli: a command line's wall time / `python -I -c pass`'s in the same rounds (target <=);\n"
        "       flat (the soak, sessionwatch alone, in a child process; setting = signals recorded):"
        " signals retained right after a prune, size(end) / size(half-way), peak RSS;\n"
        "       loop-lag: p99 lateness of a 1 ms ticker on the loop of concurrent-async;\n"
        "       hook-*, start-*: the hook's median time / python -I -c pass's (smaller is better)"
    )
    path = write_results("run", everything, mode)
    print(f"results: {path}")


if __name__ == "__main__":
    main()
