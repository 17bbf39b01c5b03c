"""Notice links: a host's link template, checked once, and the link it gives a target key. Pure.

A template names the two placeholders `{agent_id}` and `{rest_path}` and nothing else. A key gets a
link only when every one of its segments is a safe path segment: the key splits on `:` into
`agent`, the agent id and the rest's segments, and none may be empty, `.` or `..` (those would
collapse or climb the path); each is percent-encoded whole (`/`, `?`, `#`, `%` and every other
reserved character included), so the link's segments decode back to the key's exactly.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass

from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.keys import agent_id_of
from sessionwatch.domain.text import has_control_character

PLACEHOLDERS = ("agent_id", "rest_path")
"""The placeholders a template must name, each at least once."""

MAX_TEMPLATE_LENGTH = 512
_FIELD = "notice_links"
_UNSAFE_SEGMENTS = frozenset({"", ".", ".."})
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
"""The bytes a path segment carries as they are (RFC 3986's unreserved set); any other is `%XX`."""
_BREAKS_THE_LINK = frozenset("()<>\\")
"""Characters that would end or escape a Markdown link's destination, refused in the template."""


@dataclass(frozen=True, slots=True)
class NoticeLinks:
    """A checked template: its literal pieces, each followed by the placeholder it names (or none)."""

    template: str
    pieces: tuple[tuple[str, str | None], ...]

    def link(self, target_key: str) -> str | None:
        """The link for `target_key`, or None when the key cannot make a safe path."""
        return _link(self, target_key)


def check_notice_links(template: object) -> NoticeLinks | None:
    """Check a template once (None: no links); `InvalidQuery` naming `notice_links` when malformed."""
    if template is None:
        return None
    if not isinstance(template, str):
        raise InvalidQuery(_FIELD, "must be a string template or None")
    if not template.strip():
        raise InvalidQuery(_FIELD, "must not be empty")
    if len(template) > MAX_TEMPLATE_LENGTH:
        raise InvalidQuery(_FIELD, f"must be at most {MAX_TEMPLATE_LENGTH} characters")
    pieces = _pieces(template)
    missing = [p for p in PLACEHOLDERS if p not in {name for _, name in pieces}]
    if missing:
        raise InvalidQuery(_FIELD, f"must name {', '.join(f'{{{m}}}' for m in missing)}")
    return NoticeLinks(template, pieces)


def _pieces(template: str) -> tuple[tuple[str, str | None], ...]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:  # an unmatched brace
        raise InvalidQuery(_FIELD, f"is not a valid template: {exc}") from None
    pieces: list[tuple[str, str | None]] = []
    for literal, name, spec, conversion in parsed:
        _check_literal(literal)
        if name is not None and name not in PLACEHOLDERS:
            known = ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
            raise InvalidQuery(_FIELD, f"unknown placeholder {{{name}}}; expected only {known}")
        if name is not None and (spec or conversion):
            raise InvalidQuery(_FIELD, f"placeholder {{{name}}} must have no format or conversion")
        pieces.append((literal, name))
    return tuple(pieces)


def _check_literal(literal: str) -> None:
    if has_control_character(literal) or any(c.isspace() for c in literal):
        raise InvalidQuery(_FIELD, "must not contain spaces or control characters")
    if _BREAKS_THE_LINK.intersection(literal):
        raise InvalidQuery(_FIELD, "must not contain any of ( ) < > \\ (they would break the link)")


def key_segments(target_key: str) -> tuple[str, list[str]] | None:
    """The agent id (normalized) and the rest's segments of a key, or None when one is not a safe segment."""
    parts = target_key.split(":")
    agent = agent_id_of(target_key)
    if agent is None or len(parts) < 3 or parts[0].lower() != "agent":  # noqa: PLR2004 - agent, id, rest
        return None
    if any(part in _UNSAFE_SEGMENTS for part in parts[1:]):
        return None
    return agent, parts[2:]


@functools.lru_cache(maxsize=4096)  # drained notices name few targets, again and again
def _link(links: NoticeLinks, target_key: str) -> str | None:
    segments = key_segments(target_key)
    if segments is None:
        return None
    agent, rest = segments
    try:
        values = {
            "agent_id": percent_encoded(agent),
            "rest_path": "/".join(percent_encoded(segment) for segment in rest),
        }
    except UnicodeEncodeError:  # a lone surrogate: no path can carry it
        return None
    return "".join(literal + (values[name] if name is not None else "") for literal, name in links.pieces)


def percent_encoded(segment: str) -> str:
    """One path segment, its UTF-8 bytes percent-encoded except the unreserved ones (`/` included)."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in segment.encode("utf-8"))
