"""The in-Claude-Code hook benchmark edits what the installer writes: it must keep up with the installer.

`bench/hook_claude.py` takes an installed project and makes its prompt and stop handlers the
interpreter's floor (the floor session), or takes sessionwatch's MCP server out of it (the session
without one), and times each handler from Claude Code's `hook_started` to its `hook_response`
event. An installer that writes another shape would break it only in a bench run (which needs the
real CLI); these check it on a project the installer just wrote, without Claude Code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root holds `bench`

from hosts.claude_host import ClaudeCodeHost

from bench.hook import FLOOR
from bench.hook_claude import PROMPT, STOP, floor_handlers, hook_run, no_server


def installed(root: Path) -> ClaudeCodeHost:
    """A project with sessionwatch's hooks and server, as `sessionwatch claude-code install` writes them."""
    return ClaudeCodeHost(root / "no-cli", root, "http://127.0.0.1:9", settings={"hooks": {}}).prepare()


def handlers(project: Path) -> dict[str, list[str]]:
    settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    return {
        event: [handler["command"] for group in groups for handler in group["hooks"]]
        for event, groups in settings["hooks"].items()
    }


def servers(project: Path) -> dict[str, object]:
    found: dict[str, object] = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    return found


def test_the_floor_session_runs_the_interpreter_for_prompt_and_stop_and_sessionwatch_for_the_rest(
    tmp_path: Path,
) -> None:
    host = installed(tmp_path)
    before = handlers(host.project)
    floor_handlers(host.project)
    after = handlers(host.project)
    assert after[PROMPT] == after[STOP] == [" ".join(FLOOR)]
    assert {event: commands for event, commands in after.items() if event not in {PROMPT, STOP}} == {
        event: commands for event, commands in before.items() if event not in {PROMPT, STOP}
    }
    assert all("claude-code hook" in command for command in after["SessionStart"])


def test_the_session_without_a_server_keeps_its_hooks_and_loses_sessionwatchs_server(tmp_path: Path) -> None:
    host = installed(tmp_path)
    before = handlers(host.project)
    assert (
        "sessionwatch" in json.loads((host.project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    )
    no_server(host.project)
    assert (
        "sessionwatch"
        not in json.loads((host.project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    )
    assert handlers(host.project) == before


def event(subtype: str, hook_id: str, hook_event: str, **fields: object) -> dict[str, object]:
    """A hook event of the stream, shaped as Claude Code 2.1.197 writes it with `--include-hook-events`."""
    return {"type": "system", "subtype": subtype, "hook_id": hook_id, "hook_event": hook_event, **fields}


def test_a_hooks_time_runs_from_its_start_event_to_its_response_event() -> None:
    events = [
        event("hook_started", "a", PROMPT),
        event("hook_started", "b", STOP),
        event("hook_response", "a", PROMPT, stdout="out", outcome="success"),
        event("hook_response", "b", STOP, stdout="", outcome="success"),
    ]
    arrivals = [1.0, 1.5, 1.25, 2.0]
    prompt = hook_run(events, arrivals, PROMPT)
    assert (prompt.ms, prompt.stdout) == (250.0, "out")
    assert hook_run(events, arrivals, STOP).ms == 500.0


def test_two_handlers_of_one_event_in_a_turn_are_refused() -> None:
    events = [
        event("hook_started", "a", PROMPT),
        event("hook_started", "b", PROMPT),
        event("hook_response", "a", PROMPT, outcome="success"),
        event("hook_response", "b", PROMPT, outcome="success"),
    ]
    with pytest.raises(AssertionError, match="one UserPromptSubmit handler"):
        hook_run(events, [0.0, 0.0, 0.1, 0.2], PROMPT)
