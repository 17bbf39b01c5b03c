"""Telemetry through OpenTelemetry (the `otel` extra), read back from the SDK's in-memory exporters.

Both façades, every store: the spans of record, record_many, drain, acknowledge, sweep, prune, audit
and an upstream tick, with only low-cardinality attributes (never a key or a summary); the metrics:
signals newly recorded by kind (a duplicate dedupe key counts nothing), notices opened and
acknowledged, wakes and their delay after the commit, history gaps served, store errors by class.
Without OpenTelemetry importable, sessionwatch works and never imports it (in a subprocess).

OpenTelemetry's global providers can be set once per process: one session fixture sets them; each
test reads the spans it finished and the change of each metric point while it ran.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import sessionwatch
from sessionwatch import Actor, SessionWatch, SignalInput, SignalKind, StoreError
from sessionwatch.testing import FakeClock, RecordingWaker

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
WORKER = "agent:main:worker"
SECRET = "summary text that must never reach telemetry"  # noqa: S105 - a summary, not a password

SPAN_KEYS = {"sessionwatch.store", "sessionwatch.outcome", "error.type"}
METRIC_KEYS = {"sessionwatch.store", "sessionwatch.signal.kind", "sessionwatch.outcome", "error.type"}

Point = tuple[str, frozenset[tuple[str, object]]]


@dataclass(frozen=True)
class Exporters:
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader


@pytest.fixture(scope="session")
def exporters() -> Exporters:
    """The process's providers, set once, exporting to memory."""
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracers = TracerProvider()
    tracers.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(tracers)
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return Exporters(spans, reader)


def points(reader: InMemoryMetricReader) -> dict[Point, float]:
    """Every sessionwatch metric point now: a counter's sum, a histogram's count."""
    found: dict[Point, float] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != "sessionwatch":
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    if isinstance(point, HistogramDataPoint):
                        value: float = point.count
                    elif isinstance(point, NumberDataPoint):
                        value = point.value
                    else:
                        continue
                    found[metric.name, frozenset((point.attributes or {}).items())] = value
    return found


class Telemetry:
    """What one test emitted: its finished spans and the change of every metric point."""

    def __init__(self, exporters: Exporters, store: str, *, facade: str) -> None:
        self._exporters = exporters
        self.store = store
        self.facade = facade
        exporters.spans.clear()
        self._before = points(exporters.reader)

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        finished = self._exporters.spans.get_finished_spans()
        return [s for s in finished if name is None or s.name == name]

    def delta(self) -> dict[Point, float]:
        after = points(self._exporters.reader)
        changes = {point: value - self._before.get(point, 0) for point, value in after.items()}
        return {point: change for point, change in changes.items() if change}

    def count(self, name: str, **attributes: str) -> float:
        wanted = {"sessionwatch.store": self.store, **{k.replace("_", "."): v for k, v in attributes.items()}}
        return sum(v for (n, attrs), v in self.delta().items() if n == name and dict(attrs) == wanted)

    def names(self) -> list[str]:
        return [s.name for s in self.spans()]

    def assert_low_cardinality(self) -> None:
        """Only the allowed attribute keys; no value names a session or carries a summary."""
        for span in self.spans():
            attributes = dict(span.attributes or {})
            assert set(attributes) <= SPAN_KEYS, span.name
            assert attributes["sessionwatch.store"] == self.store
            assert attributes["sessionwatch.outcome"] in {"ok", "error"}
            assert all("agent:" not in str(v) and SECRET not in str(v) for v in attributes.values())
            assert all(SECRET not in (event.name or "") for event in span.events)
        for _name, attrs in self.delta():
            assert {key for key, _ in attrs} <= METRIC_KEYS
            assert all(type(v) is str for _, v in attrs)  # plain text, never an enum or an object
            assert all("agent:" not in str(v) and SECRET not in str(v) for _, v in attrs)


STORE_KINDS = {"memory": "memory", "sqlite": "sqlite", "postgresql": "postgresql"}


@pytest.fixture
def telemetry(exporters: Exporters, store_url: str, through_each_facade: str) -> Telemetry:
    """What the test emits through the parametrized façade (`sync` or `async`) on each store."""
    kind = next(kind for prefix, kind in STORE_KINDS.items() if store_url.startswith(prefix))
    return Telemetry(exporters, kind, facade=through_each_facade)


@pytest.fixture
def waker() -> RecordingWaker:
    return RecordingWaker()


@pytest.fixture
def watch(
    telemetry: Telemetry, store_url: str, clock: FakeClock, waker: RecordingWaker
) -> Iterator[SessionWatch]:
    del telemetry  # its exporters are read from before the store opens
    with sessionwatch.open(store_url, clock=clock, waker=waker) as opened:
        yield opened


def goal(key: str, dedupe: str | None = None) -> SignalInput:
    return SignalInput(
        session_key=key, kind=SignalKind.GOAL_CHANGED, actor=Actor.system(), summary=SECRET, dedupe_key=dedupe
    )


def record(watch: SessionWatch, item: SignalInput) -> None:
    watch.record(
        item.session_key, kind=item.kind, actor=item.actor, summary=item.summary, dedupe_key=item.dedupe_key
    )


def test_signals_are_counted_by_kind_once_each_never_for_a_duplicate(
    watch: SessionWatch, telemetry: Telemetry
) -> None:
    record(watch, goal(WORKER, "d-1"))
    record(watch, goal(WORKER, "d-1"))  # the retained signal answers: nothing recorded
    watch.record(WORKER, kind=SignalKind.COMPACTED, actor=Actor.system(), summary=SECRET)
    watch.record_many([goal(WORKER, "d-1"), goal(WORKER, "d-2"), goal(WORKER, "d-2"), goal(MANAGER)])

    assert telemetry.count("sessionwatch.signals.recorded", sessionwatch_signal_kind="goal_changed") == 3
    assert telemetry.count("sessionwatch.signals.recorded", sessionwatch_signal_kind="compacted") == 1
    assert telemetry.names().count("sessionwatch.record") == 3
    assert telemetry.names().count("sessionwatch.record_many") == 1
    assert all(
        s.attributes == {"sessionwatch.store": telemetry.store, "sessionwatch.outcome": "ok"}
        for s in telemetry.spans("sessionwatch.record")
    )
    telemetry.assert_low_cardinality()


def test_notices_opened_and_acknowledged_and_wakes_with_their_delay(
    watch: SessionWatch, telemetry: Telemetry, waker: RecordingWaker
) -> None:
    watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1")

    def human() -> None:
        watch.record(CHILD, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary=SECRET)

    human()  # opens the manager's notice, woken after the commit
    assert telemetry.count("sessionwatch.notices.opened") == 1
    assert waker.take() == [(MANAGER, f"session-state:{CHILD}")]
    assert telemetry.count("sessionwatch.wakes", sessionwatch_outcome="ok") == 1
    assert telemetry.count("sessionwatch.wake.delay") == 1  # one histogram point

    assert len(watch.drain(MANAGER)) == 1
    assert telemetry.count("sessionwatch.notices.acknowledged") == 1
    human()
    watch.acknowledge(MANAGER, [CHILD])
    assert telemetry.count("sessionwatch.notices.opened") == 2
    assert telemetry.count("sessionwatch.notices.acknowledged") == 2
    assert telemetry.count("sessionwatch.wakes", sessionwatch_outcome="ok") == 2
    assert len(telemetry.spans("sessionwatch.drain")) == 1
    assert len(telemetry.spans("sessionwatch.acknowledge")) == 1
    assert telemetry.count("sessionwatch.signals.recorded", sessionwatch_signal_kind="child_spawned") == 1
    telemetry.assert_low_cardinality()


def test_sweep_prune_audit_and_upstream_tick_have_spans(watch: SessionWatch, telemetry: Telemetry) -> None:
    assert telemetry.names() == ["sessionwatch.sweep", "sessionwatch.prune"]  # open's sweep
    watch.sweep()
    watch.prune()
    assert watch.audit().ok
    watch.upstream_tick({})
    assert telemetry.names()[2:] == [
        "sessionwatch.sweep",
        "sessionwatch.prune",
        "sessionwatch.prune",
        "sessionwatch.audit",
        "sessionwatch.upstream_tick",
    ]
    assert {s.attributes["sessionwatch.outcome"] for s in telemetry.spans() if s.attributes} == {"ok"}
    telemetry.assert_low_cardinality()


def test_a_status_answer_with_a_history_gap_is_counted(
    watch: SessionWatch, telemetry: Telemetry, clock: FakeClock
) -> None:
    last = [
        watch.record(WORKER, kind=SignalKind.GOAL_CHANGED, actor=Actor.system(), summary=SECRET)
        for _ in range(3)
    ][-1].sequence
    clock.advance(days=31)
    watch.prune()
    watch.session_status(WORKER, changes_since=last)  # nothing pruned after it: no gap
    watch.session_status(WORKER)  # no changes asked for
    assert telemetry.count("sessionwatch.history_gaps") == 0
    status = watch.session_status(WORKER, changes_since=0)
    assert status.state_changes is not None
    assert status.state_changes.history_gap
    assert telemetry.count("sessionwatch.history_gaps") == 1
    telemetry.assert_low_cardinality()


def test_a_write_the_store_fails_is_counted_by_class_and_its_span_says_error(
    watch: SessionWatch, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_write() -> object:
        raise StoreError("disk I/O error")

    monkeypatch.setattr(watch.store, "write", failing_write)
    with pytest.raises(StoreError):
        record(watch, goal(WORKER))
    monkeypatch.undo()
    with pytest.raises(sessionwatch.InvalidSignal):  # refused before any write: not a store error
        watch.record(WORKER, kind="no-such-kind", actor=Actor.system(), summary=SECRET)

    assert telemetry.count("sessionwatch.store.errors", error_type="StoreError") == 1
    assert sum(v for (name, _), v in telemetry.delta().items() if name == "sessionwatch.store.errors") == 1
    assert telemetry.count("sessionwatch.signals.recorded", sessionwatch_signal_kind="goal_changed") == 0
    (span,) = telemetry.spans("sessionwatch.record")
    assert span.attributes == {
        "sessionwatch.store": telemetry.store,
        "sessionwatch.outcome": "error",
        "error.type": "StoreError",
    }
    assert span.status.description is None  # an error's text may name a key
    telemetry.assert_low_cardinality()


WITHOUT_OPENTELEMETRY = """
import sys
sys.modules["opentelemetry"] = None  # unimportable, as when the extra is not installed
import sessionwatch
from sessionwatch import Actor, SignalKind

with sessionwatch.open({url!r}) as watch:
    watch.record_spawn(requester_key="agent:main:main", child_key="agent:main:subagent:c", child_run_id="r")
    watch.record("agent:main:subagent:c", kind=SignalKind.GOAL_CHANGED, actor=Actor.system(), summary="s")
    assert len(watch.drain("agent:main:main")) == 1
    assert watch.prune().ran
loaded = sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry")
assert loaded == ["opentelemetry"] and sys.modules["opentelemetry"] is None, loaded
print("ok")
"""


@pytest.mark.parametrize("url", ["memory://", "sqlite"])
def test_without_opentelemetry_nothing_of_it_is_imported(url: str, tmp_path: object) -> None:
    target = f"sqlite:///{tmp_path}/plain.db" if url == "sqlite" else url
    code = textwrap.dedent(WITHOUT_OPENTELEMETRY).format(url=target)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr
