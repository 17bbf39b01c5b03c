"""`WatchedSession`: the SDK's session protocol over any inner session, recording only a person's turns.

Each user message the SDK adds is one human turn of the bound sessionwatch session; tool outputs,
model output and other roles are not. Reads, pops and clears go to the inner session; a popped user
message added back is not a second turn; turns driven by an agent record nothing; a failing store
never fails the SDK's write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from agents import (
    Agent,
    RunContextWrapper,
    Runner,
    SQLiteSession,
    is_openai_responses_compaction_aware_session,
    set_tracing_disabled,
)
from agents.items import TResponseInputItem
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message

import sessionwatch.aio
from sessionwatch import Actor
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.integrations.openai_agents import WatchedSession, is_person_message

WATCHER = "agent:main:main"
WORKER = "agent:main:subagent:worker"

PERSON: TResponseInputItem = {"role": "user", "content": "Use British spelling."}
PERSON_TYPED: TResponseInputItem = {
    "type": "message",
    "role": "user",
    "content": [{"type": "input_text", "text": "And keep it short."}],
}
MODEL_OUTPUT: TResponseInputItem = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Noted.", "annotations": []}],
}
TOOL_CALL: TResponseInputItem = {
    "type": "function_call",
    "call_id": "c1",
    "name": "lookup",
    "arguments": "{}",
}
TOOL_OUTPUT: TResponseInputItem = {"type": "function_call_output", "call_id": "c1", "output": "42"}
DEVELOPER: TResponseInputItem = {"role": "developer", "content": "Be brief."}
SYSTEM: TResponseInputItem = {"role": "system", "content": "You are a writer."}


def run(scenario: Callable[[AsyncSessionWatch, WatchedSession], Awaitable[Any]], **options: Any) -> Any:
    """`scenario` on a watched worker and a wrapper of it over an in-memory SQLite session."""

    async def main() -> Any:
        async with await sessionwatch.aio.open("memory://") as watch:
            await watch.upsert_session(WORKER, spawned_by=WATCHER)
            await watch.watch(WATCHER, WORKER)
            session = WatchedSession(SQLiteSession("worker"), watch, WORKER, **options)
            return await scenario(watch, session)

    return asyncio.run(main())


async def human_turns(watch: AsyncSessionWatch) -> list[str]:
    status = await watch.session_status(WORKER, changes_since=0)
    assert status.state_changes is not None
    return [change.summary for change in status.state_changes.events if change.kind == "human_direct_message"]


def test_each_user_message_the_sdk_adds_is_one_human_turn_and_nothing_else_is() -> None:
    async def scenario(watch: AsyncSessionWatch, session: WatchedSession) -> tuple[list[str], int]:
        await session.add_items([PERSON, MODEL_OUTPUT, TOOL_CALL, TOOL_OUTPUT, DEVELOPER, SYSTEM])
        await session.add_items([PERSON_TYPED])
        return await human_turns(watch), len(await session.get_items())

    turns, stored = run(scenario, channel="slack")
    assert turns == ["human message via slack", "human message via slack"]
    assert stored == 7


def test_only_user_role_messages_are_a_persons() -> None:
    assert [is_person_message(item) for item in (PERSON, PERSON_TYPED)] == [True, True]
    others = (MODEL_OUTPUT, TOOL_CALL, TOOL_OUTPUT, DEVELOPER, SYSTEM, "text", None)
    assert [is_person_message(item) for item in others] == [False] * len(others)


def test_a_human_turn_leaves_the_watcher_one_notice() -> None:
    async def scenario(watch: AsyncSessionWatch, session: WatchedSession) -> list[str]:
        await session.add_items([PERSON])
        await session.add_items([PERSON_TYPED])
        return [notice.target for notice in await watch.pending_notices(WATCHER)]

    assert run(scenario) == [WORKER]


def test_turns_an_agent_drives_record_nothing() -> None:
    async def scenario(watch: AsyncSessionWatch, session: WatchedSession) -> tuple[list[str], list[object]]:
        await session.add_items([PERSON, MODEL_OUTPUT])
        return await human_turns(watch), list(await watch.pending_notices(WATCHER))

    assert run(scenario, actor=Actor.agent(WATCHER)) == ([], [])


def test_get_pop_and_clear_go_to_the_inner_session() -> None:
    async def scenario(
        _watch: AsyncSessionWatch, session: WatchedSession
    ) -> tuple[list[TResponseInputItem], TResponseInputItem | None, list[TResponseInputItem], list[object]]:
        await session.add_items([PERSON, MODEL_OUTPUT, TOOL_OUTPUT])
        latest = await session.get_items(limit=1)
        popped = await session.pop_item()
        left = await session.inner.get_items()
        await session.clear_session()
        return latest, popped, left, [*await session.inner.get_items(), await session.pop_item()]

    latest, popped, left, after_clear = run(scenario)
    assert latest == [TOOL_OUTPUT]
    assert popped == TOOL_OUTPUT
    assert left == [PERSON, MODEL_OUTPUT]
    assert after_clear == [None]


def test_a_popped_user_message_added_back_is_not_a_second_turn_but_a_new_one_is() -> None:
    async def scenario(watch: AsyncSessionWatch, session: WatchedSession) -> list[int]:
        counts = []
        await session.add_items([PERSON])
        counts.append(len(await human_turns(watch)))
        assert await session.pop_item() == PERSON
        await session.add_items([PERSON])  # the SDK's retry re-adds what it rewound
        counts.append(len(await human_turns(watch)))
        await session.add_items([PERSON])  # the same words typed again later
        counts.append(len(await human_turns(watch)))
        await session.pop_item()
        await session.clear_session()  # forgets the popped message
        await session.add_items([PERSON])
        counts.append(len(await human_turns(watch)))
        return counts

    assert run(scenario) == [1, 1, 2, 3]


def test_the_wrapper_is_an_sdk_session_with_the_inner_id_and_settings() -> None:
    async def scenario(_watch: AsyncSessionWatch, session: WatchedSession) -> tuple[bool, str, object]:
        return isinstance(session, Session), session.session_id, session.session_settings

    is_session, session_id, settings = run(scenario)
    assert is_session
    assert session_id == "worker"
    assert isinstance(settings, SessionSettings)


def test_a_store_that_fails_never_fails_the_sdks_write() -> None:
    async def main() -> list[TResponseInputItem]:
        watch = await sessionwatch.aio.open("memory://")
        session = WatchedSession(SQLiteSession("worker"), watch, WORKER)
        await watch.aclose()
        await session.add_items([PERSON])
        return await session.get_items()

    assert asyncio.run(main()) == [PERSON]


class ContextAwareSession:
    """An inner session that opts into the SDK's run context (`wrapper=`) and can compact."""

    def __init__(self) -> None:
        self.session_id = "aware"
        self.session_settings: SessionSettings | None = None
        self.items: list[TResponseInputItem] = []
        self.contexts: list[tuple[str, object]] = []
        self.compactions: list[object] = []

    async def get_items(
        self, limit: int | None = None, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        self.contexts.append(("get", wrapper))
        return self.items[-limit:] if limit else list(self.items)

    async def add_items(
        self, items: list[TResponseInputItem], *, wrapper: RunContextWrapper[Any] | None = None
    ) -> None:
        self.contexts.append(("add", wrapper))
        self.items.extend(items)

    async def pop_item(self, *, wrapper: RunContextWrapper[Any] | None = None) -> TResponseInputItem | None:
        self.contexts.append(("pop", wrapper))
        return self.items.pop() if self.items else None

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        self.contexts.append(("clear", wrapper))
        self.items.clear()

    async def run_compaction(self, args: object = None) -> None:
        self.compactions.append(args)


def test_an_inner_session_that_asks_for_the_run_context_gets_it_through_the_wrapper() -> None:
    set_tracing_disabled(disabled=True)
    inner = ContextAwareSession()

    async def scenario(watch: AsyncSessionWatch, _session: WatchedSession) -> list[str]:
        agent = Agent(name="writer", model=ScriptedModel([[assistant_message("Noted.")]]))
        await Runner.run(agent, "Use British spelling.", session=WatchedSession(inner, watch, WORKER))
        return await human_turns(watch)

    assert run(scenario) == ["human message via openai-agents"]
    assert {name for name, _ in inner.contexts} >= {"get", "add"}
    assert all(isinstance(context, RunContextWrapper) for _, context in inner.contexts)


def test_what_else_the_inner_session_offers_is_reachable_so_compaction_still_runs() -> None:
    inner = ContextAwareSession()

    async def scenario(watch: AsyncSessionWatch, plain: WatchedSession) -> tuple[bool, bool]:
        aware = WatchedSession(inner, watch, WORKER)
        await aware.run_compaction({"force": True})  # type: ignore[operator]
        compacting = is_openai_responses_compaction_aware_session
        return compacting(aware), compacting(plain)

    assert run(scenario) == (True, False)
    assert inner.compactions == [{"force": True}]
