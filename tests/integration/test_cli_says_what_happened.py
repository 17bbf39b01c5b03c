"""The command line says what happened: a duplicate is called one, a key no command can use is explained.

A repeated dedupe key records nothing and says which signal answered it. Every command that reads
a watcher applies the rule `status` applies to a key: a key that can never be a watcher (not
agent-qualified) is bad input naming WATCHER, and a watcher the store knows nothing of (no session,
no cursor) is an unknown session, as `status` says of an unknown key. `list` gives a session the
kind the MCP server's `sessions_list` gives it.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
from cli_runs import Outcome, cli
from stores import PG_URL, needs_postgres

import sessionwatch
import sessionwatch.aio
from sessionwatch.adapters.stores.port import one_line_error as one_line_error_of
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.integrations.mcp_tools import CallerTools

MAIN = "agent:main:main"
CHILD = "agent:main:subagent:child"
GHOST = "agent:main:ghost"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'state.db'}"


def one_line_error(outcome: Outcome) -> str:
    assert outcome.code == 2, outcome
    assert outcome.out == ""
    (line,) = outcome.err.splitlines()
    assert line.startswith("sessionwatch: error: ")
    return line.removeprefix("sessionwatch: error: ")


# ------------------------------------------------------------------------------ a duplicate key


def test_a_repeated_dedupe_key_says_duplicate_and_which_signal_answered(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    argv = ["record", "goal_changed", CHILD, "--dedupe-key", "k", "--db", url]
    first = cli(capsys, *argv, "--summary", "first goal")
    again = cli(capsys, *argv, "--summary", "second goal")
    as_json = cli(capsys, *argv, "--summary", "third goal", "--json")

    assert first.out.startswith("recorded #1 ")
    assert again.code == 0  # nothing failed: a dedupe key exists so that a retry is harmless
    assert again.err == ""
    assert not again.out.startswith("recorded")
    assert "duplicate" in again.out
    assert "#1 " in again.out
    assert "first goal" in again.out
    assert "second goal" in again.out  # the summary it did not keep is named, not dropped silently
    assert again.out.count("\n") == 1
    printed = json.loads(as_json.out)
    assert printed["duplicate"] is True
    assert (printed["sequence"], printed["summary"]) == (1, "first goal")
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        assert watch.session_status(CHILD).state_version == 1


def test_a_fresh_record_with_a_dedupe_key_is_no_duplicate(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    cli(capsys, "record", "goal_changed", MAIN, "--summary", "other", "--dedupe-key", "a", "--db", url)
    fresh = cli(capsys, "record", "goal_changed", CHILD, "--summary", "s", "--dedupe-key", "b", "--db", url)
    as_json = cli(
        capsys, "--json", "record", "goal_changed", CHILD, "--summary", "s", "--dedupe-key", "c", "--db", url
    )

    assert fresh.out.startswith("recorded #2 ")
    assert "duplicate" not in fresh.out
    assert "duplicate" not in json.loads(as_json.out)


# ------------------------------------------------------------------------------- watcher keys


@pytest.mark.parametrize(
    "argv",
    [
        ["notices", "main"],
        ["drain", "main"],
        ["watched", "main"],
        ["watched", "main", "--prompt"],
        ["unwatch", "main", CHILD],
    ],
)
def test_a_bare_watcher_is_explained_as_status_explains_a_bare_key(
    capsys: pytest.CaptureFixture[str], url: str, argv: list[str]
) -> None:
    with sessionwatch.open(url) as watch:
        watch.record_spawn(requester_key=MAIN, child_key=CHILD, child_run_id="r1")
    status = one_line_error(cli(capsys, "status", "main", "--db", url))
    refused = one_line_error(cli(capsys, *argv, "--db", url))

    assert "bare key" in status
    assert refused == (
        "WATCHER: main is not an agent-qualified key (agent:<id>:<rest>); such sessions are never notified"
    )
    watch_refusal = cli(capsys, "watch", "main", CHILD, "--db", url)  # watch answers no with the same words
    assert watch_refusal.out == f"refused: {refused.removeprefix('WATCHER: ')}\n"


@pytest.mark.parametrize(
    "argv", [["notices", GHOST], ["drain", GHOST], ["watched", GHOST], ["watched", GHOST, "--prompt"]]
)
def test_an_unknown_watcher_is_an_unknown_session_as_status_says(
    capsys: pytest.CaptureFixture[str], url: str, argv: list[str]
) -> None:
    with sessionwatch.open(url) as watch:
        watch.record_spawn(requester_key=MAIN, child_key=CHILD, child_run_id="r1")
    status = one_line_error(cli(capsys, "status", GHOST, "--db", url))
    refused = one_line_error(cli(capsys, *argv, "--db", url))

    assert refused == status == f"Unknown sessionKey: {GHOST}"


@pytest.mark.parametrize("command", ["notices", "drain"])
def test_a_known_watcher_without_notices_still_prints_nothing(
    capsys: pytest.CaptureFixture[str], url: str, command: str
) -> None:
    boss = "agent:main:boss"
    with sessionwatch.open(url) as watch:
        watch.upsert_session("agent:main:idle")
        watch.record(
            CHILD, kind="goal_changed", actor=sessionwatch.Actor.human(), summary="s", watchers=[boss]
        )
        watch.drain(boss)  # a watcher known by its cursor alone: no registered session
    for watcher in ("agent:main:idle", boss):
        outcome = cli(capsys, command, watcher, "--db", url)
        assert (outcome.code, outcome.out, outcome.err) == (0, "", "")


# ------------------------------------------------------------------------- PostgreSQL errors


def test_a_postgresql_error_is_one_line_without_escaped_line_breaks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as probe:  # a port nothing listens on: libpq's refusal has a second line
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    line = one_line_error(cli(capsys, "list", "--db", f"postgresql://postgres@127.0.0.1:{port}/test"))

    assert "Connection refused" in line
    assert "Is the server running" in line
    assert "\\n" not in line
    assert "\\t" not in line


@needs_postgres
def test_a_postgresql_error_with_a_query_context_reads_as_one_line() -> None:
    import psycopg  # noqa: PLC0415 - the postgres extra

    with psycopg.connect(PG_URL) as conn, pytest.raises(psycopg.Error) as failed:
        conn.execute("SELEC 1")
    assert "\n" in str(failed.value)  # libpq's own message: the error, LINE 1 and a caret line

    line = one_line_error_of(failed.value)
    assert line == 'SyntaxError: syntax error at or near "SELEC"; LINE 1: SELEC 1'


# ------------------------------------------------------------------------------ session kinds

KEYS = (
    MAIN,
    CHILD,
    "agent:main:telegram:group:42",
    "agent:main:cron:daily",
    "agent:main:hook:deploy",
    "agent:main:node-7",
    "agent:main:discord:channel:9",
    "agent:main:elsewhere",
)


async def _mcp_kinds(url: str) -> dict[str, str]:
    """The kinds the MCP server's `sessions_list` gives, asked with every session of the agent visible."""
    async with await sessionwatch.aio.open(url, sweep_on_open=False) as watch:
        tools = CallerTools(watch, ToolContext(session_key=MAIN), config=ToolsConfig(visibility="agent"))
        listed = await tools.call("sessions_list", {})
    return {row["key"]: row["kind"] for row in listed["sessions"]}


def test_list_and_the_mcp_sessions_list_give_a_session_the_same_kind(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    with sessionwatch.open(url) as watch:
        for key in KEYS:
            watch.record_goal_changed(key, summary="s", actor=sessionwatch.Actor.human())
        watch.upsert_session("agent:main:custom", kind="group")  # a kind the host set wins
    printed = json.loads(cli(capsys, "--json", "list", "--db", url).out)
    listed = {row["sessionKey"]: row["kind"] for row in printed}
    text = {line.split()[0]: line.split()[4] for line in cli(capsys, "list", "--db", url).out.splitlines()}

    assert listed == text == asyncio.run(_mcp_kinds(url))
    assert listed[MAIN] == "main"
    assert listed[CHILD] == "other"
    assert listed["agent:main:telegram:group:42"] == listed["agent:main:discord:channel:9"] == "group"
    assert listed["agent:main:cron:daily"] == "cron"
    assert listed["agent:main:hook:deploy"] == "hook"
    assert listed["agent:main:node-7"] == "node"
    assert listed["agent:main:custom"] == "group"
