"""What the session tools return: frozen models with the tool's JSON.

`to_json()` gives the JSON object the tool reports: camelCase keys, `None` omitted, times in epoch
milliseconds. `to_json_text()` is that object as compact JSON. Values only; nothing here reads
or writes anything.
"""

from __future__ import annotations

import json
from typing import ClassVar, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from sessionwatch.domain.tools.visibility import VisibilityNote
from sessionwatch.domain.wire import WireModel

JsonObject: TypeAlias = dict[str, JsonValue]
RunStatus: TypeAlias = Literal["running", "done", "failed", "timeout", "killed"]
StopReason: TypeAlias = Literal["reply_skip", "empty", "max_turns", "no_reply", "disabled"]


class ToolResult(WireModel):
    """A tool result: frozen; its JSON is camelCase with unset (None) fields omitted, nested ones too."""

    _wire_exclude_none: ClassVar[bool] = True

    def to_json_text(self) -> str:
        """The tool's JSON as compact text (`separators=(",", ":")`, non-ASCII unescaped)."""
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=False)


# ----------------------------------------------------------------------------- sessions_list


class SessionListRow(ToolResult):
    """One `sessions_list` row: `archived`/`pinned` always, the rest only when known."""

    key: str
    session_id: str | None = None
    agent_id: str
    kind: str
    channel: str
    archived: bool = False
    pinned: bool = False
    label: str | None = None
    display_name: str | None = None
    derived_title: str | None = None
    last_message_preview: str | None = None
    parent_session_key: str | None = None
    updated_at: int | None = None
    state_version: int | None = None
    """Only when the head is > 0."""
    model: str | None = None
    context_tokens: int | None = None
    total_tokens: int | None = None
    status: RunStatus | None = None
    aborted_last_run: bool | None = None
    child_sessions: tuple[str, ...] | None = None
    messages: tuple[JsonObject, ...] | None = None


class SessionsListResult(ToolResult):
    """`{"count", "sessions", "visibility"?}`."""

    count: int
    sessions: tuple[SessionListRow, ...]
    visibility: VisibilityNote | None = None


# -------------------------------------------------------------------------- sessions_history


class SessionsHistoryResult(ToolResult):
    """A sanitized history page, or `{"status": "forbidden"|"error", "error"}`."""

    status: Literal["forbidden", "error"] | None = None
    error: str | None = None
    session_key: str | None = None
    messages: tuple[JsonObject, ...] | None = None
    truncated: bool | None = None
    dropped_messages: bool | None = None
    content_truncated: bool | None = None
    content_redacted: bool | None = None
    size_bytes: int | None = Field(default=None, serialization_alias="bytes")
    """The compact-JSON UTF-8 size of `messages` (JSON `bytes`)."""
    offset: int | None = None
    next_offset: int | None = None
    has_more: bool | None = None
    total_messages: int | None = None


# ----------------------------------------------------------------------------- sessions_send


class A2APlan(BaseModel):
    """The agent-to-agent follow-up of an `ok`/`accepted` send, for `SessionTools.run_a2a`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    requester_key: str | None
    requester_agent_id: str
    requester_channel: str | None
    target_key: str
    target_agent_id: str
    display_key: str
    message: str
    """The original message, before the inter-session annotation."""
    round_one_reply: str | None
    announce_timeout_seconds: int
    max_ping_pong_turns: int


class A2AReport(BaseModel):
    """What `run_a2a` did: ping-pong steps run, why it stopped, and whether it announced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: int
    stopped_by: StopReason
    announced: bool


class SendDelivery(ToolResult):
    """`{"status": "pending"|"skipped", "mode": "announce"}`."""

    status: Literal["pending", "skipped"]
    mode: Literal["announce"] = "announce"


class SessionsSendResult(ToolResult):
    """A `sessions_send` outcome; `plan` (not in the JSON) is the A2A follow-up, if any."""

    run_id: str
    status: Literal["accepted", "ok", "no_reply", "timeout", "error", "forbidden"]
    error: str | None = None
    sent_before_error: bool | None = None
    session_key: str | None = None
    target_disposition: Literal["queued", "steered"] | None = None
    delivery: SendDelivery | None = None
    reply: str | None = None
    message: str | None = None
    watched: bool | None = None
    plan: A2APlan | None = Field(default=None, exclude=True)


# ---------------------------------------------------------------------------- session_status


class ModelInfo(ToolResult):
    """`model`: the active model, the agent default, and the session override if any."""

    active: str
    default: str
    override: str | None = None


class UsageInfo(ToolResult):
    """`usage`: the token counters known for the session."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    context_tokens: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None


class TimeInfo(ToolResult):
    """`time`, epoch ms."""

    now: int
    created_at: int | None = None
    updated_at: int | None = None


class RuntimeInfo(ToolResult):
    """`runtime`: whether a run is in flight."""

    state: Literal["running", "idle"]
    active_run_ids: tuple[str, ...] = ()
    sandboxed: bool = False


class TaskInfo(ToolResult):
    """One active child run in `tasks`."""

    run_id: str
    session_key: str
    label: str | None = None
    status: RunStatus = "running"
    started_at: int


class RouteInfo(ToolResult):
    """`route`: where the session came from, the active conversation, and the persisted delivery."""

    origin: dict[str, str] | None = None
    active: dict[str, str] | None = None
    delivery_context: dict[str, str] | None = None


class SessionStatusResult(ToolResult):
    """`session_status`; `state_changes` is exactly the core's `stateChanges` object."""

    ok: Literal[True] = True
    session_key: str
    agent_id: str
    session_id: str | None = None
    kind: str
    changed_model: bool
    model: ModelInfo
    thinking_level: str | None = None
    usage: UsageInfo
    time: TimeInfo
    runtime: RuntimeInfo
    tasks: tuple[TaskInfo, ...] | None = None
    route: RouteInfo | None = None
    state_version: int
    state_changes: JsonObject | None = None
    status_text: str


# ---------------------------------------------------------------------------- sessions_spawn


class AttachmentReceipt(ToolResult):
    """One materialized attachment: its name, decoded size and SHA-256."""

    name: str
    size_bytes: int = Field(serialization_alias="bytes")
    sha256: str


class AttachmentsReceipt(ToolResult):
    """`attachments`: `{"count", "totalBytes", "files", "relDir"}`."""

    count: int
    total_bytes: int
    files: tuple[AttachmentReceipt, ...]
    rel_dir: str


class SessionsSpawnResult(ToolResult):
    """`sessions_spawn`: accepted at once, or `forbidden`/`error` with the reason."""

    status: Literal["accepted", "forbidden", "error"]
    error: str | None = None
    child_session_key: str | None = None
    run_id: str | None = None
    mode: Literal["run", "session"] | None = None
    note: str | None = None
    model_applied: bool | None = None
    warning: str | None = None
    attachments: AttachmentsReceipt | None = None


# --------------------------------------------------------------------- yield and subagents


class SessionsYieldResult(ToolResult):
    """`sessions_yield`: `{"status": "yielded", "message"}` or `{"status": "error", "error"}`."""

    status: Literal["yielded", "error"]
    message: str | None = None
    error: str | None = None


class SubagentRun(ToolResult):
    """One run in `subagents` `active`/`recent`."""

    run_id: str
    session_key: str
    label: str | None = None
    status: RunStatus
    started_at: int
    ended_at: int | None = None
    runtime_ms: int | None = None


class SubagentsResult(ToolResult):
    """`subagents` `list`, or `{"status": "error", "error"}` without a session context."""

    status: Literal["ok", "error"]
    error: str | None = None
    action: Literal["list"] | None = None
    requester_session_key: str | None = None
    caller_session_key: str | None = None
    caller_is_subagent: bool | None = None
    total: int | None = None
    active: tuple[SubagentRun, ...] | None = None
    recent: tuple[SubagentRun, ...] | None = None
    text: str | None = None
