"""The OpenAI Agents SDK example and hooks, on the real SDK with its scripted models (no network).

A worker session changed by a person leaves exactly one notice for its manager; the manager's next
model call is sent that notice (in its instructions), and no call after it is, because the first
call's answer acknowledged it. A call that fails acknowledges nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, set_tracing_disabled
from agents.run_config import CallModelData, ModelInputData
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message
from example_runs import load_example, run_example

import sessionwatch
import sessionwatch.aio
from sessionwatch import InvalidQuery
from sessionwatch.integrations.openai_agents import NOTICES_HEADER, NoticeHooks

MANAGER = "agent:main:main"
WORKER = "agent:main:subagent:worker"


def notice_lines(instructions: str | None) -> list[str]:
    return [line for line in (instructions or "").splitlines() if line.startswith("- ")]


def test_a_worker_changed_by_a_person_shows_its_manager_exactly_one_notice_once(tmp_path: Path) -> None:
    example = load_example("openai_agents_manager")
    story = asyncio.run(example.main(f"sqlite:///{tmp_path / 'state.db'}"))
    first, *later = story.manager.calls
    assert notice_lines(first.system_instructions) == [
        (
            '- Session "agent:main:subagent:writer" changed (other actor). Reconcile before acting: '
            'session_status sessionKey "agent:main:subagent:writer" changesSince 0.'
        )
    ]
    assert first.system_instructions is not None
    assert first.system_instructions.startswith("You coordinate a researcher and a writer.\n\n")
    assert len(later) == 2
    assert [NOTICES_HEADER in (call.system_instructions or "") for call in later] == [False, False]
    assert story.pending_after == []


def test_the_workers_driven_by_the_manager_see_no_notices_and_record_no_human_turn(tmp_path: Path) -> None:
    example = load_example("openai_agents_manager")
    url = f"sqlite:///{tmp_path / 'state.db'}"
    story = asyncio.run(example.main(url))
    worker_calls = [*story.researcher.calls, *story.writer.calls]
    assert len(worker_calls) == 3
    assert all(NOTICES_HEADER not in (call.system_instructions or "") for call in worker_calls)

    async def kinds(key: str) -> list[str]:
        async with await sessionwatch.aio.open(url) as watch:
            status = await watch.session_status(key, changes_since=0)
            assert status.state_changes is not None
            return [change.kind for change in status.state_changes.events]

    assert asyncio.run(kinds(example.WRITER)) == ["human_direct_message"]
    assert asyncio.run(kinds(example.RESEARCHER)) == []
    with sessionwatch.open(url) as watch:  # the person's turn names the SDK session it went into
        recorded = [signal for log in watch.store.read_model().signals.values() for signal in log]
        assert [(s.session_key, s.session_id) for s in recorded if s.kind == "human_direct_message"] == [
            (example.WRITER, "writer")
        ]


def test_the_example_runs_as_a_script() -> None:
    assert run_example("openai_agents_manager") == [
        "pending for the manager: ['agent:main:subagent:writer']",
        "manager model call 1 saw 1 notice(s)",
        "manager model call 2 saw 0 notice(s)",
        "manager model call 3 saw 0 notice(s)",
        "pending for the manager: []",
        "manager: The weekly summary is drafted.",
    ]


async def manager_with_a_stale_worker(
    model: ScriptedModel,
) -> tuple[sessionwatch.aio.AsyncSessionWatch, Agent[None], NoticeHooks]:
    watch = await sessionwatch.aio.open("memory://")
    await watch.upsert_session(WORKER, spawned_by=MANAGER)
    await watch.watch(MANAGER, WORKER)
    await watch.record_human_message(WORKER, channel="slack")
    manager = Agent(name="manager", instructions="You manage.", model=model)
    return watch, manager, NoticeHooks(watch, MANAGER, agents=[manager])


def test_a_failed_model_call_acknowledges_nothing_and_the_next_run_is_sent_the_notice_again() -> None:
    set_tracing_disabled(disabled=True)
    model = ScriptedModel([RuntimeError("the provider is down"), [assistant_message("ok")]])

    async def scenario() -> tuple[int, int, list[str], list[str]]:
        watch, manager, hooks = await manager_with_a_stale_worker(model)
        async with watch:
            with pytest.raises(RuntimeError, match="the provider is down"):
                await Runner.run(manager, "go", hooks=hooks, run_config=hooks.run_config())
            after_failure = len(await watch.pending_notices(MANAGER))
            await Runner.run(manager, "go again", hooks=hooks, run_config=hooks.run_config())
            after_answer = len(await watch.pending_notices(MANAGER))
            sent = [notice_lines(call.system_instructions)[0] for call in model.calls]
            return after_failure, after_answer, sent[:1], sent[1:]

    after_failure, after_answer, failed, answered = asyncio.run(scenario())
    assert (after_failure, after_answer) == (1, 0)
    assert failed == answered
    assert WORKER in failed[0]


def test_a_notice_that_opens_again_after_the_call_was_sent_stays_pending_for_the_next_call() -> None:
    set_tracing_disabled(disabled=True)
    watch_holder: list[sessionwatch.aio.AsyncSessionWatch] = []

    async def change_the_worker_meanwhile(_call: ModelCall) -> ModelStep:
        await watch_holder[0].record_human_message(WORKER, channel="slack")
        return ModelStep(output=[assistant_message("ok")])

    model = ScriptedModel([ModelStep.respond(change_the_worker_meanwhile), [assistant_message("ok")]])

    async def scenario() -> tuple[list[int], list[list[str]]]:
        watch, manager, hooks = await manager_with_a_stale_worker(model)
        watch_holder.append(watch)
        async with watch:
            pending = []
            for _ in range(2):
                await Runner.run(manager, "go", hooks=hooks, run_config=hooks.run_config())
                pending.append(len(await watch.pending_notices(MANAGER)))
            return pending, [notice_lines(call.system_instructions) for call in model.calls]

    pending, sent = asyncio.run(scenario())
    assert pending == [1, 0]  # the change during the first call opened one follow-up, seen by the second
    assert [len(lines) for lines in sent] == [1, 1]
    assert "changesSince 1" in sent[1][0]


def test_the_hooks_name_the_agents_whose_calls_see_notices() -> None:
    async def scenario() -> None:
        async with await sessionwatch.aio.open("memory://") as watch:
            NoticeHooks(watch, MANAGER, agents=[])

    with pytest.raises(InvalidQuery, match="agents"):
        asyncio.run(scenario())


def test_a_streamed_run_is_sent_the_notice_once_and_acknowledges_it() -> None:
    set_tracing_disabled(disabled=True)
    model = ScriptedModel([[assistant_message("ok")], [assistant_message("ok")]])

    async def scenario() -> tuple[list[int], list[list[str]]]:
        watch, manager, hooks = await manager_with_a_stale_worker(model)
        async with watch:
            pending = []
            for _ in range(2):
                streamed = Runner.run_streamed(manager, "go", hooks=hooks, run_config=hooks.run_config())
                events = [event async for event in streamed.stream_events()]
                assert events, "the streamed run streams its events"
                pending.append(len(await watch.pending_notices(MANAGER)))
            return pending, [notice_lines(call.system_instructions) for call in model.calls]

    pending, sent = asyncio.run(scenario())
    assert [call.streamed for call in model.calls] == [True, True]
    assert pending == [0, 0]
    assert [len(lines) for lines in sent] == [1, 0]


def test_a_failing_store_never_fails_the_run_it_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    set_tracing_disabled(disabled=True)
    model = ScriptedModel([[assistant_message("ok")]])

    async def scenario() -> object:
        watch, manager, hooks = await manager_with_a_stale_worker(model)
        await watch.aclose()
        result = await Runner.run(manager, "go", hooks=hooks, run_config=hooks.run_config())
        return result.final_output

    with caplog.at_level("WARNING", logger="sessionwatch"):
        assert asyncio.run(scenario()) == "ok"
    assert model.calls[0].system_instructions == "You manage."
    assert [r.getMessage() for r in caplog.records] == [
        f"sessionwatch: notices not shown (session_key={MANAGER!r} reason=StoreError)"
    ]


def test_a_host_filter_runs_first_and_the_notices_follow_its_instructions() -> None:
    set_tracing_disabled(disabled=True)
    model = ScriptedModel([[assistant_message("ok")]])

    def host_filter(data: CallModelData[Any]) -> ModelInputData:
        return ModelInputData(input=data.model_data.input, instructions="The host's own instructions.")

    async def scenario() -> None:
        watch, manager, hooks = await manager_with_a_stale_worker(model)
        async with watch:
            config = hooks.run_config(RunConfig(call_model_input_filter=host_filter, workflow_name="host"))
            assert config.workflow_name == "host"
            await Runner.run(manager, "go", hooks=hooks, run_config=config)

    asyncio.run(scenario())
    instructions = model.calls[0].system_instructions or ""
    assert instructions.startswith(f"The host's own instructions.\n\n{NOTICES_HEADER}\n- ")
