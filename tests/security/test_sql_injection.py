"""SQL metacharacters through every string field, on SQLite and PostgreSQL (SPEC §15.2).

Quotes, statement terminators, comments, backslashes and every placeholder syntax (`?`, `%s`, `$1`,
`:name`) go through keys, agent ids, channels, actors, run ids, dedupe keys, summaries, payload
values, session registry fields, upstream links and command-line arguments. Each is either refused
with a typed error (a NUL, which no stored text may hold) or stored verbatim: it reads back
byte-identical through the API and in the raw rows, and afterwards every table is still there and
the audit rebuilds exactly the stored read models.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from auditing import assert_audit_clean
from snapshots import store_state
from stores import FILE_STORES, admin

import sessionwatch
from sessionwatch import (
    Actor,
    InvalidQuery,
    InvalidSignal,
    InvalidStoreUrl,
    SessionRow,
    SessionWatch,
    UnknownSession,
    notice_text,
)
from sessionwatch.cli.cli import main
from sessionwatch.domain.keys import normalize_agent_id

INJECTIONS = (
    "'; DROP TABLE sw_signals; --",
    '"; DROP TABLE sw_sessions; --',
    "x' OR '1'='1",
    "Robert'); DROP TABLE stored_events;--",
    "back\\slash \\' \\\" \\\\ trailing\\",
    "%s %(name)s %% %d",
    "$1 $2 $$ $tag$ dollar",
    "? ?1 ?NNN :name @p",
    "-- comment /* block */ #hash",
    "'; SELECT pg_sleep(10); --",
    "E'\\047' U&'\\0041'",
    "';ATTACH DATABASE '/tmp/pwn.db' AS pwn;--",
    "'||(SELECT sqlite_version())||'",
    "\\x00 \\u0000 %00",  # the text of a NUL, not a NUL
    "\u02bc\uff07\u2018\u2019 look-alike quotes",
)
STORE_KINDS = pytest.mark.parametrize("store_kind", FILE_STORES)
MAIN = "agent:main:main"


def schema_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["schema"][0]


def raw_rows(
    store_kind: str, url: str, query: str, params: tuple[object, ...] = ()
) -> list[tuple[object, ...]]:
    """Rows read straight from the store's tables, around sessionwatch (`?` placeholders)."""
    if store_kind == "sqlite":
        path = url.removeprefix("sqlite:///")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as raw:
            rows = raw.execute(query, params).fetchall()
        raw.close()
        return [tuple(row) for row in rows]
    conn = admin()
    with conn.transaction():
        conn.execute(f"SET LOCAL search_path TO {schema_of(url)}")
        return [tuple(row) for row in conn.execute(query.replace("?", "%s"), params).fetchall()]


def table_names(store_kind: str, url: str) -> list[object]:
    if store_kind == "sqlite":
        return [row[0] for row in raw_rows(store_kind, url, "SELECT name FROM sqlite_master ORDER BY name")]
    query = "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name"
    return [row[0] for row in raw_rows(store_kind, url, query, (schema_of(url),))]


def agent_id_from(text: str) -> str:
    """The injection as an agent id: no `:` and no surrounding spaces (SPEC §13.1)."""
    return text.replace(":", "").strip()


@pytest.fixture
def tables(store_kind: str, store_url: str, watch: SessionWatch) -> list[object]:
    """The store's tables once it is open (before any injection)."""
    assert watch.store.last_sequence() == 0
    found = table_names(store_kind, store_url)
    assert {"stored_events", "sw_signals", "sw_sessions", "sw_cursors"} <= set(found)
    return found


@STORE_KINDS
@pytest.mark.parametrize("text", INJECTIONS)
def test_sql_in_every_signal_field_is_stored_verbatim_and_read_back_byte_identical(
    watch: SessionWatch, store_kind: str, store_url: str, tables: list[object], text: str
) -> None:
    key, watcher = f"agent:main:{text}", f"agent:ops:{text}"
    watch.upsert_session(watcher)
    entry = watch.upsert_session(
        key, session_id=text, kind=text, spawned_by=watcher, parent_session_key=watcher
    )
    assert watch.watch(watcher, key)
    signal = watch.record(
        key,
        kind="human_direct_message",
        actor=Actor.human(text),
        summary=text,
        payload={"channel": text, "turns": 2},
        run_id=text,
        dedupe_key=f"dedupe:{text}",
    )
    again = watch.record(
        key, kind="human_direct_message", actor=Actor.human(), summary="other", dedupe_key=f"dedupe:{text}"
    )
    human = watch.record_human_message(key, channel=text, run_id=f"run:{text}")
    goal = watch.record_goal_changed(key, summary=text, actor=Actor.agent(MAIN))

    assert (entry.session_key, entry.session_id, entry.kind, entry.spawned_by) == (key, text, text, watcher)
    assert (signal.session_key, signal.summary, signal.actor_id, signal.run_id) == (key, text, text, text)
    assert (signal.payload, signal.dedupe_key) == ({"channel": text, "turns": 2}, f"dedupe:{text}")
    assert again == signal
    assert human is not None
    assert human.summary == f"human message via {text.strip()}"
    assert goal is not None
    assert goal.summary == text
    status = watch.session_status(key, changes_since=0)
    assert status.state_changes is not None
    events = status.state_changes.events
    assert [(e.sequence, e.summary, e.actor_id, e.run_id) for e in events] == [
        (signal.sequence, text, text, text),
        (human.sequence, human.summary, None, f"run:{text}"),
        (goal.sequence, text, MAIN, None),
    ]
    assert events[0].payload == {"channel": text, "turns": 2}
    [notice] = watch.pending_notices(watcher)
    assert (notice.target, notice.text) == (key, notice_text(key, 0))
    assert SessionRow(session_key=key, agent_id="main", kind=text, state_version=goal.sequence) in (
        watch.sessions_list(agent_id="main")
    )
    query = "SELECT session_key, summary, actor_id, run_id, dedupe_key FROM sw_signals WHERE sequence = ?"
    assert raw_rows(store_kind, store_url, query, (signal.sequence,)) == [
        (key, text, text, text, f"dedupe:{text}")
    ]
    assert table_names(store_kind, store_url) == tables
    assert_audit_clean(watch)


@STORE_KINDS
@pytest.mark.parametrize("text", INJECTIONS)
def test_sql_in_bare_keys_agent_ids_watchers_and_upstream_links_is_stored_verbatim(
    watch: SessionWatch, store_kind: str, store_url: str, tables: list[object], text: str
) -> None:
    agent = agent_id_from(text)
    watcher = f"agent:{agent}:{text}"
    watch.upsert_session(watcher)
    recorded = watch.record("global", agent_id=agent, kind="goal_changed", actor=Actor.system(), summary=text)
    assert watch.watch(watcher, "global", target_agent_id="main") is True
    link = watch.link_upstream(
        f"agent:{agent}:{text}",
        catalog_id=text,
        host_id=text,
        thread_id=text,
        upstream_kind=text,
        upstream_ref={"path": text},
        marker={"offset": 0, "note": text},
    )
    doomed = f"agent:main:gone {text}"
    watch.record(doomed, kind="compacted", actor=Actor.system(), summary="session compacted", run_id=text)
    watch.delete_session(doomed)

    assert (recorded.session_key, recorded.agent_id, recorded.summary) == ("global", agent, text)
    assert watch.session_status("global", agent_id=agent).state_version == recorded.sequence
    assert watch.cursor(watcher, "global", target_agent_id="main") is not None
    assert (link.catalog_id, link.host_id, link.thread_id, link.upstream_kind) == (text, text, text, text)
    stored = watch.upstream_link(f"agent:{agent}:{text}")
    assert stored is not None
    assert (stored.upstream_ref, stored.marker) == ({"path": text}, {"offset": 0, "note": text})
    with pytest.raises(UnknownSession):
        watch.session_status(doomed)
    assert watch.unwatch(watcher, "global", target_agent_id="main") is True
    # a bare key's agent id is stored as given; a key's own is normalized, the key kept verbatim
    listed = {(row.session_key, row.agent_id) for row in watch.sessions_list()}
    assert listed == {("global", agent), (watcher, normalize_agent_id(agent))}
    query = "SELECT agent_id, summary FROM sw_signals WHERE sequence = ?"
    assert raw_rows(store_kind, store_url, query, (recorded.sequence,)) == [(agent, text)]
    assert table_names(store_kind, store_url) == tables
    assert_audit_clean(watch)


@STORE_KINDS
def test_a_nul_is_refused_in_every_field_with_a_typed_error_naming_it(
    watch: SessionWatch, store_kind: str, store_url: str, tables: list[object]
) -> None:
    nul = "x'\x00; DROP TABLE sw_signals; --"
    base = {"kind": "goal_changed", "actor": Actor.system(), "summary": "goal updated"}
    record: Callable[..., object] = watch.record
    attempts: list[tuple[str, Callable[[], object]]] = [
        ("session_key", lambda: record(f"agent:main:{nul}", **base)),
        ("agent_id", lambda: record("global", agent_id=nul, **base)),
        ("summary", lambda: record(MAIN, **{**base, "summary": nul})),
        ("run_id", lambda: record(MAIN, run_id=nul, **base)),
        ("dedupe_key", lambda: record(MAIN, dedupe_key=nul, **base)),
        ("actor_id", lambda: record(MAIN, **{**base, "actor": Actor.human(nul)})),
        ("payload", lambda: record(MAIN, **{**base, "payload": {"status": nul}})),
        ("watchers", lambda: record(MAIN, watchers=[f"agent:main:{nul}"], **base)),
        ("session_id", lambda: watch.upsert_session(MAIN, session_id=nul)),
        ("spawned_by", lambda: watch.upsert_session(MAIN, spawned_by=nul)),
        ("watcher_key", lambda: watch.watch(nul, MAIN)),
        (
            "catalog_id",
            lambda: watch.link_upstream(
                MAIN,
                catalog_id=nul,
                host_id="h",
                thread_id="t",
                upstream_kind="k",
                upstream_ref="r",
                marker=None,
            ),
        ),
    ]
    before = store_state(watch)
    for field, attempt in attempts:
        with pytest.raises(InvalidSignal) as raised:
            attempt()
        assert raised.value.field == field
    for field, query in (
        ("session_key", lambda: watch.session_status(nul)),
        ("watcher_key", lambda: watch.drain(nul)),
    ):
        with pytest.raises(InvalidQuery) as refused:
            query()
        assert refused.value.field == field
    assert store_state(watch) == before
    assert table_names(store_kind, store_url) == tables


@STORE_KINDS
@pytest.mark.parametrize("text", INJECTIONS)
def test_sql_in_command_line_arguments_is_stored_verbatim(
    capsys: pytest.CaptureFixture[str], store_kind: str, store_url: str, tables: list[object], text: str
) -> None:
    key, watcher, agent = f"agent:main:{text}", f"agent:ops:{text}", agent_id_from(text)

    def cli(*argv: str) -> object:
        code = main(["--json", "--db", store_url, *argv])
        captured = capsys.readouterr()
        assert (code, captured.err) == (0, ""), captured.err
        return json.loads(captured.out)

    recorded = cli(
        "record",
        f"--summary={text}",
        f"--run-id={text}",
        f"--dedupe-key=d:{text}",
        f"--actor=agent:{watcher}",
        f"--payload={json.dumps({'status': text})}",
        f"--watcher={watcher}",
        "--",
        "goal_changed",
        key,
    )
    bare = cli("record", f"--summary={text}", f"--agent={agent}", "--", "compacted", "global")
    status = cli("status", "--since=0", "--", key)
    with sessionwatch.open(store_url, sweep_on_open=False) as watch:
        watch.upsert_session(watcher)  # `notices` refuses a watcher the store knows nothing of
    notices = cli("notices", "--", watcher)
    listed = cli("list", f"--agent={agent}")

    assert isinstance(recorded, dict)
    assert (recorded["sessionKey"], recorded["summary"], recorded["runId"]) == (key, text, text)
    assert (recorded["actorId"], recorded["dedupeKey"]) == (watcher, f"d:{text}")
    assert isinstance(bare, dict)
    assert (bare["sessionKey"], bare["agentId"], bare["summary"]) == ("global", agent, text)
    assert isinstance(status, dict)
    assert [(e["summary"], e["runId"]) for e in status["stateChanges"]["events"]] == [(text, text)]
    assert notices == []  # the watcher acted itself: no self-notice (SPEC §6.1)
    assert listed == [
        {"sessionKey": "global", "agentId": agent, "kind": "other", "stateVersion": bare["sequence"]}
    ]
    assert table_names(store_kind, store_url) == tables
    with sessionwatch.open(store_url, sweep_on_open=False) as watch:
        assert_audit_clean(watch)


@pytest.mark.parametrize(
    "schema",
    ["x;drop", 'x"y', "public; DROP SCHEMA public CASCADE", "x'--", "Sessionwatch", "sw$1", "a" * 64],
)
def test_a_schema_name_is_an_identifier_or_the_url_is_refused(schema: str) -> None:
    with pytest.raises(InvalidStoreUrl, match="schema"):
        sessionwatch.open(f"postgresql://127.0.0.1:1/db?schema={schema}")


def test_sql_in_a_sqlite_path_is_only_a_file_name(tmp_path: Path) -> None:
    name = "x'; DROP TABLE sw_signals; --.db"
    with sessionwatch.open(f"sqlite:///{tmp_path / name}") as watch:
        watch.record(MAIN, kind="goal_changed", actor=Actor.system(), summary="goal created")
        assert_audit_clean(watch)

    assert (tmp_path / name).is_file()
