"""Cancellation and shutdown of an `AsyncSessionWatch`, on every store.

Cancelling a coroutine whose write was already submitted does not take the write back: it commits
and its wakes are published. A coroutine cancelled before it ran submits nothing. `aclose()`
finishes the writes queued before it (and publishes their wakes) before it returns; afterwards
every method raises `StoreError("the store is closed")` (producers, best effort, answer None), and
closing again is harmless. Writes are held inside the store (tests/probed_store.py) to have them
queued or in flight at the moment a test cancels or closes, without timing anything.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import cast

import pytest
from probed_store import PATIENCE_S, ProbedStore, probe_opened_stores
from stores import FILE_STORES, fresh_store_url

import sessionwatch
import sessionwatch.aio
from sessionwatch import Actor, Signal, SignalInput, StoreError, UpstreamActivity, UpstreamProbe
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.ports import Waker
from sessionwatch.domain.session import SessionState
from sessionwatch.domain.upstream import AdvanceOnly, UpstreamLinkState
from sessionwatch.testing import RecordingWaker

WATCHER = "agent:main:main"
TARGET = "agent:main:worker"
REASON = f"session-state:{TARGET}"


class AsyncRecordingWaker:
    """An async waker that records each wake after a few round trips through a thread (a host's I/O)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def wake(self, watcher_key: str, reason: str) -> None:
        for _ in range(20):
            await asyncio.to_thread(lambda: None)
        self.calls.append((watcher_key, reason))


def as_waker(waker: RecordingWaker | AsyncRecordingWaker) -> Waker:
    return cast("Waker", waker)  # the port is typed sync; an async waker is taken at run time


def record(watch: AsyncSessionWatch, summary: str) -> Awaitable[Signal]:
    return watch.record(TARGET, kind="goal_changed", actor=Actor.system(), summary=summary)


async def summaries(watch: AsyncSessionWatch) -> list[str]:
    changes = (await watch.session_status(TARGET, changes_since=0)).state_changes
    assert changes is not None
    return [event.summary for event in changes.events]


async def submitted_and_held(store: ProbedStore, *pending: Awaitable[Signal]) -> list[asyncio.Task[Signal]]:
    """Start each write; once the first is inside the store (held there), the others are queued."""
    store.hold_writes()
    first, *others = pending
    tasks = [asyncio.ensure_future(first)]
    assert await asyncio.to_thread(store.writing.wait, PATIENCE_S)
    tasks += [asyncio.ensure_future(write) for write in others]
    await asyncio.sleep(0)  # each runs up to its submission
    return tasks


@pytest.fixture(params=["sync waker", "async waker"])
def waker(request: pytest.FixtureRequest) -> RecordingWaker | AsyncRecordingWaker:
    return RecordingWaker() if request.param == "sync waker" else AsyncRecordingWaker()


# ----------------------------------------------------------------------------------- cancellation


def test_cancelling_a_coroutine_after_its_write_was_submitted_leaves_the_write_to_commit_and_wake(
    store_url: str, waker: RecordingWaker | AsyncRecordingWaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    stores = probe_opened_stores(monkeypatch)

    async def scenario() -> None:
        async with await sessionwatch.aio.open(store_url, waker=as_waker(waker)) as watch:
            [store] = stores
            await watch.upsert_session(TARGET)
            assert await watch.watch(WATCHER, TARGET)
            in_flight, queued = await submitted_and_held(
                store, record(watch, "in flight"), record(watch, "queued behind it")
            )

            in_flight.cancel()
            queued.cancel()
            store.release_writes()

            for task in (in_flight, queued):
                with pytest.raises(asyncio.CancelledError):
                    await task  # at once: a cancelled coroutine does not wait for its write
            await watch.upsert_session(TARGET)  # the writer runs writes in order: past both once this returns
            await watch.settled()
            assert await summaries(watch) == ["in flight", "queued behind it"]
            assert waker.calls == [(WATCHER, REASON)]  # the notice the first one opened woke its watcher
            assert (await watch.audit()).ok

    asyncio.run(scenario())


def test_a_coroutine_cancelled_before_it_ran_writes_nothing(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stores = probe_opened_stores(monkeypatch)
    waker = RecordingWaker()

    async def scenario() -> None:
        async with await sessionwatch.aio.open(store_url, waker=waker) as watch:
            [store] = stores
            await watch.upsert_session(TARGET)
            assert await watch.watch(WATCHER, TARGET)
            writes_before = store.names_called("write")

            never_ran = asyncio.ensure_future(record(watch, "never submitted"))
            never_ran.cancel()

            with pytest.raises(asyncio.CancelledError):
                await never_ran
            await watch.settled()
            assert store.names_called("write") == writes_before
            assert await summaries(watch) == []
            assert waker.calls == []

    asyncio.run(scenario())


# --------------------------------------------------------------------------------------- shutdown


@pytest.fixture(params=FILE_STORES)
def file_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_store_url(str(request.param), tmp_path) as url:
        yield url


def test_aclose_finishes_the_queued_writes_and_publishes_their_wakes_before_it_returns(
    file_store_url: str,
    waker: RecordingWaker | AsyncRecordingWaker,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    stores = probe_opened_stores(monkeypatch)
    caplog.set_level(logging.DEBUG, logger="sessionwatch")

    async def scenario() -> list[Signal]:
        watch = await sessionwatch.aio.open(file_store_url, waker=as_waker(waker))
        [store] = stores
        await watch.upsert_session(TARGET)
        assert await watch.watch(WATCHER, TARGET)
        tasks = await submitted_and_held(store, *(record(watch, f"write {n}") for n in range(8)))

        closing = asyncio.ensure_future(watch.aclose())
        await asyncio.sleep(0)
        assert not closing.done()  # it waits for the held writes
        store.release_writes()
        await closing

        assert all(task.done() for task in tasks)
        assert waker.calls == [(WATCHER, REASON)]
        return [task.result() for task in tasks]

    signals = asyncio.run(scenario())

    assert [r.getMessage() for r in caplog.records] == []  # closing is quiet: nothing failed

    with sessionwatch.open(file_store_url, sweep_on_open=False) as reopened:
        changes = reopened.session_status(TARGET, changes_since=0).state_changes
        assert changes is not None
        assert [e.sequence for e in changes.events] == [s.sequence for s in signals]
        assert [e.summary for e in changes.events] == [f"write {n}" for n in range(8)]


PRODUCERS = {
    "record_human_message",
    "record_goal_changed",
    "record_spawn",
    "record_run_terminal",
    "record_compacted",
    "record_adopted",
    "record_session_created",
}
"""Best effort: on a closed store they log one line and answer None (test_aio_producers.py)."""

NOT_A_STORE_USE = {"aclose", "settled", "__aenter__", "__aexit__"}


def calls_on(watch: AsyncSessionWatch, link: UpstreamLinkState) -> dict[str, Callable[[], Awaitable[object]]]:
    """One ordinary call of every method that uses the store, by name."""
    session = SessionState(session_key=TARGET, agent_id="main")
    return {
        "upsert_session": lambda: watch.upsert_session(TARGET),
        "reset_session": lambda: watch.reset_session(TARGET),
        "delete_session": lambda: watch.delete_session(TARGET),
        "update_session": lambda: watch.update_session(TARGET, label="x"),
        "registry_entry": lambda: watch.registry_entry(TARGET),
        "registry_entries": watch.registry_entries,
        "run_started": lambda: watch.run_started(TARGET, "run-1"),
        "run_ended": lambda: watch.run_ended(TARGET, "run-1"),
        "runs": watch.runs,
        "record": lambda: record(watch, "after close"),
        "record_many": lambda: watch.record_many(
            [SignalInput(session_key=TARGET, kind="goal_changed", actor=Actor.system(), summary="x")]
        ),
        "watch": lambda: watch.watch(WATCHER, TARGET),
        "unwatch": lambda: watch.unwatch(WATCHER, TARGET),
        "cursor": lambda: watch.cursor(WATCHER, TARGET),
        "watched_by": lambda: watch.watched_by(WATCHER),
        "is_watched": lambda: watch.is_watched(TARGET),
        "watch_prompt": lambda: watch.watch_prompt(WATCHER),
        "pending_notices": lambda: watch.pending_notices(WATCHER),
        "drain": lambda: watch.drain(WATCHER),
        "acknowledge": lambda: watch.acknowledge(WATCHER, [TARGET]),
        "sweep": watch.sweep,
        "prune": watch.prune,
        "link_upstream": lambda: watch.link_upstream(
            TARGET,
            catalog_id="c",
            host_id="h",
            thread_id="t",
            upstream_kind="k",
            upstream_ref="r",
            marker={"offset": 0},
        ),
        "unlink_upstream": lambda: watch.unlink_upstream(TARGET),
        "upstream_link": lambda: watch.upstream_link(TARGET),
        "upstream_links": lambda: watch.upstream_links(catalog_id="c"),
        "upstream_tick": lambda: watch.upstream_tick({"c": NeverAsked()}),
        "follow_upstream": lambda: watch.follow_upstream("agent:main:main", {"c": NeverAsked()}),
        "start_upstream_monitor": lambda: watch.start_upstream_monitor({"c": NeverAsked()}),
        "apply_upstream_verdict": lambda: watch.apply_upstream_verdict(
            link,
            AdvanceOnly(
                activity=UpstreamActivity(session_key=TARGET, human_turns=0, next_marker={"offset": 1})
            ),
            session=session,
        ),
        "session_status": lambda: watch.session_status(TARGET),
        "status_as_of": lambda: watch.status_as_of(TARGET, 1),
        "sessions_list": watch.sessions_list,
        "rebuild_read_model": watch.rebuild_read_model,
        "audit": watch.audit,
    }


class NeverAsked:
    def check_upstream_activity(self, probes: Sequence[UpstreamProbe]) -> list[UpstreamActivity]:
        raise AssertionError(f"a closed store asked its provider about {probes}")


def test_every_method_of_a_closed_async_store_raises_store_error(store_url: str) -> None:
    async def scenario() -> dict[str, str]:
        watch = await sessionwatch.aio.open(store_url)
        await watch.link_upstream(
            TARGET,
            catalog_id="c",
            host_id="h",
            thread_id="t",
            upstream_kind="k",
            upstream_ref="r",
            marker={"offset": 0},
        )
        link = await asyncio.to_thread(watch.store.upstream_link, SessionIdentity(TARGET, "main"))
        assert link is not None
        await watch.aclose()
        raised: dict[str, str] = {}
        for name, call in calls_on(watch, link).items():
            try:
                await call()
            except StoreError as exc:
                raised[name] = str(exc)
            else:
                raised[name] = "returned"
        return raised

    raised = asyncio.run(scenario())

    public = {
        name
        for name, member in inspect.getmembers(AsyncSessionWatch)  # its own and its upstream room's
        if inspect.iscoroutinefunction(member) and not name.startswith("_")
    }
    assert set(raised) == public - PRODUCERS - NOT_A_STORE_USE  # every method is tried
    assert {name: message for name, message in raised.items() if message != "the store is closed"} == {}


def test_closing_an_async_store_twice_is_harmless(store_url: str) -> None:
    async def scenario() -> None:
        async with await sessionwatch.aio.open(store_url) as watch:
            await watch.aclose()
        await watch.aclose()
        with pytest.raises(StoreError, match="the store is closed"):
            await watch.sessions_list()

    asyncio.run(scenario())
