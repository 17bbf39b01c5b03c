"""The peer baseline: the reference gateway's design (SPEC §15.1, Appendix A) in plain `sqlite3`.

This is what sessionwatch must beat, so it is written to be fast, not to be beaten:

- one connection, WAL, `synchronous` NORMAL or FULL, `busy_timeout` 5000, autocommit mode
  (`isolation_level=None`) with explicit `BEGIN IMMEDIATE` / `COMMIT`, and every statement a
  module constant so the `sqlite3` statement cache prepares it once;
- `record`: ONE write transaction per signal: insert the event row
  (`ON CONFLICT(dedupe_key) DO NOTHING`), upsert the head, and apply the §6.1 material update to the
  target's registered cursor rows (watchers other than the actor) in a single `UPDATE ... RETURNING`
  that also yields what the notices need. The reference reads each cursor before writing it and
  re-reads the inserted row before returning; this peer does neither, so it is *leaner* than the
  reference and every ratio against it is conservative;
- `status`: the whole read path of `session_status` (head and watermark in one indexed lookup, a page
  of limit + 1 rows, the earliest retained sequence) mapped to §7.1 dicts (camelCase, payload parsed
  from JSON and restricted to `outcome`, `channel`, `turns`).

An index on `session_watch_cursors(target_session_key)` is added to the Appendix A schema so the
per-signal cursor update is an index lookup rather than a scan (again: in the peer's favour).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

Synchronous = Literal["normal", "full"]

NOTIFYING_KINDS = frozenset({"human_direct_message", "upstream_missing", "goal_changed"})
PUBLIC_PAYLOAD_KEYS = frozenset({"outcome", "channel", "turns"})
MAX_PAGE = 200
MAX_SKEW_MS = 24 * 60 * 60 * 1000
DAY_MS = 24 * 60 * 60 * 1000

SCHEMA = (
    (
        "CREATE TABLE IF NOT EXISTS session_state_events ("
        " sequence INTEGER PRIMARY KEY AUTOINCREMENT,"
        " dedupe_key TEXT UNIQUE,"
        " session_key TEXT NOT NULL,"
        " session_id TEXT,"
        " agent_id TEXT NOT NULL,"
        " kind TEXT NOT NULL,"
        " actor_type TEXT NOT NULL,"
        " actor_id TEXT,"
        " run_id TEXT,"
        " occurred_at INTEGER NOT NULL,"
        " summary TEXT NOT NULL,"
        " payload_json TEXT)"
    ),
    (
        "CREATE INDEX IF NOT EXISTS idx_session_state_events_session"
        " ON session_state_events (session_key, sequence DESC)"
    ),
    (
        "CREATE INDEX IF NOT EXISTS idx_session_state_events_occurred"
        " ON session_state_events (occurred_at DESC, sequence DESC)"
    ),
    (
        "CREATE TABLE IF NOT EXISTS session_state_heads ("
        " session_key TEXT NOT NULL,"
        " agent_id TEXT NOT NULL,"
        " last_sequence INTEGER NOT NULL,"
        " pruned_max_sequence INTEGER NOT NULL DEFAULT 0,"
        " updated_at INTEGER NOT NULL,"
        " PRIMARY KEY (session_key, agent_id))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS session_watch_cursors ("
        " watcher_session_key TEXT NOT NULL,"
        " target_session_key TEXT NOT NULL,"
        " last_seen_sequence INTEGER NOT NULL DEFAULT 0,"
        " notified_sequence INTEGER NOT NULL DEFAULT 0,"
        " material_sequence INTEGER NOT NULL DEFAULT 0,"
        " updated_at INTEGER NOT NULL,"
        " watcher_store_path TEXT,"
        " provenance TEXT,"
        " PRIMARY KEY (watcher_session_key, target_session_key))"
    ),
    (
        "CREATE INDEX IF NOT EXISTS idx_session_watch_cursors_target"
        " ON session_watch_cursors (target_session_key)"
    ),
)

_EVENT_COLUMNS = (
    "dedupe_key, session_key, session_id, agent_id, kind, actor_type, actor_id, run_id,"
    " occurred_at, summary, payload_json"
)
INSERT_EVENT = (
    f"INSERT INTO session_state_events ({_EVENT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT(dedupe_key) DO NOTHING"
)
SELECT_BY_DEDUPE = "SELECT sequence FROM session_state_events WHERE dedupe_key = ?"
UPSERT_HEAD = (
    "INSERT INTO session_state_heads (session_key, agent_id, last_sequence, updated_at)"
    " VALUES (?,?,?,?)"
    " ON CONFLICT(session_key, agent_id) DO UPDATE SET"
    " last_sequence = excluded.last_sequence, updated_at = excluded.updated_at"
)
UPDATE_CURSORS = (
    "UPDATE session_watch_cursors SET"
    " notified_sequence = CASE WHEN notified_sequence = last_seen_sequence"
    " THEN ?1 ELSE notified_sequence END,"
    " material_sequence = ?1, updated_at = ?2"
    " WHERE target_session_key = ?3 AND watcher_session_key IS NOT ?4"
    " RETURNING watcher_session_key, last_seen_sequence"
)
UPSERT_CURSOR = (
    "INSERT INTO session_watch_cursors (watcher_session_key, target_session_key,"
    " last_seen_sequence, notified_sequence, material_sequence, updated_at, provenance)"
    " VALUES (?1, ?2, ?3, ?3, ?3, ?4, 'explicit')"
    " ON CONFLICT(watcher_session_key, target_session_key) DO NOTHING"
)
# The restart sweep (SPEC §6.5) as one statement: re-freeze every open notice at M and stamp it,
# returning what the notices and the wakes need. Missing watchers are excluded by key (`json_each`
# of a JSON list, so the statement text, and its cache entry, never changes).
SELECT_OPEN_WATCHERS = (
    "SELECT DISTINCT watcher_session_key FROM session_watch_cursors"
    " WHERE material_sequence > last_seen_sequence"
)
SWEEP_CURSORS = (
    "UPDATE session_watch_cursors SET notified_sequence = material_sequence, updated_at = ?1"
    " WHERE material_sequence > last_seen_sequence"
    " AND watcher_session_key NOT IN (SELECT value FROM json_each(?2))"
    " RETURNING watcher_session_key, target_session_key, last_seen_sequence"
)
# SPEC §8 prune, in the reference's shape: stamp each affected head's watermark with the highest
# removed sequence (only raising it, never creating a head), delete; by age, then by the global cap;
# then expire cursors by `updated_at`.
_STAMP = (
    "UPDATE session_state_heads AS h SET pruned_max_sequence = d.top"
    " FROM (SELECT session_key, agent_id, MAX(sequence) AS top FROM session_state_events"
    " WHERE {where} GROUP BY session_key, agent_id) AS d"
    " WHERE h.session_key = d.session_key AND h.agent_id = d.agent_id AND d.top > h.pruned_max_sequence"
)
STAMP_BY_AGE = _STAMP.format(where="occurred_at < ?1")
DELETE_BY_AGE = "DELETE FROM session_state_events WHERE occurred_at < ?1"
CAP_THROUGH = "SELECT sequence FROM session_state_events ORDER BY sequence DESC LIMIT 1 OFFSET ?1"
STAMP_BY_CAP = _STAMP.format(where="sequence <= ?1")
DELETE_BY_CAP = "DELETE FROM session_state_events WHERE sequence <= ?1"
EXPIRE_CURSORS = "DELETE FROM session_watch_cursors WHERE updated_at < ?1"
SELECT_HEAD = (
    "SELECT last_sequence, pruned_max_sequence FROM session_state_heads"
    " WHERE session_key = ? AND agent_id = ?"
)
SELECT_PAGE = (
    "SELECT sequence, kind, actor_type, actor_id, run_id, occurred_at, summary, payload_json"
    " FROM session_state_events WHERE session_key = ? AND agent_id = ? AND sequence > ?"
    " ORDER BY sequence ASC LIMIT ?"
)
# Equivalent to MIN(sequence) but walks the (session_key, sequence) index and stops at the first
# row of the identity, instead of visiting every row of the key to check agent_id.
SELECT_EARLIEST = (
    "SELECT sequence FROM session_state_events WHERE session_key = ? AND agent_id = ?"
    " ORDER BY sequence ASC LIMIT 1"
)
REBUILD_HEADS = (
    "INSERT INTO session_state_heads (session_key, agent_id, last_sequence, updated_at)"
    " SELECT session_key, agent_id, MAX(sequence), ? FROM session_state_events"
    " WHERE true GROUP BY session_key, agent_id"
    " ON CONFLICT(session_key, agent_id) DO UPDATE SET"
    " last_sequence = MAX(last_sequence, excluded.last_sequence), updated_at = excluded.updated_at"
)


@dataclass(frozen=True, slots=True)
class PeerSignal:
    """One signal to load in bulk (the `record` arguments as a value)."""

    session_key: str
    agent_id: str
    kind: str
    actor_type: str
    summary: str
    actor_id: str | None = None
    run_id: str | None = None
    occurred_at: int | None = None
    payload: dict[str, object] | None = None
    dedupe_key: str | None = None
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class PeerRecorded:
    """What `record` returns: the sequence and the (watcher, last seen) of each notice to publish."""

    sequence: int
    notices: list[tuple[str, int]]
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class PeerSwept:
    """What `sweep` returns: the notices to re-publish and the watchers to wake (each once)."""

    notices: list[tuple[str, str, int]]
    woken: list[str]


@dataclass(frozen=True, slots=True)
class PeerPruned:
    """What `prune` returns."""

    signals_removed: int
    cursors_expired: int


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _payload_json(payload: dict[str, object] | None) -> str | None:
    return orjson.dumps(payload).decode() if payload else None


def _event(row: Sequence[Any]) -> dict[str, Any]:
    """A stored row as a §7.1 event (the reference's `rowToSessionStateEvent`, §7.1 fields only)."""
    sequence, kind, actor_type, actor_id, run_id, occurred_at, summary, payload_json = row
    out: dict[str, Any] = {
        "sequence": sequence,
        "kind": kind,
        "actorType": actor_type,
        "occurredAt": occurred_at,
        "summary": summary,
    }
    if actor_id:
        out["actorId"] = actor_id
    if run_id:
        out["runId"] = run_id
    if payload_json:
        payload = orjson.loads(payload_json)
        if isinstance(payload, dict):
            shown = {k: v for k, v in payload.items() if k in PUBLIC_PAYLOAD_KEYS}
            if shown:
                out["payload"] = shown
    return out


class PeerStore:
    """The reference gateway's signal log, heads and cursors on one SQLite connection."""

    def __init__(self, path: str | Path, *, synchronous: Synchronous = "normal") -> None:
        if synchronous not in ("normal", "full"):
            raise ValueError(f"synchronous must be 'normal' or 'full', not {synchronous!r}")
        self.path = Path(path)
        self._conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, cached_statements=256
        )
        conn = self._conn
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute("BEGIN IMMEDIATE")
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    # ------------------------------------------------------------------------------------ writes

    def watch(self, watcher_key: str, target_key: str, agent_id: str) -> None:
        """Register a cursor at the target's current head (h, h, h); an existing cursor is kept."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(SELECT_HEAD, (target_key, agent_id)).fetchone()
            head = row[0] if row is not None else 0
            conn.execute(UPSERT_CURSOR, (watcher_key, target_key, head, _now_ms()))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def watch_many(self, pairs: Iterable[tuple[str, str]], agent_id: str) -> None:
        """Register many (watcher, target) cursors at their targets' heads in ONE transaction (set-up)."""
        conn = self._conn
        now = _now_ms()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for watcher_key, target_key in pairs:
                row = conn.execute(SELECT_HEAD, (target_key, agent_id)).fetchone()
                head = row[0] if row is not None else 0
                conn.execute(UPSERT_CURSOR, (watcher_key, target_key, head, now))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def sweep(self, watcher_exists: Callable[[str], bool]) -> PeerSwept:
        """The restart sweep in ONE transaction: `N := M`, `updated_at := now` on every open cursor.

        Open cursors (`M > L`) of watchers that no longer exist are left alone. Returns the notices
        to (re)publish, (watcher, target, last seen), and the watchers to wake, each once.
        """
        now = _now_ms()
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            candidates = [row[0] for row in conn.execute(SELECT_OPEN_WATCHERS)]
            missing = [watcher for watcher in candidates if not watcher_exists(watcher)]
            notices: list[tuple[str, str, int]] = conn.execute(
                SWEEP_CURSORS, (now, orjson.dumps(missing).decode())
            ).fetchall()
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return PeerSwept(notices=notices, woken=list(dict.fromkeys(notice[0] for notice in notices)))

    def prune(self, *, days: float = 30, max_signals: int = 50_000) -> PeerPruned:
        """SPEC §8 in ONE transaction: by age, then the global cap (watermarks first), then cursors."""
        now = _now_ms()
        cutoff = now - int(days * DAY_MS)
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(STAMP_BY_AGE, (cutoff,))
            removed = conn.execute(DELETE_BY_AGE, (cutoff,)).rowcount
            row = conn.execute(CAP_THROUGH, (max_signals,)).fetchone()
            if row is not None:
                conn.execute(STAMP_BY_CAP, (row[0],))
                removed += conn.execute(DELETE_BY_CAP, (row[0],)).rowcount
            expired = conn.execute(EXPIRE_CURSORS, (cutoff,)).rowcount
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return PeerPruned(signals_removed=removed, cursors_expired=expired)

    def record(
        self,
        session_key: str,
        *,
        agent_id: str,
        kind: str,
        actor_type: str,
        summary: str,
        actor_id: str | None = None,
        run_id: str | None = None,
        occurred_at: int | None = None,
        payload: dict[str, object] | None = None,
        dedupe_key: str | None = None,
        session_id: str | None = None,
    ) -> PeerRecorded:
        """Record one signal in ONE write transaction: event row, head, the target's cursor rows."""
        now = _now_ms()
        occurred = now if occurred_at is None else min(max(occurred_at, now - MAX_SKEW_MS), now)
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            cursor = conn.execute(
                INSERT_EVENT,
                (
                    dedupe_key,
                    session_key,
                    session_id,
                    agent_id,
                    kind,
                    actor_type,
                    actor_id,
                    run_id,
                    occurred,
                    summary,
                    _payload_json(payload),
                ),
            )
            if cursor.rowcount == 0:  # a duplicate dedupe key: nothing changes
                existing = conn.execute(SELECT_BY_DEDUPE, (dedupe_key,)).fetchone()
                conn.execute("COMMIT")
                return PeerRecorded(sequence=existing[0], notices=[], duplicate=True)
            sequence: int = cursor.lastrowid  # type: ignore[assignment]
            conn.execute(UPSERT_HEAD, (session_key, agent_id, sequence, now))
            notices: list[tuple[str, int]] = []
            if kind in NOTIFYING_KINDS:
                notices = conn.execute(UPDATE_CURSORS, (sequence, now, session_key, actor_id)).fetchall()
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return PeerRecorded(sequence=sequence, notices=notices)

    def bulk_load(self, signals: Iterable[PeerSignal]) -> None:
        """Load many signals fast (benchmark set-up): one transaction, `executemany`, heads rebuilt."""
        now = _now_ms()
        rows = (
            (
                s.dedupe_key,
                s.session_key,
                s.session_id,
                s.agent_id,
                s.kind,
                s.actor_type,
                s.actor_id,
                s.run_id,
                now if s.occurred_at is None else s.occurred_at,
                s.summary,
                _payload_json(s.payload),
            )
            for s in signals
        )
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(INSERT_EVENT, rows)
            conn.execute(REBUILD_HEADS, (now,))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # ------------------------------------------------------------------------------------- reads

    def scan(self) -> int:
        """Read every head, cursor and signal, each signal mapped to its §7.1 event (`audit` context)."""
        conn = self._conn
        conn.execute(
            "SELECT session_key, agent_id, last_sequence, pruned_max_sequence FROM session_state_heads"
        )
        conn.execute("SELECT * FROM session_watch_cursors").fetchall()
        rows = conn.execute(
            "SELECT sequence, kind, actor_type, actor_id, run_id, occurred_at, summary, payload_json"
            " FROM session_state_events ORDER BY sequence"
        ).fetchall()
        return len([_event(row) for row in rows])

    def head(self, session_key: str, agent_id: str) -> int:
        """The state version alone (the reference's `getSessionStateVersion`)."""
        row = self._conn.execute(SELECT_HEAD, (session_key, agent_id)).fetchone()
        return row[0] if row is not None else 0

    def status(
        self,
        session_key: str,
        agent_id: str,
        changes_since: int | None = None,
        limit: int = MAX_PAGE,
    ) -> dict[str, Any]:
        """`session_status` as §7.1 JSON: the head and, with `changes_since`, the delta after it."""
        conn = self._conn
        head_row = conn.execute(SELECT_HEAD, (session_key, agent_id)).fetchone()
        head, watermark = head_row if head_row is not None else (0, 0)
        out: dict[str, Any] = {"sessionKey": session_key, "stateVersion": head}
        if changes_since is None:
            return out
        page = max(1, min(MAX_PAGE, limit))
        rows = conn.execute(SELECT_PAGE, (session_key, agent_id, changes_since, page + 1)).fetchall()
        first = conn.execute(SELECT_EARLIEST, (session_key, agent_id)).fetchone()
        earliest = first[0] if first is not None else (head + 1 if head > 0 else 0)
        out["stateChanges"] = {
            "events": [_event(row) for row in rows[:page]],
            "truncated": len(rows) > page,
            "earliestAvailableSequence": earliest,
            "historyGap": changes_since < watermark,
        }
        return out
