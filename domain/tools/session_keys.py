"""Session references and the facts the tools derive from a key.

Pure string rules: the façade looks sessions up in the registry; these functions say what a reference
means, how a key is displayed and classified, and which route a group/channel key names.
"""

from __future__ import annotations

import re
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.keys import agent_id_of, is_agent_qualified

SessionKind: TypeAlias = Literal["main", "group", "cron", "hook", "node", "other"]
SESSION_KINDS: Final[tuple[SessionKind, ...]] = ("main", "group", "cron", "hook", "node", "other")

DEFAULT_MAIN_KEY: Final = "main"
GLOBAL_KEY: Final = "global"

CLIENT_LABELS: Final[frozenset[str]] = frozenset(
    {
        "openclaw-tui",
        "cli",
        "webchat-ui",
        "openclaw-control-ui",
        "openclaw-macos",
        "openclaw-ios",
        "openclaw-android",
    }
)
"""Client names a model may pass as `sessionKey`: each means the requester, never a key."""

_NOT_SESSION_IDS: Final = frozenset({"main", "global", "unknown", "current"})
_KEY_PREFIXES: Final = ("agent:", "cron:", "hook:", "node-", "node:")
_THREAD_MARKER: Final = ":thread:"
_SUBAGENT_SEGMENT: Final = re.compile(r"(?:^|:)subagent:")
_ROUTE_THREAD: Final = re.compile(r":(?:topic|thread):(\d+)$")


def _parts(key: str) -> list[str]:
    return [part for part in key.strip().split(":") if part]


def key_rest(key: str) -> str:
    """What follows `agent:<id>:` in an agent-qualified key (empty parts dropped), else the trimmed key."""
    if is_agent_qualified(key):
        return ":".join(_parts(key)[2:])
    return key.strip()


def _alias(main_key: str, session_scope: str) -> str:
    return GLOBAL_KEY if session_scope == "global" else main_key


# ------------------------------------------------------------------------------- derivations


def display_key(key: str, *, main_key: str = DEFAULT_MAIN_KEY, session_scope: str = "per-sender") -> str:
    """`main` for a bare key equal to the main key or to the `global` alias (global scope), else the key."""
    if not is_agent_qualified(key) and key.strip() in {main_key, _alias(main_key, session_scope)}:
        return "main"
    return key


def classify_kind(
    key: str,
    *,
    registry_kind: str | None = None,
    main_key: str = DEFAULT_MAIN_KEY,
    session_scope: str = "per-sender",
) -> SessionKind:
    """The session kind: the registry's if it names one, else derived from the key.

    `main` (the rest is the main key, or the key is the bare alias), `cron`/`hook` (the rest starts
    `cron:`/`hook:`), `node` (`node-`/`node:`), `group` (`:group:` or `:channel:` in the key), else
    `other`; sub-agents are `other`.
    """
    stored = (registry_kind or "").strip().lower()
    for kind in SESSION_KINDS:
        if stored == kind:
            return kind
    rest = key_rest(key)
    if rest == main_key or (not is_agent_qualified(key) and key.strip() == _alias(main_key, session_scope)):
        return "main"
    if rest.startswith("cron:"):
        return "cron"
    if rest.startswith("hook:"):
        return "hook"
    if rest.startswith(("node-", "node:")):
        return "node"
    if ":group:" in key or ":channel:" in key:
        return "group"
    return "other"


CORE_DEFAULT_KIND: Final = "main"
"""The core registers every session as `main` unless told otherwise, so that value says nothing."""


def listed_kind(
    key: str, stored_kind: str | None, *, main_key: str = DEFAULT_MAIN_KEY, session_scope: str = "per-sender"
) -> SessionKind:
    """The kind a session is listed with: one of the kinds the host set, else derived from the key.

    The core's default `main` counts as unset; every list of sessions (the tools, the command line)
    shows this kind.
    """
    stored = stored_kind if stored_kind in SESSION_KINDS and stored_kind != CORE_DEFAULT_KIND else None
    return classify_kind(key, registry_kind=stored, main_key=main_key, session_scope=session_scope)


def _present(value: str | None) -> str | None:
    text = (value or "").strip()
    return text or None


def _conversation(key: str, kinds: frozenset[str]) -> tuple[str, str, list[str]] | None:
    """`(channel, kind, rest)` of `[agent:<id>:]<channel>:<kind>:<id>…` when `kind` is one of `kinds`."""
    parts = _parts(key_rest(key))
    if len(parts) >= 3 and parts[1] in kinds:  # noqa: PLR2004 - channel, kind, id
        return parts[0], parts[1], parts[2:]
    return None


def derive_channel(
    key: str,
    kind: SessionKind,
    *,
    channel: str | None = None,
    origin_channel: str | None = None,
    delivery_channel: str | None = None,
    last_channel: str | None = None,
) -> str:
    """The row's channel: `internal` for cron/hook/node, else the first fact present.

    In order: the session's `channel`, its origin provider, `delivery_context.channel`, `last_channel`,
    the `<channel>` of a `[agent:<id>:]<channel>:(group|channel):<id>…` key, else `unknown`.
    """
    if kind in {"cron", "hook", "node"}:
        return "internal"
    for candidate in (channel, origin_channel, delivery_channel, last_channel):
        present = _present(candidate)
        if present is not None:
            return present
    parsed = _conversation(key, frozenset({"group", "channel"}))
    return parsed[0] if parsed is not None else "unknown"


def is_thread_session_key(key: str) -> bool:
    """A thread-scoped key: its last `:thread:` (any case) is followed by a non-blank id."""
    index = key.lower().rfind(_THREAD_MARKER)
    return index >= 0 and bool(key[index + len(_THREAD_MARKER) :].strip())


def subagent_depth_of_key(key: str) -> int:
    """How many `subagent:` segments the key's rest holds, any case (the depth without a registry row)."""
    return len(_SUBAGENT_SEGMENT.findall(key_rest(key).lower()))


def session_depth(key: str, *, spawn_depth: int | None = None) -> int:
    """The spawn depth: the registry's `spawn_depth` when set, else counted from the key."""
    return spawn_depth if spawn_depth is not None else subagent_depth_of_key(key)


def is_cron_run_key(key: str) -> bool:
    """A cron run session (its rest starts `cron:` and contains `:run:`): no A2A ping-pong."""
    rest = key_rest(key)
    return rest.startswith("cron:") and ":run:" in rest


def looks_like_session_id(value: str) -> bool:
    """Could `value` be a session id rather than a key? Blank is neither.

    Not `main|global|unknown|current`, no `agent:`, `acp:` (any case), `cron:`, `hook:`, `node-`,
    `node:` prefix, and no `:group:`/`:channel:`.
    """
    text = value.strip()
    if not text or text in _NOT_SESSION_IDS:
        return False
    if text.startswith(_KEY_PREFIXES) or text.lower().startswith("acp:"):
        return False
    return ":group:" not in text and ":channel:" not in text


# ------------------------------------------------------------------------------- references

ReferenceKind: TypeAlias = Literal["missing", "requester", "main", "key"]


class SessionReference(BaseModel):
    """What a `sessionKey` argument refers to, before the registry lookup.

    - `missing`: blank input; the tool applies its own default or error.
    - `requester`: `current` or a client label; labels are never looked up as keys.
    - `main`: `main`, already mapped to `key`/`agent_id` (`agent:<agent>:<main key>`, or the agent's
      bare `global` under global scope).
    - `key`: look `key`/`agent_id` up; when absent and `may_be_session_id`, look the input up as a
      session id (`session_not_found_message` if that fails too), else `unknown_session_key_message`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ReferenceKind
    input: str
    key: str | None = None
    agent_id: str | None = None
    may_be_session_id: bool = False


def resolve_reference(
    raw: str,
    *,
    requester_agent_id: str,
    main_key: str = DEFAULT_MAIN_KEY,
    session_scope: str = "per-sender",
) -> SessionReference:
    """Classify a `sessionKey` argument: requester alias, `main`, or a key that may be a session id.

    Bare keys take the requester's agent.
    """
    text = raw.strip()
    if not text:
        return SessionReference(kind="missing", input=text)
    if text.lower() == "current" or text.lower() in CLIENT_LABELS:
        return SessionReference(kind="requester", input=text)
    if text == "main":
        key = GLOBAL_KEY if session_scope == "global" else f"agent:{requester_agent_id}:{main_key}"
        return SessionReference(kind="main", input=text, key=key, agent_id=requester_agent_id)
    return SessionReference(
        kind="key",
        input=text,
        key=text,
        agent_id=agent_id_of(text) or requester_agent_id,
        may_be_session_id=looks_like_session_id(text),
    )


def session_not_found_message(value: str) -> str:
    """Resolution step 4: an id-like input that matches no session id."""
    return f"Session not found: {value} (use the full sessionKey from sessions_list)"


def unknown_session_key_message(value: str) -> str:
    """Resolution step 5 (and `session_status`)."""
    return f"Unknown sessionKey: {value}"


def unknown_session_id_message(value: str) -> str:
    """`session_status` for an id-like input that matches nothing."""
    return f"Unknown sessionId: {value}"


def sandbox_not_visible_message(value: str) -> str:
    """A requester restricted to spawned resolved a session outside its subtree."""
    return f"Session not visible from this sandboxed agent session: {value}"


# ------------------------------------------------------------------------------------ routes


class KeyRoute(BaseModel):
    """The delivery route a group/channel key names: channel, target, thread."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    channel: str
    to: str
    thread_id: str | None = None


def announce_route_from_key(key: str) -> KeyRoute | None:
    """Parse `[agent:<id>:]<channel>:(group|channel):<id>[:(thread|topic):<n>]` into a route.

    The channel is lowercased, `to` is `<group|channel>:<id>` with the thread suffix removed, and a
    trailing `:thread:<n>`/`:topic:<n>` (digits) becomes `thread_id`. Other keys give None.
    """
    parsed = _conversation(key, frozenset({"group", "channel"}))
    if parsed is None:
        return None
    channel, kind, rest = parsed
    joined = ":".join(rest)
    match = _ROUTE_THREAD.search(joined)
    target = joined[: match.start()] if match else joined.strip()
    if not target:
        return None
    return KeyRoute(
        channel=channel.lower(), to=f"{kind}:{target}", thread_id=match.group(1) if match else None
    )


def origin_provider_from_key(key: str) -> str | None:
    """`session_status` `route.origin.provider` when no origin is stored, else None.

    It is the `<channel>` of a `[agent:<id>:]<channel>:(group|channel|direct|dm):…` key.
    """
    parsed = _conversation(key, frozenset({"group", "channel", "direct", "dm"}))
    return parsed[0] if parsed is not None else None
