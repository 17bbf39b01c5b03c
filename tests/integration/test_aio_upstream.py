"""The upstream monitor under the async façade: sync and async ports, and a monitor task that stops.

`upstream_tick` asks an async provider (and an async transcript port) on the event loop and a sync
one off it, and records what they report. `start_upstream_monitor` runs the passes as a loop task;
`await handle.stop()` ends it, and nothing is published afterwards: not by a later pass, nor by a
pass that was still waiting on its provider when `stop()` gave up on it. (The sync monitor's own
tests, tests/integration/test_upstream_monitor.py, run through the async façade too.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import cast

import pytest

import sessionwatch
import sessionwatch.aio
from sessionwatch import UpstreamActivity, UpstreamMissing, UpstreamProbe
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.domain.ports import Transcripts, UpstreamProvider

ADOPTED = "agent:main:adopted"
WATCHER = "agent:main:main"
CATALOG = "claude-code"
PATIENCE_S = 30.0
"""A failure bound for waiting on the monitor (never reached when healthy), not a measured figure."""

Answers = list[UpstreamActivity | UpstreamMissing]


def one_turn(probes: Sequence[UpstreamProbe], offset: int) -> Answers:
    return [
        UpstreamActivity(session_key=p.session_key, human_turns=1, next_marker={"offset": offset})
        for p in probes
    ]


class SyncProvider:
    """One human turn per call, each at a new offset; notes the thread and the probes of each call."""

    def __init__(self) -> None:
        self.threads: list[int] = []
        self.probes: list[UpstreamProbe] = []

    def check_upstream_activity(self, probes: Sequence[UpstreamProbe]) -> Answers:
        self.threads.append(threading.get_ident())
        self.probes.extend(probes)
        return one_turn(probes, 10 * len(self.threads))


class AsyncProvider:
    """`SyncProvider` as coroutines; a `held` one waits for `release` before it answers."""

    def __init__(self, *, held: bool = False) -> None:
        self.threads: list[int] = []
        self.probes: list[UpstreamProbe] = []
        self.held = held
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def check_upstream_activity(self, probes: Sequence[UpstreamProbe]) -> Answers:
        self.threads.append(threading.get_ident())
        self.probes.extend(probes)
        self.entered.set()
        if self.held:
            await self.release.wait()
        return one_turn(probes, 10 * len(self.threads))


class AsyncTranscripts:
    """The host's transcript port as a coroutine: the session's own recent texts."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.threads: list[int] = []

    async def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> list[str]:
        assert (session_key, agent_id) == (ADOPTED, "main")
        self.threads.append(threading.get_ident())
        await asyncio.sleep(0)
        return self.texts[-limit:]


def as_provider(provider: SyncProvider | AsyncProvider) -> UpstreamProvider:
    return cast("UpstreamProvider", provider)  # the ports are typed sync; async ones are taken at run time


async def linked(url: str) -> AsyncSessionWatch:
    watch = await sessionwatch.aio.open(url)
    await watch.upsert_session(WATCHER)
    await watch.link_upstream(
        ADOPTED,
        catalog_id=CATALOG,
        host_id="laptop",
        thread_id="t-1",
        upstream_kind="claude-jsonl",
        upstream_ref="/transcripts/t-1.jsonl",
        marker={"offset": 0},
    )
    assert await watch.watch(WATCHER, ADOPTED)
    return watch


async def human_turns(watch: AsyncSessionWatch) -> int:
    changes = (await watch.session_status(ADOPTED, changes_since=0)).state_changes
    assert changes is not None
    return sum(1 for e in changes.events if e.kind == "human_direct_message")


async def eventually(condition: Callable[[], bool]) -> None:
    """Wait on the loop until `condition()` holds (polling; the bound only fails a hang)."""
    async with asyncio.timeout(PATIENCE_S):
        while not condition():  # noqa: ASYNC110 - the handle's counters have no event to wait on
            await asyncio.sleep(0.005)


# ---------------------------------------------------------------------------------------- ticks


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_upstream_tick_records_a_providers_activity_asking_an_async_one_on_the_loop_and_a_sync_one_off_it(
    store_url: str, kind: str
) -> None:
    provider = SyncProvider() if kind == "sync" else AsyncProvider()

    async def scenario() -> int:
        async with await linked(store_url) as watch:
            report = await watch.upstream_tick({CATALOG: as_provider(provider)})

            assert [s.session_key for s in report.recorded] == [ADOPTED]
            assert await human_turns(watch) == 1
            link = await watch.upstream_link(ADOPTED)
            assert link is not None
            assert link.marker == {"offset": 10}
            [notice] = await watch.pending_notices(WATCHER)
            assert notice.target == ADOPTED
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())

    [thread] = provider.threads
    assert (thread == loop_thread) == (kind == "async")


def test_follow_upstream_records_one_sessions_activity_off_the_loop(store_url: str) -> None:
    provider = AsyncProvider()

    async def scenario() -> None:
        async with await linked(store_url) as watch:
            report = await watch.follow_upstream(ADOPTED, {CATALOG: as_provider(provider)})

            assert [s.session_key for s in report.recorded] == [ADOPTED]
            assert await human_turns(watch) == 1
            [notice] = await watch.pending_notices(WATCHER)
            assert notice.target == ADOPTED

    asyncio.run(scenario())
    assert [probe.session_key for probe in provider.probes] == [ADOPTED]


def test_an_async_transcripts_port_answers_on_the_loop_and_its_texts_reach_the_probe(store_url: str) -> None:
    transcripts = AsyncTranscripts(["fix the  build", "ship it"])
    provider = AsyncProvider()

    async def scenario() -> int:
        async with await linked(store_url) as watch:
            report = await watch.upstream_tick(
                {CATALOG: as_provider(provider)}, transcripts=cast("Transcripts", transcripts)
            )
            assert len(report.recorded) == 1
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())

    [probe] = provider.probes
    assert probe.own_recent_user_texts == ("fix the build", "ship it")  # normalized, newest last
    assert transcripts.threads
    assert set(transcripts.threads) == {loop_thread}


# -------------------------------------------------------------------------------------- monitor


def test_the_monitor_task_ticks_until_stopped_and_publishes_nothing_afterwards(store_url: str) -> None:
    provider = SyncProvider()
    interval = 0.01

    async def scenario() -> None:
        async with await linked(store_url) as watch:
            handle = await watch.start_upstream_monitor(
                {CATALOG: as_provider(provider)}, interval=interval, initial_delay=0
            )
            await eventually(lambda: handle.ticks >= 2)
            assert await handle.stop() is True
            assert handle.running is False
            ticks, asked, turns = handle.ticks, len(provider.threads), await human_turns(watch)

            await asyncio.sleep(20 * interval)  # room for many more passes, had it not stopped

            assert (handle.ticks, len(provider.threads), await human_turns(watch)) == (ticks, asked, turns)
            assert turns >= 2

    asyncio.run(scenario())


def test_a_monitor_stopped_while_its_async_provider_answers_abandons_that_pass_and_publishes_nothing_of_it(
    store_url: str,
) -> None:
    provider = AsyncProvider(held=True)

    async def scenario() -> None:
        async with await linked(store_url) as watch:
            handle = await watch.start_upstream_monitor(
                {CATALOG: as_provider(provider)}, interval=60.0, initial_delay=0
            )
            await asyncio.wait_for(provider.entered.wait(), PATIENCE_S)  # a pass waits on the provider

            assert await handle.stop(timeout=0.01) is False  # still answering: abandoned, not killed
            provider.release.set()  # the provider answers now: its activity must not be published
            await eventually(lambda: not handle.running)  # the abandoned pass ends by itself

            assert handle.ticks == 1
            report = handle.last_report
            assert report is not None
            assert (report.discarded, report.recorded) == ((ADOPTED,), ())
            assert await human_turns(watch) == 0
            link = await watch.upstream_link(ADOPTED)
            assert link is not None
            assert link.marker == {"offset": 0}
            assert await watch.pending_notices(WATCHER) == []
            assert len(provider.threads) == 1

    asyncio.run(scenario())
