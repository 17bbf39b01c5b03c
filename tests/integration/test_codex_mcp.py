"""`sessionwatch codex mcp`: each tool call is served as the Codex session its `_meta` names.

Codex starts MCP servers with a bare environment, so the server cannot know its session when it
starts; every `tools/call` carries it (`x-codex-turn-metadata.session_id`, `sessionId`), as the
real Codex 0.171 sends it (tests/hosts pins that). Two Codex sessions share one server process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

from mcp import Client
from mcp_types import RequestParamsMeta

import sessionwatch
import sessionwatch.aio
from sessionwatch.domain.tools.config import ToolContext
from sessionwatch.integrations import codex
from sessionwatch.integrations.codex_mcp import TOOL_ARGUMENTS, CodexCallers, CodexServerOptions, build_server
from sessionwatch.integrations.mcp_tools import CallerTools

FIRST = "01a2425a-190f-70b3-8913-4207885bbdc6"
SECOND = "01a24246-4343-71c2-883b-0680716b25c7"


def meta(session_id: str, *, turn: bool = True) -> dict[str, Any]:
    """`_meta` as Codex sends it with a tool call (the turn's metadata, and the ids beside it)."""
    sent: dict[str, Any] = {"callId": "call_fake0001", "sessionId": session_id, "threadId": session_id}
    if turn:
        sent["x-codex-turn-metadata"] = {"session_id": session_id, "thread_id": session_id, "turn_id": "t1"}
    return sent


async def _calls(store: str, project: Path) -> list[tuple[bool, dict[str, Any] | str]]:
    options = CodexServerOptions(db=store, project=project, environ={})
    results: list[tuple[bool, dict[str, Any] | str]] = []
    async with (
        await sessionwatch.aio.open(store) as watch,
        Client(build_server(CodexCallers(watch, options))) as client,
    ):
        listed = await client.list_tools()
        results.append((False, {"tools": sorted(tool.name for tool in listed.tools)}))
        second = codex.session_key(project, SECOND)
        for name, arguments, sent in (
            ("sessions_watch", {"sessionKey": second}, meta(FIRST)),
            ("session_notices", {}, meta(FIRST, turn=False)),
            ("sessions_list", {}, meta(SECOND)),
            ("session_notices", {}, None),
        ):
            result = await client.call_tool(name, arguments, meta=cast("RequestParamsMeta | None", sent))
            text = getattr(result.content[0], "text", "")
            results.append((result.is_error, text if result.is_error else json.loads(text)))
    return results


def test_each_call_is_served_as_the_codex_session_its_meta_names(tmp_path: Path) -> None:
    store = str(tmp_path / "sw.db")
    with sessionwatch.open(store) as watch:
        watch.upsert_session(codex.session_key(tmp_path, SECOND), session_id=SECOND)

    listed, watched, notices, listing, anonymous = asyncio.run(_calls(store, tmp_path))

    assert listed == (False, {"tools": sorted(TOOL_ARGUMENTS)})
    first, second = codex.session_key(tmp_path, FIRST), codex.session_key(tmp_path, SECOND)
    assert watched[0] is False
    assert isinstance(watched[1], dict)
    assert (watched[1]["watcher"], watched[1]["target"]) == (first, second)
    assert notices == (False, {"notices": [], "acknowledged": False})  # `sessionId` alone names it too
    assert isinstance(listing[1], dict)
    assert {row["key"] for row in listing[1]["sessions"]} == {first, second}  # the project's agent
    assert anonymous[0] is True
    assert anonymous[1] == "_meta.sessionId: is missing: the call does not say which Codex session made it"
    with sessionwatch.open(store) as watch:
        entry = watch.registry_entry(first)  # registered at its first call
    assert entry is not None
    assert entry.session_id == FIRST


def test_the_listed_tools_are_the_ones_each_caller_runs(tmp_path: Path) -> None:
    async def catalog() -> dict[str, type]:
        async with await sessionwatch.aio.open(str(tmp_path / "sw.db")) as watch:
            tools = CallerTools(watch, ToolContext(session_key="agent:p:codex:x"))
            return {name: model for name, (model, _) in tools.catalog.items()}

    assert asyncio.run(catalog()) == TOOL_ARGUMENTS


def test_the_command_serves_stdio_in_the_directory_codex_starts_it_in(tmp_path: Path) -> None:
    store = tmp_path / "sw.db"
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "codex-mcp-client"}}
    call = {"_meta": meta(FIRST), "name": "session_notices", "arguments": {}}
    env = {"HOME": os.environ.get("HOME", "/"), "PATH": os.environ["PATH"], "SESSIONWATCH_URL": str(store)}
    with subprocess.Popen(
        [str(Path(sys.executable).parent / "sessionwatch"), "codex", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        for message in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
        ):
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in range(2)]
        server.stdin.close()
        assert server.wait(timeout=60) == 0
    assert answers[1]["id"] == 1
    assert answers[1]["result"]["isError"] is False
    assert answers[1]["result"]["structuredContent"] == {"notices": [], "acknowledged": False}
    with sessionwatch.open(str(store)) as watch:
        assert [e.session_key for e in watch.registry_entries()] == [codex.session_key(tmp_path, FIRST)]
