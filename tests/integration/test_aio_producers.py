"""Producers on the async façade are best effort: they never raise, they log one line and answer None.

Each producer (`record_human_message`, `record_goal_changed`, `record_spawn`, `record_run_terminal`,
`record_compacted`, `record_adopted`, `record_session_created`) is called with the arguments that
record a signal on a healthy store (the control), then on a closed store, with bad input, and on a
store whose writes fail (tests/probed_store.py). Each failing call answers None and logs one line
naming its kind, and a store whose write failed goes on recording afterwards.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable

import pytest
from probed_store import probe_opened_stores

import sessionwatch.aio
from sessionwatch import Actor, Signal
from sessionwatch.aio import AsyncSessionWatch

WATCHER = "agent:main:main"
TARGET = "agent:main:worker"
CHILD = "agent:main:subagent:child"
ADOPTED = "agent:main:adopted"
BAD_KEY: str = 42  # type: ignore[assignment]  # a host's bug: not a string

Producer = Callable[[AsyncSessionWatch, str], Awaitable[Signal | None]]
"""One producer call, on the session key given (`BAD_KEY` for bad input)."""

PRODUCERS: dict[str, tuple[str, Producer]] = {
    "record_human_message": (
        "human_direct_message",
        lambda w, key: w.record_human_message(key, channel="telegram"),
    ),
    "record_goal_changed": ("goal_changed", lambda w, key: w.record_goal_changed(key, summary="goal set")),
    "record_spawn": (
        "child_spawned",
        lambda w, key: w.record_spawn(requester_key=WATCHER, child_key=key, child_run_id="run-1"),
    ),
    "record_run_terminal": (
        "run_completed",
        lambda w, key: w.record_run_terminal(
            child_key=key, run_id="run-1", requester_key=WATCHER, outcome="ok"
        ),
    ),
    "record_compacted": ("compacted", lambda w, key: w.record_compacted(key, operation_id="op-1")),
    "record_adopted": ("adopted", lambda w, key: w.record_adopted(key)),
    "record_session_created": ("created", lambda w, key: w.record_session_created(key, actor=Actor.system())),
}
KEYS = {
    "record_spawn": CHILD,
    "record_run_terminal": CHILD,
    "record_adopted": ADOPTED,
    "record_session_created": CHILD,
}


def key_of(name: str) -> str:
    return KEYS.get(name, TARGET)


def not_recorded(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("sessionwatch: signal not")]


async def ready(url: str) -> AsyncSessionWatch:
    """A store where every producer records: the target is watched, so a human turn counts."""
    watch = await sessionwatch.aio.open(url)
    await watch.upsert_session(TARGET)
    assert await watch.watch(WATCHER, TARGET)
    return watch


def test_the_producers_are_every_record_method_but_the_strict_ones() -> None:
    producers = {
        name
        for name, member in vars(AsyncSessionWatch).items()
        if inspect.iscoroutinefunction(member) and name.startswith("record_")
    }
    assert producers - {"record_many"} == set(PRODUCERS)


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_producer_records_on_a_healthy_store(store_url: str, name: str) -> None:
    kind, produce = PRODUCERS[name]

    async def scenario() -> Signal | None:
        async with await ready(store_url) as watch:
            return await produce(watch, key_of(name))

    signal = asyncio.run(scenario())

    assert signal is not None
    assert (signal.kind, signal.session_key) == (kind, key_of(name))


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_producer_on_a_closed_async_store_answers_none_and_logs_one_line(
    store_url: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    kind, produce = PRODUCERS[name]

    async def scenario() -> Signal | None:
        watch = await ready(store_url)
        await watch.aclose()
        caplog.set_level(logging.DEBUG, logger="sessionwatch")
        return await produce(watch, key_of(name))

    assert asyncio.run(scenario()) is None
    assert not_recorded(caplog) == [
        f"sessionwatch: signal not recorded (session_key={key_of(name)!r} kind={kind} reason=StoreError)"
    ]


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_producer_given_bad_input_answers_none_logs_one_line_and_writes_nothing(
    store_url: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    kind, produce = PRODUCERS[name]

    async def scenario() -> tuple[Signal | None, int]:
        async with await ready(store_url) as watch:
            before = (await watch.session_status(TARGET)).state_version
            caplog.set_level(logging.DEBUG, logger="sessionwatch")
            answer = await produce(watch, BAD_KEY)
            assert (await watch.session_status(TARGET)).state_version == before
            return answer, len(await watch.sessions_list())

    answer, sessions = asyncio.run(scenario())

    assert answer is None
    assert sessions == 1  # the target alone: nothing was registered for the bad key
    assert not_recorded(caplog) == [  # the key as logged is bounded text; the reason names the field
        f"sessionwatch: signal not recorded (session_key='42' kind={kind} reason=session_key)"
    ]


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_producer_whose_write_fails_answers_none_and_the_store_goes_on(
    store_url: str, name: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind, produce = PRODUCERS[name]
    stores = probe_opened_stores(monkeypatch)

    async def scenario() -> tuple[Signal | None, Signal | None]:
        async with await ready(store_url) as watch:
            [store] = stores
            store.fail_writes = True
            caplog.set_level(logging.DEBUG, logger="sessionwatch")
            failed = await produce(watch, key_of(name))
            store.fail_writes = False
            return failed, await produce(watch, key_of(name))

    failed, afterwards = asyncio.run(scenario())

    assert failed is None
    assert afterwards is not None
    assert afterwards.kind == kind
    assert not_recorded(caplog) == [
        f"sessionwatch: signal not recorded (session_key={key_of(name)!r} kind={kind} reason=StoreError)"
    ]
