"""What the Claude Code provider counts, rule by rule, on fragments shaped like Claude Code 2.1.x output.

A person's turn is typed words, shell-mode input, a slash command or a pasted image, typed at the
prompt or while the agent was busy (queued). Everything else Claude Code writes in the user role is
not: task notifications, shell output echoes, other agents' messages, interrupt markers, local
command output, tool results, meta, sidechain and compact-summary records, scheduled prompts. A
prompt queued while the agent was busy is counted once, where Claude Code delivers it; the shapes
marked 2.1.197 are the ones the real CLI wrote (tests/hosts).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from claude_transcripts import (
    append,
    assistant,
    bash_input,
    bash_output,
    command_caveat,
    command_output,
    enqueue,
    image_prompt,
    interrupt,
    local_command,
    local_command_output,
    meta,
    notification_text,
    prompt,
    question_answer,
    question_declined,
    queue_operation,
    queued_command,
    reminded_prompt,
    scheduled_prompt,
    scheduled_task_fire,
    slash_command,
    task_notification,
    teammate_message,
    tool_result,
    turn_duration,
)
from pydantic import JsonValue
from transcript_probes import activity, ask, probe, read_to_end, warnings

from sessionwatch.adapters.upstream.transcript_formats import QUEUE_LIMIT
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider, marker_at_end
from sessionwatch.domain.upstream import UpstreamActivity

Records = list[dict[str, object]]


@pytest.fixture
def provider() -> JsonlTranscriptProvider:
    return JsonlTranscriptProvider.claude_code()


def counted(provider: JsonlTranscriptProvider, path: Path, *records: dict[str, object]) -> int:
    """Write the records to a fresh transcript and count its human turns in one read."""
    append(path, *records)
    return activity(provider, probe(str(path))).human_turns


# --------------------------------------------------------------------------- not a person's turn


@pytest.mark.parametrize("labelled", [True, False], ids=["labelled", "unlabelled"])
def test_a_background_task_notification_is_not_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path, labelled: bool
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        assistant("Started the test suite in the background."),
        turn_duration(),
        task_notification(labelled=labelled),
        assistant("The suite passed."),
    )
    assert turns == 0


def test_a_notification_queued_and_absorbed_or_delivered_is_not_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    text = notification_text()
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        enqueue(text),
        queue_operation("remove", reason="absorbed_mid_turn", commandUuid="c1"),
        queued_command(text, mode="task-notification"),
        enqueue(text, "2026-11-30T11:59:30.000Z"),
        queue_operation("dequeue", "2026-11-30T11:59:30.010Z"),
        task_notification(timestamp="2026-11-30T11:59:30.030Z"),
    )
    assert turns == 0


def test_shell_output_echoes_are_not_human_turns_but_the_shell_input_is_one(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        command_caveat(),
        bash_input("git status --short"),
        bash_output(" M adapters/entry/watch.py\n"),
        bash_output("", "fatal: not a git repository"),
    )
    assert turns == 1


@pytest.mark.parametrize("intro", [False, True], ids=["envelope", "introduced"])
def test_another_agents_message_is_not_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path, intro: bool
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        teammate_message("Claim task #2, then review the parser.", intro=intro),
        assistant("Claiming task #2."),
    )
    assert turns == 0


def test_interrupt_markers_are_not_human_turns_the_prompt_after_them_is(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        assistant("Running the migration"),
        interrupt(for_tool_use=True),
        interrupt(),
        prompt("stop, use the other database", "2026-11-30T11:59:08.000Z"),
    )
    assert turns == 1


def test_records_claude_code_marks_as_not_from_a_person_are_not_counted(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        prompt("continue where you left off", origin={"kind": "auto-continuation"}),
        prompt("status report please", promptSource="system"),
        prompt("a typed one", promptSource="typed", origin={"kind": "human"}),
    )
    assert turns == 1


# ---------------------------------------------------------------------------------- a person's turn


@pytest.mark.parametrize("message_first", [False, True], ids=["name-first", "message-first"])
def test_a_slash_command_is_one_human_turn_its_caveat_and_output_are_not(
    provider: JsonlTranscriptProvider, tmp_path: Path, message_first: bool
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        command_caveat(),
        slash_command("model", "opus", message_first=message_first),
        command_output("Set model to opus (claude-opus-4-5)"),
    )
    assert turns == 1


def test_a_custom_slash_command_and_its_expanded_prompt_are_one_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        slash_command("review-pr", "1234", message_first=True),
        meta("Review pull request 1234: read the diff, run the tests, report findings."),
        assistant("Reviewing #1234"),
    )
    assert turns == 1


@pytest.mark.parametrize("images", [1, 2])
def test_a_prompt_that_is_only_a_pasted_image_is_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path, images: int
) -> None:
    path = tmp_path / "t.jsonl"
    append(path, image_prompt("2026-11-30T11:58:00.000Z", images=images), assistant("That is a stack trace."))

    answer = activity(provider, probe(str(path)))

    assert answer.human_turns == 1
    assert answer.occurred_at == datetime(2026, 11, 30, 11, 58, tzinfo=UTC)


def test_context_claude_code_attaches_does_not_hide_the_prompt_nor_defeat_self_echo(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    append(path, reminded_prompt("rename the module"), reminded_prompt("what the gateway sent"))

    answer = activity(provider, probe(str(path), own=("what the gateway sent",)))

    assert answer.human_turns == 1


# ------------------------------------------------------------------------------- queued prompts


def test_a_prompt_typed_while_busy_and_absorbed_mid_turn_is_one_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    append(
        path,
        prompt("fix the flaky test", "2026-11-30T11:58:00.000Z"),
        assistant("Looking at the test"),
        enqueue("and update the changelog", "2026-11-30T11:58:30.000Z"),
        tool_result("2026-11-30T11:58:31.000Z"),
        queue_operation("remove", "2026-11-30T11:58:32.000Z", reason="absorbed_mid_turn", commandUuid="c9"),
        queued_command("and update the changelog", "2026-11-30T11:58:30.000Z"),
        assistant("Both done"),
    )

    answer = activity(provider, probe(str(path)))

    assert answer.human_turns == 2
    assert answer.occurred_at == datetime(2026, 11, 30, 11, 58, 30, tzinfo=UTC)  # when it was typed
    assert answer.next_marker == {"offset": path.stat().st_size}  # positions only, nothing queued


@pytest.mark.parametrize("labelled", [True, False], ids=["tui", "stream-json"])
def test_an_absorbed_prompt_counts_with_or_without_its_origin(
    provider: JsonlTranscriptProvider, tmp_path: Path, labelled: bool
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        prompt("SLEEPY first prompt", promptSource="sdk"),
        enqueue("second prompt while busy"),
        tool_result(),
        queue_operation("remove"),  # 2.1.197: no content, the attachment follows
        queued_command("second prompt while busy", labelled=labelled),
    )
    assert turns == 2


def test_a_prompt_pulled_back_and_queued_again_is_one_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        prompt("SLEEPY first prompt", promptSource="typed", origin={"kind": "human"}),
        enqueue("queued then pulled back"),
        queue_operation("popAll", content="queued then pulled back"),
        enqueue("queued then pulled back", "2026-11-30T11:59:11.000Z"),
        tool_result(),
        queue_operation("remove"),
        queued_command("queued then pulled back"),
    )
    assert turns == 2


def test_a_scheduled_prompt_is_not_a_human_turn_though_it_is_queued_like_one(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        prompt("CRONME remind me in a minute", promptSource="typed", origin={"kind": "human"}),
        assistant("Scheduled"),
        turn_duration(),
        enqueue("check the deploy status", "2026-11-30T11:59:30.000Z"),
        queue_operation("dequeue", "2026-11-30T11:59:30.100Z"),
        scheduled_task_fire(),
        scheduled_prompt("check the deploy status"),
        assistant("Deployed"),
    )
    assert turns == 1


def test_a_queued_prompt_that_never_reached_the_session_is_not_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        enqueue("left in the queue when the session ended"),
        enqueue("pulled back and deleted", "2026-11-30T11:59:11.000Z"),
        queue_operation("popAll", content="pulled back and deleted"),
    )
    assert turns == 0


def test_a_queued_prompt_delivered_as_a_user_record_after_the_turn_is_counted_once(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        prompt("refactor the store"),
        enqueue("then run the benchmarks"),
        assistant("Refactored"),
        turn_duration(),
        queue_operation("dequeue"),
        prompt("then run the benchmarks", "2026-11-30T11:59:20.030Z", promptSource="queued"),
    )
    assert turns == 2


def test_a_queued_prompt_surfaced_inside_a_tool_result_is_counted_once(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    surfaced = "ok\n\nThe user sent the following message:\nuse sqlite, not postgres\n\nPlease address it."
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        enqueue("use sqlite, not postgres"),
        tool_result(text=surfaced),
        queue_operation("remove", content="use sqlite, not postgres"),
    )
    assert turns == 1


def test_a_queued_prompt_the_person_cancelled_or_pulled_back_and_resent_counts_once(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        enqueue("drop the index"),
        queue_operation("remove", content="drop the index"),  # an older version: withdrawn or surfaced
        enqueue("add a column"),
        queue_operation("popAll", content="add a column"),  # pulled back into the input ...
        interrupt(),
        prompt("add a column", "2026-11-30T11:59:40.000Z"),  # ... and sent again unchanged
    )
    assert turns == 2


def test_the_same_words_queued_twice_are_two_human_turns(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        enqueue("continue"),
        enqueue("continue", "2026-11-30T11:59:11.000Z"),
        queue_operation("dequeue"),
        prompt("continue", "2026-11-30T11:59:21.000Z"),
        queue_operation("dequeue", "2026-11-30T11:59:40.000Z"),
        prompt("continue", "2026-11-30T11:59:41.000Z"),
        prompt("continue", "2026-11-30T11:59:55.000Z"),  # typed again at an idle prompt
    )
    assert turns == 3


def test_a_queued_slash_command_and_an_image_are_counted_at_their_delivery(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        enqueue("/review-pr 1234"),
        enqueue([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]),
        queue_operation("dequeue"),
        slash_command("review-pr", "1234", "2026-11-30T11:59:21.000Z", message_first=True),
        queue_operation("dequeue", "2026-11-30T11:59:40.000Z"),
        image_prompt("2026-11-30T11:59:41.000Z"),
    )
    assert turns == 2


def test_a_queued_prompt_equal_to_the_sessions_own_text_is_self_echo_and_so_is_its_delivery(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    append(path, enqueue("relay: status?"), queue_operation("dequeue"), prompt("relay: status?"))

    assert activity(provider, probe(str(path), own=("relay: status?",))).human_turns == 0


def test_a_queued_prompt_counts_in_the_tick_that_reads_its_delivery(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    append(path, prompt("refactor the store"), enqueue("then run the benchmarks"))
    first = activity(provider, probe(str(path)))
    assert first.human_turns == 1
    assert first.next_marker == {"offset": path.stat().st_size}  # a position only

    size = append(path, queue_operation("dequeue"), prompt("then run the benchmarks", promptSource="queued"))
    second = activity(provider, probe(str(path), first.next_marker))

    assert (second.human_turns, second.next_marker) == (1, {"offset": size})


def test_a_delivery_whose_enqueue_came_before_the_marker_is_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    append(path, prompt("refactor the store"), enqueue("then run the benchmarks"))
    adopted_at = marker_at_end(path)
    append(path, queue_operation("dequeue"), prompt("then run the benchmarks"))

    assert activity(provider, probe(str(path), adopted_at)).human_turns == 1


def test_queued_offsets_a_previous_version_stored_are_read_and_dropped(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    at = append(path, prompt("refactor the store"))
    end = append(path, enqueue("then run the benchmarks"))
    size = append(path, queue_operation("dequeue"), prompt("then run the benchmarks"))

    reading = read_to_end(provider, path, {"offset": end, "queued": [at]})

    assert (reading.turns, reading.marker) == (1, {"offset": size})


def test_a_marker_written_before_queues_existed_reads_as_nothing_queued(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    append(path, prompt("old"))
    old_marker: JsonValue = {"offset": path.stat().st_size}
    append(path, queue_operation("dequeue"), prompt("then run the benchmarks"))

    assert read_to_end(provider, path, old_marker).turns == 1


@pytest.mark.parametrize(
    "queued",
    [
        0,
        ["0123456789abcdef"],
        ["then run the benchmarks"],
        [True],
        [1.0],
        [-1],
        [100],
        [101],
        [3, 3],
        [5, 2],
        list(range(QUEUE_LIMIT + 1)),
    ],
    ids=[
        "not-a-list",
        "fingerprint",  # the unreleased earlier form: never in a released store, so not read
        "text",
        "bool",
        "float",
        "negative",
        "at-the-offset",
        "after-the-offset",
        "repeated",
        "not-increasing",
        "too-many",
    ],
)
def test_a_marker_with_a_malformed_queue_gets_no_answer_and_one_warning(
    provider: JsonlTranscriptProvider,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    queued: JsonValue,
) -> None:
    path = tmp_path / "t.jsonl"
    assert append(path, prompt("x")) > 100

    assert ask(provider, probe(str(path), {"offset": 100, "queued": queued})) is None

    [warning] = warnings(caplog)
    assert "malformed marker" in warning.getMessage()


def test_a_marker_is_a_pure_function_of_the_bytes_read(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    append(path, enqueue("a"), enqueue("b"), queue_operation("dequeue"), prompt("a"))
    first = ask(provider, probe(str(path)))
    again = ask(provider, probe(str(path)))  # a retry after a failed record reads the same

    assert isinstance(first, UpstreamActivity)
    assert first == again
    assert (first.human_turns, first.next_marker) == (1, {"offset": path.stat().st_size})


# ------------------------------------------------------------------ what runs locally, answers


def test_a_slash_command_that_runs_locally_is_one_human_turn_its_output_is_not(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        local_command("context"),
        local_command_output("Context Usage"),
        meta("## Context Usage\n\n**Tokens:** 2.4k / 1m (0%)"),
        local_command("usage", "2026-11-30T11:59:30.000Z"),
        local_command_output("Settings dialog dismissed", "2026-11-30T11:59:31.000Z"),
    )
    assert turns == 2


def test_a_persons_answer_to_the_agents_question_is_a_human_turn(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    turns = counted(
        provider,
        tmp_path / "t.jsonl",
        prompt("pick a database for me"),
        assistant("Asking which one"),
        question_answer({"Which database?": "SQLite"}),
        question_answer({}, "2026-11-30T11:59:50.000Z", response="neither, use files"),
        question_declined("2026-11-30T11:59:55.000Z"),
        tool_result("2026-11-30T11:59:56.000Z"),
    )
    assert turns == 3
