"""Session keys and identities. Pure string rules, no I/O."""

from __future__ import annotations

import functools
from typing import NamedTuple

from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.text import has_control_character

MAX_KEY_LENGTH = 512
_AGENT_PREFIX = "agent:"


class SessionIdentity(NamedTuple):
    """A session is identified by its key together with its agent id."""

    session_key: str
    agent_id: str


def _parts(key: str) -> list[str]:
    return [part for part in key.strip().split(":") if part]


def is_agent_qualified(key: str) -> bool:
    """`agent:<id>:<rest...>`: at least three non-empty parts, the first being `agent`."""
    parts = _parts(key)
    return len(parts) >= 3 and parts[0] == "agent"  # noqa: PLR2004 - agent, id, rest


def agent_id_of(key: str) -> str | None:
    """The agent id of an agent-qualified key, else None."""
    parts = _parts(key)
    return parts[1] if len(parts) >= 3 and parts[0] == "agent" else None  # noqa: PLR2004


@functools.lru_cache(maxsize=65536)  # asked for every watcher of every notifying signal
def is_subagent_key(key: str) -> bool:
    """A key whose rest (after `agent:<id>:`) starts with `subagent:`, case-insensitively."""
    parts = _parts(key)
    if len(parts) < 3 or parts[0] != "agent":  # noqa: PLR2004
        return False
    rest = ":".join(parts[2:])
    return rest.lower().startswith("subagent:")


def key_problem(key: object) -> str | None:
    """Why `key` is malformed, or None for a well-formed key."""
    if not isinstance(key, str):
        return "must be a string"
    if not key.strip():
        return "must not be empty"
    if len(key) > MAX_KEY_LENGTH:
        return f"must be at most {MAX_KEY_LENGTH} characters"
    if has_control_character(key):
        return "must not contain control characters"
    if key.strip().startswith(_AGENT_PREFIX) and not is_agent_qualified(key):
        return "starts with 'agent:' but is not agent:<agentId>:<rest>"
    return None


def check_key(key: object, field: str = "session_key") -> str:
    """Return the well-formed key, trimmed, or raise `InvalidSignal` naming `field`."""
    problem = key_problem(key)
    if problem is not None:
        raise InvalidSignal(field, problem)
    assert isinstance(key, str)  # noqa: S101 - narrowed by key_problem
    return key.strip()


def resolve_identity(key: object, agent_id: object = None, field: str = "session_key") -> SessionIdentity:
    """Resolve `(key, agent_id)`: parsed from an agent-qualified key, explicit for a bare key.

    An explicit agent id that contradicts the one in an agent-qualified key is rejected.
    """
    if type(key) is str and (agent_id is None or type(agent_id) is str):
        return _resolved(key, agent_id, field)  # a pure function of hashable text: remembered
    return _resolve(key, agent_id, field)


@functools.lru_cache(maxsize=4096)  # every record resolves its key; hosts use few keys, often
def _resolved(key: str, agent_id: str | None, field: str) -> SessionIdentity:
    """`_resolve` remembered (a refusal raises again each time: exceptions are never cached)."""
    return _resolve(key, agent_id, field)


def _resolve(key: object, agent_id: object, field: str) -> SessionIdentity:
    checked = check_key(key, field)
    parsed = agent_id_of(checked)
    if agent_id is not None:
        explicit = check_agent_id(agent_id)
        if parsed is not None and parsed != explicit:
            raise InvalidSignal("agent_id", f"{explicit!r} contradicts the key's agent {parsed!r}")
        return SessionIdentity(checked, explicit)
    if parsed is None:
        raise InvalidSignal("agent_id", f"a bare key ({checked!r}) needs an explicit agent id")
    return SessionIdentity(checked, parsed)


def check_agent_id(agent_id: object) -> str:
    """An agent id is a non-empty token without `:`, whitespace or control characters."""
    if not isinstance(agent_id, str) or not agent_id.strip():
        raise InvalidSignal("agent_id", "must be a non-empty string")
    if ":" in agent_id or agent_id != agent_id.strip() or has_control_character(agent_id):
        raise InvalidSignal("agent_id", "must not contain ':', surrounding spaces or control characters")
    if len(agent_id) > MAX_KEY_LENGTH:
        raise InvalidSignal("agent_id", f"must be at most {MAX_KEY_LENGTH} characters")
    return agent_id
