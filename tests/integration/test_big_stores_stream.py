"""Import, export, audit and import-openclaw stream: peak Python allocation does not grow with size.

Measured with tracemalloc (allocations, not time): each runs on a history of 10,000 and one of
40,000 signals, and the bigger one may peak at most a little above the smaller (a whole-history
import or audit peaks about four times as high). The import keeps 16 bytes a signal for its
duplicate check; that is the slack allowed.
"""

from __future__ import annotations

import io
import sqlite3
import tracemalloc
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from reference_gateway import REFERENCE_SCHEMA

import sessionwatch
from sessionwatch import Actor, Retention, SignalInput
from sessionwatch.adapters.history.jsonl import export_history, import_history
from sessionwatch.adapters.history.openclaw import import_openclaw
from sessionwatch.testing import FakeClock

KEEP_ALL = Retention(days=36_500, max_signals=2**62, prune_interval=timedelta(days=36_500))
SMALL, BIG = 10_000, 40_000


def _record(url: str, signals: int) -> None:
    clock = FakeClock()
    with sessionwatch.open(url, clock=clock, retention=KEEP_ALL) as watch:
        watch.watch("agent:main:main", "agent:main:subagent:w0")
        for start in range(0, signals, 1000):
            clock.advance(seconds=60)
            watch.record_many(
                [
                    SignalInput(
                        session_key=f"agent:main:subagent:w{i % 8}",
                        kind="human_direct_message" if i % 3 else "run_failed",
                        actor=Actor.human() if i % 3 else Actor.system(),
                        summary="human message via telegram" if i % 3 else "child run failed",
                        run_id=None if i % 3 else f"run-{i}",
                    )
                    for i in range(start, start + 1000)
                ]
            )


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """An exported history of each size, and the store it came from."""
    root = tmp_path_factory.mktemp("histories")
    out = {}
    for size in (SMALL, BIG):
        _record(f"sqlite:///{root / f'{size}.db'}", size)
        with sessionwatch.open(f"sqlite:///{root / f'{size}.db'}", retention=KEEP_ALL) as watch:
            path = root / f"{size}.jsonl"
            with path.open("w", encoding="utf-8") as file:
                assert export_history(watch.store, file) == size + 1  # and the watch
        out[size] = path
    return out


def _peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as file:
        yield from file


def _import(path: Path, target: Path, progress: list[int]) -> Callable[[], object]:
    def run() -> None:
        with sessionwatch.open(f"sqlite:///{target}", retention=KEEP_ALL, sweep_on_open=False) as watch:
            report = import_history(watch.store, _lines(path), progress=progress.append)
            assert report.signals == int(path.stem)

    return run


def _discard(line: str) -> None:
    del line


def _assert_flat(small: int, big: int, what: str) -> None:
    allowed = small * 1.5 + 16 * (BIG - SMALL)
    assert big <= allowed, f"{what}: peak {big:,} B at {BIG:,} signals vs {small:,} B at {SMALL:,}"


def test_an_import_streams(histories: dict[int, Path], tmp_path: Path) -> None:
    counts: list[int] = []
    small = _peak(_import(histories[SMALL], tmp_path / "small.db", []))
    big = _peak(_import(histories[BIG], tmp_path / "big.db", counts))
    _assert_flat(small, big, "import")
    assert counts[-1] == BIG + 1
    assert counts[:-1] == list(range(1000, BIG + 1, 1000)), "progress every 1,000 events"


def test_an_audit_and_an_export_stream(histories: dict[int, Path], tmp_path: Path) -> None:
    peaks: dict[str, dict[int, int]] = {"audit": {}, "export": {}}
    for size, path in histories.items():
        target = tmp_path / f"{size}.db"
        _import(path, target, [])()
        with sessionwatch.open(f"sqlite:///{target}", retention=KEEP_ALL, sweep_on_open=False) as watch:

            def audit(watch: sessionwatch.SessionWatch = watch, size: int = size) -> None:
                report = watch.audit()
                assert report.ok, report.violations
                assert report.events_replayed == size + 1

            peaks["audit"][size] = _peak(audit)
            sink = io.StringIO()

            def export(watch: sessionwatch.SessionWatch = watch) -> None:
                export_history(watch.store, _discard)

            peaks["export"][size] = _peak(export)
            export_history(watch.store, sink)
            assert sink.getvalue() == path.read_text(encoding="utf-8"), "the same bytes"
    for what, by_size in peaks.items():
        _assert_flat(by_size[SMALL], by_size[BIG], what)


def _reference(path: Path, signals: int) -> Path:
    """A reference-gateway state database of `signals` rows over 8 sessions, with heads."""
    with sqlite3.connect(path) as raw:
        raw.executescript(REFERENCE_SCHEMA)
        raw.executemany(
            "INSERT INTO session_state_events (sequence, session_key, agent_id, kind, actor_type,"
            " occurred_at, summary) VALUES (?,?,?,?,?,?,?)",
            (
                (n, f"agent:main:subagent:w{n % 8}", "main", "human_direct_message", "human", n * 1000, "hi")
                for n in range(1, signals + 1)
            ),
        )
        raw.executemany(
            "INSERT INTO session_state_heads (session_key, agent_id, last_sequence, pruned_max_sequence,"
            " updated_at) VALUES (?,?,?,0,0)",
            ((f"agent:main:subagent:w{w}", "main", signals - (signals - w) % 8) for w in range(8)),
        )
    return path


def test_an_openclaw_import_streams(tmp_path: Path) -> None:
    peaks = {}
    for size in (SMALL, BIG):
        source = _reference(tmp_path / f"reference-{size}.db", size)

        def run(source: Path = source, size: int = size) -> None:
            url = f"sqlite:///{tmp_path / f'{size}.db'}"
            with sessionwatch.open(url, retention=KEEP_ALL, sweep_on_open=False) as watch:
                report = import_openclaw(watch.store, source, now_ms=size * 1000 + 1)
                assert (report.signals, report.sessions) == (size, 8)

        peaks[size] = _peak(run)
    _assert_flat(peaks[SMALL], peaks[BIG], "import-openclaw")
