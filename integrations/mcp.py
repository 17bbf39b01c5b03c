"""`sessionwatch mcp`: one calling session's session tools and notices over MCP, stdio or Streamable HTTP.

Needs the `mcp` extra (the official SDK, imported by this module only). The server runs on
`sessionwatch.aio`: tools call the asyncio façade, and the resource `sessionwatch://notices/<session>`
tells its subscribers (`notifications/resources/updated`) when a notice opens for the served
session: at once when this process's waker hears of it (its own writes, and on PostgreSQL every
other process's too), and within `poll_interval` seconds otherwise (a record another process made
in a SQLite file, or a subagent session, which is never woken). Only notices the caller may
reconcile count (`CallerTools.pending_notices`). Over HTTP, a host other than loopback needs a
bearer token (`mcp_auth`).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import logging
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

import sessionwatch.aio
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.domain.keys import SessionIdentity, resolve_identity
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.integrations.mcp_auth import BearerGate, check_exposure, check_token
from sessionwatch.integrations.mcp_stdio import interruptible_stdin
from sessionwatch.integrations.mcp_tools import CallerTools, ToolCallError

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "NoticeFeed",
    "ServerOptions",
    "build_server",
    "notices_uri",
    "run",
    "serve",
]

logger = logging.getLogger("sessionwatch.mcp")

NOTICES_PREFIX: Final = "sessionwatch://notices/"
NOTICES_TEMPLATE: Final = f"{NOTICES_PREFIX}{{session}}"
"""The notices resources' URI template; this server answers it for the session it serves."""
DEFAULT_POLL_INTERVAL: Final = 2.0
"""Seconds between two reads of the served session's pending notices (0: only the waker's)."""

TOOL_DESCRIPTIONS: Final = {
    "session_status": "A session's head (stateVersion) and, with changesSince, every change after that "
    "sequence: what to read after a notice, before acting on what you knew about the session.",
    "sessions_list": "The sessions you may see, newest first, with their stateVersion once above 0.",
    "sessions_watch": "Watch a session from its current head: the next change another actor makes there "
    "gives you one notice. Watching an already watched session leaves its cursor untouched.",
    "sessions_unwatch": "Stop watching a session; its pending notice goes too.",
    "session_notices": "Your pending notices about sessions you can read with session_status, one line "
    "per changed session; with ack true exactly those are acknowledged, so a session notifies you again "
    "only for a change after this notice.",
}


def notices_uri(session_key: str) -> str:
    """The notices resource of one session."""
    return f"{NOTICES_PREFIX}{session_key}"


@dataclass(frozen=True)
class ServerOptions:
    """What `sessionwatch mcp` serves, and where."""

    url: str | None
    session: str
    agent_id: str | None = None
    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    poll_interval: float = DEFAULT_POLL_INTERVAL
    visibility: Literal["self", "tree", "agent", "all"] = "tree"
    announce: Callable[[str], None] | None = None
    """Told the URL once the HTTP server listens (the command line prints it on stderr)."""
    token: str | None = field(default=None, repr=False)
    """The bearer token every HTTP request must carry (required off loopback); never printed."""


class _Notifiable(Protocol):
    async def send_resource_updated(self, uri: str) -> None: ...


class NoticeFeed:
    """Tells the subscribers of the served session's notices resource that a notice opened.

    A notice opens when a (target, changesSince) pair appears among the pending notices the caller
    may reconcile: a new stale target, or the follow-up of an acknowledged one. Subscribers are the
    `subscriptions/listen` streams (through the bus) and the connections that sent `resources/subscribe`.
    """

    def __init__(self, tools: CallerTools, session: SessionIdentity) -> None:
        self._tools = tools
        self.session = session
        self.uri = notices_uri(session.session_key)
        self.bus = InMemorySubscriptionBus()
        self._subscribed: set[_Notifiable] = set()
        self._known: frozenset[tuple[str, str, int]] = frozenset()
        self._lock = asyncio.Lock()

    def subscribe(self, connection: _Notifiable) -> None:
        """A connection asked for `notifications/resources/updated` (`resources/subscribe`)."""
        self._subscribed.add(connection)

    def unsubscribe(self, connection: _Notifiable) -> None:
        """A connection no longer wants them."""
        self._subscribed.discard(connection)

    async def check(self, *, announce: bool = True) -> bool:
        """Read the notices the caller may reconcile; tell the subscribers when one opened since then."""
        async with self._lock:
            pending = await self._tools.pending_notices()
            now = frozenset((n.target, n.target_agent_id, n.last_seen) for n in pending)
            opened = bool(now - self._known)
            self._known = now
        if opened and announce:
            await self._announce()
        return opened

    async def _announce(self) -> None:
        await self.bus.publish(ResourceUpdated(uri=self.uri))
        for connection in list(self._subscribed):
            try:
                await connection.send_resource_updated(self.uri)
            except Exception:  # noqa: BLE001 - a connection that went away stops being told
                logger.info("a notices subscriber went away")
                self._subscribed.discard(connection)

    async def poll(self, interval: float) -> None:
        """Check every `interval` seconds until cancelled; a failing read is logged and retried."""
        while True:
            await asyncio.sleep(interval)
            try:
                await self.check()
            except StoreError as exc:
                logger.warning("reading the pending notices failed: %s", exc)
            except Exception:  # the poll outlives one bad round; the log keeps the traceback
                logger.exception("checking the pending notices failed")


class _FeedWaker:
    """The façade's async waker: a wake for the served session makes the feed check at once."""

    def __init__(self, session_key: str) -> None:
        self.session_key = session_key
        self.feed: NoticeFeed | None = None

    async def wake(self, watcher_key: str, reason: str) -> None:  # noqa: ARG002 - the reason names the target only
        """Check the served session's notices when the wake is for it."""
        if watcher_key == self.session_key and self.feed is not None:
            await self.feed.check()


# ------------------------------------------------------------------------------------ the server


def _version() -> str:
    try:
        return importlib.metadata.version("sessionwatch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _tool_result(value: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=value)


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


class _Handlers:
    """The MCP requests the server answers, for one calling session's tools and notices feed."""

    def __init__(self, tools: CallerTools, feed: NoticeFeed) -> None:
        self.tools = tools
        self.feed = feed

    async def list_tools(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=name,
                    description=TOOL_DESCRIPTIONS[name],
                    input_schema=model.model_json_schema(by_alias=True),
                )
                for name, (model, _) in self.tools.catalog.items()
            ]
        )

    async def call_tool(
        self, _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            await self.tools.register_caller()  # at the first call: a client's health check registers nothing
            return _tool_result(await self.tools.call(params.name, params.arguments or {}))
        except ToolCallError as exc:
            return _tool_error(str(exc))
        except Exception as exc:  # the caller gets one line; the log keeps the traceback
            logger.exception("tool %s failed", params.name)
            return _tool_error(f"internal error: {type(exc).__name__}: {exc}")

    async def list_resources(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resource = types.Resource(
            name="notices",
            title=f"Pending notices of {self.feed.session.session_key}",
            uri=self.feed.uri,
            description="The sessions that changed since you last reconciled them (subscribe to hear "
            "when one opens). Reading never acknowledges: use session_notices with ack.",
            mime_type="application/json",
        )
        return types.ListResourcesResult(resources=[resource])

    async def list_resource_templates(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            name="notices",
            title="Pending notices of a session",
            uri_template=NOTICES_TEMPLATE,
            description=f"A session's pending notices; this server serves {self.feed.session.session_key} "
            f"only ({self.feed.uri}), and refuses any other session's.",
            mime_type="application/json",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    def _check_uri(self, uri: str) -> None:
        if uri != self.feed.uri:
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri} (this server has {self.feed.uri})")

    async def read_resource(
        self, _ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self._check_uri(params.uri)
        body = {"session": self.feed.session.session_key, "notices": await self.tools.notices()}
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=self.feed.uri, mime_type="application/json", text=text)]
        )

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        self._check_uri(params.uri)
        self.feed.subscribe(ctx.session)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], _params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.feed.unsubscribe(ctx.session)
        return types.EmptyResult()


def build_server(tools: CallerTools, feed: NoticeFeed) -> Server[Any]:
    """The MCP server (the SDK's low-level `Server`) for one calling session."""
    handlers = _Handlers(tools, feed)
    return Server(
        "sessionwatch",
        version=_version(),
        instructions=f"Session state awareness for {feed.session.session_key}: when another actor changes "
        "a session you watch, you get one notice; reconcile with session_status changesSince before acting.",
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_resource_templates,
        on_read_resource=handlers.read_resource,
        on_subscribe_resource=handlers.subscribe,
        on_unsubscribe_resource=handlers.unsubscribe,
        on_subscriptions_listen=ListenHandler(feed.bus),
    )


async def serve(options: ServerOptions) -> None:
    """Open the store, serve the calling session until the client goes away (stdio) or a signal (HTTP).

    Raises:
        ExposureError: HTTP on a host other than loopback without a bearer token, or a token too weak
            to protect it; checked before the store opens.
    """
    identity = resolve_identity(options.session, options.agent_id, field="session")
    if options.transport == "http":
        check_token(options.token)
        check_exposure(options.host, options.token)
    waker = _FeedWaker(identity.session_key)
    async with await sessionwatch.aio.open(options.url, waker=waker, sweep_on_open=False) as watch:
        ctx = ToolContext(session_key=identity.session_key, agent_id=identity.agent_id)
        tools = CallerTools(watch, ctx, config=ToolsConfig(visibility=options.visibility))
        feed = NoticeFeed(tools, identity)
        await feed.check(announce=False)
        waker.feed = feed
        server = build_server(tools, feed)
        poller = asyncio.create_task(feed.poll(options.poll_interval)) if options.poll_interval > 0 else None
        try:
            if options.transport == "stdio":
                async with stdio_server(stdin=interruptible_stdin()) as (
                    read,
                    write,
                ):  # SIGINT ends it at once
                    await server.run(read, write, server.create_initialization_options())
            else:
                await _serve_http(server, options)
        finally:
            if poller is not None:
                poller.cancel()
            waker.feed = None


async def _serve_http(server: Server[Any], options: ServerOptions) -> None:
    """Streamable HTTP at `http://HOST:PORT/mcp` (port 0: any free port, announced once bound).

    With a token, every request passes the bearer gate first (loopback included).
    """
    streamable = server.streamable_http_app(host=options.host)
    app = streamable if options.token is None else BearerGate(streamable, options.token)
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((options.host, options.port))
        listening.listen(socket.SOMAXCONN)  # connections wait in the backlog from the announcement on
    except OSError as exc:
        listening.close()
        where = f"{options.host}:{options.port}"
        raise OSError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    port = listening.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    if options.announce is not None:
        host = f"[{options.host}]" if family == socket.AF_INET6 else options.host
        options.announce(f"http://{host}:{port}/mcp")
    await uvicorn.Server(config).serve(sockets=[listening])


def run(options: ServerOptions) -> None:
    """Serve until done (the `sessionwatch mcp` command)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="sessionwatch mcp: %(message)s")
    asyncio.run(serve(options))
