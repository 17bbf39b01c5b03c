"""The real-host harness itself, without the CLIs: fake model servers, Codex hook trust, the install rules."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import pytest
from hosts import install
from hosts.codex_host import snake_case, trust_hash
from hosts.fake_models import FakeAnthropic, FakeResponses, ToolCall, scripted

RECORDER = (
    "/work/wt/hosts/.venv/bin/python /work/wt/hosts/tests/hosts/record_hook.py /tmp/explore/x8/hooks.jsonl"
)
"""A hook command a person trusted in Codex 0.171.0's `/hooks`, and the hashes Codex wrote for it."""
TRUSTED_BY_CODEX = {
    ("SessionStart", 30): "sha256:c3d4dc9c6a2d3acf40b400e3c78f4b662871d7301fe30095fe7dca5181f22d52",
    ("UserPromptSubmit", 30): "sha256:3aac76761677bd2740f3322d39950ddc3201b1bf9fbd204e5cd5dd862a7ba9e9",
    ("SessionEnd", 3): "sha256:ed8bf1b156e931124177a86eda2f40a282a1f15f469724bd47eb006fc8037908",
}


def _post(url: str, path: str, body: object) -> tuple[int, str, list[tuple[str, dict[str, Any]]]]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    events = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return response.status, text, events


@pytest.mark.parametrize(("event", "timeout"), list(TRUSTED_BY_CODEX))
def test_the_trust_hash_is_the_one_codex_writes_when_a_person_trusts_a_hook(event: str, timeout: int) -> None:
    handler = {"type": "command", "command": RECORDER, "timeout": timeout}
    assert trust_hash(event, handler) == TRUSTED_BY_CODEX[(event, timeout)]


def test_codex_names_events_in_snake_case_in_trust_keys() -> None:
    assert [snake_case(e) for e in ("UserPromptSubmit", "SessionStart", "PreToolUse")] == [
        "user_prompt_submit",
        "session_start",
        "pre_tool_use",
    ]


def test_the_fake_anthropic_api_streams_a_tool_call_when_the_prompt_asks_for_it() -> None:
    rule = scripted({"SLEEPY": ToolCall("Bash", {"command": "sleep 1"})})
    with FakeAnthropic(rule) as server:
        body = {
            "stream": True,
            "model": "m",
            "tools": [{"name": "Bash"}],
            "messages": [{"role": "user", "content": "SLEEPY now"}],
        }
        status, _, events = _post(server.url, "/v1/messages?beta=true", body)
        assert status == 200
        assert [name for name, _ in events] == [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        tool = events[4][1]["content_block"]
        assert (tool["type"], tool["name"], tool["input"]) == ("tool_use", "Bash", {})
        assert json.loads(events[5][1]["delta"]["partial_json"]) == {"command": "sleep 1"}
        assert events[7][1]["delta"]["stop_reason"] == "tool_use"
        assert server.requests[-1].body == body


def test_the_fake_anthropic_api_says_done_after_a_tool_result_and_ok_without_tools() -> None:
    with FakeAnthropic(scripted({"SLEEPY": ToolCall("Bash", {})})) as server:
        result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}
        _, text, _ = _post(server.url, "/v1/messages", {"messages": [result], "tools": [{"name": "Bash"}]})
        assert json.loads(text)["content"] == [{"type": "text", "text": "done"}]
        asked = {"messages": [{"role": "user", "content": "SLEEPY"}]}  # no tools offered: a side request
        _, text, _ = _post(server.url, "/v1/messages", asked)
        assert json.loads(text)["content"] == [{"type": "text", "text": "ok"}]


def test_the_fake_apis_log_and_refuse_what_they_do_not_serve() -> None:
    with FakeAnthropic(scripted()) as anthropic, FakeResponses(scripted()) as responses:
        for server in (anthropic, responses):
            status, _, _ = _post(server.url, "/v1/elsewhere", {"probe": True})
            assert status == 404
            assert server.requests[-1].path == "/v1/elsewhere"


def test_the_fake_responses_api_streams_a_namespaced_function_call() -> None:
    rule = scripted({"SPAWN": ToolCall("spawn_agent", {"message": "go"}, namespace="multi_agent_v1")})
    with FakeResponses(rule) as server:
        tools = [
            {
                "type": "namespace",
                "name": "multi_agent_v1",
                "tools": [{"type": "function", "name": "spawn_agent"}],
            }
        ]
        body = {
            "stream": True,
            "tools": tools,
            "input": [{"type": "message", "role": "user", "content": "SPAWN"}],
        }
        status, _, events = _post(server.url, "/v1/responses", body)
        assert status == 200
        names = [name for name, _ in events]
        assert names[0] == "response.created"
        assert names[-1] == "response.completed"
        (call,) = [
            data["item"]
            for name, data in events
            if name == "response.output_item.done" and data["item"]["type"] == "function_call"
        ]
        assert (call["name"], call["namespace"], json.loads(call["arguments"])) == (
            "spawn_agent",
            "multi_agent_v1",
            {"message": "go"},
        )


def test_a_missing_tool_makes_the_hosts_unavailable_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert install.missing_tools() == ["node", "npm", "tmux"]
    with pytest.raises(install.HostUnavailable, match="node, npm, tmux not found on PATH"):
        install.ensure(install.CLAUDE_CODE, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(("value", "required"), [("", False), ("0", False), ("1", True)])
def test_the_hosts_are_required_only_when_the_variable_says_so(
    value: str, required: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(install.REQUIRE_VARIABLE, value)
    assert install.required() is required


def test_the_cache_lives_outside_the_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(install.CACHE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert install.cache_root() == tmp_path / "sessionwatch-hosts"
    assert (
        install.binary(install.CODEX)
        == tmp_path / "sessionwatch-hosts" / "codex@0.171.0" / "node_modules" / ".bin" / "codex"
    )
