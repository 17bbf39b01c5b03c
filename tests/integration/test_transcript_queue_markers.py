"""A format that counts prompts when they are queued: the provider keeps their positions in the marker.

Neither built-in format needs it now (Claude Code's delivery records say when a queued prompt
reached the session), but `JsonlFormat` lets a format keep a small queue, and the provider stores
its positions, never its words, and reads the queued lines again each tick. `QueueingFormat` (in
`transcript_probes`) counts an `enqueue` and takes a `user` record with the same words as its
delivery.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_transcripts import append, enqueue, line, notification_text, prompt, queue_operation
from transcript_probes import QueueingFormat, activity, probe, read_to_end

from sessionwatch.adapters.upstream.transcript_formats import QUEUE_LIMIT
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider


@pytest.fixture
def provider() -> JsonlTranscriptProvider:
    return JsonlTranscriptProvider(QueueingFormat())


def test_the_enqueue_and_its_delivery_in_different_ticks_count_once_through_the_marker(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    queued_at = append(path, prompt("refactor the store"))
    append(path, enqueue("then run the benchmarks"))
    first = activity(provider, probe(str(path)))
    assert first.human_turns == 2
    assert first.next_marker == {"offset": path.stat().st_size, "queued": [queued_at]}  # a position only

    size = append(path, queue_operation("dequeue"), prompt("then run the benchmarks"))
    second = activity(provider, probe(str(path), first.next_marker))

    assert second.human_turns == 0
    assert second.next_marker == {"offset": size}


def test_a_marker_keeps_the_newest_queued_offsets_only(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    starts = [append(path, enqueue(f"queued prompt {n}")) for n in range(QUEUE_LIMIT + 4)]
    starts = [0, *starts[:-1]]  # where each enqueue line begins

    answer = activity(provider, probe(str(path)))

    assert answer.human_turns == QUEUE_LIMIT + 4
    assert isinstance(answer.next_marker, dict)
    assert answer.next_marker["queued"] == starts[4:]


@pytest.mark.parametrize(
    ("where", "turns"),
    [
        ("the enqueue", 0),
        ("a prompt", 1),
        ("mid-line", 1),
        ("a notification's enqueue", 1),
        ("past the offset", 1),
    ],
)
def test_a_queued_offset_that_is_not_a_complete_enqueue_of_a_prompt_is_dropped(
    provider: JsonlTranscriptProvider, tmp_path: Path, where: str, turns: int
) -> None:
    path = tmp_path / "t.jsonl"
    notification_at = append(path, prompt("then run the benchmarks"))
    enqueue_at = append(path, enqueue(notification_text()))
    end = append(path, enqueue("then run the benchmarks"))
    at, offset = {
        "the enqueue": (enqueue_at, end),
        "a prompt": (0, end),
        "mid-line": (5, end),
        "a notification's enqueue": (notification_at, end),
        "past the offset": (enqueue_at, end - 1),  # the line at `at` ends after the marker's offset
    }[where]
    append(path, queue_operation("dequeue"), prompt("then run the benchmarks"))

    assert read_to_end(provider, path, {"offset": offset, "queued": [at]}).turns == turns


def test_a_queued_prompt_whose_enqueue_line_was_replaced_is_dropped_and_its_delivery_counts(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    at = append(path, prompt("refactor the store"))
    end = append(path, enqueue("then run the benchmarks"))
    first = activity(provider, probe(str(path)))
    assert first.next_marker == {"offset": end, "queued": [at]}
    other = line(queue_operation("dequeue"))
    assert len(other) < end - at
    replacement = tmp_path / "new.jsonl"  # the same layout, but no enqueue where the marker points
    replacement.write_bytes(path.read_bytes()[:at] + other[:-1] + b" " * (end - at - len(other)) + b"\n")
    replacement.replace(path)

    size = append(path, queue_operation("dequeue"), prompt("then run the benchmarks"))
    second = activity(provider, probe(str(path), first.next_marker))

    assert (second.human_turns, second.next_marker) == (1, {"offset": size})
