"""sessionwatch for the OpenAI Agents SDK: a session that records a person's turns, hooks that show notices.

`WatchedSession` wraps any SDK session and records each user message the SDK stores in it as a
human turn of one sessionwatch session. `NoticeHooks` shows a watching session its pending notices
in the instructions of each model call (through `RunConfig.call_model_input_filter`, the SDK's
documented way to change a model call's input) and acknowledges them once the call returned.
Everything runs through an `AsyncSessionWatch`; this module needs the `openai-agents` extra.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any

from typing_extensions import override

try:
    from agents import Agent, RunConfig, RunContextWrapper, RunHooks
    from agents.items import ModelResponse, TResponseInputItem
    from agents.memory import Session, SessionSettings
    from agents.run_config import CallModelData, CallModelInputFilter, ModelInputData
except ModuleNotFoundError as missing:  # pragma: no cover - exercised in a fresh interpreter by a test
    from sessionwatch.adapters.extras import install_hint

    raise ImportError(
        "sessionwatch.integrations.openai_agents needs the OpenAI Agents SDK, the openai-agents extra: "
        + install_hint("openai-agents")
    ) from missing

from sessionwatch.adapters.app.checks import bounded
from sessionwatch.adapters.entry.aio import AsyncSessionWatch
from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.signals import Actor
from sessionwatch.projections.models import Notice

__all__ = ["NOTICES_HEADER", "NoticeHooks", "WatchedSession", "is_person_message", "notices_block"]

logger = logging.getLogger("sessionwatch")

NOTICES_HEADER = "Sessions you watch changed since you last looked (sessionwatch notices):"
"""The first line of the block a model call's instructions gain while notices are pending."""


def is_person_message(item: object) -> bool:
    """True for a user-role input message; tool outputs, model output and other roles are not a person's."""
    if not isinstance(item, dict):
        return False
    return item.get("role") == "user" and item.get("type", "message") == "message"


def notices_block(notices: Iterable[Notice]) -> str:
    """The text a model call sees: the header, then one line per notice (its byte-stable text)."""
    return "\n".join([NOTICES_HEADER, *(f"- {notice.text}" for notice in notices)])


def _fingerprint(item: object) -> str:
    """What identifies a message across a pop and a re-add: its role and content, not store ids."""
    if not isinstance(item, dict):
        return repr(item)
    return json.dumps([item.get("role"), item.get("content")], sort_keys=True, default=str)


class WatchedSession:
    """An SDK `Session` that stores in `inner` and records the person's turns as `session_key`'s.

    Each user message the SDK adds (a run's input) is one `human_direct_message` through the
    producer `record_human_message`, with `channel`, `actor` and the inner session's `session_id`;
    tool outputs, model output and other roles record nothing. When the messages come from another
    agent (a manager running this session's agent as a tool), pass `actor=Actor.agent(manager_key)`:
    agent turns record nothing.
    A user message that `pop_item` removed and the SDK adds back (a retry) is not counted twice.
    Recording is best effort: it never fails the SDK's write. The SDK's run context reaches an
    inner session that asks for it (`wrapper=`), and the inner session's other attributes
    (compaction, say) are reachable through the wrapper, so wrap outermost.
    """

    def __init__(
        self,
        inner: Session,
        watch: AsyncSessionWatch,
        session_key: str,
        *,
        channel: str = "openai-agents",
        actor: Actor | None = None,
    ) -> None:
        self.inner = inner
        self.watch = watch
        self.session_key = session_key
        self.channel = channel
        self.actor = actor
        self.session_id: str = inner.session_id
        self.session_settings: SessionSettings | None = getattr(inner, "session_settings", None)
        self._popped: list[str] = []

    def __getattr__(self, name: str) -> object:
        """What else the inner session offers (compaction, say) is its own, as the SDK's wrappers do."""
        if name == "inner":  # not set yet: the lookup must not recurse
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def get_items(
        self, limit: int | None = None, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        """The inner session's items."""
        items: list[TResponseInputItem] = await _call(self.inner.get_items, limit, wrapper=wrapper)
        return items

    async def add_items(
        self, items: list[TResponseInputItem], *, wrapper: RunContextWrapper[Any] | None = None
    ) -> None:
        """Store the items in the inner session, then record one human turn per new user message."""
        await _call(self.inner.add_items, items, wrapper=wrapper)
        for item in items:
            if not is_person_message(item):
                continue
            fingerprint = _fingerprint(item)
            if fingerprint in self._popped:
                self._popped.remove(fingerprint)
                continue
            await self.watch.record_human_message(
                self.session_key, channel=self.channel, actor=self.actor, session_id=self.session_id
            )

    async def pop_item(self, *, wrapper: RunContextWrapper[Any] | None = None) -> TResponseInputItem | None:
        """Remove and return the inner session's latest item; a popped user message is remembered."""
        item: TResponseInputItem | None = await _call(self.inner.pop_item, wrapper=wrapper)
        if is_person_message(item):
            self._popped.append(_fingerprint(item))
        return item

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Clear the inner session."""
        await _call(self.inner.clear_session, wrapper=wrapper)
        self._popped.clear()


async def _call(method: Callable[..., Awaitable[Any]], *args: object, wrapper: object) -> Any:  # noqa: ANN401 - the inner method's own result
    """Call an inner session's method, passing the SDK's run context only to a method that takes it."""
    if wrapper is not None and "wrapper" in inspect.signature(method).parameters:
        return await method(*args, wrapper=wrapper)
    return await method(*args)


class NoticeHooks(RunHooks[Any]):
    """Run hooks that show `session_key`'s pending notices to its agents' model calls, then acknowledge.

    Pass the hooks and `hooks.run_config()` to `Runner.run`. Before each model call of one of
    `agents`, the input filter appends the pending notices to the call's instructions (the inner
    runs of agents used as tools inherit the run config, so only the named agents see them); once
    the call returned (`on_llm_end`), the notices that call was sent are acknowledged. A failed call
    acknowledges nothing, so the next call sees them again; a notice that opened after the call was
    built waits for the next one. A failing store never fails the run: it logs one line and the
    call goes out without notices.
    """

    def __init__(self, watch: AsyncSessionWatch, session_key: str, *, agents: Iterable[Agent[Any]]) -> None:
        self.watch = watch
        self.session_key = session_key
        self.agents = tuple(agents)
        if not self.agents:
            raise InvalidQuery("agents", "name at least one agent whose model calls see the notices")
        self._sent: dict[int, list[Notice]] = {}

    def run_config(self, base: RunConfig | None = None) -> RunConfig:
        """`base` (or a default `RunConfig`) whose model input filter adds the notices after `base`'s own."""
        config = base or RunConfig()
        return replace(config, call_model_input_filter=self._filter_after(config.call_model_input_filter))

    def _filter_after(self, first: CallModelInputFilter | None) -> CallModelInputFilter:
        async def call_model_input_filter(data: CallModelData[Any]) -> ModelInputData:
            model_data = data.model_data
            if first is not None:
                filtered = first(data)
                model_data = filtered if isinstance(filtered, ModelInputData) else await filtered
            return await self.add_notices(data.agent, model_data)

        return call_model_input_filter

    async def add_notices(self, agent: Agent[Any], model_data: ModelInputData) -> ModelInputData:
        """The model input with the pending notices appended to its instructions (unchanged when none)."""
        if not any(agent is mine for mine in self.agents):
            return model_data
        pending = await self._pending("shown")
        if not pending:
            return model_data
        block = notices_block(pending)
        instructions = f"{model_data.instructions}\n\n{block}" if model_data.instructions else block
        return ModelInputData(input=model_data.input, instructions=instructions)

    @override
    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        """Note which pending notices this call is sent: those whose exact text is in its instructions."""
        self._sent.pop(id(context), None)
        if system_prompt is None or NOTICES_HEADER not in system_prompt:
            return
        pending = await self._pending("shown")
        sent = [notice for notice in pending if f"- {notice.text}" in system_prompt]
        if sent:
            self._sent[id(context)] = sent

    @override
    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        """The model answered: acknowledge the notices it was sent that are still the pending ones."""
        sent = self._sent.pop(id(context), None)
        if not sent:
            return
        seen = {(n.target, n.target_agent_id, n.last_seen) for n in sent}
        pending = await self._pending("acknowledged")
        still = [n for n in pending if (n.target, n.target_agent_id, n.last_seen) in seen]
        if still:
            try:
                await self.watch.acknowledge(self.session_key, still)
            except Exception as exc:  # noqa: BLE001 - notices must never fail the host's run
                self._log("acknowledged", exc)

    async def _pending(self, stage: str) -> list[Notice]:
        """The pending notices; none (and one log line) when the store fails, so the run goes on."""
        try:
            return await self.watch.pending_notices(self.session_key)
        except Exception as exc:  # noqa: BLE001 - notices must never fail the host's run
            self._log(stage, exc)
            return []

    def _log(self, stage: str, exc: Exception) -> None:
        shown = bounded(self.session_key)
        reason = type(exc).__name__
        logger.warning(
            "sessionwatch: notices not %s (session_key=%r reason=%s)",
            stage,
            shown,
            reason,
            extra={"session_key": shown, "reason": reason},
        )
