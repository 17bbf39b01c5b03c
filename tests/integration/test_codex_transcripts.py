"""What the Codex provider counts, rule by rule, on rollout fragments shaped like Codex CLI output.

A person's turn is a user message they typed (words, images, or a `!command`), counted once
however many records Codex writes for it. The context Codex injects as user messages, the
developer role, replies, reasoning, tool calls, token counts and compaction records are not.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from claude_transcripts import append
from codex_transcripts import (
    aborted_event,
    agent_event,
    agents_md,
    assistant_message,
    compacted,
    compaction_summary,
    context_event,
    developer_message,
    environment_context,
    function_call,
    function_call_output,
    reasoning,
    session_meta,
    skill_instructions,
    subagent_notification,
    token_count,
    turn_aborted,
    turn_context,
    user_event,
    user_message,
    user_shell_command,
)
from transcript_probes import activity, probe

from sessionwatch.adapters.upstream.transcripts import CODEX, JsonlTranscriptProvider


@pytest.fixture
def provider() -> JsonlTranscriptProvider:
    return JsonlTranscriptProvider.codex()


def counted(provider: JsonlTranscriptProvider, path: Path, *records: dict[str, object]) -> int:
    append(path, *records)
    return activity(provider, probe(str(path))).human_turns


def test_the_codex_preset_reads_codex_rollouts(provider: JsonlTranscriptProvider) -> None:
    assert provider.transcript_format is CODEX
    assert CODEX.name == "codex"


@pytest.mark.parametrize("legacy", [True, False], ids=["event-with-kind", "event-without-kind"])
def test_a_prompt_written_as_a_response_item_and_an_event_is_one_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path, legacy: bool
) -> None:
    path = tmp_path / "rollout.jsonl"
    append(
        path,
        user_message("fix the flaky test", "2026-11-30T11:58:00.000Z"),
        user_event("fix the flaky test", "2026-11-30T11:58:00.001Z", legacy=legacy),
        turn_context(),
        assistant_message("Fixed."),
        agent_event("Fixed."),
    )

    answer = activity(provider, probe(str(path)))

    assert answer.human_turns == 1
    assert answer.occurred_at == datetime(2026, 11, 30, 11, 58, tzinfo=UTC)


def test_a_prompt_written_only_as_a_response_item_is_one_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    assert (
        counted(provider, tmp_path / "r.jsonl", user_message("add a retry"), assistant_message("Added.")) == 1
    )


def test_a_prompt_written_only_as_an_event_is_not_counted(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    # Every version that writes the event also writes the message; the message is what counts.
    assert counted(provider, tmp_path / "r.jsonl", user_event("a lone event")) == 0


def test_injected_instructions_and_context_are_not_human_turns(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "r.jsonl",
        session_meta(),
        developer_message(),
        agents_md(),
        agents_md(legacy=True),
        context_event("<user_instructions>x</user_instructions>", "user_instructions"),
        environment_context(),
        context_event("<environment_context></environment_context>", "environment_context"),
        skill_instructions(),
        turn_context(),
    )
    assert turns == 0


def test_an_interrupted_turn_notice_is_not_a_human_turn_the_next_prompt_is(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "r.jsonl",
        function_call("pytest -x"),
        aborted_event(),
        turn_aborted(),
        user_message("skip that, just lint", "2026-11-30T11:59:41.000Z"),
        user_event("skip that, just lint", "2026-11-30T11:59:41.001Z"),
    )
    assert turns == 1


def test_replies_reasoning_tool_calls_and_token_counts_are_not_human_turns(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "r.jsonl",
        reasoning(),
        function_call("rg TODO"),
        function_call_output("adapters/entry/watch.py:12: TODO"),
        assistant_message("One TODO left."),
        agent_event("One TODO left."),
        token_count(),
    )
    assert turns == 0


def test_a_shell_command_the_person_ran_is_one_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(provider, tmp_path / "r.jsonl", user_shell_command("git log -1", "4be1c0d fix"))
    assert turns == 1


def test_a_sub_agents_notification_is_not_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    assert counted(provider, tmp_path / "r.jsonl", subagent_notification()) == 0


def test_a_compaction_summary_and_its_replacement_history_are_not_human_turns(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    assert counted(provider, tmp_path / "r.jsonl", compaction_summary(), compacted()) == 0


@pytest.mark.parametrize(("text", "images"), [("", 1), ("", 2), ("what is this error?", 1)])
def test_a_pasted_image_with_or_without_words_is_one_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path, text: str, images: int
) -> None:
    turns = counted(
        provider,
        tmp_path / "r.jsonl",
        user_message(text, images=images),
        user_event(text),
        assistant_message("ok"),
    )
    assert turns == 1


def test_a_prompt_equal_to_the_sessions_own_text_is_self_echo(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    append(path, user_message("relay: status?"), user_event("relay: status?"), user_message("a person typed"))

    assert activity(provider, probe(str(path), own=("relay: status?",))).human_turns == 1
