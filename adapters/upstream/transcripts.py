"""An `UpstreamProvider` over local JSON Lines transcripts, with Claude Code and Codex presets.

Shell code: it reads transcript files (never writes them) and logs one warning line per skipped
probe, never message text. Nothing happens at import time. Which records are human prompts is the
format's business (`sessionwatch.adapters.upstream.transcript_formats`); this module reads the bytes.

A link's `upstream_ref` is the transcript path; its marker is `{"offset": <byte offset>}` (None:
offset 0), plus `"queued"` for a format that counts prompts when they are queued: the byte offsets
of the `enqueue` lines of prompts counted and not delivered yet, newest last, only while there are
any (markers without it read as none queued). Neither built-in format queues; offsets an earlier
Claude Code format stored are read and dropped. A marker holds positions only, never anything derived from
message text: the store keeps it, and a hash of a short prompt could be confirmed by guessing.
Each tick reads at most `scan_cap` bytes from the offset, consumes only complete lines (ending in
a newline), classifies each, and answers with the count and the marker after the last complete
line. Before classifying, it reads the queued enqueue lines again (each at most `scan_cap` bytes,
all before the offset) and classifies them with the same format, so their words exist in memory
only. A transcript read in many ticks counts exactly what one read of it counts. Known limits, by
design:

- A single line longer than the scan cap (1 MiB) blocks the link: no answer, the marker stays, one
  warning per tick. Unclassified bytes are never skipped, so the link waits for a host fix.
- A file shorter than the marker's offset (truncated or replaced) gets no answer and a warning; the
  provider never guesses where to resume. The host's remedy is `unlink_upstream`, then
  `link_upstream` at `marker_at_end` (re-linking the same source alone keeps the old marker).
- A partially written last line waits until its newline arrives.
- Only a vanished file (or a vanished folder on its path) is missing; a path that cannot be opened
  or is not a regular file (a directory, a FIFO) gets no answer and a warning.
- Lines that are blank, not valid JSON or not JSON objects are consumed as "not a prompt", and so
  are prompts whose text is empty or only whitespace (and that carry no image).
- The dedupe id names the file (its inode) and the byte range read, so a transcript replaced at
  the same path never has its new prompts mistaken for the old ones.
- A marker placed mid-line (`marker_at_end` while a line was being written) makes the rest of that
  line a fragment, which is consumed as "not a prompt".
- A queued offset whose line is no longer a complete enqueue record before the marker's offset
  (the file was replaced) is dropped: that prompt's later delivery, if any, counts again.
- A marker whose `queued` is not a list of at most `QUEUE_LIMIT` increasing offsets, all before
  its `offset`, is malformed: no answer and a warning each tick, like any malformed marker.
- A format whose rules depend on the file (`FileAwareFormat`: Codex counts nothing in a
  sub-agent's rollout) is told the file's first line again each tick; a first line longer than
  the scan cap reads as none.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO, TypeGuard

import orjson
from pydantic import JsonValue

from sessionwatch.adapters.upstream.transcript_formats import (
    CLAUDE_CODE,
    CODEX,
    QUEUE_LIMIT,
    ClaudeCodeFormat,
    CodexFormat,
    FileAwareFormat,
    JsonlFormat,
    Queue,
    QueuedPrompt,
    TranscriptFormat,
)
from sessionwatch.domain.upstream import (
    UpstreamActivity,
    UpstreamAnswer,
    UpstreamMissing,
    UpstreamProbe,
)

__all__ = [
    "CLAUDE_CODE",
    "CODEX",
    "SCAN_CAP",
    "ClaudeCodeFormat",
    "CodexFormat",
    "FileAwareFormat",
    "JsonlFormat",
    "JsonlTranscriptProvider",
    "TranscriptFormat",
    "marker_at_end",
]

logger = logging.getLogger("sessionwatch")

SCAN_CAP = 1_048_576
"""Bytes read per link per tick; a longer single line blocks the link."""

_NEWLINE = b"\n"
_OPEN_FLAGS: int = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
"""Never block on a FIFO (POSIX); never translate line ends (Windows)."""


@dataclass(frozen=True, slots=True)
class _Read:
    """One tick's bytes: the file's inode, its complete new lines, the queue read back, the format."""

    inode: int
    offset: int
    complete: bytes
    queued: Queue
    rules: JsonlFormat


@dataclass(frozen=True, slots=True)
class _Scan:
    """What one read of a transcript found: complete lines consumed, prompts counted."""

    consumed: int
    human_turns: int
    occurred_at: datetime | None
    queued: Queue


@dataclass(frozen=True, slots=True)
class _Marker:
    """How far a link was read, and where the queued prompts not yet delivered were enqueued."""

    offset: int
    queued: tuple[int, ...] = ()

    def to_json(self) -> dict[str, JsonValue]:
        """`{"offset": n}`, with `"queued"` (offsets only) while a queued prompt awaits delivery."""
        if not self.queued:
            return {"offset": self.offset}
        return {"offset": self.offset, "queued": list(self.queued)}


class JsonlTranscriptProvider:
    """Answers upstream probes from local JSONL transcript files, one format per provider."""

    def __init__(self, transcript_format: JsonlFormat = CLAUDE_CODE, *, scan_cap: int = SCAN_CAP) -> None:
        if scan_cap < 1:
            raise ValueError(f"scan_cap must be positive, got {scan_cap}")
        self._format = transcript_format
        self._scan_cap = scan_cap

    @classmethod
    def claude_code(cls, *, scan_cap: int = SCAN_CAP) -> JsonlTranscriptProvider:
        """A provider for Claude Code transcripts."""
        return cls(CLAUDE_CODE, scan_cap=scan_cap)

    @classmethod
    def codex(cls, *, scan_cap: int = SCAN_CAP) -> JsonlTranscriptProvider:
        """A provider for Codex CLI session rollouts."""
        return cls(CODEX, scan_cap=scan_cap)

    @property
    def transcript_format(self) -> JsonlFormat:
        """The classification policy in use."""
        return self._format

    def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> list[UpstreamActivity | UpstreamMissing]:
        """At most one answer per probe; a skipped probe is logged once and gets none."""
        answers: list[UpstreamActivity | UpstreamMissing] = []
        for probe in probes:
            answer = self._check(probe)
            if answer is not None:
                answers.append(answer)
        return answers

    def _check(self, probe: UpstreamProbe) -> UpstreamAnswer | None:
        path = probe.upstream_ref
        if not isinstance(path, str) or not path:
            _skip(probe, "upstream_ref is not a path")
            return None
        marker = _marker(probe.marker)
        if marker is None:
            _skip(probe, "malformed marker")
            return None
        read = self._read(probe, path, marker)
        if not isinstance(read, _Read):
            return read
        scan = self._scan(read, probe.own_recent_user_texts)
        next_offset = read.offset + scan.consumed
        return UpstreamActivity(
            session_key=probe.session_key,
            human_turns=scan.human_turns,
            next_marker=_Marker(next_offset, tuple(entry.at for entry in scan.queued)).to_json(),
            occurred_at=scan.occurred_at,
            dedupe_id=f"{read.inode}:{read.offset}-{next_offset}",
        )

    def _read(self, probe: UpstreamProbe, path: str, marker: _Marker) -> _Read | UpstreamMissing | None:
        """The complete lines of up to `scan_cap` bytes from the offset; missing; or None (logged).

        None as well, unlogged, when no complete line is new (nothing written, or a partial line).
        """
        offset = marker.offset
        try:
            # Non-blocking open: a FIFO at the path must not hang the monitor; it is rejected below.
            fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            return UpstreamMissing(session_key=probe.session_key)
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            _skip(probe, type(exc).__name__, offset)
            return None
        try:
            with os.fdopen(fd, "rb") as transcript:
                info = os.fstat(transcript.fileno())
                if not stat.S_ISREG(info.st_mode):
                    _skip(probe, "not a regular file", offset)
                    return None
                if info.st_size < offset:
                    _skip(probe, "transcript shorter than marker", offset)
                    return None
                transcript.seek(offset)
                data = transcript.read(self._scan_cap)
                end = data.rfind(_NEWLINE)
                if end < 0:
                    if len(data) >= self._scan_cap:
                        _skip(probe, "line longer than scan cap blocks the link", offset)
                    return None  # else nothing new, or a partial line still being written
                rules = self._rules_for(transcript)
                queued = self._read_queue(transcript, marker, rules)
                return _Read(info.st_ino, offset, data[: end + 1], queued, rules)
        except OSError as exc:
            _skip(probe, type(exc).__name__, offset)
            return None

    def _rules_for(self, transcript: BinaryIO) -> JsonlFormat:
        """The format for this file: told its first record when it is a `FileAwareFormat`.

        The first line is read again each tick (at most `scan_cap` bytes), so the format's view of
        the file never depends on where a tick starts. Raises `OSError` when it cannot be read.
        """
        if not isinstance(self._format, FileAwareFormat):
            return self._format
        transcript.seek(0)
        first = transcript.readline(self._scan_cap)
        return self._format.for_file(_parse(first[:-1]) if first.endswith(_NEWLINE) else None)

    def _read_queue(self, transcript: BinaryIO, marker: _Marker, rules: JsonlFormat) -> Queue:
        """The queued prompts the marker's offsets still point to, classified again from the file.

        An offset counts only while it starts a complete enqueue line that ends by the marker's
        offset and that this format queues (a replaced file's other bytes are dropped, never read
        as a prompt). Raises `OSError` when the file cannot be read.
        """
        queue: list[QueuedPrompt] = []
        for at in marker.queued:
            transcript.seek(at)
            line = transcript.readline(self._scan_cap)
            if not line.endswith(_NEWLINE) or at + len(line) > marker.offset:
                continue
            record = _parse(line[:-1])
            if record is None:
                continue
            _, alone = rules.read(record, (), at)
            if len(alone) == 1 and alone[0].at == at:
                queue.append(alone[0])
        return tuple(queue)

    def _scan(self, read: _Read, own_texts: tuple[str, ...]) -> _Scan:
        """Classify complete lines; self-echo of the session's own texts is not a human turn."""
        echoes = frozenset(own_texts)
        turns = 0
        occurred_at: datetime | None = None
        queued = read.queued
        at = read.offset
        for line in read.complete.split(_NEWLINE):
            start, at = at, at + len(line) + 1
            record = _parse(line)
            if record is None:
                continue
            prompt, queued = read.rules.read(record, queued, start)
            if prompt is None or prompt.words in echoes:
                continue
            turns += 1
            occurred_at = prompt.occurred_at
        return _Scan(consumed=len(read.complete), human_turns=turns, occurred_at=occurred_at, queued=queued)


def marker_at_end(path: str | os.PathLike[str]) -> dict[str, JsonValue]:
    """The marker at the transcript's current end, so history before adoption is never counted.

    Raises `OSError` (FileNotFoundError, ...) when the file cannot be read: the host decides.
    """
    return {"offset": os.stat(path).st_size}  # noqa: PTH116 - accepts str and PathLike alike


def _parse(line: bytes) -> object | None:
    """One line's JSON value; None for a blank line or one that is not JSON."""
    if not line.strip():
        return None
    try:
        record: object = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return record


def _marker(marker: JsonValue) -> _Marker | None:
    """A marker's offset and queued offsets, or None when it is malformed."""
    if marker is None:
        return _Marker(0)
    if not isinstance(marker, dict) or "offset" not in marker or not marker.keys() <= {"offset", "queued"}:
        return None
    offset = marker["offset"]
    if not _is_offset(offset):
        return None
    queued = marker.get("queued", [])
    if not isinstance(queued, list) or len(queued) > QUEUE_LIMIT:
        return None
    positions: list[int] = []
    for at in queued:  # offsets of enqueue lines, oldest first, all before the marker's offset
        if not _is_offset(at) or at >= offset or (positions and at <= positions[-1]):
            return None
        positions.append(at)
    return _Marker(offset, tuple(positions))


def _is_offset(value: JsonValue) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _skip(probe: UpstreamProbe, reason: str, offset: int | None = None) -> None:
    """Log one line for a probe that gets no answer this tick (metadata only, never text)."""
    logger.warning(
        "sessionwatch: upstream transcript skipped (session_key=%r offset=%s reason=%s)",
        probe.session_key,
        offset,
        reason,
        extra={"session_key": probe.session_key, "offset": offset, "reason": reason},
    )
