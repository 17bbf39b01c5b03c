"""The LangGraph example, on real graphs with a checkpointer and langchain_core's fake chat model.

A person's answer at a worker's `interrupt` is one human turn of the worker's session; the manager's
next pass drains exactly one notice, reconciles it, and its model's prompt carries it; the pass
after that drains none and the model's prompt carries none.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from example_runs import load_example, run_example

NOTICE = (
    '- Session "agent:main:subagent:writer" changed (other actor). Reconcile before acting: '
    'session_status sessionKey "agent:main:subagent:writer" changesSince 0.'
)


def test_a_resumed_interrupt_shows_the_managers_next_prompt_exactly_one_notice_once(tmp_path: Path) -> None:
    prompts, pending = asyncio.run(
        load_example("langgraph_reconcile").main(f"sqlite:///{tmp_path / 'state.db'}")
    )
    first, second = prompts
    assert [line for line in first.splitlines() if line.startswith("- ")] == [NOTICE]
    assert "Reconciled:\nagent:main:subagent:writer: human message via langgraph" in first
    assert "changed (other actor)" not in second
    assert pending == []


def test_the_example_runs_as_a_script() -> None:
    assert run_example("langgraph_reconcile") == [
        "worker verdict: Approved, but shorten it.",
        "manager pass 1: 1 notice(s), A person answered the writer; I will review the draft.",
        "  reconciled agent:main:subagent:writer: human message via langgraph",
        "manager pass 2: 0 notice(s), All quiet.",
        "pending for the manager: []",
    ]
