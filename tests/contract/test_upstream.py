"""The upstream monitor (SPEC §10, §13.1) on every store, with scripted providers.

Each test links an adopted session, has a watcher watch it, and drives `upstream_tick` with a
provider whose answers (and whatever it does *during* the scan) the test scripts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from auditing import assert_audit_clean
from fakes import FakeTranscripts

import sessionwatch
from sessionwatch import (
    InvalidSignal,
    SessionWatch,
    SignalKind,
    UpstreamActivity,
    UpstreamMissing,
    UpstreamProbe,
    notice_text,
)
from sessionwatch.adapters.app import upstream as app_upstream
from sessionwatch.domain.signals import to_epoch_ms
from sessionwatch.testing import FakeClock, RecordingWaker

ADOPTED = "agent:main:adopted"
WATCHER = "agent:main:main"
CATALOG = "claude-code"

Answer = UpstreamActivity | UpstreamMissing | None
Respond = Callable[[UpstreamProbe], Answer]


class ScriptedProvider:
    """Answers each probe with `respond(probe)`; runs `during()` while "scanning"; may fail."""

    def __init__(self, respond: Respond | None = None) -> None:
        self.respond: Respond = respond or (lambda _probe: None)
        self.during: Callable[[], None] | None = None
        self.fail: Exception | None = None
        self.calls: list[list[UpstreamProbe]] = []

    def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> list[UpstreamActivity | UpstreamMissing]:
        self.calls.append(list(probes))
        if self.during is not None:
            self.during()
        if self.fail is not None:
            raise self.fail
        return [a for a in (self.respond(p) for p in probes) if a is not None]

    @property
    def probed(self) -> list[str]:
        return [p.session_key for call in self.calls for p in call]


def activity(turns: int, offset: int, **extra: object) -> Respond:
    return lambda probe: UpstreamActivity(
        session_key=probe.session_key, human_turns=turns, next_marker={"offset": offset}, **extra
    )


def missing(probe: UpstreamProbe) -> UpstreamMissing:
    return UpstreamMissing(session_key=probe.session_key)


@pytest.fixture
def waker() -> RecordingWaker:
    return RecordingWaker()


@pytest.fixture
def watch(store_url: str, clock: FakeClock, waker: RecordingWaker) -> Iterator[SessionWatch]:
    with sessionwatch.open(store_url, clock=clock, waker=waker) as opened:
        yield opened


def link(watch: SessionWatch, key: str = ADOPTED, *, thread: str = "t-1", offset: int = 0, **kw: str) -> None:
    watch.link_upstream(
        key,
        catalog_id=kw.get("catalog_id", CATALOG),
        host_id="laptop",
        thread_id=thread,
        upstream_kind="claude-jsonl",
        upstream_ref=f"/transcripts/{thread}.jsonl",
        marker={"offset": offset},
        agent_id=kw.get("agent_id"),
    )


@pytest.fixture
def adopted(watch: SessionWatch) -> SessionWatch:
    """An adopted session with a watcher: the monitor's everyday case."""
    watch.upsert_session(WATCHER)
    link(watch)
    assert watch.watch(WATCHER, ADOPTED)
    return watch


def marker(watch: SessionWatch, key: str = ADOPTED) -> object:
    current = watch.upstream_link(key)
    assert current is not None
    return current.marker


def kinds(watch: SessionWatch, key: str = ADOPTED) -> list[str]:
    changes = watch.session_status(key, changes_since=0).state_changes
    assert changes is not None
    return [e.kind.value for e in changes.events]


def tick(
    watch: SessionWatch, provider: ScriptedProvider, transcripts: FakeTranscripts | None = None
) -> sessionwatch.TickReport:
    report = watch.upstream_tick({CATALOG: provider}, transcripts=transcripts)
    assert_audit_clean(watch)  # replay agrees after every pass
    return report


# ----------------------------------------------------------------------------------- links


def test_linking_registers_the_session_and_records_adopted_once(watch: SessionWatch) -> None:
    link(watch)
    link(watch)  # a refresh ("continue from catalog") is not a second adoption
    assert kinds(watch) == ["adopted"]
    status = watch.session_status(ADOPTED, changes_since=0).to_json()
    assert status["stateChanges"]["events"][0]["summary"] == "session adopted"
    assert [r.session_key for r in watch.sessions_list()] == [ADOPTED]


def test_relinking_the_same_source_keeps_the_marker_and_makes_a_new_version(adopted: SessionWatch) -> None:
    provider = ScriptedProvider(activity(0, 40))
    tick(adopted, provider)
    before = adopted.upstream_link(ADOPTED)
    assert before is not None
    link(adopted, offset=0)  # same source: the marker read so far is kept
    after = adopted.upstream_link(ADOPTED)
    assert after is not None
    assert after.marker == {"offset": 40}
    assert after.link_version == before.link_version + 1
    assert after.created_at == before.created_at


def test_linking_another_source_rebases_the_marker(adopted: SessionWatch) -> None:
    tick(adopted, ScriptedProvider(activity(0, 40)))
    link(adopted, thread="t-2", offset=7)
    after = adopted.upstream_link(ADOPTED)
    assert after is not None
    assert (after.thread_id, after.marker) == ("t-2", {"offset": 7})


def test_unlinking_returns_the_removed_link_then_none(adopted: SessionWatch) -> None:
    removed = adopted.unlink_upstream(ADOPTED)
    assert removed is not None
    assert removed.catalog_id == CATALOG
    assert adopted.upstream_link(ADOPTED) is None
    assert adopted.unlink_upstream(ADOPTED) is None
    provider = ScriptedProvider(activity(1, 10))
    assert tick(adopted, provider).probed == 0
    assert provider.calls == []


def test_deleting_the_session_deletes_its_link(adopted: SessionWatch) -> None:
    adopted.delete_session(ADOPTED)
    assert adopted.upstream_link(ADOPTED) is None
    assert adopted.store.upstream_links(watched_only=False) == []


def test_link_input_is_validated_naming_the_field(watch: SessionWatch) -> None:
    base = {
        "catalog_id": CATALOG,
        "host_id": "h",
        "thread_id": "t",
        "upstream_kind": "k",
        "upstream_ref": "/x.jsonl",
        "marker": None,
    }
    cases: list[tuple[str, object]] = [
        ("catalog_id", " "),
        ("host_id", "a\nb"),
        ("thread_id", 7),
        ("upstream_ref", {1, 2}),
        ("marker", {"offset": object()}),
        ("marker", "x" * 5000),
    ]
    for field, value in cases:
        with pytest.raises(InvalidSignal) as raised:
            watch.link_upstream(ADOPTED, **{**base, field: value})  # type: ignore[arg-type]
        assert raised.value.field == field
    with pytest.raises(InvalidSignal) as bare:
        watch.link_upstream("global", **base)  # type: ignore[arg-type]
    assert bare.value.field == "agent_id"
    assert watch.sessions_list() == []  # nothing was written


# -------------------------------------------------------------------------------- activity


def test_watched_activity_is_recorded_once_and_the_marker_advanced(
    adopted: SessionWatch, waker: RecordingWaker
) -> None:
    waker.take()
    provider = ScriptedProvider(activity(1, 120, dedupe_id="0-120"))
    report = tick(adopted, provider)
    assert [s.kind for s in report.recorded] == [SignalKind.HUMAN_DIRECT_MESSAGE]
    assert report.advanced == 1
    signal = report.recorded[0]
    assert (signal.actor_type, signal.summary, signal.payload) == (
        "human",
        "human message via claude-code",
        None,
    )
    assert signal.dedupe_key is not None
    assert signal.dedupe_key.startswith(f"upstream:{ADOPTED}:")
    assert signal.dedupe_key.endswith(":0-120")
    assert marker(adopted) == {"offset": 120}
    assert [n.text for n in adopted.pending_notices(WATCHER)] == [notice_text(ADOPTED, 1)]
    assert waker.take() == [(WATCHER, f"session-state:{ADOPTED}")]
    # The same answer again (another process re-read the same bytes): deduped, nothing new.
    link_now = adopted.upstream_link(ADOPTED)
    assert link_now is not None
    again = tick(adopted, provider)
    assert again.recorded == (signal,)  # the existing signal, not a new one
    assert kinds(adopted) == ["adopted", "human_direct_message"]


def test_a_burst_of_human_turns_is_one_signal_with_its_count(adopted: SessionWatch) -> None:
    report = tick(adopted, ScriptedProvider(activity(3, 300)))
    assert len(report.recorded) == 1
    assert report.recorded[0].payload == {"turns": 3}
    assert adopted.session_status(ADOPTED, changes_since=1).to_json()["stateChanges"]["events"][0][
        "payload"
    ] == {"turns": 3}


def test_activity_without_human_turns_only_advances_the_marker(adopted: SessionWatch) -> None:
    head = adopted.session_status(ADOPTED).state_version
    report = tick(adopted, ScriptedProvider(activity(0, 64)))
    assert (report.recorded, report.advanced) == ((), 1)
    assert marker(adopted) == {"offset": 64}
    assert adopted.session_status(ADOPTED).state_version == head
    assert adopted.pending_notices(WATCHER) == []
    scanned = adopted.upstream_link(ADOPTED)
    assert scanned is not None
    assert scanned.last_scanned_at is not None


def test_unwatched_links_are_not_probed(watch: SessionWatch) -> None:
    link(watch)
    provider = ScriptedProvider(activity(2, 10))
    report = tick(watch, provider)
    assert provider.calls == []
    assert report.probed == 0


# ---------------------------------------------------------------- one session's link, by name


def test_following_an_unlinked_session_or_a_bare_key_asks_nothing(watch: SessionWatch) -> None:
    provider = ScriptedProvider(activity(1, 10))
    link(watch)
    watch.unlink_upstream(ADOPTED)
    assert watch.follow_upstream(ADOPTED, {CATALOG: provider}).probed == 0
    assert provider.calls == []
    with pytest.raises(sessionwatch.InvalidQuery) as bare:
        watch.follow_upstream("global", {CATALOG: provider})
    assert bare.value.field == "agent_id"


def test_following_a_session_with_an_active_run_defers_its_link(adopted: SessionWatch) -> None:
    adopted.run_started(ADOPTED, "run-1")
    provider = ScriptedProvider(activity(1, 10))
    report = adopted.follow_upstream(ADOPTED, {CATALOG: provider})
    assert (report.deferred, provider.calls) == ((ADOPTED,), [])
    assert marker(adopted) == {"offset": 0}


def test_the_active_links_are_listed_by_catalog(watch: SessionWatch) -> None:
    link(watch)
    link(watch, "agent:main:codex", thread="t-2", catalog_id="codex")
    link(watch, "agent:main:gone", thread="t-3")
    watch.unlink_upstream("agent:main:gone")

    assert [(k.session_key, k.thread_id) for k in watch.upstream_links()] == [
        ("agent:main:adopted", "t-1"),
        ("agent:main:codex", "t-2"),
    ]
    assert [k.session_key for k in watch.upstream_links(catalog_id="codex")] == ["agent:main:codex"]
    with pytest.raises(InvalidSignal) as blank:
        watch.upstream_links(catalog_id=" ")
    assert blank.value.field == "catalog_id"


def test_links_of_one_key_under_several_agents_are_skipped_as_ambiguous(watch: SessionWatch) -> None:
    for agent in ("main", "ops"):
        watch.upsert_session(f"agent:{agent}:main")
        link(watch, "global", agent_id=agent)
        assert watch.watch(f"agent:{agent}:main", "global", target_agent_id=agent)
    provider = ScriptedProvider(activity(1, 10))
    report = tick(watch, provider)
    assert provider.calls == []
    assert report.ambiguous == ("global", "global")


def test_links_are_grouped_by_catalog_and_an_unknown_catalog_is_reported(watch: SessionWatch) -> None:
    watch.upsert_session(WATCHER)
    for key, catalog in (("agent:main:a", CATALOG), ("agent:main:b", CATALOG), ("agent:main:c", "codex")):
        link(watch, key, thread=key, catalog_id=catalog)
        watch.watch(WATCHER, key)
    provider = ScriptedProvider()
    report = tick(watch, provider)
    assert len(provider.calls) == 1
    assert provider.probed == ["agent:main:a", "agent:main:b"]
    assert report.unknown_catalogs == ("codex",)


def test_a_probe_carries_the_link_and_the_normalized_own_texts_newest_last(adopted: SessionWatch) -> None:
    transcripts = FakeTranscripts()
    transcripts.texts[ADOPTED] = [f"  text\t{i}\n " for i in range(12)] + ["   "]
    provider = ScriptedProvider()
    tick(adopted, provider, transcripts)
    (probe,) = provider.calls[0]
    assert probe.own_recent_user_texts == tuple(f"text {i}" for i in range(3, 12))
    assert (probe.session_key, probe.agent_id, probe.catalog_id, probe.host_id) == (
        ADOPTED,
        "main",
        CATALOG,
        "laptop",
    )
    assert (probe.thread_id, probe.upstream_ref, probe.marker) == (
        "t-1",
        "/transcripts/t-1.jsonl",
        {"offset": 0},
    )
    assert transcripts.calls == [(ADOPTED, "main", 10)]


def test_a_session_sending_text_during_the_scan_aborts_the_record(adopted: SessionWatch) -> None:
    transcripts = FakeTranscripts()
    transcripts.texts[ADOPTED] = ["hello"]
    provider = ScriptedProvider(activity(1, 50))
    provider.during = lambda: transcripts.texts[ADOPTED].append("fix the build")  # self-echo is unsure
    report = tick(adopted, provider, transcripts)
    assert (report.recorded, report.aborted) == ((), (ADOPTED,))
    assert marker(adopted) == {"offset": 0}
    provider.during = None
    assert len(tick(adopted, provider, transcripts).recorded) == 1  # retried next tick


def test_skewed_upstream_times_are_clamped_into_the_last_day(adopted: SessionWatch, clock: FakeClock) -> None:
    now = clock.now()
    future = tick(adopted, ScriptedProvider(activity(1, 10, occurred_at=now + timedelta(days=3))))
    past = tick(adopted, ScriptedProvider(activity(1, 20, occurred_at=to_epoch_ms(now - timedelta(days=9)))))
    naive = tick(adopted, ScriptedProvider(activity(1, 30, occurred_at=datetime(2026, 1, 1))))  # noqa: DTZ001
    assert future.recorded[0].occurred_at == now
    assert past.recorded[0].occurred_at == now - timedelta(hours=24)
    assert naive.recorded[0].occurred_at == now  # unusable: now
    assert future.recorded[0].occurred_at.tzinfo is not None
    assert datetime(2026, 1, 1, tzinfo=UTC) < now


def failing_record(*_args: object, **_kwargs: object) -> object:
    raise sessionwatch.StoreError("disk I/O error")


def test_the_marker_stays_when_the_record_fails(
    adopted: SessionWatch, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    provider = ScriptedProvider(activity(2, 90, dedupe_id="0-90"))
    # The fault is injected where the verdict's record is written, inside its transaction.
    monkeypatch.setattr(app_upstream, "record_in", failing_record)
    with caplog.at_level(logging.WARNING, logger="sessionwatch"):
        report = tick(adopted, provider)
    assert (report.recorded, report.failed_links) == ((), (ADOPTED,))
    assert marker(adopted) == {"offset": 0}
    assert kinds(adopted) == ["adopted"]
    assert "StoreError" in caplog.text
    monkeypatch.undo()
    retried = tick(adopted, provider)
    assert len(retried.recorded) == 1
    assert marker(adopted) == {"offset": 90}


def test_activity_for_a_link_unwatched_during_the_scan_advances_without_recording(
    adopted: SessionWatch,
) -> None:
    provider = ScriptedProvider(activity(1, 10))

    def stop_watching() -> None:
        adopted.unwatch(WATCHER, ADOPTED)

    provider.during = stop_watching
    report = tick(adopted, provider)
    assert (report.recorded, report.advanced) == ((), 1)
    assert kinds(adopted) == ["adopted"]
    assert marker(adopted) == {"offset": 10}


# ------------------------------------------------------------------------------------ runs


def test_an_active_run_skips_the_link_without_advancing_the_marker(adopted: SessionWatch) -> None:
    adopted.run_started(ADOPTED, "run-1")
    provider = ScriptedProvider(activity(1, 10))
    report = tick(adopted, provider)
    assert provider.calls == []  # never called with an empty probe list
    assert report.deferred == (ADOPTED,)
    assert marker(adopted) == {"offset": 0}
    adopted.run_ended(ADOPTED, "run-1")
    assert len(tick(adopted, provider).recorded) == 1


def test_a_run_starting_during_the_scan_defers_activity(adopted: SessionWatch) -> None:
    provider = ScriptedProvider(activity(1, 10))
    provider.during = lambda: adopted.run_started(ADOPTED, "run-1")
    report = tick(adopted, provider)
    assert (report.recorded, report.deferred) == ((), (ADOPTED,))
    assert marker(adopted) == {"offset": 0}


def test_a_run_that_started_and_ended_during_the_scan_still_defers(adopted: SessionWatch) -> None:
    def start_and_end() -> None:
        adopted.run_started(ADOPTED, "run-1")
        adopted.run_ended(ADOPTED, "run-1")

    provider = ScriptedProvider(activity(1, 10))
    provider.during = start_and_end
    assert tick(adopted, provider).deferred == (ADOPTED,)
    provider.during = None
    assert len(tick(adopted, provider).recorded) == 1


# --------------------------------------------------------------------------------- missing


def test_three_misses_record_one_upstream_missing_and_remove_the_link(
    adopted: SessionWatch, waker: RecordingWaker
) -> None:
    provider = ScriptedProvider(missing)
    first, second = tick(adopted, provider), tick(adopted, provider)
    assert (first.missed, second.missed) == ((ADOPTED,), (ADOPTED,))
    assert kinds(adopted) == ["adopted"]
    waker.take()
    third = tick(adopted, provider)
    (signal,) = third.missing
    assert (signal.kind, signal.actor_type, signal.summary) == (
        SignalKind.UPSTREAM_MISSING,
        "system",
        "upstream missing via claude-code",
    )
    assert signal.payload == {"channel": CATALOG}
    assert adopted.upstream_link(ADOPTED) is None
    assert [n.target for n in adopted.pending_notices(WATCHER)] == [ADOPTED]
    assert waker.take() == [(WATCHER, f"session-state:{ADOPTED}")]
    assert tick(adopted, provider).probed == 0  # the link is gone
    assert kinds(adopted) == ["adopted", "upstream_missing"]


def test_a_new_link_after_missing_can_go_missing_again(adopted: SessionWatch) -> None:
    provider = ScriptedProvider(missing)
    for _ in range(3):
        tick(adopted, provider)
    link(adopted)  # continued from the catalog: a new link, a new adoption
    for _ in range(3):
        tick(adopted, provider)
    assert kinds(adopted) == ["adopted", "upstream_missing", "adopted", "upstream_missing"]


@pytest.mark.parametrize(
    "interruption",
    ["activity", "empty answer", "refresh"],
)
def test_a_non_missing_answer_or_a_refresh_resets_the_streak(
    adopted: SessionWatch, interruption: str
) -> None:
    provider = ScriptedProvider(missing)
    tick(adopted, provider)
    tick(adopted, provider)
    if interruption == "activity":
        tick(adopted, ScriptedProvider(activity(0, 5)))
    elif interruption == "empty answer":
        tick(adopted, ScriptedProvider())
    else:
        link(adopted)
    tick(adopted, provider)
    tick(adopted, provider)
    assert kinds(adopted) == ["adopted"]  # two misses after the reset: not yet missing
    assert tick(adopted, provider).missing != ()


def test_a_run_starting_during_the_scan_defers_the_third_miss(adopted: SessionWatch) -> None:
    provider = ScriptedProvider(missing)
    tick(adopted, provider)
    tick(adopted, provider)
    provider.during = lambda: adopted.run_started(ADOPTED, "run-1")
    deferred = tick(adopted, provider)
    assert (deferred.missing, deferred.deferred) == ((), (ADOPTED,))
    assert adopted.upstream_link(ADOPTED) is not None
    adopted.run_ended(ADOPTED, "run-1")
    provider.during = None
    assert len(tick(adopted, provider).missing) == 1  # the deferred third miss, not a fresh streak


def test_a_source_change_mid_scan_aborts_the_record(adopted: SessionWatch) -> None:
    provider = ScriptedProvider(activity(1, 10))
    provider.during = lambda: link(adopted, thread="t-2", offset=3)
    report = tick(adopted, provider)
    assert (report.recorded, report.aborted) == ((), (ADOPTED,))
    assert kinds(adopted) == ["adopted"]
    assert marker(adopted) == {"offset": 3}


def test_a_source_change_mid_scan_aborts_the_delete(adopted: SessionWatch) -> None:
    provider = ScriptedProvider(missing)
    tick(adopted, provider)
    tick(adopted, provider)
    provider.during = lambda: link(adopted, thread="t-2")
    report = tick(adopted, provider)
    assert (report.missing, report.aborted) == ((), (ADOPTED,))
    current = adopted.upstream_link(ADOPTED)
    assert current is not None
    assert current.thread_id == "t-2"
    assert kinds(adopted) == ["adopted"]


# -------------------------------------------------------------------------------- isolation


def test_a_failing_provider_fails_only_its_own_catalog(watch: SessionWatch) -> None:
    watch.upsert_session(WATCHER)
    link(watch, "agent:main:a", thread="a")
    link(watch, "agent:main:b", thread="b", catalog_id="codex")
    watch.watch(WATCHER, "agent:main:a")
    watch.watch(WATCHER, "agent:main:b")
    broken = ScriptedProvider(activity(1, 10))
    broken.fail = RuntimeError("catalog offline")
    healthy = ScriptedProvider(activity(1, 10))
    report = watch.upstream_tick({CATALOG: broken, "codex": healthy})
    assert report.failed_catalogs == (CATALOG,)
    assert [s.session_key for s in report.recorded] == ["agent:main:b"]
    assert marker(watch, "agent:main:a") == {"offset": 0}


def test_a_failure_on_one_link_stays_with_that_link(watch: SessionWatch) -> None:
    watch.upsert_session(WATCHER)
    for key in ("agent:main:a", "agent:main:b"):
        link(watch, key, thread=key)
        watch.watch(WATCHER, key)
    transcripts = FakeTranscripts()
    transcripts.failing.add("agent:main:a")
    provider = ScriptedProvider(activity(1, 10))
    report = watch.upstream_tick({CATALOG: provider}, transcripts=transcripts)
    assert report.failed_links == ("agent:main:a",)
    assert provider.probed == ["agent:main:b"]
    assert [s.session_key for s in report.recorded] == ["agent:main:b"]


def test_answers_for_keys_not_probed_and_extra_answers_are_ignored(adopted: SessionWatch) -> None:
    class Chatty(ScriptedProvider):
        def check_upstream_activity(
            self, probes: Sequence[UpstreamProbe]
        ) -> list[UpstreamActivity | UpstreamMissing]:
            super().check_upstream_activity(probes)
            return [
                UpstreamActivity(session_key="agent:main:stranger", human_turns=5, next_marker=1),
                UpstreamActivity(session_key=ADOPTED, human_turns=0, next_marker={"offset": 8}),
                UpstreamMissing(session_key=ADOPTED),
            ]

    report = tick(adopted, Chatty())
    assert (report.advanced, report.missed, report.recorded) == (1, (), ())
    assert marker(adopted) == {"offset": 8}


# ------------------------------------------------------------------------- durable and replay


def test_links_survive_a_prune_that_compacts_the_event_store(adopted: SessionWatch, clock: FakeClock) -> None:
    tick(adopted, ScriptedProvider(activity(2, 77)))
    clock.advance(days=40)
    adopted.record(WATCHER, kind="goal_changed", actor=sessionwatch.Actor.system(), summary="goal updated")
    adopted.prune(force=True)  # (the hourly prune after that record already removed the old signals)
    assert kinds(adopted) == []
    stored = [event.type for event in adopted.store.replay()]
    assert "upstream.linked.v1" not in stored  # compacted away: the checkpoint carries the link
    assert "store.pruned.v5" in stored
    assert marker(adopted) == {"offset": 77}
    rebuilt = adopted.rebuild_read_model()
    assert rebuilt == adopted.store.read_model()
    assert [link.marker for link in rebuilt.links.values()] == [{"offset": 77}]


# ---------------------------------------------------------------------------------- follow


def test_following_a_watched_session_records_its_turns_and_probes_no_other_link(
    adopted: SessionWatch,
) -> None:
    link(adopted, "agent:main:other", thread="t-2")
    assert adopted.watch(WATCHER, "agent:main:other")
    provider = ScriptedProvider(activity(2, 200))

    report = adopted.follow_upstream(ADOPTED, {CATALOG: provider})

    assert provider.probed == [ADOPTED]
    assert [s.payload for s in report.recorded] == [{"turns": 2}]
    assert marker(adopted) == {"offset": 200}
    assert marker(adopted, "agent:main:other") == {"offset": 0}
    assert [n.target for n in adopted.pending_notices(WATCHER)] == [ADOPTED]
    assert_audit_clean(adopted)


def test_following_a_session_nobody_watches_advances_its_marker_and_records_nothing(
    watch: SessionWatch,
) -> None:
    link(watch)
    report = watch.follow_upstream(ADOPTED, {CATALOG: ScriptedProvider(activity(2, 90))})

    assert (report.probed, report.recorded, report.advanced) == (1, (), 1)
    assert marker(watch) == {"offset": 90}
    watch.upsert_session(WATCHER)
    assert watch.watch(WATCHER, ADOPTED)
    later = watch.follow_upstream(ADOPTED, {CATALOG: ScriptedProvider(activity(1, 120))})
    assert [s.payload for s in later.recorded] == [None]  # the turn after the watch, not the two before
    assert_audit_clean(watch)


def test_following_a_session_without_a_link_probes_nothing(watch: SessionWatch) -> None:
    provider = ScriptedProvider(activity(1, 10))
    report = watch.follow_upstream(ADOPTED, {CATALOG: provider})
    assert (provider.calls, report.probed) == ([], 0)
    with pytest.raises(sessionwatch.InvalidQuery, match="session_key"):
        watch.follow_upstream("", {CATALOG: provider})
