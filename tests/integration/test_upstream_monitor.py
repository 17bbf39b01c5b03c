"""The upstream monitor thread (SPEC §10, §13): ticking, stopping, and nothing published after `stop()`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence

import pytest

import sessionwatch
from sessionwatch import InvalidQuery, SessionWatch, UpstreamActivity, UpstreamMissing, UpstreamProbe

ADOPTED = "agent:main:adopted"
WATCHER = "agent:main:main"
CATALOG = "claude-code"
PATIENCE_S = 10.0  # how long a test waits for the thread before failing (never reached when healthy)

pytestmark = pytest.mark.usefixtures("through_each_facade")  # the async façade's monitor task too


class CountingProvider:
    """One human turn per call, each at a new offset; optionally blocks until released."""

    def __init__(self, *, block: bool = False, fail: bool = False) -> None:
        self.calls = 0
        self.entered = threading.Event()
        self.release = threading.Event()
        self.block = block
        self.fail = fail

    def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> list[UpstreamActivity | UpstreamMissing]:
        self.calls += 1
        self.entered.set()
        if self.block:
            self.release.wait(PATIENCE_S)
        if self.fail:
            raise RuntimeError("catalog offline")
        return [
            UpstreamActivity(
                session_key=p.session_key, human_turns=1, next_marker={"offset": self.calls * 10}
            )
            for p in probes
        ]


@pytest.fixture
def watch() -> Iterator[SessionWatch]:
    with sessionwatch.open("memory://") as opened:
        opened.upsert_session(WATCHER)
        opened.link_upstream(
            ADOPTED,
            catalog_id=CATALOG,
            host_id="laptop",
            thread_id="t-1",
            upstream_kind="claude-jsonl",
            upstream_ref="/transcripts/t-1.jsonl",
            marker={"offset": 0},
        )
        assert opened.watch(WATCHER, ADOPTED)
        yield opened


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the monitor did not get there in time")
        time.sleep(0.005)


def human_turns(watch: SessionWatch) -> int:
    changes = watch.session_status(ADOPTED, changes_since=0).state_changes
    assert changes is not None
    return sum(1 for e in changes.events if e.kind == "human_direct_message")


def test_the_monitor_ticks_after_its_initial_delay_then_every_interval(watch: SessionWatch) -> None:
    provider = CountingProvider()
    handle = watch.start_upstream_monitor({CATALOG: provider}, interval=0.02, initial_delay=0.01)
    try:
        wait_until(lambda: handle.ticks >= 3)
    finally:
        assert handle.stop()
    assert handle.running is False
    assert human_turns(watch) == handle.ticks  # one recorded signal per completed pass
    last = handle.last_report
    assert last is not None
    assert len(last.recorded) == 1


def test_stop_returns_within_one_interval_and_publishes_nothing_afterwards(watch: SessionWatch) -> None:
    provider = CountingProvider(block=True)
    interval = 1.0
    handle = watch.start_upstream_monitor({CATALOG: provider}, interval=interval, initial_delay=0)
    assert provider.entered.wait(PATIENCE_S)  # a probe is in flight
    started = time.monotonic()
    ended = handle.stop()
    waited = time.monotonic() - started
    assert waited < interval + 0.5  # bounded by one interval, whatever the provider does
    assert ended is False  # the provider is still answering: abandoned, not killed
    provider.release.set()  # the provider now answers: its activity must not be published
    wait_until(lambda: not handle.running)
    assert human_turns(watch) == 0
    link = watch.upstream_link(ADOPTED)
    assert link is not None
    assert link.marker == {"offset": 0}
    assert handle.ticks == 1
    report = handle.last_report
    assert report is not None
    assert (report.discarded, report.recorded) == ((ADOPTED,), ())


def test_stop_joins_a_probe_that_answers_within_the_interval(watch: SessionWatch) -> None:
    provider = CountingProvider(block=True)
    handle = watch.start_upstream_monitor({CATALOG: provider}, interval=5.0, initial_delay=0)
    assert provider.entered.wait(PATIENCE_S)
    threading.Timer(0.05, provider.release.set).start()
    assert handle.stop() is True  # joined the in-flight probe
    assert human_turns(watch) == 0  # ... without publishing its result
    report = handle.last_report
    assert report is not None
    assert report.discarded == (ADOPTED,)


def test_a_monitor_stopped_before_its_first_tick_never_probes(watch: SessionWatch) -> None:
    provider = CountingProvider()
    handle = watch.start_upstream_monitor({CATALOG: provider}, interval=60.0, initial_delay=15.0)
    assert handle.stop(timeout=1.0) is True
    assert provider.calls == 0


def test_a_failing_pass_does_not_end_the_monitor(watch: SessionWatch) -> None:
    provider = CountingProvider(fail=True)
    handle = watch.start_upstream_monitor({CATALOG: provider}, interval=0.01, initial_delay=0)
    try:
        wait_until(lambda: handle.ticks >= 2)
        last = handle.last_report
        assert last is not None
        assert last.failed_catalogs == (CATALOG,)
    finally:
        assert handle.stop()


def test_closing_the_watch_stops_its_monitors(watch: SessionWatch) -> None:
    provider = CountingProvider()
    handle = watch.start_upstream_monitor({CATALOG: provider}, interval=0.01, initial_delay=0)
    wait_until(lambda: handle.ticks >= 1)
    watch.close()
    assert handle.running is False


def test_the_monitor_handle_is_a_context_manager(watch: SessionWatch) -> None:
    provider = CountingProvider()
    with watch.start_upstream_monitor({CATALOG: provider}, interval=0.01, initial_delay=0) as handle:
        wait_until(lambda: handle.ticks >= 1)
    assert handle.running is False


@pytest.mark.parametrize(
    ("interval", "initial_delay"),
    [(0, 1.0), (-1, 1.0), (float("nan"), 1.0), (1.0, -0.5), (1.0, float("inf")), ("60", 1.0), (True, 1.0)],
)
def test_the_monitor_timing_is_validated(
    watch: SessionWatch, interval: object, initial_delay: object
) -> None:
    with pytest.raises(InvalidQuery):
        watch.start_upstream_monitor(
            {CATALOG: CountingProvider()},
            interval=interval,  # type: ignore[arg-type]
            initial_delay=initial_delay,  # type: ignore[arg-type]
        )
