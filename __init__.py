"""sessionwatch: session state awareness for multi-agent gateways (README.md, and the guides in docs/).

`sessionwatch.open()` gives a `SessionWatch` on the embedded SQLite default. The names below load
on first use (PEP 562), so `import sessionwatch` stays cheap: the store drivers, the session tools
and the CLI are imported only by the code that uses them.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = (
    False  # not `typing`'s: importing it costs more than this module (type checkers know the name)
)
if TYPE_CHECKING:  # what type checkers see; at run time `__getattr__` imports the same objects
    from sessionwatch.adapters.app.clock import SystemClock
    from sessionwatch.adapters.app.reports import AuditReport, PruneReport, RunRecord, SweepReport, TickReport
    from sessionwatch.adapters.entry.watch import SessionWatch, SignalInput
    from sessionwatch.adapters.entry.watch_open import open_watch as open  # noqa: A004 - the public API's name
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
    from sessionwatch.domain.signals import Actor, SignalKind, classify_actor
    from sessionwatch.domain.text import notice_text
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

    __version__: str

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

_HOMES: dict[str, tuple[str, ...]] = {
    "sessionwatch.adapters.app.clock": ("SystemClock",),
    "sessionwatch.adapters.app.reports": (
        "AuditReport",
        "PruneReport",
        "RunRecord",
        "SweepReport",
        "TickReport",
    ),
    "sessionwatch.adapters.entry.watch": ("SessionWatch", "SignalInput"),
    "sessionwatch.adapters.entry.watch_open": ("open",),
    "sessionwatch.adapters.stores.port": ("StoreError",),
    "sessionwatch.adapters.stores.urls": ("InvalidStoreUrl",),
    "sessionwatch.adapters.tools.session_tools": ("SessionTools",),
    "sessionwatch.adapters.upstream.monitor": ("MonitorHandle",),
    "sessionwatch.adapters.upstream.transcripts": (
        "JsonlTranscriptProvider",
        "TranscriptFormat",
        "marker_at_end",
    ),
    "sessionwatch.domain.errors": (
        "InvalidQuery",
        "InvalidSignal",
        "UnknownSession",
    ),
    "sessionwatch.domain.ports": (
        "Clock",
        "Transcripts",
        "UpstreamProvider",
        "Waker",
    ),
    "sessionwatch.domain.registry": (
        "Route",
        "SessionMeta",
    ),
    "sessionwatch.domain.retention": ("Retention",),
    "sessionwatch.domain.signals": (
        "Actor",
        "SignalKind",
        "classify_actor",
    ),
    "sessionwatch.domain.text": ("notice_text",),
    "sessionwatch.domain.tools": (
        "A2APlan",
        "A2AReport",
        "AnnounceRequest",
        "ChildRunRequest",
        "Dispatch",
        "DispatchRequest",
        "InvalidToolInput",
        "InvalidToolPolicy",
        "Models",
        "Runtime",
        "RuntimeFailure",
        "RunWait",
        "SessionsHistoryResult",
        "SessionsListResult",
        "SessionsSendResult",
        "SessionsSpawnResult",
        "SessionStatusResult",
        "SessionsYieldResult",
        "SubagentsResult",
        "TitleFields",
        "ToolContext",
        "ToolError",
        "ToolForbidden",
        "ToolNotAllowed",
        "ToolsConfig",
        "TranscriptPage",
        "Usage",
        "ToolTranscripts",
    ),
    "sessionwatch.domain.upstream": (
        "UpstreamActivity",
        "UpstreamMissing",
        "UpstreamProbe",
    ),
    "sessionwatch.projections.audit": ("Violation",),
    "sessionwatch.projections.models": (
        "Cursor",
        "Notice",
        "RegistryEntry",
        "SessionEntry",
        "SessionRow",
        "SessionStatus",
        "Signal",
        "StateChange",
        "StateChanges",
        "UpstreamLink",
    ),
}
"""Module -> the public names it defines: the run-time twin of the `TYPE_CHECKING` imports."""

_RENAMED: dict[str, str] = {"open": "open_watch", "ToolTranscripts": "Transcripts"}
"""Public name -> its name in its home module, where the two differ."""

_HOME_OF: dict[str, str] = {name: module for module, names in _HOMES.items() for name in names}


def _version() -> str:
    from sessionwatch.adapters.version import installed_version  # noqa: PLC0415 - read once, on first use

    return installed_version()


if not TYPE_CHECKING:  # hidden from type checkers: an unknown name stays an error for them

    def __getattr__(name: str) -> object:
        if name == "__version__":
            value: object = _version()
        elif name in _HOME_OF:
            value = getattr(importlib.import_module(_HOME_OF[name]), _RENAMED.get(name, name))
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value  # the next look-up is a plain module attribute
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
