"""The MCP server's tools for one calling session: argument models and what each tool runs.

Shell code over `AsyncSessionWatch` and the session tools' own rules: references, visibility and the
`sessions_list` rows come from `SessionTools` (run on a worker thread over a blocking view of the
asyncio façade), every write from the core. The argument models' JSON Schema is each tool's input
schema. Needs nothing from the `mcp` package.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from sessionwatch.adapters.app.reports import RunOutcome, RunRecord
from sessionwatch.adapters.entry.aio import AsyncSessionWatch
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.tools.core import status_target_in
from sessionwatch.adapters.tools.session_tools import SessionTools
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.ports import Clock
from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.domain.tools.errors import ToolError, ToolForbidden
from sessionwatch.domain.tools.ports import (
    AnnounceRequest,
    ChildRunRequest,
    Dispatch,
    DispatchRequest,
    InputProvenance,
    RuntimeFailure,
    RunWait,
    TitleFields,
    TranscriptPage,
    Usage,
)
from sessionwatch.domain.watch_cursor import why_never_notified
from sessionwatch.projections.models import Notice, RegistryEntry, SessionStatus, Signal

T = TypeVar("T")
JsonObject: TypeAlias = dict[str, Any]

TOOL_ERRORS: Final = (ToolError, InvalidQuery, InvalidSignal, UnknownSession, StoreError, RuntimeFailure)
"""The library's typed refusals: a tool reports their message as an MCP tool error."""

NOT_HERE: Final = "not available from the sessionwatch MCP server"

WATCHING_FOLLOWS_STATUS: Final = {
    "sessions_watch": "this server watches only a session whose status the caller may read. ",
    "sessions_unwatch": "this server unwatches only a session whose status the caller may read. ",
}
"""Why a watch tool's visibility refusal quotes the status rule: a notice must be reconcilable."""


# ------------------------------------------------------------------------------ argument models


class _Arguments(BaseModel):
    """camelCase on the wire (snake_case accepted); unknown arguments are ignored, as the tools do."""

    model_config = ConfigDict(
        frozen=True, extra="ignore", alias_generator=to_camel, populate_by_name=True, strict=False
    )


class SessionStatusArguments(_Arguments):
    """`session_status`: a session's head (stateVersion) and, with changesSince, the changes after it."""

    session_key: str = Field(
        "current",
        description="the session: its key, `current` (default: the calling session), `main`, or a "
        "session id; bare keys take the calling session's agent unless agentId is given",
    )
    changes_since: int | None = Field(
        None,
        description="return every change after this sequence (the notice's changesSince); an integer >= 0",
        json_schema_extra={"minimum": 0},
    )
    limit: int = Field(200, description="page size, clamped into [1, 200]")
    agent_id: str | None = Field(None, description="the agent id of a bare sessionKey")


class SessionsListArguments(_Arguments):
    """`sessions_list`: the sessions the calling session may see, newest first."""

    kinds: list[str] | None = Field(
        None, description="only these kinds: main, group, cron, hook, node, other (others are ignored)"
    )
    label: str | None = Field(None, description="only sessions with exactly this label")
    agent_id: str | None = Field(
        None, description="only this agent's sessions", json_schema_extra={"minLength": 1, "maxLength": 64}
    )
    search: str | None = Field(
        None, description="case-insensitive substring of key, session id, label, display name or subject"
    )
    active_minutes: int | None = Field(
        None, description="only sessions updated in the last N minutes", json_schema_extra={"minimum": 1}
    )
    archived: bool = Field(False, description="true: only archived sessions; false: only the others")  # noqa: FBT003
    limit: int | None = Field(
        None,
        description="at most this many rows (default 100, at most 200)",
        json_schema_extra={"minimum": 1},
    )
    include_derived_titles: bool = Field(False, description="add a derivedTitle to each row")  # noqa: FBT003


class SessionTargetArguments(_Arguments):
    """`sessions_watch` / `sessions_unwatch`: the session to watch or stop watching."""

    session_key: str = Field(description="the watched session: its key, `main`, or a session id")
    agent_id: str | None = Field(None, description="the agent id of a bare sessionKey")


class SessionNoticesArguments(_Arguments):
    """`session_notices`: the calling session's pending notices."""

    ack: bool = Field(
        False,  # noqa: FBT003
        description="acknowledge them (drain): the next notice for a target comes only with a newer change",
    )


def arguments_error(exc: ValidationError) -> str:
    """One line naming each argument of the wrong type, as the caller wrote it (camelCase)."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(to_camel(str(part)) if isinstance(part, str) else str(part) for part in error["loc"])
        parts.append(f"{where or 'arguments'}: {error['msg']}")
    return "; ".join(parts)


def named_for_the_caller(exc: BaseException) -> str:
    """The library's message; a core field name (`changes_since: ...`) written as the argument's name."""
    if isinstance(exc, InvalidQuery | InvalidSignal):
        return f"{to_camel(exc.field)}: {exc.reason}"
    return str(exc)


# --------------------------------------------------------------------- the tools' blocking view


class BlockingWatch:
    """An `AsyncSessionWatch` seen from a worker thread: each call runs on its loop and waits.

    `SessionTools` reads the registry synchronously; the server runs each of its calls with
    `asyncio.to_thread`, so the loop keeps serving while this view waits for it. Never call it on
    the loop's own thread: it would wait for itself.
    """

    def __init__(self, watch: AsyncSessionWatch, loop: asyncio.AbstractEventLoop) -> None:
        self._watch = watch
        self._loop = loop

    def _wait(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    @property
    def clock(self) -> Clock:
        """The façade's clock."""
        return self._watch.clock

    def registry_entries(self) -> list[RegistryEntry]:
        """Every known session's registry entry."""
        return self._wait(self._watch.registry_entries())

    def registry_entry(self, key: str, *, agent_id: str | None = None) -> RegistryEntry | None:
        """A known session's registry entry, or None."""
        return self._wait(self._watch.registry_entry(key, agent_id=agent_id))

    def update_session(self, key: str, *, agent_id: str | None = None, **fields: object) -> RegistryEntry:
        """Set registry fields of a session."""
        return self._wait(self._watch.update_session(key, agent_id=agent_id, **fields))

    def delete_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Delete one session identity."""
        self._wait(self._watch.delete_session(key, agent_id=agent_id))

    def runs(self) -> list[RunRecord]:
        """The runs this process heard of."""
        return self._wait(self._watch.runs())

    def run_started(
        self,
        key: str,
        run_id: str,
        *,
        agent_id: str | None = None,
        requester_key: str | None = None,
        label: str | None = None,
        mode: str | None = None,
    ) -> None:
        """A run of the session began."""
        self._wait(
            self._watch.run_started(
                key, run_id, agent_id=agent_id, requester_key=requester_key, label=label, mode=mode
            )
        )

    def run_ended(
        self, key: str, run_id: str, *, agent_id: str | None = None, outcome: RunOutcome | None = None
    ) -> None:
        """A run of the session ended."""
        self._wait(self._watch.run_ended(key, run_id, agent_id=agent_id, outcome=outcome))

    def session_status(
        self, key: str, *, changes_since: int | None = None, limit: int = 200, agent_id: str | None = None
    ) -> SessionStatus:
        """The session's head and, with `changes_since`, the delta after it."""
        return self._wait(
            self._watch.session_status(key, changes_since=changes_since, limit=limit, agent_id=agent_id)
        )

    def watch(self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None) -> bool:
        """Register an explicit watch."""
        return self._wait(self._watch.watch(watcher_key, target_key, target_agent_id=target_agent_id))

    def record_spawn(
        self, *, requester_key: str, child_key: str, child_run_id: str, agent_id: str | None = None
    ) -> Signal | None:
        """A child was spawned."""
        return self._wait(
            self._watch.record_spawn(
                requester_key=requester_key, child_key=child_key, child_run_id=child_run_id, agent_id=agent_id
            )
        )

    def record_run_terminal(
        self,
        *,
        child_key: str,
        run_id: str,
        requester_key: str,
        outcome: Literal["ok", "error", "timeout", "cancelled"],
        agent_id: str | None = None,
    ) -> Signal | None:
        """A child run ended."""
        return self._wait(
            self._watch.record_run_terminal(
                child_key=child_key,
                run_id=run_id,
                requester_key=requester_key,
                outcome=outcome,
                agent_id=agent_id,
            )
        )


# ------------------------------------------------------------------- the ports the server lacks


class NoTranscripts:
    """The server reads no transcript: sessionwatch never holds message text, and this host has none."""

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> Sequence[str]:  # noqa: ARG002
        """No texts."""
        return ()

    def read_messages(
        self,
        key: str,  # noqa: ARG002
        agent_id: str,  # noqa: ARG002
        *,
        limit: int,  # noqa: ARG002
        offset: int | None,  # noqa: ARG002
        merged_imports: bool,  # noqa: ARG002
    ) -> TranscriptPage:
        """An empty page."""
        return TranscriptPage(messages=(), total_messages=0)

    def title_fields(self, key: str, agent_id: str) -> TitleFields:  # noqa: ARG002
        """No first or last message."""
        return TitleFields()

    def latest_usage(self, key: str, agent_id: str) -> Usage | None:  # noqa: ARG002
        """No usage."""
        return None


class NoRuntime:
    """The server dispatches no run: a tool that would needs the host's runtime, so it fails."""

    def dispatch(self, request: DispatchRequest) -> Dispatch:  # noqa: ARG002
        """Refused."""
        raise RuntimeFailure(f"dispatch: {NOT_HERE}")

    def wait(self, run_id: str, timeout_seconds: float) -> RunWait:  # noqa: ARG002
        """Refused."""
        raise RuntimeFailure(f"wait: {NOT_HERE}")

    def run_agent_step(  # noqa: PLR0917 - the port's positional signature
        self,
        key: str,  # noqa: ARG002
        agent_id: str,  # noqa: ARG002
        message: str,  # noqa: ARG002
        extra_system_prompt: str,  # noqa: ARG002
        timeout_seconds: float,  # noqa: ARG002
        provenance: InputProvenance,  # noqa: ARG002
    ) -> str | None:
        """Refused."""
        raise RuntimeFailure(f"agent steps: {NOT_HERE}")

    def announce(self, route: Route, text: str) -> None:  # noqa: ARG002
        """Refused."""
        raise RuntimeFailure(f"announce: {NOT_HERE}")

    def start_child_run(self, request: ChildRunRequest) -> str:  # noqa: ARG002
        """Refused."""
        raise RuntimeFailure(f"child runs: {NOT_HERE}")

    def request_announce(self, request: AnnounceRequest) -> None:  # noqa: ARG002
        """Refused."""
        raise RuntimeFailure(f"announce: {NOT_HERE}")

    def yield_turn(self, key: str, message: str) -> bool:  # noqa: ARG002
        """No turn to yield."""
        return False


class NoModels:
    """The server knows no model catalog: no model resolves; the default is empty."""

    def resolve(self, raw: str, agent_id: str) -> str | None:  # noqa: ARG002
        """Nothing resolves."""
        return None

    def is_allowed(self, ref: str, agent_id: str) -> bool:  # noqa: ARG002
        """Nothing is allowed."""
        return False

    def default_for(self, agent_id: str) -> str:  # noqa: ARG002
        """No default."""
        return ""


# ---------------------------------------------------------------------------------- the tools


ToolRun: TypeAlias = Callable[[Mapping[str, Any]], Awaitable[JsonObject]]


class CallerTools:
    """The five tools, always for one calling session (`ctx.session_key`), as JSON objects.

    The server writes no signal: watching, unwatching and acknowledging move the caller's own
    cursors, so nothing it does ever notifies the caller.
    """

    def __init__(
        self, watch: AsyncSessionWatch, ctx: ToolContext, *, config: ToolsConfig | None = None
    ) -> None:
        if ctx.session_key is None:
            raise InvalidQuery("session", "the MCP server serves one session: pass its key")
        self._watch = watch
        self._ctx = ctx
        self.caller_key: str = ctx.session_key
        self._registered = False
        self._tools = SessionTools(
            BlockingWatch(watch, asyncio.get_running_loop()),
            transcripts=NoTranscripts(),
            runtime=NoRuntime(),
            models=NoModels(),
            config=config,
        )
        self.catalog: dict[str, tuple[type[_Arguments], ToolRun]] = {
            "session_status": (SessionStatusArguments, self._session_status),
            "sessions_list": (SessionsListArguments, self._sessions_list),
            "sessions_watch": (SessionTargetArguments, self._sessions_watch),
            "sessions_unwatch": (SessionTargetArguments, self._sessions_unwatch),
            "session_notices": (SessionNoticesArguments, self._session_notices),
        }

    async def call(self, name: str, arguments: Mapping[str, Any]) -> JsonObject:
        """Run the tool `name`; a typed library error (or bad arguments) raises `ToolCallError`.

        The error's message starts with the tool's name (`sessions_watch: ...`), so a refusal never
        reads as another tool's.
        """
        found = self.catalog.get(name)
        if found is None:
            raise ToolCallError(f"Unknown tool: {name}")
        try:
            return await found[1](arguments)
        except ValidationError as exc:
            raise ToolCallError(f"{name}: {arguments_error(exc)}") from None
        except ToolForbidden as exc:
            raise ToolCallError(f"{name}: {WATCHING_FOLLOWS_STATUS.get(name, '')}{exc}") from None
        except TOOL_ERRORS as exc:
            raise ToolCallError(f"{name}: {named_for_the_caller(exc)}") from None

    async def pending_notices(self) -> list[Notice]:
        """The caller's pending notices about sessions it may reconcile, nothing acknowledged.

        A notice is given only when the `session_status` call its text asks for would answer: the
        target resolves to itself and the caller may read its status. The others stay pending,
        untouched, for a reader that may act on them (a wider `--visibility`, the host's own drain).
        """
        pending = await self._watch.pending_notices(self.caller_key)
        if not pending:
            return []
        return await asyncio.to_thread(self._reconcilable, pending)

    def _reconcilable(self, notices: list[Notice]) -> list[Notice]:
        registry = self._tools.registry()
        caller = self._tools.caller(self._ctx, registry)
        kept = []
        for notice in notices:
            try:
                entry = status_target_in(
                    self._tools, caller, registry, notice.target, agent_id=notice.target_agent_id
                )
            except (ToolForbidden, UnknownSession):
                continue
            if (entry.session_key, entry.agent_id) == (notice.target, notice.target_agent_id):
                kept.append(notice)
        return kept

    async def notices(self, *, ack: bool = False) -> list[JsonObject]:
        """The caller's reconcilable notices as JSON (`target`, `targetAgentId`, `lastSeen`, `text`).

        With `ack`, exactly those are acknowledged (as `acknowledge` does: a change after a notice
        leaves its one follow-up); a notice not given is never acknowledged.
        """
        given = await self.pending_notices()
        if ack and given:
            await self._watch.acknowledge(self.caller_key, given)
        return [notice.to_json() for notice in given]

    async def register_caller(self) -> None:
        """Register the calling session if it is new (once per server: its first tool call does it)."""
        if self._registered:
            return
        if await self._watch.registry_entry(self.caller_key, agent_id=self._ctx.agent_id) is None:
            await self._watch.upsert_session(self.caller_key, agent_id=self._ctx.agent_id)
        self._registered = True

    async def _target(self, arguments: SessionStatusArguments | SessionTargetArguments) -> RegistryEntry:
        """The session the arguments name, when the caller may read its status (the tools' own rules)."""
        _, entry = await asyncio.to_thread(
            self._tools.status_target, self._ctx, arguments.session_key, agent_id=arguments.agent_id
        )
        return entry

    async def _session_status(self, raw: Mapping[str, Any]) -> JsonObject:
        arguments = SessionStatusArguments.model_validate(raw)
        entry = await self._target(arguments)
        status = await self._watch.session_status(
            entry.session_key,
            changes_since=arguments.changes_since,
            limit=arguments.limit,
            agent_id=entry.agent_id,
        )
        return status.to_json()

    async def _sessions_list(self, raw: Mapping[str, Any]) -> JsonObject:
        arguments = SessionsListArguments.model_validate(raw)
        params = arguments.model_dump(by_alias=True, exclude_none=True)
        result = await asyncio.to_thread(self._tools.sessions_list, self._ctx, params)
        return result.to_json()

    async def _sessions_watch(self, raw: Mapping[str, Any]) -> JsonObject:
        entry = await self._target(SessionTargetArguments.model_validate(raw))
        key, agent = entry.session_key, entry.agent_id
        before = await self._watch.cursor(self.caller_key, key, target_agent_id=agent)
        ids: JsonObject = {"watcher": self.caller_key, "target": key, "targetAgentId": agent}
        if not await self._watch.watch(self.caller_key, key, target_agent_id=agent):
            return {"watched": False, **ids, "reason": self._watch_refusal(key)}
        cursor = await self._watch.cursor(self.caller_key, key, target_agent_id=agent)
        return {
            "watched": True,
            "alreadyWatching": before is not None,
            **ids,
            **(cursor.to_json() if cursor else {}),
        }

    async def _sessions_unwatch(self, raw: Mapping[str, Any]) -> JsonObject:
        entry = await self._target(SessionTargetArguments.model_validate(raw))
        removed = await self._watch.unwatch(
            self.caller_key, entry.session_key, target_agent_id=entry.agent_id
        )
        return {
            "unwatched": removed,
            "watcher": self.caller_key,
            "target": entry.session_key,
            "targetAgentId": entry.agent_id,
        }

    async def _session_notices(self, raw: Mapping[str, Any]) -> JsonObject:
        arguments = SessionNoticesArguments.model_validate(raw)
        return {"notices": await self.notices(ack=arguments.ack), "acknowledged": arguments.ack}

    def _watch_refusal(self, target: str) -> str:
        """Why the core refused the watch (it decided; this only says which rule)."""
        return why_never_notified(self.caller_key) or f"{target} cannot watch itself"


class ToolCallError(Exception):
    """A tool call the library refused; `str()` is the message the caller sees (never a traceback)."""
