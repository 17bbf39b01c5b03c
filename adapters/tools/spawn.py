"""`sessions_spawn`, child-run completion and `subagents`.

Shell code. A spawn checks its parameters and limits, registers the child, starts its run through the
runtime, then records `child_spawned` (which seeds the requester's cursor on the child) and the run.
A completion records the terminal signal, ends the run and asks the host to announce the result.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Final, Literal

from sessionwatch.adapters.tools.core import Caller, Params, Registry, ToolsCore, run_status
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.keys import agent_id_of, is_subagent_key
from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.attachments import AttachmentError, DecodedAttachments, decode_attachments
from sessionwatch.domain.tools.errors import InvalidToolInput
from sessionwatch.domain.tools.ports import AnnounceRequest, ChildRunRequest, RunOutcome, RuntimeFailure
from sessionwatch.domain.tools.prompts import (
    ANNOUNCE_SKIP,
    NO_REPLY,
    SPAWN_ACP_ATTACHMENTS_ERROR,
    SPAWN_FORK_REQUIRES_SUBAGENT_ERROR,
    SPAWN_FORK_REQUIRES_TRANSCRIPT_ERROR,
    SPAWN_SESSION_MODE_ERROR,
    SpawnMode,
    announce_status_line,
    resolve_spawn_context,
    resolve_spawn_mode,
    spawn_depth_error,
    spawn_note,
    spawn_unsupported_parameter_message,
    subagent_task_message,
)
from sessionwatch.domain.tools.results import (
    AttachmentReceipt,
    AttachmentsReceipt,
    SessionsSpawnResult,
    SubagentRun,
    SubagentsResult,
)

if TYPE_CHECKING:
    from sessionwatch.adapters.app.reports import RunRecord
    from sessionwatch.domain.tools.config import ToolContext
    from sessionwatch.projections.models import RegistryEntry

UNSUPPORTED_SPAWN_KEYS: Final = (
    "target",
    "transport",
    "channel",
    "to",
    "threadId",
    "thread_id",
    "replyTo",
    "reply_to",
)
"""Spawn check 1, in the order they are reported."""

_AGENT_ID: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}", re.IGNORECASE)
ATTACHMENTS_DIR: Final = ".openclaw/attachments"
NO_SESSION_CONTEXT: Final = "No session context"
DEFAULT_RECENT_MINUTES: Final = 30
MAX_RECENT_MINUTES: Final = 1440
NO_SUBAGENTS_TEXT: Final = "No active or recent subagents."
_MINUTE_MS: Final = 60_000
_SILENT_COMPLETIONS: Final = frozenset({ANNOUNCE_SKIP, NO_REPLY})


class _Refused(Exception):  # noqa: N818 - an internal early return, never seen by callers
    def __init__(self, status: Literal["forbidden", "error"], error: str) -> None:
        super().__init__(error)
        self.result = SessionsSpawnResult(status=status, error=error)


def _choice(raw: object, allowed: tuple[str, ...]) -> str | None:
    value = raw.strip().lower() if isinstance(raw, str) else ""
    return value if value in allowed else None


def _run_timeout(core: ToolsCore, params: Params) -> int:
    """`runTimeoutSeconds` (alias `timeoutSeconds`): floored, at least 0; else the configured default."""
    for name in ("run_timeout_seconds", "timeout_seconds"):
        value = params.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return max(0, math.floor(value))
    return core.config.default_run_timeout_seconds


def _target_agent(core: ToolsCore, caller: Caller, params: Params) -> str:
    """Spawn check 7: a well-formed agent id the requester's agent may spawn, or the requester's own."""
    raw = params.text("agent_id")
    if raw is None:
        if core.config.require_agent_id:
            raise _Refused("error", "sessions_spawn requires agentId")
        return caller.agent_id
    if _AGENT_ID.fullmatch(raw) is None:
        raise _Refused("error", f'Invalid agentId "{raw}". Agent IDs must match [a-z0-9][a-z0-9_-]{{0,63}}.')
    agent = raw.lower()
    if agent == caller.agent_id.lower():
        return caller.agent_id
    allowed = core.config.allow_agents_for(caller.agent_id)
    if "*" not in allowed and agent not in {name.strip().lower() for name in allowed}:
        listed = ", ".join(allowed) if allowed else "none"
        raise _Refused("forbidden", f"agentId is not allowed for sessions_spawn (allowed: {listed})")
    return agent


def _active_children(core: ToolsCore, requester: str) -> int:
    return sum(1 for run in core.runs() if run.requester_key == requester and run.ended_at_ms is None)


class _Plan:
    """A spawn that passed every check."""

    def __init__(
        self,
        *,
        task: str,
        runtime: Literal["subagent", "acp"],
        mode: SpawnMode,
        context: Literal["isolated", "fork"],
        agent: str,
        sandboxed: bool,
        thread: bool,
        attachments: DecodedAttachments | None,
    ) -> None:
        self.task = task
        self.runtime = runtime
        self.mode = mode
        self.context = context
        self.agent = agent
        self.sandboxed = sandboxed
        self.thread = thread
        self.attachments = attachments


def _shape_checks(params: Params) -> tuple[str, Literal["subagent", "acp"], str | None, bool, SpawnMode]:
    """Spawn checks 1-4: unsupported keys and fork-with-acp raise; acp attachments and mode refuse."""
    for key in UNSUPPORTED_SPAWN_KEYS:
        if params.raw.get(key) is not None:
            raise InvalidToolInput(key, spawn_unsupported_parameter_message(key))
    task = params.get("task")
    if not isinstance(task, str) or not task.strip():
        raise InvalidToolInput("task", "task is required")
    runtime: Literal["subagent", "acp"] = "acp" if _choice(params.get("runtime"), ("acp",)) else "subagent"
    given_context = _choice(params.get("context"), ("isolated", "fork"))
    if given_context == "fork" and runtime == "acp":
        raise InvalidToolInput("context", SPAWN_FORK_REQUIRES_SUBAGENT_ERROR)
    if _attachments_given(params) and runtime == "acp":
        raise _Refused("error", SPAWN_ACP_ATTACHMENTS_ERROR)
    thread = params.flag("thread")
    mode = resolve_spawn_mode(params.get("mode"), thread=thread)
    if mode == "session" and not thread:
        raise _Refused("error", SPAWN_SESSION_MODE_ERROR)
    return task, runtime, given_context, thread, mode


def _attachments_given(params: Params) -> bool:
    raw = params.get("attachments")
    return raw is not None and raw != []


def _limit_checks(core: ToolsCore, caller: Caller) -> None:
    """Spawn checks 5-6: the requester's depth and its active children."""
    refusal = spawn_depth_error(caller.depth, core.config.max_spawn_depth)
    if refusal is not None:
        raise _Refused("forbidden", refusal)
    active = _active_children(core, caller.key)
    if active >= core.config.max_children_per_agent:
        raise _Refused(
            "forbidden",
            "sessions_spawn has reached max active children for this session "
            f"({active}/{core.config.max_children_per_agent})",
        )


def _sandbox_checks(core: ToolsCore, caller: Caller, params: Params, agent: str) -> bool:
    """Spawn check 8: whether the child runs sandboxed, refusing a sandbox escape."""
    sandboxed = agent in core.config.sandboxed_agents or (agent == caller.agent_id and caller.sandboxed)
    if not sandboxed and caller.sandboxed:
        raise _Refused(
            "forbidden",
            "Sandboxed sessions cannot spawn unsandboxed subagents. "
            "Set a sandboxed target agent or use the same agent runtime.",
        )
    if not sandboxed and _choice(params.get("sandbox"), ("inherit", "require")) == "require":
        raise _Refused(
            "forbidden",
            'sessions_spawn sandbox="require" needs a sandboxed target runtime. '
            'Pick a sandboxed agentId or use sandbox="inherit".',
        )
    return sandboxed


def _checks(core: ToolsCore, caller: Caller, params: Params) -> _Plan:
    """Spawn checks 1-10, in order: the first two raise, the others refuse with JSON."""
    task, runtime, given_context, thread, mode = _shape_checks(params)
    _limit_checks(core, caller)
    agent = _target_agent(core, caller, params)
    sandboxed = _sandbox_checks(core, caller, params, agent)
    context = resolve_spawn_context(
        given_context, runtime=runtime, thread=thread, default_spawn_context=core.config.default_spawn_context
    )
    if context == "fork" and (caller.entry is None or caller.entry.session_id is None):
        raise _Refused("error", SPAWN_FORK_REQUIRES_TRANSCRIPT_ERROR)
    decoded = None
    if _attachments_given(params):
        try:
            decoded = decode_attachments(params.get("attachments"), core.config.attachments)
        except AttachmentError as exc:
            raise _Refused("error", str(exc)) from None
    return _Plan(
        task=task,
        runtime=runtime,
        mode=mode,
        context=context,
        agent=agent,
        sandboxed=sandboxed,
        thread=thread,
        attachments=decoded,
    )


def _model(core: ToolsCore, params: Params, agent: str) -> tuple[str | None, bool | None, str | None]:
    """The child's model override, whether the requested model applied, and why not (a warning)."""
    raw = params.text("model")
    if raw is None:
        return None, None, None
    ref = core.models.resolve(raw, agent)
    if ref is None:
        return None, False, f'Unrecognized model "{raw}"; the subagent uses its default model.'
    if not core.models.is_allowed(ref, agent):
        return None, False, f'Model "{ref}" is not allowed; the subagent uses its default model.'
    return ref, True, None


def sessions_spawn(core: ToolsCore, ctx: ToolContext, params: Params) -> SessionsSpawnResult:
    """`sessions_spawn`: accepted at once; the child's result is announced on completion."""
    registry = core.registry()
    caller = core.caller(ctx, registry)
    if not caller.has_session:
        return SessionsSpawnResult(status="error", error=NO_SESSION_CONTEXT)
    try:
        plan = _checks(core, caller, params)
    except _Refused as refused:
        return refused.result
    model, model_applied, warning = _model(core, params, plan.agent)
    child = f"agent:{plan.agent}:subagent:{core.ids()}"
    depth = caller.depth + 1
    maximum = core.config.max_spawn_depth
    label = params.text("label")
    cleanup: Literal["delete", "keep"] = (
        "delete" if plan.mode == "run" and _choice(params.get("cleanup"), ("delete",)) else "keep"
    )
    now = core.now_ms()
    try:
        core.watch.update_session(
            child,
            agent_id=plan.agent,
            spawned_by=caller.key,
            parent_session_key=caller.key,
            spawn_depth=depth,
            subagent_role="orchestrator" if depth < maximum else "leaf",
            sandboxed=plan.sandboxed,
            label=label,
            model_override=model,
            thinking_level=params.text("thinking"),
            thread_binding=ctx.active_route if plan.thread else None,
            created_at=now,
            updated_at=now,
        )
    except InvalidSignal as exc:  # e.g. a label longer than the registry holds
        raise InvalidToolInput(exc.field, f"{exc.field}: {exc.reason}") from None
    rel_dir = f"{ATTACHMENTS_DIR}/{core.ids()}" if plan.attachments is not None else None
    request = ChildRunRequest(
        child_session_key=child,
        agent_id=plan.agent,
        requester_key=caller.key,
        message=subagent_task_message(depth, maximum, plan.task, plan.mode),
        task=plan.task,
        label=label,
        runtime=plan.runtime,
        mode=plan.mode,
        context=plan.context,
        model=model,
        thinking=params.text("thinking"),
        run_timeout_seconds=_run_timeout(core, params),
        cleanup=cleanup,
        thread=plan.thread,
        sandboxed=plan.sandboxed,
        depth=depth,
        max_depth=maximum,
        attachments=plan.attachments.files if plan.attachments is not None else (),
        attachments_dir=rel_dir,
        mount_path=_mount_path(params),
        idempotency_key=child,
    )
    try:
        run_id = core.runtime.start_child_run(request)
    except RuntimeFailure as failure:  # the provisional child goes
        core.watch.delete_session(child, agent_id=plan.agent)
        return SessionsSpawnResult(status="error", error=failure.message, child_session_key=child)
    core.watch.record_spawn(
        requester_key=caller.key, child_key=child, child_run_id=run_id, agent_id=plan.agent
    )
    core.watch.run_started(
        child, run_id, agent_id=plan.agent, requester_key=caller.key, label=label, mode=plan.mode
    )
    core.remember_origin(run_id, ctx.origin)
    return SessionsSpawnResult(
        status="accepted",
        child_session_key=child,
        run_id=run_id,
        mode=plan.mode,
        note=spawn_note(plan.mode),
        model_applied=model_applied,
        warning=warning,
        attachments=_receipt(plan.attachments, rel_dir),
    )


def _mount_path(params: Params) -> str | None:
    attach_as = params.get("attach_as")
    if isinstance(attach_as, dict):
        mount = attach_as.get("mountPath", attach_as.get("mount_path"))
        if isinstance(mount, str) and mount.strip():
            return mount.strip()
    return None


def _receipt(decoded: DecodedAttachments | None, rel_dir: str | None) -> AttachmentsReceipt | None:
    if decoded is None or rel_dir is None:
        return None
    return AttachmentsReceipt(
        count=len(decoded.files),
        total_bytes=decoded.total_bytes,
        files=tuple(
            AttachmentReceipt(name=file.name, size_bytes=len(file.content), sha256=file.sha256)
            for file in decoded.files
        ),
        rel_dir=rel_dir,
    )


# ---------------------------------------------------------------------------------- completion


def complete_child_run(
    core: ToolsCore, run_id: str, outcome: RunOutcome, *, reply: str | None = None
) -> AnnounceRequest | None:
    """A spawned child's run ended: signal, end the run, request the announce.

    Returns the announce request handed to the runtime, or None when there is none: the reply was
    `ANNOUNCE_SKIP`/`NO_REPLY`, or the run had already been completed.

    Raises:
        InvalidToolInput: an unknown run id, or an outcome other than ok, error, timeout, cancelled.
    """
    if outcome not in {"ok", "error", "timeout", "cancelled"}:
        raise InvalidToolInput("outcome", "outcome must be ok, error, timeout or cancelled")
    run = next((r for r in core.runs() if r.run_id == run_id), None)
    if run is None:
        raise InvalidToolInput("run_id", f"Unknown runId: {run_id}")
    if run.ended_at_ms is not None:
        return None
    requester = run.requester_key
    if requester is not None:
        core.watch.record_run_terminal(
            child_key=run.session_key,
            run_id=run_id,
            requester_key=requester,
            outcome=outcome,
            agent_id=run.agent_id,
        )
    core.watch.run_ended(run.session_key, run_id, agent_id=run.agent_id, outcome=outcome)
    origin = core.forget_origin(run_id)
    if requester is None or (reply is not None and reply.strip() in _SILENT_COMPLETIONS):
        return None
    registry = core.registry()
    requester_agent = agent_id_of(requester) or run.agent_id
    requester_entry = registry.get(requester, requester_agent)
    internal = is_subagent_key(requester) or (
        requester_entry is not None and bool(requester_entry.spawn_depth)
    )
    child_entry = registry.get(run.session_key, run.agent_id)
    request = AnnounceRequest(
        requester_key=requester,
        requester_agent_id=requester_agent,
        child_session_key=run.session_key,
        run_id=run_id,
        label=run.label,
        outcome=outcome,
        status_line=announce_status_line(outcome),
        reply=reply,
        route=None if internal else completion_route(child_entry, requester_entry, origin),
        deliver=not internal,
    )
    core.runtime.request_announce(request)
    return request


def completion_route(
    child: RegistryEntry | None, requester: RegistryEntry | None, origin: Route | None
) -> Route | None:
    """The bound thread/topic route first; else the requester's origin, filled from its last route.

    The origin is the spawning context's, else the requester's stored origin. Its missing `to` and
    `accountId` come from the requester's `last_to`/`last_account_id` when `last_channel` is the
    origin's channel.
    """
    if child is not None and child.thread_binding is not None:
        return child.thread_binding
    route = origin or (requester.origin if requester is not None else None)
    if route is None or requester is None or route.channel is None:
        return route
    if requester.last_channel != route.channel:
        return route
    return route.model_copy(
        update={
            "to": route.to or requester.last_to,
            "account_id": route.account_id or requester.last_account_id,
        }
    )


# ---------------------------------------------------------------------------------- subagents


def _recent_minutes(params: Params) -> int:
    value = params.get("recent_minutes")
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return max(1, min(MAX_RECENT_MINUTES, math.floor(value)))
    return DEFAULT_RECENT_MINUTES


def _subagent_run(run: RunRecord) -> SubagentRun:
    ended = run.ended_at_ms
    return SubagentRun(
        run_id=run.run_id,
        session_key=run.session_key,
        label=run.label,
        status=run_status(run),
        started_at=run.started_at_ms,
        ended_at=ended,
        runtime_ms=ended - run.started_at_ms if ended is not None else None,
    )


def subagents(core: ToolsCore, ctx: ToolContext, params: Params) -> SubagentsResult:
    """`subagents` `list`: the requester's children's runs, active and recently ended."""
    action = params.text("action") or "list"
    if action != "list":
        raise InvalidToolInput("action", f"Unknown action: {action}")
    if ctx.session_key is None:
        return SubagentsResult(status="error", error=NO_SESSION_CONTEXT)
    recent_minutes = _recent_minutes(params)
    registry: Registry = core.registry()
    caller = core.caller(ctx, registry)
    since = core.now_ms() - recent_minutes * _MINUTE_MS
    mine = [run for run in core.runs() if run.requester_key == caller.key]
    active = tuple(_subagent_run(run) for run in mine if run.ended_at_ms is None)
    recent = tuple(
        _subagent_run(run) for run in mine if run.ended_at_ms is not None and run.ended_at_ms >= since
    )
    lines = [f"{run.label or run.session_key}: {run.status}" for run in (*active, *recent)]
    return SubagentsResult(
        status="ok",
        action="list",
        requester_session_key=caller.key,
        caller_session_key=caller.key,
        caller_is_subagent=caller.is_subagent,
        total=len(active) + len(recent),
        active=active,
        recent=recent,
        text="\n".join(lines) if lines else NO_SUBAGENTS_TEXT,
    )
