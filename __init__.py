"""sessionwatch: session state awareness for multi-agent gateways (see README.md and SPEC §13).

`sessionwatch.open()` gives a `SessionWatch` on the embedded SQLite default.
"""

from __future__ import annotations

from sessionwatch.adapters.clock import SystemClock
from sessionwatch.adapters.store import StoreError
from sessionwatch.adapters.transcript_provider import JsonlTranscriptProvider, TranscriptFormat, marker_at_end
from sessionwatch.adapters.upstream import MonitorHandle
from sessionwatch.adapters.urls import InvalidStoreUrl
from sessionwatch.adapters.watch import SessionWatch, SignalInput
from sessionwatch.adapters.watch import open_watch as open  # noqa: A004 - the SPEC names it open()
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.ports import Clock, Transcripts, UpstreamProvider, Waker
from sessionwatch.domain.registry import Route, SessionMeta
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.signals import Actor, SignalKind, classify_actor, notice_text
from sessionwatch.domain.upstream import UpstreamActivity, UpstreamMissing, UpstreamProbe
from sessionwatch.projections.audit import Violation
from sessionwatch.projections.models import (
    AuditReport,
    Cursor,
    Notice,
    PruneReport,
    RegistryEntry,
    RunRecord,
    SessionEntry,
    SessionRow,
    SessionStatus,
    Signal,
    StateChange,
    StateChanges,
    SweepReport,
    TickReport,
    UpstreamLink,
)

__all__ = [
    "Actor",
    "AuditReport",
    "Clock",
    "Cursor",
    "InvalidQuery",
    "InvalidSignal",
    "InvalidStoreUrl",
    "JsonlTranscriptProvider",
    "MonitorHandle",
    "Notice",
    "PruneReport",
    "RegistryEntry",
    "Retention",
    "Route",
    "RunRecord",
    "SessionEntry",
    "SessionMeta",
    "SessionRow",
    "SessionStatus",
    "SessionWatch",
    "Signal",
    "SignalInput",
    "SignalKind",
    "StateChange",
    "StateChanges",
    "StoreError",
    "SweepReport",
    "SystemClock",
    "TickReport",
    "TranscriptFormat",
    "Transcripts",
    "UnknownSession",
    "UpstreamActivity",
    "UpstreamLink",
    "UpstreamMissing",
    "UpstreamProbe",
    "UpstreamProvider",
    "Violation",
    "Waker",
    "classify_actor",
    "marker_at_end",
    "notice_text",
    "open",
]
