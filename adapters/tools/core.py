"""What every session tool shares: parameters, the caller, references.

Shell code over the `SessionWatch` registry and the pure rules of `sessionwatch.domain.tools`: a tool
call reads the registry once, works out who the caller is and what it may see, and resolves the
session it names. Nothing here reads a transcript.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from sessionwatch.adapters.app.reports import RunRecord
from sessionwatch.adapters.tools.watch_port import ToolsWatch
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.keys import SessionIdentity, is_subagent_key
from sessionwatch.domain.ports import Clock
from sessionwatch.domain.registry import Route
from sessionwatch.domain.signals import to_epoch_ms
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.domain.tools.errors import InvalidToolInput, ToolForbidden
from sessionwatch.domain.tools.ports import Models, Runtime, Transcripts
from sessionwatch.domain.tools.results import RunStatus
from sessionwatch.domain.tools.session_keys import (
    GLOBAL_KEY,
    SessionKind,
    derive_channel,
    listed_kind,
    resolve_reference,
    sandbox_not_visible_message,
    session_depth,
    session_not_found_message,
    unknown_session_key_message,
)
from sessionwatch.domain.tools.visibility import (
    Access,
    EffectiveVisibility,
    check_access,
    effective_visibility,
    subtree_of,
)
from sessionwatch.projections.models import RegistryEntry

RUN_STATUS: Final[dict[str | None, RunStatus]] = {
    None: "done",
    "ok": "done",
    "error": "failed",
    "timeout": "timeout",
    "cancelled": "killed",
}
"""A finished run's tool status by its outcome."""

_CAMEL_BOUNDARY: Final = re.compile(r"(?<!^)(?=[A-Z])")


def snake_case(name: str) -> str:
    """`sessionKey` -> `session_key`; snake_case names are kept."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def _as_int(value: object) -> int | None:
    """An integer given as an int, an integral float or a decimal string; anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


class Params:
    """A tool's parameters: one mapping plus keywords, camelCase or snake_case; unknown keys ignored."""

    def __init__(self, params: Mapping[str, object] | None, keywords: Mapping[str, object]) -> None:
        self.raw: dict[str, object] = {**(params or {}), **keywords}
        self._values = {snake_case(key): value for key, value in self.raw.items()}

    def get(self, name: str) -> object:
        """The value given for `name` (snake_case), or None."""
        return self._values.get(name)

    def given(self, name: str) -> bool:
        """Whether `name` was given a non-None value."""
        return self._values.get(name) is not None

    def text(self, name: str) -> str | None:
        """A non-blank string, trimmed; None when absent, blank or not a string."""
        value = self._values.get(name)
        return value.strip() if isinstance(value, str) and value.strip() else None

    def flag(self, name: str, *, default: bool = False) -> bool:
        """A boolean (`true`/`false` strings accepted); anything else is the default."""
        value = self._values.get(name)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
            return value.strip().lower() == "true"
        return default

    def integer(self, name: str, *, minimum: int, message: str, field: str) -> int | None:
        """An integer >= `minimum`, None when absent; anything else raises `InvalidToolInput(message)`."""
        value = self._values.get(name)
        if value is None:
            return None
        parsed = _as_int(value)
        if parsed is None or parsed < minimum:
            raise InvalidToolInput(field, message)
        return parsed


# ---------------------------------------------------------------------------------- registry


def identity(entry: RegistryEntry) -> SessionIdentity:
    """The entry's session identity."""
    return SessionIdentity(entry.session_key, entry.agent_id)


@dataclass(frozen=True)
class Registry:
    """Every known session, read once per tool call."""

    entries: tuple[RegistryEntry, ...]

    def get(self, key: str, agent_id: str) -> RegistryEntry | None:
        """The entry of `(key, agent_id)`, or None."""
        for entry in self.entries:
            if entry.session_key == key and entry.agent_id == agent_id:
                return entry
        return None

    def by_session_id(self, session_id: str, prefer_agent: str) -> RegistryEntry | None:
        """The session with this id, the caller's agent first."""
        found = [entry for entry in self.entries if entry.session_id == session_id]
        found.sort(key=lambda entry: entry.agent_id != prefer_agent)
        return found[0] if found else None

    def edges(self) -> list[tuple[str, str | None]]:
        """`(child, parent)` pairs: each session's spawner and its parent."""
        pairs: list[tuple[str, str | None]] = []
        for entry in self.entries:
            pairs.append((entry.session_key, entry.spawned_by))
            pairs.append((entry.session_key, entry.parent_session_key))
        return pairs


@dataclass(frozen=True)
class Caller:
    """The requester of a tool call, what it may see, and how deep it was spawned."""

    key: str
    agent_id: str
    has_session: bool
    """False when the context named no session (the agent's main session stands in for it)."""
    entry: RegistryEntry | None
    visibility: EffectiveVisibility
    subtree: frozenset[str]
    depth: int
    sandboxed: bool
    is_subagent: bool

    @property
    def identity(self) -> SessionIdentity:
        """The requester's session identity."""
        return SessionIdentity(self.key, self.agent_id)


@dataclass(frozen=True)
class Refusal:
    """A reference that resolves to no visible session: the status and the exact text."""

    status: Literal["error", "forbidden"]
    error: str
    reason: Literal["unknown_key", "unknown_id", "not_visible"]
    subject: str
    """The input as given (the caller's key for `current`)."""


class ToolsCore:
    """The ports, the configuration and the shared steps of every session tool."""

    def __init__(
        self,
        watch: ToolsWatch,
        *,
        transcripts: Transcripts,
        runtime: Runtime,
        models: Models,
        config: ToolsConfig | None = None,
        ids: Callable[[], str] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.watch = watch
        self.transcripts = transcripts
        self.runtime = runtime
        self.models = models
        self.config = config or ToolsConfig()
        self.ids: Callable[[], str] = ids or (lambda: str(uuid.uuid4()))
        self.clock: Clock = clock or watch.clock
        self._origins: dict[str, Route] = {}
        self._origins_lock = threading.Lock()

    def now_ms(self) -> int:
        """The clock's now, epoch ms."""
        return to_epoch_ms(self.clock.now())

    def remember_origin(self, run_id: str, origin: Route | None) -> None:
        """Keep the spawning context's origin until the child's run completes (in process)."""
        if origin is not None:
            with self._origins_lock:
                self._origins[run_id] = origin

    def forget_origin(self, run_id: str) -> Route | None:
        """The origin kept for the run, now forgotten."""
        with self._origins_lock:
            return self._origins.pop(run_id, None)

    def registry(self) -> Registry:
        """Every known session, now."""
        return Registry(tuple(self.watch.registry_entries()))

    def runs(self) -> list[RunRecord]:
        """The runs this process knows, newest first."""
        return self.watch.runs()

    # ------------------------------------------------------------------------------ the caller

    def caller(self, ctx: ToolContext, registry: Registry) -> Caller:
        """Who calls, with the sandbox clamp applied and its spawn subtree."""
        agent_id = ctx.requester_agent_id
        key = ctx.session_key or self.main_key_of(agent_id)
        entry = registry.get(key, agent_id)
        spawn_depth = entry.spawn_depth if entry is not None else None
        depth = session_depth(key, spawn_depth=spawn_depth)
        is_subagent = is_subagent_key(key) or depth >= 1
        sandboxed = ctx.sandboxed or (entry is not None and entry.sandboxed)
        visibility = effective_visibility(
            self.config.visibility,
            sandboxed=sandboxed,
            sandbox_session_tools_visibility=self.config.sandbox_session_tools_visibility,
            is_subagent=is_subagent,
        )
        return Caller(
            key=key,
            agent_id=agent_id,
            has_session=ctx.session_key is not None,
            entry=entry,
            visibility=visibility,
            subtree=subtree_of(key, registry.edges()),
            depth=depth,
            sandboxed=sandboxed,
            is_subagent=is_subagent,
        )

    def main_key_of(self, agent_id: str) -> str:
        """The agent's main session key (`global` under global scope)."""
        if self.config.session_scope == "global":
            return GLOBAL_KEY
        return f"agent:{agent_id}:{self.config.main_key}"

    def depth_of(self, ctx: ToolContext) -> int:
        """The caller's spawn depth (0 without a session)."""
        if ctx.session_key is None:
            return 0
        try:
            entry = self.watch.registry_entry(ctx.session_key, agent_id=ctx.requester_agent_id)
        except (InvalidQuery, InvalidSignal):  # a key the store could not hold has no registry entry
            entry = None
        return session_depth(ctx.session_key, spawn_depth=entry.spawn_depth if entry is not None else None)

    # ------------------------------------------------------------------------------ references

    def resolve(
        self, caller: Caller, registry: Registry, raw: str, *, agent_id: str | None = None
    ) -> RegistryEntry | Refusal:
        """The session a `sessionKey` argument names, or why it names none visible.

        `agent_id` (`session_status` `agentId`) overrides the caller's agent for a bare key.
        """
        ref = resolve_reference(
            raw,
            requester_agent_id=agent_id or caller.agent_id,
            main_key=self.config.main_key,
            session_scope=self.config.session_scope,
        )
        found: RegistryEntry | None
        if ref.kind in {"requester", "missing"}:
            found = caller.entry
            if found is None:
                return Refusal("error", unknown_session_key_message(caller.key), "unknown_key", caller.key)
        else:
            key, owner = ref.key or ref.input, ref.agent_id or caller.agent_id
            found = registry.get(key, owner)
            if found is None and ref.may_be_session_id:
                found = registry.by_session_id(ref.input, caller.agent_id)
                if found is None:
                    return Refusal("error", session_not_found_message(ref.input), "unknown_id", ref.input)
            if found is None:
                return Refusal("error", unknown_session_key_message(ref.input), "unknown_key", ref.input)
        hidden = caller.visibility.restricted_to_spawned and found.session_key not in caller.subtree
        if hidden and not self.is_caller(caller, found):
            subject = ref.input or caller.key
            return Refusal("forbidden", sandbox_not_visible_message(subject), "not_visible", subject)
        return found

    def status_target(
        self, ctx: ToolContext, raw: str, *, agent_id: str | None = None
    ) -> tuple[Caller, RegistryEntry]:
        """The caller and the session `raw` names, when the caller may read its status.

        Raises:
            UnknownSession: the reference names no session (`Unknown sessionKey|sessionId: <input>`).
            ToolForbidden: visibility or the agent-to-agent policy denies it.
        """
        registry = self.registry()
        caller = self.caller(ctx, registry)
        return caller, status_target_in(self, caller, registry, raw, agent_id=agent_id)

    @staticmethod
    def is_caller(caller: Caller, entry: RegistryEntry) -> bool:
        """Whether the entry is the caller's own session."""
        return identity(entry) == caller.identity

    def access(
        self, action: Literal["list", "history", "send", "status"], caller: Caller, target: SessionIdentity
    ) -> str | None:
        """The refusal text of `action` on the target, or None when allowed."""
        verdict = self.verdict(action, caller, target)
        return None if verdict.allowed else verdict.error

    def verdict(
        self, action: Literal["list", "history", "send", "status"], caller: Caller, target: SessionIdentity
    ) -> Access:
        """The access check of `action` on the target, with the rule that refused it."""
        return check_access(
            action, caller.identity, target, caller.visibility, self.config.a2a, caller.subtree
        )

    # ------------------------------------------------------------------------------ derivations

    def kind_of(self, entry: RegistryEntry) -> SessionKind:
        """The entry's kind: a kind the host set, else derived from the key."""
        return listed_kind(
            entry.session_key,
            entry.kind,
            main_key=self.config.main_key,
            session_scope=self.config.session_scope,
        )

    def channel_of(self, entry: RegistryEntry, kind: SessionKind) -> str:
        """The entry's channel."""
        return derive_channel(
            entry.session_key,
            kind,
            channel=entry.channel,
            origin_channel=entry.origin.channel if entry.origin is not None else None,
            delivery_channel=entry.delivery_context.channel if entry.delivery_context is not None else None,
            last_channel=entry.last_channel,
        )


def status_target_in(
    tools: ToolsCore, caller: Caller, registry: Registry, raw: str, *, agent_id: str | None = None
) -> RegistryEntry:
    """`ToolsCore.status_target` over a registry and a caller already read (one read for many refs).

    Raises:
        UnknownSession: the reference names no session.
        ToolForbidden: visibility or the agent-to-agent policy denies reading its status.
    """
    found = tools.resolve(caller, registry, raw, agent_id=agent_id)
    if isinstance(found, Refusal):
        if found.reason == "not_visible":
            raise ToolForbidden(found.error)
        raise unknown_session(found)
    refusal = tools.access("status", caller, identity(found))
    if refusal is not None:
        raise ToolForbidden(refusal)
    return found


def unknown_session(refusal: Refusal) -> UnknownSession:
    """`session_status`'s `UnknownSession` for a reference that names no session."""
    if refusal.reason == "unknown_id":
        return UnknownSessionId(refusal.subject)
    return UnknownSession(refusal.subject)


class UnknownSessionId(UnknownSession):
    """`session_status` on an id-like input that matches no session: `Unknown sessionId: <input>`."""

    def __str__(self) -> str:
        return f"Unknown sessionId: {self.key}"


def latest_runs(runs: Iterable[RunRecord]) -> dict[SessionIdentity, RunRecord]:
    """Each session's newest run (runs come newest first)."""
    latest: dict[SessionIdentity, RunRecord] = {}
    for run in runs:
        latest.setdefault(SessionIdentity(run.session_key, run.agent_id), run)
    return latest


def run_status(run: RunRecord) -> RunStatus:
    """`running` until the run ended, then its outcome's status."""
    if run.ended_at_ms is None:
        return "running"
    return RUN_STATUS.get(run.outcome, "done")
