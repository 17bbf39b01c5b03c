"""The reference gateway's state tables (SPEC Appendix A), for tests that build one with `sqlite3`."""

from __future__ import annotations

REFERENCE_SCHEMA = """
CREATE TABLE session_state_events (
  sequence INTEGER PRIMARY KEY AUTOINCREMENT, dedupe_key TEXT UNIQUE, session_key TEXT NOT NULL,
  session_id TEXT, agent_id TEXT NOT NULL, kind TEXT NOT NULL, actor_type TEXT NOT NULL, actor_id TEXT,
  run_id TEXT, occurred_at INTEGER NOT NULL, summary TEXT NOT NULL, payload_json TEXT);
CREATE INDEX session_state_events_by_session ON session_state_events (session_key, sequence DESC);
CREATE INDEX session_state_events_by_time ON session_state_events (occurred_at DESC, sequence DESC);
CREATE TABLE session_state_heads (
  session_key TEXT NOT NULL, agent_id TEXT NOT NULL, last_sequence INTEGER NOT NULL,
  pruned_max_sequence INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL,
  PRIMARY KEY (session_key, agent_id));
CREATE TABLE session_watch_cursors (
  watcher_session_key TEXT NOT NULL, target_session_key TEXT NOT NULL,
  last_seen_sequence INTEGER NOT NULL DEFAULT 0, notified_sequence INTEGER NOT NULL DEFAULT 0,
  material_sequence INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL,
  watcher_store_path TEXT, provenance TEXT,
  PRIMARY KEY (watcher_session_key, target_session_key));
"""
