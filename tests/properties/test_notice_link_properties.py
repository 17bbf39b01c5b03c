"""Notice links: any key either gets a link whose path segments decode back to its own, or none.

And a notice without a link is byte-identical to the plain notice text, whatever the key and `L`.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from hypothesis import given
from hypothesis import strategies as st

from sessionwatch import notice_text
from sessionwatch.domain.keys import agent_id_of
from sessionwatch.domain.notice_links import check_notice_links
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.projections.models import Notice

LINKS = check_notice_links("https://host.example/chat/{agent_id}/s/{rest_path}?from=notice")
PREFIX, SUFFIX = "https://host.example/chat/", "?from=notice"
UNSAFE = {"", ".", ".."}

TEXT_CHARACTERS = st.characters(exclude_categories=["Cs"])
TRICKY = st.sampled_from(["", ".", "..", "...", "a/b", "%2F", "?x", "#y", "a b", "ü", "\\", "%", "~"])
SEGMENTS = st.one_of(TRICKY, st.text(alphabet=TEXT_CHARACTERS, max_size=6))
AGENT_KEYS = st.builds(
    lambda agent, rest: ":".join(["agent", agent, *rest]),
    SEGMENTS,
    st.lists(SEGMENTS, min_size=1, max_size=4),
)
KEYS = st.one_of(AGENT_KEYS, st.text(alphabet=TEXT_CHARACTERS, max_size=20))
ENCODED = re.compile(r"[A-Za-z0-9_.~%-]+")


def cursor(target: str, last_seen: int) -> CursorState:
    return CursorState(
        watcher="agent:main:main",
        target_key=target,
        target_agent_id="main",
        last_seen=last_seen,
        notified=last_seen + 1,
        material=last_seen + 1,
        updated_at_ms=0,
    )


@given(KEYS)
def test_a_key_gets_a_link_whose_segments_decode_back_or_no_link(key: str) -> None:
    assert LINKS is not None
    link = LINKS.link(key)
    parts = key.split(":")
    agent_id = agent_id_of(key)  # the session's agent id, normalized; None for a key without one
    qualified = agent_id is not None and len(parts) >= 3 and parts[0].lower() == "agent"
    safe = qualified and not UNSAFE.intersection(parts[1:])
    if not safe:
        assert link is None
        return
    assert link is not None
    assert link.startswith(PREFIX)
    assert link.endswith(SUFFIX)
    agent, fixed, *rest = link.removeprefix(PREFIX).removesuffix(SUFFIX).split("/")
    assert fixed == "s"
    encoded = [agent, *rest]
    assert all(ENCODED.fullmatch(segment) for segment in encoded)
    assert [unquote(segment, errors="strict") for segment in encoded] == [agent_id, *parts[2:]]


@given(KEYS, st.integers(min_value=0, max_value=2**63 - 1))
def test_a_notice_without_links_is_byte_identical_to_the_plain_text(key: str, last_seen: int) -> None:
    plain = (
        f'Session "{key}" changed (other actor). Reconcile before acting: '
        f'session_status sessionKey "{key}" changesSince {last_seen}.'
    )
    assert notice_text(key, last_seen).encode() == plain.encode()
    assert Notice.from_state(cursor(key, last_seen)).text.encode() == plain.encode()


@given(KEYS, st.integers(min_value=0, max_value=2**63 - 1))
def test_a_linked_notice_is_the_plain_text_with_the_link_after_its_first_sentence(
    key: str, last_seen: int
) -> None:
    assert LINKS is not None
    text = Notice.from_state(cursor(key, last_seen), LINKS).text
    assert text == Notice.from_state(cursor(key, last_seen), LINKS).text  # rendered twice, same bytes
    link = LINKS.link(key)
    opened = f" Open: [session]({link})." if link is not None else ""
    assert text.replace(opened, "", 1) == notice_text(key, last_seen)
    assert text.startswith(f'Session "{key}" changed (other actor).{opened} Reconcile before acting: ')
