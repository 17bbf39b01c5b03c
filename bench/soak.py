"""`flat`: the soak. 1,000,000 signals through `record_many` under the default retention (SPEC §15.1).

In a FRESH process (a child `python bench/soak.py --child ...`, so nothing the parent imported or
allocated counts), sessionwatch records signals in batches of 1,000 through `record_many` on a
SQLite file with the defaults: `synchronous=normal` and `Retention()` (30 days, 50,000 signals, a
prune after a record once the last prune is an hour old). A settable clock advances 60 s before
every batch, so the hourly prune fires on every 60th batch (every 60,000 signals) and removes what
is over the 50,000 cap; the 30-day cut-off never comes into play (1M signals span ~17 hours).

The signals go round-robin to 20 worker sessions, a mix of kinds (human messages, some with a
payload; goal changes by an agent; failed runs with a run id and an outcome; compactions with a dedupe key).
Two watchers (`agent:main:main`, `agent:ops:main`) watch 5 of the workers through `watch()` and
drain their notices every 10 batches, so cursor events (acknowledgements) accumulate between prunes
too, and every prune's checkpoint carries the cursors (ADR-0008).

After every batch the child reads the retained signal count (`SELECT COUNT(*) FROM sw_signals` on a
connection of its own) and whether a prune ran (`store.last_prune_ms()`); right after each prune it
also reads the stored events (`store.stored_event_count()`). Every 50,000 signals it reports the
retained signals, the stored events, the SQLite file size (database + WAL), the current RSS
(`/proc/self/statm`) and the peak RSS: `VmHWM` of `/proc/self/status`, the high-water mark of the
child's own address space. NOT `getrusage().ru_maxrss`: on Linux it survives `fork` and `exec`, so
a child started from a big parent (`run.py` after the other workloads: ~147 MB) reports the parent's
size; `ru_maxrss` is kept in the JSON for reference. (Every N / 20 signals in general.)

Verdicts (SPEC §15.1 "flat"):
- `flat`: the signals retained RIGHT AFTER a prune (the largest over every prune) <= 50,000.
  Between two hourly prunes the count rises by up to an hour of records (59,000 here: up to 109,000
  seen after a batch), which the output reports as the largest count seen;
- `flat-size`: the file size (db + WAL) at the end <= 1.2 x its size at half-way (1M vs 500k);
- `flat-rss`: the child's peak RSS (`VmHWM`) < 200 MB.
Also checked (reported, not a target): right after every prune the event store holds exactly the
retained signals' events plus the checkpoint (ADR-0008).

`--quick` runs a scaled soak of 240,000 signals: the size check then compares 240,000 with 120,000,
the first point past the warm-up (the file and its WAL reach their high-water mark at the second
prune, the first one that removes a full hour of records, at 120,000; a soak of 200,000 would compare
with 100,000, before it, and fail for that reason alone). The full run is 1,000,000 (500,000 is far
past the warm-up). `--signals N` overrides either (a multiple of 20,000: 20 samples, one every
N / 20 signals, so half-way falls on a sample; use 240,000 or more for a meaningful size check).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/soak.py` finds `bench.*`

import sessionwatch
from bench.harness import (
    AGENT,
    ManualClock,
    Mode,
    Result,
    fresh_dir,
    parse_mode,
    print_table,
    sw_at_most,
    sw_below,
    sw_only_result,
    write_results,
)
from sessionwatch import Actor, Retention, SignalInput

NAME = "flat"
FULL_SIGNALS = 1_000_000
QUICK_SIGNALS = 240_000
BATCH = 1_000
SECONDS_PER_BATCH = 60
SAMPLES = 20  # one sample every 50,000 of 1M signals
STEP = BATCH * SAMPLES  # signals must be a multiple of this
DRAIN_EVERY = 10  # batches
TARGETS = tuple(f"agent:{AGENT}:subagent:worker-{n:02d}" for n in range(20))
WATCHERS = ("agent:main:main", "agent:ops:main")
WATCHED = TARGETS[::4]
MAX_RETAINED = 50_000
SIZE_GROWTH = 1.2
RSS_LIMIT_MB = 200.0
MB = 1024 * 1024
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# ------------------------------------------------------------------------------ the child process


def batch_inputs(batch: int) -> list[SignalInput]:
    """The `batch`-th 1,000 signals: round-robin over the workers, a fixed mix of kinds."""
    human, system, manager = Actor.human(), Actor.system(), Actor.agent(WATCHERS[0])
    inputs = []
    for offset in range(BATCH):
        i = batch * BATCH + offset
        key = TARGETS[i % len(TARGETS)]
        match i % 10:
            case 0:
                item = SignalInput(
                    session_key=key, kind="goal_changed", actor=manager, summary="goal updated"
                )
            case 1:
                item = SignalInput(
                    session_key=key,
                    kind="run_failed",
                    actor=system,
                    summary="child run failed",
                    run_id=f"run-{i}",
                    payload={"outcome": "error"},
                )
            case 2:
                item = SignalInput(
                    session_key=key,
                    kind="compacted",
                    actor=system,
                    summary="session compacted",
                    dedupe_key=f"compacted:op-{i}",
                )
            case 3:
                item = SignalInput(
                    session_key=key,
                    kind="human_direct_message",
                    actor=human,
                    summary="human message via telegram",
                    payload={"turns": 2, "channel": "telegram"},
                )
            case _:
                item = SignalInput(
                    session_key=key,
                    kind="human_direct_message",
                    actor=human,
                    summary="human message via telegram",
                )
        inputs.append(item)
    return inputs


def rss_now_bytes() -> int:
    """The process's resident set right now (`/proc/self/statm`, resident pages)."""
    with Path("/proc/self/statm").open(encoding="ascii") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


def rss_peak_bytes(seen: int = 0) -> int:
    """The peak resident set of this process's address space (`VmHWM`), or `seen` if higher.

    The kernel updates the high-water mark lazily, so a reading of the current RSS just taken can
    be a little above it.
    """
    with Path("/proc/self/status").open(encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return max(int(line.split()[1]) * 1024, seen)  # kB
    raise RuntimeError("/proc/self/status has no VmHWM")


def ru_maxrss_bytes() -> int:
    """`getrusage().ru_maxrss` (kilobytes on Linux): includes the parent's image at fork, see above."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def file_sizes(path: Path) -> tuple[int, int]:
    """The database file's and its WAL's sizes in bytes."""
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size, wal.stat().st_size if wal.exists() else 0


def emit(tag: str, record: dict[str, Any]) -> None:
    """One line for the parent: a tag and a JSON object."""
    print(f"{tag} {json.dumps(record)}", flush=True)


def child(path: Path, signals: int, sample_every: int) -> None:
    """The soak itself, in a fresh process: record, watch the counts, report every `sample_every`."""
    started = time.perf_counter()
    clock = ManualClock()
    with sessionwatch.open(f"sqlite:///{path}", clock=clock) as watch:
        assert watch.retention == Retention(), "the soak runs under the default retention"
        for watcher in WATCHERS:
            for target in WATCHED:
                assert watch.watch(watcher, target), "the watch must be registered"
        last_prune = watch.store.last_prune_ms()
        max_seen = prunes = since_prune = rss_seen = 0
        batch_seconds: list[float] = []
        with closing(sqlite3.connect(path)) as reader:
            for batch in range(1, signals // BATCH + 1):
                clock.advance(SECONDS_PER_BATCH)
                inputs = batch_inputs(batch)
                start = time.perf_counter()
                watch.record_many(inputs)
                spent = time.perf_counter() - start
                since_prune += BATCH
                retained = int(reader.execute("SELECT COUNT(*) FROM sw_signals").fetchone()[0])
                max_seen = max(max_seen, retained)
                pruned_at = watch.store.last_prune_ms()
                if pruned_at != last_prune:
                    last_prune, since_prune = pruned_at, 0
                    prunes += 1
                    emit(
                        "prune",
                        {
                            "recorded": batch * BATCH,
                            "retained": retained,
                            "stored_events": watch.store.stored_event_count(),
                            "batch_seconds": spent,
                        },
                    )
                else:
                    batch_seconds.append(spent)
                if batch % DRAIN_EVERY == 0:
                    for watcher in WATCHERS:
                        watch.drain(watcher)
                if batch * BATCH % sample_every == 0:
                    db, wal = file_sizes(path)
                    rss = rss_now_bytes()
                    rss_seen = max(rss_seen, rss)
                    emit(
                        "sample",
                        {
                            "recorded": batch * BATCH,
                            "retained": retained,
                            "since_prune": since_prune,
                            "stored_events": watch.store.stored_event_count(),
                            "db_bytes": db,
                            "wal_bytes": wal,
                            "rss_bytes": rss,
                            "peak_rss_bytes": rss_peak_bytes(rss_seen),
                            "prunes": prunes,
                            "elapsed": time.perf_counter() - started,
                        },
                    )
    emit(
        "done",
        {
            "recorded": signals,
            "max_seen": max_seen,
            "prunes": prunes,
            "peak_rss_bytes": rss_peak_bytes(max(rss_seen, rss_now_bytes())),
            "ru_maxrss_bytes": ru_maxrss_bytes(),
            "median_batch_seconds": statistics.median(batch_seconds),
            "seconds": time.perf_counter() - started,
        },
    )


# ---------------------------------------------------------------------------- the parent process


@dataclass(frozen=True)
class Soak:
    """What the child reported."""

    signals: int
    samples: list[dict[str, Any]]
    prunes: list[dict[str, Any]]
    done: dict[str, Any]
    wall_seconds: float

    def sample_at(self, recorded: int) -> dict[str, Any]:
        """The sample taken once `recorded` signals were recorded."""
        for sample in self.samples:
            if sample["recorded"] == recorded:
                return sample
        raise LookupError(f"no sample at {recorded:,} signals")

    @property
    def half(self) -> dict[str, Any]:
        """The half-way sample (500k of 1M)."""
        return self.sample_at(self.signals // 2)

    @property
    def end(self) -> dict[str, Any]:
        """The last sample."""
        return self.sample_at(self.signals)

    @property
    def max_after_prune(self) -> int:
        """The most signals retained right after any prune."""
        return max(int(p["retained"]) for p in self.prunes)

    @property
    def events_exact(self) -> bool:
        """Whether every prune left exactly the retained signals' events and the checkpoint."""
        return all(p["stored_events"] == p["retained"] + 1 for p in self.prunes)

    @property
    def size_growth(self) -> float:
        """File size (db + WAL) at the end over its size half-way."""
        return total_bytes(self.end) / total_bytes(self.half)

    @property
    def peak_rss_mb(self) -> float:
        """The child's peak RSS in MB."""
        return float(self.done["peak_rss_bytes"]) / MB


def total_bytes(sample: dict[str, Any]) -> int:
    """The store's size on disk: the database file and its WAL."""
    return int(sample["db_bytes"]) + int(sample["wal_bytes"])


SAMPLE_HEADER = (
    f"{'recorded':>9} {'retained':>9} {'since-prune':>11} {'events':>9} {'db MB':>7} {'wal MB':>7}"
    f" {'size MB':>8} {'rss MB':>7} {'peak MB':>8} {'prunes':>6} {'elapsed':>8}"
)


def format_sample(sample: dict[str, Any]) -> str:
    """One line of the soak's table."""
    return (
        f"{sample['recorded']:>9,} {sample['retained']:>9,} {sample['since_prune']:>11,}"
        f" {sample['stored_events']:>9,} {sample['db_bytes'] / MB:>7.1f} {sample['wal_bytes'] / MB:>7.1f}"
        f" {total_bytes(sample) / MB:>8.1f} {sample['rss_bytes'] / MB:>7.1f}"
        f" {sample['peak_rss_bytes'] / MB:>8.1f} {sample['prunes']:>6} {sample['elapsed']:>7.1f}s"
    )


def soak(signals: int, *, echo: bool) -> Soak:
    """Run the soak in a fresh child process; with `echo`, print each sample as it arrives."""
    if signals % STEP or signals <= 0:
        raise ValueError(f"signals must be a positive multiple of {STEP:,}")
    samples: list[dict[str, Any]] = []
    prunes: list[dict[str, Any]] = []
    done: dict[str, Any] | None = None
    started = time.perf_counter()
    with fresh_dir("soak") as directory:
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            str(directory / "soak.db"),
            "--signals",
            str(signals),
        ]
        if echo:
            print(SAMPLE_HEADER, flush=True)
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:  # noqa: S603 - ourselves
            assert process.stdout is not None
            for line in process.stdout:
                tag, _, body = line.partition(" ")
                record = json.loads(body)
                match tag:
                    case "sample":
                        samples.append(record)
                        if echo:
                            print(format_sample(record), flush=True)
                    case "prune":
                        prunes.append(record)
                    case "done":
                        done = record
                    case _:
                        raise RuntimeError(f"unexpected line from the soak: {line!r}")
        if process.returncode != 0 or done is None:
            raise RuntimeError(f"the soak's child process failed (exit status {process.returncode})")
    return Soak(signals, samples, prunes, done, time.perf_counter() - started)


def results_of(result: Soak) -> list[Result]:
    """The three verdicts as table lines (sessionwatch alone: no peer, no ratio)."""
    scale = (
        f"n={result.signals // 1000:,}k" if result.signals < FULL_SIGNALS else f"n={result.signals // 10**6}M"
    )
    extra = {
        "signals": result.signals,
        "batch": BATCH,
        "seconds_per_batch": SECONDS_PER_BATCH,
        "max_retained_after_prune": result.max_after_prune,
        "max_retained_seen": result.done["max_seen"],
        "prunes": len(result.prunes),
        "events_after_prune_exact": result.events_exact,
        "size_half_bytes": total_bytes(result.half),
        "size_end_bytes": total_bytes(result.end),
        "peak_rss_bytes": result.done["peak_rss_bytes"],
        "ru_maxrss_bytes": result.done["ru_maxrss_bytes"],
        "median_batch_seconds": result.done["median_batch_seconds"],
        "median_prune_batch_seconds": statistics.median(p["batch_seconds"] for p in result.prunes),
        "child_seconds": result.done["seconds"],
        "samples": result.samples,
        "prune_points": result.prunes,
    }
    return [
        sw_only_result(
            NAME,
            scale,
            "signals",
            result.max_after_prune,
            target=sw_at_most(MAX_RETAINED, "signals"),
            extra=extra,
        ),
        sw_only_result(f"{NAME}-size", scale, "x", result.size_growth, target=sw_at_most(SIZE_GROWTH, "x")),
        sw_only_result(f"{NAME}-rss", scale, "MB", result.peak_rss_mb, target=sw_below(RSS_LIMIT_MB, "MB")),
    ]


def signals_for(mode: Mode) -> int:
    """The soak's length in a mode: 240,000 signals in `--quick`, 1,000,000 otherwise."""
    return QUICK_SIGNALS if mode.name == "quick" else FULL_SIGNALS


def run(mode: Mode) -> list[Result]:
    """The soak's three lines (`run.py`): a scaled soak with `--quick`."""
    return results_of(soak(signals_for(mode), echo=False))


def report(result: Soak) -> None:
    """The verdicts in words, after the table of samples."""
    half, end = result.half, result.end
    print(
        f"prunes: {len(result.prunes)} (every {60 * 60 // SECONDS_PER_BATCH * BATCH:,} signals);"
        f" retained right after a prune: max {result.max_after_prune:,} (<= {MAX_RETAINED:,}:"
        f" {'yes' if result.max_after_prune <= MAX_RETAINED else 'NO'});"
        f" most seen after a batch (between prunes): {result.done['max_seen']:,}"
    )
    print(
        "stored events right after every prune = retained + 1 (the checkpoint):"
        f" {'yes' if result.events_exact else 'NO'}"
    )
    growth = result.size_growth
    print(
        f"size (db + WAL): {total_bytes(half) / MB:.1f} MB at {half['recorded']:,},"
        f" {total_bytes(end) / MB:.1f} MB at {end['recorded']:,}: {growth:.3f}x"
        f" (<= {SIZE_GROWTH}x: {'yes' if growth <= SIZE_GROWTH else 'NO'})"
    )
    print(
        f"peak RSS (VmHWM): {result.peak_rss_mb:.1f} MB (< {RSS_LIMIT_MB:g} MB:"
        f" {'yes' if result.peak_rss_mb < RSS_LIMIT_MB else 'NO'});"
        f" ru_maxrss {result.done['ru_maxrss_bytes'] / MB:.1f} MB (includes the parent's image at fork)"
    )
    median_prune = statistics.median(p["batch_seconds"] for p in result.prunes)
    print(
        f"time: {result.done['seconds']:.0f} s in the child ({result.wall_seconds:.0f} s wall);"
        f" a batch of {BATCH:,}: median {result.done['median_batch_seconds'] * 1000:.0f} ms,"
        f" {median_prune * 1000:.0f} ms when it runs the hourly prune (median)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """The soak's table and verdicts (`bench/results/flat.json`), or the child (`--child PATH`)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--signals", type=int, help="signals to record (default 1,000,000; 240,000 --quick)")
    known, rest = parser.parse_known_args(argv)
    if known.child is not None:
        signals = known.signals or FULL_SIGNALS
        child(known.child, signals, signals // SAMPLES)
        return
    mode = parse_mode(__doc__ or NAME, rest)
    signals = known.signals or signals_for(mode)
    print(f"soak: {signals:,} signals via record_many({BATCH:,}), the clock +{SECONDS_PER_BATCH} s per batch")
    result = soak(signals, echo=True)
    print()
    report(result)
    results = results_of(result)
    print()
    print_table(results)
    write_results(NAME, results, mode)


if __name__ == "__main__":
    main()
