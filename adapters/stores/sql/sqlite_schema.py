"""The SQLite schema of sessionwatch and the mapping between its rows and domain values.

One file holds eventsourcing's stored events (with a never-reused AUTOINCREMENT notification id),
the sequence counter and the read models: sessions, the signal log and the watch cursors, whose
rows with `notified > last_seen` are the durable pending-notice view.
"""

from __future__ import annotations

from sessionwatch.adapters.stores.sql.agent_ids import move_stored_agent_ids
from sessionwatch.adapters.stores.sql.migrate import MigrationStep
from sessionwatch.domain.signals import PAYLOAD_KEYS, PUBLIC_PAYLOAD_KEYS

SCHEMA_VERSION = 6
EVENTS_TABLE = "stored_events"

_SIGNALS_TABLE = (
    "CREATE TABLE IF NOT EXISTS {name} ("
    " sequence INTEGER PRIMARY KEY,"  # allocated by the counter, never by SQLite
    " session_key TEXT NOT NULL,"
    " agent_id TEXT NOT NULL,"
    " session_id TEXT,"
    " kind TEXT NOT NULL,"
    " actor_type TEXT NOT NULL,"
    " actor_id TEXT,"
    " run_id TEXT,"
    " occurred_at_ms INTEGER NOT NULL,"
    " recorded_at_ms INTEGER NOT NULL,"
    " summary TEXT NOT NULL,"
    " payload TEXT,"
    " dedupe_key TEXT,"  # unique where set: `sw_signals_by_dedupe`
    " watchers TEXT,"
    " notification_id INTEGER NOT NULL)"  # its stored event, kept while the signal is retained
)
_BY_SESSION = (
    "CREATE INDEX IF NOT EXISTS sw_signals_by_session ON sw_signals (session_key, agent_id, sequence)"
)
_BY_AGE = "CREATE INDEX IF NOT EXISTS sw_signals_by_age ON sw_signals (occurred_at_ms)"
LOAD_DEFERRED_INDEXES = {"sw_signals_by_session": _BY_SESSION, "sw_signals_by_age": _BY_AGE}
"""The signal indexes a bulk load drops and builds back once its rows are in (`SqliteDialect.before_load`):
an index built over the sorted rows costs a fraction of one grown row by row. The dedupe index stays:
it enforces the keys' uniqueness as the rows come."""
_SIGNAL_INDEXES = (
    _BY_SESSION,
    _BY_AGE,
    # Partial: most signals carry no dedupe key, and their record then writes no page of it (ADR-0019).
    (
        "CREATE UNIQUE INDEX IF NOT EXISTS sw_signals_by_dedupe ON sw_signals (dedupe_key)"
        " WHERE dedupe_key IS NOT NULL"
    ),
)

# ---- digest table (ADR-0047): its own migration step, kept apart from any other.
_DIGESTS_TABLE = (
    "CREATE TABLE IF NOT EXISTS sw_digests ("
    " session_key TEXT NOT NULL,"
    " agent_id TEXT NOT NULL,"
    " entries TEXT NOT NULL,"  # JSON [[sequence, created key], ...], oldest first
    " PRIMARY KEY (session_key, agent_id)) WITHOUT ROWID"
)
"""Each main session's pending creation digest (ADR-0047); no row: nothing pending."""

SCHEMA = (
    # The notification id is AUTOINCREMENT: plain rowids restart at 1 once the newest rows are
    # deleted, and a projection tracking positions would then skip new events (ADR-0006).
    (
        f"CREATE TABLE IF NOT EXISTS {EVENTS_TABLE} ("
        " notification_id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " originator_id TEXT NOT NULL,"
        " originator_version INTEGER NOT NULL,"
        " topic TEXT NOT NULL,"
        " state BLOB NOT NULL,"
        " UNIQUE (originator_id, originator_version))"
    ),
    "CREATE TABLE IF NOT EXISTS sw_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    # The newest version of every stream whose version no read-model row carries (cursor streams,
    # the store stream, deleted sessions): a compacted stream never reuses a (stream, version).
    (
        "CREATE TABLE IF NOT EXISTS sw_streams"
        " (stream_id TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID"
    ),
    "INSERT OR IGNORE INTO sw_meta (name, value) VALUES ('sequence', 0)",
    f"INSERT OR IGNORE INTO sw_meta (name, value) VALUES ('schema_version', {SCHEMA_VERSION})",
    (
        "CREATE TABLE IF NOT EXISTS sw_sessions ("
        " session_key TEXT NOT NULL,"
        " agent_id TEXT NOT NULL,"
        " session_id TEXT,"
        " kind TEXT NOT NULL,"
        " spawned_by TEXT,"
        " parent_session_key TEXT,"
        " registered INTEGER NOT NULL,"
        " head INTEGER NOT NULL,"
        " pruned_through INTEGER NOT NULL,"
        " stream_version INTEGER NOT NULL,"  # the Session stream's newest version (no MAX lookup)
        " meta TEXT,"  # registry metadata as JSON, NULL until first set
        " PRIMARY KEY (session_key, agent_id)) WITHOUT ROWID"
    ),
    _SIGNALS_TABLE.format(name="sw_signals"),
    *_SIGNAL_INDEXES,
    # A rowid table with the pair as a unique key: a material update rewrites N, M and updated_at of
    # many rows at once, which is cheaper here than re-seeking WITHOUT ROWID text keys, and the
    # watcher index holds no column the update changes.
    (
        "CREATE TABLE IF NOT EXISTS sw_cursors ("
        " target_key TEXT NOT NULL,"
        " target_agent_id TEXT NOT NULL,"
        " watcher TEXT NOT NULL,"
        " watcher_agent_id TEXT NOT NULL,"  # the watcher session's identity, for the sweep's join
        " last_seen INTEGER NOT NULL,"
        " notified INTEGER NOT NULL,"
        " material INTEGER NOT NULL,"
        " updated_at_ms INTEGER NOT NULL,"
        " ambient INTEGER NOT NULL DEFAULT 0,"  # the provenance: 1 ambient, 0 explicit (ADR-0049)
        " UNIQUE (target_key, target_agent_id, watcher))"
    ),
    "CREATE INDEX IF NOT EXISTS sw_cursors_by_watcher ON sw_cursors (watcher)",
    # Upstream links of adopted sessions; `active = 0` rows are tombstones (ADR-0010).
    # `upstream_ref` and `marker` are JSON text.
    (
        "CREATE TABLE IF NOT EXISTS sw_upstream_links ("
        " session_key TEXT NOT NULL,"
        " agent_id TEXT NOT NULL,"
        " catalog_id TEXT NOT NULL,"
        " host_id TEXT NOT NULL,"
        " thread_id TEXT NOT NULL,"
        " upstream_kind TEXT NOT NULL,"
        " upstream_ref TEXT NOT NULL,"
        " marker TEXT NOT NULL,"
        " link_version INTEGER NOT NULL,"
        " active INTEGER NOT NULL,"
        " last_scanned_at_ms INTEGER,"
        " created_at_ms INTEGER NOT NULL,"
        " updated_at_ms INTEGER NOT NULL,"
        " PRIMARY KEY (session_key, agent_id)) WITHOUT ROWID"
    ),
    _DIGESTS_TABLE,
    (
        "CREATE VIEW IF NOT EXISTS sw_pending_notices AS"
        " SELECT watcher, target_key, target_agent_id, last_seen FROM sw_cursors WHERE notified > last_seen"
    ),
)

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
    f"INSERT INTO sw_sessions ({SESSION_COLUMNS}, stream_version) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT (session_key, agent_id) DO UPDATE SET session_id=excluded.session_id,"
    " kind=excluded.kind, spawned_by=excluded.spawned_by,"
    " parent_session_key=excluded.parent_session_key, registered=excluded.registered,"
    " head=excluded.head, pruned_through=excluded.pruned_through, meta=excluded.meta,"
    " stream_version=excluded.stream_version"
)
INSERT_SIGNAL = (
    f"INSERT INTO sw_signals ({SIGNAL_COLUMNS}, notification_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
INSERT_EVENT = (
    f"INSERT INTO {EVENTS_TABLE} (notification_id, originator_id, originator_version, topic, state)"
    " VALUES (?,?,?,?,?)"
)
# The newest notification id ever used (AUTOINCREMENT's own record; 0 before the first event).
SELECT_LAST_NOTIFICATION_ID = (
    f"SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = '{EVENTS_TABLE}'), 0)"
)
SELECT_SESSION = (
    f"SELECT {SESSION_COLUMNS}, stream_version FROM sw_sessions WHERE session_key=? AND agent_id=?"
)
_PRIVATE_KEYS = ", ".join(
    f"'$.{key}'" for key in sorted(set().union(*PAYLOAD_KEYS.values()) - set(PUBLIC_PAYLOAD_KEYS))
)
"""The whitelisted payload keys `session_status` does not show (stored payloads hold no others).

Twin: `projections.models.StateChange.from_event`, which keeps only `PUBLIC_PAYLOAD_KEYS`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_STATUS_JSON = (
    f"SELECT {SESSION_COLUMNS},"
    " (SELECT MIN(sequence) FROM sw_signals WHERE session_key = :key AND agent_id = :agent),"
    " (SELECT json_group_array(json_object('sequence', sequence, 'kind', kind, 'actor_type', actor_type,"
    " 'occurred_at', CASE WHEN occurred_at_ms > 20000000000 THEN occurred_at_ms"
    " ELSE strftime('%Y-%m-%dT%H:%M:%fZ', occurred_at_ms / 1000.0, 'unixepoch') END,"
    " 'summary', summary, 'actor_id', actor_id, 'run_id', run_id, 'payload',"
    f" json(NULLIF(json_remove(payload, {_PRIVATE_KEYS}), '{{}}')))) FROM"
    " (SELECT sequence, kind, actor_type, actor_id, run_id, occurred_at_ms, payload, summary FROM sw_signals"
    " WHERE session_key = :key AND agent_id = :agent AND sequence > :since ORDER BY sequence LIMIT :rows))"
    " FROM sw_sessions WHERE session_key = :key AND agent_id = :agent"
)
"""`session_status` with `changesSince` as ONE statement (ADR-0015): the session row, its smallest
retained sequence, and the page after `changesSince` as one JSON array of change events built by
SQLite: `occurred_at` in epoch ms (read as milliseconds by the validator above 2e10, else as ISO
text), the payload cut to its public keys (NULL when none is left). No row: an unknown identity.

Twin: `projections.status.page_after`, `StateChange.from_event` and `projections.status.build_status`
(as the memory store runs them).
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_CURSOR = (
    f"SELECT {CURSOR_COLUMNS} FROM sw_cursors WHERE target_key=? AND target_agent_id=? AND watcher=?"
)
UPSERT_CURSOR = (
    f"INSERT INTO sw_cursors ({CURSOR_COLUMNS}, watcher_agent_id) VALUES (?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT (target_key, target_agent_id, watcher) DO UPDATE SET last_seen=excluded.last_seen,"
    " notified=excluded.notified, material=excluded.material, updated_at_ms=excluded.updated_at_ms,"
    " ambient=excluded.ambient"
)
DELETE_CURSOR = "DELETE FROM sw_cursors WHERE target_key=? AND target_agent_id=? AND watcher=?"
_MATERIAL_UPDATE = (
    "UPDATE sw_cursors SET notified = CASE WHEN notified = last_seen THEN :first ELSE notified END,"
    " material = :e, updated_at_ms = :now"
    " WHERE target_key = :key AND target_agent_id = :agent AND watcher IS NOT :actor AND material < :first"
    " AND {holders} RETURNING watcher, last_seen, notified, ambient"
)
MATERIAL_UPDATE = _MATERIAL_UPDATE.format(holders="(ambient = 0 OR :ambient_too = 1)")
"""A notifying signal reaches every holder but its actor, in one statement (the peer's shape):
`N := first` only when no notice is outstanding (`N = L`), `M := e` always; `material < first` makes
a redelivery a no-op. One signal passes its sequence as both; a run of signals by one actor on the
target passes its first as `first` and its last as `e` (ADR-0017). `ambient_too = 0` (a kind that
notifies only where the store says so: a run's end) leaves ambient cursors alone.

Twin: `domain.watch_cursor.react` (the holders `notified_watchers` keeps), then
`domain.watch_cursor.derive` of `ObserveMaterialSignal` and `domain.watch_cursor.evolve`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
MATERIAL_UPDATE_NAMED = _MATERIAL_UPDATE.format(holders="watcher = :watcher")
"""`MATERIAL_UPDATE` of one producer-named watcher, whatever its cursor's provenance.

Twin: `domain.watch_cursor.notified_watchers` (a producer's watcher is notified even where its
cursor is ambient), then `derive` of `ObserveMaterialSignal` and `evolve`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
INSERT_NEW_CURSOR = (
    f"INSERT INTO sw_cursors ({CURSOR_COLUMNS}, watcher_agent_id) VALUES (?,?,?,0,?,?,?,0,?)"
    " ON CONFLICT (target_key, target_agent_id, watcher) DO NOTHING"
)
"""The `(0, e, e)` cursor of a producer watcher that had none.

Twin: `domain.watch_cursor.derive` of `ObserveMaterialSignal` on no cursor.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
_WATCHER_EXISTS = (
    "EXISTS (SELECT 1 FROM sw_sessions AS s WHERE s.session_key = sw_cursors.watcher"
    " AND s.agent_id = sw_cursors.watcher_agent_id AND s.registered = 1)"
)
"""The restart sweep's "the watcher session exists": upserted, not deleted.

Twin: the `watcher_exists` that `projections.read_model.plan_sweep_in` passes to
`domain.watch_cursor.resume`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
_OPEN = "material > last_seen"
"""An open notice, `M > L`: acknowledged ones are never reopened.

Twin: the `material <= last_seen` test of `domain.watch_cursor.resume` and of `derive`'s
`RefreezeNotice`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_REPUBLISHED = (
    "SELECT watcher, target_key, target_agent_id, ambient FROM sw_cursors"
    f" WHERE {_OPEN} AND {_WATCHER_EXISTS} ORDER BY watcher, target_key, target_agent_id"
)
"""The open notices of existing watchers, which the restart sweep re-publishes.

Twin: the `republished` of `projections.read_model.plan_sweep_in` (via `domain.watch_cursor.resume`).
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
COUNT_OPEN = f"SELECT COUNT(*) FROM sw_cursors WHERE {_OPEN}"
"""Every open notice; those not re-published are the sweep's skipped ones.

Twin: the `skipped` of `projections.read_model.plan_sweep_in`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
REFREEZE = (
    "UPDATE sw_cursors SET notified = material, updated_at_ms = :now"
    f" WHERE {_OPEN} AND NOT (notified = material AND updated_at_ms = :now) AND {_WATCHER_EXISTS}"
)
"""The restart sweep: `N := M`, `updated_at := now` for every open notice of an existing watcher; a
cursor already frozen at `M` and stamped now is left alone.

Twin: `domain.watch_cursor.resume`, then `domain.watch_cursor.derive` of `RefreezeNotice` and
`domain.watch_cursor.evolve`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""


CAP_THROUGH = (
    "SELECT sequence FROM sw_signals WHERE occurred_at_ms >= ? ORDER BY sequence DESC LIMIT 1 OFFSET ?"
)
"""The global cap keeps the newest `max_signals` of what the age cut-off keeps: this is the highest
sequence it removes (no row: nothing).

Twin: `domain.retention.cap_through_sequence` in `projections.retention.plan_prune`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
_REMOVED = "(occurred_at_ms < :cut OR sequence <= :through)"
"""A signal goes when older than the age cut-off or at or below the cap's sequence.

Twin: `domain.retention.PruneCutoffs.removes`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_REMOVED_EVENTS = (
    "SELECT s.sequence, e.notification_id, e.originator_id, e.originator_version, e.topic, e.state"
    f" FROM sw_signals AS s JOIN {EVENTS_TABLE} AS e ON e.notification_id = s.notification_id"
    f" WHERE {_REMOVED} AND s.sequence > :after ORDER BY s.sequence LIMIT :page"
)
"""The stored events of the signals a prune removes, in sequence order, for the archive: a page of
at most `page` after sequence `after`, each row led by its sequence (the next page starts after it).

Twin: the `removed` of `projections.retention.prune`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
STAMP_WATERMARKS = (
    "UPDATE sw_sessions SET pruned_through = x.m, head = MAX(head, x.m)"
    f" FROM (SELECT session_key, agent_id, MAX(sequence) AS m FROM sw_signals WHERE {_REMOVED}"
    " GROUP BY session_key, agent_id) AS x"
    " WHERE sw_sessions.session_key = x.session_key AND sw_sessions.agent_id = x.agent_id"
    " AND x.m > sw_sessions.pruned_through"
)
"""Each affected session's watermark rises to its highest removed sequence; no head is created or
lowered (a removed signal's session row exists, and its head is at least that sequence).

Twin: `domain.retention.stamp` as `projections.retention.prune` applies it.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
DELETE_REMOVED = f"DELETE FROM sw_signals WHERE {_REMOVED}"
"""A prune deletes the signals it removes.

Twin: the log `projections.retention.prune` keeps.

Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
# Stored events a new checkpoint would let a prune delete: all but retained signals and checkpoints.
COUNT_REPLACEABLE_EVENTS = (
    f"SELECT (SELECT COUNT(*) FROM {EVENTS_TABLE} WHERE topic NOT LIKE 'store.pruned.%'"
    " AND notification_id NOT IN (SELECT notification_id FROM sw_signals)),"
    " (SELECT COUNT(*) FROM sw_sessions) + (SELECT COUNT(*) FROM sw_cursors)"
    " + (SELECT COUNT(*) FROM sw_upstream_links)"
)
# Everything before the prune's checkpoint except the retained signals' own events (ADR-0008).
TRUNCATE_EVENTS = (
    f"DELETE FROM {EVENTS_TABLE} WHERE notification_id < ?"
    " AND notification_id NOT IN (SELECT notification_id FROM sw_signals)"
)


UPSERT_STREAM = (
    "INSERT INTO sw_streams (stream_id, version) VALUES (?, ?)"
    " ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version"
)
SELECT_STREAM_VERSION = (
    "SELECT MAX(COALESCE((SELECT version FROM sw_streams WHERE stream_id = :s), 0),"
    f" COALESCE((SELECT MAX(originator_version) FROM {EVENTS_TABLE} WHERE originator_id = :s), 0))"
)
SELECT_SIGNALS_AFTER = f"SELECT {SIGNAL_COLUMNS} FROM sw_signals WHERE sequence > ? ORDER BY sequence LIMIT ?"
"""A page of the stored signals in ascending sequence (an audit reads them so)."""
SELECT_BY_DEDUPE = f"SELECT {SIGNAL_COLUMNS} FROM sw_signals WHERE dedupe_key = ?"
SELECT_SESSIONS = f"SELECT {SESSION_COLUMNS} FROM sw_sessions ORDER BY session_key, agent_id"
SELECT_ALL_CURSORS = f"SELECT {CURSOR_COLUMNS} FROM sw_cursors ORDER BY watcher, target_key, target_agent_id"
SELECT_ANY_CURSOR_ON = "SELECT 1 FROM sw_cursors WHERE target_key = ? AND target_agent_id = ? LIMIT 1"
DELETE_SESSION = "DELETE FROM sw_sessions WHERE session_key = ? AND agent_id = ?"
DELETE_SESSION_SIGNALS = "DELETE FROM sw_signals WHERE session_key = ? AND agent_id = ?"
"""A deleted identity's signals go with it.

Twin: `projections.read_model.Projection` on `SessionDeleted`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
DROP_CURSORS_OF_WATCHER = "DELETE FROM sw_cursors WHERE watcher = ?"
"""A reset or deleted watcher session loses the cursors it holds (run for its own identity only).

Twin: `domain.watch_cursor.react` on `SessionReset` and `SessionDeleted` (the cursors
`projections.read_model.held_by` names).
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
DROP_CURSORS_ON_TARGET = "DELETE FROM sw_cursors WHERE target_key = ? AND target_agent_id = ?"
"""A deleted session's watchers lose their cursors on it.

Twin: `domain.watch_cursor.react` on `SessionDeleted`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
EXPIRE_CURSORS = "DELETE FROM sw_cursors WHERE updated_at_ms < ?"
"""A prune expires the cursors not updated since the cut-off (the local clock).

Twin: `domain.retention.PruneCutoffs.expires`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
STAMP_LAST_PRUNE = "INSERT OR REPLACE INTO sw_meta (name, value) VALUES ('last_prune_ms', ?)"
SELECT_LINK = f"SELECT {LINK_COLUMNS} FROM sw_upstream_links WHERE session_key = ? AND agent_id = ?"
UPSERT_LINK = f"INSERT OR REPLACE INTO sw_upstream_links ({LINK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
DELETE_LINK = "DELETE FROM sw_upstream_links WHERE session_key = ? AND agent_id = ?"
"""A deleted session's upstream link goes with it.

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

WRITE_COUNTER = "UPDATE sw_meta SET value = ? WHERE name = 'sequence'"
CLEAR_LAST_PRUNE = "DELETE FROM sw_meta WHERE name = 'last_prune_ms'"
# An import goes only into a store that never held anything: the counter, then whether any row exists.
SELECT_HISTORY_PRESENT = (
    "SELECT (SELECT value FROM sw_meta WHERE name = 'sequence'),"  # a floor, but any signal is a row
    f" EXISTS (SELECT 1 FROM {EVENTS_TABLE}) OR EXISTS (SELECT 1 FROM sw_streams)"
    " OR EXISTS (SELECT 1 FROM sw_sessions) OR EXISTS (SELECT 1 FROM sw_signals)"
    " OR EXISTS (SELECT 1 FROM sw_cursors) OR EXISTS (SELECT 1 FROM sw_upstream_links)"
    " OR EXISTS (SELECT 1 FROM sw_digests)"
)
LOADED_EVENT_COLUMNS = "notification_id, originator_id, originator_version, topic, state"
SELECT_BODIES_AFTER = (
    f"SELECT notification_id, topic, state FROM {EVENTS_TABLE} WHERE notification_id > ?"
    " ORDER BY notification_id LIMIT ?"
)
SELECT_EVENTS_AFTER = (
    f"SELECT {LOADED_EVENT_COLUMNS} FROM {EVENTS_TABLE} WHERE notification_id > ?"
    " ORDER BY notification_id LIMIT ?"
)
# Every stream's newest version comes from one of three places (ADR-0008): the streams table, a
# session row, or the stored events themselves.
# The highest sequence ever allocated (ADR-0019): the counter row is a floor, raised only before
# signal rows are deleted, and the newest retained signal is above it or at it.
SELECT_COUNTER = (
    "SELECT MAX((SELECT value FROM sw_meta WHERE name = 'sequence'),"
    " COALESCE((SELECT MAX(sequence) FROM sw_signals), 0))"
)
RAISE_COUNTER = (
    "UPDATE sw_meta SET value = MAX(value, COALESCE((SELECT MAX(sequence) FROM sw_signals), 0))"
    " WHERE name = 'sequence'"
)
SELECT_STREAM_VERSIONS = "SELECT stream_id, version FROM sw_streams"
SELECT_SESSION_STREAM_VERSIONS = "SELECT session_key, agent_id, stream_version FROM sw_sessions"
SELECT_EVENT_STREAM_VERSIONS = (
    f"SELECT originator_id, MAX(originator_version) FROM {EVENTS_TABLE} GROUP BY originator_id"
)

# ---- the creation digest (ADR-0047)
DIGEST_COLUMNS = "session_key, agent_id, entries"
SELECT_DIGEST = f"SELECT {DIGEST_COLUMNS} FROM sw_digests WHERE session_key = ? AND agent_id = ?"
UPSERT_DIGEST = (
    f"INSERT INTO sw_digests ({DIGEST_COLUMNS}) VALUES (?, ?, ?)"
    " ON CONFLICT (session_key, agent_id) DO UPDATE SET entries = excluded.entries"
)
DELETE_DIGEST = "DELETE FROM sw_digests WHERE session_key = ? AND agent_id = ?"
"""A reset or deleted main session loses its creation digest.

Twin: `projections.read_model.Projection` on `SessionReset` and `SessionDeleted`.
Contract: tests/contract/test_sql_rules_match_their_python_twins.py.
"""
SELECT_ALL_DIGESTS = f"SELECT {DIGEST_COLUMNS} FROM sw_digests ORDER BY session_key, agent_id"

STREAM_IDS_AS_HEX = True
"""How this driver binds a stream id: its hex text."""
MOVE_SESSION_AGENT_ID = (
    "UPDATE sw_sessions SET agent_id = ?, stream_version = 0 WHERE session_key = ? AND agent_id = ?"
)
MOVE_AGENT_IDS = (
    (
        "SELECT DISTINCT session_key, agent_id FROM sw_signals",
        "UPDATE sw_signals SET agent_id = ? WHERE session_key = ? AND agent_id = ?",
    ),
    (
        "SELECT DISTINCT target_key, target_agent_id FROM sw_cursors",
        "UPDATE sw_cursors SET target_agent_id = ? WHERE target_key = ? AND target_agent_id = ?",
    ),
    (
        "SELECT DISTINCT watcher, watcher_agent_id FROM sw_cursors",
        "UPDATE sw_cursors SET watcher_agent_id = ? WHERE watcher = ? AND watcher_agent_id = ?",
    ),
    (
        "SELECT session_key, agent_id FROM sw_upstream_links",
        "UPDATE sw_upstream_links SET agent_id = ? WHERE session_key = ? AND agent_id = ?",
    ),
    (
        "SELECT session_key, agent_id FROM sw_digests",
        "UPDATE sw_digests SET agent_id = ? WHERE session_key = ? AND agent_id = ?",
    ),
)
"""Each table's stored (key, agent id) pairs, and how one pair moves to the agent id it reads as
(`agent_ids.move_stored_agent_ids`, with `MOVE_SESSION_AGENT_ID` for the sessions)."""

MIGRATIONS: dict[int, tuple[str | MigrationStep, ...]] = {
    # 2: registry metadata on every session row (ADR-0012); NULL reads as "none set".
    2: ("ALTER TABLE sw_sessions ADD COLUMN meta TEXT",),
    # 3 (ADR-0019): the dedupe key's uniqueness moves to a partial index (the table is rebuilt, as
    # SQLite drops no column constraint); the counter row becomes a floor under the newest signal,
    # which needs no change to the data, only this version, so that older code refuses the file.
    3: (
        _SIGNALS_TABLE.format(name="sw_signals_v3"),
        "INSERT INTO sw_signals_v3 SELECT * FROM sw_signals",
        "DROP TABLE sw_signals",
        "ALTER TABLE sw_signals_v3 RENAME TO sw_signals",
        *_SIGNAL_INDEXES,
    ),
    # 4 (ADR-0049): cursors gain their provenance; every cursor stored before was explicit.
    4: ("ALTER TABLE sw_cursors ADD COLUMN ambient INTEGER NOT NULL DEFAULT 0",),
    # 5 (ADR-0047): the creation digest's table; a store written before it had no digest.
    5: (_DIGESTS_TABLE,),
    # 6 (ADR-0055): agent ids parsed from keys are normalized; rows stored before move to theirs.
    6: (move_stored_agent_ids,),
}
"""The statements (or steps) that bring a store written at the version before each key up to it."""
SELECT_SCHEMA_VERSION = "SELECT value FROM sw_meta WHERE name = 'schema_version'"
SELECT_META_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sw_meta'"
"""Whether the file holds the store's `sw_meta` yet (no row: a new file)."""
WRITE_SCHEMA_VERSION = "UPDATE sw_meta SET value = ? WHERE name = 'schema_version'"
