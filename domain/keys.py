"""Session keys and identities. Pure string rules, no I/O."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.text import has_control_character

MAX_KEY_LENGTH = 512
"""A key's most characters."""
MAX_KEY_BYTES = 1024
"""A key's most bytes in UTF-8: what every store can index, the same for all (ADR-0065).

The widest index row any store writes holds two keys and an agent id: a cursor's (target key,
target agent id, watcher key). PostgreSQL's B-tree holds at most `INDEX_ROW_BYTES` per row: an
8-byte header, then per text column a 4-byte length (after up to 3 bytes of alignment) and its
bytes. Two keys of `MAX_KEY_BYTES` and an agent id of `MAX_AGENT_ID_BYTES` take 2,584 bytes.
"""
MAX_AGENT_ID_BYTES = 512
"""An explicit agent id's most bytes in UTF-8 (an agent id parsed from a key is at most 64 ASCII)."""
INDEX_ROW_BYTES = 2704
"""The most one B-tree index row holds in PostgreSQL (version 4 B-trees, 8 KiB pages)."""
_SAFE_CHARACTERS = MAX_KEY_BYTES // 4
"""A key this short cannot exceed `MAX_KEY_BYTES` (UTF-8 takes at most 4 bytes a character)."""
_AGENT_PREFIX = "agent:"
DEFAULT_AGENT_ID = "main"
"""The agent an agent id that normalizes to nothing names (as the reference gateway's)."""
MAX_AGENT_ID_LENGTH = 64

_VALID_AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}", re.IGNORECASE | re.ASCII)
_CANONICAL_AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_INVALID_AGENT_ID_RUN = re.compile(r"[^a-z0-9_-]+")
_EDGE_SPACE = (
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""What trimming an agent id removes at either end: the white space and line breaks of the
reference gateway's own trim (a byte-order mark too), so both trim the same ids alike."""


class SessionIdentity(NamedTuple):
    """A session is identified by its key together with its agent id."""

    session_key: str
    agent_id: str


def normalize_agent_id(raw: str) -> str:
    """The agent id as the reference gateway normalizes it: `Main` is `main`, `my agent` is `my-agent`.

    Trimmed; an id of letters, digits, `_` and `-` (64 at most, not starting with `_` or `-`) is
    lowercased; any other is lowercased, each run of other characters becomes one `-`, leading and
    trailing `-` go, and it is cut to 64 characters. What is left empty names the agent `main`.
    """
    if _CANONICAL_AGENT_ID.fullmatch(raw):  # the common case, already in normal form
        return raw
    trimmed = raw.strip(_EDGE_SPACE)
    if not trimmed:
        return DEFAULT_AGENT_ID
    if _VALID_AGENT_ID.fullmatch(trimmed):
        return trimmed.lower()
    collapsed = _INVALID_AGENT_ID_RUN.sub("-", trimmed.lower()).lstrip("-").rstrip("-")
    return collapsed[:MAX_AGENT_ID_LENGTH] or DEFAULT_AGENT_ID


class _ParsedKey(NamedTuple):
    agent_id: str  # normalized
    rest: str  # as written, empty parts dropped


def _parts(key: str) -> list[str]:
    return [part for part in key.strip().split(":") if part]


@functools.lru_cache(maxsize=65536)  # asked for every key of every record, watcher and wake
def _parse(key: str) -> _ParsedKey | None:
    """An agent-qualified key's agent id (normalized) and rest (as written), else None.

    `agent:<id>:<rest>`: parts split on `:`, empty ones dropped, the first `agent` in any case, the
    id not blank once trimmed, a rest.
    """
    parts = _parts(key)
    if len(parts) < 3 or parts[0].lower() != "agent":  # noqa: PLR2004 - agent, id, rest
        return None
    written = parts[1].strip(_EDGE_SPACE)
    if not written:
        return None
    return _ParsedKey(normalize_agent_id(written), ":".join(parts[2:]))


def is_agent_qualified(key: str) -> bool:
    """`agent:<id>:<rest>`: at least three non-empty parts, the first `agent` (any case), the id not blank."""
    return _parse(key) is not None


def agent_id_of(key: str) -> str | None:
    """The agent id of an agent-qualified key, normalized (`agent:Main:x` is `main`), else None."""
    parsed = _parse(key)
    return parsed.agent_id if parsed is not None else None


def is_subagent_key(key: str) -> bool:
    """A key whose rest (after `agent:<id>:`) starts with `subagent:`, case-insensitively."""
    parsed = _parse(key)
    return parsed is not None and parsed.rest.lower().startswith("subagent:")


def written_agent_id(key: str) -> str | None:
    """The agent id as the key writes it, as stores kept it before agent ids were normalized.

    The second part of `agent:<id>:<rest>` (`agent` in lower case, empty parts dropped), untouched:
    `Main` in `agent:Main:x`. None for any other key.
    """
    parts = _parts(key)
    return parts[1] if len(parts) >= 3 and parts[0] == "agent" else None  # noqa: PLR2004


def stored_agent_id(key: str, agent_id: str) -> str:
    """The agent id a stored `(key, agent id)` pair reads as.

    Before agent ids were normalized, an agent-qualified key's agent id was stored as its second
    part was written (`agent:Main:x` under `Main`); such a pair reads as that part normalized, the
    key's agent now. A pair that was stored with an explicit agent id (a bare key) reads as stored.
    """
    if plainly_normal(agent_id) or written_agent_id(key) != agent_id:
        return agent_id
    return normalize_agent_id(agent_id)


@functools.lru_cache(maxsize=1024)  # asked for every stored event read: a store holds few agent ids
def plainly_normal(agent_id: str) -> bool:
    """Whether the agent id is lowercase letters, digits, `_` and `-`, starting with a letter or digit.

    Such an id is its own normal form (`normalize_agent_id` returns it unchanged).
    """
    return _CANONICAL_AGENT_ID.fullmatch(agent_id) is not None


def key_problem(key: object) -> str | None:
    """Why `key` is malformed, or None for a well-formed key."""
    if not isinstance(key, str):
        return "must be a string"
    if not key.strip():
        return "must not be empty"
    if len(key) > MAX_KEY_LENGTH:
        return f"must be at most {MAX_KEY_LENGTH} characters"
    if len(key) > _SAFE_CHARACTERS and utf8_bytes(key) > MAX_KEY_BYTES:
        return f"must be at most {MAX_KEY_BYTES} bytes in UTF-8 (it has {utf8_bytes(key)})"
    if has_control_character(key):
        return "must not contain control characters"
    if key.strip().lower().startswith(_AGENT_PREFIX) and not is_agent_qualified(key):
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
    """Resolve `(key, agent_id)`: parsed from an agent-qualified key (normalized), explicit for a bare key.

    The key is kept as written (trimmed). An explicit agent id given with an agent-qualified key
    must normalize to the key's agent; a bare key's explicit agent id is kept as given.
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
        if parsed is None:
            return SessionIdentity(checked, explicit)
        if normalize_agent_id(explicit) != parsed:
            raise InvalidSignal("agent_id", f"{explicit!r} contradicts the key's agent {parsed!r}")
        return SessionIdentity(checked, parsed)
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
    if utf8_bytes(agent_id) > MAX_AGENT_ID_BYTES:
        raise InvalidSignal(
            "agent_id", f"must be at most {MAX_AGENT_ID_BYTES} bytes in UTF-8 (it has {utf8_bytes(agent_id)})"
        )
    return agent_id


def utf8_bytes(text: str) -> int:
    """How many bytes `text` takes in UTF-8 (a lone surrogate counted as the 3 bytes it would take)."""
    return len(text.encode("utf-8", "surrogatepass"))


def widest_index_row(*, key_bytes: int = MAX_KEY_BYTES, agent_id_bytes: int = MAX_AGENT_ID_BYTES) -> int:
    """The bytes of a cursor's primary-key index row in PostgreSQL: (target key, its agent id, watcher)."""
    size = 8  # the index tuple's header
    for column in (key_bytes, agent_id_bytes, key_bytes):
        size = -(-size // 4) * 4 + 4 + column  # aligned to 4, a 4-byte length, the text
    return -(-size // 8) * 8  # the row is aligned to 8
