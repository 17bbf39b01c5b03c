"""sessionwatch for LangGraph: a node that drains a thread's notices into its state; resumes as human turns.

`drain_notices(watch, session_key)` is a graph node: it drains the session's pending notices and
writes them to the state key `sessionwatch_notices` (declare it with `NoticesState`). `human_resume`
builds the `Command(resume=...)` that answers a thread's pending interrupt and records the answer
as a human turn of the session, once per interrupt. Everything runs through an `AsyncSessionWatch`;
this module needs the `langgraph` extra.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeAlias, TypedDict

try:
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Command, StateSnapshot
except ModuleNotFoundError as missing:  # pragma: no cover - exercised in a fresh interpreter by a test
    from sessionwatch.adapters.extras import install_hint

    raise ImportError(
        "sessionwatch.integrations.langgraph needs LangGraph, the langgraph extra: "
        + install_hint("langgraph")
    ) from missing

from sessionwatch.adapters.app.checks import bounded
from sessionwatch.adapters.entry.aio import AsyncSessionWatch
from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.signals import Actor

__all__ = [
    "NOTICES_KEY",
    "NoticeEntry",
    "NoticesNode",
    "NoticesState",
    "SessionKey",
    "drain_notices",
    "human_resume",
    "notices_text",
]

logger = logging.getLogger("sessionwatch")

NOTICES_KEY = "sessionwatch_notices"
"""The state key `drain_notices` writes."""


class NoticeEntry(TypedDict):
    """One notice in the state, as plain values so that any checkpointer can store it."""

    target: str
    target_agent_id: str
    last_seen: int
    text: str


class NoticesState(TypedDict, total=False):
    """The state key `drain_notices` writes; a graph's state type adds it by inheriting this.

    The key has no reducer: each pass of the node replaces it with what that pass drained (an
    empty list when nothing was pending), so it always holds the notices of the current turn.
    """

    sessionwatch_notices: list[NoticeEntry]


SessionKey: TypeAlias = str | Callable[[RunnableConfig], str]
"""The sessionwatch session of a run: a key, or a function of the run's config (its `thread_id`, say)."""


class ThreadState(Protocol):
    """What `human_resume` needs of a compiled graph: its thread's current state."""

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's current state, its pending interrupts included."""
        ...


def _key(session_key: SessionKey, config: RunnableConfig) -> str:
    return session_key(config) if callable(session_key) else session_key


class NoticesNode(Protocol):
    """The node `drain_notices` builds, as LangGraph calls a node: with the state and the run's config."""

    async def __call__(self, state: NoticesState, config: RunnableConfig) -> NoticesState:
        """Drain the session's notices; the update for `sessionwatch_notices`."""
        ...


def drain_notices(watch: AsyncSessionWatch, session_key: SessionKey) -> NoticesNode:
    """A node that drains the session's pending notices into `sessionwatch_notices`.

    Draining acknowledges them: put the node right before the step that shows them to the model
    (or reconciles), so a notice is acknowledged in the same pass that uses it. A failing store
    never fails the graph: the pass drains nothing and logs one line.
    """

    async def sessionwatch_notices(state: NoticesState, config: RunnableConfig) -> NoticesState:  # noqa: ARG001 - LangGraph passes the state
        key = _key(session_key, config)
        try:
            drained = await watch.drain(key)
        except Exception as exc:  # noqa: BLE001 - notices must never fail the host's graph
            shown, reason = bounded(key), type(exc).__name__
            logger.warning(
                "sessionwatch: notices not drained (session_key=%r reason=%s)",
                shown,
                reason,
                extra={"session_key": shown, "reason": reason},
            )
            drained = []
        entries = [
            NoticeEntry(
                target=notice.target,
                target_agent_id=notice.target_agent_id,
                last_seen=notice.last_seen,
                text=notice.text,
            )
            for notice in drained
        ]
        return NoticesState(sessionwatch_notices=entries)

    return sessionwatch_notices


def notices_text(notices: list[NoticeEntry]) -> str:
    """The notices as lines for a prompt, one per notice; empty when there are none."""
    return "\n".join(f"- {notice['text']}" for notice in notices)


async def human_resume(
    watch: AsyncSessionWatch,
    graph: ThreadState,
    config: RunnableConfig,
    value: object,
    *,
    session_key: SessionKey,
    channel: str = "langgraph",
    actor: Actor | None = None,
) -> Command[Any]:
    """`Command(resume=value)` for the thread's pending interrupt, with the answer recorded as a human turn.

    `value` answers the next pending interrupt, or is a mapping of interrupt ids to answers as
    `Command` takes it. Each interrupt answered is one `human_direct_message`, deduplicated by the
    interrupt's id, so a resume that is retried is recorded once. Raises `InvalidQuery` when the
    thread has no pending interrupt, or the mapping names one that is not pending.
    """
    pending = [interrupt.id for interrupt in (await graph.aget_state(config)).interrupts]
    if not pending:
        raise InvalidQuery("config", "the thread has no pending interrupt to resume")
    answered = [pending[0]]
    if isinstance(value, Mapping) and value and set(value) <= set(pending):
        answered = list(value)
    elif isinstance(value, Mapping) and value and any(key in pending for key in value):
        raise InvalidQuery("value", "names an interrupt that is not pending on the thread")
    key = _key(session_key, config)
    for interrupt_id in answered:
        await watch.record_human_message(
            key, channel=channel, actor=actor, dedupe_key=f"langgraph-resume:{interrupt_id}"
        )
    return Command(resume=value)
