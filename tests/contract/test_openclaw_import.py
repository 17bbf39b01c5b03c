"""`import-openclaw` (SPEC §14, §16, Appendix A): a reference-gateway state database, carried exactly.

The reference database is built with plain `sqlite3` in the reference's own schema, with pruned
history (rows deleted below each session's watermark, as its prune does), pending and acknowledged
cursors, a bare target key and an ambiguous one; then it is imported into every store kind.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from reference_gateway import REFERENCE_SCHEMA
from stores import FILE_STORES

import sessionwatch
from sessionwatch import Actor, SessionWatch
from sessionwatch.adapters.history.openclaw import OpenclawImportError, import_openclaw
from sessionwatch.cli.cli import main
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
WORKER = "agent:ops:worker"
NOW_MS = 1_796_040_000_000

TIMEOUT = '{"outcome":"timeout","x":1}'  # "x" is not on sessionwatch's whitelist
INSERT_ROW = (
    "INSERT INTO session_state_events (sequence, dedupe_key, session_key, session_id, agent_id,"
    " kind, actor_type, actor_id, run_id, occurred_at, summary, payload_json)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)


# Rows in sequence order: session key, agent id, kind, actor type and id, summary, payload, dedupe key.
ROWS = [
    (CHILD, "main", "child_spawned", "agent", MANAGER, "child session spawned", None, "child-spawned:r1"),
    (CHILD, "main", "human_direct_message", "human", None, "human message via telegram", None, None),
    ("global", "main", "goal_changed", "system", None, "goal created", '{"status":"active"}', None),
    (CHILD, "main", "human_direct_message", "human", None, "human message via telegram", '{"turns":2}', None),
    (WORKER, "ops", "goal_changed", "agent", MANAGER, "goal updated", None, None),
    (
        CHILD,
        "main",
        "run_failed",
        "system",
        None,
        "child run timed out",
        '{"outcome":"timeout","x":1}',
        "run-terminal:r1",
    ),
    ("global", "main", "human_direct_message", "human", None, "human message via slack", "[1, 2]", None),
    (CHILD, "main", "goal_changed", "human", None, "goal updated", None, None),
    ("shared", "main", "adopted", "system", None, "session adopted", None, None),
    ("shared", "ops", "adopted", "system", None, "session adopted", None, None),
]
PRUNED = {1, 2, 3}  # the reference pruned these: watermarks child 2, global 3
# Cursors: watcher, target key, then L, N and M.
CURSORS = [
    (MANAGER, CHILD, 4, 8, 8),  # a pending notice (changesSince 4)
    (MANAGER, WORKER, 5, 5, 5),  # acknowledged
    ("agent:ops:main", "global", 3, 7, 7),  # bare target, one head: resolved to agent main
    (MANAGER, "shared", 0, 0, 0),  # bare target with two heads: ambiguous, skipped
    (MANAGER, "nobody", 0, 0, 0),  # bare target without a head: unresolved, skipped
]
HEADS = {
    (CHILD, "main"): (8, 2),
    ("global", "main"): (7, 3),
    (WORKER, "ops"): (5, 0),
    ("shared", "main"): (9, 0),
    ("shared", "ops"): (10, 0),
}
COUNTER = 12  # the reference allocated 11 and 12 to rows it later deleted with their session


def build_reference(path: Path) -> Path:
    with sqlite3.connect(path) as raw:
        raw.executescript(REFERENCE_SCHEMA)
        for n, (key, agent, kind, actor_type, actor_id, summary, payload, dedupe) in enumerate(ROWS, 1):
            occurred = NOW_MS - 60_000 + n
            values = (
                n,
                dedupe,
                key,
                "sid-1",
                agent,
                kind,
                actor_type,
                actor_id,
                None,
                occurred,
                summary,
                payload,
            )
            raw.execute(INSERT_ROW, values)
        raw.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'session_state_events'", (COUNTER,))
        raw.execute(f"DELETE FROM session_state_events WHERE sequence IN ({','.join(map(str, PRUNED))})")
        for (key, agent), (head, watermark) in HEADS.items():
            raw.execute(
                "INSERT INTO session_state_heads VALUES (?,?,?,?,?)", (key, agent, head, watermark, NOW_MS)
            )
        for watcher, target, last, notified, material in CURSORS:
            raw.execute(
                "INSERT INTO session_watch_cursors VALUES (?,?,?,?,?,?,?,?)",
                (watcher, target, last, notified, material, NOW_MS, None, "explicit"),
            )
    return path


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    return build_reference(tmp_path / "openclaw-state.db")


@pytest.fixture
def watch(store_url: str) -> Iterator[SessionWatch]:
    with sessionwatch.open(store_url, clock=FakeClock(), sweep_on_open=False) as opened:
        yield opened


def test_heads_watermarks_and_cursors_are_carried_exactly(watch: SessionWatch, reference: Path) -> None:
    report = import_openclaw(watch.store, reference, now_ms=NOW_MS)
    assert (report.signals, report.cursors, report.sequence) == (len(ROWS) - len(PRUNED), 3, COUNTER)
    assert report.ambiguous_cursors == (f"{MANAGER} -> shared",)
    assert report.unresolved_cursors == (f"{MANAGER} -> nobody",)
    assert report.payload_keys_dropped == 1  # run_failed's "x"
    for (key, agent), (head, watermark) in HEADS.items():
        status = watch.session_status(key, changes_since=0, agent_id=agent)
        assert status.state_version == head
        changes = status.state_changes
        assert changes is not None
        assert changes.history_gap is (watermark > 0)
        state = watch.store.session(SessionIdentity(key, agent))
        assert state is not None
        assert state.pruned_through == watermark
        expected = [
            n for n, row in enumerate(ROWS, 1) if (row[0], row[1]) == (key, agent) and n not in PRUNED
        ]
        assert [e.sequence for e in changes.events] == expected
    positions = {
        (c.watcher, c.target_key, c.target_agent_id): (c.last_seen, c.notified, c.material)
        for c in watch.store.read_model().all_cursors()
    }
    assert positions == {
        (MANAGER, CHILD, "main"): (4, 8, 8),
        (MANAGER, WORKER, "ops"): (5, 5, 5),
        ("agent:ops:main", "global", "main"): (3, 7, 7),
    }
    assert [(n.target, n.last_seen) for n in watch.pending_notices(MANAGER)] == [(CHILD, 4)]
    assert [(n.target, n.last_seen) for n in watch.pending_notices("agent:ops:main")] == [("global", 3)]
    assert_audit_clean(watch)


def test_payloads_are_whitelisted_and_non_objects_ignored(watch: SessionWatch, reference: Path) -> None:
    import_openclaw(watch.store, reference, now_ms=NOW_MS)
    child = watch.session_status(CHILD, changes_since=2).to_json()["stateChanges"]["events"]
    assert {e["sequence"]: e.get("payload") for e in child} == {
        4: {"turns": 2},
        6: {"outcome": "timeout"},
        8: None,
    }
    glob = watch.session_status("global", changes_since=3, agent_id="main").to_json()["stateChanges"][
        "events"
    ]
    assert [(e["sequence"], "payload" in e) for e in glob] == [(7, False)]


def test_the_imported_store_carries_on_above_the_reference_counter(
    watch: SessionWatch, reference: Path
) -> None:
    import_openclaw(watch.store, reference, now_ms=NOW_MS)
    after = watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal updated")
    assert after.sequence == COUNTER + 1
    again = watch.record(
        CHILD,
        kind="run_failed",
        actor=Actor.system(),
        summary="x",
        payload={"outcome": "error"},
        dedupe_key="run-terminal:r1",
    )
    assert again.sequence == 6  # the reference's dedupe key still dedupes
    assert [(n.target, n.last_seen) for n in watch.drain(MANAGER)] == [(CHILD, 4)]
    assert watch.cursor(MANAGER, CHILD) is not None
    assert_audit_clean(watch)


def test_a_broken_reference_row_writes_nothing(watch: SessionWatch, tmp_path: Path) -> None:
    broken = build_reference(tmp_path / "broken.db")
    with sqlite3.connect(broken) as raw:
        raw.execute("UPDATE session_state_events SET kind = 'telepathy' WHERE sequence = 5")
    with pytest.raises(OpenclawImportError, match="sequence 5"):
        import_openclaw(watch.store, broken, now_ms=NOW_MS)
    assert watch.sessions_list() == []
    assert watch.store.stored_event_count() == 0


def test_a_created_row_is_imported_as_the_created_kind(watch: SessionWatch, tmp_path: Path) -> None:
    source = build_reference(tmp_path / "created.db")
    with sqlite3.connect(source) as raw:
        raw.execute(
            "UPDATE session_state_events SET kind = 'created', summary = 'session created',"
            " actor_type = 'system', actor_id = NULL WHERE sequence = 5"
        )
    report = import_openclaw(watch.store, source, now_ms=NOW_MS)
    assert report.signals == len(ROWS) - len(PRUNED)
    status = watch.session_status(WORKER, changes_since=0)
    assert status.state_changes is not None
    assert [(c.sequence, c.kind, c.summary) for c in status.state_changes.events] == [
        (5, "created", "session created")
    ]
    assert_audit_clean(watch)


def test_a_missing_or_foreign_file_is_refused(watch: SessionWatch, tmp_path: Path) -> None:
    with pytest.raises(OpenclawImportError, match="no reference database"):
        import_openclaw(watch.store, tmp_path / "absent.db", now_ms=NOW_MS)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as raw:
        raw.execute("CREATE TABLE t (x)")
    with pytest.raises(OpenclawImportError, match="cannot read"):
        import_openclaw(watch.store, foreign, now_ms=NOW_MS)


def test_a_store_with_history_is_refused(watch: SessionWatch, reference: Path) -> None:
    watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal created")
    with pytest.raises(OpenclawImportError, match="already holds history"):
        import_openclaw(watch.store, reference, now_ms=NOW_MS)


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_the_command_imports_then_audits_clean(
    store_url: str, reference: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import-openclaw", str(reference), "--db", store_url, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["sequence"] == COUNTER
    assert printed["ambiguousCursors"] == [f"{MANAGER} -> shared"]
    assert main(["audit", "--db", store_url]) == 0
    assert capsys.readouterr().out.startswith("audit: ok: ")
    assert main(["import-openclaw", str(reference), "--db", store_url]) == 2
    assert "already holds history" in capsys.readouterr().err


# Rows the strict API would refuse one payload value of, each after the reference's counter.
REFUSED_VALUES = [
    (CHILD, "human_direct_message", "human", "human message via telegram", '{"turns":0}'),
    (CHILD, "human_direct_message", "human", "human message via slack", '{"turns":2.5,"channel":"slack"}'),
    (WORKER, "goal_changed", "system", "goal updated", '{"status":3}'),
    (CHILD, "run_failed", "system", "child run failed", '{"outcome":"ok"}'),
]
SELF_WATCHES = [(CHILD, CHILD, 8, 8, 8), (MANAGER, MANAGER, 0, 0, 0)]


def build_flawed_reference(path: Path) -> Path:
    """The reference database plus what its own code also writes: self-watch cursors, odd payloads."""
    build_reference(path)
    with sqlite3.connect(path) as raw:
        for n, (key, kind, actor_type, summary, payload) in enumerate(REFUSED_VALUES, COUNTER + 1):
            agent = key.split(":")[1]
            values = (n, None, key, "sid-1", agent, kind, actor_type, None, None, NOW_MS, summary, payload)
            raw.execute(INSERT_ROW, values)
            raw.execute(
                "UPDATE session_state_heads SET last_sequence = ? WHERE session_key = ? AND agent_id = ?",
                (n, key, agent),
            )
        for watcher, target, last, notified, material in SELF_WATCHES:
            raw.execute(
                "INSERT INTO session_watch_cursors VALUES (?,?,?,?,?,?,?,?)",
                (watcher, target, last, notified, material, NOW_MS, None, "explicit"),
            )
    return path


def test_self_watch_cursors_and_refused_payload_values_are_reported_and_every_row_kept(
    watch: SessionWatch, tmp_path: Path
) -> None:
    report = import_openclaw(watch.store, build_flawed_reference(tmp_path / "flawed.db"), now_ms=NOW_MS)

    assert report.self_watch_cursors == (f"{MANAGER} -> {MANAGER}", f"{CHILD} -> {CHILD}")
    assert report.payload_values_dropped == 4  # turns 0, turns 2.5, a numeric status, outcome "ok"
    assert report.payload_keys_dropped == 1  # run_failed's "x", as before
    assert report.signals == len(ROWS) - len(PRUNED) + len(REFUSED_VALUES)
    assert report.cursors == 3  # the self-watches are not carried over
    first = COUNTER + 1
    events = watch.session_status(CHILD, changes_since=first - 1).to_json()["stateChanges"]["events"]
    assert {e["sequence"]: e.get("payload") for e in events} == {
        first: None,
        first + 1: {"channel": "slack"},  # the refused turns went, the channel stayed
        first + 3: None,
    }
    assert watch.cursor(CHILD, CHILD) is None
    assert watch.cursor(MANAGER, MANAGER) is None


def test_after_importing_self_watches_a_record_on_every_session_audits_clean(
    watch: SessionWatch, tmp_path: Path
) -> None:
    import_openclaw(watch.store, build_flawed_reference(tmp_path / "flawed.db"), now_ms=NOW_MS)
    rows = watch.sessions_list()
    assert {(r.session_key, r.agent_id) for r in rows} >= {(CHILD, "main"), (MANAGER, "main")}

    for row in rows:
        watch.record(
            row.session_key,
            kind="goal_changed",
            actor=Actor.human(),
            summary="goal updated",
            agent_id=row.agent_id,
        )

    assert watch.pending_notices(CHILD) == []  # a session never notifies itself
    assert [n.target for n in watch.pending_notices(MANAGER)] == [CHILD, WORKER]
    assert_audit_clean(watch)


def test_the_command_lists_the_self_watch_cursors_it_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flawed = build_flawed_reference(tmp_path / "flawed.db")
    assert main(["import-openclaw", str(flawed), "--db", f"sqlite:///{tmp_path / 'new.db'}"]) == 0
    out = capsys.readouterr().out
    assert "1 payload keys and 4 refused payload values dropped" in out
    assert f"skipped cursor (a session watching itself): {CHILD} -> {CHILD}" in out


# ------------------------------------------------------------------------------ the later columns


def build_later_reference(path: Path) -> Path:
    """A reference whose cursors carry the later columns: an ambient group watch, and store paths."""
    build_reference(path)
    with sqlite3.connect(path) as raw:
        raw.execute(
            "UPDATE session_watch_cursors SET provenance = 'ambient-group', watcher_store_path = ?"
            " WHERE watcher_session_key = ? AND target_session_key = ?",
            ("/var/openclaw/agents/main/sessions.json", MANAGER, CHILD),
        )
        raw.execute(
            "UPDATE session_watch_cursors SET watcher_store_path = ? WHERE watcher_session_key = ?",
            ("/var/openclaw/agents/ops/sessions.json", "agent:ops:main"),
        )
    return path


def test_ambient_cursors_stay_ambient_and_the_store_paths_are_reported_and_ignored(
    watch: SessionWatch, tmp_path: Path
) -> None:
    report = import_openclaw(watch.store, build_later_reference(tmp_path / "later.db"), now_ms=NOW_MS)
    assert report.ambient_cursors == 1
    assert report.watcher_store_paths == (
        "/var/openclaw/agents/main/sessions.json",
        "/var/openclaw/agents/ops/sessions.json",
    )
    ambient = watch.cursor(MANAGER, CHILD)
    assert ambient is not None
    assert (ambient.provenance, ambient.last_seen, ambient.notified) == ("ambient", 4, 8)
    explicit = watch.cursor(MANAGER, WORKER)
    assert explicit is not None
    assert explicit.provenance == "explicit"
    assert [(n.target, n.provenance) for n in watch.pending_notices(MANAGER)] == [(CHILD, "ambient")]
    assert_audit_clean(watch)


def test_a_reference_without_the_later_columns_imports_every_cursor_as_explicit(
    watch: SessionWatch, tmp_path: Path
) -> None:
    older = build_reference(tmp_path / "older.db")
    with sqlite3.connect(older) as raw:
        raw.execute("ALTER TABLE session_watch_cursors DROP COLUMN provenance")
        raw.execute("ALTER TABLE session_watch_cursors DROP COLUMN watcher_store_path")
    report = import_openclaw(watch.store, older, now_ms=NOW_MS)
    assert (report.cursors, report.ambient_cursors, report.watcher_store_paths) == (3, 0, ())
    assert {c.provenance for c in watch.watched_by(MANAGER)} == {"explicit"}
    assert_audit_clean(watch)


def test_the_command_reports_ambient_cursors_and_the_store_paths_it_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    later = build_later_reference(tmp_path / "later.db")
    assert main(["import-openclaw", str(later), "--db", f"sqlite:///{tmp_path / 'new.db'}"]) == 0
    out = capsys.readouterr().out
    assert "1 ambient cursors kept ambient (their notices never wake)" in out
    ignored = "ignored watcher store path (one store holds every cursor here):"
    assert f"{ignored} /var/openclaw/agents/ops/sessions.json" in out
