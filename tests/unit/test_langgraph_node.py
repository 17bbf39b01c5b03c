"""The LangGraph node and resume helper, on small real graphs (in-memory checkpointer).

`drain_notices` drains the thread's session into `sessionwatch_notices`, replacing what an earlier
pass wrote; `human_resume` records each answered interrupt once as a human turn and refuses a
thread with nothing to resume.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

import sessionwatch.aio
from sessionwatch import Actor, InvalidQuery
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.integrations.langgraph import (
    NOTICES_KEY,
    NoticeEntry,
    NoticesState,
    drain_notices,
    human_resume,
    notices_text,
)

WATCHER = "agent:main:main"
WORKER = "agent:main:subagent:worker"
THREAD: RunnableConfig = {"configurable": {"thread_id": "t1"}}


def run(scenario: Callable[[AsyncSessionWatch], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with await sessionwatch.aio.open("memory://") as watch:
            await watch.upsert_session(WORKER, spawned_by=WATCHER)
            await watch.watch(WATCHER, WORKER)
            return await scenario(watch)

    return asyncio.run(main())


def notices_graph(
    watch: AsyncSessionWatch,
) -> CompiledStateGraph[NoticesState, None, NoticesState, NoticesState]:
    graph = StateGraph(NoticesState)
    graph.add_node("notices", drain_notices(watch, lambda config: config["configurable"]["session"]))
    graph.add_edge(START, "notices")
    graph.add_edge("notices", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_the_node_drains_the_threads_notices_into_the_state_and_a_later_pass_replaces_them() -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "w", "session": WATCHER}}

    async def scenario(watch: AsyncSessionWatch) -> tuple[list[NoticeEntry], int, list[NoticeEntry]]:
        graph = notices_graph(watch)
        await watch.record_human_message(WORKER, channel="slack")
        first = await graph.ainvoke({}, config)
        left = len(await watch.pending_notices(WATCHER))
        second = await graph.ainvoke({}, config)
        return first[NOTICES_KEY], left, second[NOTICES_KEY]

    first, left, second = run(scenario)
    assert first == [
        {
            "target": WORKER,
            "target_agent_id": "main",
            "last_seen": 0,
            "text": f'Session "{WORKER}" changed (other actor). Reconcile before acting: '
            f'session_status sessionKey "{WORKER}" changesSince 0.',
        }
    ]
    assert left == 0
    assert second == []


def test_the_node_drains_only_the_session_its_key_names() -> None:
    async def scenario(watch: AsyncSessionWatch) -> tuple[list[NoticeEntry], int]:
        await watch.record_human_message(WORKER, channel="slack")
        node = drain_notices(watch, "agent:main:other")
        update = await node({}, THREAD)
        return update["sessionwatch_notices"], len(await watch.pending_notices(WATCHER))

    assert run(scenario) == ([], 1)


def test_notices_text_is_one_line_per_notice() -> None:
    entry = NoticeEntry(target=WORKER, target_agent_id="main", last_seen=3, text="changed")
    assert notices_text([entry, entry]) == "- changed\n- changed"
    assert notices_text([]) == ""


class Asking(TypedDict, total=False):
    first: str
    second: str


def asking_graph(*, questions: int = 1) -> CompiledStateGraph[Asking, None, Asking, Asking]:
    async def ask(state: Asking) -> Asking:  # noqa: ARG001 - asks before reading anything
        if questions == 1:
            return {"first": str(interrupt("first?"))}
        return {"first": str(interrupt("first?")), "second": str(interrupt("second?"))}

    graph = StateGraph(Asking)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=InMemorySaver())


async def human_turns(watch: AsyncSessionWatch) -> list[str]:
    status = await watch.session_status(WORKER, changes_since=0)
    assert status.state_changes is not None
    return [e.summary for e in status.state_changes.events if e.kind == "human_direct_message"]


def test_a_resume_is_one_human_turn_recorded_once_however_often_it_is_built() -> None:
    async def scenario(watch: AsyncSessionWatch) -> tuple[list[str], object, list[str]]:
        graph = asking_graph()
        await graph.ainvoke({}, THREAD)
        await human_resume(watch, graph, THREAD, "yes", session_key=WORKER, channel="web")
        command = await human_resume(watch, graph, THREAD, "yes", session_key=WORKER, channel="web")
        done = await graph.ainvoke(command, THREAD)
        return await human_turns(watch), done, [n.target for n in await watch.pending_notices(WATCHER)]

    turns, done, pending = run(scenario)
    assert turns == ["human message via web"]
    assert done == {"first": "yes"}
    assert pending == [WORKER]


def test_a_resume_of_interrupts_by_id_records_each_answered_interrupt() -> None:
    async def scenario(watch: AsyncSessionWatch) -> list[str]:
        graph = asking_graph(questions=2)
        await graph.ainvoke({}, THREAD)
        [first] = (await graph.aget_state(THREAD)).interrupts
        await graph.ainvoke(
            await human_resume(watch, graph, THREAD, {first.id: "a"}, session_key=WORKER), THREAD
        )
        [second] = (await graph.aget_state(THREAD)).interrupts
        await graph.ainvoke(await human_resume(watch, graph, THREAD, "b", session_key=WORKER), THREAD)
        assert first.id != second.id
        return await human_turns(watch)

    assert run(scenario) == ["human message via langgraph"] * 2


def test_an_agent_answering_an_interrupt_records_nothing() -> None:
    async def scenario(watch: AsyncSessionWatch) -> list[str]:
        graph = asking_graph()
        await graph.ainvoke({}, THREAD)
        await human_resume(watch, graph, THREAD, "ok", session_key=WORKER, actor=Actor.agent(WATCHER))
        return await human_turns(watch)

    assert run(scenario) == []


def test_a_thread_with_nothing_to_resume_or_an_unknown_interrupt_is_refused() -> None:
    async def scenario(watch: AsyncSessionWatch) -> list[str]:
        graph = asking_graph()
        fields = []
        with pytest.raises(InvalidQuery) as nothing:
            await human_resume(watch, graph, THREAD, "yes", session_key=WORKER)
        fields.append(nothing.value.field)
        await graph.ainvoke({}, THREAD)
        [pending] = (await graph.aget_state(THREAD)).interrupts
        with pytest.raises(InvalidQuery) as unknown:
            await human_resume(watch, graph, THREAD, {pending.id: "a", "nope": "b"}, session_key=WORKER)
        fields.append(unknown.value.field)
        assert await human_turns(watch) == []
        return fields

    assert run(scenario) == ["config", "value"]


def test_a_failing_store_never_fails_the_graph_it_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> list[NoticeEntry]:
        watch = await sessionwatch.aio.open("memory://")
        await watch.aclose()
        update = await drain_notices(watch, WATCHER)({}, THREAD)
        return update["sessionwatch_notices"]

    with caplog.at_level("WARNING", logger="sessionwatch"):
        assert asyncio.run(main()) == []
    assert [r.getMessage() for r in caplog.records] == [
        f"sessionwatch: notices not drained (session_key={WATCHER!r} reason=StoreError)"
    ]
