"""Write the stores in this folder with sessionwatch 0.1.0 (the release before cursor provenance).

Run it with that release's code on the path, once; its outputs are checked in as data, so the tests
open stores a previous release really wrote:

    python tests/data/release-0.1.0/generate.py <this folder> [postgresql://.../test]

It writes `store.sqlite` (a SQLite store), `history.jsonl` (an export) and, given a PostgreSQL URL,
`postgres.sql` (a plain dump of a schema that store wrote). Every write uses a fake clock, so the
history is the same on every run.
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

WATCHER = "agent:main:main"
OTHER = "agent:main:ops"
CHILD = "agent:main:subagent:fixer"
GROUP = "agent:main:telegram:group:42"


def fill(watch: sessionwatch.SessionWatch, clock: FakeClock) -> None:
    """Sessions, explicit watches, a spawn edge, notices open and drained, a reset and a deletion."""
    for key, kind in ((WATCHER, "main"), (OTHER, "main"), (GROUP, "group")):
        watch.upsert_session(key, kind=kind)
    watch.watch(WATCHER, GROUP)
    watch.watch(OTHER, GROUP)
    watch.watch(WATCHER, OTHER)
    watch.record_spawn(requester_key=WATCHER, child_key=CHILD, child_run_id="run-1")
    clock.advance(seconds=5)
    watch.record_human_message(GROUP, channel="telegram", dedupe_key="tg:1")
    watch.record_goal_changed(OTHER, summary="goal updated", actor=Actor.human("alice"))
    watch.record_run_terminal(child_key=CHILD, run_id="run-1", requester_key=WATCHER, outcome="ok")
    clock.advance(seconds=5)
    watch.drain(OTHER)
    watch.record_human_message(GROUP, channel="telegram", dedupe_key="tg:2")
    watch.record_compacted(OTHER, operation_id="compaction-1")
    watch.unwatch(WATCHER, OTHER)
    watch.upsert_session("agent:main:scratch", kind="main")
    watch.watch("agent:main:scratch", GROUP)
    watch.reset_session("agent:main:scratch")
    watch.delete_session("agent:main:scratch")


def main() -> None:
    out = Path(sys.argv[1])
    clock = FakeClock()
    sqlite = out / "store.sqlite"
    sqlite.unlink(missing_ok=True)
    with sessionwatch.open(f"sqlite:///{sqlite}", clock=clock) as watch:
        fill(watch, clock)
    exported = subprocess.run(
        [sys.executable, "-m", "sessionwatch", "export", "--db", f"sqlite:///{sqlite}"],
        check=True,
        capture_output=True,
    ).stdout
    (out / "history.jsonl").write_bytes(exported)
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
            (out / "postgres.sql").write_text(dump.replace(schema, "release_schema"))
        finally:
            with psycopg.connect(sys.argv[2], autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
