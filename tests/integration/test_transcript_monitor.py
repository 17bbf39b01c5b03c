"""The upstream monitor end to end (SPEC §10): a `SessionWatch` on every store, the Claude Code
and Codex transcript providers, and real Claude-Code- or Codex-shaped JSONL written to `tmp_path`.

Each test adopts a session at the end of its transcript (`marker_at_end`), has a watcher watch it,
appends lines to the file as Claude Code would, and runs `upstream_tick` as the monitor does. After
every pass, replaying the event store must rebuild exactly the stored read model.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from claude_transcripts import (
    SESSION_ID,
    append,
    append_bytes,
    assistant,
    block_prompt,
    enqueue,
    line,
    meta,
    prompt,
    queue_operation,
    sidechain,
    summary,
    tool_result,
)
from codex_transcripts import (
    THREAD_ID,
    agents_md,
    assistant_message,
    developer_message,
    environment_context,
    session_meta,
    user_event,
    user_message,
)
from fakes import FakeTranscripts
from transcript_probes import QueueingFormat

import sessionwatch
from sessionwatch import SessionWatch, SignalKind, Transcripts, notice_text
from sessionwatch.adapters.upstream.transcripts import SCAN_CAP, JsonlTranscriptProvider, marker_at_end
from sessionwatch.testing import FakeClock

ADOPTED = "agent:main:adopted"
WATCHER = "agent:main:main"
CATALOG = "claude-code"

# ------------------------------------------------------------------------------------- fixtures


@pytest.fixture
def watch(store_url: str, clock: FakeClock) -> Iterator[SessionWatch]:
    with sessionwatch.open(store_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def provider() -> JsonlTranscriptProvider:
    return JsonlTranscriptProvider.claude_code()


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A transcript with history from before the adoption: prompts, replies and a tool round trip."""
    path = tmp_path / "projects" / "-repo" / f"{SESSION_ID}.jsonl"
    path.parent.mkdir(parents=True)
    append(
        path,
        summary(),
        prompt("an old prompt", "2026-11-29T15:00:00.000Z"),
        assistant("old reply", "2026-11-29T15:00:05.000Z"),
        tool_result("2026-11-29T15:00:06.000Z"),
        prompt("another old prompt", "2026-11-29T15:01:00.000Z"),
    )
    return path


def adopt(watch: SessionWatch, path: Path) -> None:
    """Adopt the session at the transcript's current end and have the watcher watch it."""
    watch.link_upstream(
        ADOPTED,
        catalog_id=CATALOG,
        host_id="laptop",
        thread_id=SESSION_ID,
        upstream_kind="claude-jsonl",
        upstream_ref=str(path),
        marker=marker_at_end(path),
    )
    watch.upsert_session(WATCHER)
    assert watch.watch(WATCHER, ADOPTED)


@pytest.fixture
def adopted(watch: SessionWatch, transcript: Path) -> SessionWatch:
    adopt(watch, transcript)
    return watch


def tick(
    watch: SessionWatch, provider: JsonlTranscriptProvider, transcripts: Transcripts | None = None
) -> sessionwatch.TickReport:
    """One monitor pass, as the monitor runs it; replay agrees with the stored model after each."""
    report = watch.upstream_tick({CATALOG: provider}, transcripts=transcripts)
    assert_audit_clean(watch)
    return report


def offset(watch: SessionWatch, key: str = ADOPTED) -> int:
    link = watch.upstream_link(key)
    assert link is not None
    assert isinstance(link.marker, dict)
    value = link.marker["offset"]
    assert isinstance(value, int)
    return value


def head(watch: SessionWatch, key: str = ADOPTED) -> int:
    return watch.session_status(key).state_version


def kinds(watch: SessionWatch, key: str = ADOPTED) -> list[str]:
    changes = watch.session_status(key, changes_since=0).state_changes
    assert changes is not None
    return [e.kind.value for e in changes.events]


# ------------------------------------------------------------------------------- human prompts


def test_history_before_adoption_is_not_counted_and_a_burst_of_prompts_is_one_signal(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    adopted_at = transcript.stat().st_size
    assert offset(adopted) == adopted_at
    before = head(adopted)

    quiet = tick(adopted, provider)  # only the history exists: nothing is counted
    assert (quiet.probed, quiet.recorded, quiet.advanced) == (1, (), 0)
    assert head(adopted) == before
    assert offset(adopted) == adopted_at
    assert adopted.pending_notices(WATCHER) == []

    size = append(
        transcript,
        prompt("corrige le build, s'il te plaît ✓", "2026-11-30T11:58:00.000Z"),
        assistant("on it", "2026-11-30T11:58:05.000Z"),
        tool_result("2026-11-30T11:58:06.000Z"),
        block_prompt("and run the tests too", timestamp="2026-11-30T11:58:30.000Z"),
        prompt("thanks!", "2026-11-30T11:59:00.000Z"),
    )
    report = tick(adopted, provider)
    assert report.advanced == 1
    assert len(report.recorded) == 1
    signal = report.recorded[0]
    assert signal.kind is SignalKind.HUMAN_DIRECT_MESSAGE
    assert (signal.actor_type, signal.summary, signal.payload) == (
        "human",
        "human message via claude-code",
        {"turns": 3},
    )
    assert signal.occurred_at == datetime(2026, 11, 30, 11, 59, tzinfo=UTC)  # the last prompt's time
    assert signal.dedupe_key is not None
    assert signal.dedupe_key.endswith(f":{adopted_at}-{size}")
    assert offset(adopted) == size
    assert head(adopted) == signal.sequence
    notices = adopted.pending_notices(WATCHER)
    assert len(notices) == 1
    assert notices[0].target == ADOPTED
    assert notices[0].text == notice_text(ADOPTED, before)

    again = tick(adopted, provider)  # no new bytes: nothing recorded, nothing advanced
    assert (again.recorded, again.advanced) == ((), 0)
    assert head(adopted) == signal.sequence
    assert offset(adopted) == size
    assert kinds(adopted) == ["adopted", "human_direct_message"]
    assert len(adopted.pending_notices(WATCHER)) == 1


def test_a_single_appended_prompt_records_a_signal_without_a_turns_payload(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    size = append(transcript, prompt("one more thing", "2026-11-30T11:30:00.000Z"))
    report = tick(adopted, provider)
    assert len(report.recorded) == 1
    assert report.recorded[0].payload is None
    assert report.recorded[0].occurred_at == datetime(2026, 11, 30, 11, 30, tzinfo=UTC)
    assert offset(adopted) == size
    assert len(adopted.pending_notices(WATCHER)) == 1


def test_a_prompt_stamped_outside_the_last_day_is_clamped_into_it(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path, clock: FakeClock
) -> None:
    append(transcript, prompt("from the future", "2026-12-01T09:00:00.000Z"))
    future = tick(adopted, provider).recorded
    assert [s.occurred_at for s in future] == [clock.now()]
    append(transcript, prompt("from long ago", "2026-11-20T09:00:00.000Z"))
    past = tick(adopted, provider).recorded
    assert [s.occurred_at for s in past] == [clock.now() - timedelta(days=1)]


def test_tool_results_replies_meta_and_sidechain_lines_advance_the_marker_only(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    before = head(adopted)
    size = append(
        transcript,
        assistant("let me look"),
        tool_result(),
        meta("Caveat: the messages below were generated by the user while running local commands."),
        sidechain("subagent: search the repo for TODOs"),
        assistant("done"),
        summary(),
    )
    report = tick(adopted, provider)
    assert (report.probed, report.recorded, report.advanced) == (1, (), 1)
    assert offset(adopted) == size
    assert head(adopted) == before
    assert kinds(adopted) == ["adopted"]
    assert adopted.pending_notices(WATCHER) == []
    assert_audit_clean(adopted)


# ---------------------------------------------------------------------------------- missing file


def test_a_deleted_transcript_is_upstream_missing_after_exactly_three_ticks(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    before = head(adopted)
    content = transcript.read_bytes()
    transcript.unlink()
    for _ in range(2):
        report = tick(adopted, provider)
        assert report.missed == (ADOPTED,)
        assert report.missing == ()
        assert adopted.upstream_link(ADOPTED) is not None
        assert head(adopted) == before

    third = tick(adopted, provider)
    assert len(third.missing) == 1
    signal = third.missing[0]
    assert signal.kind is SignalKind.UPSTREAM_MISSING
    assert (signal.actor_type, signal.summary, signal.payload) == (
        "system",
        "upstream missing via claude-code",
        {"channel": "claude-code"},
    )
    assert adopted.upstream_link(ADOPTED) is None
    assert kinds(adopted) == ["adopted", "upstream_missing"]
    assert [n.target for n in adopted.pending_notices(WATCHER)] == [ADOPTED]

    transcript.write_bytes(content)  # the file comes back: the link does not
    append(transcript, prompt("hello again", "2026-11-30T11:59:00.000Z"))
    later = tick(adopted, provider)
    assert (later.probed, later.recorded, later.missing) == (0, (), ())
    assert adopted.upstream_link(ADOPTED) is None
    assert kinds(adopted) == ["adopted", "upstream_missing"]


def test_a_transcript_back_before_the_third_miss_resets_the_streak(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    content = transcript.read_bytes()
    transcript.unlink()
    assert tick(adopted, provider).missed == (ADOPTED,)
    assert tick(adopted, provider).missed == (ADOPTED,)
    transcript.write_bytes(content)
    assert tick(adopted, provider).missed == ()  # nothing new, but not missing either
    transcript.unlink()
    for _ in range(2):
        assert tick(adopted, provider).missing == ()
    assert adopted.upstream_link(ADOPTED) is not None
    assert len(tick(adopted, provider).missing) == 1
    assert adopted.upstream_link(ADOPTED) is None


# ------------------------------------------------------------------------------- scan-cap block


def test_a_line_longer_than_the_scan_cap_blocks_the_link_after_the_prompts_before_it(
    adopted: SessionWatch,
    provider: JsonlTranscriptProvider,
    transcript: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="sessionwatch")
    blocked_at = append(
        transcript,
        prompt("paste this log please", "2026-11-30T11:50:00.000Z"),
        prompt("all of it", "2026-11-30T11:51:00.000Z"),
    )
    huge = assistant("x" * (2 * 1024 * 1024), "2026-11-30T11:52:00.000Z")
    size = append(transcript, huge)
    assert size - blocked_at > 2 * SCAN_CAP - 1

    first = tick(adopted, provider)
    assert [s.payload for s in first.recorded] == [{"turns": 2}]
    assert offset(adopted) == blocked_at
    recorded_head = head(adopted)

    append(transcript, prompt("are you still there?", "2026-11-30T11:55:00.000Z"))
    for _ in range(3):
        caplog.clear()
        report = tick(adopted, provider)
        assert (report.probed, report.recorded, report.advanced) == (1, (), 0)
        assert offset(adopted) == blocked_at
        assert head(adopted) == recorded_head
        assert any("scan cap" in r.getMessage() for r in caplog.records)
    assert adopted.upstream_link(ADOPTED) is not None  # blocked, never missing
    assert kinds(adopted) == ["adopted", "human_direct_message"]


def test_a_backlog_larger_than_the_scan_cap_is_read_across_ticks(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    before = head(adopted)
    text = "y" * (100 * 1024)
    size = append(transcript, *(prompt(f"{i} {text}", f"2026-11-30T11:{i:02}:00.000Z") for i in range(15)))
    assert size - offset(adopted) > SCAN_CAP

    first = tick(adopted, provider)
    assert len(first.recorded) == 1
    partway = offset(adopted)
    assert partway < size
    second = tick(adopted, provider)
    assert len(second.recorded) == 1
    assert offset(adopted) == size
    turns = [s.payload["turns"] if s.payload else 1 for s in (*first.recorded, *second.recorded)]
    assert all(isinstance(t, int) and t > 1 for t in turns)
    assert sum(t for t in turns if isinstance(t, int)) == 15  # every prompt counted once, none twice
    assert kinds(adopted) == ["adopted", "human_direct_message", "human_direct_message"]
    notices = adopted.pending_notices(WATCHER)
    assert [n.text for n in notices] == [notice_text(ADOPTED, before)]  # one notice per pair


# ------------------------------------------------------------------------------- partial lines


def test_a_partially_written_prompt_is_recorded_only_once_its_newline_arrives(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    complete_at = append(transcript, prompt("first, a whole line", "2026-11-30T11:40:00.000Z"))
    pending = line(prompt("then one still being written", "2026-11-30T11:41:00.000Z"))
    append_bytes(transcript, pending[:40])

    first = tick(adopted, provider)
    assert [s.payload for s in first.recorded] == [None]
    assert offset(adopted) == complete_at  # the fragment is not consumed
    after_first = head(adopted)

    append_bytes(transcript, pending[40:-1])  # the whole line, still without its newline
    waiting = tick(adopted, provider)
    assert (waiting.recorded, waiting.advanced) == ((), 0)
    assert offset(adopted) == complete_at
    assert head(adopted) == after_first

    size = append_bytes(transcript, b"\n")
    done = tick(adopted, provider)
    assert len(done.recorded) == 1
    assert done.recorded[0].payload is None
    assert done.recorded[0].occurred_at == datetime(2026, 11, 30, 11, 41, tzinfo=UTC)
    assert offset(adopted) == size
    assert kinds(adopted) == ["adopted", "human_direct_message", "human_direct_message"]


def test_adopting_while_a_line_is_being_written_consumes_its_fragment_as_no_prompt(
    watch: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    being_written = line(prompt("typed before the adoption", "2026-11-30T11:40:00.000Z"))
    append_bytes(transcript, being_written[:30])
    adopt(watch, transcript)
    assert offset(watch) == transcript.stat().st_size

    append_bytes(transcript, being_written[30:])
    size = append(transcript, prompt("typed after the adoption", "2026-11-30T11:41:00.000Z"))
    report = tick(watch, provider)
    assert [s.payload for s in report.recorded] == [None]  # one turn: the fragment is not a prompt
    assert report.recorded[0].occurred_at == datetime(2026, 11, 30, 11, 41, tzinfo=UTC)
    assert offset(watch) == size


# ----------------------------------------------------------------------- truncated or replaced


def test_a_replaced_shorter_transcript_blocks_the_link_until_it_is_unlinked_and_linked_again(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    stuck_at = offset(adopted)
    transcript.write_bytes(line(prompt("a new, shorter file", "2026-11-30T11:40:00.000Z")))
    for _ in range(4):  # no answer: neither activity nor missing
        report = tick(adopted, provider)
        assert (report.recorded, report.advanced, report.missed, report.missing) == ((), 0, (), ())
    assert offset(adopted) == stuck_at
    assert kinds(adopted) == ["adopted"]

    # Re-linking the same source keeps the marker read so far (SPEC §13.1), so it stays blocked.
    adopt(adopted, transcript)
    assert offset(adopted) == stuck_at
    assert append(transcript, prompt("still unseen", "2026-11-30T11:41:00.000Z")) < stuck_at
    assert tick(adopted, provider).recorded == ()

    # Unlinking first lets the new link start at the file's end.
    assert adopted.unlink_upstream(ADOPTED) is not None
    adopt(adopted, transcript)
    assert offset(adopted) == transcript.stat().st_size
    size = append(transcript, prompt("seen at last", "2026-11-30T11:42:00.000Z"))
    assert [s.payload for s in tick(adopted, provider).recorded] == [None]
    assert offset(adopted) == size
    assert kinds(adopted) == ["adopted", "adopted", "human_direct_message"]


# ----------------------------------------------------------------------------------- self-echo


def test_a_prompt_equal_to_the_sessions_own_text_is_self_echo_and_not_recorded(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    transcripts = FakeTranscripts({ADOPTED: ["an older own text", "Deploy  the\n staging   build "]})
    assert isinstance(transcripts, Transcripts)
    before = head(adopted)

    echoed_at = append(transcript, prompt("  Deploy the staging\tbuild", "2026-11-30T11:45:00.000Z"))
    echo = tick(adopted, provider, transcripts)
    assert (echo.recorded, echo.advanced) == ((), 1)
    assert offset(adopted) == echoed_at
    assert head(adopted) == before
    assert adopted.pending_notices(WATCHER) == []
    assert (ADOPTED, "main", 10) in transcripts.calls

    size = append(transcript, prompt("Deploy the production build", "2026-11-30T11:46:00.000Z"))
    human = tick(adopted, provider, transcripts)
    assert [s.payload for s in human.recorded] == [None]
    assert offset(adopted) == size
    assert kinds(adopted) == ["adopted", "human_direct_message"]
    assert len(adopted.pending_notices(WATCHER)) == 1


def test_self_echo_in_a_burst_is_not_counted_among_its_turns(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    transcripts = FakeTranscripts({ADOPTED: ["run the linter"]})
    append(
        transcript,
        prompt("run the linter", "2026-11-30T11:45:00.000Z"),
        prompt("and format the code", "2026-11-30T11:46:00.000Z"),
        prompt("then commit", "2026-11-30T11:47:00.000Z"),
    )
    report = tick(adopted, provider, transcripts)
    assert [s.payload for s in report.recorded] == [{"turns": 2}]


# ------------------------------------------------------------------------ queued prompts, Codex


def test_a_queued_prompt_is_one_signal_across_ticks_and_the_stored_marker_holds_its_position_only(
    adopted: SessionWatch, transcript: Path
) -> None:
    provider = JsonlTranscriptProvider(QueueingFormat())  # a format that counts prompts when queued
    queued_words = "also bump the version"
    queued_at = transcript.stat().st_size
    append(transcript, enqueue(queued_words, "2026-11-30T11:50:00.000Z"))
    first = tick(adopted, provider)
    assert [s.payload for s in first.recorded] == [None]
    link = adopted.upstream_link(ADOPTED)
    assert link is not None
    assert isinstance(link.marker, dict)
    assert link.marker["queued"] == [queued_at]  # a position, stored and read back by the store

    size = append(transcript, queue_operation("dequeue"), prompt(queued_words, "2026-11-30T11:51:00.000Z"))
    second = tick(adopted, provider)
    assert (second.recorded, second.advanced) == ((), 1)
    link = adopted.upstream_link(ADOPTED)
    assert link is not None
    assert link.marker == {"offset": size}
    assert kinds(adopted) == ["adopted", "human_direct_message"]


def test_a_codex_rollout_is_monitored_like_a_claude_code_transcript(
    watch: SessionWatch, tmp_path: Path
) -> None:
    rollout = tmp_path / "sessions" / "2026" / "11" / "30" / f"rollout-2026-11-30T11-50-00-{THREAD_ID}.jsonl"
    rollout.parent.mkdir(parents=True)
    append(rollout, session_meta(), developer_message(), agents_md(), environment_context())
    watch.link_upstream(
        ADOPTED,
        catalog_id="codex",
        host_id="laptop",
        thread_id=THREAD_ID,
        upstream_kind="codex-rollout",
        upstream_ref=str(rollout),
        marker=marker_at_end(rollout),
    )
    watch.upsert_session(WATCHER)
    assert watch.watch(WATCHER, ADOPTED)
    codex = {"codex": JsonlTranscriptProvider.codex()}

    append(
        rollout,
        user_message("add a retry", "2026-11-30T11:55:00.000Z"),
        user_event("add a retry", "2026-11-30T11:55:00.001Z"),
        assistant_message("Added.", "2026-11-30T11:55:30.000Z"),
        user_message("and a test", "2026-11-30T11:56:00.000Z"),
    )
    report = watch.upstream_tick(codex)
    assert_audit_clean(watch)
    [signal] = report.recorded
    assert (signal.summary, signal.payload) == ("human message via codex", {"turns": 2})
    assert signal.occurred_at == datetime(2026, 11, 30, 11, 56, tzinfo=UTC)

    rollout.unlink()
    for _ in range(3):
        watch.upstream_tick(codex)
    assert kinds(watch) == ["adopted", "human_direct_message", "upstream_missing"]
    assert_audit_clean(watch)


# ---------------------------------------------------------------------------------- active runs


def test_an_active_run_holds_the_marker_until_it_ends_then_prompts_are_recorded_once(
    adopted: SessionWatch, provider: JsonlTranscriptProvider, transcript: Path
) -> None:
    at_adoption = offset(adopted)
    before = head(adopted)
    adopted.run_started(ADOPTED, "run-1")
    size = append(
        transcript,
        prompt("while you work: also update the docs", "2026-11-30T11:57:00.000Z"),
        assistant("noted"),
        prompt("and the changelog", "2026-11-30T11:58:00.000Z"),
    )
    for _ in range(2):
        report = tick(adopted, provider)
        assert report.deferred == (ADOPTED,)
        assert (report.probed, report.recorded, report.advanced) == (0, (), 0)
        assert offset(adopted) == at_adoption
        assert head(adopted) == before
        assert adopted.pending_notices(WATCHER) == []

    adopted.run_ended(ADOPTED, "run-1")
    report = tick(adopted, provider)
    assert report.deferred == ()
    assert [s.payload for s in report.recorded] == [{"turns": 2}]
    assert offset(adopted) == size

    again = tick(adopted, provider)
    assert (again.recorded, again.advanced) == ((), 0)
    assert kinds(adopted) == ["adopted", "human_direct_message"]
    assert len(adopted.pending_notices(WATCHER)) == 1


# ------------------------------------------------------------------------------------- replay


def test_replaying_the_event_store_rebuilds_the_read_model_after_a_monitor_scenario(
    watch: SessionWatch, provider: JsonlTranscriptProvider, tmp_path: Path
) -> None:
    other = "agent:main:second"
    first_path = tmp_path / "first.jsonl"
    second_path = tmp_path / "second.jsonl"
    append(first_path, prompt("history", "2026-11-29T13:00:00.000Z"))
    append(second_path, prompt("history too", "2026-11-29T13:00:00.000Z"))
    adopt(watch, first_path)
    watch.link_upstream(
        other,
        catalog_id=CATALOG,
        host_id="laptop",
        thread_id="second",
        upstream_kind="claude-jsonl",
        upstream_ref=str(second_path),
        marker=marker_at_end(second_path),
    )
    assert watch.watch(WATCHER, other)
    transcripts = FakeTranscripts({ADOPTED: ["my own words"]})

    append(first_path, prompt("hi", "2026-11-30T11:00:00.000Z"), prompt("there", "2026-11-30T11:01:00.000Z"))
    append(second_path, assistant("thinking"), tool_result())
    tick(watch, provider, transcripts)
    watch.drain(WATCHER)
    append(first_path, prompt("my  own words", "2026-11-30T11:02:00.000Z"))
    append(second_path, prompt("a human on the second", "2026-11-30T11:03:00.000Z"))
    watch.run_started(ADOPTED, "run-1")
    tick(watch, provider, transcripts)
    watch.run_ended(ADOPTED, "run-1")
    tick(watch, provider, transcripts)
    second_path.unlink()
    for _ in range(3):
        tick(watch, provider, transcripts)

    assert kinds(watch) == ["adopted", "human_direct_message"]
    assert kinds(watch, other) == ["adopted", "human_direct_message", "upstream_missing"]
    assert watch.upstream_link(ADOPTED) is not None
    assert watch.upstream_link(other) is None
    assert [n.target for n in watch.pending_notices(WATCHER)] == [other]
    assert_audit_clean(watch)
