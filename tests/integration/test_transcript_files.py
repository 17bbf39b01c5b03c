"""The file rules both transcript providers share, on Claude Code transcripts and Codex rollouts.

Same marker, same 1 MiB scan cap, same rules for a file that grows while it is read, a partial
last line, a line longer than the cap, a truncated file and a deleted one.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import claude_transcripts as claude
import codex_transcripts as codex
import pytest
from claude_transcripts import append, append_bytes, line
from transcript_probes import SESSION, activity, ask, offset_of, probe, read_while_written, warnings

from sessionwatch.adapters.upstream.transcripts import SCAN_CAP, JsonlTranscriptProvider, marker_at_end
from sessionwatch.domain.upstream import UpstreamMissing

Record = dict[str, object]
HUMAN_WORDS = "the secret words of the human"


@dataclass(frozen=True)
class Tool:
    """One tool's provider, how it writes a typed prompt, and records around prompts."""

    name: str
    provider: Callable[[], JsonlTranscriptProvider]
    prompt: Callable[[str], list[Record]]
    noise: Callable[[], list[Record]]


CLAUDE = Tool(
    "claude-code",
    JsonlTranscriptProvider.claude_code,
    lambda text: [claude.prompt(text)],
    lambda: [claude.assistant("on it"), claude.tool_result(), claude.snapshot()],
)
CODEX = Tool(
    "codex",
    JsonlTranscriptProvider.codex,
    lambda text: [codex.user_message(text), codex.user_event(text), codex.turn_context()],
    lambda: [
        codex.reasoning(),
        codex.function_call("ls"),
        codex.function_call_output("a b"),
        codex.token_count(),
    ],
)


@pytest.fixture(params=[CLAUDE, CODEX], ids=lambda tool: tool.name)
def tool(request: pytest.FixtureRequest) -> Tool:
    chosen = request.param
    assert isinstance(chosen, Tool)
    return chosen


@pytest.fixture
def caplog_warnings(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="sessionwatch")
    return caplog


def history(tool: Tool, path: Path) -> Path:
    if tool is CODEX:
        append(
            path,
            codex.session_meta(),
            codex.developer_message(),
            codex.agents_md(),
            codex.environment_context(),
        )
    append(path, *tool.prompt("an old prompt"), *tool.noise())
    return path


def test_a_file_that_grows_while_it_is_read_is_counted_up_to_its_last_complete_line(
    tool: Tool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = history(tool, tmp_path / "t.jsonl")
    marker = marker_at_end(path)
    append(path, *tool.prompt("written before the read"))
    during = b"".join(line(r) for r in [*tool.prompt("written during the read"), *tool.noise()])
    cut = during.rindex(b"\n", 0, len(during) - 1) + 10  # the last record arrives half written
    real_fstat = os.fstat

    def growing(fd: int) -> os.stat_result:
        info = real_fstat(fd)  # the size is taken before the writer appends more
        monkeypatch.setattr(os, "fstat", real_fstat)
        append_bytes(path, during[:cut])
        return info

    monkeypatch.setattr(os, "fstat", growing)
    first = activity(tool.provider(), probe(str(path), marker))
    complete = path.stat().st_size - (cut - during.rindex(b"\n", 0, cut) - 1)
    assert (first.human_turns, offset_of(first)) == (2, complete)

    size = append_bytes(path, during[cut:])
    second = activity(tool.provider(), probe(str(path), first.next_marker))
    assert (second.human_turns, offset_of(second)) == (0, size)


def test_a_partial_last_line_is_counted_once_its_newline_arrives(tool: Tool, tmp_path: Path) -> None:
    path = history(tool, tmp_path / "t.jsonl")
    marker = marker_at_end(path)
    whole = b"".join(line(r) for r in tool.prompt("a prompt being written"))
    append_bytes(path, whole[:30])

    assert ask(tool.provider(), probe(str(path), marker)) is None  # nothing complete yet
    size = append_bytes(path, whole[30:])
    answer = activity(tool.provider(), probe(str(path), marker))

    assert (answer.human_turns, offset_of(answer)) == (1, size)


def test_a_file_written_in_any_pieces_counts_what_one_read_counts(tool: Tool, tmp_path: Path) -> None:
    records = [*tool.prompt("one"), *tool.noise(), *tool.prompt("two"), *tool.noise(), *tool.prompt("three")]
    data = b"".join(line(r) for r in records)
    cuts = list(range(0, len(data), 97)) + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]

    pieces = read_while_written(tool.provider(), tmp_path / "pieces.jsonl", data, cuts)
    whole = read_while_written(tool.provider(), tmp_path / "whole.jsonl", data, [])

    assert pieces.turns == whole.turns == 3
    assert pieces.marker == whole.marker == {"offset": len(data)}


def test_a_line_longer_than_the_scan_cap_blocks_the_link_after_the_prompts_before_it(
    tool: Tool, tmp_path: Path, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    path = history(tool, tmp_path / "t.jsonl")
    marker = marker_at_end(path)
    before = append(path, *tool.prompt("before the huge line"))
    huge = tool.prompt(HUMAN_WORDS + " " + "x" * (SCAN_CAP + 1))[0]
    append(path, huge, *tool.prompt("after the huge line"))
    provider = tool.provider()

    first = activity(provider, probe(str(path), marker))
    assert (first.human_turns, offset_of(first)) == (1, before)
    assert ask(provider, probe(str(path), first.next_marker)) is None
    assert ask(provider, probe(str(path), first.next_marker)) is None

    blocked = warnings(caplog_warnings)
    assert len(blocked) == 2  # one line per blocked tick, the marker never moves
    assert all("scan cap" in r.getMessage() and SESSION in r.getMessage() for r in blocked)
    assert HUMAN_WORDS not in caplog_warnings.text


def test_a_truncated_file_gets_no_answer_and_a_warning(
    tool: Tool, tmp_path: Path, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    path = history(tool, tmp_path / "t.jsonl")
    append(path, *tool.prompt(HUMAN_WORDS))
    marker = marker_at_end(path)
    path.write_bytes(b"".join(line(r) for r in tool.prompt("a shorter file")))

    assert ask(tool.provider(), probe(str(path), marker)) is None

    [warning] = warnings(caplog_warnings)
    assert "shorter than marker" in warning.getMessage()
    assert HUMAN_WORDS not in caplog_warnings.text


def test_a_deleted_file_is_missing(tool: Tool, tmp_path: Path) -> None:
    path = history(tool, tmp_path / "t.jsonl")
    marker = marker_at_end(path)
    path.unlink()

    assert ask(tool.provider(), probe(str(path), marker)) == UpstreamMissing(session_key=SESSION)


def test_history_before_the_marker_is_never_counted(tool: Tool, tmp_path: Path) -> None:
    path = history(tool, tmp_path / "t.jsonl")
    marker = marker_at_end(path)
    assert ask(tool.provider(), probe(str(path), marker)) is None

    size = append(path, *tool.prompt("after adoption"), *tool.noise())
    answer = activity(tool.provider(), probe(str(path), marker))

    assert (answer.human_turns, offset_of(answer)) == (1, size)
    assert activity(tool.provider(), probe(str(path))).human_turns == 2  # from the start: both
