"""`SessionTools`, the session tools' façade: the seven tools over ports.

Shell code: each tool reads the `SessionWatch` registry, applies the pure rules of
`sessionwatch.domain.tools`, and reads transcripts or talks to the runtime through the host's ports
at call time. Message text is never stored: titles, previews, history and replies pass through.
`sessions_send` lives in `tools_send`, `sessions_spawn`, completions and `subagents` in `tools_spawn`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Final

from sessionwatch.adapters.app.reports import RunRecord
from sessionwatch.adapters.tools import send as tools_send
from sessionwatch.adapters.tools import spawn as tools_spawn
from sessionwatch.adapters.tools.core import (
    Caller,
    Params,
    Refusal,
    ToolsCore,
    identity,
    latest_runs,
    run_status,
)
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.tools.config import ToolContext
from sessionwatch.domain.tools.errors import InvalidToolInput
from sessionwatch.domain.tools.policy import check_tool_allowed, effective_tools
from sessionwatch.domain.tools.ports import AnnounceRequest, RunOutcome, RuntimeFailure, Usage
from sessionwatch.domain.tools.prompts import derived_title
from sessionwatch.domain.tools.results import (
    A2APlan,
    A2AReport,
    JsonObject,
    ModelInfo,
    RouteInfo,
    RuntimeInfo,
    SessionListRow,
    SessionsHistoryResult,
    SessionsListResult,
    SessionsSendResult,
    SessionsSpawnResult,
    SessionStatusResult,
    SessionsYieldResult,
    SubagentsResult,
    TaskInfo,
    TimeInfo,
    ToolResult,
    UsageInfo,
)
from sessionwatch.domain.tools.session_keys import (
    GLOBAL_KEY,
    SESSION_KINDS,
    SessionKind,
    display_key,
    origin_provider_from_key,
)
from sessionwatch.domain.tools.transcript_pages import (
    SESSIONS_LIST_PLACEHOLDER,
    history_page,
    sanitize_history,
)
from sessionwatch.domain.tools.visibility import visibility_note, visible_in_list
from sessionwatch.projections.models import RegistryEntry, SessionStatus

DEFAULT_LIST_LIMIT: Final = 100
MAX_LIST_ROWS: Final = 200
MAX_LIST_MESSAGES: Final = 20
ENRICHED_ROWS: Final = 100
DEFAULT_HISTORY_LIMIT: Final = 200
MAX_HISTORY_LIMIT: Final = 1000
DEFAULT_YIELD_MESSAGE: Final = "Turn yielded."
YIELD_UNSUPPORTED: Final = "Yield not supported in this context"
_MINUTE_MS: Final = 60_000
_USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "context_tokens",
    "cache_read",
    "cache_write",
)

ParamsArg = Mapping[str, object] | None


class SessionTools(ToolsCore):
    """The session tools over a `SessionWatch` and the host's ports.

    ```python
    tools = SessionTools(watch, transcripts=..., runtime=..., models=..., config=ToolsConfig(...))
    tools.sessions_list(ToolContext(session_key="agent:main:main"), {"kinds": ["main"]}).to_json()
    ```

    Every tool takes `(ctx, params=None, /, **kw)` with camelCase or snake_case keys (unknown keys
    are ignored). A method runs its tool whatever the caller's tool policy; `call(ctx, name, ...)`
    first refuses a tool outside `effective_tools(ctx)` with `ToolNotAllowed`. `ids` (default uuid4)
    makes child keys and error run ids; `clock` (default the `SessionWatch`'s own, `watch.clock`)
    gives `now`.
    """

    # ------------------------------------------------------------------------------ policy

    def effective_tools(self, ctx: ToolContext) -> tuple[str, ...]:
        """The tools the caller may use, in catalog order."""
        return effective_tools(self.config, depth=self.depth_of(ctx))

    def call(self, ctx: ToolContext, name: str, params: ParamsArg = None, /, **kw: object) -> ToolResult:
        """Run the tool `name` for the caller, refusing one outside its effective tools.

        Raises:
            ToolNotAllowed: `Tool not available: <name>`.
        """
        check_tool_allowed(name, self.effective_tools(ctx))
        tool: Callable[..., ToolResult] = getattr(self, name)
        return tool(ctx, params, **kw)

    # ------------------------------------------------------------------------- sessions_list

    def sessions_list(
        self, ctx: ToolContext, params: ParamsArg = None, /, **kw: object
    ) -> SessionsListResult:
        """`sessions_list`: visible sessions, newest first, enriched through the transcripts port."""
        p = Params(params, kw)
        limit = p.integer("limit", minimum=1, message="limit must be a positive integer", field="limit")
        active_minutes = p.integer(
            "active_minutes",
            minimum=1,
            message="activeMinutes must be a positive integer",
            field="activeMinutes",
        )
        message_limit = p.integer(
            "message_limit",
            minimum=0,
            message="messageLimit must be a non-negative integer",
            field="messageLimit",
        )
        agent = p.text("agent_id")
        if agent is not None and len(agent) > 64:  # noqa: PLR2004 - the schema's maxLength
            raise InvalidToolInput("agentId", "agentId must be 1-64 characters")
        registry = self.registry()
        caller = self.caller(ctx, registry)
        kinds = _kinds(p.get("kinds"))
        label = p.text("label")
        search = (p.text("search") or "").lower()
        archived = p.flag("archived")
        since = self.now_ms() - active_minutes * _MINUTE_MS if active_minutes is not None else None

        def wanted(entry: RegistryEntry) -> bool:
            return (
                self._listable(entry)
                and (kinds is None or self.kind_of(entry) in kinds)
                and (label is None or entry.label == label)
                and (agent is None or entry.agent_id == agent)
                and (not search or _matches(entry, search))
                and (since is None or (entry.updated_at is not None and entry.updated_at >= since))
                and entry.archived == archived
            )

        visible = [entry for entry in registry.entries if self._visible(caller, entry)]
        chosen = sorted(filter(wanted, visible), key=lambda e: (-(e.updated_at or 0), e.session_key))
        chosen = chosen[: min(limit or DEFAULT_LIST_LIMIT, MAX_LIST_ROWS)]
        latest = latest_runs(self.runs())
        children = _children(visible)
        rows = [
            self._row(
                entry,
                index=index,
                latest=latest,
                children=tuple(sorted(children.get(entry.session_key, ()))),
                titles=p.flag("include_derived_titles"),
                last_message=p.flag("include_last_message"),
                messages=min(message_limit or 0, MAX_LIST_MESSAGES),
            )
            for index, entry in enumerate(chosen)
        ]
        return SessionsListResult(
            count=len(rows), sessions=tuple(rows), visibility=visibility_note(caller.visibility)
        )

    def _listable(self, entry: RegistryEntry) -> bool:
        """Never `unknown`; the bare `global` only under global scope."""
        if entry.session_key == "unknown":
            return False
        return entry.session_key != GLOBAL_KEY or self.config.session_scope == "global"

    def _visible(self, caller: Caller, entry: RegistryEntry) -> bool:
        return visible_in_list(
            caller.identity, identity(entry), caller.visibility, self.config.a2a, caller.subtree
        )

    def _row(
        self,
        entry: RegistryEntry,
        *,
        index: int,
        latest: Mapping[SessionIdentity, RunRecord],
        children: tuple[str, ...],
        titles: bool,
        last_message: bool,
        messages: int,
    ) -> SessionListRow:
        kind = self.kind_of(entry)
        run = latest.get(identity(entry))
        title = preview = None
        if entry.session_id is not None and index < ENRICHED_ROWS and (titles or last_message):
            title, preview = self._titles(entry, titles=titles, last_message=last_message)
        return SessionListRow(
            key=self._display(entry.session_key),
            session_id=entry.session_id,
            agent_id=entry.agent_id,
            kind=kind,
            channel=self.channel_of(entry, kind),
            archived=entry.archived,
            pinned=entry.pinned,
            label=entry.label,
            display_name=entry.display_name,
            derived_title=title,
            last_message_preview=preview,
            parent_session_key=entry.parent_session_key or entry.spawned_by,
            updated_at=entry.updated_at,
            state_version=entry.state_version or None,
            model=entry.model_override or entry.model,
            context_tokens=entry.context_tokens,
            total_tokens=entry.total_tokens,
            status=run_status(run) if run is not None else None,
            aborted_last_run=True if entry.aborted_last_run else None,
            child_sessions=children or None,
            messages=self._recent_messages(entry, messages) if messages > 0 else None,
        )

    def _titles(
        self, entry: RegistryEntry, *, titles: bool, last_message: bool
    ) -> tuple[str | None, str | None]:
        """`derivedTitle` and `lastMessagePreview`, reading the transcript only when needed."""
        named = entry.display_name or entry.label or entry.subject
        fields = None
        if last_message or not (named and named.strip()):
            fields = self.transcripts.title_fields(entry.session_key, entry.agent_id)
        title = None
        if titles and entry.session_id is not None:
            title = derived_title(
                display_name=entry.display_name,
                label=entry.label,
                subject=entry.subject,
                first_user_message=fields.first_user_message if fields is not None else None,
                session_id=entry.session_id,
                updated_at=entry.updated_at,
            )
        preview = fields.last_message_preview if last_message and fields is not None else None
        return title, preview

    def _recent_messages(self, entry: RegistryEntry, limit: int) -> tuple[JsonObject, ...]:
        """The last `limit` messages without tool messages, through H2-H7."""
        page = self.transcripts.read_messages(
            entry.session_key, entry.agent_id, limit=limit, offset=None, merged_imports=True
        )
        sanitized = sanitize_history(
            page.messages,
            include_tools=False,
            redact_patterns=self.config.redact_patterns,
            placeholder=SESSIONS_LIST_PLACEHOLDER,
        )
        return sanitized.messages

    def _display(self, key: str) -> str:
        return display_key(key, main_key=self.config.main_key, session_scope=self.config.session_scope)

    # ---------------------------------------------------------------------- sessions_history

    def sessions_history(
        self, ctx: ToolContext, params: ParamsArg = None, /, **kw: object
    ) -> SessionsHistoryResult:
        """`sessions_history`: a sanitized, redacted, bounded page of the transcript."""
        p = Params(params, kw)
        raw = p.text("session_key")
        if raw is None:
            raise InvalidToolInput("sessionKey", "sessionKey is required")
        limit = p.integer("limit", minimum=1, message="limit must be a positive integer", field="limit")
        limit = min(limit or DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT)
        offset = p.integer(
            "offset", minimum=0, message="offset must be a non-negative integer", field="offset"
        )
        registry = self.registry()
        caller = self.caller(ctx, registry)
        found = self.resolve(caller, registry, raw)
        if isinstance(found, Refusal):
            return SessionsHistoryResult(status=found.status, error=found.error)
        refusal = self.access("history", caller, identity(found))
        if refusal is not None:
            return SessionsHistoryResult(status="forbidden", error=refusal)
        page = self.transcripts.read_messages(
            found.session_key, found.agent_id, limit=limit, offset=offset, merged_imports=offset is None
        )
        sanitized = sanitize_history(
            page.messages, include_tools=p.flag("include_tools"), redact_patterns=self.config.redact_patterns
        )
        paging = (
            history_page(
                total=page.total_messages,
                offset=offset,
                oldest_seq=sanitized.oldest_seq,
                rows_read=len(page.messages),
            )
            if offset is not None
            else None
        )
        return SessionsHistoryResult(
            session_key=self._display(found.session_key),
            messages=sanitized.messages,
            truncated=sanitized.truncated,
            dropped_messages=sanitized.dropped_messages,
            content_truncated=sanitized.content_truncated,
            content_redacted=sanitized.content_redacted,
            size_bytes=sanitized.bytes,
            offset=paging.offset if paging is not None else None,
            next_offset=paging.next_offset if paging is not None else None,
            has_more=paging.has_more if paging is not None else None,
            total_messages=paging.total_messages if paging is not None else None,
        )

    # ------------------------------------------------------------------------- sessions_send

    def sessions_send(
        self, ctx: ToolContext, params: ParamsArg = None, /, **kw: object
    ) -> SessionsSendResult:
        """`sessions_send`; an `ok`/`accepted` result's `plan` is for `run_a2a`."""
        return tools_send.sessions_send(self, ctx, Params(params, kw))

    def run_a2a(self, plan: A2APlan) -> A2AReport:
        """The agent-to-agent flow of a send: ping-pong, then the announce step. Never raises."""
        return tools_send.run_a2a(self, plan)

    # ------------------------------------------------------------------------ session_status

    def session_status(
        self, ctx: ToolContext, params: ParamsArg = None, /, **kw: object
    ) -> SessionStatusResult:
        """`session_status`: the session card, its head and, with `changesSince`, the delta.

        Raises:
            UnknownSession: the reference names no session (`Unknown sessionKey|sessionId: <input>`).
            ToolForbidden: visibility or the agent-to-agent policy denies it.
            InvalidToolInput: a bad `changesSince` or `model`.
        """
        p = Params(params, kw)
        changes_since = p.integer(
            "changes_since",
            minimum=0,
            message="changesSince must be a non-negative integer",
            field="changesSince",
        )
        caller, found = self.status_target(
            ctx, p.text("session_key") or "current", agent_id=p.text("agent_id")
        )
        entry, changed = self._apply_model(found, p.get("model")) if p.given("model") else (found, False)
        status = self.watch.session_status(
            entry.session_key, changes_since=changes_since, agent_id=entry.agent_id
        )
        return self._status(ctx, caller, entry, status, changed=changed)

    def _apply_model(self, entry: RegistryEntry, value: object) -> tuple[RegistryEntry, bool]:
        """Blank or `default` clears the override; another model is resolved, checked and set."""
        raw = (value if isinstance(value, str) else str(value)).strip()
        agent = entry.agent_id
        override: str | None = None
        if raw and raw.lower() != "default":
            ref = self.models.resolve(raw, agent)
            if ref is None:
                raise InvalidToolInput("model", f'Unrecognized model "{raw}".')
            if not self.models.is_allowed(ref, agent):
                raise InvalidToolInput("model", f'Model "{ref}" is not allowed.')
            override = None if ref == self.models.default_for(agent) else ref
        if override == entry.model_override:
            return entry, False
        return self.watch.update_session(entry.session_key, agent_id=agent, model_override=override), True

    def _status(
        self,
        ctx: ToolContext,
        caller: Caller,
        entry: RegistryEntry,
        status: SessionStatus,
        *,
        changed: bool,
    ) -> SessionStatusResult:
        agent = entry.agent_id
        default = self.models.default_for(agent)
        runs = self.runs()
        own = [
            r
            for r in runs
            if (r.session_key, r.agent_id) == (entry.session_key, agent) and r.ended_at_ms is None
        ]
        tasks = tuple(
            TaskInfo(run_id=r.run_id, session_key=r.session_key, label=r.label, started_at=r.started_at_ms)
            for r in runs
            if r.requester_key == entry.session_key and r.ended_at_ms is None
        )
        mine = self.is_caller(caller, entry)
        result = SessionStatusResult(
            session_key=self._display(entry.session_key),
            agent_id=agent,
            session_id=entry.session_id,
            kind=self.kind_of(entry),
            changed_model=changed,
            model=ModelInfo(
                active=entry.model_override or entry.model or default,
                default=default,
                override=entry.model_override,
            ),
            thinking_level=entry.thinking_level,
            usage=self._usage(entry),
            time=TimeInfo(now=self.now_ms(), created_at=entry.created_at, updated_at=entry.updated_at),
            runtime=RuntimeInfo(
                state="running" if own else "idle",
                active_run_ids=tuple(r.run_id for r in own),
                sandboxed=entry.sandboxed or (mine and caller.sandboxed),
            ),
            tasks=tasks or None,
            route=_route(entry, ctx, mine=mine),
            state_version=status.state_version,
            state_changes=status.state_changes.to_json() if status.state_changes is not None else None,
            status_text="",
        )
        return result.model_copy(update={"status_text": status_text(result)})

    def _usage(self, entry: RegistryEntry) -> UsageInfo:
        """The stored counters; missing ones backfilled from the transcript's latest usage."""
        known = {name: getattr(entry, name) for name in _USAGE_FIELDS}
        if any(value is None for value in known.values()):
            latest: Usage | None = self.transcripts.latest_usage(entry.session_key, entry.agent_id)
            if latest is not None:
                known = {
                    name: value if value is not None else getattr(latest, name)
                    for name, value in known.items()
                }
        return UsageInfo(**known)

    # ------------------------------------------------------------------------ sessions_spawn

    def sessions_spawn(
        self, ctx: ToolContext, params: ParamsArg = None, /, **kw: object
    ) -> SessionsSpawnResult:
        """`sessions_spawn`: validated, started, recorded; accepted at once."""
        return tools_spawn.sessions_spawn(self, ctx, Params(params, kw))

    def complete_child_run(
        self, run_id: str, outcome: RunOutcome, *, reply: str | None = None
    ) -> AnnounceRequest | None:
        """A spawned child's run ended: record it and request its announce."""
        return tools_spawn.complete_child_run(self, run_id, outcome, reply=reply)

    # ---------------------------------------------------------------- yield and subagents

    def sessions_yield(
        self, ctx: ToolContext, params: ParamsArg = None, /, **kw: object
    ) -> SessionsYieldResult:
        """`sessions_yield`: end the caller's turn through the runtime."""
        p = Params(params, kw)
        message = p.text("message") or DEFAULT_YIELD_MESSAGE
        if ctx.session_key is None:
            return SessionsYieldResult(status="error", error=tools_spawn.NO_SESSION_CONTEXT)
        try:
            yielded = self.runtime.yield_turn(ctx.session_key, message)
        except RuntimeFailure as failure:
            return SessionsYieldResult(status="error", error=failure.message)
        if not yielded:
            return SessionsYieldResult(status="error", error=YIELD_UNSUPPORTED)
        return SessionsYieldResult(status="yielded", message=message)

    def subagents(self, ctx: ToolContext, params: ParamsArg = None, /, **kw: object) -> SubagentsResult:
        """`subagents`: the caller's children's active and recent runs."""
        return tools_spawn.subagents(self, ctx, Params(params, kw))


# ------------------------------------------------------------------------------------ helpers


def _kinds(raw: object) -> frozenset[SessionKind] | None:
    """`kinds`: lowercased, trimmed, unknown values ignored; nothing left means no filter."""
    values = [raw] if isinstance(raw, str) else raw if isinstance(raw, list | tuple) else []
    wanted = {value.strip().lower() for value in values if isinstance(value, str)}
    kinds = frozenset(kind for kind in SESSION_KINDS if kind in wanted)
    return kinds or None


def _matches(entry: RegistryEntry, search: str) -> bool:
    """`search`: a case-insensitive substring of the key, session id, label, display name or subject."""
    fields = (entry.session_key, entry.session_id, entry.label, entry.display_name, entry.subject)
    return any(value is not None and search in value.lower() for value in fields)


def _children(visible: list[RegistryEntry]) -> dict[str, set[str]]:
    """The visible sessions each session spawned or parents directly, by parent key."""
    found: dict[str, set[str]] = {}
    for child in visible:
        for parent in (child.spawned_by, child.parent_session_key):
            if parent is not None and parent != child.session_key:
                found.setdefault(parent, set()).add(child.session_key)
    return found


def _route(entry: RegistryEntry, ctx: ToolContext, *, mine: bool) -> RouteInfo | None:
    """`route`: stored origin (else the provider a conversation key names), active route, delivery."""
    origin = entry.origin.to_json() if entry.origin is not None else None
    if not origin:
        provider = origin_provider_from_key(entry.session_key)
        origin = {"provider": provider} if provider else None
    active = ctx.active_route.to_json() if mine and ctx.active_route is not None else None
    delivery = entry.delivery_context.to_json() if entry.delivery_context is not None else None
    if not (origin or active or delivery):
        return None
    return RouteInfo(origin=origin or None, active=active or None, delivery_context=delivery or None)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat().replace("+00:00", "Z")


def status_text(result: SessionStatusResult) -> str:
    """The `statusText` card.

    One `Label: value` line per present field, then `Route context` and the route as fenced JSON.
    """
    usage = result.usage
    runtime = result.runtime
    lines: list[tuple[str, object]] = [
        ("Session", result.session_key),
        ("Agent", result.agent_id),
        ("Session ID", result.session_id),
        ("Kind", result.kind),
        ("Model", result.model.active),
        ("Default model", result.model.default),
        ("Model override", result.model.override),
        ("Thinking", result.thinking_level),
        ("Input tokens", usage.input_tokens),
        ("Output tokens", usage.output_tokens),
        ("Total tokens", usage.total_tokens),
        ("Context tokens", usage.context_tokens),
        ("Cache read", usage.cache_read),
        ("Cache write", usage.cache_write),
        ("Now", _when(result.time.now)),
        ("Created", _when(result.time.created_at) if result.time.created_at is not None else None),
        ("Updated", _when(result.time.updated_at) if result.time.updated_at is not None else None),
        ("Runtime", runtime.state),
        ("Active runs", ", ".join(runtime.active_run_ids) or None),
        ("Sandboxed", "yes" if runtime.sandboxed else "no"),
        ("Tasks", len(result.tasks) if result.tasks else None),
        ("State version", result.state_version),
    ]
    if result.state_changes is not None:
        events = result.state_changes.get("events")
        count = len(events) if isinstance(events, list) else 0
        gap = " (history gap: refresh the whole state)" if result.state_changes.get("historyGap") else ""
        lines.append(("State changes", f"{count} event{'s' if count != 1 else ''}{gap}"))
    text = "\n".join(f"{label}: {value}" for label, value in lines if value is not None)
    if result.route is not None:
        route = json.dumps(result.route.to_json(), indent=2, ensure_ascii=False)
        text += f"\nRoute context\n```json\n{route}\n```"
    return text
