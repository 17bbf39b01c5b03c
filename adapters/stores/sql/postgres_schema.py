"""The PostgreSQL schema of sessionwatch: the SQLite store's tables in PostgreSQL syntax (ADR-0009).

`stored_events` has exactly the shape of eventsourcing's `PostgresApplicationRecorder` table
(`notification_id bigserial`, never reused), so eventsourcing's own recorder can read it. The read
models are the SQLite ones; rows with `notified > last_seen` are the pending-notice view.
Key columns use the "C" collation: ordered by code point, like the memory and SQLite stores.
Every statement runs with `search_path` set to the store's schema, so no name here is qualified.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from sessionwatch.adapters.stores.sql.agent_ids import move_stored_agent_ids
from sessionwatch.adapters.stores.sql.migrate import MigrationStep

Row: TypeAlias = Sequence[Any]
"""One row as psycopg's tuple row factory returns it."""

SCHEMA_VERSION = 5
EVENTS_TABLE = "stored_events"
WAKE_CHANNEL = "sessionwatch_wake"
"""The NOTIFY channel of cross-process wakes; payloads name their schema."""

KEY = 'TEXT COLLATE "C" NOT NULL'

# ---- digest table (ADR-0047): its own migration step, kept apart from any other.
_DIGESTS_TABLE = (
    "CREATE TABLE IF NOT EXISTS sw_digests ("
    f" session_key {KEY},"
    f" agent_id {KEY},"
    " entries TEXT NOT NULL,"  # JSON [[sequence, created key], ...], oldest first
    " PRIMARY KEY (session_key, agent_id))"
)
"""Each main session's pending creation digest (ADR-0047); no row: nothing pending."""

SCHEMA = (
    # eventsourcing's application-recorder table, including its append-only autovacuum settings
    # (a vacuum threshold of 100 million rows): prunes delete from it, so the store vacuums it itself.
    (
        f"CREATE TABLE IF NOT EXISTS {EVENTS_TABLE} ("
        " originator_id uuid NOT NULL,"
        " originator_version bigint NOT NULL,"
        " topic text,"
        " state bytea,"
        " notification_id bigserial,"
        " PRIMARY KEY (originator_id, originator_version))"
        " WITH (autovacuum_enabled = true, autovacuum_vacuum_threshold = 100000000,"
        " autovacuum_vacuum_scale_factor = 0.5, autovacuum_analyze_threshold = 1000,"
        " autovacuum_analyze_scale_factor = 0.01)"
    ),
    (
        f"CREATE UNIQUE INDEX IF NOT EXISTS {EVENTS_TABLE}_notification_id_idx"
        f" ON {EVENTS_TABLE} (notification_id)"
    ),
    # `sequence` is the counter (ADR-0006); its row is also the write lock (ADR-0009).
    "CREATE TABLE IF NOT EXISTS sw_meta (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS sw_streams (stream_id uuid PRIMARY KEY, version BIGINT NOT NULL)",
    "INSERT INTO sw_meta (name, value) VALUES ('sequence', 0) ON CONFLICT (name) DO NOTHING",
    (
        "INSERT INTO sw_meta (name, value) VALUES ('schema_version', "
        f"{SCHEMA_VERSION}) ON CONFLICT (name) DO NOTHING"
    ),
    (
        "CREATE TABLE IF NOT EXISTS sw_sessions ("
        f" session_key {KEY},"
        f" agent_id {KEY},"
        " session_id TEXT,"
        " kind TEXT NOT NULL,"
        " spawned_by TEXT,"
        " parent_session_key TEXT,"
        " registered INTEGER NOT NULL,"
        " head BIGINT NOT NULL,"
        " pruned_through BIGINT NOT NULL,"
        " stream_version BIGINT NOT NULL,"
        " meta TEXT,"  # registry metadata as JSON, NULL until first set
        " PRIMARY KEY (session_key, agent_id))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS sw_signals ("
        " sequence BIGINT PRIMARY KEY,"  # allocated by the counter, never by a serial
        f" session_key {KEY},"
        f" agent_id {KEY},"
        " session_id TEXT,"
        " kind TEXT NOT NULL,"
        " actor_type TEXT NOT NULL,"
        " actor_id TEXT,"
        " run_id TEXT,"
        " occurred_at_ms BIGINT NOT NULL,"
        " recorded_at_ms BIGINT NOT NULL,"
        " summary TEXT NOT NULL,"
        " payload TEXT,"
        " dedupe_key TEXT UNIQUE,"  # dedupe keys are global
        " watchers TEXT,"
        " notification_id BIGINT NOT NULL)"
    ),
    "CREATE INDEX IF NOT EXISTS sw_signals_by_session ON sw_signals (session_key, agent_id, sequence)",
    "CREATE INDEX IF NOT EXISTS sw_signals_by_age ON sw_signals (occurred_at_ms)",
    (
        "CREATE TABLE IF NOT EXISTS sw_cursors ("
        f" target_key {KEY},"
        f" target_agent_id {KEY},"
        f" watcher {KEY},"
        " watcher_agent_id TEXT NOT NULL,"
        " last_seen BIGINT NOT NULL,"
        " notified BIGINT NOT NULL,"
        " material BIGINT NOT NULL,"
        " updated_at_ms BIGINT NOT NULL,"
        " ambient SMALLINT NOT NULL DEFAULT 0,"  # the provenance: 1 ambient, 0 explicit (ADR-0049)
        " PRIMARY KEY (target_key, target_agent_id, watcher))"
    ),
    "CREATE INDEX IF NOT EXISTS sw_cursors_by_watcher ON sw_cursors (watcher)",
    # Upstream links of adopted sessions; `active = 0` rows are tombstones (ADR-0010).
    (
        "CREATE TABLE IF NOT EXISTS sw_upstream_links ("
        f" session_key {KEY},"
        f" agent_id {KEY},"
        " catalog_id TEXT NOT NULL,"
        " host_id TEXT NOT NULL,"
        " thread_id TEXT NOT NULL,"
        " upstream_kind TEXT NOT NULL,"
        " upstream_ref TEXT NOT NULL,"
        " marker TEXT NOT NULL,"
        " link_version BIGINT NOT NULL,"
        " active INTEGER NOT NULL,"
        " last_scanned_at_ms BIGINT,"
        " created_at_ms BIGINT NOT NULL,"
        " updated_at_ms BIGINT NOT NULL,"
        " PRIMARY KEY (session_key, agent_id))"
    ),
    _DIGESTS_TABLE,
    (
        "CREATE OR REPLACE VIEW sw_pending_notices AS"
        " SELECT watcher, target_key, target_agent_id, last_seen FROM sw_cursors WHERE notified > last_seen"
    ),
)

# Every writer takes this row lock first: writers in all processes run one at a time, like SQLite's
# BEGIN IMMEDIATE, so sequences, dedupe checks and the commit order of events are deterministic.
LOCK_AND_READ_COUNTER = "SELECT value FROM sw_meta WHERE name = 'sequence' FOR UPDATE"
WRITE_COUNTER = "UPDATE sw_meta SET value = %s WHERE name = 'sequence'"

SESSION_COLUMNS = (
    "session_key, agent_id, session_id, kind, spawned_by, parent_session_key,"
    " registered, head, pruned_through, meta"
)
SIGNAL_COLUMNS = (
    "sequence, session_key, agent_id, session_id, kind, actor_type, actor_id, run_id,"
    " occurred_at_ms, recorded_at_ms, summary, payload, dedupe_key, watchers"
)
CURSOR_COLUMNS = "watcher, target_key, target_agent_id, last_seen, notified, material, updated_at_ms, ambient"
LINK_COLUMNS = (
    "session_key, agent_id, catalog_id, host_id, thread_id, upstream_kind, upstream_ref, marker,"
    " link_version, active, last_scanned_at_ms, created_at_ms, updated_at_ms"
)

UPSERT_SESSION = (
    f"INSERT INTO sw_sessions ({SESSION_COLUMNS}, stream_version)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (session_key, agent_id) DO UPDATE SET session_id = excluded.session_id,"
    " kind = excluded.kind, spawned_by = excluded.spawned_by,"
    " parent_session_key = excluded.parent_session_key, registered = excluded.registered,"
    " head = excluded.head, pruned_through = excluded.pruned_through, meta = excluded.meta,"
    " stream_version = excluded.stream_version"
)
DELETE_SESSION = "DELETE FROM sw_sessions WHERE session_key = %s AND agent_id = %s"
DELETE_SESSION_SIGNALS = "DELETE FROM sw_signals WHERE session_key = %s AND agent_id = %s"
"""The PostgreSQL form of `sqlite_schema.DELETE_SESSION_SIGNALS` (the same rule).

Twin: `projections.read_model.Projection` on `SessionDeleted`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
INSERT_SIGNAL = (
    f"INSERT INTO sw_signals ({SIGNAL_COLUMNS}, notification_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
INSERT_EVENT = (
    f"INSERT INTO {EVENTS_TABLE} (originator_id, originator_version, topic, state)"
    " VALUES (%s, %s, %s, %s) RETURNING notification_id"
)
SELECT_SESSION = (
    f"SELECT {SESSION_COLUMNS}, stream_version FROM sw_sessions WHERE session_key = %s AND agent_id = %s"
)
SELECT_SESSIONS = f"SELECT {SESSION_COLUMNS} FROM sw_sessions ORDER BY session_key, agent_id"
SELECT_SIGNALS_AFTER = (
    f"SELECT {SIGNAL_COLUMNS} FROM sw_signals WHERE sequence > %s ORDER BY sequence LIMIT %s"
)
"""A page of the stored signals in ascending sequence (an audit reads them so)."""
SELECT_BY_DEDUPE = f"SELECT {SIGNAL_COLUMNS} FROM sw_signals WHERE dedupe_key = %s"
SELECT_STATUS = (
    "SELECT s.session_key, s.agent_id, s.session_id, s.kind, s.spawned_by, s.parent_session_key,"
    " s.registered, s.head, s.pruned_through, s.meta, f.first,"
    " p.sequence, p.kind, p.actor_type, p.actor_id, p.run_id, p.occurred_at_ms, p.payload, p.summary"
    " FROM sw_sessions AS s"
    " CROSS JOIN LATERAL (SELECT MIN(sequence) AS first FROM sw_signals"
    " WHERE session_key = s.session_key AND agent_id = s.agent_id) AS f"
    " LEFT JOIN LATERAL (SELECT sequence, kind, actor_type, actor_id, run_id, occurred_at_ms, payload,"
    " summary FROM sw_signals WHERE session_key = s.session_key AND agent_id = s.agent_id AND sequence > %s"
    " ORDER BY sequence LIMIT %s) AS p ON TRUE"
    " WHERE s.session_key = %s AND s.agent_id = %s ORDER BY p.sequence"
)
"""`session_status` with `changesSince` as ONE statement, so one snapshot: the session row (columns
0-9), its smallest retained sequence (10) and the page after `changesSince` (11-18; NULL when
empty), one row per event; `rows.state_change` cuts each payload to its public keys. No row: an
unknown identity.

Twin: `projections.status.page_after`, `StateChange.from_event` and `projections.status.build_status`
(as the memory store runs them).
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_CURSOR = (
    f"SELECT {CURSOR_COLUMNS} FROM sw_cursors WHERE target_key = %s AND target_agent_id = %s AND watcher = %s"
)
SELECT_CURSORS_OF = (
    f"SELECT {CURSOR_COLUMNS} FROM sw_cursors WHERE watcher = %s ORDER BY target_key, target_agent_id"
)
SELECT_PENDING_OF = (
    f"SELECT {CURSOR_COLUMNS} FROM sw_cursors WHERE watcher = %s AND notified > last_seen"
    " ORDER BY target_key, target_agent_id"
)
SELECT_ANY_CURSOR_ON = "SELECT 1 FROM sw_cursors WHERE target_key = %s AND target_agent_id = %s LIMIT 1"
# Every pending notice owed a wake: what a reconnected listener wakes watchers for (ADR-0009); an
# ambient one is queue-only (ADR-0049).
SELECT_PENDING = (
    "SELECT watcher, target_key FROM sw_cursors WHERE notified > last_seen AND ambient = 0"
    " ORDER BY watcher, target_key, target_agent_id"
)
UPSERT_CURSOR = (
    f"INSERT INTO sw_cursors ({CURSOR_COLUMNS}, watcher_agent_id)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (target_key, target_agent_id, watcher) DO UPDATE SET last_seen = excluded.last_seen,"
    " notified = excluded.notified, material = excluded.material, updated_at_ms = excluded.updated_at_ms,"
    " ambient = excluded.ambient"
)
DELETE_CURSOR = "DELETE FROM sw_cursors WHERE target_key = %s AND target_agent_id = %s AND watcher = %s"
_MATERIAL_UPDATE = (
    "UPDATE sw_cursors SET notified = CASE WHEN notified = last_seen THEN %(first)s ELSE notified END,"
    " material = %(e)s, updated_at_ms = %(now)s"
    " WHERE target_key = %(key)s AND target_agent_id = %(agent)s"
    " AND watcher IS DISTINCT FROM %(actor)s AND material < %(first)s"
    " AND {holders} RETURNING watcher, last_seen, notified, ambient"
)
MATERIAL_UPDATE = _MATERIAL_UPDATE.format(holders="(ambient = 0 OR %(ambient_too)s = 1)")
"""The PostgreSQL form of `sqlite_schema.MATERIAL_UPDATE` (the same rule).

Twin: `domain.watch_cursor.react` (the holders `notified_watchers` keeps), then
`domain.watch_cursor.derive` of `ObserveMaterialSignal` and `domain.watch_cursor.evolve`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
MATERIAL_UPDATE_NAMED = _MATERIAL_UPDATE.format(holders="watcher = %(watcher)s")
"""The PostgreSQL form of `sqlite_schema.MATERIAL_UPDATE_NAMED` (the same rule).

Twin: `domain.watch_cursor.notified_watchers` (a producer's watcher is notified even where its
cursor is ambient), then `derive` of `ObserveMaterialSignal` and `evolve`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
INSERT_NEW_CURSOR = (
    f"INSERT INTO sw_cursors ({CURSOR_COLUMNS}, watcher_agent_id)"
    " VALUES (%s, %s, %s, 0, %s, %s, %s, 0, %s)"
    " ON CONFLICT (target_key, target_agent_id, watcher) DO NOTHING"
)
"""The PostgreSQL form of `sqlite_schema.INSERT_NEW_CURSOR` (the same rule).

Twin: `domain.watch_cursor.derive` of `ObserveMaterialSignal` on no cursor.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
_WATCHER_EXISTS = (
    "EXISTS (SELECT 1 FROM sw_sessions AS s WHERE s.session_key = sw_cursors.watcher"
    " AND s.agent_id = sw_cursors.watcher_agent_id AND s.registered = 1)"
)
"""The PostgreSQL form of `sqlite_schema._WATCHER_EXISTS` (the same rule).

Twin: the `watcher_exists` that `projections.read_model.plan_sweep_in` passes to
`domain.watch_cursor.resume`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
_OPEN = "material > last_seen"
"""The PostgreSQL form of `sqlite_schema._OPEN` (the same rule).

Twin: the `material <= last_seen` test of `domain.watch_cursor.resume` and of `derive`'s
`RefreezeNotice`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_REPUBLISHED = (
    "SELECT watcher, target_key, target_agent_id, ambient FROM sw_cursors"
    f" WHERE {_OPEN} AND {_WATCHER_EXISTS} ORDER BY watcher, target_key, target_agent_id"
)
"""The PostgreSQL form of `sqlite_schema.SELECT_REPUBLISHED` (the same rule).

Twin: the `republished` of `projections.read_model.plan_sweep_in` (via `domain.watch_cursor.resume`).
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
COUNT_OPEN = f"SELECT COUNT(*) FROM sw_cursors WHERE {_OPEN}"
"""The PostgreSQL form of `sqlite_schema.COUNT_OPEN` (the same rule).

Twin: the `skipped` of `projections.read_model.plan_sweep_in`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
REFREEZE = (
    "UPDATE sw_cursors SET notified = material, updated_at_ms = %(now)s"
    f" WHERE {_OPEN} AND NOT (notified = material AND updated_at_ms = %(now)s) AND {_WATCHER_EXISTS}"
)
"""The PostgreSQL form of `sqlite_schema.REFREEZE` (the same rule).

Twin: `domain.watch_cursor.resume`, then `domain.watch_cursor.derive` of `RefreezeNotice` and
`domain.watch_cursor.evolve`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""

CAP_THROUGH = (
    "SELECT sequence FROM sw_signals WHERE occurred_at_ms >= %s ORDER BY sequence DESC LIMIT 1 OFFSET %s"
)
"""The PostgreSQL form of `sqlite_schema.CAP_THROUGH` (the same rule).

Twin: `domain.retention.cap_through_sequence` in `projections.retention.plan_prune`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
_REMOVED = "(occurred_at_ms < %(cut)s OR sequence <= %(through)s)"
"""The PostgreSQL form of `sqlite_schema._REMOVED` (the same rule).

Twin: `domain.retention.PruneCutoffs.removes`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_REMOVED_EVENTS = (
    "SELECT s.sequence, e.notification_id, e.originator_id, e.originator_version, e.topic, e.state"
    f" FROM sw_signals AS s JOIN {EVENTS_TABLE} AS e ON e.notification_id = s.notification_id"
    f" WHERE {_REMOVED} AND s.sequence > %(after)s ORDER BY s.sequence LIMIT %(page)s"
)
"""The PostgreSQL form of `sqlite_schema.SELECT_REMOVED_EVENTS` (the same rule).

Twin: the `removed` of `projections.retention.prune`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
STAMP_WATERMARKS = (
    "UPDATE sw_sessions SET pruned_through = x.m, head = GREATEST(sw_sessions.head, x.m)"
    f" FROM (SELECT session_key, agent_id, MAX(sequence) AS m FROM sw_signals WHERE {_REMOVED}"
    " GROUP BY session_key, agent_id) AS x"
    " WHERE sw_sessions.session_key = x.session_key AND sw_sessions.agent_id = x.agent_id"
    " AND x.m > sw_sessions.pruned_through"
)
"""The PostgreSQL form of `sqlite_schema.STAMP_WATERMARKS` (the same rule).

Twin: `domain.retention.stamp` as `projections.retention.prune` applies it.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
DELETE_REMOVED = f"DELETE FROM sw_signals WHERE {_REMOVED}"
"""A prune deletes the signals it removes.

Twin: the log `projections.retention.prune` keeps.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
EXPIRE_CURSORS = "DELETE FROM sw_cursors WHERE updated_at_ms < %s"
"""The PostgreSQL form of `sqlite_schema.EXPIRE_CURSORS` (the same rule).

Twin: `domain.retention.PruneCutoffs.expires`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
STAMP_LAST_PRUNE = (
    "INSERT INTO sw_meta (name, value) VALUES ('last_prune_ms', %s)"
    " ON CONFLICT (name) DO UPDATE SET value = excluded.value"
)
SELECT_LAST_PRUNE = "SELECT value FROM sw_meta WHERE name = 'last_prune_ms'"
SELECT_COUNTER = "SELECT value FROM sw_meta WHERE name = 'sequence'"
# Stored events a new checkpoint would let a prune delete: all but retained signals and checkpoints.
COUNT_REPLACEABLE_EVENTS = (
    f"SELECT (SELECT COUNT(*) FROM {EVENTS_TABLE} AS e WHERE e.topic NOT LIKE 'store.pruned.%%'"
    " AND NOT EXISTS (SELECT 1 FROM sw_signals AS s WHERE s.notification_id = e.notification_id)),"
    " (SELECT COUNT(*) FROM sw_sessions) + (SELECT COUNT(*) FROM sw_cursors)"
    " + (SELECT COUNT(*) FROM sw_upstream_links)"
)
# Everything before the prune's checkpoint except the retained signals' own events (ADR-0008).
TRUNCATE_EVENTS = (
    f"DELETE FROM {EVENTS_TABLE} AS e WHERE e.notification_id < %s"
    " AND NOT EXISTS (SELECT 1 FROM sw_signals AS s WHERE s.notification_id = e.notification_id)"
)
# Outside any transaction, after a prune deleted rows (the events table never autovacuums).
VACUUM = f"VACUUM (ANALYZE, SKIP_LOCKED) {EVENTS_TABLE}, sw_signals"

UPSERT_STREAM = (
    "INSERT INTO sw_streams (stream_id, version) VALUES (%s, %s)"
    " ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version"
)
SELECT_STREAM_VERSION = (
    "SELECT GREATEST(COALESCE((SELECT version FROM sw_streams WHERE stream_id = %(s)s), 0),"
    f" COALESCE((SELECT MAX(originator_version) FROM {EVENTS_TABLE} WHERE originator_id = %(s)s), 0))"
)
SELECT_NOTIFICATIONS = (
    f"SELECT notification_id, originator_id, originator_version, topic, state FROM {EVENTS_TABLE}"
    " WHERE notification_id >= %s ORDER BY notification_id LIMIT %s"
)
NOTIFY_WAKES = "SELECT pg_notify(%s, payload) FROM unnest(%s::text[]) AS payload"
SELECT_ALL_CURSORS = f"SELECT {CURSOR_COLUMNS} FROM sw_cursors ORDER BY watcher, target_key, target_agent_id"
DROP_CURSORS_OF_WATCHER = "DELETE FROM sw_cursors WHERE watcher = %s"
"""The PostgreSQL form of `sqlite_schema.DROP_CURSORS_OF_WATCHER` (the same rule).

Twin: `domain.watch_cursor.react` on `SessionReset` and `SessionDeleted` (the cursors
`projections.read_model.held_by` names).
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
DROP_CURSORS_ON_TARGET = "DELETE FROM sw_cursors WHERE target_key = %s AND target_agent_id = %s"
"""The PostgreSQL form of `sqlite_schema.DROP_CURSORS_ON_TARGET` (the same rule).

Twin: `domain.watch_cursor.react` on `SessionDeleted`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_LINK = f"SELECT {LINK_COLUMNS} FROM sw_upstream_links WHERE session_key = %s AND agent_id = %s"
UPSERT_LINK = (
    f"INSERT INTO sw_upstream_links ({LINK_COLUMNS})"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (session_key, agent_id) DO UPDATE SET catalog_id = excluded.catalog_id,"
    " host_id = excluded.host_id, thread_id = excluded.thread_id, upstream_kind = excluded.upstream_kind,"
    " upstream_ref = excluded.upstream_ref, marker = excluded.marker, link_version = excluded.link_version,"
    " active = excluded.active, last_scanned_at_ms = excluded.last_scanned_at_ms,"
    " created_at_ms = excluded.created_at_ms, updated_at_ms = excluded.updated_at_ms"
)
DELETE_LINK = "DELETE FROM sw_upstream_links WHERE session_key = %s AND agent_id = %s"
"""The PostgreSQL form of `sqlite_schema.DELETE_LINK` (the same rule).

Twin: `projections.read_model.Projection` on `SessionDeleted`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_ALL_LINKS = f"SELECT {LINK_COLUMNS} FROM sw_upstream_links ORDER BY session_key, agent_id"
SELECT_ACTIVE_LINKS = (
    f"SELECT {LINK_COLUMNS} FROM sw_upstream_links WHERE active = 1 ORDER BY session_key, agent_id"
)
SELECT_WATCHED_LINKS = (
    f"SELECT {LINK_COLUMNS} FROM sw_upstream_links AS l WHERE active = 1"
    " AND EXISTS (SELECT 1 FROM sw_cursors AS c"
    " WHERE c.target_key = l.session_key AND c.target_agent_id = l.agent_id) ORDER BY session_key, agent_id"
)

# ------------------------------------------------------------- export and import (adapters/history/jsonl.py)

CLEAR_LAST_PRUNE = "DELETE FROM sw_meta WHERE name = 'last_prune_ms'"
# An import goes only into a store that never held anything: the counter, then whether any row exists.
SELECT_HISTORY_PRESENT = (
    "SELECT (SELECT value FROM sw_meta WHERE name = 'sequence'),"
    f" EXISTS (SELECT 1 FROM {EVENTS_TABLE}) OR EXISTS (SELECT 1 FROM sw_streams)"
    " OR EXISTS (SELECT 1 FROM sw_sessions) OR EXISTS (SELECT 1 FROM sw_signals)"
    " OR EXISTS (SELECT 1 FROM sw_cursors) OR EXISTS (SELECT 1 FROM sw_upstream_links)"
    " OR EXISTS (SELECT 1 FROM sw_digests)"
)
LOADED_EVENT_COLUMNS = "notification_id, originator_id, originator_version, topic, state"
# Imported events carry explicit ids 1..n: the serial continues after them, never below.
SET_NOTIFICATION_ID = f"SELECT setval(pg_get_serial_sequence('{EVENTS_TABLE}', 'notification_id'), %s)"
SELECT_BODIES_AFTER = (
    f"SELECT notification_id, topic, state FROM {EVENTS_TABLE} WHERE notification_id > %s"
    " ORDER BY notification_id LIMIT %s"
)
SELECT_EVENTS_AFTER = (
    f"SELECT {LOADED_EVENT_COLUMNS} FROM {EVENTS_TABLE} WHERE notification_id > %s"
    " ORDER BY notification_id LIMIT %s"
)
# Every stream's newest version comes from one of three places (ADR-0008): the streams table, a
# session row, or the stored events themselves.
SELECT_STREAM_VERSIONS = "SELECT stream_id, version FROM sw_streams"
SELECT_SESSION_STREAM_VERSIONS = "SELECT session_key, agent_id, stream_version FROM sw_sessions"
SELECT_EVENT_STREAM_VERSIONS = (
    f"SELECT originator_id, MAX(originator_version) FROM {EVENTS_TABLE} GROUP BY originator_id"
)

# ---- the creation digest (ADR-0047)
DIGEST_COLUMNS = "session_key, agent_id, entries"
SELECT_DIGEST = f"SELECT {DIGEST_COLUMNS} FROM sw_digests WHERE session_key = %s AND agent_id = %s"
UPSERT_DIGEST = (
    f"INSERT INTO sw_digests ({DIGEST_COLUMNS}) VALUES (%s, %s, %s)"
    " ON CONFLICT (session_key, agent_id) DO UPDATE SET entries = excluded.entries"
)
DELETE_DIGEST = "DELETE FROM sw_digests WHERE session_key = %s AND agent_id = %s"
"""A reset or deleted main session loses its creation digest.

Twin: `projections.read_model.Projection` on `SessionReset` and `SessionDeleted`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_ALL_DIGESTS = f"SELECT {DIGEST_COLUMNS} FROM sw_digests ORDER BY session_key, agent_id"

STREAM_IDS_AS_HEX = False
"""How this driver binds a stream id: the UUID itself."""
MOVE_SESSION_AGENT_ID = (
    "UPDATE sw_sessions SET agent_id = %s, stream_version = 0 WHERE session_key = %s AND agent_id = %s"
)
MOVE_AGENT_IDS = (
    (
        "SELECT DISTINCT session_key, agent_id FROM sw_signals",
        "UPDATE sw_signals SET agent_id = %s WHERE session_key = %s AND agent_id = %s",
    ),
    (
        "SELECT DISTINCT target_key, target_agent_id FROM sw_cursors",
        "UPDATE sw_cursors SET target_agent_id = %s WHERE target_key = %s AND target_agent_id = %s",
    ),
    (
        "SELECT DISTINCT watcher, watcher_agent_id FROM sw_cursors",
        "UPDATE sw_cursors SET watcher_agent_id = %s WHERE watcher = %s AND watcher_agent_id = %s",
    ),
    (
        "SELECT session_key, agent_id FROM sw_upstream_links",
        "UPDATE sw_upstream_links SET agent_id = %s WHERE session_key = %s AND agent_id = %s",
    ),
    (
        "SELECT session_key, agent_id FROM sw_digests",
        "UPDATE sw_digests SET agent_id = %s WHERE session_key = %s AND agent_id = %s",
    ),
)
"""Each table's stored (key, agent id) pairs, and how one pair moves to the agent id it reads as
(`agent_ids.move_stored_agent_ids`, with `MOVE_SESSION_AGENT_ID` for the sessions)."""

MIGRATIONS: dict[int, tuple[str | MigrationStep, ...]] = {
    # 2: registry metadata on every session row (ADR-0012); NULL reads as "none set".
    2: ("ALTER TABLE sw_sessions ADD COLUMN meta TEXT",),
    # 3 (ADR-0049): cursors gain their provenance; every cursor stored before was explicit.
    3: ("ALTER TABLE sw_cursors ADD COLUMN ambient SMALLINT NOT NULL DEFAULT 0",),
    # 4 (ADR-0047): the creation digest's table; a store written before it had no digest.
    4: (_DIGESTS_TABLE,),
    # 5 (ADR-0055): agent ids parsed from keys are normalized; rows stored before move to theirs.
    5: (move_stored_agent_ids,),
}
"""The statements (or steps) that bring a store written at the version before each key up to it."""
SELECT_SCHEMA_VERSION = "SELECT value FROM sw_meta WHERE name = 'schema_version'"
SELECT_META_TABLE = "SELECT to_regclass('sw_meta')"
"""Whether the schema's `sw_meta` exists (NULL before), by the catalog alone: no error, no lock."""
WRITE_SCHEMA_VERSION = "UPDATE sw_meta SET value = %s WHERE name = 'schema_version'"
