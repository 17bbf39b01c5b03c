"""Notice links on every store and through both façades: a host's template links each notice to its target.

A link follows the notice's first sentence; a key that cannot make a safe path keeps the plain text;
the text stays byte-identical while the notice is outstanding; a malformed template is refused at open.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import sessionwatch
from sessionwatch import Actor, InvalidQuery, SessionWatch, SignalKind, notice_text
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
TEMPLATE = "/chat/{agent_id}/{rest_path}"


@pytest.fixture
def linked(store_url: str, clock: FakeClock) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store of each kind, with notice links on."""
    with sessionwatch.open(store_url, clock=clock, notice_links=TEMPLATE) as opened:
        yield opened


def stale(watch: SessionWatch, target: str, *, agent_id: str | None = None) -> int:
    """Watch `target` from the manager, then change it as a human: the notice's `changesSince`."""
    assert watch.watch(MANAGER, target, target_agent_id=agent_id)
    cursor = watch.cursor(MANAGER, target, target_agent_id=agent_id)
    assert cursor is not None
    watch.record(
        target, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="hi", agent_id=agent_id
    )
    return cursor.last_seen


def texts(watch: SessionWatch) -> list[str]:
    return [notice.text for notice in watch.pending_notices(MANAGER)]


def test_a_notice_links_template_adds_an_open_link_after_the_first_sentence(linked: SessionWatch) -> None:
    target = "agent:main:subagent:writer"
    since = stale(linked, target)
    expected = (  # the link is a sentence of its own: a period ends it
        f'Session "{target}" changed (other actor). Open: [session](/chat/main/subagent/writer). '
        f'Reconcile before acting: session_status sessionKey "{target}" changesSince {since}.'
    )
    assert [t.encode() for t in texts(linked)] == [expected.encode()]


def test_each_segment_of_the_rest_is_percent_encoded_on_its_own(linked: SessionWatch) -> None:
    stale(linked, "agent:main:team/a:b c?#%")
    [text] = texts(linked)
    assert " Open: [session](/chat/main/team%2Fa/b%20c%3F%23%25). Reconcile" in text


def test_a_linked_notice_stays_byte_identical_while_outstanding(linked: SessionWatch) -> None:
    target = "agent:main:subagent:writer"
    stale(linked, target)
    first = texts(linked)
    for _ in range(5):
        linked.record(target, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="again")
    assert texts(linked) == first
    assert [notice.text for notice in linked.drain(MANAGER)] == first
    [follow_up] = texts(linked)
    assert follow_up != first[0]
    assert "Open: [session](/chat/main/subagent/writer). Reconcile" in follow_up


@pytest.mark.parametrize(
    "target",
    ["agent:main:a::b", "agent:main:x:", "agent:main:.", "agent:main:tools:..", "agent:main:..:up"],
)
def test_a_key_that_cannot_make_a_safe_path_keeps_the_plain_text(linked: SessionWatch, target: str) -> None:
    since = stale(linked, target)
    assert texts(linked) == [notice_text(target, since)]


def test_a_bare_key_has_no_rest_and_keeps_the_plain_text(linked: SessionWatch) -> None:
    since = stale(linked, "global", agent_id="ops")
    assert texts(linked) == [notice_text("global", since)]


def test_without_notice_links_the_text_is_the_plain_one(watch: SessionWatch) -> None:
    since = stale(watch, "agent:main:subagent:writer")
    assert texts(watch) == [notice_text("agent:main:subagent:writer", since)]
    assert "Open:" not in texts(watch)[0]


@pytest.mark.parametrize(
    "template",
    [
        "/chat/{agent_id}",
        "/chat/{rest_path}",
        "/chat/{agent_id}/{rest_path}/{session}",
        "/chat/{}/{agent_id}/{rest_path}",
        "/chat/{agent_id!r}/{rest_path}",
        "/chat/{agent_id:>9}/{rest_path}",
        "/chat/{agent_id/{rest_path}",
        "/chat with space/{agent_id}/{rest_path}",
        "/chat/({agent_id})/{rest_path}",
        "",
        42,
    ],
)
def test_a_malformed_template_is_refused_at_open_naming_notice_links(
    store_url: str, clock: FakeClock, template: object
) -> None:
    with pytest.raises(InvalidQuery) as refused:
        sessionwatch.open(store_url, clock=clock, notice_links=template)  # type: ignore[arg-type]
    assert refused.value.field == "notice_links"


def test_a_refused_template_creates_no_store_file(tmp_path: Path) -> None:
    path = tmp_path / "never.db"
    with pytest.raises(InvalidQuery):
        sessionwatch.open(f"sqlite:///{path}", notice_links="/chat/{nope}")
    assert not path.exists()
