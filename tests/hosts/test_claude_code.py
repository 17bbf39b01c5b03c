"""Claude Code 2.1.197 for real: what a person typed, what sessionwatch's hook and provider made of it.

Every scenario runs once per session (see conftest.py); these tests read its outcome. Rows that
sessionwatch gets wrong today would be expected failures naming the reason (none are, for this
version). The host-behaviour tests pin
what Claude Code itself does (which hooks it runs, what their inputs and the transcript carry),
because the hook design rests on it: if a new version changes it, these fail first.
"""

from __future__ import annotations

import json

import pytest
from hosts.claude_host import LEAD
from hosts.claude_scenarios import SCENARIOS
from hosts.evidence import turns
from hosts.runner import Shared
from hosts.scenario import Scenario
from hosts.verdicts import described, params

import sessionwatch

pytestmark = pytest.mark.hosts

BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}
PROMPT_HOOK_KEYS = {
    "cwd",
    "hook_event_name",
    "permission_mode",
    "prompt",
    "prompt_id",
    "session_id",
    "transcript_path",
}


@pytest.mark.parametrize("scenario", params(SCENARIOS, "hook_wrong"))
def test_the_hook_records_each_turn_a_person_typed_once(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert outcome.hook_recorded == scenario.truth, described(outcome)


@pytest.mark.parametrize("scenario", params(SCENARIOS, "provider_wrong"))
def test_the_provider_counts_each_turn_a_person_typed_once(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert outcome.provider_counted == scenario.truth, described(outcome)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[scenario.name for scenario in SCENARIOS])
def test_claude_code_runs_the_prompt_hook_as_pinned(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert outcome.prompt_hooks_fired == scenario.prompt_hooks, described(outcome)


@pytest.mark.parametrize(
    "scenario", params([s for s in SCENARIOS if s.store_sessions is not None], "store_wrong")
)
def test_the_store_holds_only_the_sessions_a_person_started(scenario: Scenario, hosts: Shared) -> None:
    outcome = hosts.outcome(scenario.name)
    assert len(outcome.sessions) == scenario.store_sessions, described(outcome)


@pytest.mark.scenarios(*BY_NAME)
def test_the_prompt_hook_input_never_says_who_wrote_the_prompt(hosts: Shared) -> None:
    seen = []
    for name in BY_NAME:
        outcome = hosts.outcome(name)
        seen += [set(i) for i in outcome.hook_inputs() if i["hook_event_name"] == "UserPromptSubmit"]
    assert seen
    assert all(keys == PROMPT_HOOK_KEYS for keys in seen), seen


@pytest.mark.scenarios("cc-tui-typed")
def test_hooks_and_the_mcp_server_know_the_session_id(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-typed")
    for hook_input, environ in zip(outcome.hook_inputs(), outcome.hook_environments(), strict=True):
        assert environ["CLAUDE_CODE_SESSION_ID"] == hook_input["session_id"]
        assert environ["CLAUDE_PROJECT_DIR"].endswith("/project")
    (session_id,) = {i["session_id"] for i in outcome.hook_inputs()}
    assert [key.rsplit(":", 1)[1] for key in outcome.sessions] == [session_id]


@pytest.mark.scenarios("cc-tui-absorbed", "cc-stream-busy")
@pytest.mark.parametrize("name", ["cc-tui-absorbed", "cc-stream-busy"])
def test_an_absorbed_prompt_fires_stop_but_no_prompt_hook(name: str, hosts: Shared) -> None:
    outcome = hosts.outcome(name)
    assert _lifecycle(outcome.events) == ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]
    assert "PostToolUse" in outcome.events
    (transcript,) = outcome.transcripts
    records = outcome.records(transcript)
    operations = [r["operation"] for r in records if r["type"] == "queue-operation"]
    assert operations[-2:] == ["enqueue", "remove"]
    (absorbed,) = [
        r["attachment"]
        for r in records
        if r["type"] == "attachment" and r["attachment"]["type"] == "queued_command"
    ]
    assert absorbed["commandMode"] == "prompt"
    assert absorbed.get("origin") == ({"kind": "human"} if name == "cc-tui-absorbed" else None)


@pytest.mark.scenarios("cc-tui-shell")
def test_shell_mode_fires_stop_but_no_prompt_hook(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-shell")
    assert _lifecycle(outcome.events) == ["SessionStart", "Stop", "SessionEnd"]
    (transcript,) = outcome.transcripts
    texts = [r["message"]["content"] for r in outcome.records(transcript) if r["type"] == "user"]
    assert "<bash-input>ls -a</bash-input>" in texts


@pytest.mark.scenarios("cc-tui-context", "cc-tui-usage")
@pytest.mark.parametrize("command", ["context", "usage"])
def test_a_built_in_command_fires_no_turn_hook_and_is_a_system_record(command: str, hosts: Shared) -> None:
    outcome = hosts.outcome(f"cc-tui-{command}")
    assert _lifecycle(outcome.events) == ["SessionStart", "SessionEnd"]
    (transcript,) = outcome.transcripts
    local = [
        r
        for r in outcome.records(transcript)
        if r["type"] == "system" and r.get("subtype") == "local_command"
    ]
    assert local[0]["content"].startswith(f"<command-name>/{command}</command-name>")


@pytest.mark.scenarios("cc-tui-compact")
def test_compact_fires_pre_compact_and_a_compact_session_start(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-compact")
    lifecycle = _lifecycle(outcome.events)
    assert lifecycle[-5:] == ["PreCompact", "SubagentStop", "SessionStart", "PostCompact", "SessionEnd"]
    starts = [i for i in outcome.hook_inputs() if i["hook_event_name"] == "SessionStart"]
    assert [i["source"] for i in starts] == ["startup", "compact"]


@pytest.mark.scenarios("cc-tui-clear")
def test_clear_ends_the_session_and_starts_another_linked_only_by_the_prompt_id(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-clear")
    inputs = outcome.hook_inputs()
    (ended,) = [i for i in inputs if i["hook_event_name"] == "SessionEnd" and i["reason"] == "clear"]
    (started,) = [i for i in inputs if i["hook_event_name"] == "SessionStart" and i["source"] == "clear"]
    assert started["session_id"] != ended["session_id"]
    assert started["prompt_id"] == ended["prompt_id"]
    assert set(started) == {"session_id", "transcript_path", "cwd", "hook_event_name", "source", "prompt_id"}
    assert ended["session_id"] not in json.dumps(started)  # nothing names the session it continues
    assert inputs.index(ended) + 1 == inputs.index(started)


@pytest.mark.scenarios("cc-tui-clear")
def test_after_clear_the_session_keeps_its_key_and_follows_its_new_transcript(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-clear")
    inputs = outcome.hook_inputs()
    (first, cleared) = [i["session_id"] for i in inputs if i["hook_event_name"] == "SessionStart"]
    (key,) = outcome.sessions
    assert key.endswith(f":claude-code:{first}")  # the key the lead watches, not a new one
    assert outcome.sessions[key] == BY_NAME["cc-tui-clear"].truth, described(outcome)
    with sessionwatch.open(str(outcome.root / "sessionwatch.db"), sweep_on_open=False) as watch:
        entry = watch.registry_entry(key)
        link = watch.upstream_link(key)
    assert entry is not None
    assert entry.session_id == cleared
    assert link is not None
    assert link.thread_id == cleared
    assert link.upstream_ref == str(outcome.transcript_path(f"{cleared}.jsonl"))


@pytest.mark.scenarios("cc-tui-clear")
def test_after_clear_the_lead_gets_the_notice_for_what_is_typed_next(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-clear")
    (key,) = outcome.sessions
    acknowledged = json.loads((outcome.root / "acknowledged.json").read_text(encoding="utf-8"))
    assert list(acknowledged) == [key]  # the lead had read what came before the /clear
    with sessionwatch.open(str(outcome.root / "sessionwatch.db"), sweep_on_open=False) as watch:
        assert [n.target for n in watch.pending_notices(LEAD)] == [key]
        since = watch.session_status(key, changes_since=acknowledged[key]).state_changes
    assert since is not None
    after = [e for e in since.events if e.kind.value == "human_direct_message"]
    assert sum(turns(e.payload) for e in after) >= 1, described(outcome)


@pytest.mark.scenarios("cc-tui-cron")
def test_a_cron_prompt_is_labelled_in_the_transcript_but_not_in_the_prompt_hook(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-cron")
    prompts = [i for i in outcome.hook_inputs() if i["hook_event_name"] == "UserPromptSubmit"]
    assert [p["prompt"] for p in prompts] == ["CRONME remind me in a minute", "check the deploy status"]
    assert set(prompts[1]) == PROMPT_HOOK_KEYS
    (transcript,) = outcome.transcripts
    records = outcome.records(transcript)
    fire = next(i for i, r in enumerate(records) if r.get("subtype") == "scheduled_task_fire")
    cron = next(r for r in records[fire:] if r["type"] == "user")
    assert (cron["isMeta"], cron["promptSource"], cron["message"]["content"]) == (
        True,
        "system",
        "check the deploy status",
    )


@pytest.mark.scenarios("cc-tui-subagent")
def test_a_sub_agent_transcript_counts_nothing(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-subagent")
    own = [name for name in outcome.transcripts if name.startswith("agent-")]
    assert own, described(outcome)
    assert outcome.subagent_counted == 0, described(outcome)


@pytest.mark.scenarios("cc-tui-question")
def test_a_persons_answer_is_the_tool_result_of_the_agents_question(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-tui-question")
    (transcript,) = outcome.transcripts
    (answer,) = [
        r["toolUseResult"]
        for r in outcome.records(transcript)
        if r["type"] == "user" and isinstance(r.get("toolUseResult"), dict)
    ]
    assert answer["answers"] == {"Which database should I use?": "SQLite"}
    assert "UserPromptSubmit" not in outcome.events[outcome.events.index("PreToolUse") :]


@pytest.mark.scenarios("cc-mcp-list")
def test_mcp_list_fires_only_session_end(hosts: Shared) -> None:
    outcome = hosts.outcome("cc-mcp-list")
    assert outcome.events == ["SessionEnd"]
    assert not outcome.transcripts


def _lifecycle(events: list[str]) -> list[str]:
    """The events that are not about tools (which any turn with a tool call adds)."""
    tools = {"PreToolUse", "PostToolUse", "PostToolBatch", "PostToolUseFailure", "InstructionsLoaded"}
    return [event for event in events if event not in tools]
