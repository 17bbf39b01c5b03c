"""`sessions_send` and its agent-to-agent follow-up. Shell code.

The send resolves and checks its target, dispatches the annotated message through the runtime,
registers the explicit watch after a successful dispatch, and waits for the reply when asked. The
A2A flow (`run_a2a`) runs later, on the host's schedule: ping-pong steps, then the announce step.
Its failures are logged (run id and error class, never message text) and never raised.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from sessionwatch.adapters.tools.core import Caller, Params, Refusal, Registry, ToolsCore
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.keys import SessionIdentity, agent_id_of, is_subagent_key
from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.errors import InvalidToolInput
from sessionwatch.domain.tools.ports import (
    Dispatch,
    DispatchRequest,
    InputProvenance,
    RuntimeFailure,
    RunWait,
)
from sessionwatch.domain.tools.prompts import (
    ANNOUNCE_STEP_MESSAGE,
    NO_REPLY_MESSAGE,
    SEND_SELF_TARGET_ERROR,
    SEND_TARGET_REQUIRED_ERROR,
    SEND_THREAD_TARGET_ERROR,
    SOURCE_DELIVERED_MESSAGE,
    a2a_announce_prompt,
    a2a_reply_prompt,
    agent_message_context,
    inter_session_prompt,
    is_announce_skip,
    is_reply_skip,
    is_silent_reply,
    no_label_message,
)
from sessionwatch.domain.tools.results import A2APlan, A2AReport, SendDelivery, SessionsSendResult, StopReason
from sessionwatch.domain.tools.session_keys import (
    announce_route_from_key,
    display_key,
    is_cron_run_key,
    is_thread_session_key,
)

if TYPE_CHECKING:
    from sessionwatch.domain.tools.config import ToolContext
    from sessionwatch.projections.models import RegistryEntry

logger = logging.getLogger("sessionwatch")

DEFAULT_SEND_TIMEOUT_SECONDS = 30
FIRE_AND_FORGET_ANNOUNCE_SECONDS = 30
MAX_FIRST_REPLY_WAIT_SECONDS = 60
_MESSAGE_FIELDS = ("message", "send_message", "content", "text")


class _Failure(Exception):  # noqa: N818 - an internal early return, never seen by callers
    """A check refused the send before dispatch."""

    def __init__(
        self, status: Literal["error", "forbidden"], error: str, session_key: str | None = None
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.session_key = session_key


def _message(params: Params) -> str:
    for name in _MESSAGE_FIELDS:
        value = params.get(name)
        if isinstance(value, str) and value.strip():
            return value
    raise InvalidToolInput("message", "message is required")


def _target(core: ToolsCore, caller: Caller, registry: Registry, params: Params) -> SessionIdentity:
    """The session the send names: `sessionKey`, else `label` (+ `agentId`), else `agentId`'s main."""
    session_key = params.text("session_key")
    label = params.text("label")
    agent = params.text("agent_id")
    if session_key is not None:
        found = core.resolve(caller, registry, session_key)
        if isinstance(found, Refusal):
            raise _Failure(found.status, found.error)
        return SessionIdentity(found.session_key, found.agent_id)
    if label is not None:
        matches = [
            entry
            for entry in registry.entries
            if entry.label == label and (agent is None or entry.agent_id == agent)
        ]
        if caller.visibility.restricted_to_spawned:  # label lookups search only the subtree
            matches = [entry for entry in matches if entry.session_key in caller.subtree]
        if not matches:
            raise _Failure("error", no_label_message(label))
        matches.sort(key=lambda entry: (-(entry.updated_at or 0), entry.session_key))
        return SessionIdentity(matches[0].session_key, matches[0].agent_id)
    if agent is not None:
        if agent not in {*core.config.agent_ids, caller.agent_id}:
            raise _Failure("error", f"agent not found: {agent}")
        return SessionIdentity(core.main_key_of(agent), agent)
    raise _Failure("error", SEND_TARGET_REQUIRED_ERROR)


def _checked_target(
    core: ToolsCore, caller: Caller, registry: Registry, params: Params, *, waited: bool
) -> SessionIdentity:
    """The target after the checks: resolution, self (waited), visibility, thread-scoped, agent-to-agent.

    A session outside the caller's visibility is refused for visibility before anything else is said
    of it. The thread refusal comes before the agent-to-agent policy. A refusal echoes the
    `sessionKey` the caller passed, never the key an id resolved to; a target named by `label`
    (no `sessionKey`) is named in the thread refusal only when the caller may message its agent.
    """
    target = _target(core, caller, registry, params)
    echoed = params.text("session_key")
    if waited and caller.has_session and target == caller.identity:
        raise _Failure("error", SEND_SELF_TARGET_ERROR, echoed)
    verdict = core.verdict("send", caller, target)
    if not verdict.allowed and not verdict.agent_to_agent:
        raise _Failure("forbidden", verdict.error or "", echoed)
    if is_thread_session_key(target.session_key):
        by_label = echoed is None and params.text("label") is not None
        named = target.session_key if by_label and verdict.allowed else echoed
        raise _Failure("error", SEND_THREAD_TARGET_ERROR, named)
    if not verdict.allowed:
        raise _Failure("forbidden", verdict.error or "", echoed)
    return target


def sessions_send(core: ToolsCore, ctx: ToolContext, params: Params) -> SessionsSendResult:
    """`sessions_send`: checks, dispatch, watch, then the reply when `timeoutSeconds > 0`."""
    message = _message(params)
    timeout = params.integer(
        "timeout_seconds",
        minimum=0,
        message="timeoutSeconds must be a non-negative integer",
        field="timeoutSeconds",
    )
    timeout = DEFAULT_SEND_TIMEOUT_SECONDS if timeout is None else timeout
    watch_requested = params.flag("watch")
    run_id = core.ids()
    registry = core.registry()
    caller = core.caller(ctx, registry)
    try:
        target = _checked_target(core, caller, registry, params, waited=timeout > 0)
    except _Failure as failure:
        return SessionsSendResult(
            run_id=run_id,
            status=failure.status,
            error=failure.error,
            session_key=failure.session_key,
        )
    shown = display_key(
        target.session_key, main_key=core.config.main_key, session_scope=core.config.session_scope
    )
    entry = registry.get(*target)
    if entry is None:  # `agentId` alone: that agent's main session is created when missing
        entry = core.watch.update_session(target.session_key, agent_id=target.agent_id)
    source = caller.key if caller.has_session else None
    try:
        dispatch = core.runtime.dispatch(
            _dispatch_request(
                ctx,
                source=source,
                target=target,
                shown=shown,
                message=message,
                timeout=timeout,
                run_id=run_id,
            )
        )
    except RuntimeFailure as failure:
        return SessionsSendResult(run_id=run_id, status="error", error=failure.message, session_key=shown)
    watched = _register_watch(core, caller, dispatch, target) if watch_requested else None
    return _after_dispatch(
        core,
        ctx,
        caller,
        entry,
        _Sent(
            dispatch=dispatch, target=target, shown=shown, message=message, timeout=timeout, watched=watched
        ),
    )


def _dispatch_request(
    ctx: ToolContext,
    *,
    source: str | None,
    target: SessionIdentity,
    shown: str,
    message: str,
    timeout: int,
    run_id: str,
) -> DispatchRequest:
    return DispatchRequest(
        session_key=target.session_key,
        agent_id=target.agent_id,
        message=inter_session_prompt(message, source_session=source, source_channel=ctx.channel),
        extra_system_prompt=agent_message_context(
            requester_session=source, requester_channel=ctx.channel, target_session=shown
        ),
        provenance=InputProvenance(source_session_key=source, source_channel=ctx.channel),
        timeout_seconds=timeout,
        idempotency_key=run_id,
    )


def _register_watch(core: ToolsCore, caller: Caller, dispatch: Dispatch, target: SessionIdentity) -> bool:
    """An explicit watch: the requester watches the session that accepted the message, from its head."""
    if not caller.has_session:
        return False
    accepted_agent = agent_id_of(dispatch.session_key) or target.agent_id
    try:
        return core.watch.watch(caller.key, dispatch.session_key, target_agent_id=accepted_agent)
    except InvalidSignal:
        return False


class _Sent:
    """A dispatched send: what the result and the A2A plan are built from."""

    def __init__(
        self,
        *,
        dispatch: Dispatch,
        target: SessionIdentity,
        shown: str,
        message: str,
        timeout: int,
        watched: bool | None,
    ) -> None:
        self.dispatch = dispatch
        self.target = target
        self.shown = shown
        self.message = message
        self.timeout = timeout
        self.watched = watched

    def result(
        self,
        *,
        status: Literal["accepted", "ok", "no_reply", "timeout", "error"],
        error: str | None = None,
        sent_before_error: bool | None = None,
        target_disposition: Literal["queued", "steered"] | None = None,
        delivery: SendDelivery | None = None,
        reply: str | None = None,
        message: str | None = None,
        plan: A2APlan | None = None,
    ) -> SessionsSendResult:
        """A result after the dispatch: the run, the target's display key, and `watched` if asked."""
        return SessionsSendResult(
            run_id=self.dispatch.run_id,
            status=status,
            error=error,
            sent_before_error=sent_before_error,
            session_key=self.shown,
            target_disposition=target_disposition,
            delivery=delivery,
            reply=reply,
            message=message,
            watched=self.watched,
            plan=plan,
        )


def _after_dispatch(
    core: ToolsCore, ctx: ToolContext, caller: Caller, entry: RegistryEntry, sent: _Sent
) -> SessionsSendResult:
    dispatch = sent.dispatch
    steered = dispatch.disposition == "steered"
    if sent.timeout == 0:
        return _accepted(core, ctx, caller, sent, skipped=steered)
    try:
        waited = core.runtime.wait(dispatch.run_id, sent.timeout)
    except RuntimeFailure as failure:
        waited = RunWait(status="error", error=failure.message)
    if waited.status == "timeout" and not waited.terminal:
        return _accepted(core, ctx, caller, sent, skipped=steered)
    if waited.status == "timeout":
        return sent.result(
            status="timeout", error=waited.error or "agent run timed out", sent_before_error=True
        )
    if waited.status == "error":
        return sent.result(status="error", error=waited.error or "agent error", sent_before_error=True)
    if is_silent_reply(waited.reply_text):
        note = SOURCE_DELIVERED_MESSAGE if waited.source_reply_delivered else NO_REPLY_MESSAGE
        return sent.result(status="no_reply", message=note)
    own_native_child = is_subagent_key(entry.session_key) and caller.key in {
        entry.spawned_by,
        entry.parent_session_key,
    }
    skipped = steered or own_native_child
    plan = None if skipped else _plan(core, ctx, caller, sent, round_one=waited.reply_text)
    return sent.result(
        status="ok",
        delivery=SendDelivery(status="skipped" if skipped else "pending"),
        reply=waited.reply_text,
        plan=plan,
    )


def _accepted(
    core: ToolsCore, ctx: ToolContext, caller: Caller, sent: _Sent, *, skipped: bool
) -> SessionsSendResult:
    plan = None if skipped else _plan(core, ctx, caller, sent, round_one=None)
    return sent.result(
        status="accepted",
        target_disposition=sent.dispatch.disposition,
        delivery=SendDelivery(status="skipped" if skipped else "pending"),
        plan=plan,
    )


def _plan(
    core: ToolsCore, ctx: ToolContext, caller: Caller, sent: _Sent, *, round_one: str | None
) -> A2APlan:
    accepted = sent.dispatch.session_key
    return A2APlan(
        run_id=sent.dispatch.run_id,
        requester_key=caller.key if caller.has_session else None,
        requester_agent_id=caller.agent_id,
        requester_channel=ctx.channel,
        target_key=accepted,
        target_agent_id=agent_id_of(accepted) or sent.target.agent_id,
        display_key=sent.shown,
        message=sent.message,
        round_one_reply=round_one,
        announce_timeout_seconds=FIRE_AND_FORGET_ANNOUNCE_SECONDS if sent.timeout == 0 else sent.timeout,
        max_ping_pong_turns=core.config.max_ping_pong_turns,
    )


# ------------------------------------------------------------------------------------ A2A flow


def announce_route(core: ToolsCore, key: str, agent_id: str) -> Route | None:
    """Where the announce goes: the target's delivery context, else the route its key names."""
    entry = core.registry().get(key, agent_id)
    if entry is not None and entry.delivery_context is not None and entry.delivery_context.channel:
        return entry.delivery_context
    parsed = announce_route_from_key(key)
    if parsed is None:
        return None
    return Route(channel=parsed.channel, to=parsed.to, thread_id=parsed.thread_id)


class _Flow:
    """The A2A flow's progress, so a failure still reports how far it got."""

    def __init__(self) -> None:
        self.turns = 0
        self.stopped_by: StopReason = "disabled"
        self.announced = False

    def report(self) -> A2AReport:
        return A2AReport(turns=self.turns, stopped_by=self.stopped_by, announced=self.announced)


def run_a2a(core: ToolsCore, plan: A2APlan) -> A2AReport:
    """The agent-to-agent flow of one send; never raises."""
    flow = _Flow()
    try:
        _run_flow(core, plan, flow)
    except Exception as exc:  # noqa: BLE001 - the flow runs in the background: failures are logged
        logger.warning(
            "sessionwatch: sessions_send agent-to-agent flow failed (run=%s error=%s)",
            plan.run_id,
            type(exc).__name__,
            extra={"run_id": plan.run_id, "error": type(exc).__name__},
        )
    return flow.report()


def _first_reply(core: ToolsCore, plan: A2APlan) -> str | None:
    if plan.round_one_reply is not None and plan.round_one_reply.strip():
        return plan.round_one_reply
    waited = core.runtime.wait(plan.run_id, min(plan.announce_timeout_seconds, MAX_FIRST_REPLY_WAIT_SECONDS))
    if waited.status == "ok" and waited.reply_text is not None and waited.reply_text.strip():
        return waited.reply_text
    return None


def _run_flow(core: ToolsCore, plan: A2APlan, flow: _Flow) -> None:
    primary = _first_reply(core, plan)
    if primary is None:
        flow.stopped_by = "no_reply"
        return
    latest = primary
    route = announce_route(core, plan.target_key, plan.target_agent_id)
    target_channel = route.channel if route is not None and route.channel else "unknown"
    requester = plan.requester_key
    timeout = plan.announce_timeout_seconds
    if (
        plan.max_ping_pong_turns > 0
        and requester is not None
        and requester != plan.target_key
        and not is_cron_run_key(requester)
    ):
        flow.stopped_by = "max_turns"
        speaker, listener, incoming = requester, plan.target_key, latest
        for turn in range(1, plan.max_ping_pong_turns + 1):
            role: Literal["requester", "target"] = "requester" if speaker == requester else "target"
            reply = core.runtime.run_agent_step(
                speaker,
                plan.requester_agent_id if role == "requester" else plan.target_agent_id,
                incoming,
                a2a_reply_prompt(
                    current_role=role,
                    turn=turn,
                    max_turns=plan.max_ping_pong_turns,
                    requester_session=requester,
                    requester_channel=plan.requester_channel,
                    target_session=plan.display_key,
                    target_channel=target_channel,
                ),
                timeout,
                InputProvenance(
                    source_session_key=listener,
                    source_channel=plan.requester_channel if listener == requester else target_channel,
                ),
            )
            flow.turns += 1
            if reply is None or not reply.strip():
                flow.stopped_by = "empty"
                break
            if is_reply_skip(reply):
                flow.stopped_by = "reply_skip"
                break
            latest = incoming = reply
            speaker, listener = listener, speaker
    announcement = core.runtime.run_agent_step(
        plan.target_key,
        plan.target_agent_id,
        ANNOUNCE_STEP_MESSAGE,
        a2a_announce_prompt(
            original_message=plan.message,
            round_one_reply=primary,
            latest_reply=latest,
            requester_session=requester,
            requester_channel=plan.requester_channel,
            target_session=plan.display_key,
            target_channel=target_channel,
        ),
        timeout,
        InputProvenance(source_session_key=requester, source_channel=plan.requester_channel),
    )
    if route is None or announcement is None or not announcement.strip() or is_announce_skip(announcement):
        return
    try:
        core.runtime.announce(route, announcement.strip())
    except Exception as exc:  # noqa: BLE001 - a failed delivery is logged, never raised
        logger.warning(
            "sessionwatch: sessions_send announce delivery failed (run=%s channel=%s error=%s)",
            plan.run_id,
            route.channel,
            type(exc).__name__,
            extra={"run_id": plan.run_id, "channel": route.channel, "error": type(exc).__name__},
        )
        return
    flow.announced = True
