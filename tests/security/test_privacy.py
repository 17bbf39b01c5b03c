"""No message text ever reaches the store (SPEC §3.2, §15.2).

Summaries are short fixed one-line phrases and payloads carry whitelisted metadata only, so the
text a host holds (a chat turn, a prompt typed into an adopted session, the session's own recent
user texts it lends the upstream monitor for self-echo) has no way in. Each test plants a unique
marker in such text, passes it wherever a host could, and then searches every place the store
writes for it: the raw bytes of the SQLite file and its `-wal` and `-shm`, the prune archive, the
JSON Lines export, and the text of every PostgreSQL table (bytea columns as their hex too).
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from claude_transcripts import SESSION_ID, append, assistant, block_prompt, prompt, tool_result
from snapshots import store_state
from stores import FILE_STORES, admin, postgres_url

import sessionwatch
from sessionwatch import Actor, InvalidSignal, Retention, SessionWatch, SignalKind
from sessionwatch.adapters.history.jsonl import export_history
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider, marker_at_end
from sessionwatch.domain.signals import PAYLOAD_KEYS
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
ADOPTED = "agent:main:adopted"
TEXT_KEYS = ("text", "message", "content", "body", "prompt", "input", "reply", "summary", "turn", "messages")
"""Payload keys a host might reach for to carry message text."""


@pytest.fixture
def marker() -> str:
    """A string no store holds unless message text got in."""
    return f"MSG{uuid.uuid4().hex}"


def chat_turn(marker: str) -> str:
    """A human's message as a host holds it: several lines of free text."""
    return f"Hi team, please ship {marker} before the demo.\nThanks!"


def long_line(marker: str) -> str:
    """A message typed on one line: longer than any summary (200)."""
    return " ".join([f"please look at {marker}"] * 12)


@pytest.fixture
def private_store(store_kind: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A store of `store_kind` whose every file (database, archive, export) lives in one directory."""
    files = tmp_path / "files"
    files.mkdir()
    if store_kind == "sqlite":
        yield f"sqlite:///{files / 'state.db'}", files
    else:
        with postgres_url() as url:
            yield url, files


def open_private(url: str, files: Path) -> SessionWatch:
    return sessionwatch.open(
        url, clock=FakeClock(), retention=Retention(max_signals=1, archive=str(files / "pruned.jsonl"))
    )


def postgres_text(url: str) -> str:
    """Every row of every table of the store's schema, as PostgreSQL prints it."""
    from psycopg import sql  # noqa: PLC0415 - the optional extra, needed only with a server

    schema = parse_qs(urlsplit(url).query)["schema"][0]
    conn = admin()
    listing = "SELECT table_name FROM information_schema.tables WHERE table_schema = %s AND table_type = %s"
    tables = conn.execute(listing, (schema, "BASE TABLE")).fetchall()
    rows: list[str] = []
    for (table,) in tables:
        dump = sql.SQL("SELECT t::text FROM {}.{} t").format(
            sql.Identifier(schema), sql.Identifier(str(table))
        )
        rows.extend(str(row[0]) for row in conn.execute(dump))
    assert rows, "the store holds rows: the search below is not vacuous"
    return "\n".join(rows)


def everything_written(url: str, files: Path) -> bytes:
    """The bytes of every file in `files` (database, -wal, -shm, archive, export) and PostgreSQL rows."""
    found = b"".join(path.read_bytes() for path in sorted(files.iterdir()))
    if url.startswith("postgresql"):
        found += postgres_text(url).encode()
    return found


def assert_never_written(markers: Sequence[str], url: str, files: Path) -> None:
    written = everything_written(url, files)
    assert b"goal updated" in written or b"human message via" in written, "the search sees stored text"
    for marker in markers:
        assert marker.encode() not in written
        assert marker.encode().hex().encode() not in written  # a bytea column printed as hex


def finish(watch: SessionWatch, files: Path) -> None:
    """Prune into the archive and export the history, so every place the store writes holds data."""
    assert watch.prune().archived >= 1
    out = io.StringIO()
    export_history(watch.store, out)
    (files / "history.jsonl").write_text(out.getvalue(), encoding="utf-8")


# ------------------------------------------------------------------- text a host passes in


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_message_text_passed_to_any_producer_or_record_is_refused_and_never_stored(
    private_store: tuple[str, Path], marker: str
) -> None:
    url, files = private_store
    turn, line = chat_turn(marker), long_line(marker)
    with open_private(url, files) as watch:
        assert watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1") is not None
        before = store_state(watch)
        refused_by_producers = [
            watch.record_human_message(CHILD, channel=turn),
            watch.record_human_message(CHILD, channel=line),
            watch.record_human_message(CHILD, channel="telegram", run_id=turn),
            watch.record_human_message(CHILD, channel="telegram", dedupe_key=turn),
            watch.record_goal_changed(CHILD, summary=turn),
            watch.record_goal_changed(CHILD, summary=line),
            watch.record_goal_changed(CHILD, summary="goal updated", actor=Actor.human(turn)),
            watch.record_run_terminal(child_key=CHILD, run_id=turn, requester_key=MANAGER, outcome="error"),
            watch.record_compacted(CHILD, operation_id=turn),
            watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id=turn),
        ]
        for summary in (turn, line):
            with pytest.raises(InvalidSignal) as refused:
                watch.record(CHILD, kind="goal_changed", actor=Actor.human(), summary=summary)
            assert refused.value.field == "summary"
        for name in TEXT_KEYS:
            with pytest.raises(InvalidSignal) as refused:
                watch.record(
                    CHILD, kind="human_direct_message", actor=Actor.human(), summary="x", payload={name: turn}
                )
            assert (refused.value.field, name in refused.value.reason) == ("payload", True)
        payloads: list[dict[str, object]] = [{"channel": turn}, {"channel": line * 20}]
        for payload in payloads:
            with pytest.raises(InvalidSignal):
                watch.record(
                    CHILD, kind="human_direct_message", actor=Actor.human(), summary="x", payload=payload
                )

        assert refused_by_producers == [None] * len(refused_by_producers)
        assert store_state(watch) == before
        assert watch.record_goal_changed(CHILD, summary="goal updated", actor=Actor.human()) is not None
        finish(watch, files)
        assert_never_written([marker], url, files)
    assert_never_written([marker], url, files)


@pytest.mark.parametrize("kind", list(SignalKind))
def test_payload_keys_outside_the_kinds_whitelist_are_refused_and_write_nothing(
    watch: SessionWatch, kind: SignalKind
) -> None:
    allowed = PAYLOAD_KEYS.get(kind, frozenset())
    refused_keys = [
        key for key in (*TEXT_KEYS, "channel", "status", "turns", "outcome") if key not in allowed
    ]
    before = store_state(watch)

    for key in refused_keys:
        with pytest.raises(InvalidSignal) as refused:
            watch.record(MANAGER, kind=kind, actor=Actor.system(), summary="x", payload={key: "error"})
        assert refused.value.field == "payload"
        assert repr(key) in refused.value.reason

    assert store_state(watch) == before


def test_the_payload_whitelist_is_the_one_of_the_spec() -> None:
    assert {kind.value: sorted(keys) for kind, keys in PAYLOAD_KEYS.items()} == {
        "human_direct_message": ["channel", "turns"],
        "goal_changed": ["status"],
        "run_failed": ["outcome"],
        "upstream_missing": ["channel"],
    }


def test_the_producers_write_fixed_phrases_whatever_ids_they_are_given(
    watch: SessionWatch, marker: str
) -> None:
    spawn = watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id=f"run-{marker}")
    human = watch.record_human_message(CHILD, channel="telegram", run_id=f"run-{marker}")
    ended = watch.record_run_terminal(
        child_key=CHILD, run_id=f"end-{marker}", requester_key=MANAGER, outcome="timeout"
    )
    compacted = watch.record_compacted(CHILD, operation_id=f"op-{marker}", session_id=f"s-{marker}")
    adopted = watch.record_adopted(CHILD)

    summaries = [s.summary if s is not None else None for s in (spawn, human, ended, compacted, adopted)]
    assert summaries == [
        "child session spawned",
        "human message via telegram",
        "child run timed out",
        "session compacted",
        "session adopted",
    ]
    assert ended is not None
    assert ended.payload == {"outcome": "timeout"}


# ------------------------------------------------------------------- text the monitor reads


class HostTranscripts:
    """The host's `Transcripts` port: the session's own recent user texts, lent for self-echo."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.lent = 0

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> Sequence[str]:
        assert (session_key, agent_id) == (ADOPTED, "main")
        self.lent += 1
        return self.texts[-limit:]


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_prompts_the_upstream_monitor_reads_never_reach_the_store(
    private_store: tuple[str, Path], tmp_path: Path
) -> None:
    url, files = private_store
    typed, echoed, own, replied, tool = (f"MSG{uuid.uuid4().hex}" for _ in range(5))
    transcript = tmp_path / "projects" / "-repo" / f"{SESSION_ID}.jsonl"
    transcript.parent.mkdir(parents=True)
    append(transcript, prompt(f"before adoption {typed}", "2026-11-29T15:00:00.000Z"))
    host = HostTranscripts([f"what the gateway sent: {echoed}", f"older turn {own}"])
    with open_private(url, files) as watch:
        watch.upsert_session(MANAGER)
        watch.link_upstream(
            ADOPTED,
            catalog_id="claude-code",
            host_id="laptop",
            thread_id=SESSION_ID,
            upstream_kind="claude-jsonl",
            upstream_ref=str(transcript),
            marker=marker_at_end(transcript),
        )
        assert watch.watch(MANAGER, ADOPTED)
        append(
            transcript,
            prompt(f"the human typed {typed}\nover two lines", "2026-11-30T11:58:00.000Z"),
            assistant(f"a reply quoting {replied}", "2026-11-30T11:58:05.000Z"),
            tool_result("2026-11-30T11:58:06.000Z"),
            prompt(f"what the gateway sent: {echoed}", "2026-11-30T11:58:30.000Z"),  # self-echo
            block_prompt(f"and one more {tool}", timestamp="2026-11-30T11:59:00.000Z"),
        )

        report = watch.upstream_tick({"claude-code": JsonlTranscriptProvider.claude_code()}, transcripts=host)

        [signal] = report.recorded
        assert (signal.summary, signal.payload) == ("human message via claude-code", {"turns": 2})
        assert host.lent > 0  # the monitor read the texts (it may read them again before it writes)
        assert watch.record_goal_changed(ADOPTED, summary="goal updated") is not None
        finish(watch, files)
        assert_never_written([typed, echoed, own, replied, tool], url, files)
    assert_never_written([typed, echoed, own, replied, tool], url, files)
