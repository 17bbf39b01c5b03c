"""The session tools' configuration and the caller's context. Pure values.

`ToolsConfig` holds the gateway settings with their defaults (`ToolsConfig.from_openclaw` reads the
reference gateway's keys from a plain mapping); `ToolContext` says who is calling, from where.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sessionwatch.domain.keys import agent_id_of
from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.policy import SubagentToolPolicy, ToolLayers, ToolPolicy, ToolPolicySettings
from sessionwatch.domain.tools.prompts import resolve_ping_pong_turns
from sessionwatch.domain.tools.session_keys import DEFAULT_MAIN_KEY
from sessionwatch.domain.tools.visibility import A2APolicy, VisibilityMode, normalize_visibility

_FROZEN = ConfigDict(frozen=True, extra="forbid")

DEFAULT_AGENT_ID: Final = "main"
MAX_SPAWN_DEPTH_LIMIT: Final = 5
MAX_CHILDREN_LIMIT: Final = 20


def _either(raw: object, chosen: str, *, otherwise: str) -> str:
    """`chosen` when `raw` spells it (any case, spaces around), else `otherwise`: a two-way setting."""
    return chosen if isinstance(raw, str) and raw.strip().lower() == chosen else otherwise


def _clamped(raw: object, default: int, low: int, high: int) -> int:
    """A number floored and clamped into [low, high]; anything else is the default."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return default
    if isinstance(raw, float) and not math.isfinite(raw):
        return default
    return max(low, min(high, math.floor(raw)))


def _names(raw: object) -> tuple[str, ...]:
    """A list of names from config: strings kept as given, anything else dropped."""
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, list | tuple):
        return tuple(item for item in raw if isinstance(item, str))
    return ()


class AttachmentSettings(BaseModel):
    """`tools.sessions_spawn.attachments`: off by default."""

    model_config = _FROZEN

    enabled: bool = False
    max_files: int = 50
    max_file_bytes: int = 1_048_576
    max_total_bytes: int = 5_242_880
    retain_on_session_keep: bool = False


class ToolsConfig(ToolPolicySettings):
    """Every setting the session tools read, with the reference gateway's defaults.

    The policy fields it inherits (`profile` ... `subagent_tools`, `max_spawn_depth`) feed
    `effective_tools` directly. `agent_allow_agents` maps an agent id to its own
    `subagents.allowAgents` (a mapping is accepted); `sandboxed_agents` names the agents whose
    sessions run sandboxed.
    """

    model_config = _FROZEN

    visibility: VisibilityMode = "tree"
    sandbox_session_tools_visibility: Literal["spawned", "all"] = "spawned"
    a2a_enabled: bool = False
    a2a_allow: tuple[str, ...] = ()
    max_ping_pong_turns: int = 5
    main_key: str = DEFAULT_MAIN_KEY
    session_scope: Literal["per-sender", "global"] = "per-sender"
    agent_ids: tuple[str, ...] = (DEFAULT_AGENT_ID,)
    max_spawn_depth: int = 1
    max_children_per_agent: int = 5
    allow_agents: tuple[str, ...] = ()
    agent_allow_agents: tuple[tuple[str, tuple[str, ...]], ...] = ()
    sandboxed_agents: tuple[str, ...] = ()
    require_agent_id: bool = False
    default_run_timeout_seconds: int = Field(default=0, ge=0)
    default_spawn_context: Literal["isolated", "fork"] = "fork"
    attachments: AttachmentSettings = AttachmentSettings()
    redact_patterns: tuple[str, ...] = ()

    @field_validator("visibility", mode="before")
    @classmethod
    def _visibility(cls, raw: object) -> VisibilityMode:
        return normalize_visibility(raw)  # missing or invalid -> tree

    @field_validator("sandbox_session_tools_visibility", mode="before")
    @classmethod
    def _sandbox_visibility(cls, raw: object) -> str:
        return _either(raw, "all", otherwise="spawned")

    @field_validator("max_ping_pong_turns", mode="before")
    @classmethod
    def _ping_pong(cls, raw: object) -> int:
        return resolve_ping_pong_turns(raw)  # non-number -> 5, floor, clamped 0-20

    @field_validator("max_spawn_depth", mode="before")
    @classmethod
    def _depth(cls, raw: object) -> int:
        return _clamped(raw, 1, 1, MAX_SPAWN_DEPTH_LIMIT)

    @field_validator("max_children_per_agent", mode="before")
    @classmethod
    def _children(cls, raw: object) -> int:
        return _clamped(raw, 5, 1, MAX_CHILDREN_LIMIT)

    @field_validator("session_scope", mode="before")
    @classmethod
    def _scope(cls, raw: object) -> str:
        return _either(raw, "global", otherwise="per-sender")

    @field_validator("default_spawn_context", mode="before")
    @classmethod
    def _spawn_context(cls, raw: object) -> str:
        return _either(raw, "isolated", otherwise="fork")

    @field_validator("agent_allow_agents", mode="before")
    @classmethod
    def _per_agent(cls, raw: object) -> object:
        if isinstance(raw, Mapping):
            return tuple((str(agent), _names(names)) for agent, names in raw.items())
        return raw

    @property
    def a2a(self) -> A2APolicy:
        """`tools.agentToAgent` as the access check reads it."""
        return A2APolicy(enabled=self.a2a_enabled, allow=self.a2a_allow)

    def allow_agents_for(self, agent_id: str) -> tuple[str, ...]:
        """`subagents.allowAgents` of the agent, else the defaults."""
        for agent, names in self.agent_allow_agents:
            if agent == agent_id:
                return names
        return self.allow_agents

    @classmethod
    def from_openclaw(
        cls, config: Mapping[str, object], *, agent_id: str | None = None, provider: str | None = None
    ) -> Self:
        """Read the reference gateway's configuration keys (camelCase, as in `openclaw.json`).

        `agent_id` picks the agent layer (`agents.list[].tools`) and `provider` the provider layer
        (`tools.byProvider.<provider>`); the group layer depends on the conversation and stays open.
        Missing keys keep the defaults; values of the wrong type are ignored.
        """
        tools = _section(config, "tools")
        session = _section(config, "session")
        agents = _section(config, "agents")
        defaults = _section(agents, "defaults")
        subagent_defaults = _section(defaults, "subagents")
        listed = [entry for entry in _list(agents.get("list")) if isinstance(entry.get("id"), str)]
        fields: dict[str, object] = {}
        _put(fields, "profile", tools.get("profile"), str)
        _put(fields, "also_allow", _names(tools.get("alsoAllow")) or None, tuple)
        if "allow" in tools:
            fields["allow"] = _names(tools.get("allow"))
        _put(fields, "deny", _names(tools.get("deny")) or None, tuple)
        agent_entry = next((e for e in listed if e.get("id") == agent_id), {})
        fields["layers"] = ToolLayers(
            provider=_policy(_section(_section(tools, "byProvider"), provider or "")),
            agent=_policy(_section(agent_entry, "tools")),
            sandbox=_policy(_section(_section(tools, "sandbox"), "tools")),
        )
        sub = _section(_section(tools, "subagents"), "tools")
        fields["subagent_tools"] = SubagentToolPolicy(
            allow=_names(sub.get("allow")) if "allow" in sub else None,
            also_allow=_names(sub.get("alsoAllow")),
            deny=_names(sub.get("deny")),
        )
        _put(fields, "visibility", _section(tools, "sessions").get("visibility"), str)
        sandbox = _section(defaults, "sandbox")
        _put(fields, "sandbox_session_tools_visibility", sandbox.get("sessionToolsVisibility"), str)
        a2a = _section(tools, "agentToAgent")
        _put(fields, "a2a_enabled", a2a.get("enabled"), bool)
        _put(fields, "a2a_allow", _names(a2a.get("allow")) or None, tuple)
        if "maxPingPongTurns" in _section(session, "agentToAgent"):
            fields["max_ping_pong_turns"] = _section(session, "agentToAgent")["maxPingPongTurns"]
        _put(fields, "main_key", session.get("mainKey"), str)
        _put(fields, "session_scope", session.get("scope"), str)
        if listed:
            fields["agent_ids"] = tuple(str(e["id"]) for e in listed)
        for key, name in (
            ("maxSpawnDepth", "max_spawn_depth"),
            ("maxChildrenPerAgent", "max_children_per_agent"),
        ):
            if key in subagent_defaults:
                fields[name] = subagent_defaults[key]
        _put(fields, "allow_agents", _names(subagent_defaults.get("allowAgents")) or None, tuple)
        fields["agent_allow_agents"] = tuple(
            (str(e["id"]), _names(_section(e, "subagents").get("allowAgents")))
            for e in listed
            if "allowAgents" in _section(e, "subagents")
        )
        agents_or_default = listed or [{"id": DEFAULT_AGENT_ID}]
        fields["sandboxed_agents"] = tuple(
            str(e["id"]) for e in agents_or_default if _sandboxed(_section(e, "sandbox"), sandbox)
        )
        _put(fields, "require_agent_id", subagent_defaults.get("requireAgentId"), bool)
        timeout = subagent_defaults.get("runTimeoutSeconds")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and math.isfinite(timeout):
            fields["default_run_timeout_seconds"] = max(0, math.floor(timeout))
        _put(
            fields,
            "default_spawn_context",
            _section(session, "threadBindings").get("defaultSpawnContext"),
            str,
        )
        fields["attachments"] = _attachments(_section(_section(tools, "sessions_spawn"), "attachments"))
        _put(
            fields,
            "redact_patterns",
            _names(_section(config, "logging").get("redactPatterns")) or None,
            tuple,
        )
        return cls(**fields)


def _section(mapping: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = mapping.get(key)
    return value if isinstance(value, Mapping) else {}


def _list(raw: object) -> list[Mapping[str, object]]:
    return [item for item in raw if isinstance(item, Mapping)] if isinstance(raw, list | tuple) else []


def _put(fields: dict[str, object], name: str, value: object, kind: type) -> None:
    if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
        fields[name] = value


def _policy(section: Mapping[str, object]) -> ToolPolicy:
    return ToolPolicy(
        allow=_names(section.get("allow")) if "allow" in section else None,
        deny=_names(section.get("deny")),
    )


def _sandboxed(agent_sandbox: Mapping[str, object], defaults: Mapping[str, object]) -> bool:
    """Spawned sessions of an agent run sandboxed when its sandbox mode is `all` or `non-main`."""
    mode = agent_sandbox.get("mode", defaults.get("mode"))
    return isinstance(mode, str) and mode.strip().lower() in {"all", "non-main"}


def _attachments(section: Mapping[str, object]) -> AttachmentSettings:
    fields: dict[str, object] = {}
    _put(fields, "enabled", section.get("enabled"), bool)
    for key, name in (
        ("maxFiles", "max_files"),
        ("maxFileBytes", "max_file_bytes"),
        ("maxTotalBytes", "max_total_bytes"),
    ):
        _put(fields, name, section.get(key), int)
    _put(fields, "retain_on_session_keep", section.get("retainOnSessionKeep"), bool)
    return AttachmentSettings(**fields)


class ToolContext(BaseModel):
    """Who calls a session tool, from where.

    `session_key` is the requester (None: no session context); `agent_id` is needed only for a bare
    requester key; `channel` is the requester's channel; `active_route` is the conversation the turn
    is serving (shown by `session_status` on the requester's own session); `origin` is where the
    requester's conversation came from (spawn completions are announced there).
    """

    model_config = _FROZEN

    session_key: str | None = None
    agent_id: str | None = None
    channel: str | None = None
    sandboxed: bool = False
    active_route: Route | None = None
    origin: Route | None = None

    @property
    def requester_agent_id(self) -> str:
        """The explicit agent id, else the requester key's, else the default agent `main`."""
        if self.agent_id:
            return self.agent_id
        parsed = agent_id_of(self.session_key) if self.session_key else None
        return parsed or DEFAULT_AGENT_ID
