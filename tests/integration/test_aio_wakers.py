"""Wakers under the async façade: where a wake runs, and that no waker holds up or undoes a write.

An async waker's wake runs as a task of its own on the event loop; a sync waker's runs off the loop.
A waker that does not answer (held until the test releases it) delays neither the record that
opened the notice nor the writes after it, and a failing waker is logged once and changes
nothing. On PostgreSQL, a notice another process opens reaches the async waker on the loop.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import cast

import pytest
from fakes import FailingWaker, WakeFailedError
from stores import needs_postgres, postgres_url

import sessionwatch.aio
from sessionwatch import Actor, Signal
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.domain.ports import Waker
from sessionwatch.testing import RecordingWaker

WATCHER = "agent:main:main"
TARGET = "agent:main:worker"
OTHER = "agent:main:other"
PATIENCE_S = 30.0
"""A failure bound for waiting on the loop (never reached when healthy), not a measured figure."""


def reason(target: str) -> str:
    return f"session-state:{target}"


class WhereWaker:
    """An async waker noting the thread and the task each wake ran on; `held` wakes wait for `release`."""

    def __init__(self, *, held: bool = False) -> None:
        self.calls: list[tuple[str, str]] = []
        self.threads: list[int] = []
        self.tasks: list[asyncio.Task[object] | None] = []
        self.held = held
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.woken = asyncio.Event()

    async def wake(self, watcher_key: str, reason: str) -> None:
        self.threads.append(threading.get_ident())
        self.tasks.append(asyncio.current_task())
        self.entered.set()
        if self.held:
            await self.release.wait()
        self.calls.append((watcher_key, reason))
        self.woken.set()


class HeldSyncWaker(RecordingWaker):
    """A sync waker noting its thread; it answers only once the test sets `release`."""

    def __init__(self, *, held: bool = False) -> None:
        super().__init__()
        self.threads: list[int] = []
        self.held = held
        self.release = threading.Event()

    def wake(self, watcher_key: str, reason: str) -> None:
        self.threads.append(threading.get_ident())
        if self.held:
            assert self.release.wait(PATIENCE_S), "the test never released the waker"
        super().wake(watcher_key, reason)


class FailingAsyncWaker:
    def __init__(self) -> None:
        self.attempts = 0

    async def wake(self, watcher_key: str, reason: str) -> None:  # noqa: ARG002 - the Waker signature
        self.attempts += 1
        raise WakeFailedError(f"heartbeat unavailable for {watcher_key}")


def as_waker(waker: object) -> Waker:
    return cast("Waker", waker)  # the port is typed sync; an async waker is taken at run time


async def watched(watch: AsyncSessionWatch, *targets: str) -> None:
    for target in targets:
        await watch.upsert_session(target)
        assert await watch.watch(WATCHER, target)


async def goal(watch: AsyncSessionWatch, target: str = TARGET) -> Signal:
    record = watch.record(target, kind="goal_changed", actor=Actor.system(), summary="goal set")
    return await asyncio.wait_for(record, PATIENCE_S)  # a record that waited for its wake fails here


# ------------------------------------------------------------------------------ where wakes run


def test_an_async_wakers_wake_runs_as_a_task_of_its_own_on_the_loop(store_url: str) -> None:
    waker = WhereWaker()

    async def scenario() -> tuple[int, asyncio.Task[object] | None]:
        async with await sessionwatch.aio.open(store_url, waker=as_waker(waker)) as watch:
            await watched(watch, TARGET)
            await goal(watch)
            await watch.settled()
        return threading.get_ident(), asyncio.current_task()

    loop_thread, recording_task = asyncio.run(scenario())

    assert waker.calls == [(WATCHER, reason(TARGET))]
    assert waker.threads == [loop_thread]
    [task] = waker.tasks
    assert task is not None
    assert task is not recording_task


def test_a_sync_wakers_wake_runs_off_the_loop(store_url: str) -> None:
    waker = HeldSyncWaker()

    async def scenario() -> int:
        async with await sessionwatch.aio.open(store_url, waker=as_waker(waker)) as watch:
            await watched(watch, TARGET)
            await goal(watch)
            await watch.settled()
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())

    assert waker.calls == [(WATCHER, reason(TARGET))]
    [thread] = waker.threads
    assert thread != loop_thread


# ------------------------------------------------------------------------------- slow wakers


def test_an_async_waker_that_does_not_answer_delays_neither_its_record_nor_later_writes(
    store_url: str,
) -> None:
    waker = WhereWaker(held=True)

    async def scenario() -> None:
        async with await sessionwatch.aio.open(store_url, waker=as_waker(waker)) as watch:
            try:
                await watched(watch, TARGET, OTHER)
                first = await goal(watch, TARGET)
                await asyncio.wait_for(waker.entered.wait(), PATIENCE_S)  # its wake has begun, and waits
                second = await goal(watch, OTHER)  # the writer goes on while that wake is stuck

                assert waker.calls == []
                assert second.sequence == first.sequence + 1
                assert {n.target for n in await watch.pending_notices(WATCHER)} == {TARGET, OTHER}
            finally:
                waker.release.set()  # else closing would wait for the held wake
            await watch.settled()
            assert sorted(waker.calls) == sorted([(WATCHER, reason(TARGET)), (WATCHER, reason(OTHER))])

    asyncio.run(scenario())


def test_a_sync_waker_that_does_not_answer_delays_neither_its_record_nor_later_writes(store_url: str) -> None:
    waker = HeldSyncWaker(held=True)

    async def scenario() -> None:
        async with await sessionwatch.aio.open(store_url, waker=as_waker(waker)) as watch:
            try:
                await watched(watch, TARGET, OTHER)
                first = await goal(watch, TARGET)
                second = await goal(watch, OTHER)

                assert waker.calls == []  # neither wake has answered, and both records returned
                assert second.sequence == first.sequence + 1
                assert {n.target for n in await watch.pending_notices(WATCHER)} == {TARGET, OTHER}
            finally:
                waker.release.set()  # else closing would wait for the held wakes
            await watch.settled()
            assert waker.calls == [(WATCHER, reason(TARGET)), (WATCHER, reason(OTHER))]  # in order

    asyncio.run(scenario())


# ---------------------------------------------------------------------------- failing wakers


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_failing_waker_is_logged_once_and_changes_nothing(
    store_url: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    waker: FailingWaker | FailingAsyncWaker = FailingWaker() if kind == "sync" else FailingAsyncWaker()
    caplog.set_level(logging.WARNING, logger="sessionwatch")

    async def scenario() -> None:
        async with await sessionwatch.aio.open(store_url, waker=as_waker(waker)) as watch:
            await watched(watch, TARGET)
            first = await goal(watch)
            await watch.settled()
            second = await goal(watch)  # the store goes on

            assert second.sequence == first.sequence + 1
            [notice] = await watch.pending_notices(WATCHER)
            assert notice.target == TARGET
            assert (await watch.audit()).ok

    asyncio.run(scenario())

    assert [r.getMessage() for r in caplog.records] == [
        f"sessionwatch: wake failed (watcher={WATCHER!r} reason={reason(TARGET)} error=WakeFailedError)"
    ]


# -------------------------------------------------------------------------------- cross-process

CHILD = r"""
import sys
import sessionwatch
from sessionwatch import Actor

with sessionwatch.open(sys.argv[1], sweep_on_open=False) as watch:
    watch.record(
        sys.argv[2], kind="human_direct_message", actor=Actor.human(), summary="human message via child"
    )
"""


@pytest.fixture
def shared_postgres() -> Iterator[str]:
    with postgres_url("sw_aio_wakes") as url:
        yield url


@pytest.mark.slow
@needs_postgres
def test_a_notice_another_process_opens_reaches_the_async_waker_on_the_loop(shared_postgres: str) -> None:
    waker = WhereWaker()

    async def scenario() -> int:
        async with await sessionwatch.aio.open(shared_postgres, waker=as_waker(waker)) as watch:
            await watched(watch, TARGET)
            await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-c", CHILD, shared_postgres, TARGET],
                check=True,
                timeout=120,
            )
            await asyncio.wait_for(waker.woken.wait(), PATIENCE_S)
            await watch.settled()
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())

    assert waker.calls == [(WATCHER, reason(TARGET))]
    assert waker.threads == [loop_thread]


class _AsyncHeartbeat:
    async def wake(self, watcher_key: str, reason: str) -> None:
        del watcher_key, reason


def test_the_sync_facade_refuses_an_async_waker_naming_the_waker() -> None:
    waker = _AsyncHeartbeat()
    assert isinstance(waker, sessionwatch.aio.AsyncWaker)
    with pytest.raises(sessionwatch.InvalidQuery) as refused:
        sessionwatch.open("memory://", waker=cast("Waker", waker))
    assert refused.value.field == "waker"
