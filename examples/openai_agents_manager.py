"""A manager agent that watches two workers, on the OpenAI Agents SDK, offline.

Each worker (a researcher and a writer) has its own sessionwatch session; the manager's session
watches both. A person talks to the writer directly, which the writer's `WatchedSession` records
as a human turn. The manager's next model call then sees exactly one notice (the writer changed),
and the calls after it see none: the first call's answer acknowledged it. The workers' own turns,
driven by the manager through their tools, record nothing: an agent's turns never notify.

The models are the SDK's `ScriptedModel` (no network, no API key); swap in real models to run it
for real. Run it with `python examples/openai_agents_manager.py`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from agents import Agent, Runner, SQLiteSession, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

import sessionwatch.aio
from sessionwatch import Actor
from sessionwatch.integrations.openai_agents import NoticeHooks, WatchedSession

MANAGER = "agent:main:main"
RESEARCHER = "agent:main:subagent:researcher"
WRITER = "agent:main:subagent:writer"


@dataclass(frozen=True)
class Story:
    """What happened: the scripted models (with every call they received) and what is left pending."""

    manager: ScriptedModel
    researcher: ScriptedModel
    writer: ScriptedModel
    pending_after: list[str]


async def main(url: str = "memory://") -> Story:
    """Run the story on the store `url` names and print it, one line per step."""
    set_tracing_disabled(disabled=True)  # nothing leaves the process
    manager_model = ScriptedModel(
        [
            [function_call("researcher", {"input": "Collect this week's numbers."}, call_id="c1")],
            [function_call("writer", {"input": "Draft the weekly summary."}, call_id="c2")],
            [assistant_message("The weekly summary is drafted.")],
        ]
    )
    researcher_model = ScriptedModel([[assistant_message("Revenue up 4%.")]])
    writer_model = ScriptedModel(
        [[assistant_message("Noted: British spelling.")], [assistant_message("Summary drafted.")]]
    )

    async with await sessionwatch.aio.open(url) as watch:
        for worker in (RESEARCHER, WRITER):
            await watch.upsert_session(worker, spawned_by=MANAGER)
            await watch.watch(MANAGER, worker)

        research_history = SQLiteSession("researcher")
        writer_history = SQLiteSession("writer")
        researcher = Agent(name="researcher", instructions="You find numbers.", model=researcher_model)
        writer = Agent(name="writer", instructions="You write summaries.", model=writer_model)
        manager = Agent(
            name="manager",
            instructions="You coordinate a researcher and a writer.",
            model=manager_model,
            tools=[
                researcher.as_tool(
                    "researcher",
                    "Ask the researcher.",
                    session=WatchedSession(research_history, watch, RESEARCHER, actor=Actor.agent(MANAGER)),
                ),
                writer.as_tool(
                    "writer",
                    "Ask the writer.",
                    session=WatchedSession(writer_history, watch, WRITER, actor=Actor.agent(MANAGER)),
                ),
            ],
        )

        # A person talks to the writer directly (say from Slack): a human turn of the writer's session.
        by_hand = WatchedSession(writer_history, watch, WRITER, channel="slack")
        await Runner.run(writer, "Use British spelling from now on.", session=by_hand)
        print(f"pending for the manager: {[n.target for n in await watch.pending_notices(MANAGER)]}")

        hooks = NoticeHooks(watch, MANAGER, agents=[manager])
        result = await Runner.run(
            manager, "Prepare the weekly summary.", hooks=hooks, run_config=hooks.run_config()
        )
        for number, call in enumerate(manager_model.calls, 1):
            lines = [line for line in (call.system_instructions or "").splitlines() if line.startswith("- ")]
            print(f"manager model call {number} saw {len(lines)} notice(s)")
        pending_after = [n.target for n in await watch.pending_notices(MANAGER)]
        print(f"pending for the manager: {pending_after}")
        print(f"manager: {result.final_output}")
    return Story(manager_model, researcher_model, writer_model, pending_after)


if __name__ == "__main__":
    asyncio.run(main())
