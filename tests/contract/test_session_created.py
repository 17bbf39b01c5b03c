"""The `created` kind and the main session's creation digest, on every store and through both façades.

`created` is log-only: it opens no cursor notice and wakes nobody. With `notify_on_create=True`,
each creation is also noted on its agent's main session's digest: one bounded notice (the newest
entries within 8,192 characters) that the main session's next `drain` returns and acknowledges. The
digest is stored as events, so it survives a restart, passes the audit, and moves with an export.
"""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from auditing import assert_audit_clean
from fakes import ProbingWaker
from stores import FILE_STORES, admin, fresh_store_url

import sessionwatch
from sessionwatch import Actor, InvalidQuery, Retention, SessionWatch, SignalKind
from sessionwatch.adapters.history.jsonl import export_history, import_history
from sessionwatch.domain.digest import DIGEST_HEADER, DIGEST_LIMIT
from sessionwatch.testing import FakeClock

MAIN = "agent:main:main"
COORDINATOR = "agent:main:coordinator"
CHILD = "agent:main:subagent:child"


@pytest.fixture
def noting(store_url: str, clock: FakeClock, waker: ProbingWaker) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store of each kind, with creations noted on the main digest."""
    with sessionwatch.open(store_url, clock=clock, waker=waker, notify_on_create=True) as opened:
        yield opened


def create(watch: SessionWatch, key: str, session_id: str | None = None, *, internal: bool = False) -> int:
    signal = watch.record_session_created(key, actor=Actor.system(), session_id=session_id, internal=internal)
    assert signal is not None
    return signal.sequence


def digest_text(*keys: str) -> str:
    return "\n".join((DIGEST_HEADER, *keys))


def test_a_created_signal_says_session_created_and_dedupes_by_agent_key_and_session_id(
    watch: SessionWatch,
) -> None:
    first = watch.record_session_created(CHILD, actor=Actor.agent(MAIN), session_id="s-1")
    assert first is not None
    assert (first.kind, first.summary, first.dedupe_key) == (
        SignalKind.CREATED,
        "session created",
        f"created:main:{CHILD}:s-1",
    )
    again = watch.record_session_created(CHILD, actor=Actor.agent(MAIN), session_id="s-1")
    assert again is not None
    assert again.sequence == first.sequence
    bare = watch.record_session_created("worker", actor=Actor.system(), agent_id="ops")
    assert bare is not None
    assert bare.dedupe_key == "created:ops:worker:"


def test_a_created_signal_with_a_bad_key_or_actor_records_nothing(watch: SessionWatch) -> None:
    assert watch.record_session_created("agent:broken", actor=Actor.system()) is None
    assert watch.record_session_created(CHILD, actor="system") is None  # type: ignore[arg-type]
    assert watch.record_session_created("worker", actor=Actor.system()) is None  # a bare key needs its agent
    assert watch.sessions_list() == []


def test_a_created_signal_is_log_only_it_opens_no_notice_and_wakes_nobody(
    noting: SessionWatch, waker: ProbingWaker
) -> None:
    noting.upsert_session(CHILD)
    assert noting.watch(COORDINATOR, CHILD)
    head = noting.session_status(CHILD).state_version
    sequence = create(noting, CHILD, "s-1")
    cursor = noting.cursor(COORDINATOR, CHILD)
    assert cursor is not None
    assert (cursor.last_seen, cursor.notified) == (head, head)
    assert noting.pending_notices(COORDINATOR) == []
    assert waker.calls == []
    status = noting.session_status(CHILD, changes_since=0)
    assert status.state_changes is not None
    assert [(c.sequence, c.kind, c.summary) for c in status.state_changes.events] == [
        (sequence, SignalKind.CREATED, "session created")
    ]


def test_a_created_session_is_registered_so_the_restart_sweep_wakes_it_as_a_watcher(
    store_url: str, clock: FakeClock, waker: ProbingWaker
) -> None:
    """A creation registers the session with its session id: the sweep finds it as an existing watcher."""
    with sessionwatch.open(store_url, clock=clock, waker=waker) as watch:
        create(watch, COORDINATOR, "s-1")
        entry = watch.registry_entry(COORDINATOR)
        assert entry is not None
        assert entry.session_id == "s-1"
        assert watch.watch(COORDINATOR, CHILD)
        watch.record(CHILD, kind=SignalKind.GOAL_CHANGED, actor=Actor.human(), summary="goal updated")
        waker.calls.clear()
        report = watch.sweep()
        assert (report.republished, report.skipped_missing_watchers) == (1, 0)
        assert report.woken == (COORDINATOR,)
        assert waker.calls == [(COORDINATOR, f"session-state:{CHILD}")]


def test_without_notify_on_create_a_creation_leaves_no_digest(watch: SessionWatch) -> None:
    create(watch, CHILD)
    assert watch.pending_notices(MAIN) == []
    assert watch.drain(MAIN) == []


def test_the_main_sessions_next_drain_returns_the_digest_once_and_acknowledges_it(
    noting: SessionWatch,
) -> None:
    create(noting, CHILD, "s-1")
    newest = create(noting, COORDINATOR, "s-2")
    [pending] = noting.pending_notices(MAIN)
    assert (pending.target, pending.target_agent_id, pending.last_seen, pending.digest) == (
        MAIN,
        "main",
        newest,
        "session_creations",
    )
    assert pending.text == digest_text(CHILD, COORDINATOR)
    assert noting.pending_notices(MAIN) == [pending]  # reading acknowledges nothing
    assert noting.drain(MAIN) == [pending]
    assert noting.drain(MAIN) == []
    assert noting.pending_notices(MAIN) == []


def test_the_digest_comes_after_the_cursor_notices_and_drains_with_them(noting: SessionWatch) -> None:
    assert noting.watch(MAIN, CHILD)
    noting.record(CHILD, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="hi")
    create(noting, COORDINATOR)
    drained = noting.drain(MAIN)
    assert [(n.target, n.digest) for n in drained] == [(CHILD, None), (MAIN, "session_creations")]
    assert "digest" not in drained[0].to_json()  # a cursor notice's JSON is as it always was
    assert drained[1].to_json()["digest"] == "session_creations"
    assert noting.pending_notices(MAIN) == []


def test_a_two_phase_acknowledge_of_the_digest_keeps_what_came_after_it(noting: SessionWatch) -> None:
    create(noting, CHILD)
    [read] = noting.pending_notices(MAIN)
    create(noting, COORDINATOR)
    noting.acknowledge(MAIN, [read])
    [left] = noting.pending_notices(MAIN)
    assert left.text == digest_text(COORDINATOR)
    noting.acknowledge(MAIN, [MAIN])  # the main session's own key names its whole digest
    assert noting.pending_notices(MAIN) == []


def test_the_digest_is_bounded_at_8192_characters_keeping_the_newest(noting: SessionWatch) -> None:
    keys = [f"agent:main:subagent:{'w' * 400}-{n:03d}" for n in range(40)]
    for key in keys:
        create(noting, key)
    [notice] = noting.pending_notices(MAIN)
    assert len(notice.text) <= DIGEST_LIMIT
    listed = notice.text.split("\n")[1:]
    assert listed == keys[-len(listed) :]
    assert len(digest_text(keys[-len(listed) - 1], *listed)) > DIGEST_LIMIT  # one more would not fit


def test_a_key_created_again_is_listed_once_at_its_newest_creation(noting: SessionWatch) -> None:
    create(noting, CHILD, "s-1")
    create(noting, COORDINATOR)
    create(noting, CHILD, "s-2")
    [notice] = noting.pending_notices(MAIN)
    assert notice.text == digest_text(COORDINATOR, CHILD)


def test_the_digest_never_lists_the_main_session_itself_nor_an_internal_key(noting: SessionWatch) -> None:
    create(noting, MAIN, "s-main")
    create(noting, "agent:main:cron:nightly", internal=True)
    assert noting.pending_notices(MAIN) == []
    assert noting.session_status(MAIN).state_version > 0  # both were still recorded
    assert noting.session_status("agent:main:cron:nightly").state_version > 0


def test_each_agent_has_its_own_main_digest(noting: SessionWatch) -> None:
    create(noting, "agent:ops:worker")
    create(noting, CHILD)
    assert [n.text for n in noting.pending_notices("agent:ops:main")] == [digest_text("agent:ops:worker")]
    assert [n.text for n in noting.pending_notices(MAIN)] == [digest_text(CHILD)]


def test_a_host_main_key_names_each_agents_main_session(store_url: str, clock: FakeClock) -> None:
    home = "agent:main:home"
    with sessionwatch.open(store_url, clock=clock, notify_on_create=True, main_key="home") as watch:
        create(watch, CHILD)
        create(watch, MAIN)  # not the host's main session: listed
        create(watch, "agent:ops:worker")
        assert watch.pending_notices(MAIN) == []
        assert [n.text for n in watch.drain(home)] == [digest_text(CHILD, MAIN)]
        assert [n.text for n in watch.drain("agent:ops:home")] == [digest_text("agent:ops:worker")]


@pytest.mark.parametrize("bad", ["agent:main:home", "", 7])
def test_a_main_key_that_is_not_the_rest_of_a_key_is_refused_naming_main_key(
    store_url: str, bad: object
) -> None:
    with pytest.raises(InvalidQuery) as refused:
        sessionwatch.open(store_url, main_key=bad)  # type: ignore[arg-type]
    assert refused.value.field == "main_key"


@pytest.mark.parametrize("store_kind", FILE_STORES)  # a memory store does not outlive its process
def test_the_digest_survives_a_restart(store_url: str, clock: FakeClock) -> None:
    with sessionwatch.open(store_url, clock=clock, notify_on_create=True) as watch:
        create(watch, CHILD)
        [before] = watch.pending_notices(MAIN)
    with sessionwatch.open(store_url, clock=clock) as reopened:  # the sweep wakes nobody for it
        assert reopened.startup_sweep is not None
        assert reopened.startup_sweep.republished == 0
        assert reopened.drain(MAIN) == [before]
    with sessionwatch.open(store_url, clock=clock) as again:
        assert again.pending_notices(MAIN) == []


@pytest.mark.parametrize("store_kind", FILE_STORES)  # a memory store has no schema to migrate
def test_a_store_written_before_the_digest_table_gains_it_on_open(
    store_kind: str, store_url: str, clock: FakeClock
) -> None:
    with sessionwatch.open(store_url, clock=clock) as watch:
        create(watch, COORDINATOR)
    if store_kind == "sqlite":
        with sqlite3.connect(urlsplit(store_url).path[1:]) as old:  # the shape before the digest
            old.execute("DROP TABLE sw_digests")
            old.execute("UPDATE sw_meta SET value = 4 WHERE name = 'schema_version'")
    else:
        schema = parse_qs(urlsplit(store_url).query)["schema"][0]
        admin().execute(f"DROP TABLE {schema}.sw_digests")
        admin().execute(f"UPDATE {schema}.sw_meta SET value = 3 WHERE name = 'schema_version'")
    with sessionwatch.open(store_url, clock=clock, notify_on_create=True) as watch:
        create(watch, CHILD)
        assert [n.text for n in watch.pending_notices(MAIN)] == [digest_text(CHILD)]
        assert_audit_clean(watch)


def test_a_reset_clears_the_main_digest_and_a_delete_drops_it(noting: SessionWatch) -> None:
    create(noting, CHILD)
    noting.reset_session(MAIN)  # an unknown main session with a digest still resets
    assert noting.pending_notices(MAIN) == []
    create(noting, COORDINATOR)
    noting.upsert_session(MAIN)
    noting.delete_session(MAIN)
    assert noting.pending_notices(MAIN) == []
    assert_audit_clean(noting)


def test_the_audit_is_clean_after_creations_drains_resets_deletes_and_prunes(
    store_url: str, clock: FakeClock
) -> None:
    with sessionwatch.open(
        store_url, clock=clock, notify_on_create=True, retention=Retention(max_signals=2)
    ) as watch:
        for n in range(5):
            create(watch, f"agent:main:subagent:s{n}")
        watch.drain(MAIN)
        create(watch, CHILD)
        create(watch, "agent:ops:worker")
        watch.reset_session("agent:ops:main")
        create(watch, COORDINATOR)
        [before] = watch.pending_notices(MAIN)
        report = watch.prune()
        assert report.signals_removed > 0
        assert "store.pruned.v5" in [event.type for event in watch.store.replay()]
        assert watch.pending_notices(MAIN) == [before]  # a prune leaves the digest alone
        assert_audit_clean(watch)
        watch.delete_session(CHILD)
        assert_audit_clean(watch)


@pytest.mark.parametrize("elsewhere", [False, True], ids=["one-process", "second-process"])
def test_an_export_and_import_keep_the_digest(
    noting: SessionWatch, store_kind: str, tmp_path: Path, elsewhere: bool
) -> None:
    create(noting, CHILD)
    create(noting, COORDINATOR)
    noting.acknowledge(MAIN, [noting.pending_notices(MAIN)[0].model_copy(update={"last_seen": 1})])
    exported = io.StringIO()
    export_history(noting.store, exported)
    with (
        fresh_store_url(store_kind, tmp_path, "imported.db") as url,
        sessionwatch.open(url, sweep_on_open=False) as target,
    ):
        lines = exported.getvalue().splitlines(keepends=True)
        import_history(target.store, lines, check_elsewhere=elsewhere)
        assert target.pending_notices(MAIN) == noting.pending_notices(MAIN)
        assert target.store.read_model().digests == noting.store.read_model().digests
        assert_audit_clean(target)
