"""Reading a transcript over many ticks counts exactly what one read counts, for any split.

The marker carries all the state a tick needs (the offset and, for Claude Code, the prompts counted
when queued but not yet delivered), so where the monitor's ticks fall, mid-line included, and how
small the scan cap is never change the count. Records come from a small pool of realistic shapes
whose words collide on purpose (queued prompts, their deliveries, resends).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import claude_transcripts as cc
import codex_transcripts as cx
from claude_transcripts import line
from hypothesis import given
from hypothesis import strategies as st
from transcript_probes import read_while_written

from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider

Record = dict[str, object]
WORDS = st.sampled_from(["continue", "fix the build", "and the tests", "/review-pr 12"])

claude_records: st.SearchStrategy[Record] = st.one_of(
    WORDS.map(cc.prompt),
    WORDS.map(cc.enqueue),
    WORDS.map(lambda words: cc.queue_operation("remove", content=words)),
    WORDS.map(cc.queued_command),
    st.just(cc.queue_operation("dequeue")),
    st.just(cc.queue_operation("popAll")),
    st.just(cc.queue_operation("remove", reason="absorbed_mid_turn", commandUuid="c1")),
    st.just(cc.enqueue(cc.notification_text())),
    st.just(cc.task_notification()),
    st.just(cc.image_prompt()),
    st.just(cc.slash_command("review-pr", "12")),
    st.just(cc.bash_input("ls")),
    st.just(cc.bash_output("a b")),
    st.just(cc.interrupt()),
    st.just(cc.assistant("ok")),
    st.just(cc.tool_result()),
)

ABSORBED = cc.queue_operation("remove", reason="absorbed_mid_turn")
queued_episodes: st.SearchStrategy[list[Record]] = WORDS.flatmap(
    lambda words: st.sampled_from(
        [
            [cc.enqueue(words), cc.assistant("busy"), cc.queue_operation("dequeue"), cc.prompt(words)],
            [cc.enqueue(words), ABSORBED, cc.queued_command(words)],
            [cc.enqueue(words), cc.tool_result(), cc.queue_operation("remove", content=words)],
            [cc.enqueue(words), cc.queue_operation("popAll"), cc.interrupt(), cc.prompt(words)],
        ]
    )
)
"""A prompt typed while the agent is busy and each way Claude Code later delivers (or drops) it."""

claude_transcripts: st.SearchStrategy[list[Record]] = st.lists(
    st.one_of(claude_records.map(lambda record: [record]), queued_episodes), max_size=12
).map(lambda parts: [record for part in parts for record in part])

codex_records: st.SearchStrategy[Record] = st.one_of(
    WORDS.map(cx.user_message),
    WORDS.map(cx.user_event),
    st.just(cx.environment_context()),
    st.just(cx.agents_md()),
    st.just(cx.turn_aborted()),
    st.just(cx.user_message("", images=1)),
    st.just(cx.user_shell_command("ls", "a b")),
    st.just(cx.assistant_message("ok")),
    st.just(cx.function_call("ls")),
    st.just(cx.token_count()),
)


def count(provider: JsonlTranscriptProvider, data: bytes, cuts: list[int]) -> tuple[int, object]:
    with tempfile.TemporaryDirectory() as folder:
        reading = read_while_written(provider, Path(folder) / "t.jsonl", data, cuts)
    return reading.turns, reading.marker


def assert_splits_agree(records: list[Record], cuts: list[int], cap: int, *, codex: bool) -> None:
    data = b"".join(line(record) for record in records)
    make = JsonlTranscriptProvider.codex if codex else JsonlTranscriptProvider.claude_code
    longest = max((len(line(record)) for record in records), default=1)
    once = count(make(), data, [])
    split = count(make(scan_cap=max(cap, longest)), data, [cut % (len(data) + 1) for cut in cuts])
    assert split == once


@given(
    claude_transcripts,
    st.lists(st.integers(min_value=0, max_value=20_000), max_size=8),
    st.integers(min_value=1, max_value=4_000),
)
def test_claude_code_ticks_anywhere_count_what_one_read_counts(
    records: list[Record], cuts: list[int], cap: int
) -> None:
    assert_splits_agree(records, cuts, cap, codex=False)


@given(
    st.lists(codex_records, max_size=25),
    st.lists(st.integers(min_value=0, max_value=20_000), max_size=8),
    st.integers(min_value=1, max_value=4_000),
)
def test_codex_ticks_anywhere_count_what_one_read_counts(
    records: list[Record], cuts: list[int], cap: int
) -> None:
    assert_splits_agree(records, cuts, cap, codex=True)
