"""What the Codex provider counts on rollouts that carry Codex's own labels (0.171 and later).

The labels decide where Codex writes them: a block a person wrote has provenance `user`, whatever
its text looks like; a `!command` and a `/goal` are a person's acts though the harness writes them.
A review's outcome, a compaction a person asked for and a typed answer to a Plan-mode question are
a person's turns too. A rollout a sub-agent or a review wrote counts nothing, however it is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_transcripts import append
from codex_labelled import (
    COMPACT_TURN,
    TURN,
    agents_md_and_environment,
    answers_output,
    compacted,
    environment,
    goal,
    goal_continuation,
    item_completed_user,
    message,
    meta,
    pasted_image,
    review_outcome,
    shell_command,
    subagent_notification,
    task_started,
    turn_aborted,
    typed,
    verified_answer,
)
from transcript_probes import activity, probe

from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider
from sessionwatch.domain.upstream import UpstreamActivity


@pytest.fixture
def provider() -> JsonlTranscriptProvider:
    return JsonlTranscriptProvider.codex()


def counted(provider: JsonlTranscriptProvider, path: Path, *records: dict[str, object]) -> int:
    append(path, meta(), task_started(), environment(), *records)
    return activity(provider, probe(str(path))).human_turns


def test_a_typed_prompt_starting_with_a_tag_is_a_persons_by_its_labels(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    prompt = typed("<bug_report>the build fails on main</bug_report>")
    assert counted(provider, tmp_path / "r.jsonl", prompt, item_completed_user("x")) == 1


def test_context_interrupts_and_agent_messages_are_not_human_turns_by_their_labels(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    records = (agents_md_and_environment(), turn_aborted(), subagent_notification(), goal_continuation())
    assert counted(provider, tmp_path / "r.jsonl", *records) == 0


def test_a_tool_block_in_a_message_a_person_wrote_does_not_hide_the_person(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    mixed = message(
        [
            ("ide.context", "harness", "<ide_context>open: main.py</ide_context>"),
            ("user.text", "user", "fix it"),
        ]
    )
    assert counted(provider, tmp_path / "r.jsonl", mixed) == 1


def test_a_pasted_image_alone_is_one_turn_whose_placeholder_is_not_its_words(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "r.jsonl"
    append(path, meta(), pasted_image())
    # the session itself once sent the text "[Image #1]": a prompt whose words were that would be its echo
    assert activity(provider, probe(str(path), own=("[Image #1]",))).human_turns == 1


def test_a_shell_command_and_a_goal_are_a_persons_though_the_harness_writes_them(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    assert counted(provider, tmp_path / "r.jsonl", shell_command(), goal(), goal_continuation()) == 2


def test_a_review_a_person_started_is_one_turn_in_the_sessions_rollout(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    assert counted(provider, tmp_path / "r.jsonl", review_outcome()) == 1


def test_a_compaction_a_person_asked_for_is_one_turn_an_automatic_one_none(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    manual = compacted(turn=COMPACT_TURN, attributed=TURN)  # ran in a turn of its own, no prompt started it
    automatic = compacted(turn=TURN, attributed=TURN)  # ran inside the turn a prompt started
    path = tmp_path / "r.jsonl"
    assert counted(provider, path, typed("hello there"), automatic) == 1
    assert (
        counted(
            provider, tmp_path / "m.jsonl", typed("hello there"), task_started(None, COMPACT_TURN), manual
        )
        == 2
    )


def test_a_compaction_first_in_a_session_is_a_persons(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    assert counted(provider, tmp_path / "r.jsonl", compacted(turn=COMPACT_TURN, attributed=None)) == 1


def test_a_typed_answer_to_a_plan_mode_question_is_one_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    records = (typed("ASKME which color"), verified_answer(), answers_output())
    assert counted(provider, tmp_path / "r.jsonl", *records) == 2


@pytest.mark.parametrize(
    "source",
    [{"subagent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1}}}, {"subagent": "review"}],
    ids=["sub-agent", "review"],
)
def test_a_sub_agents_or_a_reviews_rollout_counts_nothing_however_it_is_read(
    provider: JsonlTranscriptProvider, tmp_path: Path, source: object
) -> None:
    path = tmp_path / "r.jsonl"
    append(path, meta(source, "subagent"))
    first = activity(provider, probe(str(path)))
    append(path, task_started(), environment(), typed("look at the readme and say ok"))

    answer = activity(provider, probe(str(path), marker=first.next_marker))  # the marker is past session_meta

    assert first.human_turns == answer.human_turns == 0
    assert isinstance(answer, UpstreamActivity)
    assert answer.next_marker == {"offset": path.stat().st_size}


def test_a_rollout_without_labels_is_judged_by_its_text(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    unlabelled = message([("unknown", None, "<environment_context>x</environment_context>")])
    also = message([("unknown", None, "a prompt of an older version")])
    assert counted(provider, tmp_path / "r.jsonl", unlabelled, also) == 1
