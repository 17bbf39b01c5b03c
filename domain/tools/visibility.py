"""Which sessions a requester may list, read, message or inspect.

Pure: the configuration, the requester's spawn subtree and the agent-to-agent policy arrive as values;
every refusal carries the exact text the tool reports.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.keys import SessionIdentity, agent_id_of
from sessionwatch.domain.tools.wildcard import matches_any

VisibilityMode: TypeAlias = Literal["self", "tree", "agent", "all"]
AccessAction: TypeAlias = Literal["list", "history", "send", "status"]
SessionRef: TypeAlias = str | SessionIdentity
"""A session as `check_access` sees it: an agent-qualified key, or an identity (needed for bare keys)."""

VISIBILITY_MODES: Final[tuple[VisibilityMode, ...]] = ("self", "tree", "agent", "all")
DEFAULT_VISIBILITY: Final[VisibilityMode] = "tree"


def normalize_visibility(raw: object) -> VisibilityMode:
    """`tools.sessions.visibility`, trimmed and lowercased; missing or invalid -> `tree`."""
    value = raw.strip().lower() if isinstance(raw, str) else ""
    for mode in VISIBILITY_MODES:
        if value == mode:
            return mode
    return DEFAULT_VISIBILITY


class EffectiveVisibility(BaseModel):
    """The visibility after the sandbox clamp, and whether the requester only sees what it spawned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: VisibilityMode
    restricted_to_spawned: bool = False


def effective_visibility(
    configured: object,
    *,
    sandboxed: bool,
    sandbox_session_tools_visibility: object = "spawned",
    is_subagent: bool,
) -> EffectiveVisibility:
    """Apply the sandbox clamp: a sandboxed requester under `spawned` is clamped to `tree`.

    `sandbox_session_tools_visibility` is `agents.defaults.sandbox.sessionToolsVisibility`: only `all`
    (trimmed, any case) lifts the clamp; anything else, missing included, means `spawned`. A clamped
    requester that is not a sub-agent is *restricted to spawned* (its list shows only its subtree).
    """
    mode = normalize_visibility(configured)
    lifted = isinstance(sandbox_session_tools_visibility, str) and (
        sandbox_session_tools_visibility.strip().lower() == "all"
    )
    if not sandboxed or lifted:
        return EffectiveVisibility(mode=mode)
    return EffectiveVisibility(mode="tree", restricted_to_spawned=not is_subagent)


class A2APolicy(BaseModel):
    """`tools.agentToAgent`: off by default; an empty `allow` admits any agent id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    allow: tuple[str, ...] = ()

    def matches(self, agent_id: str) -> bool:
        """Exact ids match case-sensitively, patterns with `*` case-insensitively; blanks never match."""
        if not self.allow:
            return True
        for raw in self.allow:
            pattern = raw.strip()
            if not pattern:
                continue
            if "*" in pattern:
                if matches_any(agent_id, (pattern,)):
                    return True
            elif pattern == agent_id:
                return True
        return False

    def allows(self, requester_agent_id: str | None, target_agent_id: str | None) -> bool:
        """A pair passes iff the ids are equal, or the policy is enabled and both ids match `allow`."""
        if requester_agent_id == target_agent_id:
            return True
        if not self.enabled or requester_agent_id is None or target_agent_id is None:
            return False
        return self.matches(requester_agent_id) and self.matches(target_agent_id)


class Access(BaseModel):
    """The outcome of one access check: allowed, or the exact refusal text.

    `agent_to_agent` marks a refusal by the agent-to-agent policy (rules 4 and 5): the target is
    within the visibility mode, another agent's, and the policy does not admit the pair.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    allowed: bool
    error: str | None = None
    agent_to_agent: bool = False


ALLOWED: Final = Access(allowed=True)

_PREFIX: Final[dict[AccessAction, str]] = {
    "list": "Session list",
    "history": "Session history",
    "send": "Session send",
    "status": "Session status",
}
_A2A_NOUN: Final[dict[AccessAction, str]] = {
    "list": "listing",
    "history": "history",
    "send": "messaging",
    "status": "status",
}
_A2A_DISABLED: Final[dict[AccessAction, str]] = {
    "list": "Agent-to-agent listing is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent visibility.",
    "history": "Agent-to-agent history is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent access.",
    "send": "Agent-to-agent messaging is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent sends.",
    "status": "Agent-to-agent status is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent access.",
}


def _identity(ref: SessionRef) -> tuple[str, str | None]:
    if isinstance(ref, SessionIdentity):
        return ref.session_key, ref.agent_id
    return ref, agent_id_of(ref)


def _denied(error: str) -> Access:
    return Access(allowed=False, error=error)


def check_access(  # noqa: PLR0917 - the positional signature of the visibility rules
    action: AccessAction,
    requester: SessionRef,
    target: SessionRef,
    visibility: VisibilityMode | EffectiveVisibility,
    a2a: A2APolicy,
    subtree: AbstractSet[str],
) -> Access:
    """May `requester` act on `target`? The nine visibility rules, first match wins.

    `subtree` holds the keys of the requester's spawn subtree (`subtree_of`). A plain-string ref takes
    its agent id from the key; pass a `SessionIdentity` for a bare key such as `global`.
    """
    mode = visibility.mode if isinstance(visibility, EffectiveVisibility) else visibility
    requester_key, requester_agent = _identity(requester)
    target_key, target_agent = _identity(target)
    if (target_key, target_agent) == (requester_key, requester_agent):
        return ALLOWED  # 1
    if target_key in subtree and mode in {"tree", "all"}:
        return ALLOWED  # 2
    if target_agent != requester_agent:
        if mode != "all":  # 3
            return _denied(
                f"{_PREFIX[action]} visibility is restricted. "
                "Set tools.sessions.visibility=all to allow cross-agent access."
            )
        if not a2a.enabled:  # 4
            return Access(allowed=False, error=_A2A_DISABLED[action], agent_to_agent=True)
        if not a2a.allows(requester_agent, target_agent):  # 5
            error = f"Agent-to-agent {_A2A_NOUN[action]} denied by tools.agentToAgent.allow."
            return Access(allowed=False, error=error, agent_to_agent=True)
        return ALLOWED  # 6
    if mode == "self":  # 7
        return _denied(
            f"{_PREFIX[action]} visibility is restricted to the current session "
            "(tools.sessions.visibility=self)."
        )
    if mode == "tree":  # 8
        return _denied(
            f"{_PREFIX[action]} visibility is restricted to the current session tree "
            "(tools.sessions.visibility=tree)."
        )
    return ALLOWED  # 9


def visible_in_list(
    requester: SessionRef,
    target: SessionRef,
    visibility: EffectiveVisibility,
    a2a: A2APolicy,
    subtree: AbstractSet[str],
) -> bool:
    """Whether `sessions_list` keeps a row: restricted to spawned, only the subtree (not the requester)."""
    if visibility.restricted_to_spawned:
        return _identity(target)[0] in subtree
    return check_access("list", requester, target, visibility, a2a, subtree).allowed


def subtree_of(requester: str, edges: Iterable[tuple[str, str | None]]) -> frozenset[str]:
    """The keys spawned by `requester`, transitively, never itself.

    `edges` are `(child, parent)` pairs: give one for the child's `spawned_by` and one for its
    `parent_session_key` (a `None` parent is skipped). Cycles are harmless.
    """
    children: defaultdict[str, set[str]] = defaultdict(set)
    for child, parent in edges:
        if parent is not None and child != parent:
            children[parent].add(child)
    found: set[str] = set()
    queue = deque([requester])
    while queue:
        for child in children.get(queue.popleft(), ()):
            if child not in found and child != requester:
                found.add(child)
                queue.append(child)
    return frozenset(found)


_SCOPES: Final[dict[VisibilityMode, str]] = {
    "self": "current session only",
    "tree": "current session + own spawn subtree",
    "agent": "all sessions of this agent",
}
_SANDBOX_SCOPE: Final = "current session + own spawn subtree (sandbox: spawned sessions only)"


class VisibilityNote(BaseModel):
    """The `visibility` object `sessions_list` adds when the effective visibility is not `all`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: VisibilityMode
    restricted: Literal[True] = True
    warning: str


def visibility_note(visibility: EffectiveVisibility) -> VisibilityNote | None:
    """The list note for the effective visibility, or None under `all`."""
    if visibility.mode == "all":
        return None
    scope = _SANDBOX_SCOPE if visibility.restricted_to_spawned else _SCOPES[visibility.mode]
    return VisibilityNote(
        mode=visibility.mode,
        warning=(
            f"Session visibility is restricted (effective tools.sessions.visibility={visibility.mode}: "
            f"{scope}). Sessions outside that scope are omitted from results and count."
        ),
    )
