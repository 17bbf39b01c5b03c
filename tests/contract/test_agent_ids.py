"""Agent ids in keys, read as the reference gateway reads them: on every store, through both façades.

`agent:Main:worker` is agent `main`'s session and `agent:my agent:x` is `my-agent`'s: the key stays as
written, its agent id is normalized (trimmed, lowercased, other characters folded into `-`), wherever
a key is read: records, producers, watches and notices, status and lists, the restart sweep, the
ambient watch and the creation digest, which both name `agent:<agentId>:main`. A key whose agent id
is blank (`agent:  :x`) names no agent: it is refused, naming the field, and nothing is written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from reference_gateway import REFERENCE_SCHEMA

import sessionwatch
from sessionwatch import Actor, InvalidQuery, InvalidSignal, SessionWatch, SignalKind, UnknownSession
from sessionwatch.adapters.history.openclaw import import_openclaw
from sessionwatch.testing import FakeClock

NOW_MS = 1_796_040_000_000


def goal(watch: SessionWatch, key: str, agent_id: str | None = None) -> int:
    signal = watch.record(
        key, kind=SignalKind.GOAL_CHANGED, actor=Actor.system(), summary="goal updated", agent_id=agent_id
    )
    return signal.sequence


def test_a_key_that_writes_its_agent_id_capitalized_is_that_agents_session(watch: SessionWatch) -> None:
    signal = watch.record(
        "agent:Main:worker", kind=SignalKind.GOAL_CHANGED, actor=Actor.system(), summary="goal updated"
    )
    assert (signal.session_key, signal.agent_id) == ("agent:Main:worker", "main")
    for agent_id in (None, "main", "Main"):
        assert watch.session_status("agent:Main:worker", agent_id=agent_id).state_version == signal.sequence
    assert [(row.session_key, row.agent_id) for row in watch.sessions_list()] == [
        ("agent:Main:worker", "main")
    ]
    with pytest.raises(UnknownSession):  # the key itself is kept as written: this is another session
        watch.session_status("agent:main:worker")
    with pytest.raises(InvalidQuery) as contradicted:
        watch.session_status("agent:Main:worker", agent_id="ops")
    assert contradicted.value.field == "agent_id"


@pytest.mark.parametrize(
    ("key", "agent_id"),
    [
        ("agent:my agent:x", "my-agent"),
        ("agent: ops :y", "ops"),
        ("AGENT:Data.Team:z", "data-team"),
        ("agent:--Research--:w", "research"),
    ],
)
def test_an_agent_id_with_spaces_or_other_characters_is_normalized(
    watch: SessionWatch, key: str, agent_id: str
) -> None:
    sequence = goal(watch, key)
    assert [(row.session_key, row.agent_id) for row in watch.sessions_list()] == [(key, agent_id)]
    assert watch.session_status(key).state_version == sequence
    assert goal(watch, "global", agent_id=agent_id) > sequence  # an id a key yields is a valid agent_id=


@pytest.mark.parametrize("key", ["agent:  :x", "agent:\u3000:x"])
def test_a_key_whose_agent_id_is_blank_is_refused_naming_the_field(watch: SessionWatch, key: str) -> None:
    with pytest.raises(InvalidSignal) as refused:
        goal(watch, key)
    assert refused.value.field == "session_key"
    assert watch.record_goal_changed(key, summary="goal updated") is None
    with pytest.raises(InvalidSignal) as target:
        watch.watch("agent:main:main", key)
    assert target.value.field == "target_key"
    with pytest.raises(InvalidQuery) as status:
        watch.session_status(key)
    assert status.value.field == "session_key"
    assert watch.sessions_list() == []


def test_a_watcher_written_capitalized_holds_its_cursors_and_the_sweep_finds_it(watch: SessionWatch) -> None:
    watch.upsert_session("agent:Main:boss")
    assert watch.watch("agent:Main:boss", "agent:Ops:worker")
    cursor = watch.cursor("agent:Main:boss", "agent:Ops:worker")
    assert cursor is not None
    assert cursor.target_agent_id == "ops"
    sequence = goal(watch, "agent:Ops:worker")
    [notice] = watch.pending_notices("agent:Main:boss")
    assert (notice.target, notice.target_agent_id, notice.last_seen) == ("agent:Ops:worker", "ops", 0)
    assert sequence > 0
    report = watch.sweep()
    assert (report.republished, report.skipped_missing_watchers) == (1, 0)


def test_a_group_whose_key_capitalizes_its_agent_is_watched_by_that_agents_main_session(
    watch: SessionWatch,
) -> None:
    group = "agent:Main:telegram:group:9"
    watch.upsert_session(group, kind="group")
    watch.record_human_message(group, channel="telegram")
    assert watch.cursor("agent:Main:main", group) is None
    ambient = watch.cursor("agent:main:main", group)
    assert ambient is not None
    assert ambient.provenance == "ambient"


def test_the_creation_digest_goes_to_the_main_session_of_the_normalized_agent(store_url: str) -> None:
    with sessionwatch.open(store_url, clock=FakeClock(), notify_on_create=True) as watch:
        assert watch.record_session_created("agent:Main:helper", actor=Actor.system()) is not None
        assert watch.record_session_created("global", actor=Actor.system(), agent_id="Main") is not None
        assert watch.pending_notices("agent:Main:main") == []
        [digest] = watch.drain("agent:main:main")
        assert digest.text.splitlines()[1:] == ["agent:Main:helper", "global"]


def test_a_reference_database_whose_keys_capitalize_their_agent_imports_under_its_agent_ids(
    store_url: str, tmp_path: Path
) -> None:
    """The reference stores `agent:Main:worker` under agent `main`: rows and cursors make one session."""
    path = tmp_path / "openclaw-state.db"
    with sqlite3.connect(path) as raw:
        raw.executescript(REFERENCE_SCHEMA)
        raw.execute(
            "INSERT INTO session_state_events (sequence, session_key, agent_id, kind, actor_type,"
            " occurred_at, summary) VALUES (1, 'agent:Main:worker', 'main', 'goal_changed', 'system', ?,"
            " 'goal updated')",
            (NOW_MS,),
        )
        raw.execute(
            "INSERT INTO session_state_heads VALUES ('agent:Main:worker', 'main', 1, 0, ?)", (NOW_MS,)
        )
        raw.execute(
            "INSERT INTO session_watch_cursors VALUES ('agent:Main:boss', 'agent:Main:worker', 0, 1, 1, ?,"
            " NULL, 'explicit')",
            (NOW_MS,),
        )
    with sessionwatch.open(store_url, clock=FakeClock(), sweep_on_open=False) as watch:
        report = import_openclaw(watch.store, path, now_ms=NOW_MS)
        assert (report.signals, report.cursors, report.unresolved_cursors) == (1, 1, ())
        assert [(row.session_key, row.agent_id) for row in watch.sessions_list()] == [
            ("agent:Main:boss", "main"),
            ("agent:Main:worker", "main"),
        ]
        [notice] = watch.pending_notices("agent:Main:boss")
        assert (notice.target, notice.target_agent_id, notice.last_seen) == ("agent:Main:worker", "main", 0)
        assert_audit_clean(watch)
