"""The JSONL transcript provider on real files (SPEC §10): Claude-Code-shaped lines in `tmp_path`.

Each test writes actual transcript lines, asks the provider about one or more probes, and checks
the answer: how many human turns, how far the marker moves, and when it must not move at all.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from claude_transcripts import (
    append,
    append_bytes,
    assistant,
    block_prompt,
    compact_summary,
    line,
    meta,
    prompt,
    sidechain,
    snapshot,
    summary,
    tool_result,
)
from pydantic import JsonValue

from sessionwatch.adapters.transcript_provider import (
    CLAUDE_CODE,
    SCAN_CAP,
    JsonlTranscriptProvider,
    TranscriptFormat,
    marker_at_end,
)
from sessionwatch.domain.ports import UpstreamProvider
from sessionwatch.domain.upstream import (
    UpstreamActivity,
    UpstreamMissing,
    UpstreamProbe,
    normalize_text,
)

SESSION = "agent:main:adopted"
HUMAN_WORDS = "the secret words of the human"

# ------------------------------------------------------------------------------ probes and answers


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


@pytest.fixture
def provider() -> JsonlTranscriptProvider:
    return JsonlTranscriptProvider.claude_code()


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A transcript with some history: a summary, one exchange and a tool round trip."""
    path = tmp_path / "95e6f011.jsonl"
    append(path, summary(), prompt("an old prompt"), assistant("old reply"), tool_result())
    return path


@pytest.fixture
def caplog_warnings(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="sessionwatch")
    return caplog


# ------------------------------------------------------------------------------------- the port


def test_the_provider_satisfies_the_upstream_provider_port(provider: JsonlTranscriptProvider) -> None:
    assert isinstance(provider, UpstreamProvider)
    assert provider.transcript_format is CLAUDE_CODE
    assert SCAN_CAP == 1_048_576


def test_a_scan_cap_below_one_byte_is_refused() -> None:
    with pytest.raises(ValueError, match="scan_cap"):
        JsonlTranscriptProvider(scan_cap=0)


# ------------------------------------------------------------------------------- counting prompts


def test_appended_human_prompts_become_activity_up_to_the_file_end(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    size = append(transcript, prompt("please fix the build"), block_prompt("and run the tests"))

    answer = activity(provider, probe(str(transcript), start))

    assert answer.human_turns == 2
    assert offset_of(answer) == size
    assert answer.next_marker == {"offset": size}
    assert answer.dedupe_id == f"{transcript.stat().st_ino}:{start['offset']}-{size}"


def test_a_burst_of_three_prompts_counts_three_human_turns(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    size = append(
        transcript,
        prompt("one", "2026-11-30T12:01:00Z"),
        assistant("ok"),
        prompt("two", "2026-11-30T12:02:00Z"),
        tool_result(),
        block_prompt("three", timestamp="2026-11-30T12:03:00Z"),
    )

    answer = activity(provider, probe(str(transcript), start))

    assert answer.human_turns == 3
    assert offset_of(answer) == size


def test_tool_results_assistant_meta_sidechain_and_summary_lines_are_consumed_without_counting(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    mixed_tool_result = prompt("unused")
    mixed_tool_result["message"] = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "x"},
            {"type": "text", "text": "y"},
        ],
    }
    image_only = block_prompt()
    size = append(
        transcript,
        tool_result(),
        assistant("I ran the tests"),
        meta("Stop hook feedback:\n[hook]: keep going"),
        meta("<local-command-caveat>Caveat: generated by local commands</local-command-caveat>"),
        sidechain("Explore the repository and report back"),
        compact_summary("This session is being continued from a previous conversation."),
        summary(),
        snapshot(),
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
        mixed_tool_result,
        image_only,
        {"type": "user", "message": {"role": "assistant", "content": "role mismatch"}},
        {"type": "user", "message": "not an object"},
    )

    answer = activity(provider, probe(str(transcript), start))

    assert answer.human_turns == 0
    assert offset_of(answer) == size
    assert answer.occurred_at is None


def test_text_claude_code_writes_as_the_user_is_not_a_human_turn(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    size = append(
        transcript,
        prompt("[Request interrupted by user]"),
        block_prompt("[Request interrupted by user for tool use]"),
        prompt("<local-command-stdout>Set model to opus</local-command-stdout>"),
        prompt("<local-command-stderr>error</local-command-stderr>"),
        prompt("please also update the changelog"),
    )

    answer = activity(provider, probe(str(transcript), start))

    assert answer.human_turns == 1  # only the real prompt
    assert offset_of(answer) == size


def test_self_echo_of_the_sessions_own_text_is_consumed_but_not_counted(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    own = (normalize_text("fix the build please"), normalize_text("then ship it"))
    start = marker_at_end(transcript)
    size = append(
        transcript,
        prompt("  fix the\n build   please ", "2026-11-30T12:01:00Z"),
        block_prompt("then", "ship it", timestamp="2026-11-30T12:02:00Z"),
        prompt("a human typed this", "2026-11-30T12:03:00Z"),
    )

    answer = activity(provider, probe(str(transcript), start, own=own))

    assert answer.human_turns == 1
    assert offset_of(answer) == size
    assert answer.occurred_at == datetime(2026, 11, 30, 12, 3, tzinfo=UTC)


def test_a_burst_of_only_self_echo_advances_the_marker_with_zero_turns(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    size = append(transcript, prompt("relay: status?"))

    answer = activity(provider, probe(str(transcript), start, own=("relay: status?",)))

    assert (answer.human_turns, offset_of(answer), answer.occurred_at) == (0, size, None)


def test_a_missing_marker_reads_the_transcript_from_the_start(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    answer = activity(provider, probe(str(transcript), None))

    assert answer.human_turns == 1  # "an old prompt"; the summary, reply and tool result do not count
    assert offset_of(answer) == transcript.stat().st_size
    assert answer.dedupe_id == f"{transcript.stat().st_ino}:0-{transcript.stat().st_size}"


def test_a_marker_at_offset_zero_reads_the_same_as_no_marker(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    assert ask(provider, probe(str(transcript), {"offset": 0})) == ask(provider, probe(str(transcript)))


def test_nothing_new_after_the_marker_gets_no_answer(
    provider: JsonlTranscriptProvider, transcript: Path, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    assert ask(provider, probe(str(transcript), marker_at_end(transcript))) is None
    assert warnings(caplog_warnings) == []


def test_following_the_next_marker_counts_each_prompt_exactly_once(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    marker = marker_at_end(transcript)
    append(transcript, prompt("first"))
    first = activity(provider, probe(str(transcript), marker))
    append(transcript, prompt("second"), prompt("third"))
    second = activity(provider, probe(str(transcript), first.next_marker))

    assert (first.human_turns, second.human_turns) == (1, 2)
    assert ask(provider, probe(str(transcript), second.next_marker)) is None


# ------------------------------------------------------------------------------------ occurred_at


def test_occurred_at_is_the_timestamp_of_the_last_counted_prompt(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    append(
        transcript,
        prompt("earlier", "2026-11-30T12:01:00.000Z"),
        prompt("latest", "2026-11-30T12:05:30.250Z"),
        assistant("reply", "2026-11-30T12:06:00.000Z"),
        meta("hook echo", "2026-11-30T12:07:00.000Z"),
    )

    answer = activity(provider, probe(str(transcript), start))

    assert answer.occurred_at == datetime(2026, 11, 30, 12, 5, 30, 250_000, tzinfo=UTC)
    assert isinstance(answer.occurred_at, datetime)
    assert answer.occurred_at.tzinfo is not None


@pytest.mark.parametrize(
    "timestamp",
    ["not a time", "2026-11-30T12:00:00", 1_764_504_000, None],
    ids=["unparseable", "naive", "number", "null"],
)
def test_occurred_at_is_none_when_the_last_prompt_has_no_usable_timestamp(
    provider: JsonlTranscriptProvider, transcript: Path, timestamp: object
) -> None:
    start = marker_at_end(transcript)
    last = prompt("latest")
    last["timestamp"] = timestamp
    append(transcript, prompt("earlier", "2026-11-30T12:01:00Z"), last)

    answer = activity(provider, probe(str(transcript), start))

    assert answer.human_turns == 2
    assert answer.occurred_at is None


# ----------------------------------------------------------------------------- incomplete and junk


def test_a_partially_written_last_line_is_consumed_only_once_complete(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    whole = line(prompt("a prompt being written", "2026-11-30T12:09:00Z"))
    complete_size = append(transcript, prompt("done first"))
    append_bytes(transcript, whole[:25])

    first = activity(provider, probe(str(transcript), start))
    assert (first.human_turns, offset_of(first)) == (1, complete_size)
    assert ask(provider, probe(str(transcript), first.next_marker)) is None

    size = append_bytes(transcript, whole[25:])
    second = activity(provider, probe(str(transcript), first.next_marker))

    assert (second.human_turns, offset_of(second)) == (1, size)
    assert second.occurred_at == datetime(2026, 11, 30, 12, 9, tzinfo=UTC)


def test_an_empty_or_blank_prompt_is_not_a_human_turn(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    size = append(transcript, prompt(""), prompt(" \n\t "), block_prompt(""), prompt("real"))

    answer = activity(provider, probe(str(transcript), start))

    assert (answer.human_turns, offset_of(answer)) == (1, size)


def test_a_transcript_replaced_at_the_same_path_gets_other_dedupe_ids(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    path = tmp_path / "replaced.jsonl"
    append(path, prompt("first life"))
    first = activity(provider, probe(str(path)))
    keep = tmp_path / "keep-inode-busy.jsonl"
    path.rename(keep)  # the old file lives on, so the new one cannot reuse its inode
    append(path, prompt("other life"))
    second = activity(provider, probe(str(path)))

    assert offset_of(first) == offset_of(second)  # the same byte range ...
    assert first.dedupe_id != second.dedupe_id  # ... of another file


def test_invalid_json_lines_are_consumed_without_crashing(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    start = marker_at_end(transcript)
    append_bytes(transcript, b"\n   \n\r\n")
    append_bytes(transcript, b"{not json at all\n")
    append_bytes(transcript, b'{"type": "user", "message": {"role": "user", "content": "cut off\n')
    append_bytes(transcript, b"\xff\xfe invalid utf-8 \x80\n")
    append_bytes(transcript, b'["type", "user"]\n"a bare string"\n42\nnull\n')
    append_bytes(transcript, b"[" * 5000 + b"\n")
    size = append(transcript, prompt("still counted"))

    answer = activity(provider, probe(str(transcript), start))

    assert answer.human_turns == 1
    assert offset_of(answer) == size


def test_crlf_line_ends_are_classified_like_lf(provider: JsonlTranscriptProvider, tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    size = append_bytes(path, line(prompt("one"))[:-1] + b"\r\n" + line(prompt("two"))[:-1] + b"\r\n")

    answer = activity(provider, probe(str(path)))

    assert (answer.human_turns, offset_of(answer)) == (2, size)


# ------------------------------------------------------------------------------- the scan cap (v1)


def test_a_line_longer_than_the_scan_cap_blocks_the_link_without_advancing(
    provider: JsonlTranscriptProvider, transcript: Path, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    start = marker_at_end(transcript)
    before = append(transcript, prompt("before the huge line"), assistant("ok"))
    huge = prompt(HUMAN_WORDS + " " + "x" * (2 * 1024 * 1024))
    append(transcript, huge, prompt("after the huge line"))

    first = activity(provider, probe(str(transcript), start))
    assert (first.human_turns, offset_of(first)) == (1, before)
    assert warnings(caplog_warnings) == []

    assert ask(provider, probe(str(transcript), first.next_marker)) is None
    assert ask(provider, probe(str(transcript), first.next_marker)) is None

    blocked = warnings(caplog_warnings)
    assert len(blocked) == 2  # one line per blocked tick
    assert all("scan cap" in r.getMessage() and SESSION in r.getMessage() for r in blocked)
    assert HUMAN_WORDS not in caplog_warnings.text


def test_a_small_scan_cap_reads_a_long_backlog_over_several_ticks(tmp_path: Path) -> None:
    path = tmp_path / "backlog.jsonl"
    lines = [line(prompt(f"prompt {n}")) for n in range(5)]
    size = append_bytes(path, b"".join(lines))
    provider = JsonlTranscriptProvider.claude_code(scan_cap=len(lines[0]) * 2 + 10)

    marker: JsonValue = None
    turns: list[int] = []
    while (answer := ask(provider, probe(str(path), marker))) is not None:
        assert isinstance(answer, UpstreamActivity)
        turns.append(answer.human_turns)
        marker = answer.next_marker

    assert sum(turns) == 5
    assert len(turns) == 3
    assert marker == {"offset": size}


def test_a_line_exactly_as_long_as_the_scan_cap_is_consumed(tmp_path: Path) -> None:
    path = tmp_path / "exact.jsonl"
    whole = line(prompt("fits exactly"))
    size = append_bytes(path, whole)
    provider = JsonlTranscriptProvider.claude_code(scan_cap=len(whole))

    answer = activity(provider, probe(str(path)))

    assert (answer.human_turns, offset_of(answer)) == (1, size)


# ------------------------------------------------------------------------- missing and unreadable


def test_a_deleted_transcript_is_missing(provider: JsonlTranscriptProvider, transcript: Path) -> None:
    marker = marker_at_end(transcript)
    transcript.unlink()

    assert ask(provider, probe(str(transcript), marker)) == UpstreamMissing(session_key=SESSION)


def test_a_transcript_under_a_path_that_is_now_a_file_is_missing(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    (tmp_path / "project").write_bytes(b"not a folder")

    answer = ask(provider, probe(str(tmp_path / "project" / "session.jsonl")))

    assert answer == UpstreamMissing(session_key=SESSION)


def test_a_truncated_transcript_gets_no_answer_and_one_warning(
    provider: JsonlTranscriptProvider, transcript: Path, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    append(transcript, prompt(HUMAN_WORDS))
    marker = marker_at_end(transcript)
    transcript.write_bytes(line(prompt("a replaced, shorter file")))

    assert ask(provider, probe(str(transcript), marker)) is None

    [warning] = warnings(caplog_warnings)
    assert "shorter than marker" in warning.getMessage()
    assert HUMAN_WORDS not in caplog_warnings.text


def test_a_directory_at_the_transcript_path_gets_no_answer(
    provider: JsonlTranscriptProvider, tmp_path: Path, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    assert ask(provider, probe(str(tmp_path))) is None
    assert len(warnings(caplog_warnings)) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_at_the_transcript_path_never_blocks_the_monitor(
    provider: JsonlTranscriptProvider, tmp_path: Path, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    assert ask(provider, probe(str(fifo))) is None
    assert "not a regular file" in warnings(caplog_warnings)[0].getMessage()


@pytest.mark.parametrize(
    ("name", "error"),
    [("x" * 5000 + ".jsonl", "OSError"), ("bad\0name.jsonl", "ValueError")],
    ids=["name-too-long", "nul-byte"],
)
def test_a_path_the_os_refuses_gets_no_answer_and_is_not_missing(
    provider: JsonlTranscriptProvider,
    tmp_path: Path,
    caplog_warnings: pytest.LogCaptureFixture,
    name: str,
    error: str,
) -> None:
    assert ask(provider, probe(str(tmp_path / name))) is None

    [warning] = warnings(caplog_warnings)
    assert error in warning.getMessage()


def test_an_unreadable_transcript_gets_no_answer_and_is_not_missing(
    provider: JsonlTranscriptProvider,
    transcript: Path,
    caplog_warnings: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The OS refuses to open it, as for a file without read permission (root would read it anyway).
    real_open = os.open

    def refusing(path: str, flags: int, *args: int) -> int:
        if path == str(transcript):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refusing)
    assert ask(provider, probe(str(transcript))) is None
    assert "PermissionError" in warnings(caplog_warnings)[0].getMessage()


# ------------------------------------------------------------------------------ malformed probes


@pytest.mark.parametrize(
    "marker",
    [{"offset": -1}, {"offset": "12"}, {"offset": True}, {"offset": 1.5}, {"pos": 0}, {}, [0], 7, "0"],
    ids=["negative", "string", "bool", "float", "other-key", "empty", "list", "int", "str"],
)
def test_a_malformed_marker_gets_no_answer_and_one_warning(
    provider: JsonlTranscriptProvider,
    transcript: Path,
    caplog_warnings: pytest.LogCaptureFixture,
    marker: JsonValue,
) -> None:
    assert ask(provider, probe(str(transcript), marker)) is None

    [warning] = warnings(caplog_warnings)
    assert "malformed marker" in warning.getMessage()


@pytest.mark.parametrize(
    "ref",
    [{"path": "session.jsonl"}, ["session.jsonl"], 42, None, ""],
    ids=["dict", "list", "int", "null", "empty"],
)
def test_an_upstream_ref_that_is_not_a_path_gets_no_answer_and_one_warning(
    provider: JsonlTranscriptProvider, caplog_warnings: pytest.LogCaptureFixture, ref: JsonValue
) -> None:
    assert ask(provider, probe(ref)) is None

    [warning] = warnings(caplog_warnings)
    assert "not a path" in warning.getMessage()


# ---------------------------------------------------------------------------------- several probes


def test_several_probes_in_one_call_are_answered_independently(
    provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    busy = tmp_path / "busy.jsonl"
    quiet = tmp_path / "quiet.jsonl"
    gone = tmp_path / "gone.jsonl"
    append(busy, prompt("old"))
    append(quiet, prompt("old"))
    busy_start, quiet_start = marker_at_end(busy), marker_at_end(quiet)
    busy_size = append(busy, prompt("new one"), prompt("new two"))
    probes = [
        probe(str(busy), busy_start, session_key="agent:main:busy"),
        probe(str(quiet), quiet_start, session_key="agent:main:quiet"),
        probe(str(gone), {"offset": 10}, session_key="agent:main:gone"),
        probe(str(busy), {"offset": -5}, session_key="agent:main:malformed"),
        probe(42, None, session_key="agent:main:not-a-path"),
        probe(str(busy), None, session_key="agent:main:from-start"),
    ]

    answers = {answer.session_key: answer for answer in provider.check_upstream_activity(probes)}

    assert set(answers) == {"agent:main:busy", "agent:main:gone", "agent:main:from-start"}
    busy_answer = answers["agent:main:busy"]
    assert isinstance(busy_answer, UpstreamActivity)
    assert (busy_answer.human_turns, offset_of(busy_answer)) == (2, busy_size)
    assert answers["agent:main:gone"] == UpstreamMissing(session_key="agent:main:gone")
    from_start = answers["agent:main:from-start"]
    assert isinstance(from_start, UpstreamActivity)
    assert (from_start.human_turns, offset_of(from_start)) == (3, busy_size)


# ----------------------------------------------------------------------------------- marker_at_end


def test_marker_at_end_skips_history_before_adoption(
    provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    marker = marker_at_end(transcript)
    assert marker == {"offset": transcript.stat().st_size}
    assert marker_at_end(str(transcript)) == marker
    assert ask(provider, probe(str(transcript), marker)) is None

    size = append(transcript, prompt("after adoption"))
    answer = activity(provider, probe(str(transcript), marker))

    assert (answer.human_turns, offset_of(answer)) == (1, size)


def test_marker_at_end_of_an_empty_transcript_is_offset_zero(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.touch()

    assert marker_at_end(path) == {"offset": 0}


def test_marker_at_end_of_a_missing_transcript_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        marker_at_end(tmp_path / "nope.jsonl")


# ------------------------------------------------------------------------------- another format


def test_a_custom_transcript_format_classifies_by_its_own_fields(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    other = TranscriptFormat(
        name="other-agent",
        type_field="kind",
        prompt_type="message",
        message_field="payload",
        content_field="parts",
        text_block_type="input_text",
        excluded_flags=("synthetic",),
        timestamp_field="ts",
    )
    size = append(
        path,
        {"kind": "message", "ts": "2026-11-30T13:00:00+01:00", "payload": {"role": "user", "parts": "hi"}},
        {"kind": "message", "payload": {"role": "user", "parts": [{"type": "input_text", "text": "go"}]}},
        {"kind": "message", "synthetic": True, "payload": {"role": "user", "parts": "injected"}},
        prompt("a Claude Code line is not this format's prompt"),
    )

    answer = activity(JsonlTranscriptProvider(other), probe(str(path)))

    assert (answer.human_turns, offset_of(answer)) == (2, size)
    assert answer.occurred_at is None  # the last counted prompt carries no `ts`
    assert other.prompt_text({"kind": "message", "payload": {"role": "user", "parts": "hi"}}) == "hi"
    assert CLAUDE_CODE.prompt_text(block_prompt("a", "b")) == "a\nb"
