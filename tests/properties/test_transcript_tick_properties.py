"""Reading a transcript over many ticks counts exactly what one read counts, for any split.

The marker carries all the state a tick needs (the offset and, for a format that counts prompts
when they are queued, where the ones not yet delivered were enqueued), so where the monitor's ticks fall,
mid-line included, and how small the scan cap is never change the count. Records come from a small
pool of realistic shapes whose words collide on purpose (queued prompts, their deliveries, resends).

The store keeps every marker, so no marker may hold anything derived from what a person typed:
each is offsets only, and rewording the prompts (same lengths) leaves every marker as it was.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import claude_transcripts as cc
import codex_transcripts as cx
from claude_transcripts import line
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue
from transcript_probes import QueueingFormat, Reading, read_while_written

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
"""A prompt typed while the agent is busy and each way Claude Code delivers (or drops) it."""

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


def read(provider: JsonlTranscriptProvider, data: bytes, cuts: list[int]) -> Reading:
    with tempfile.TemporaryDirectory() as folder:
        return read_while_written(provider, Path(folder) / "t.jsonl", data, cuts)


def count(provider: JsonlTranscriptProvider, data: bytes, cuts: list[int]) -> tuple[int, object]:
    reading = read(provider, data, cuts)
    return reading.turns, reading.marker


def read_split(records: list[Record], cuts: list[int], cap: int) -> Reading:
    """Claude Code reading `records` written in pieces, with a scan cap no shorter than a line."""
    data = b"".join(line(record) for record in records)
    longest = max((len(line(record)) for record in records), default=1)
    provider = JsonlTranscriptProvider.claude_code(scan_cap=max(cap, longest))
    return read(provider, data, [cut % (len(data) + 1) for cut in cuts])


def assert_splits_agree(records: list[Record], cuts: list[int], cap: int, *, codex: bool) -> None:
    data = b"".join(line(record) for record in records)
    make = JsonlTranscriptProvider.codex if codex else JsonlTranscriptProvider.claude_code
    longest = max((len(line(record)) for record in records), default=1)
    once = count(make(), data, [])
    split = count(make(scan_cap=max(cap, longest)), data, [cut % (len(data) + 1) for cut in cuts])
    assert split == once


SAME_LENGTH = {"continue": "go ahead", "fix the build": "run the suite", "and the tests": "and the specs"}
"""Other words of the same length for the pool's words; `/review-pr 12` stays, as the slash command
record in the pool (`review-pr`, `12`) is its delivery."""


def reworded(record: Record) -> Record:
    """The record with every string that is one of the pool's words replaced by its twin."""
    return {key: _reworded(value) for key, value in record.items()}


def _reworded(value: object) -> object:
    match value:
        case str():
            return SAME_LENGTH.get(value, value)
        case dict():
            return {key: _reworded(item) for key, item in value.items()}
        case list():
            return [_reworded(item) for item in value]
        case _:
            return value


def offsets_only(marker: JsonValue) -> bool:
    """True for `{"offset": n}` or `{"offset": n, "queued": [n, ...]}` with integers only."""
    if not isinstance(marker, dict) or not marker.keys() <= {"offset", "queued"}:
        return False
    queued = marker.get("queued", [])
    values = [marker.get("offset"), *(queued if isinstance(queued, list) else [queued])]
    return all(type(value) is int for value in values)


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


@given(
    claude_transcripts,
    st.lists(st.integers(min_value=0, max_value=20_000), max_size=8),
    st.integers(min_value=1, max_value=4_000),
)
def test_every_claude_code_marker_holds_byte_offsets_only(
    records: list[Record], cuts: list[int], cap: int
) -> None:
    reading = read_split(records, cuts, cap)

    assert len(reading.markers) >= min(len(records), 1)  # each piece with a new line gets an answer
    assert all(offsets_only(marker) for marker in reading.markers), reading.markers


@given(
    claude_transcripts,
    st.lists(st.integers(min_value=0, max_value=20_000), max_size=8),
    st.integers(min_value=1, max_value=4_000),
)
def test_rewording_queued_prompts_at_the_same_length_changes_no_marker(
    records: list[Record], cuts: list[int], cap: int
) -> None:
    other = [reworded(record) for record in records]
    assert [len(line(record)) for record in other] == [len(line(record)) for record in records]

    original, changed = read_split(records, cuts, cap), read_split(other, cuts, cap)

    assert (changed.turns, changed.markers) == (original.turns, original.markers)


@given(
    claude_transcripts,
    st.lists(st.integers(min_value=0, max_value=20_000), max_size=8),
    st.integers(min_value=1, max_value=4_000),
)
def test_a_format_that_queues_counts_what_one_read_counts_for_any_split(
    records: list[Record], cuts: list[int], cap: int
) -> None:
    data = b"".join(line(record) for record in records)
    longest = max((len(line(record)) for record in records), default=1)
    once = count(JsonlTranscriptProvider(QueueingFormat()), data, [])
    provider = JsonlTranscriptProvider(QueueingFormat(), scan_cap=max(cap, longest))
    split = read(provider, data, [cut % (len(data) + 1) for cut in cuts])

    assert (split.turns, split.marker) == once
    assert all(offsets_only(marker) for marker in split.markers), split.markers
