"""Claude-Code-shaped JSONL transcript lines for the tests that read real transcript files.

Each builder returns one record as Claude Code writes it to `~/.claude/projects/<project>/<id>.jsonl`:
human prompts (string or block content), assistant replies, tool results, and the user-typed records
that are not a human (meta, sidechain, compact summaries) along with the other line types (summary,
file-history snapshot). `line`, `append` and `append_bytes` write them to a file as Claude Code does,
one complete line at a time, or as raw bytes for partial and malformed lines.

Default timestamps fall in the minute before the test clock's start (`helpers.START`, 12:00 UTC).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

SESSION_ID = "95e6f011-ec33-4b37-91ad-5d242b40ae3d"

Record = dict[str, object]


def _base(kind: str, timestamp: str, **extra: object) -> Record:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/repo",
        "sessionId": SESSION_ID,
        "version": "2.1.12",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"uuid-{kind}-{timestamp}",
        "timestamp": timestamp,
        **extra,
    }


def prompt(text: str, timestamp: str = "2026-11-30T11:59:00.000Z", **extra: object) -> Record:
    """A typed human prompt (string content)."""
    return _base("user", timestamp, message={"role": "user", "content": text}, **extra)


def block_prompt(*texts: str, timestamp: str = "2026-11-30T11:59:00.000Z", **extra: object) -> Record:
    """A human prompt whose content is a list of text blocks (plus an image, as pasted ones are)."""
    blocks: list[object] = [{"type": "text", "text": text} for text in texts]
    blocks.append({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}})
    return _base("user", timestamp, message={"role": "user", "content": blocks}, **extra)


def assistant(text: str, timestamp: str = "2026-11-30T11:59:10.000Z") -> Record:
    """An assistant reply: a text block and a tool call."""
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-5-20251101",
        "content": [{"type": "text", "text": text}, {"type": "tool_use", "id": "toolu_01", "name": "Bash"}],
        "stop_reason": None,
        "usage": {"input_tokens": 1, "output_tokens": 25},
    }
    return _base("assistant", timestamp, message=message, requestId="req_01")


def tool_result(timestamp: str = "2026-11-30T11:59:20.000Z") -> Record:
    """The result of the assistant's tool call, written as a user record: not a human."""
    content = [{"tool_use_id": "toolu_01", "type": "tool_result", "content": "     1→print('hi')"}]
    return _base(
        "user",
        timestamp,
        message={"role": "user", "content": content},
        toolUseResult={"stdout": "hi", "stderr": "", "interrupted": False, "isImage": False},
    )


def meta(text: str, timestamp: str = "2026-11-30T11:59:30.000Z") -> Record:
    """A harness-written user record (hook feedback, command caveat): not a human."""
    return prompt(text, timestamp, isMeta=True)


def sidechain(text: str, timestamp: str = "2026-11-30T11:59:40.000Z") -> Record:
    """A subagent's user turn: not a human."""
    return prompt(text, timestamp, isSidechain=True)


def compact_summary(text: str, timestamp: str = "2026-11-30T11:59:50.000Z") -> Record:
    """The summary that continues a compacted conversation, written as a user record: not a human."""
    return prompt(text, timestamp, isCompactSummary=True, isVisibleInTranscriptOnly=True)


def summary() -> Record:
    """A session-title summary line."""
    return {"type": "summary", "summary": "Fixing the build", "leafUuid": "uuid-leaf"}


def snapshot() -> Record:
    """A file-history snapshot line."""
    return {"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}, "isSnapshotUpdate": False}


def line(record: Mapping[str, object]) -> bytes:
    """One record as a complete JSONL line."""
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"


def append(path: Path, *records: Mapping[str, object]) -> int:
    """Append records as complete lines, as Claude Code does; returns the file's new size."""
    return append_bytes(path, b"".join(line(record) for record in records))


def append_bytes(path: Path, data: bytes) -> int:
    """Append raw bytes (a partial or malformed line); returns the file's new size."""
    with path.open("ab") as out:
        out.write(data)
    return path.stat().st_size
