"""The MCP server's parts in one process: the `mcp` command's checks, the notices feed, the tools.

The feed tells subscribers only when a notice opens for the served session, so the caller's own
actions (self-suppressed by the core) never reach it. The command refuses bad options with one
line naming the flag, and exits 2 naming the install line when the `mcp` extra is missing.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runs import cli
from mcp import Client

import sessionwatch.aio
from sessionwatch import Actor, SignalKind
from sessionwatch.adapters.extras import install_hint
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.integrations.mcp import NoticeFeed, build_server, notices_uri
from sessionwatch.integrations.mcp_tools import CallerTools, ToolCallError

CALLER = "agent:main:main"
CHILD = "agent:main:subagent:worker"
STRANGER = "agent:main:elsewhere"


# ---------------------------------------------------------------------------------- the command


WITHOUT_THE_EXTRA = """
import sys
sys.modules["mcp"] = None  # `import mcp` fails in this process as if the package were not installed
from sessionwatch.adapters.entry.cli import main
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


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--session", "agent:main"], "--session: "),
        (["--session", "global"], "--agent ID"),
        (["--session", CALLER, "--port", "http"], "--port: must be an integer"),
        (["--session", CALLER, "--port", "70000"], "--port: must be at most 65535"),
        (["--session", CALLER, "--poll-interval", "-1"], "--poll-interval: must be >= 0"),
        (["--session", CALLER, "--transport", "sse"], "--transport"),
    ],
)
def test_bad_options_exit_2_with_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], says: str
) -> None:
    outcome = cli(capsys, "mcp", *argv, "--db", str(tmp_path / "state.db"))
    assert outcome.code == 2
    assert outcome.err.count("\n") == 1
    assert says in outcome.err
    assert not (tmp_path / "state.db").exists()


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
    ):
        assert flag in outcome.out
    assert "127.0.0.1" in outcome.out


# ------------------------------------------------------------------------------------- the feed


async def _opened() -> list[bool]:
    async with await sessionwatch.aio.open("memory://", sweep_on_open=False) as watch:
        await watch.upsert_session(CALLER)
        await watch.record_spawn(requester_key=CALLER, child_key=CHILD, child_run_id="run-1")
        feed = NoticeFeed(watch, SessionIdentity(CALLER, "main"))
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
        feed = NoticeFeed(watch, SessionIdentity(CALLER, "main"))
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
    assert error.startswith("limit: ")
