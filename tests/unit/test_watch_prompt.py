"""The watch prompt's exact bytes: a change of wording shows here first (hosts cache prompts by bytes)."""

from __future__ import annotations

from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.domain.watch_prompt import MAX_CHARS, MAX_SESSIONS, watch_prompt_text


def cursor(target: str, agent_id: str, last_seen: int, notified: int) -> CursorState:
    return CursorState(
        watcher="agent:main:main",
        target_key=target,
        target_agent_id=agent_id,
        last_seen=last_seen,
        notified=notified,
        material=notified,
        updated_at_ms=0,
    )


def test_the_block_is_pinned_byte_for_byte() -> None:
    prompt = watch_prompt_text([cursor("global", "ops", 4, 4), cursor('agent:main:say "hi"', "main", 7, 9)])

    assert prompt.encode() == (
        b"Sessions you watch (2). You can read each of them with your session tools "
        b"(session_status, sessions_history); do not say that you cannot.\n"
        b'- "agent:main:say "hi"": changesSince 7, changed (other actor): reconcile before acting\n'
        b'- "global" agentId "ops": changesSince 4\n'
        b'To reconcile one: session_status sessionKey "<key>" changesSince <N> (and its agentId for a '
        b"bare key). A notice 'Session \"<key>\" changed (other actor).' means it changed since you last "
        b"saw it: reconcile before acting."
    )


def test_no_cursors_is_the_empty_string() -> None:
    assert watch_prompt_text([]) == ""


def test_the_bounds_are_twenty_sessions_and_two_thousand_characters() -> None:
    assert (MAX_SESSIONS, MAX_CHARS) == (20, 2000)
