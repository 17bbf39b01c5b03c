"""An `UpstreamProvider` over local JSON Lines transcripts (SPEC §10), with a Claude Code preset.

Shell code: it reads transcript files (never writes them) and logs one warning line per skipped
probe, never message text. Nothing happens at import time.

A link's `upstream_ref` is the transcript path; its marker is `{"offset": <byte offset>}` (None:
offset 0). Each tick reads at most `scan_cap` bytes from the offset, consumes only complete lines
(ending in a newline), classifies each as a human prompt or not, and answers with the count and the
offset after the last complete line. Known v1 limits, by design:

- A single line longer than the scan cap (1 MiB) blocks the link: no answer, the marker stays, one
  warning per tick. Unclassified bytes are never skipped, so the link waits for a host fix.
- A file shorter than the marker's offset (truncated or replaced) gets no answer and a warning; the
  provider never guesses where to resume. The host's remedy is `unlink_upstream`, then
  `link_upstream` at `marker_at_end` (re-linking the same source alone keeps the old marker).
- A partially written last line waits until its newline arrives.
- Only a vanished file (or a vanished folder on its path) is missing; a path that cannot be opened
  or is not a regular file (a directory, a FIFO) gets no answer and a warning.
- Lines that are blank, not valid JSON or not JSON objects are consumed as "not a prompt", and so
  are prompts whose text is empty or only whitespace.
- The dedupe id names the file (its inode) and the byte range read, so a transcript replaced at
  the same path never has its new prompts mistaken for the old ones.
- A marker placed mid-line (`marker_at_end` while a line was being written) makes the rest of that
  line a fragment, which is consumed as "not a prompt".
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import orjson
from pydantic import JsonValue

from sessionwatch.domain.upstream import (
    UpstreamActivity,
    UpstreamAnswer,
    UpstreamMissing,
    UpstreamProbe,
    normalize_text,
)

logger = logging.getLogger("sessionwatch")

SCAN_CAP = 1_048_576
"""Bytes read per link per tick (SPEC §10); a longer single line blocks the link."""

_NEWLINE = b"\n"
_OPEN_FLAGS: int = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
"""Never block on a FIFO (POSIX); never translate line ends (Windows)."""


@dataclass(frozen=True, slots=True)
class TranscriptFormat:
    """Which JSONL records of a transcript format are human prompts.

    A record is a prompt when it is a JSON object whose `type_field` is `prompt_type`, whose
    `message_field` object has `role_field` equal to `prompt_role`, whose content is a string or a
    list of blocks with at least one text block and no `excluded_block_types` block, none of
    whose `excluded_flags` is `true`, and whose text starts with none of `excluded_prefixes` (text
    the tool writes as the user: interruption markers, local command output).
    """

    name: str
    type_field: str = "type"
    prompt_type: str = "user"
    message_field: str = "message"
    role_field: str = "role"
    prompt_role: str = "user"
    content_field: str = "content"
    block_type_field: str = "type"
    text_block_type: str = "text"
    text_field: str = "text"
    excluded_block_types: frozenset[str] = frozenset({"tool_result"})
    excluded_flags: tuple[str, ...] = ()
    excluded_prefixes: tuple[str, ...] = ()
    timestamp_field: str = "timestamp"

    def prompt_text(self, record: object) -> str | None:
        """The prompt's text (text blocks joined with a newline), or None when not a prompt."""
        if not isinstance(record, dict) or record.get(self.type_field) != self.prompt_type:
            return None
        if any(record.get(flag) is True for flag in self.excluded_flags):
            return None
        message = record.get(self.message_field)
        if not isinstance(message, dict) or message.get(self.role_field) != self.prompt_role:
            return None
        text = self._content_text(message.get(self.content_field))
        if text is None or not text.strip() or text.lstrip().startswith(self.excluded_prefixes):
            return None
        return text

    def _content_text(self, content: object) -> str | None:
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            return None
        texts: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get(self.block_type_field)
            if kind in self.excluded_block_types:
                return None
            text = block.get(self.text_field)
            if kind == self.text_block_type and isinstance(text, str):
                texts.append(text)
        return "\n".join(texts) if texts else None

    def occurred_at(self, record: object) -> datetime | None:
        """The record's timestamp as an aware datetime, or None when absent or unparseable."""
        if not isinstance(record, dict):
            return None
        stamp = record.get(self.timestamp_field)
        if not isinstance(stamp, str):
            return None
        try:
            parsed = datetime.fromisoformat(stamp)
        except ValueError:
            return None
        return parsed if parsed.tzinfo is not None else None


CLAUDE_CODE = TranscriptFormat(
    name="claude-code",
    # isMeta: harness-written user records (hook feedback, command caveats); isSidechain: subagent
    # turns; isCompactSummary / isVisibleInTranscriptOnly: the model's /compact summary.
    excluded_flags=("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly"),
    # Written as user text by Claude Code itself: an Escape during a turn, and a local command's output.
    excluded_prefixes=(
        "[Request interrupted by user",
        "<local-command-stdout>",
        "<local-command-stderr>",
    ),
)
"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`)."""


@dataclass(frozen=True, slots=True)
class _Scan:
    """What one read of a transcript found: complete lines consumed, prompts counted."""

    consumed: int
    human_turns: int
    occurred_at: datetime | None


class JsonlTranscriptProvider:
    """Answers upstream probes from local JSONL transcript files, one format per provider."""

    def __init__(
        self, transcript_format: TranscriptFormat = CLAUDE_CODE, *, scan_cap: int = SCAN_CAP
    ) -> None:
        if scan_cap < 1:
            raise ValueError(f"scan_cap must be positive, got {scan_cap}")
        self._format = transcript_format
        self._scan_cap = scan_cap

    @classmethod
    def claude_code(cls, *, scan_cap: int = SCAN_CAP) -> JsonlTranscriptProvider:
        """A provider for Claude Code transcripts."""
        return cls(CLAUDE_CODE, scan_cap=scan_cap)

    @property
    def transcript_format(self) -> TranscriptFormat:
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
        offset = _offset(probe.marker)
        if offset is None:
            _skip(probe, "malformed marker")
            return None
        read = self._read(probe, path, offset)
        if not isinstance(read, tuple):
            return read
        inode, data = read
        end = data.rfind(_NEWLINE)
        if end < 0:
            if len(data) >= self._scan_cap:
                _skip(probe, "line longer than scan cap blocks the link", offset)
            return None  # else nothing new, or a partial line still being written
        scan = self._scan(data[: end + 1], probe.own_recent_user_texts)
        next_offset = offset + scan.consumed
        return UpstreamActivity(
            session_key=probe.session_key,
            human_turns=scan.human_turns,
            next_marker={"offset": next_offset},
            occurred_at=scan.occurred_at,
            dedupe_id=f"{inode}:{offset}-{next_offset}",
        )

    def _read(
        self, probe: UpstreamProbe, path: str, offset: int
    ) -> tuple[int, bytes] | UpstreamMissing | None:
        """The file's inode and up to `scan_cap` bytes from `offset`; missing; or None (logged)."""
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
                return info.st_ino, transcript.read(self._scan_cap)
        except OSError as exc:
            _skip(probe, type(exc).__name__, offset)
            return None

    def _scan(self, complete: bytes, own_texts: tuple[str, ...]) -> _Scan:
        """Classify complete lines; self-echo of the session's own texts is not a human turn."""
        echoes = frozenset(own_texts)
        turns = 0
        occurred_at: datetime | None = None
        for line in complete.split(_NEWLINE):
            if not line.strip():
                continue
            try:
                record: object = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            text = self._format.prompt_text(record)
            if text is None or normalize_text(text) in echoes:
                continue
            turns += 1
            occurred_at = self._format.occurred_at(record)
        return _Scan(consumed=len(complete), human_turns=turns, occurred_at=occurred_at)


def marker_at_end(path: str | os.PathLike[str]) -> dict[str, JsonValue]:
    """The marker at the transcript's current end, so history before adoption is never counted.

    Raises `OSError` (FileNotFoundError, ...) when the file cannot be read: the host decides.
    """
    return {"offset": os.stat(path).st_size}  # noqa: PTH116 - accepts str and PathLike alike


def _offset(marker: JsonValue) -> int | None:
    """The byte offset of a marker, or None when it is malformed."""
    if marker is None:
        return 0
    if not isinstance(marker, dict) or marker.keys() != {"offset"}:
        return None
    offset = marker["offset"]
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return None
    return offset


def _skip(probe: UpstreamProbe, reason: str, offset: int | None = None) -> None:
    """Log one line for a probe that gets no answer this tick (metadata only, never text)."""
    logger.warning(
        "sessionwatch: upstream transcript skipped (session_key=%r offset=%s reason=%s)",
        probe.session_key,
        offset,
        reason,
        extra={"session_key": probe.session_key, "offset": offset, "reason": reason},
    )
