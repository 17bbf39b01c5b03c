"""Asking a transcript provider about real files: probes, answers, and reading a file to its end.

Shared by the tests that write Claude Code or Codex transcripts to `tmp_path` and check what the
provider counts, one tick at a time or over many ticks as the monitor would.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pytest
from claude_transcripts import append_bytes
from pydantic import JsonValue

from sessionwatch.adapters.upstream.transcript_formats import (
    QUEUE_LIMIT,
    Prompt,
    Queue,
    QueuedPrompt,
    claude_code_prompt,
)
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider
from sessionwatch.domain.upstream import UpstreamActivity, UpstreamMissing, UpstreamProbe, normalize_text

SESSION = "agent:main:adopted"


def probe(
    path: JsonValue,
    marker: JsonValue = None,
    *,
    session_key: str = SESSION,
    own: tuple[str, ...] = (),
) -> UpstreamProbe:
    return UpstreamProbe(
        session_key=session_key,
        agent_id="main",
        catalog_id="claude-code",
        host_id="laptop",
        thread_id="95e6f011",
        upstream_kind="claude-code-transcript",
        upstream_ref=path,  # the provider must reject non-paths itself
        marker=marker,
        own_recent_user_texts=own,
    )


def ask(provider: JsonlTranscriptProvider, one: UpstreamProbe) -> UpstreamActivity | UpstreamMissing | None:
    answers = provider.check_upstream_activity([one])
    assert len(answers) <= 1
    return answers[0] if answers else None


def activity(provider: JsonlTranscriptProvider, one: UpstreamProbe) -> UpstreamActivity:
    answer = ask(provider, one)
    assert isinstance(answer, UpstreamActivity), answer
    assert answer.session_key == one.session_key
    return answer


def offset_of(answer: UpstreamActivity) -> int:
    marker = answer.next_marker
    assert isinstance(marker, dict)
    value = marker["offset"]
    assert isinstance(value, int)
    return value


def warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "sessionwatch" and r.levelno == logging.WARNING]


@dataclass(frozen=True)
class Reading:
    """What ticks until the end of a file counted, the marker they left and every one they gave."""

    turns: int
    marker: JsonValue
    ticks: int
    markers: tuple[JsonValue, ...] = ()


def read_to_end(
    provider: JsonlTranscriptProvider, path: Path, marker: JsonValue = None, *, own: tuple[str, ...] = ()
) -> Reading:
    """Tick as the monitor does until the provider has nothing more to say (bounded by the file)."""
    turns = ticks = 0
    markers: list[JsonValue] = []
    for _ in range(path.stat().st_size + 2):  # each answering tick consumes at least one byte
        answer = ask(provider, probe(str(path), marker, own=own))
        if answer is None:
            return Reading(turns, marker, ticks, tuple(markers))
        assert isinstance(answer, UpstreamActivity)
        turns, marker, ticks = turns + answer.human_turns, answer.next_marker, ticks + 1
        markers.append(marker)
    pytest.fail("the provider kept answering without reaching the end of the file")


def read_while_written(
    provider: JsonlTranscriptProvider, path: Path, data: bytes, cuts: list[int], *, own: tuple[str, ...] = ()
) -> Reading:
    """Write `data` in pieces cut at `cuts` (mid-line too), ticking after every piece."""
    turns = ticks = 0
    marker: JsonValue = None
    markers: list[JsonValue] = []
    start = 0
    for end in [*sorted(set(cuts)), len(data)]:
        append_bytes(path, data[start:end])
        start = max(start, end)
        reading = read_to_end(provider, path, marker, own=own)
        turns, marker, ticks = turns + reading.turns, reading.marker, ticks + reading.ticks
        markers.extend(reading.markers)
    return Reading(turns, marker, ticks, tuple(markers))


@dataclass(frozen=True, slots=True)
class QueueingFormat:
    """A format that counts a prompt when it is queued and its later delivery not again.

    Neither built-in format needs queue state any more; this one keeps the provider's support for
    formats that do (positions in the marker, the queued lines read again) under test. It counts a
    `queue-operation` `enqueue` of plain text and takes a `user` record with the same words as that
    prompt's delivery; any other typed `user` record counts as itself.
    """

    name: str = "queueing"

    def read(self, record: object, queued: Queue, at: int) -> tuple[Prompt | None, Queue]:
        """The prompt the record is and the queue after it."""
        if not isinstance(record, dict):
            return None, queued
        if record.get("type") == "queue-operation" and record.get("operation") == "enqueue":
            content = record.get("content")
            if not isinstance(content, str) or content.startswith("<"):
                return None, queued
            words = normalize_text(content)
            return Prompt(words, None), (*queued, QueuedPrompt(at, words))[-QUEUE_LIMIT:]
        prompt = claude_code_prompt(record) if record.get("type") == "user" else None
        if prompt is None:
            return None, queued
        delivered = next((i for i, entry in enumerate(queued) if entry.words == prompt.words), None)
        if delivered is not None:
            return None, queued[:delivered] + queued[delivered + 1 :]
        return prompt, queued
