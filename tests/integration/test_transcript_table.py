"""Whole transcripts, as each tool writes a real session, against the turns a person would count.

Each transcript mixes what a session holds (typed prompts, tool calls, notifications, queued
prompts, slash commands, images, interrupts; for Codex injected context, tool calls, twins of each
message) with the number of prompts the person typed. The provider must count exactly that, read
at once or a line at a time. `pytest -s` prints the table.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import claude_transcripts as cc
import codex_transcripts as cx
import pytest
from claude_transcripts import line
from transcript_probes import read_while_written

from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider

Record = dict[str, object]


@dataclass(frozen=True)
class Transcript:
    tool: str
    name: str
    human_turns: int
    records: list[Record]

    def provider(self) -> JsonlTranscriptProvider:
        factory: Callable[[], JsonlTranscriptProvider] = (
            JsonlTranscriptProvider.claude_code
            if self.tool == "claude-code"
            else JsonlTranscriptProvider.codex
        )
        return factory()


def _t(n: int) -> str:
    return f"2026-11-30T11:{n // 60:02d}:{n % 60:02d}.000Z"


CLAUDE_CODE = [
    Transcript(
        "claude-code",
        "a bug fix with tool calls and a pasted screenshot",
        2,
        [
            cc.summary(),
            cc.snapshot(),
            cc.prompt("the login page returns 500 since this morning", _t(0)),
            cc.assistant("Let me read the logs", _t(5)),
            cc.tool_result(_t(6)),
            cc.assistant("Found a null session", _t(9)),
            cc.tool_result(_t(10)),
            cc.block_prompt("[Image #1] this is what I see", timestamp=_t(60)),
            cc.assistant("That trace confirms it; fixed.", _t(70)),
            cc.turn_duration(_t(71)),
        ],
    ),
    Transcript(
        "claude-code",
        "background tasks that notify the session",
        2,
        [
            cc.prompt("run the full test suite in the background", _t(0)),
            cc.assistant("Started it", _t(3)),
            cc.tool_result(_t(4), text="Command running in background with ID: b7k2m9q4x."),
            cc.turn_duration(_t(5)),
            cc.enqueue(cc.notification_text("b7k2m9q4x"), _t(200)),
            cc.queue_operation("dequeue", _t(200)),
            cc.task_notification("b7k2m9q4x", _t(200)),
            cc.assistant("All 412 tests passed", _t(205)),
            cc.prompt("great, commit it", _t(300)),
            cc.assistant("Committing; also starting the linter in the background", _t(305)),
            cc.enqueue(cc.notification_text("b1lint000"), _t(320)),
            cc.queue_operation("remove", _t(321), reason="absorbed_mid_turn", commandUuid="c-lint"),
            cc.queued_command(cc.notification_text("b1lint000"), _t(321), mode="task-notification"),
            cc.task_notification("b2old0000", _t(330), labelled=False),
            cc.assistant("Committed; lint is clean", _t(340)),
        ],
    ),
    Transcript(
        "claude-code",
        "prompts typed while the agent was busy",
        4,
        [
            cc.prompt("split the store module in two", _t(0)),
            cc.assistant("Splitting", _t(4)),
            cc.enqueue("also add tests for the new module", _t(20)),
            cc.tool_result(_t(21)),
            cc.queue_operation("remove", _t(22), reason="absorbed_mid_turn", commandUuid="c1"),
            cc.queued_command("also add tests for the new module", _t(22)),
            cc.enqueue("and update the README afterwards", _t(40)),
            cc.assistant("Split and tested", _t(60)),
            cc.turn_duration(_t(61)),
            cc.queue_operation("dequeue", _t(61)),
            cc.prompt("and update the README afterwards", _t(61), promptSource="queued"),
            cc.assistant("Updating the README", _t(65)),
            cc.enqueue("wait, keep the old section", _t(70)),
            cc.queue_operation("popAll", _t(75), content="wait, keep the old section"),
            cc.interrupt(_t(76)),
            cc.prompt("wait, keep the old section", _t(80)),
            cc.assistant("Kept it", _t(85)),
        ],
    ),
    Transcript(
        "claude-code",
        "slash commands, shell mode and an interrupt",
        4,
        [
            cc.command_caveat(_t(0)),
            cc.slash_command("model", "opus", _t(0)),
            cc.command_output("Set model to opus (claude-opus-4-5)", _t(1)),
            cc.bash_input("git status --short", _t(10)),
            cc.bash_output(" M adapters/entry/watch.py", timestamp=_t(11)),
            cc.slash_command("review-pr", "1234", _t(30), message_first=True),
            cc.meta("Review pull request 1234: read the diff, run the tests, report.", _t(30)),
            cc.assistant("Reading the diff", _t(35)),
            cc.tool_result(_t(36)),
            cc.interrupt(_t(40), for_tool_use=True),
            cc.prompt("stop, only look at the parser", _t(45)),
            cc.assistant("Only the parser then", _t(50)),
        ],
    ),
    Transcript(
        "claude-code",
        "a team member's session with images and subagents",
        2,
        [
            cc.teammate_message("You are on team review. Claim task #2.", _t(0)),
            cc.assistant("Claiming #2", _t(3)),
            cc.sidechain("Explore the repository and list the parsers", _t(4)),
            cc.tool_result(_t(5)),
            cc.teammate_message("Task #3 is yours too.", _t(30), intro=True),
            cc.image_prompt(_t(60), images=2),
            cc.assistant("Both screenshots show the same overflow", _t(65)),
            cc.reminded_prompt("fix the overflow in the sidebar", _t(90)),
            cc.assistant("Fixed", _t(95)),
        ],
    ),
    Transcript(
        "claude-code",
        "a session continued after a compaction",
        2,
        [
            {
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "timestamp": _t(0),
            },
            cc.compact_summary("This session is being continued from a previous conversation that ran out"),
            cc.command_caveat(_t(1)),
            cc.slash_command("compact", "keep the parser notes", _t(1)),
            cc.command_output("Compacted. ctrl+o to see full summary", _t(2)),
            cc.meta("Stop hook feedback:\n[lint]: 2 warnings", _t(3)),
            cc.prompt("where were we?", _t(30)),
            cc.assistant("At the parser", _t(35)),
        ],
    ),
]

CODEX_CONTEXT = [cx.session_meta(), cx.developer_message(), cx.agents_md(), cx.environment_context()]

CODEX = [
    Transcript(
        "codex",
        "a first turn after the injected context",
        1,
        [
            *CODEX_CONTEXT,
            cx.turn_context(),
            cx.user_message("why does test_login fail?", _t(0)),
            cx.user_event("why does test_login fail?", _t(0)),
            cx.reasoning(_t(2)),
            cx.function_call("pytest tests/test_login.py -x", _t(3)),
            cx.function_call_output("1 failed", _t(8)),
            cx.assistant_message("The fixture expires the session.", _t(10)),
            cx.agent_event("The fixture expires the session.", _t(10)),
            cx.token_count(_t(11)),
        ],
    ),
    Transcript(
        "codex",
        "three turns with tool calls",
        3,
        [
            *CODEX_CONTEXT,
            *[
                record
                for n, ask in enumerate(["add a retry to the client", "now a test for it", "run the suite"])
                for record in (
                    cx.turn_context(_t(n * 60)),
                    cx.user_message(ask, _t(n * 60)),
                    cx.user_event(ask, _t(n * 60)),
                    cx.function_call("apply_patch", _t(n * 60 + 5), call_id=f"call_{n}"),
                    cx.function_call_output("Done", _t(n * 60 + 6), call_id=f"call_{n}"),
                    cx.assistant_message("Done.", _t(n * 60 + 9)),
                    cx.token_count(_t(n * 60 + 10)),
                )
            ],
        ],
    ),
    Transcript(
        "codex",
        "an interrupted turn and its follow-up",
        2,
        [
            *CODEX_CONTEXT,
            cx.user_message("migrate the whole database", _t(0)),
            cx.user_event("migrate the whole database", _t(0)),
            cx.function_call("python migrate.py", _t(4)),
            cx.aborted_event(_t(9)),
            cx.turn_aborted(_t(9)),
            cx.user_message("only the users table", _t(20)),
            cx.user_event("only the users table", _t(20)),
            cx.assistant_message("Migrated users.", _t(40)),
        ],
    ),
    Transcript(
        "codex",
        "the newest shape: no event twins, an image and a shell command",
        3,
        [
            *CODEX_CONTEXT,
            cx.user_message("", _t(0), images=1),
            cx.assistant_message("A stack overflow in the parser.", _t(5)),
            cx.user_shell_command("git log -1 --oneline", "4be1c0d fix the parser", _t(20)),
            cx.user_message("now fix it", _t(30)),
            cx.reasoning(_t(32)),
            cx.assistant_message("Fixed.", _t(50)),
        ],
    ),
    Transcript(
        "codex",
        "an older version that also wrote events for injected context",
        2,
        [
            cx.session_meta(),
            cx.agents_md(legacy=True),
            cx.context_event("<user_instructions>Run make test</user_instructions>", "user_instructions"),
            cx.environment_context(),
            cx.context_event("<environment_context>/repo</environment_context>", "environment_context"),
            cx.user_message("use the release skill", _t(0)),
            cx.user_event("use the release skill", _t(0), legacy=True),
            cx.skill_instructions(_t(1)),
            cx.subagent_notification(_t(30)),
            cx.compaction_summary(_t(60)),
            cx.compacted(_t(60)),
            cx.user_message("tag it 1.2.0", _t(90)),
            cx.user_event("tag it 1.2.0", _t(90), legacy=True),
        ],
    ),
    Transcript(
        "codex",
        "a session resumed in the same rollout",
        1,
        [
            *CODEX_CONTEXT,
            cx.session_meta(_t(100)),
            cx.environment_context(_t(100)),
            cx.turn_context(_t(101)),
            cx.user_message("continue with the docs", _t(101)),
            cx.user_event("continue with the docs", _t(101)),
            cx.assistant_message("Docs updated.", _t(120)),
        ],
    ),
]

TABLE = CLAUDE_CODE + CODEX


def provider_count(transcript: Transcript, path: Path, *, line_by_line: bool) -> int:
    data = b"".join(line(record) for record in transcript.records)
    cuts = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")] if line_by_line else []
    reading = read_while_written(transcript.provider(), path, data, cuts)
    assert reading.marker == {"offset": len(data)}  # read to the end, nothing left queued
    return reading.turns


@pytest.mark.parametrize("transcript", TABLE, ids=[f"{t.tool}: {t.name}" for t in TABLE])
def test_the_provider_counts_the_turns_a_person_typed(transcript: Transcript, tmp_path: Path) -> None:
    assert provider_count(transcript, tmp_path / "once.jsonl", line_by_line=False) == transcript.human_turns
    assert provider_count(transcript, tmp_path / "lines.jsonl", line_by_line=True) == transcript.human_turns


def test_the_table_of_whole_transcripts(tmp_path: Path) -> None:
    assert sum(t.tool == "claude-code" for t in TABLE) >= 5
    assert sum(t.tool == "codex" for t in TABLE) >= 5
    rows = [
        (t.tool, t.name, t.human_turns, provider_count(t, tmp_path / f"{n}.jsonl", line_by_line=False))
        for n, t in enumerate(TABLE)
    ]
    width = max(len(name) for _, name, _, _ in rows)
    sys.stdout.write(f"\n{'tool':<12} {'transcript':<{width}} human provider\n")
    for tool, name, human, counted in rows:
        sys.stdout.write(f"{tool:<12} {name:<{width}} {human:>5} {counted:>8}\n")
    assert [human for *_, human, _ in rows] == [counted for *_, counted in rows]
