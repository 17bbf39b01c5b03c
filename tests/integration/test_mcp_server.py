"""`sessionwatch mcp` as an MCP client sees it: a subprocess over stdio and over Streamable HTTP.

The calling session (`CALLER`) spawned `CHILD`, so it watches it and sees it under the default
`tree` visibility. Each test records a human message on `CHILD` from another process (the
`sessionwatch record` command) and waits, with a deadline, for `notifications/resources/updated` on
the caller's notices resource: on SQLite through the server's poll of the pending notices, on
PostgreSQL (poll off) through the cross-process wake alone. Both protocol eras are covered: the
2026 `subscriptions/listen` stream (the SDK client's default) and the handshake era's
`resources/subscribe` (what many clients still speak).
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, Subscription
from mcp.shared.exceptions import MCPDeprecationWarning
from stores import needs_postgres, postgres_url

import sessionwatch
from sessionwatch import InvalidQuery
from sessionwatch.integrations.mcp_tools import (
    SessionNoticesArguments,
    SessionsListArguments,
    SessionStatusArguments,
    SessionTargetArguments,
)

CALLER = "agent:main:main"
CHILD = "agent:main:subagent:worker"
STRANGER = "agent:main:elsewhere"
URI = f"sessionwatch://notices/{CALLER}"
DEADLINE = 30.0
"""Seconds to wait for one event (a start, an answer, a notification); never a correctness sleep."""
POLL = "0.1"

T = TypeVar("T")


def run(scenario: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(scenario, 4 * DEADLINE))


def seed(url: str) -> None:
    """CALLER spawned CHILD (a cursor and the tree edge); STRANGER exists outside its tree."""
    with sessionwatch.open(url) as watch:
        watch.upsert_session(CALLER)
        watch.record_spawn(requester_key=CALLER, child_key=CHILD, child_run_id="run-1")
        watch.upsert_session(STRANGER)


def status_json(url: str) -> dict[str, Any]:
    """CHILD's status with changesSince 0 as the library gives it (before the other process records)."""
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        return watch.session_status(CHILD, changes_since=0).to_json()


def record_elsewhere(url: str, *, actor: str = "human") -> None:
    """A signal on CHILD from another process: the `sessionwatch record` command."""
    subprocess.run(
        [sys.executable, "-m", "sessionwatch", "record", "human_direct_message", CHILD, "--summary",
         "a person typed", "--actor", actor, "--db", url],
        check=True,
        capture_output=True,
        timeout=DEADLINE,
    )  # fmt: skip


def server_args(url: str, *extra: str) -> list[str]:
    return ["-m", "sessionwatch", "mcp", "--db", url, "--session", CALLER, *extra]


def stdio(url: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=server_args(url, *extra), env=dict(os.environ))


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    answer: dict[str, Any] = json.loads(text_of(result))
    return answer


async def refused(client: Client, name: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    return text_of(result)


async def next_event(subscription: Subscription) -> object:
    async def first() -> object:
        async for event in subscription:
            return event
        raise AssertionError("the listen stream ended without an event")

    return await asyncio.wait_for(first(), DEADLINE)


async def updated_across_processes_by_listen(client: Client, url: str) -> None:
    """Listen on the notices resource, record from another process, get the update."""
    async with client.listen(resource_subscriptions=[URI]) as subscription:
        record_elsewhere(url)
        assert await next_event(subscription) == ResourceUpdated(uri=URI)


class LegacyUpdates:
    """A handshake-era client's message handler: the `notifications/resources/updated` it got."""

    def __init__(self) -> None:
        self.uris: asyncio.Queue[str] = asyncio.Queue()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            await self.uris.put(message.params.uri)


async def updated_across_processes_by_subscribe(client: Client, updates: LegacyUpdates, url: str) -> None:
    """`resources/subscribe`, a record from another process, the update.

    Over Streamable HTTP a handshake-era client gets server notifications on a GET stream that it
    opens in the background after the handshake; an update sent before that stream is up is lost
    (the protocol has no replay). So when no update came within a try, the notice is acknowledged
    and a fresh one opened: what must hold is that an opened notice reaches a connected subscriber.
    """
    with warnings.catch_warnings():  # the 2026 protocol removed it; handshake-era clients still use it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.subscribe_resource(URI)
    for _ in range(3):
        record_elsewhere(url)
        try:
            assert await asyncio.wait_for(updates.uris.get(), DEADLINE / 3) == URI
        except TimeoutError:
            await call(client, "session_notices", {"ack": True})
        else:
            return
    raise AssertionError("no notifications/resources/updated for three notices in a row")


# ------------------------------------------------------------------------------------------ stdio


def test_stdio_lists_the_tools_with_their_pydantic_schemas(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)

    async def scenario() -> list[types.Tool]:
        async with Client(stdio(url)) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(scenario())}
    assert tools.keys() == {
        "session_status",
        "sessions_list",
        "sessions_watch",
        "sessions_unwatch",
        "session_notices",
    }
    assert tools["session_status"].input_schema == SessionStatusArguments.model_json_schema(by_alias=True)
    assert tools["sessions_list"].input_schema == SessionsListArguments.model_json_schema(by_alias=True)
    assert tools["sessions_watch"].input_schema == SessionTargetArguments.model_json_schema(by_alias=True)
    assert tools["sessions_unwatch"].input_schema == SessionTargetArguments.model_json_schema(by_alias=True)
    assert tools["session_notices"].input_schema == SessionNoticesArguments.model_json_schema(by_alias=True)
    status = tools["session_status"].input_schema["properties"]
    assert set(status) == {"sessionKey", "changesSince", "limit", "agentId"}
    assert status["changesSince"]["minimum"] == 0
    assert tools["sessions_watch"].input_schema["required"] == ["sessionKey"]
    assert tools["session_notices"].input_schema["properties"]["ack"]["type"] == "boolean"


def test_stdio_status_json_then_an_update_for_a_record_from_another_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)
    expected = status_json(url)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with Client(stdio(url, "--poll-interval", POLL)) as client:
            status = await call(client, "session_status", {"sessionKey": CHILD, "changesSince": 0})
            await updated_across_processes_by_listen(client, url)
            resource = await client.read_resource(URI)
            (contents,) = resource.contents
            assert isinstance(contents, types.TextResourceContents)
            drained = await call(client, "session_notices", {"ack": True})
            after = await call(client, "session_notices", {})
            return status, json.loads(contents.text), drained, after

    status, resource, drained, after = run(scenario())
    assert status == expected
    with sessionwatch.open(url) as watch:
        (notice,) = resource["notices"]
        assert notice["target"] == CHILD
        assert notice["text"] == sessionwatch.notice_text(CHILD, notice["lastSeen"])
        assert drained["notices"] == resource["notices"]
        assert after["notices"] == []
        assert watch.pending_notices(CALLER) == []


def test_stdio_update_for_a_handshake_era_subscriber(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)

    async def scenario() -> None:
        updates = LegacyUpdates()
        async with Client(
            stdio(url, "--poll-interval", POLL), mode="legacy", message_handler=updates
        ) as client:
            await updated_across_processes_by_subscribe(client, updates, url)

    run(scenario())


def test_bad_arguments_are_tool_errors_with_the_library_messages_and_the_server_answers_on(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)

    async def scenario() -> tuple[list[str], dict[str, Any]]:
        async with Client(stdio(url)) as client:
            messages = [
                await refused(client, "session_status", {"sessionKey": CHILD, "changesSince": -1}),
                await refused(client, "session_status", {"sessionKey": "agent:main:nobody"}),
                await refused(client, "session_status", {"sessionKey": 5}),
                await refused(client, "sessions_watch", {"sessionKey": STRANGER}),
                await refused(client, "sessions_watch", {}),
                await refused(client, "sessions_list", {"limit": 0}),
                await refused(client, "no_such_tool", {}),
            ]
            return messages, await call(client, "session_status", {})

    messages, own = run(scenario())
    with sessionwatch.open(url) as watch, pytest.raises(InvalidQuery) as negative:
        watch.session_status(CHILD, changes_since=-1)
    assert messages[0] == f"session_status: changesSince: {negative.value.reason}"
    assert messages[1] == "session_status: Unknown sessionKey: agent:main:nobody"
    assert messages[2].startswith("session_status: sessionKey: ")
    assert messages[3] == (
        "sessions_watch: this server watches only a session whose status the caller may read. "
        "Session status visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree)."
    )
    assert messages[4].startswith("sessions_watch: sessionKey: ")
    assert messages[5] == "sessions_list: limit must be a positive integer"
    assert messages[6] == "Unknown tool: no_such_tool"
    assert all("Traceback" not in message for message in messages)
    assert own["sessionKey"] == CALLER


def test_watch_and_unwatch_move_only_the_callers_cursor(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)
    other_child = "agent:main:subagent:second"
    with sessionwatch.open(url) as watch:
        watch.upsert_session(other_child, spawned_by=CALLER)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with Client(stdio(url)) as client:
            watched = await call(client, "sessions_watch", {"sessionKey": other_child})
            again = await call(client, "sessions_watch", {"sessionKey": other_child})
            unwatched = await call(client, "sessions_unwatch", {"sessionKey": other_child})
            return watched, again, unwatched

    watched, again, unwatched = run(scenario())
    assert watched["watched"] is True
    assert watched["alreadyWatching"] is False
    assert again["alreadyWatching"] is True
    assert unwatched == {"unwatched": True, "watcher": CALLER, "target": other_child, "targetAgentId": "main"}
    with sessionwatch.open(url) as watch:
        assert watch.cursor(CALLER, other_child) is None
        assert watch.cursor(CALLER, CHILD) is not None


# ------------------------------------------------------------------------------------------- http


@contextmanager
def http_server(
    url: str, *extra: str, env: dict[str, str] | None = None, printed: list[str] | None = None
) -> Iterator[str]:
    """`sessionwatch mcp --transport http --port 0` in a subprocess; yields the loopback URL it serves.

    `printed` gets every line the server wrote on stderr, once it stopped.
    """
    with subprocess.Popen(
        [sys.executable, *server_args(url, "--transport", "http", "--port", "0", *extra)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    ) as process:
        lines: queue.Queue[str] = queue.Queue()
        seen: list[str] = []

        def read_lines() -> None:
            for line in process.stderr or ():
                seen.append(line)
                lines.put(line)

        reader = threading.Thread(target=read_lines, daemon=True)
        reader.start()
        try:
            line = lines.get(timeout=DEADLINE)
            found = re.search(r"http://(127\.0\.0\.1|0\.0\.0\.0):(\d+)/mcp", line)
            assert found is not None, line
            yield f"http://127.0.0.1:{found.group(2)}/mcp"  # a wildcard bind is reached through loopback
        finally:
            process.terminate()
            process.wait(timeout=DEADLINE)
            reader.join(timeout=DEADLINE)
            if printed is not None:
                printed.extend(seen)


def test_http_binds_loopback_and_serves_the_same_tools_and_updates(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)
    expected = status_json(url)

    async def scenario(address: str) -> dict[str, Any]:
        async with Client(address) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "session_status" in names
            status = await call(client, "session_status", {"sessionKey": CHILD, "changesSince": 0})
            assert (await client.call_tool("session_status", {"changesSince": "x"})).is_error
            await updated_across_processes_by_listen(client, url)
            return status

    with http_server(url, "--poll-interval", POLL) as address:
        status = run(scenario(address))
    assert status == expected


def test_http_update_for_a_handshake_era_subscriber(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)

    async def scenario(address: str) -> None:
        updates = LegacyUpdates()
        async with Client(address, mode="legacy", message_handler=updates) as client:
            await updated_across_processes_by_subscribe(client, updates, url)

    with http_server(url, "--poll-interval", POLL) as address:
        run(scenario(address))


# ------------------------------------------------------------------------------------- postgres


@asynccontextmanager
async def no_poll_client(url: str) -> AsyncIterator[Client]:
    async with Client(stdio(url, "--poll-interval", "0")) as client:
        yield client


@pytest.mark.slow
@needs_postgres
def test_postgres_update_for_a_record_from_another_process_comes_from_the_wake_alone() -> None:
    with postgres_url("sw_mcp", durable=True) as url:
        seed(url)

        async def scenario() -> None:
            async with no_poll_client(url) as client:
                await updated_across_processes_by_listen(client, url)

        run(scenario())
        with sessionwatch.open(url, sweep_on_open=False) as watch:
            assert [notice.target for notice in watch.pending_notices(CALLER)] == [CHILD]


# ------------------------------------------------------------------------------ the bearer token

TOKEN = "s3cr3t-token-for-the-tests-0123456789"  # noqa: S105 - the test server's token
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


def post_status(address: str, authorization: str | None) -> tuple[int, str | None]:
    """A raw `initialize` POST over loopback: the HTTP status and the WWW-Authenticate header."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["Authorization"] = authorization
    request = urllib.request.Request(  # noqa: S310 - a http:// URL the test server announced
        address, data=json.dumps(INITIALIZE).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE) as response:  # noqa: S310
            return response.status, response.headers.get("WWW-Authenticate")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("WWW-Authenticate")


async def status_with_token(address: str, token: str) -> dict[str, Any]:
    """The SDK client with `Authorization: Bearer <token>` on every request: CHILD's status."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=DEADLINE) as http,
        Client(streamable_http_client(address, http_client=http)) as client,
    ):
        return await call(client, "session_status", {"sessionKey": CHILD, "changesSince": 0})


def token_env() -> dict[str, str]:
    return {**os.environ, "SESSIONWATCH_MCP_TOKEN": TOKEN}


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])  # noqa: S104 - the network bind the token guards
def test_with_a_token_a_request_without_it_gets_401_and_the_sdk_client_with_it_is_served(
    tmp_path: Path, host: str
) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)
    expected = status_json(url)
    printed: list[str] = []

    with http_server(url, "--host", host, env=token_env(), printed=printed) as address:
        refused = [
            post_status(address, None),
            post_status(address, f"Bearer {TOKEN[:-1]}x"),
            post_status(address, f"Basic {TOKEN}"),
            post_status(address, f"Bearer {TOKEN}{TOKEN}"),
        ]
        status = run(status_with_token(address, TOKEN))
        assert post_status(address, f"bearer {TOKEN}")[0] != 401  # the scheme is case-insensitive

    assert refused == [(401, 'Bearer realm="sessionwatch", error="invalid_token"')] * 4
    assert status == expected
    assert printed
    assert all(TOKEN not in line for line in printed)  # the token is never printed
    assert any("bearer token required" in line for line in printed)


def test_loopback_without_a_token_serves_as_before(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)
    environment = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_MCP_TOKEN"}
    with http_server(url, env=environment) as address:
        assert post_status(address, None)[0] == 200
