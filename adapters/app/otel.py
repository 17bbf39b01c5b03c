"""The telemetry port on OpenTelemetry's API (the `otel` extra); imported only when it is installed.

The host brings the SDK and installs its tracer and meter providers before it opens the store;
with neither installed this answers the no-op port, so the API alone costs nothing. Span and metric
names, units and attributes are listed in the observability how-to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from opentelemetry import metrics, trace
from opentelemetry.metrics import Meter, MeterProvider
from opentelemetry.trace import Status, StatusCode, Tracer, TracerProvider
from opentelemetry.util.types import Attributes

from sessionwatch.adapters.app.telemetry import NO_TELEMETRY, Span, Telemetry

SCOPE: Final = "sessionwatch"
"""The instrumentation scope of every span and instrument."""

STORE: Final = "sessionwatch.store"
KIND: Final = "sessionwatch.signal.kind"
OUTCOME: Final = "sessionwatch.outcome"
ERROR: Final = "error.type"

_UNSET: Final = frozenset(
    {"ProxyTracerProvider", "NoOpTracerProvider", "_ProxyMeterProvider", "NoOpMeterProvider"}
)
"""The API's own providers: nothing was set up, nothing would be exported."""


def telemetry(store: str) -> Telemetry:
    """The OpenTelemetry port for a store of kind `store`, or the no-op when no provider is set up."""
    tracers, meters = trace.get_tracer_provider(), metrics.get_meter_provider()
    if type(tracers).__name__ in _UNSET and type(meters).__name__ in _UNSET:
        return NO_TELEMETRY
    return OtelTelemetry(store, tracer_provider=tracers, meter_provider=meters)


class OtelSpan(Span):
    """A span of OpenTelemetry's, ended with its outcome."""

    __slots__ = ("_span",)

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def end(self, error: BaseException | None = None) -> None:
        """End it: `outcome` ok, or error with the error's class."""
        span = self._span
        if error is None:
            span.set_attribute(OUTCOME, "ok")
        else:
            span.set_attribute(OUTCOME, "error")
            span.set_attribute(ERROR, type(error).__name__)
            span.set_status(Status(StatusCode.ERROR))  # no description: an error's text may hold a key
        span.end()


class OtelTelemetry(Telemetry):
    """Spans and metrics through the given providers (the global ones by default)."""

    on = True

    def __init__(
        self,
        store: str,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self._store: Attributes = {STORE: store}
        self._store_kind = store
        self._tracer: Tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter: Meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self._signals = meter.create_counter(
            "sessionwatch.signals.recorded", unit="{signal}", description="Signals newly recorded"
        )
        self._opened = meter.create_counter(
            "sessionwatch.notices.opened", unit="{notice}", description="Notices opened"
        )
        self._acknowledged = meter.create_counter(
            "sessionwatch.notices.acknowledged", unit="{notice}", description="Notices acknowledged"
        )
        self._wakes = meter.create_counter(
            "sessionwatch.wakes", unit="{wake}", description="Wakes asked of the waker"
        )
        self._wake_delay = meter.create_histogram(
            "sessionwatch.wake.delay", unit="s", description="From a write's commit to its wake"
        )
        self._gaps = meter.create_counter(
            "sessionwatch.history_gaps",
            unit="{answer}",
            description="Status answers whose history after changes_since was pruned",
        )
        self._errors = meter.create_counter(
            "sessionwatch.store.errors", unit="{error}", description="Writes the store failed"
        )

    def start(self, name: str) -> Span:
        """Open the span `name` with the store's kind."""
        return OtelSpan(self._tracer.start_span(name, attributes=self._store))

    def committed(self, kinds: Sequence[str], opened: int, acknowledged: int) -> None:
        """Count the signals newly recorded by kind and the notices opened and acknowledged."""
        for kind in kinds:
            self._signals.add(1, {STORE: self._store_kind, KIND: str(kind)})  # a plain str, not the enum
        if opened:
            self._opened.add(opened, self._store)
        if acknowledged:
            self._acknowledged.add(acknowledged, self._store)

    def woke(self, *, ok: bool, delay_s: float) -> None:
        """Count the wake by outcome and its delay after the commit."""
        self._wakes.add(1, {STORE: self._store_kind, OUTCOME: "ok" if ok else "error"})
        self._wake_delay.record(delay_s, self._store)

    def history_gap(self) -> None:
        """Count a status answer with a history gap."""
        self._gaps.add(1, self._store)

    def store_error(self, error: BaseException) -> None:
        """Count a failed write by the error's class."""
        self._errors.add(1, {STORE: self._store_kind, ERROR: type(error).__name__})
