"""sessionwatch: session state awareness for multi-agent gateways (see README.md and SPEC §13).

`sessionwatch.open()` gives a `SessionWatch` on the embedded SQLite default.
"""

from __future__ import annotations

from sessionwatch.adapters.app.clock import SystemClock
from sessionwatch.adapters.app.reports import AuditReport, PruneReport, RunRecord, SweepReport, TickReport
from sessionwatch.adapters.entry.watch import SessionWatch, SignalInput
from sessionwatch.adapters.entry.watch import open_watch as open  # noqa: A004 - the SPEC names it open()
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.urls import InvalidStoreUrl
from sessionwatch.adapters.tools.session_tools import SessionTools
from sessionwatch.adapters.upstream.monitor import MonitorHandle
from sessionwatch.adapters.upstream.transcripts import (
    JsonlTranscriptProvider,
    TranscriptFormat,
    marker_at_end,
)
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.ports import Clock, Transcripts, UpstreamProvider, Waker
from sessionwatch.domain.registry import Route, SessionMeta
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.signals import Actor, SignalKind, classify_actor, notice_text
from sessionwatch.domain.tools import (
    A2APlan,
    A2AReport,
    AnnounceRequest,
    ChildRunRequest,
    Dispatch,
    DispatchRequest,
    InvalidToolInput,
    InvalidToolPolicy,
    Models,
    Runtime,
    RuntimeFailure,
    RunWait,
    SessionsHistoryResult,
    SessionsListResult,
    SessionsSendResult,
    SessionsSpawnResult,
    SessionStatusResult,
    SessionsYieldResult,
    SubagentsResult,
    TitleFields,
    ToolContext,
    ToolError,
    ToolForbidden,
    ToolNotAllowed,
    ToolsConfig,
    TranscriptPage,
    Usage,
)
from sessionwatch.domain.tools import Transcripts as ToolTranscripts
from sessionwatch.domain.upstream import UpstreamActivity, UpstreamMissing, UpstreamProbe
from sessionwatch.projections.audit import Violation
from sessionwatch.projections.models import (
    Cursor,
    Notice,
    RegistryEntry,
    SessionEntry,
    SessionRow,
    SessionStatus,
    Signal,
    StateChange,
    StateChanges,
    UpstreamLink,
)

__all__ = [
    "A2APlan",
    "A2AReport",
    "Actor",
    "AnnounceRequest",
    "AuditReport",
    "ChildRunRequest",
    "Clock",
    "Cursor",
    "Dispatch",
    "DispatchRequest",
    "InvalidQuery",
    "InvalidSignal",
    "InvalidStoreUrl",
    "InvalidToolInput",
    "InvalidToolPolicy",
    "JsonlTranscriptProvider",
    "Models",
    "MonitorHandle",
    "Notice",
    "PruneReport",
    "RegistryEntry",
    "Retention",
    "Route",
    "RunRecord",
    "RunWait",
    "Runtime",
    "RuntimeFailure",
    "SessionEntry",
    "SessionMeta",
    "SessionRow",
    "SessionStatus",
    "SessionStatusResult",
    "SessionTools",
    "SessionWatch",
    "SessionsHistoryResult",
    "SessionsListResult",
    "SessionsSendResult",
    "SessionsSpawnResult",
    "SessionsYieldResult",
    "Signal",
    "SignalInput",
    "SignalKind",
    "StateChange",
    "StateChanges",
    "StoreError",
    "SubagentsResult",
    "SweepReport",
    "SystemClock",
    "TickReport",
    "TitleFields",
    "ToolContext",
    "ToolError",
    "ToolForbidden",
    "ToolNotAllowed",
    "ToolTranscripts",
    "ToolsConfig",
    "TranscriptFormat",
    "TranscriptPage",
    "Transcripts",
    "UnknownSession",
    "UpstreamActivity",
    "UpstreamLink",
    "UpstreamMissing",
    "UpstreamProbe",
    "UpstreamProvider",
    "Usage",
    "Violation",
    "Waker",
    "classify_actor",
    "marker_at_end",
    "notice_text",
    "open",
]
