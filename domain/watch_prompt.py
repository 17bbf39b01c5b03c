"""The watch prompt: a short block for a host's system prompt naming the sessions a session watches. Pure.

A host puts it in the watcher's system prompt so the model knows which sessions it follows, that it
can read them with its session tools, and how to reconcile one that changed: the same words as the
notice line (`notice_text`). The block is bounded (at most `MAX_SESSIONS` sessions listed and
`MAX_CHARS` characters in all, the rest counted on an "and K more" line), lists the sessions in
target order, and is byte-identical for the same cursors. No cursors: the empty string, so a host
can leave the section out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from sessionwatch.domain.keys import agent_id_of
from sessionwatch.domain.watch_cursor import CursorState

MAX_SESSIONS: Final = 20
"""At most this many watched sessions are listed one per line."""
MAX_CHARS: Final = 2000
"""The whole block is at most this many characters."""

_CAN_READ = (
    "You can read each of them with your session tools (session_status, sessions_history); "
    "do not say that you cannot."
)
_RECONCILE = (
    'To reconcile one: session_status sessionKey "<key>" changesSince <N> (and its agentId for a '
    "bare key). A notice 'Session \"<key>\" changed (other actor).' means it changed since you last "
    "saw it: reconcile before acting."
)


def _line(cursor: CursorState) -> str:
    """One watched session: its quoted key (its agent for a bare key), where to reconcile from."""
    agent = "" if agent_id_of(cursor.target_key) else f' agentId "{cursor.target_agent_id}"'
    changed = ", changed (other actor): reconcile before acting" if cursor.pending else ""
    return f'- "{cursor.target_key}"{agent}: changesSince {cursor.last_seen}{changed}'


def _block(total: int, lines: Sequence[str]) -> str:
    """The block listing `lines` of `total` watched sessions."""
    head = f"Sessions you watch ({total}). {_CAN_READ}"
    rest = total - len(lines)
    more = [f"- and {rest} more not listed here"] if rest else []
    return "\n".join([head, *lines, *more, _RECONCILE])


def watch_prompt_text(cursors: Iterable[CursorState]) -> str:
    """The watch prompt of a watcher's cursors, bounded and byte-stable; "" without cursors.

    Sessions are listed in (target key, agent id) order, as many as fit both `MAX_SESSIONS` and
    `MAX_CHARS`; the others are counted on an "and K more" line.
    """
    ordered = sorted(cursors, key=lambda c: (c.target_key, c.target_agent_id))
    if not ordered:
        return ""
    total = len(ordered)
    listed: list[str] = []
    for cursor in ordered[:MAX_SESSIONS]:
        line = _line(cursor)
        if len(_block(total, [*listed, line])) > MAX_CHARS:
            break
        listed.append(line)
    return _block(total, listed)
