"""Pure logic of the session tools: policy, visibility, keys and the history pipeline.

Nothing here performs I/O; the `SessionTools` façade in `sessionwatch.adapters.tools.session_tools` reads
transcripts and talks to the runtime through ports and hands what it read to these functions.
"""

from __future__ import annotations

from sessionwatch.domain.tools.assistant_text import sanitize_assistant_text
from sessionwatch.domain.tools.code_regions import code_regions
from sessionwatch.domain.tools.config import AttachmentSettings, ToolContext, ToolsConfig
from sessionwatch.domain.tools.errors import (
    InvalidToolInput,
    InvalidToolPolicy,
    ToolError,
    ToolForbidden,
    ToolNotAllowed,
)
from sessionwatch.domain.tools.policy import (
    CATALOG,
    SubagentToolPolicy,
    ToolLayers,
    ToolPolicy,
    ToolPolicySettings,
    effective_tools,
)
from sessionwatch.domain.tools.ports import (
    AnnounceRequest,
    AttachmentFile,
    ChildRunRequest,
    Dispatch,
    DispatchRequest,
    InputProvenance,
    Models,
    Runtime,
    RuntimeFailure,
    RunWait,
    TitleFields,
    TranscriptPage,
    Transcripts,
    Usage,
)
from sessionwatch.domain.tools.prompts import (
    inter_session_prompt,
    resolve_ping_pong_turns,
    resolve_spawn_context,
    subagent_task_message,
)
from sessionwatch.domain.tools.redaction import redact_text
from sessionwatch.domain.tools.results import (
    A2APlan,
    A2AReport,
    SessionsHistoryResult,
    SessionsListResult,
    SessionsSendResult,
    SessionsSpawnResult,
    SessionStatusResult,
    SessionsYieldResult,
    SubagentsResult,
)
from sessionwatch.domain.tools.session_keys import classify_kind, derive_channel, is_thread_session_key
from sessionwatch.domain.tools.transcript_pages import SanitizedHistory, sanitize_history
from sessionwatch.domain.tools.visibility import A2APolicy, check_access, effective_visibility

__all__ = [
    "CATALOG",
    "A2APlan",
    "A2APolicy",
    "A2AReport",
    "AnnounceRequest",
    "AttachmentFile",
    "AttachmentSettings",
    "ChildRunRequest",
    "Dispatch",
    "DispatchRequest",
    "InputProvenance",
    "InvalidToolInput",
    "InvalidToolPolicy",
    "Models",
    "RunWait",
    "Runtime",
    "RuntimeFailure",
    "SanitizedHistory",
    "SessionStatusResult",
    "SessionsHistoryResult",
    "SessionsListResult",
    "SessionsSendResult",
    "SessionsSpawnResult",
    "SessionsYieldResult",
    "SubagentToolPolicy",
    "SubagentsResult",
    "TitleFields",
    "ToolContext",
    "ToolError",
    "ToolForbidden",
    "ToolLayers",
    "ToolNotAllowed",
    "ToolPolicy",
    "ToolPolicySettings",
    "ToolsConfig",
    "TranscriptPage",
    "Transcripts",
    "Usage",
    "check_access",
    "classify_kind",
    "code_regions",
    "derive_channel",
    "effective_tools",
    "effective_visibility",
    "inter_session_prompt",
    "is_thread_session_key",
    "redact_text",
    "resolve_ping_pong_turns",
    "resolve_spawn_context",
    "sanitize_assistant_text",
    "sanitize_history",
    "subagent_task_message",
]
