"""The watch prompt over arbitrary sets of watched sessions: always within its bounds, byte-stable.

Whatever the keys (long, quoted, non-ASCII, bare or agent-qualified) and however many: at most
`MAX_CHARS` characters and `MAX_SESSIONS` listed sessions, the listed ones first in target order,
the rest counted on the "and K more" line, the same text for the same cursors in any order, and
the empty string exactly when there are none.
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from sessionwatch.domain.keys import MAX_KEY_LENGTH, agent_id_of, key_problem
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.domain.watch_prompt import MAX_CHARS, MAX_SESSIONS, watch_prompt_text

KEY_CHARACTERS = st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"))
SHORT = st.text(KEY_CHARACTERS, min_size=1, max_size=30)
LONG = st.builds(
    lambda rest: f"agent:a:{rest}", st.text(KEY_CHARACTERS, min_size=1, max_size=MAX_KEY_LENGTH - 8)
)
KEYS = st.one_of(SHORT, LONG, st.sampled_from(['"', 'x" y', "agent:main:ü", "- and 3 more"])).filter(
    lambda key: key_problem(key) is None
)
AGENT_IDS = st.sampled_from(["main", "ops", "a" * MAX_KEY_LENGTH, 'q"t'])


@st.composite
def cursors(draw: st.DrawFn) -> CursorState:
    key = draw(KEYS).strip()
    last_seen = draw(st.integers(min_value=0, max_value=10**12))
    notified = last_seen + draw(st.integers(min_value=0, max_value=3))
    return CursorState(
        watcher="agent:main:main",
        target_key=key,
        target_agent_id=agent_id_of(key) or draw(AGENT_IDS),
        last_seen=last_seen,
        notified=notified,
        material=notified + draw(st.integers(min_value=0, max_value=3)),
        updated_at_ms=draw(st.integers(min_value=0, max_value=2**40)),
    )


def cursor_sets(min_size: int = 0) -> st.SearchStrategy[list[CursorState]]:
    return st.lists(
        cursors(), min_size=min_size, max_size=60, unique_by=lambda c: (c.target_key, c.target_agent_id)
    )


CURSOR_SETS = cursor_sets()


@given(CURSOR_SETS, st.randoms(use_true_random=False))
def test_the_prompt_is_bounded_ordered_counted_and_byte_stable(
    cursor_set: list[CursorState], rng: random.Random
) -> None:
    prompt = watch_prompt_text(cursor_set)
    if not cursor_set:
        assert prompt == ""
        return
    ordered = sorted(cursor_set, key=lambda c: (c.target_key, c.target_agent_id))
    lines = prompt.splitlines()
    rest = [line for line in lines if line.startswith("- and ") and line.endswith(" more not listed here")]
    listed = lines[1 : len(lines) - 1 - len(rest)]

    assert len(prompt) <= MAX_CHARS
    assert len(listed) <= MAX_SESSIONS
    assert lines[0].startswith(f"Sessions you watch ({len(ordered)}). You can read each of them")
    for line, cursor in zip(listed, ordered, strict=False):
        assert line.startswith(f'- "{cursor.target_key}"')
        assert f"changesSince {cursor.last_seen}" in line
        assert ("changed (other actor)" in line) == cursor.pending
    hidden = len(ordered) - len(listed)
    assert rest == ([f"- and {hidden} more not listed here"] if hidden else [])
    assert lines[-1].startswith('To reconcile one: session_status sessionKey "<key>" changesSince <N>')
    shuffled = list(cursor_set)
    rng.shuffle(shuffled)
    assert watch_prompt_text(shuffled).encode() == prompt.encode()
    moved = [c.model_copy(update={"updated_at_ms": c.updated_at_ms + 1}) for c in cursor_set]
    assert watch_prompt_text(moved) == prompt  # the update time is not part of the text


@given(cursor_sets(min_size=MAX_SESSIONS + 1))
def test_more_than_the_cap_always_leaves_a_more_line(cursor_set: list[CursorState]) -> None:
    lines = watch_prompt_text(cursor_set).splitlines()
    assert lines[-2].startswith("- and ")
    assert lines[-2].endswith(" more not listed here")
