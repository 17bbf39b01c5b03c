"""The telemetry port: the spans and metrics of the core's use cases, nothing unless a host asks.

`Telemetry` is the no-op: `on` is False, and every caller checks `on` once before doing anything
for telemetry, so without OpenTelemetry a use case pays one attribute read. With `opentelemetry`
importable and a tracer or meter provider installed by the host before the store is opened,
`core.telemetry_for` answers the OpenTelemetry-backed port (`otel.py`); `opentelemetry` is never
imported when it is not installed (its module spec is looked up, not imported).

Attributes are low-cardinality only: the store kind, the signal kind, the outcome and the error
class; never a key, a payload, a summary or any message text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession


class Span:
    """An open span; the no-op one does nothing."""

    def end(self, error: BaseException | None = None) -> None:
        """Close the span, with its outcome (`error` None: ok)."""


NO_SPAN: Final = Span()


class Telemetry:
    """The no-op telemetry (the default): `on` is False and nothing is measured."""

    on: bool = False
    """Whether anything is measured; callers check it once and skip the rest when False."""

    def start(self, name: str) -> Span:  # noqa: ARG002 - the no-op ignores it
        """Open the span `name` (not made current: it may end on another thread)."""
        return NO_SPAN

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        """The span `name` around a block, ended with the block's outcome."""
        opened = self.start(name)
        try:
            yield
        except BaseException as exc:
            opened.end(exc)
            raise
        opened.end()

    def committed(self, kinds: Sequence[str], opened: int, acknowledged: int) -> None:
        """A write committed: the kinds of signals it newly recorded, the notices it opened and acked."""

    def woke(self, *, ok: bool, delay_s: float) -> None:
        """A wake was asked for `delay_s` seconds after its commit; `ok` False: the waker failed."""

    def history_gap(self) -> None:
        """A `session_status(changes_since=...)` answer said part of the history was pruned."""

    def store_error(self, error: BaseException) -> None:
        """A write failed in the store (or the store was closed)."""


NO_TELEMETRY: Final = Telemetry()


def is_store_error(error: BaseException) -> bool:
    """Whether a failed write failed in the store, not on a typed error of its input."""
    return not isinstance(error, InvalidSignal | InvalidQuery | UnknownSession)


def store_kind(store: object) -> str:
    """`memory`, `sqlite`, `postgresql`, or `other` for a store of the host's own."""
    name = type(store).__name__.lower()
    for kind, marker in (("memory", "memory"), ("sqlite", "sqlite"), ("postgresql", "postgres")):
        if marker in name:
            return kind
    return "other"
