"""Codex 0.171.0 for real: what a person typed, what sessionwatch's hook recorded and its provider counts.

Every scenario runs once per session (see conftest.py); these tests read its outcome. Rows that
sessionwatch cannot get right are expected failures naming the reason. The host-behaviour tests pin
what Codex itself does (hooks, their trust, their inputs, the rollout's labels, what an MCP server
is started with and what its calls carry), which sessionwatch's Codex hook and server rest on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hosts.codex_scenarios import PROMPT_CONTEXT, SCENARIOS, SESSION_CONTEXT
from hosts.runner import Shared
from hosts.scenario import Outcome, Scenario
from hosts.verdicts import described, params

pytestmark = pytest.mark.hosts

BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}
WITH_SUBAGENTS = [BY_NAME["cx-tui-subagent"], BY_NAME["cx-tui-review"]]
PROMPT_HOOK_KEYS = {
    "session_id",
    "turn_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "model",
    "permission_mode",
    "prompt",
}


@pytest.mark.parametrize("scenario", params([s for s in SCENARIOS if s.sessionwatch], "hook_wrong"))
def test_the_hook_records_each_turn_a_person_typed_once(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert outcome.hook_recorded == scenario.truth, described(outcome)


@pytest.mark.parametrize("scenario", params(SCENARIOS, "provider_wrong"))
def test_the_provider_counts_each_turn_a_person_typed_once(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert outcome.provider_counted == scenario.truth, described(outcome)


@pytest.mark.parametrize("scenario", params(WITH_SUBAGENTS, "subagent_wrong"))
def test_a_sub_agent_or_review_rollout_counts_nothing(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert len(outcome.transcripts) == 2, described(outcome)  # the session's rollout and the sub-agent's
    assert outcome.subagent_counted == 0, described(outcome)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[scenario.name for scenario in SCENARIOS])
def test_codex_runs_the_prompt_hook_as_pinned(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert outcome.prompt_hooks_fired == scenario.prompt_hooks, described(outcome)


@pytest.mark.scenarios("cx-exec-typed", "cx-exec-untrusted-hooks")
def test_codex_runs_hooks_from_hooks_json_only_once_their_hash_is_trusted(hosts: Shared) -> None:
    assert hosts.outcome("cx-exec-typed").events == ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]
    assert hosts.outcome("cx-exec-untrusted-hooks").events == []


@pytest.mark.scenarios("cx-tui-typed")
def test_the_prompt_hook_input_names_the_rollout_and_the_turn(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-typed")
    (prompt,) = [i for i in outcome.hook_inputs() if i["hook_event_name"] == "UserPromptSubmit"]
    assert set(prompt) == PROMPT_HOOK_KEYS
    (rollout,) = outcome.transcripts
    assert prompt["transcript_path"] == str(outcome.transcript_path(rollout))
    assert prompt["prompt"] == "hello there"


@pytest.mark.scenarios("cx-tui-daemon")
def test_leaving_the_tui_leaves_the_session_running_in_the_daemon(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-daemon")
    at_exit = json.loads((outcome.root / "events-at-exit.json").read_text(encoding="utf-8"))
    assert at_exit == ["SessionStart", "UserPromptSubmit", "Stop"]
    assert outcome.events == [*at_exit, "SessionEnd"]  # only once the daemon was stopped


@pytest.mark.scenarios("cx-tui-xml-tag")
def test_a_typed_prompt_is_labelled_as_the_users_in_the_rollout(hosts: Shared) -> None:
    message = _user_messages(hosts.outcome("cx-tui-xml-tag"))[-1]
    assert message["content"][0]["text"] == "<bug_report>the build fails on main</bug_report>"
    labels = message["internal_chat_message_metadata_passthrough"]
    assert labels["content_item_kinds"] == ["user.text"]
    assert labels["content_item_metadata"] == [{"provenance": {"type": "user"}}]


@pytest.mark.scenarios("cx-tui-shell")
def test_a_shell_command_runs_no_turn_hook_and_is_labelled_harness(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-shell")
    assert outcome.events == ["SessionEnd"]
    message = _user_messages(outcome)[-1]
    assert message["content"][0]["text"].startswith("<user_shell_command>")
    labels = message["internal_chat_message_metadata_passthrough"]
    assert labels["content_item_kinds"] == ["shell.user_command"]
    assert labels["content_item_metadata"][0]["provenance"]["type"] == "harness"


@pytest.mark.scenarios("cx-tui-goal")
def test_a_goal_is_harness_context_and_runs_no_prompt_hook(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-goal")
    first = _user_messages(outcome)[0]
    assert first["content"][0]["text"].startswith('<codex_internal_context source="user_goal">')
    labels = first["internal_chat_message_metadata_passthrough"]
    assert labels["content_item_kinds"] == ["user.goal"]
    assert labels["content_item_metadata"][0]["provenance"]["type"] == "harness"


@pytest.mark.scenarios("cx-tui-plan-answer")
def test_a_plan_mode_answer_is_only_a_tool_output_and_a_retained_answer(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-plan-answer")
    (rollout,) = outcome.transcripts
    records = outcome.records(rollout)
    outputs = [r["payload"] for r in records if r["payload"].get("type") == "function_call_output"]
    assert (
        json.loads(outputs[0]["output"])["answers"]["color"]["answers"][-1]
        == "user_note: green, like the logo"
    )
    (answer,) = [r["payload"] for r in records if r["type"] == "retained_context"]
    assert answer["type"] == "verified_answer"
    assert "green, like the logo" in answer["questions"][0]["answer"]


@pytest.mark.scenarios("cx-tui-subagent")
def test_a_sub_agent_runs_the_prompt_hook_under_the_parent_session_with_its_agent_id(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-subagent")
    prompts = [i for i in outcome.hook_inputs() if i["hook_event_name"] == "UserPromptSubmit"]
    parent, child = prompts
    assert child["session_id"] == parent["session_id"]
    assert set(child) - set(parent) == {"agent_id", "agent_type"}
    assert child["transcript_path"] != parent["transcript_path"]
    meta = outcome.records(child["transcript_path"].rsplit("/", 1)[1])[0]["payload"]
    assert (meta["thread_source"], list(meta["source"])) == ("subagent", ["subagent"])


@pytest.mark.scenarios("cx-exec-hook-context")
@pytest.mark.parametrize("text", [SESSION_CONTEXT, PROMPT_CONTEXT])
def test_hook_context_reaches_the_model_as_a_developer_message(text: str, hosts: Shared) -> None:
    outcome = hosts.outcome("cx-exec-hook-context")
    body = next(r["body"] for r in outcome.requests() if r["path"].endswith("/responses"))
    carrying = [item for item in body["input"] if text in json.dumps(item)]
    assert [(item["type"], item["role"]) for item in carrying] == [("message", "developer")]


@pytest.mark.scenarios("cx-tui-mcp-server")
def test_codex_starts_an_mcp_server_with_no_session_id_in_its_environment(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-mcp-server")
    (started,) = [json.loads(line) for line in (outcome.root / "mcp-server.jsonl").read_text().splitlines()]
    assert started["env"] == {}  # no CODEX_* variable at all, so no session id
    assert set(started["names"]) <= {
        "HOME",
        "LANG",
        "LC_ALL",
        "LOGNAME",
        "PATH",
        "SHELL",
        "TERM",
        "TMPDIR",
        "TZ",
        "USER",
    }


def _user_messages(outcome: Outcome) -> list[dict[str, Any]]:
    """The rollout's user-role messages that are not the environment context, in order."""
    (rollout,) = list(outcome.transcripts)
    messages = [
        r["payload"]
        for r in outcome.records(rollout)
        if r["type"] == "response_item"
        and r["payload"].get("type") == "message"
        and r["payload"].get("role") == "user"
    ]
    return [
        m
        for m in messages
        if not json.dumps(m["content"]).startswith('[{"type": "input_text", "text": "<environment_context>')
    ]


@pytest.mark.scenarios("cx-tui-mcp-tools")
def test_sessionwatchs_server_serves_a_tool_call_as_the_session_its_meta_names(hosts: Shared) -> None:
    outcome = hosts.outcome("cx-tui-mcp-tools")
    (rollout,) = outcome.transcripts
    records = outcome.records(rollout)
    (call,) = [r["payload"] for r in records if r["payload"].get("type") == "function_call"]
    assert (call["name"], call.get("namespace")) == ("sessions_list", "mcp__sessionwatch")
    (output,) = [r["payload"] for r in records if r["payload"].get("type") == "function_call_output"]
    listed = json.loads(_tool_text(output["output"]))
    (key,) = outcome.sessions
    assert [row["key"] for row in listed["sessions"]] == [key]  # served as the calling session, its project's
    assert listed["visibility"]["mode"] == "agent"


def _tool_text(output: object) -> str:
    """The JSON an MCP tool answered, as Codex records its output (`Wall time: ...\nOutput:\n<text>`)."""
    assert isinstance(output, str), output
    return output.split("Output:\n", 1)[1]
