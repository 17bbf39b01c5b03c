"""A prune with an archive streams: peak Python allocation does not grow with what it archives.

Measured with tracemalloc (allocations, not time) on the SQL stores: a forced prune archives all
but 100 signals of a store of 10,000 and of one of 40,000, and the bigger one may peak at most a
little above the smaller (an archive built whole in memory peaks about four times as high). The
archive then holds exactly the pruned signals, in sequence order, once each.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from stores import fresh_store_url, needs_postgres

import sessionwatch
from sessionwatch import Actor, Retention, SignalInput
from sessionwatch.adapters.stores.archive import archived_signals
from sessionwatch.testing import FakeClock

KEEP_ALL = Retention(days=36_500, max_signals=2**62, prune_interval=timedelta(days=36_500))
SMALL, BIG = 10_000, 40_000
KEPT = 100


def _record(url: str, signals: int) -> None:
    with sessionwatch.open(url, clock=FakeClock(), retention=KEEP_ALL) as watch:
        watch.watch("agent:main:main", "agent:main:subagent:w0")
        for start in range(0, signals, 1000):
            watch.record_many(
                SignalInput(
                    session_key=f"agent:main:subagent:w{i % 8}",
                    kind="human_direct_message",
                    actor=Actor.human(),
                    summary=f"human message {i} via telegram",
                )
                for i in range(start, start + 1000)
            )


@contextmanager
def _store(kind: str, folder: Path, signals: int) -> Iterator[str]:
    with fresh_store_url(kind, folder, f"{signals}.db") as url:
        _record(url, signals)
        yield url


def _archiving_prune_peak(url: str, archive: Path) -> int:
    """The peak Python allocation of one forced prune that archives; checks what it archived."""
    retention = Retention(days=36_500, max_signals=KEPT, archive=str(archive))
    with sessionwatch.open(url, clock=FakeClock(), retention=retention, sweep_on_open=False) as watch:
        before = watch.store.last_sequence()
        tracemalloc.start()
        try:
            report = watch.prune(force=True)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    removed = before - KEPT
    assert (report.signals_removed, report.archived) == (removed, removed)
    assert [s.sequence for s in archived_signals(archive)] == list(range(1, removed + 1))
    return peak


@pytest.mark.parametrize("kind", [pytest.param("sqlite"), pytest.param("postgres", marks=needs_postgres)])
def test_a_prune_that_archives_streams_and_archives_exactly_what_it_removed(
    kind: str, tmp_path: Path
) -> None:
    peaks = {}
    for size in (SMALL, BIG):
        with _store(kind, tmp_path, size) as url:
            peaks[size] = _archiving_prune_peak(url, tmp_path / f"{size}.jsonl")
    allowed = peaks[SMALL] * 1.5
    assert peaks[BIG] <= allowed, (
        f"peak {peaks[BIG]:,} B at {BIG:,} signals vs {peaks[SMALL]:,} B at {SMALL:,}"
    )
