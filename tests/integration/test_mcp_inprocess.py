"""The MCP server's parts in one process: the `mcp` command's checks, the notices feed, the tools.

The feed tells subscribers only when a notice opens for the served session, so the caller's own
actions (self-suppressed by the core) never reach it. The command refuses bad options with one
line naming the flag, and exits 2 naming the install line when the `mcp` extra is missing.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from cli_runs import cli
from mcp import Client

import sessionwatch.aio
from sessionwatch import Actor, SignalKind
from sessionwatch.adapters.extras import install_hint
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.integrations.mcp import NoticeFeed, ServerOptions, build_server, notices_uri, serve
from sessionwatch.integrations.mcp_auth import ExposureError, check_exposure, is_loopback
from sessionwatch.integrations.mcp_tools import CallerTools, ToolCallError

CALLER = "agent:main:main"
CHILD = "agent:main:subagent:worker"
STRANGER = "agent:main:elsewhere"


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


# ---------------------------------------------------------------------------------- the command


WITHOUT_THE_EXTRA = """
import sys
sys.modules["mcp"] = None  # `import mcp` fails in this process as if the package were not installed
from sessionwatch.cli.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_the_mcp_extra_the_command_exits_2_naming_the_install_line(tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_EXTRA, "mcp", "--session", CALLER, "--db", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.rstrip().endswith(install_hint("mcp"))
    assert "pip install 'mcp<3," in done.stderr
    assert not store.exists()


HTTP = ["--session", CALLER, "--transport", "http"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--session", "agent:main"], "--session: "),
        (["--session", "global"], "--agent ID"),
        (["--session", CALLER, "--port", "http"], "--port: must be an integer"),
        (["--session", CALLER, "--port", "70000"], "--port: must be at most 65535"),
        (["--session", CALLER, "--poll-interval", "-1"], "--poll-interval: must be >= 0"),
        (["--session", CALLER, "--transport", "sse"], "--transport"),
        ([*HTTP, "--host", "0.0.0.0"], "--host: 0.0.0.0 is not a loopback"),  # noqa: S104
        ([*HTTP, "--host", "example.org"], "--host: example.org is not"),
        ([*HTTP, "--token", "short-token"], "--token: the bearer token"),
        ([*HTTP, "--token", "a token with spaces!"], "--token: the bearer"),
        (["--session", CALLER, "--token", "0123456789abcdef0123"], "--token: only with --transport http"),
    ],
)
def test_bad_options_exit_2_with_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    argv: list[str],
    says: str,
) -> None:
    monkeypatch.delenv("SESSIONWATCH_MCP_TOKEN", raising=False)
    outcome = cli(capsys, "mcp", *argv, "--db", str(tmp_path / "state.db"))
    assert outcome.code == 2
    assert outcome.err.count("\n") == 1
    assert says in outcome.err
    assert not (tmp_path / "state.db").exists()
    if "--token" in argv:
        assert argv[argv.index("--token") + 1] not in outcome.err  # a token is never printed


def test_off_loopback_the_refusal_names_both_ways_to_give_a_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SESSIONWATCH_MCP_TOKEN", raising=False)
    argv = ["mcp", "--session", CALLER, "--transport", "http", "--host", "192.168.1.10"]
    outcome = cli(capsys, *argv, "--db", str(tmp_path / "state.db"))
    assert outcome.code == 2
    assert "--token" in outcome.err
    assert "SESSIONWATCH_MCP_TOKEN" in outcome.err
    monkeypatch.setenv("SESSIONWATCH_MCP_TOKEN", "too-short")
    weak = cli(capsys, *argv, "--db", str(tmp_path / "state.db"))
    assert weak.code == 2
    assert weak.err.startswith("sessionwatch: error: $SESSIONWATCH_MCP_TOKEN: the bearer token must be")
    assert "too-short" not in weak.err
    assert not (tmp_path / "state.db").exists()


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LocalHost", True),
        ("0.0.0.0", False),  # noqa: S104 - every interface
        ("::", False),
        ("192.168.1.10", False),
        ("example.org", False),
    ],
)
def test_only_loopback_hosts_serve_without_a_token(host: str, *, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    if loopback:
        check_exposure(host, None)
    else:
        with pytest.raises(ExposureError) as refused:
            check_exposure(host, None)
        assert refused.value.option == "--host"
    check_exposure(host, "a-token-long-enough-0123")


async def _serve_refuses_off_loopback() -> None:
    await serve(ServerOptions(url="memory://", session=CALLER, transport="http", host="0.0.0.0"))  # noqa: S104


def test_the_server_itself_refuses_the_network_without_a_token() -> None:
    with pytest.raises(ExposureError):
        asyncio.run(_serve_refuses_off_loopback())


def test_every_flag_of_the_command_says_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = cli(capsys, "mcp", "--help")
    assert outcome.code == 0
    for flag in (
        "--session",
        "--agent",
        "--transport",
        "--host",
        "--port",
        "--poll-interval",
        "--visibility",
        "--token",
    ):
        assert flag in outcome.out
    assert "127.0.0.1" in outcome.out
    assert "SESSIONWATCH_MCP_TOKEN" in outcome.out


# ------------------------------------------------------------------------------------- the feed


async def _opened() -> list[bool]:
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        await watch.record_spawn(requester_key=CALLER, child_key=CHILD, child_run_id="run-1")
        tools = CallerTools(watch, ToolContext(session_key=CALLER))
        feed = NoticeFeed(tools, SessionIdentity(CALLER, "main"))
        seen = [await feed.check(announce=False)]
        await watch.record(CHILD, kind=SignalKind.GOAL_CHANGED, actor=Actor.agent(CALLER), summary="mine")
        seen.append(await feed.check())  # the caller's own change: self-suppressed, no notice
        await watch.record_human_message(CHILD, channel="telegram")
        seen.append(await feed.check())  # a person's: the notice opens
        await watch.record_human_message(CHILD, channel="telegram")
        seen.append(await feed.check())  # coalesced into the same notice
        await watch.drain(CALLER)
        seen.append(await feed.check())  # the change after the notice: exactly one follow-up opens
        await watch.drain(CALLER)
        seen.append(await feed.check())  # nothing left
        return seen


def test_the_feed_announces_exactly_when_a_notice_opens_never_for_the_callers_own_actions() -> None:
    assert asyncio.run(_opened()) == [False, False, True, False, True, False]


# ------------------------------------------------------------------------------------ the tools


async def _watching(visibility: str) -> dict[str, Any] | str:
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        await watch.upsert_session(STRANGER)
        tools = CallerTools(
            watch,
            ToolContext(session_key=CALLER),
            config=ToolsConfig.model_validate({"visibility": visibility}),
        )
        try:
            return await tools.call("sessions_watch", {"sessionKey": STRANGER})
        except ToolCallError as exc:
            return str(exc)


def test_visibility_is_the_session_tools_own_tree_by_default_and_all_when_configured() -> None:
    assert asyncio.run(_watching("tree")) == (
        "sessions_watch: this server watches only a session whose status the caller may read. "
        "Session status visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree)."
    )
    answer = asyncio.run(_watching("all"))
    assert isinstance(answer, dict)
    assert answer["watched"] is True


async def _in_process() -> tuple[list[str], str]:
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        tools = CallerTools(watch, ToolContext(session_key=CALLER))
        feed = NoticeFeed(tools, SessionIdentity(CALLER, "main"))
        async with Client(build_server(tools, feed)) as client:
            resources = await client.list_resources()
            listed = [resource.uri for resource in resources.resources]
            result = await client.call_tool("session_status", {"limit": "many"})
            (content,) = result.content
            assert result.is_error
            return listed, getattr(content, "text", "")


def test_the_one_resource_is_the_callers_notices_and_a_mistyped_argument_names_itself() -> None:
    listed, error = asyncio.run(_in_process())
    assert listed == [notices_uri(CALLER)] == [f"sessionwatch://notices/{CALLER}"]
    assert error.startswith("session_status: limit: ")


# ------------------------------------------------------------- notices the caller may reconcile

GROUP = "agent:main:telegram:group:42"


async def _given_notices(visibility: str) -> dict[str, Any]:
    """CALLER spawned CHILD; a person talks in GROUP (main follows its agent's groups, ambiently)."""
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        await watch.record_spawn(requester_key=CALLER, child_key=CHILD, child_run_id="run-1")
        for _ in range(2):  # a person talks in the group until its (ambient) notice is pending
            if GROUP in {n.target for n in await watch.pending_notices(CALLER)}:
                break
            await watch.record_human_message(GROUP, channel="telegram")
        await watch.record_human_message(CHILD, channel="telegram")
        assert {n.target for n in await watch.pending_notices(CALLER)} == {CHILD, GROUP}
        tools = CallerTools(
            watch,
            ToolContext(session_key=CALLER),
            config=ToolsConfig.model_validate({"visibility": visibility}),
        )
        feed = NoticeFeed(tools, SessionIdentity(CALLER, "main"))
        async with Client(build_server(tools, feed)) as client:
            listed = json.loads(text_of(await client.call_tool("session_notices", {})))["notices"]
            resource = await client.read_resource(notices_uri(CALLER))
            (contents,) = resource.contents
            assert isinstance(contents, types.TextResourceContents)
            reconciled = [
                await client.call_tool(
                    "session_status", {"sessionKey": n["target"], "changesSince": n["lastSeen"]}
                )
                for n in listed
            ]
            acked = json.loads(text_of(await client.call_tool("session_notices", {"ack": True})))["notices"]
        return {
            "listed": [n["target"] for n in listed],
            "resource": [n["target"] for n in json.loads(contents.text)["notices"]],
            "reconciled": [not result.is_error for result in reconciled],
            "acked": [n["target"] for n in acked],
            "left": [n.target for n in await watch.pending_notices(CALLER)],
        }


def test_a_notice_is_given_only_for_a_session_the_caller_may_reconcile_and_the_rest_stays_pending() -> None:
    seen = asyncio.run(_given_notices("tree"))
    assert seen["listed"] == seen["resource"] == seen["acked"] == [CHILD]
    assert seen["reconciled"] == [True]  # every notice given is one session_status answers
    assert seen["left"] == [GROUP]  # never shown, so never acknowledged: another reader may give it


def test_a_wider_visibility_gives_the_notices_it_makes_reconcilable() -> None:
    seen = asyncio.run(_given_notices("agent"))
    assert sorted(seen["listed"]) == sorted(seen["acked"]) == sorted([CHILD, GROUP])
    assert seen["reconciled"] == [True, True]
    assert seen["left"] == []


async def _feed_hears_of() -> list[bool]:
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        await watch.record_spawn(requester_key=CALLER, child_key=CHILD, child_run_id="run-1")
        tools = CallerTools(watch, ToolContext(session_key=CALLER))
        feed = NoticeFeed(tools, SessionIdentity(CALLER, "main"))
        seen = [await feed.check(announce=False)]
        for _ in range(2):
            await watch.record_human_message(GROUP, channel="telegram")
        seen.append(await feed.check())  # a notice about a session the caller may not read: no update
        await watch.record_human_message(CHILD, channel="telegram")
        seen.append(await feed.check())  # one it may: the update
        return seen


def test_the_feed_announces_no_notice_the_caller_could_not_reconcile() -> None:
    assert asyncio.run(_feed_hears_of()) == [False, False, True]


async def _refusals() -> dict[str, str]:
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        await watch.upsert_session(STRANGER)
        tools = CallerTools(watch, ToolContext(session_key=CALLER))
        refused: dict[str, str] = {}
        for name in ("session_status", "sessions_watch", "sessions_unwatch"):
            with pytest.raises(ToolCallError) as caught:
                await tools.call(name, {"sessionKey": STRANGER})
            refused[name] = str(caught.value)
        with pytest.raises(ToolCallError) as caught:
            await tools.call("sessions_list", {"limit": 0})
        refused["sessions_list"] = str(caught.value)
        return refused


def test_each_refusal_names_its_own_tool() -> None:
    refused = asyncio.run(_refusals())
    tree = (
        "Session status visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree)."
    )
    assert refused["session_status"] == f"session_status: {tree}"
    assert refused["sessions_watch"].startswith("sessions_watch: ")
    assert refused["sessions_unwatch"].startswith("sessions_unwatch: ")
    for name in ("sessions_watch", "sessions_unwatch"):
        assert refused[name].endswith(tree)  # the rule that refused it: watching follows status visibility
    assert refused["sessions_list"] == "sessions_list: limit must be a positive integer"


# --------------------------------------------------------------------------- resource templates


async def _templates() -> tuple[list[types.ResourceTemplate], str]:
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        tools = CallerTools(watch, ToolContext(session_key=CALLER))
        feed = NoticeFeed(tools, SessionIdentity(CALLER, "main"))
        async with Client(build_server(tools, feed)) as client:
            templates = (await client.list_resource_templates()).resource_templates
            (template,) = templates
            uri = template.uri_template.replace("{session}", CALLER)
            (contents,) = (await client.read_resource(uri)).contents
            assert isinstance(contents, types.TextResourceContents)
            return templates, contents.text


def test_resource_templates_list_names_the_notices_resource_of_the_served_session() -> None:
    templates, text = asyncio.run(_templates())
    assert [t.uri_template for t in templates] == ["sessionwatch://notices/{session}"]
    assert templates[0].mime_type == "application/json"
    assert json.loads(text) == {"session": CALLER, "notices": []}
