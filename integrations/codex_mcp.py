"""`sessionwatch codex mcp`: the session tools for a project's Codex sessions, each call served as its caller.

Codex starts an MCP server with a bare environment (HOME, LANG, PATH, SHELL, TERM, TZ and the
variables a server's `env_vars` names): nothing says which session it serves, and one server
process may serve several (a daemon hosts many sessions). But every `tools/call` Codex sends
carries its session in `_meta` (`x-codex-turn-metadata.session_id`, and `sessionId`): this server
serves each call as that session, `agent:<project>:codex:<session id>` (the hook's key; the project
is the server's working directory, the session's, where Codex starts it), registering a session it
has not seen. A call without one is refused with a tool error naming the field. Needs the `mcp`
extra; no notices resource (the hook hands a Codex session its notices).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from pydantic import BaseModel

import sessionwatch.aio
from sessionwatch.adapters.entry.aio import AsyncSessionWatch
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.integrations.claude_code import HookInputError
from sessionwatch.integrations.claude_code_keys import checked_session_id
from sessionwatch.integrations.codex import session_key, store_url
from sessionwatch.integrations.mcp import TOOL_DESCRIPTIONS
from sessionwatch.integrations.mcp_tools import (
    CallerTools,
    SessionNoticesArguments,
    SessionsListArguments,
    SessionStatusArguments,
    SessionTargetArguments,
    ToolCallError,
)

logger = logging.getLogger("sessionwatch.mcp")

TOOL_ARGUMENTS: Final[dict[str, type[BaseModel]]] = {
    "session_status": SessionStatusArguments,
    "sessions_list": SessionsListArguments,
    "sessions_watch": SessionTargetArguments,
    "sessions_unwatch": SessionTargetArguments,
    "session_notices": SessionNoticesArguments,
}
"""The tools and their argument models (`CallerTools.catalog`'s, listed before any caller is known)."""

TURN_METADATA: Final = "x-codex-turn-metadata"
SESSION_FIELD: Final = "_meta.sessionId"


@dataclass(frozen=True)
class CodexServerOptions:
    """What `sessionwatch codex mcp` serves: the store, the project, which sessions the tools show."""

    db: str | None
    project: Path
    environ: Mapping[str, str]
    visibility: Literal["self", "tree", "agent", "all"] = "agent"


def callerchecked_session_id(meta: Mapping[str, Any] | None) -> str:
    """The Codex session a call names in its `_meta` (the turn's `session_id`, else `sessionId`)."""
    meta = meta or {}
    turn = meta.get(TURN_METADATA)
    named = turn.get("session_id") if isinstance(turn, Mapping) else None
    if named is None:
        named = meta.get("sessionId")
    if named is None:
        raise HookInputError(SESSION_FIELD, "is missing: the call does not say which Codex session made it")
    return checked_session_id(named, SESSION_FIELD)


class CodexCallers:
    """The tools of each calling session, made (and the session registered) on its first call."""

    def __init__(self, watch: AsyncSessionWatch, options: CodexServerOptions) -> None:
        self._watch = watch
        self._options = options
        self._tools: dict[str, CallerTools] = {}
        self._lock = asyncio.Lock()

    async def tools_for(self, meta: Mapping[str, Any] | None) -> CallerTools:
        """The calling session's tools (raises `HookInputError` when the call names no session)."""
        session_id = callerchecked_session_id(meta)
        key = session_key(self._options.project, session_id)
        async with self._lock:
            if key not in self._tools:
                if await self._watch.registry_entry(key) is None:
                    await self._watch.upsert_session(key, session_id=session_id)
                config = ToolsConfig(visibility=self._options.visibility)
                self._tools[key] = CallerTools(self._watch, ToolContext(session_key=key), config=config)
            return self._tools[key]

    async def list_tools(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The five tools, whoever asks."""
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=name,
                    description=TOOL_DESCRIPTIONS[name],
                    input_schema=model.model_json_schema(by_alias=True),
                )
                for name, model in TOOL_ARGUMENTS.items()
            ]
        )

    async def call_tool(
        self, _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        """Run one tool as the session the call names."""
        try:
            tools = await self.tools_for(params.meta)
            value = await tools.call(params.name, params.arguments or {})
        except (ToolCallError, HookInputError) as exc:
            return _error(str(exc))
        except Exception as exc:  # the caller gets one line; the log keeps the traceback
            logger.exception("tool %s failed", params.name)
            return _error(f"internal error: {type(exc).__name__}: {exc}")
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=value
        )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _version() -> str:
    try:
        return importlib.metadata.version("sessionwatch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def build_server(callers: CodexCallers) -> Server[Any]:
    """The MCP server (the SDK's low-level `Server`) for a project's Codex sessions."""
    return Server(
        "sessionwatch",
        version=_version(),
        instructions="Session state awareness for this Codex session: when another actor changes a "
        "session you watch, you get one notice with your next prompt; reconcile with session_status "
        "changesSince before acting.",
        on_list_tools=callers.list_tools,
        on_call_tool=callers.call_tool,
    )


async def serve(options: CodexServerOptions) -> None:
    """Open the store and serve over stdio until Codex closes it."""
    url = store_url(options.db, options.environ, options.project)
    async with await sessionwatch.aio.open(url, sweep_on_open=False) as watch:
        server = build_server(CodexCallers(watch, options))
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def run(options: CodexServerOptions) -> None:
    """Serve until done (the `sessionwatch codex mcp` command)."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="sessionwatch codex mcp: %(message)s"
    )
    asyncio.run(serve(options))
