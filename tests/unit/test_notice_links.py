"""The notice link template: checked once at open, and the link each kind of key gets."""

from __future__ import annotations

import pytest

from sessionwatch import InvalidQuery
from sessionwatch.domain.notice_links import check_notice_links, key_segments


def test_no_template_means_no_links() -> None:
    assert check_notice_links(None) is None


def test_a_template_may_repeat_a_placeholder_and_escape_braces() -> None:
    links = check_notice_links("/c/{agent_id}/{rest_path}#{{{agent_id}}}")
    assert links is not None
    assert links.link("agent:ops:a:b") == "/c/ops/a/b#{ops}"


def test_the_agent_id_in_a_link_is_the_sessions_normalized_one() -> None:
    links = check_notice_links("/c/{agent_id}/{rest_path}")
    assert links is not None
    assert links.link("agent:é x:main") == "/c/x/main"
    assert links.link("agent:My Agent:é x") == "/c/my-agent/%C3%A9%20x"


@pytest.mark.parametrize(
    ("key", "segments"),
    [
        ("agent:main:main", ("main", ["main"])),
        ("agent:main:subagent:x", ("main", ["subagent", "x"])),
        ("agent:main:...", ("main", ["..."])),
        ("agent::main", None),
        ("agent:main:a::b", None),
        ("agent:main:..", None),
        ("agent:.:main", None),
        ("global", None),
        ("Agent:main:x", ("main", ["x"])),
        ("agent:Main:x", ("main", ["x"])),  # the agent id as the session's, normalized
        ("agent:my agent:x", ("my-agent", ["x"])),
    ],
)
def test_key_segments_refuse_empty_and_dot_segments(key: str, segments: object) -> None:
    assert key_segments(key) == segments


def test_the_error_names_notice_links_and_what_is_missing() -> None:
    with pytest.raises(InvalidQuery, match=r"^notice_links: must name \{rest_path\}$"):
        check_notice_links("/c/{agent_id}")
