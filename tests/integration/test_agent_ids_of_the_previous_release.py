"""Stores whose keys wrote their agent ids in other forms, written by release 0.1.0, read as now.

Release 0.1.0 stored an agent-qualified key's agent id as its second part was written
(`agent:Main:worker` under `Main`, `agent:my agent:x` under `my agent`, `agent: ops :y` under
` ops `, `agent:  :z` under `'  '`). Agent ids are normalized now, as the reference gateway does,
so the same calls reach `main`, `my-agent` and `ops`. `tests/data/release-0.1.0/agent-ids.*` hold
what that release's code wrote (`generate_agent_ids.py` says how): opening one migrates its rows,
its stored events read under the new ids, and every session, cursor, notice and link is found
where a call naming its key looks for it, with its head, its pending notice and its history.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from auditing import assert_audit_clean
from stores import (
    PG_URL,
    drop_schema,
    fresh_store_url,
    needs_postgres,
    new_schema,
    require_postgres,
    with_query,
)

import sessionwatch
from sessionwatch import Actor, InvalidSignal, SessionWatch, SignalKind
from sessionwatch.adapters.history.jsonl import import_history
from sessionwatch.testing import FakeClock

DATA = Path(__file__).parent.parent / "data" / "release-0.1.0"
MAIN = "agent:Main:main"
WORKER = "agent:Main:worker"
CHILD = "agent:Main:subagent:kid"
SPACED = "agent:my agent:x"
PADDED = "agent: ops :y"
BLANK = "agent:  :z"
OPS_MAIN = "agent:ops:main"


def check_read_as_now(watch: SessionWatch) -> None:
    """The old store's sessions under their normalized agent ids, history and notices intact."""
    assert_audit_clean(watch)
    listed = {(row.session_key, row.agent_id): row.state_version for row in watch.sessions_list()}
    assert listed == {
        (BLANK, "main"): 4,
        (PADDED, "ops"): 11,
        (MAIN, "main"): None,
        (CHILD, "main"): 10,
        (WORKER, "main"): 7,
        (SPACED, "my-agent"): 8,
        (OPS_MAIN, "ops"): None,
        ("global", "Main"): 5,  # a bare key's agent id was given, and is kept as given
    }
    changes = watch.session_status(WORKER, changes_since=3).state_changes
    assert changes is not None
    assert [(c.sequence, c.summary) for c in changes.events] == [(7, "goal updated")]
    assert watch.session_status("global", agent_id="Main").state_version == 5
    assert [(n.target, n.target_agent_id, n.last_seen) for n in watch.pending_notices(MAIN)] == [
        (CHILD, "main", 0),
        (WORKER, "main", 3),
        (SPACED, "my-agent", 0),
    ]
    assert [(n.target, n.target_agent_id, n.last_seen) for n in watch.pending_notices(OPS_MAIN)] == [
        (PADDED, "ops", 6)
    ]
    link = watch.upstream_link(WORKER)
    assert link is not None
    assert (link.session_key, link.agent_id) == (WORKER, "main")
    with pytest.raises(InvalidSignal) as refused:  # a blank agent id is no agent id: the key is refused
        watch.record(BLANK, kind=SignalKind.COMPACTED, actor=Actor.system(), summary="session compacted")
    assert refused.value.field == "session_key"


def check_history_goes_on(watch: SessionWatch) -> None:
    """New signals continue each old session: the same head, the same open notice, one stream."""
    later = watch.record_goal_changed(WORKER, summary="goal cleared", actor=Actor.human("bob"))
    assert later is not None
    assert later.agent_id == "main"
    assert watch.session_status(WORKER).state_version == later.sequence
    [notice] = [n for n in watch.pending_notices(MAIN) if n.target == WORKER]
    assert notice.last_seen == 3  # still the one notice, its text byte for byte as before
    assert watch.watch(OPS_MAIN, PADDED)  # the cursor is found, not made again
    cursor = watch.cursor(OPS_MAIN, PADDED)
    assert cursor is not None
    assert (cursor.last_seen, cursor.notified, cursor.material) == (6, 9, 11)
    assert_audit_clean(watch)
    clock = watch.clock
    assert isinstance(clock, FakeClock)
    clock.advance(days=31)
    assert watch.prune(force=True).signals_removed > 0
    assert_audit_clean(watch)


def test_a_sqlite_store_of_the_previous_release_reads_its_agent_ids_as_now(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    shutil.copyfile(DATA / "agent-ids.sqlite", path)
    with sessionwatch.open(f"sqlite:///{path}", clock=FakeClock(), sweep_on_open=False) as watch:
        check_read_as_now(watch)
        check_history_goes_on(watch)
    with sessionwatch.open(f"sqlite:///{path}", clock=FakeClock()) as reopened:
        assert_audit_clean(reopened)
        assert reopened.session_status(WORKER).state_version > 7


@pytest.fixture
def previous_postgres_schema() -> Iterator[str]:
    """A schema loaded from the dump of the previous release's PostgreSQL store, dropped afterwards."""
    require_postgres()
    schema = new_schema("sw_release_010_ids")
    text = (DATA / "agent-ids.sql").read_text().replace("release_schema", schema)
    dump = "\n".join(line for line in text.splitlines() if not line.startswith("\\"))  # psql's own commands
    try:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(dump.encode())
        yield schema
    finally:
        drop_schema(schema)


@needs_postgres
def test_a_postgres_store_of_the_previous_release_reads_its_agent_ids_as_now(
    previous_postgres_schema: str,
) -> None:
    url = with_query(PG_URL, schema=previous_postgres_schema)
    with sessionwatch.open(url, clock=FakeClock(), sweep_on_open=False) as watch:
        check_read_as_now(watch)
        check_history_goes_on(watch)


def test_an_export_of_the_previous_release_imports_its_agent_ids_as_now(
    store_kind: str, tmp_path: Path
) -> None:
    lines = (DATA / "agent-ids.jsonl").read_text().splitlines()
    with fresh_store_url(store_kind, tmp_path) as url, sessionwatch.open(url, clock=FakeClock()) as watch:
        import_history(watch.store, lines)
        check_read_as_now(watch)
        check_history_goes_on(watch)
