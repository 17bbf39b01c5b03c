"""Tool profiles and the allow/deny pipeline that yields a caller's effective tools.

Pure: the settings arrive as a value (`ToolPolicySettings`, or the future `ToolsConfig`, which has the
same attributes) and the result is a tuple in catalog order. Nothing after the profile step adds a tool.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final, Protocol

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.tools.errors import InvalidToolPolicy, ToolNotAllowed
from sessionwatch.domain.tools.wildcard import matches_any, parse_patterns

CATALOG: Final[tuple[str, ...]] = (
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "sessions_yield",
    "subagents",
    "session_status",
)
"""Every session tool, in the fixed order every effective tool set keeps."""

PROFILES: Final[dict[str, frozenset[str]]] = {
    "minimal": frozenset({"session_status"}),
    "messaging": frozenset({"sessions_list", "sessions_history", "sessions_send", "session_status"}),
    "coding": frozenset(CATALOG),
    "full": frozenset(CATALOG),
}
"""`tools.profile` -> the tools it grants; an unset profile grants the whole catalog."""

SUBAGENT_BASE_DENY: Final[frozenset[str]] = frozenset({"sessions_send", "session_status"})
"""What every sub-agent (depth >= 1) loses unless `tools.subagents.tools` allows it back."""

SUBAGENT_LEAF_DENY: Final[frozenset[str]] = frozenset(
    {"sessions_list", "sessions_history", "sessions_spawn", "subagents", "sessions_yield"}
)
"""What a leaf sub-agent loses on top of the base deny: leaves get no session tools at all."""


class ToolPolicy(BaseModel):
    """One allow/deny layer (provider, agent, group, sandbox): `deny` removes; a non-empty `allow` filters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()


class ToolLayers(BaseModel):
    """The per-scope layers applied after the global allow/deny, in this order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: ToolPolicy = ToolPolicy()
    agent: ToolPolicy = ToolPolicy()
    group: ToolPolicy = ToolPolicy()
    sandbox: ToolPolicy = ToolPolicy()


class SubagentToolPolicy(BaseModel):
    """`tools.subagents.tools`: allow/also_allow lift the base deny, deny adds, a non-empty allow filters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    allow: tuple[str, ...] | None = None
    also_allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


class ToolPolicySource(Protocol):
    """What `effective_tools` reads: `ToolPolicySettings` and `ToolsConfig` both provide it."""

    @property
    def profile(self) -> str | None:
        """`tools.profile`: minimal, messaging, coding, full, or None for the whole catalog."""

    @property
    def also_allow(self) -> tuple[str, ...]:
        """`tools.alsoAllow`: names added to the profile (names outside the catalog are ignored)."""

    @property
    def allow(self) -> tuple[str, ...] | None:
        """`tools.allow`: a non-empty tuple keeps only its names."""

    @property
    def deny(self) -> tuple[str, ...]:
        """`tools.deny`: names removed."""

    @property
    def layers(self) -> ToolLayers:
        """Provider, agent, group and sandbox layers."""

    @property
    def subagent_tools(self) -> SubagentToolPolicy:
        """`tools.subagents.tools`."""

    @property
    def max_spawn_depth(self) -> float:
        """`agents.defaults.subagents.maxSpawnDepth`: decides which depth is a leaf."""


class ToolPolicySettings(BaseModel):
    """The tool-policy part of the configuration, with the gateway defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: str | None = None
    also_allow: tuple[str, ...] = ()
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    layers: ToolLayers = ToolLayers()
    subagent_tools: SubagentToolPolicy = SubagentToolPolicy()
    max_spawn_depth: float = 1


def profile_tools(profile: str | None) -> frozenset[str]:
    """The tools a profile grants (trimmed, any case; unset or blank = all); other names raise."""
    name = (profile or "").strip().lower()
    if not name:
        return frozenset(CATALOG)
    granted = PROFILES.get(name)
    if granted is None:
        raise InvalidToolPolicy(
            f"Unknown tools.profile: {profile!r} (expected minimal, messaging, coding or full)"
        )
    return granted


def _apply(tools: set[str], allow: tuple[str, ...] | None, deny: tuple[str, ...]) -> set[str]:
    """One layer: deny removes its names, a non-empty allow keeps only its names."""
    denied = parse_patterns(deny)
    kept = {tool for tool in tools if not matches_any(tool, denied)}
    if allow:
        allowed = parse_patterns(allow)
        kept = {tool for tool in kept if matches_any(tool, allowed)}
    return kept


def is_leaf_depth(depth: int, max_spawn_depth: float) -> bool:
    """A sub-agent at `depth` is a leaf when `depth >= max(1, floor(max_spawn_depth))`."""
    return depth >= max(1, math.floor(max_spawn_depth))


def _subagent_layer(tools: set[str], depth: int, settings: ToolPolicySource) -> set[str]:
    sub = settings.subagent_tools
    base = SUBAGENT_BASE_DENY | (
        SUBAGENT_LEAF_DENY if is_leaf_depth(depth, settings.max_spawn_depth) else frozenset()
    )
    lifted = parse_patterns((*(sub.allow or ()), *sub.also_allow))
    kept = {tool for tool in tools if tool not in base or matches_any(tool, lifted)}
    return _apply(kept, sub.allow, sub.deny)


def effective_tools(settings: ToolPolicySource, *, depth: int = 0) -> tuple[str, ...]:
    """The session tools a caller at spawn `depth` may call, in catalog order.

    1. the profile's set plus `also_allow`; 2. global allow/deny, then the provider, agent, group and sandbox
    layers (deny wins, nothing is added back); 3. for `depth >= 1`, the sub-agent layer. `depth` is the
    caller's spawn depth: 0 for a session nobody spawned.

    Raises:
        InvalidToolPolicy: the profile is not minimal, messaging, coding, full or unset.
    """
    extra = parse_patterns(settings.also_allow)
    tools = set(profile_tools(settings.profile)) | {tool for tool in CATALOG if matches_any(tool, extra)}
    tools = _apply(tools, settings.allow, settings.deny)
    layers = settings.layers
    for layer in (layers.provider, layers.agent, layers.group, layers.sandbox):
        tools = _apply(tools, layer.allow, layer.deny)
    if depth >= 1:
        tools = _subagent_layer(tools, depth, settings)
    return tuple(tool for tool in CATALOG if tool in tools)


def check_tool_allowed(name: str, tools: Iterable[str]) -> None:
    """Refuse a call to a tool outside the caller's effective set.

    Raises:
        ToolNotAllowed: `Tool not available: <name>`.
    """
    if name not in set(tools):
        raise ToolNotAllowed(f"Tool not available: {name}")
