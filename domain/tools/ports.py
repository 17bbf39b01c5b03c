"""Ports the session tools talk through: the host owns transcripts, runs and models.

Typing protocols and the values that cross them; no behaviour. Message text only ever travels through
these ports at call time: nothing here is stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.ports import Transcripts as CoreTranscripts
from sessionwatch.domain.registry import Route

_FROZEN = ConfigDict(frozen=True, extra="forbid")

Disposition: TypeAlias = Literal["queued", "steered"]
WaitStatus: TypeAlias = Literal["ok", "timeout", "error"]
RunOutcome: TypeAlias = Literal["ok", "error", "timeout", "cancelled"]


class RuntimeFailure(Exception):  # noqa: N818 - public API name
    """The host's runtime could not do what was asked; `message` is what the tool reports."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


# ------------------------------------------------------------------------------- transcripts


@dataclass(frozen=True, slots=True)
class TranscriptPage:
    """A page of a session's transcript, oldest first, and how many messages the transcript holds.

    Messages are the host's JSON objects as read (`role`, `content`, `__openclaw: {"seq"}` ...); the
    tools copy them and never mutate or keep them.
    """

    messages: Sequence[Mapping[str, object]] = field(default_factory=tuple)
    total_messages: int = 0


class TitleFields(BaseModel):
    """What `sessions_list` reads to title a row: the first user message and a preview."""

    model_config = _FROZEN

    first_user_message: str | None = None
    last_message_preview: str | None = None


class Usage(BaseModel):
    """The latest token counters of a session's transcript (`session_status` backfill)."""

    model_config = _FROZEN

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    context_tokens: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None


@runtime_checkable
class Transcripts(CoreTranscripts, Protocol):
    """The host's transcript store: the core port plus what the session tools read."""

    def read_messages(
        self, key: str, agent_id: str, *, limit: int, offset: int | None, merged_imports: bool
    ) -> TranscriptPage:
        """The newest `limit` messages, or with `offset` o the seqs `[max(1, T-o-limit+1), T-o]`.

        `merged_imports` is False for explicit offset pages: they never merge external CLI imports.
        """
        ...

    def title_fields(self, key: str, agent_id: str) -> TitleFields:
        """The first user message and the last message preview of the session."""
        ...

    def latest_usage(self, key: str, agent_id: str) -> Usage | None:
        """The newest usage counters in the transcript, or None."""
        ...


# ----------------------------------------------------------------------------------- runtime


class InputProvenance(BaseModel):
    """Where a turn's input came from (JSON `kind`, `sourceSessionKey`, `sourceChannel`, `sourceTool`)."""

    model_config = _FROZEN

    kind: Literal["inter_session"] = "inter_session"
    source_session_key: str | None = None
    source_channel: str | None = None
    source_tool: str = "sessions_send"

    def to_json(self) -> dict[str, str]:
        """camelCase, unset parts omitted."""
        out = {
            "kind": self.kind,
            "sourceSessionKey": self.source_session_key,
            "sourceChannel": self.source_channel,
            "sourceTool": self.source_tool,
        }
        return {k: v for k, v in out.items() if v is not None}


class DispatchRequest(BaseModel):
    """One `sessions_send` message to run in the target session."""

    model_config = _FROZEN

    session_key: str
    agent_id: str
    message: str
    """The annotated text: inter-session header, explanation, then the message."""
    extra_system_prompt: str
    provenance: InputProvenance
    timeout_seconds: int
    idempotency_key: str
    """A fresh id the runtime may adopt as the run id."""


class Dispatch(BaseModel):
    """What the runtime did with a dispatch: the run, the session that accepted it, and how."""

    model_config = _FROZEN

    run_id: str
    session_key: str
    disposition: Disposition = "queued"


class RunWait(BaseModel):
    """The end of a wait on a run: its status, reply, error, and whether it is over."""

    model_config = _FROZEN

    status: WaitStatus
    reply_text: str | None = None
    error: str | None = None
    terminal: bool = True
    """For a `timeout`: False while the run is still going (the send is then only `accepted`)."""
    source_reply_delivered: bool = False
    """The target delivered its final reply to its own source conversation."""


class AttachmentFile(BaseModel):
    """One decoded `sessions_spawn` attachment the runtime materializes in the child's workspace."""

    model_config = _FROZEN

    name: str
    content: bytes
    sha256: str


class ChildRunRequest(BaseModel):
    """A `sessions_spawn` child run to start: its first visible message and its settings."""

    model_config = _FROZEN

    child_session_key: str
    agent_id: str
    requester_key: str | None
    message: str
    """The first visible message: `[Subagent Context] ...` then `[Subagent Task]: <task>`."""
    task: str
    label: str | None = None
    runtime: Literal["subagent", "acp"] = "subagent"
    mode: Literal["run", "session"] = "run"
    context: Literal["isolated", "fork"] = "isolated"
    model: str | None = None
    thinking: str | None = None
    run_timeout_seconds: int = 0
    cleanup: Literal["delete", "keep"] = "keep"
    thread: bool = False
    sandboxed: bool = False
    depth: int = 1
    max_depth: int = 1
    attachments: tuple[AttachmentFile, ...] = ()
    attachments_dir: str | None = None
    """Where the attachments go, relative to the child's workspace."""
    mount_path: str | None = None
    """`attachAs.mountPath`, when the caller asked for one."""
    idempotency_key: str


class AnnounceRequest(BaseModel):
    """A finished child run to announce to its requester."""

    model_config = _FROZEN

    requester_key: str
    requester_agent_id: str
    child_session_key: str
    run_id: str
    label: str | None = None
    outcome: RunOutcome
    status_line: str
    """`completed successfully`, `failed`, `timed out` or `unknown`."""
    reply: str | None = None
    route: Route | None = None
    deliver: bool = True
    """False for a sub-agent requester: the result is injected internally, not delivered to a channel."""


@runtime_checkable
class Runtime(Protocol):
    """The host's agent runtime: runs turns, waits on them, delivers, and yields."""

    def dispatch(self, request: DispatchRequest) -> Dispatch:
        """Start (or queue, or steer into) a run of the target; raises `RuntimeFailure`."""
        ...

    def wait(self, run_id: str, timeout_seconds: float) -> RunWait:
        """Wait up to `timeout_seconds` for the run; raises `RuntimeFailure`."""
        ...

    def run_agent_step(  # noqa: PLR0917 - the port's positional signature
        self,
        key: str,
        agent_id: str,
        message: str,
        extra_system_prompt: str,
        timeout_seconds: float,
        provenance: InputProvenance,
    ) -> str | None:
        """Run one nested turn of `key` and return its reply text (None: no reply)."""
        ...

    def announce(self, route: Route, text: str) -> None:
        """Deliver `text` to a channel route."""
        ...

    def start_child_run(self, request: ChildRunRequest) -> str:
        """Start a spawned child's run and return its run id; raises `RuntimeFailure`."""
        ...

    def request_announce(self, request: AnnounceRequest) -> None:
        """Hand a finished child run to the host's announce pipeline."""
        ...

    def yield_turn(self, key: str, message: str) -> bool:
        """End the session's current turn; False when yielding is not supported there."""
        ...


# ------------------------------------------------------------------------------------ models


@runtime_checkable
class Models(Protocol):
    """The host's model catalog (`session_status` `model`, `sessions_spawn` `model`)."""

    def resolve(self, raw: str, agent_id: str) -> str | None:
        """The model reference `raw` names (an alias or a `provider/model`), or None."""
        ...

    def is_allowed(self, ref: str, agent_id: str) -> bool:
        """Whether the agent may use the model."""
        ...

    def default_for(self, agent_id: str) -> str:
        """The agent's default model reference."""
        ...
