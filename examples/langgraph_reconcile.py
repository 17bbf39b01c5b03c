"""A LangGraph manager that reconciles the worker it watches before answering, offline.

The worker is a graph that stops at an `interrupt` for a person's approval; `human_resume` answers
it and records the answer as a human turn of the worker's session. The manager's graph drains its
notices first (`drain_notices`), then a reconcile step reads what changed on each worker it was
told about (`session_status` since the notice's last seen sequence), then its model answers. Its
next pass has nothing to reconcile: the first one drained the notice.

The chat model is langchain_core's `GenericFakeChatModel` (no network); a callback records every
prompt it receives. Run it with `python examples/langgraph_reconcile.py`.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

import sessionwatch.aio
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.integrations.langgraph import NoticesState, drain_notices, human_resume, notices_text

MANAGER = "agent:main:main"
WORKER = "agent:main:subagent:writer"


class Prompts(AsyncCallbackHandler):
    """Keeps every prompt the chat model receives, as text."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_chat_model_start(  # noqa: D102 - the callback's own documentation applies
        self,
        serialized: dict[str, Any],  # noqa: ARG002 - part of the callback's signature
        messages: list[list[BaseMessage]],
        **kwargs: object,  # noqa: ARG002 - run ids, tags and metadata: not needed here
    ) -> None:
        self.seen.extend("\n".join(str(m.content) for m in prompt) for prompt in messages)


class WorkerState(TypedDict, total=False):
    """The worker's draft and the person's verdict on it."""

    draft: str
    verdict: str


class ManagerState(NoticesState, total=False):
    """The manager's request, what it reconciled this pass, and its answer."""

    request: str
    reconciled: list[str]
    answer: str


def worker_graph() -> CompiledStateGraph[WorkerState, None, WorkerState, WorkerState]:
    """Draft, then stop for a person's approval."""

    async def write(state: WorkerState) -> WorkerState:  # noqa: ARG001 - the first step reads nothing
        return {"draft": "The weekly summary, first draft."}

    async def approve(state: WorkerState) -> WorkerState:
        return {"verdict": str(interrupt(f"Approve this draft? {state['draft']}"))}

    graph = StateGraph(WorkerState)
    graph.add_node("write", write)
    graph.add_node("approve", approve)
    graph.add_edge(START, "write")
    graph.add_edge("write", "approve")
    graph.add_edge("approve", END)
    return graph.compile(checkpointer=InMemorySaver())


def manager_graph(
    watch: AsyncSessionWatch, prompts: Prompts
) -> CompiledStateGraph[ManagerState, None, ManagerState, ManagerState]:
    """Drain the notices, reconcile each changed session, then answer with the model."""
    model = GenericFakeChatModel(
        messages=iter(
            [AIMessage("A person answered the writer; I will review the draft."), AIMessage("All quiet.")]
        ),
        callbacks=[prompts],
    )

    async def reconcile(state: ManagerState) -> ManagerState:
        lines = []
        for notice in state["sessionwatch_notices"]:
            status = await watch.session_status(notice["target"], changes_since=notice["last_seen"])
            events = status.state_changes.events if status.state_changes else ()
            lines.append(f"{notice['target']}: {', '.join(event.summary for event in events)}")
        return {"reconciled": lines}

    async def respond(state: ManagerState) -> ManagerState:
        system = "You coordinate the writer."
        if state["sessionwatch_notices"]:
            system += "\n" + notices_text(state["sessionwatch_notices"])
            system += "\nReconciled:\n" + "\n".join(state["reconciled"])
        answer = await model.ainvoke([SystemMessage(system), HumanMessage(state["request"])])
        return {"answer": str(answer.content)}

    graph = StateGraph(ManagerState)
    graph.add_node("notices", drain_notices(watch, MANAGER))
    graph.add_node("reconcile", reconcile)
    graph.add_node("respond", respond)
    graph.add_edge(START, "notices")
    graph.add_edge("notices", "reconcile")
    graph.add_edge("reconcile", "respond")
    graph.add_edge("respond", END)
    return graph.compile(checkpointer=InMemorySaver())


async def main(url: str = "memory://") -> tuple[list[str], list[str]]:
    """Run the story on the store `url` names, print it, and return the prompts and what is left pending."""
    prompts = Prompts()
    async with await sessionwatch.aio.open(url) as watch:
        await watch.upsert_session(WORKER, spawned_by=MANAGER)
        await watch.watch(MANAGER, WORKER)

        worker = worker_graph()
        thread: RunnableConfig = {"configurable": {"thread_id": "writer"}}
        await worker.ainvoke({}, thread)
        answer = await human_resume(watch, worker, thread, "Approved, but shorten it.", session_key=WORKER)
        done = await worker.ainvoke(answer, thread)
        print(f"worker verdict: {done['verdict']}")

        manager = manager_graph(watch, prompts)
        for number in (1, 2):
            state = await manager.ainvoke(
                {"request": "How is the summary going?"}, {"configurable": {"thread_id": "manager"}}
            )
            print(f"manager pass {number}: {len(state['sessionwatch_notices'])} notice(s), {state['answer']}")
            for line in state["reconciled"]:
                print(f"  reconciled {line}")
        pending = [notice.target for notice in await watch.pending_notices(MANAGER)]
        print(f"pending for the manager: {pending}")
    return prompts.seen, pending


if __name__ == "__main__":
    asyncio.run(main())
