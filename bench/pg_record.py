"""`pg-record`, `pg-batch`: the record workloads on PostgreSQL against a raw `psycopg` peer.

The peer is the reference gateway's per-signal transaction (SPEC §15.1, Appendix A) written with
plain psycopg 3 on PostgreSQL, in a schema of its own: ONE transaction per signal that inserts the
event row (`sequence bigint GENERATED ALWAYS AS IDENTITY`, `ON CONFLICT (dedupe_key) DO NOTHING`),
upserts the head and applies the §6.1 material update to the target's registered cursor rows (one
`UPDATE ... RETURNING`, as `peer.py` does on SQLite). sessionwatch runs
`sessionwatch.open("postgresql://...?schema=...")` in another schema of its own. Both sides use
one connection each, autocommit mode with explicit `BEGIN`/`COMMIT`, and the server's
`synchronous_commit` (its default, `on`: every commit waits for its WAL flush).

- `pg-record`: one `human_direct_message` by a human on a target watched by `agent:main:main`
  (sessionwatch: `watch()`; peer: one cursor row). Ratio: sessionwatch ops/s / peer ops/s.
- `pg-batch`: sessionwatch's `record_many` of 100 such signals per call against the peer's 100
  per-signal transactions. Ratio: sessionwatch signals/s / peer signals/s.

Interleaved as every workload here (`harness.interleave`: warm-up, then rounds of peer block,
sessionwatch block; medians). SPEC §15.1 states its targets against the SQLite peer, so these
lines are context (no target of their own). Both schemas are dropped at the end. Without a
PostgreSQL server answering at `$SESSIONWATCH_PG_URL` (default
`postgresql://postgres@127.0.0.1:5432/test`) the script prints why and measures nothing.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import orjson

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/pg_record.py` finds `bench.*`

import sessionwatch
from bench.harness import (
    AGENT,
    CONTEXT,
    SUMMARY,
    TARGET,
    WATCHER,
    Mode,
    Result,
    interleave,
    parse_mode,
    print_table,
    throughput_result,
    write_results,
)
from bench.peer import MAX_SKEW_MS, NOTIFYING_KINDS
from sessionwatch import Actor, SessionWatch, SignalInput, SignalKind

NAME = "pg_record"
BATCH = 100
PG_URL: Final = os.environ.get("SESSIONWATCH_PG_URL") or "postgresql://postgres@127.0.0.1:5432/test"
PROBE_TIMEOUT_S: Final = 3

_IMPORT_PROBLEM = ""
try:
    import psycopg
    import psycopg.sql
except ImportError as exc:  # the optional `postgres` extra: `run` says so and measures nothing
    psycopg = None  # type: ignore[assignment]
    _IMPORT_PROBLEM = str(exc).splitlines()[0]

# ------------------------------------------------------------------------------ the psycopg peer

SCHEMA = (
    (
        "CREATE TABLE session_state_events ("
        " sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
        " dedupe_key text UNIQUE,"
        " session_key text NOT NULL,"
        " session_id text,"
        " agent_id text NOT NULL,"
        " kind text NOT NULL,"
        " actor_type text NOT NULL,"
        " actor_id text,"
        " run_id text,"
        " occurred_at bigint NOT NULL,"
        " summary text NOT NULL,"
        " payload_json text)"
    ),
    "CREATE INDEX idx_session_state_events_session ON session_state_events (session_key, sequence DESC)",
    (
        "CREATE INDEX idx_session_state_events_occurred"
        " ON session_state_events (occurred_at DESC, sequence DESC)"
    ),
    (
        "CREATE TABLE session_state_heads ("
        " session_key text NOT NULL,"
        " agent_id text NOT NULL,"
        " last_sequence bigint NOT NULL,"
        " pruned_max_sequence bigint NOT NULL DEFAULT 0,"
        " updated_at bigint NOT NULL,"
        " PRIMARY KEY (session_key, agent_id))"
    ),
    (
        "CREATE TABLE session_watch_cursors ("
        " watcher_session_key text NOT NULL,"
        " target_session_key text NOT NULL,"
        " last_seen_sequence bigint NOT NULL DEFAULT 0,"
        " notified_sequence bigint NOT NULL DEFAULT 0,"
        " material_sequence bigint NOT NULL DEFAULT 0,"
        " updated_at bigint NOT NULL,"
        " watcher_store_path text,"
        " provenance text,"
        " PRIMARY KEY (watcher_session_key, target_session_key))"
    ),
    # Not in Appendix A (as in `peer.py`): the per-signal cursor update is an index lookup.
    "CREATE INDEX idx_session_watch_cursors_target ON session_watch_cursors (target_session_key)",
)

INSERT_EVENT = (
    "INSERT INTO session_state_events (dedupe_key, session_key, session_id, agent_id, kind,"
    " actor_type, actor_id, run_id, occurred_at, summary, payload_json)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (dedupe_key) DO NOTHING RETURNING sequence"
)
SELECT_BY_DEDUPE = "SELECT sequence FROM session_state_events WHERE dedupe_key = %s"
UPSERT_HEAD = (
    "INSERT INTO session_state_heads (session_key, agent_id, last_sequence, updated_at)"
    " VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (session_key, agent_id) DO UPDATE SET"
    " last_sequence = excluded.last_sequence, updated_at = excluded.updated_at"
)
UPDATE_CURSORS = (
    "UPDATE session_watch_cursors SET"
    " notified_sequence = CASE WHEN notified_sequence = last_seen_sequence"
    " THEN %(seq)s ELSE notified_sequence END,"
    " material_sequence = %(seq)s, updated_at = %(now)s"
    " WHERE target_session_key = %(target)s AND watcher_session_key IS DISTINCT FROM %(actor)s"
    " RETURNING watcher_session_key, last_seen_sequence"
)
SELECT_HEAD = "SELECT last_sequence FROM session_state_heads WHERE session_key = %s AND agent_id = %s"
UPSERT_CURSOR = (
    "INSERT INTO session_watch_cursors (watcher_session_key, target_session_key,"
    " last_seen_sequence, notified_sequence, material_sequence, updated_at, provenance)"
    " VALUES (%(watcher)s, %(target)s, %(head)s, %(head)s, %(head)s, %(now)s, 'explicit')"
    " ON CONFLICT (watcher_session_key, target_session_key) DO NOTHING"
)
SELECT_MATERIAL = (
    "SELECT material_sequence FROM session_watch_cursors"
    " WHERE watcher_session_key = %s AND target_session_key = %s"
)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class PgPeerStore:
    """The reference gateway's signal log, heads and cursors on one psycopg connection."""

    def __init__(self, conninfo: str, schema: str) -> None:
        self._conn: psycopg.Connection[tuple[Any, ...]] = psycopg.connect(
            conninfo,
            autocommit=True,
            connect_timeout=PROBE_TIMEOUT_S,
            options=f"-c search_path={schema}",
            application_name="sessionwatch-bench-peer",
        )
        with self._conn.transaction():
            self._conn.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
            for statement in SCHEMA:
                self._conn.execute(statement)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def watch(self, watcher_key: str, target_key: str, agent_id: str) -> None:
        """Register a cursor at the target's current head (h, h, h); an existing cursor is kept."""
        conn = self._conn
        with conn.transaction():
            row = conn.execute(SELECT_HEAD, (target_key, agent_id)).fetchone()
            head = row[0] if row is not None else 0
            conn.execute(
                UPSERT_CURSOR, {"watcher": watcher_key, "target": target_key, "head": head, "now": _now_ms()}
            )

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
    ) -> tuple[int, list[tuple[str, int]]]:
        """Record one signal in ONE transaction; returns the sequence and the notices' (watcher, L)."""
        now = _now_ms()
        occurred = now if occurred_at is None else min(max(occurred_at, now - MAX_SKEW_MS), now)
        conn = self._conn
        conn.execute("BEGIN", prepare=False)
        try:
            row = conn.execute(
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
                    orjson.dumps(payload).decode() if payload else None,
                ),
                prepare=True,
            ).fetchone()
            if row is None:  # a duplicate dedupe key: nothing changes
                existing = conn.execute(SELECT_BY_DEDUPE, (dedupe_key,), prepare=True).fetchone()
                conn.execute("COMMIT", prepare=False)
                assert existing is not None, "a conflicting dedupe key names a stored row"
                return int(existing[0]), []
            sequence = int(row[0])
            conn.execute(UPSERT_HEAD, (session_key, agent_id, sequence, now), prepare=True)
            notices: list[tuple[str, int]] = []
            if kind in NOTIFYING_KINDS:
                notices = conn.execute(
                    UPDATE_CURSORS,
                    {"seq": sequence, "now": now, "target": session_key, "actor": actor_id},
                    prepare=True,
                ).fetchall()
        except BaseException:
            conn.execute("ROLLBACK", prepare=False)
            raise
        conn.execute("COMMIT", prepare=False)
        return sequence, notices

    def head(self, session_key: str, agent_id: str) -> int:
        """The state version."""
        row = self._conn.execute(SELECT_HEAD, (session_key, agent_id)).fetchone()
        return int(row[0]) if row is not None else 0

    def material(self, watcher_key: str, target_key: str) -> int | None:
        """A cursor's material sequence M."""
        row = self._conn.execute(SELECT_MATERIAL, (watcher_key, target_key)).fetchone()
        return int(row[0]) if row is not None else None


# -------------------------------------------------------------------------------------- set-up


def postgres_problem() -> str | None:
    """Why no PostgreSQL server can be used at `PG_URL`, or None when one answers."""
    if psycopg is None:
        return f"psycopg cannot be imported ({_IMPORT_PROBLEM}; the postgres extra)"
    try:
        with psycopg.connect(PG_URL, connect_timeout=PROBE_TIMEOUT_S) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"no PostgreSQL server answers at {PG_URL}: {type(exc).__name__}: {' '.join(str(exc).split())}"
    return None


def with_schema(url: str, schema: str) -> str:
    """`url` with `?schema=` set (sessionwatch's PostgreSQL store URL)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query["schema"] = schema
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


@contextmanager
def schemas(*labels: str) -> Iterator[list[str]]:
    """New schema names, one per label; every one of them is dropped (CASCADE) afterwards."""
    names = [f"bench_{label}_{uuid.uuid4().hex[:12]}" for label in labels]
    try:
        yield names
    finally:
        with psycopg.connect(PG_URL, autocommit=True, connect_timeout=PROBE_TIMEOUT_S) as admin:
            for name in names:
                admin.execute(
                    psycopg.sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(psycopg.sql.Identifier(name))
                )


def _server_setting() -> str:
    """The server's `synchronous_commit`, which both sides use (the `setting` column)."""
    with psycopg.connect(PG_URL, connect_timeout=PROBE_TIMEOUT_S) as conn:
        row = conn.execute("SHOW synchronous_commit").fetchone()
    return f"pg-{row[0]}" if row is not None else "pg"


@contextmanager
def stores(peer_schema: str, sw_schema: str) -> Iterator[tuple[PgPeerStore, SessionWatch]]:
    """The peer and sessionwatch, each in its own schema, the target watched by `WATCHER` on both."""
    peer = PgPeerStore(PG_URL, peer_schema)
    try:
        peer.watch(WATCHER, TARGET, AGENT)
        with sessionwatch.open(with_schema(PG_URL, sw_schema)) as watch:
            watch.upsert_session(TARGET, spawned_by=WATCHER)
            assert watch.watch(WATCHER, TARGET), "the watcher must be registered"
            yield peer, watch
    finally:
        peer.close()


def _check_cursors(peer: PgPeerStore, watch: SessionWatch) -> dict[str, int]:
    """Both sides moved the one cursor on every signal; returns the heads."""
    peer_head = peer.head(TARGET, AGENT)
    sw_head = watch.session_status(TARGET).state_version
    assert peer.material(WATCHER, TARGET) == peer_head, "every peer signal must move the cursor"
    cursor = watch.cursor(WATCHER, TARGET)
    assert cursor is not None, "the watcher must hold a cursor"
    assert cursor.material == sw_head, "every signal must move the watcher's cursor"
    return {"peer_head": peer_head, "sw_head": sw_head}


# ------------------------------------------------------------------------------------ workloads


def run_record(mode: Mode, setting: str) -> Result:
    """One signal per call on both sides."""
    kind = SignalKind.HUMAN_DIRECT_MESSAGE
    human = Actor.human()
    with (
        schemas("pg_peer", "pg_sw") as (peer_schema, sw_schema),
        stores(peer_schema, sw_schema) as (peer, watch),
    ):

        def peer_call() -> int:
            peer.record(TARGET, agent_id=AGENT, kind=kind.value, actor_type="human", summary=SUMMARY)
            return 1

        def sw_call() -> int:
            watch.record(TARGET, kind=kind, actor=human, summary=SUMMARY)
            return 1

        rounds = interleave(peer_call, sw_call, mode)
        heads = _check_cursors(peer, watch)
    return throughput_result("pg-record", setting, "ops/s", rounds, target=CONTEXT, extra=heads)


def run_batch(mode: Mode, setting: str) -> Result:
    """`record_many` of 100 against 100 per-signal transactions."""
    kind = SignalKind.HUMAN_DIRECT_MESSAGE
    inputs = [
        SignalInput(session_key=TARGET, kind=kind, actor=Actor.human(), summary=SUMMARY) for _ in range(BATCH)
    ]
    with (
        schemas("pg_peer", "pg_sw") as (peer_schema, sw_schema),
        stores(peer_schema, sw_schema) as (peer, watch),
    ):

        def peer_call() -> int:
            for _ in range(BATCH):
                peer.record(TARGET, agent_id=AGENT, kind=kind.value, actor_type="human", summary=SUMMARY)
            return BATCH

        def sw_call() -> int:
            return len(watch.record_many(inputs))

        rounds = interleave(peer_call, sw_call, mode)
        heads = _check_cursors(peer, watch)
    return throughput_result(
        "pg-batch", setting, "signals/s", rounds, target=CONTEXT, extra={"batch": BATCH, **heads}
    )


def run(mode: Mode) -> list[Result]:
    """Both workloads, or nothing (with the reason printed) when no PostgreSQL server answers."""
    problem = postgres_problem()
    if problem is not None:
        print(f"{NAME}: skipped: {problem} (set SESSIONWATCH_PG_URL)", flush=True)
        return []
    setting = _server_setting()
    return [run_record(mode, setting), run_batch(mode, setting)]


def main() -> None:
    """Print this workload's table and write `bench/results/pg_record.json`."""
    mode = parse_mode(__doc__ or NAME)
    results = run(mode)
    if not results:
        return
    print_table(results)
    print("ratio: sessionwatch rate / peer rate (bigger is better); context lines, no SPEC target")
    write_results(NAME, results, mode)


if __name__ == "__main__":
    main()
