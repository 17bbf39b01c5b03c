"""The creation digest's bounded fold, as properties of the pure domain rules.

Whatever creations are noted and drained, the digest's text stays within 8,192 characters, lists
each key once at its newest creation, keeps exactly the newest entries that fit (the oldest go
first), and a drain through a sequence removes exactly the entries at or below it.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionwatch.domain import digest
from sessionwatch.domain.digest import DIGEST_HEADER, DIGEST_LIMIT, DigestState
from sessionwatch.domain.keys import SessionIdentity

MAIN = SessionIdentity("agent:main:main", "main")

keys = st.builds(
    lambda name, width: f"agent:main:{name}{'x' * width}",
    st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"]),
    st.integers(min_value=0, max_value=500),
)
steps = st.lists(st.one_of(keys, st.none()), max_size=80)  # a key: a creation; None: a drain


def fold(created: list[str]) -> DigestState | None:
    state = None
    for sequence, key in enumerate(created, 1):
        for event in digest.note_creation(state, MAIN, key, sequence):
            state = digest.evolve(state, event)
    return state


def newest_that_fit(created: list[str]) -> list[str]:
    """The reference: each key at its last creation, then the longest newest run whose text fits."""
    last = {key: sequence for sequence, key in enumerate(created)}
    ordered = [key for key, _ in sorted(last.items(), key=lambda item: item[1])]
    kept: list[str] = []
    for key in reversed(ordered):
        if len("\n".join((DIGEST_HEADER, key, *kept))) > DIGEST_LIMIT:
            break
        kept.insert(0, key)
    return kept


@given(st.lists(keys, max_size=80))
def test_the_digest_keeps_exactly_the_newest_entries_that_fit(created: list[str]) -> None:
    state = fold(created)
    listed = [] if state is None else [entry.key for entry in state.entries]
    assert listed == newest_that_fit(created)
    assert state is None or len(state.text) <= DIGEST_LIMIT


@given(steps)
def test_notes_and_drains_keep_the_text_bounded_and_each_key_once(plan: list[str | None]) -> None:
    state: DigestState | None = None
    for sequence, step in enumerate(plan, 1):
        events = digest.drain(state) if step is None else digest.note_creation(state, MAIN, step, sequence)
        for event in events:
            state = digest.evolve(state, event)
        if state is not None:
            listed = [entry.key for entry in state.entries]
            assert len(state.text) <= DIGEST_LIMIT
            assert len(listed) == len(set(listed))
            assert [entry.sequence for entry in state.entries] == sorted(e.sequence for e in state.entries)


@given(st.lists(keys, min_size=1, max_size=40), st.integers(min_value=0, max_value=45))
def test_a_drain_through_a_sequence_removes_exactly_the_entries_at_or_below_it(
    created: list[str], through: int
) -> None:
    state = fold(created)
    assert state is not None
    after: DigestState | None = state
    for event in digest.drain(state, through):
        after = digest.evolve(after, event)
    kept = [] if after is None else list(after.entries)
    assert kept == [entry for entry in state.entries if entry.sequence > through]


def test_the_main_session_itself_is_never_noted() -> None:
    assert digest.note_creation(None, MAIN, MAIN.session_key, 1) == []
