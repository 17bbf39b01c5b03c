"""The MCP server's life as a host drives it: a health check registers nothing, SIGINT ends it at once.

`claude mcp list` starts every configured stdio server, initializes it, lists its tools and stops it;
a session registered then would stay in the store as a session nobody started. So the served
session is registered at its first tool call. Claude Code stops a stdio server with SIGINT and
sends SIGTERM a tenth of a second later if it is still there: an interrupted `sessionwatch` exits
at once, after its stores are closed, without the interpreter's slow clean-up and without a
traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

import sessionwatch
from sessionwatch.cli import cli
from sessionwatch.cli.cli_text import EXIT_INTERRUPTED
from sessionwatch.integrations.claude_code import session_key

SCRIPT = Path(sys.executable).parent / "sessionwatch"
CALLER = "agent:main:main"
SESSION_ID = "5d3c0f6e-2a41-4b8e-9f0d-7c6b5a4e3d21"
DEADLINE = 60.0
"""Seconds to wait for the server (start-up, an answer, its exit); never a correctness sleep."""


def request(method: str, ident: int | None = None, **params: object) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        message["id"] = ident
    if params:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def answer(stdout: IO[bytes]) -> dict[str, object]:
    line = stdout.readline()
    assert line, "the server closed its output"
    loaded = json.loads(line)
    assert isinstance(loaded, dict)
    return loaded


def start(argv: list[str], project: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    env |= {"CLAUDE_CODE_SESSION_ID": SESSION_ID, "CLAUDE_PROJECT_DIR": str(project)}
    return subprocess.Popen(
        [str(SCRIPT), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=project,
    )


def initialized(server: subprocess.Popen[bytes]) -> None:
    """The client's side of the handshake, then a tool list (what a health check does)."""
    assert server.stdin is not None
    assert server.stdout is not None
    info = {"name": "health-check", "version": "1"}
    server.stdin.write(
        request("initialize", 1, protocolVersion="2025-06-18", capabilities={}, clientInfo=info)
    )
    server.stdin.flush()
    assert "result" in answer(server.stdout)
    server.stdin.write(request("notifications/initialized") + request("tools/list", 2))
    server.stdin.flush()
    assert "result" in answer(server.stdout)


def call_tool(server: subprocess.Popen[bytes], name: str, ident: int) -> dict[str, object]:
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(request("tools/call", ident, name=name, arguments={}))
    server.stdin.flush()
    return answer(server.stdout)


def finish(server: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Close the client's end and wait for the server to go; its exit code and stderr."""
    assert server.stdin is not None
    assert server.stderr is not None
    server.stdin.close()
    code = server.wait(timeout=DEADLINE)
    return code, server.stderr.read().decode()


@pytest.fixture
def servers() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The servers a test started; any still running at its end is killed."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for server in started:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=DEADLINE)
        for stream in (server.stdin, server.stdout, server.stderr):
            if stream is not None:
                stream.close()


SERVERS = {
    "mcp": ["mcp", "--session", CALLER],
    "claude-code": ["claude-code", "mcp"],
}


@pytest.mark.parametrize("command", list(SERVERS))
def test_a_health_check_registers_no_session_and_a_tool_call_does(
    command: str, tmp_path: Path, servers: list[subprocess.Popen[bytes]]
) -> None:
    store = tmp_path / "sessionwatch.db"
    argv = [*SERVERS[command], "--db", str(store)]
    served = CALLER if command == "mcp" else session_key(tmp_path, SESSION_ID)

    checked = start(argv, tmp_path)
    servers.append(checked)
    initialized(checked)
    code, err = finish(checked)
    assert (code, err) == (0, "")
    with sessionwatch.open(str(store)) as watch:
        assert watch.registry_entries() == []

    used = start(argv, tmp_path)
    servers.append(used)
    initialized(used)
    result = call_tool(used, "session_notices", 3)["result"]
    assert isinstance(result, dict)
    assert result.get("isError") is not True, result
    assert finish(used)[0] == 0
    with sessionwatch.open(str(store)) as watch:
        assert [entry.session_key for entry in watch.registry_entries()] == [served]


@pytest.mark.parametrize("command", list(SERVERS))
def test_sigint_ends_the_server_without_a_traceback(
    command: str, tmp_path: Path, servers: list[subprocess.Popen[bytes]]
) -> None:
    server = start([*SERVERS[command], "--db", str(tmp_path / "sessionwatch.db")], tmp_path)
    servers.append(server)
    initialized(server)
    assert server.stderr is not None

    server.send_signal(signal.SIGINT)  # the client's stdin stays open, as Claude Code's does

    assert server.wait(timeout=DEADLINE) == EXIT_INTERRUPTED
    err = server.stderr.read().decode()
    assert "Traceback" not in err
    assert err.splitlines() == ["sessionwatch: error: interrupted"]


def test_an_interrupted_process_exits_at_once_after_flushing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ended: list[int] = []

    def interrupted(_argv: object) -> int:
        sys.stdout.write("printed before the interrupt\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run", interrupted)
    monkeypatch.setattr(os, "_exit", ended.append)  # the fake returns; the real one never does

    assert cli.main() == EXIT_INTERRUPTED  # argv None: run as the process itself
    assert ended == [EXIT_INTERRUPTED]
    assert capsys.readouterr().out == "printed before the interrupt\n"
    assert cli.main(["list"]) == EXIT_INTERRUPTED  # called in-process: returns, ends nothing
    assert ended == [EXIT_INTERRUPTED]
