"""Write stores whose keys write their agent ids as 0.1.0 kept them: `Main`, `my agent`, ` ops `.

Run it once with release 0.1.0's code on the path (the tree of the commit that added this folder's
first data, exported into a directory named `sessionwatch`); its outputs are checked in as data:

    PYTHONPATH=<dir holding that sessionwatch> python tests/data/release-0.1.0/generate_agent_ids.py \
        <this folder> [postgresql://.../test]

It writes `agent-ids.sqlite` (a SQLite store), `agent-ids.jsonl` (its export) and, given a
PostgreSQL URL, `agent-ids.sql` (a plain dump of a schema that store wrote). That release stored an
agent-qualified key's agent id as its second part was written, and took `agent:  :z` with the
agent id `'  '`. Every write uses a fake clock, so the history is the same on every run.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg

import sessionwatch
from sessionwatch import Actor
from sessionwatch.testing import FakeClock

MAIN = "agent:Main:main"
WORKER = "agent:Main:worker"
CHILD = "agent:Main:subagent:kid"
SPACED = "agent:my agent:x"
PADDED = "agent: ops :y"
BLANK = "agent:  :z"
OPS_MAIN = "agent:ops:main"


def fill(watch: sessionwatch.SessionWatch, clock: FakeClock) -> None:
    """Watches, a spawn, notices open and drained, an upstream link, a prune, a bare key's own agent id."""
    for key in (MAIN, WORKER, SPACED, PADDED, OPS_MAIN):
        watch.upsert_session(key)
    watch.record_spawn(requester_key=MAIN, child_key=CHILD, child_run_id="run-1")
    watch.link_upstream(
        WORKER,
        catalog_id="claude-code",
        host_id="laptop",
        thread_id="t-1",
        upstream_kind="claude-code",
        upstream_ref={"path": "/home/dev/.claude/projects/app/t-1.jsonl"},
        marker={"offset": 0},
    )
    watch.record_goal_changed(WORKER, summary="goal created", actor=Actor.human("alice"))
    watch.record_compacted(BLANK, operation_id="op-1")
    watch.record_goal_changed("global", summary="goal created", agent_id="Main")
    clock.advance(days=31)  # past the retention window: the prune below removes what came before
    watch.watch(MAIN, WORKER)
    watch.watch(MAIN, SPACED)
    watch.watch(OPS_MAIN, PADDED)
    watch.record_goal_changed(PADDED, summary="goal created")
    watch.prune(force=True)  # its checkpoint holds every session, cursor and link
    clock.advance(minutes=5)
    watch.record_goal_changed(WORKER, summary="goal updated", actor=Actor.human("alice"))
    watch.record_human_message(SPACED, channel="slack")
    watch.record_goal_changed(PADDED, summary="goal updated")
    watch.record_human_message(CHILD, channel="telegram")
    watch.drain(OPS_MAIN)
    watch.record_goal_changed(PADDED, summary="goal cleared")


def main() -> None:
    out = Path(sys.argv[1])
    clock = FakeClock()
    sqlite = out / "agent-ids.sqlite"
    sqlite.unlink(missing_ok=True)
    with sessionwatch.open(f"sqlite:///{sqlite}", clock=clock) as watch:
        fill(watch, clock)
    exported = subprocess.run(
        [sys.executable, "-m", "sessionwatch", "export", "--db", f"sqlite:///{sqlite}"],
        check=True,
        capture_output=True,
    ).stdout
    (out / "agent-ids.jsonl").write_bytes(exported)
    if len(sys.argv) > 2:
        schema = f"release_010_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(sys.argv[2], autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        try:
            clock = FakeClock()
            with sessionwatch.open(f"{sys.argv[2]}?schema={schema}", clock=clock) as watch:
                fill(watch, clock)
            dump = subprocess.run(
                ["pg_dump", "--no-owner", "--no-privileges", "--inserts", "--schema", schema, sys.argv[2]],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            (out / "agent-ids.sql").write_text(dump.replace(schema, "release_schema"))
        finally:
            with psycopg.connect(sys.argv[2], autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
