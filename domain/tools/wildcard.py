"""`*` wildcard patterns (tool allow/deny lists, agent-to-agent allow), matched without backtracking.

Pure. A pattern is trimmed; `*` matches any run of characters (none included, line breaks included);
every other code point matches itself case-insensitively: two code points are equal when their Unicode
case foldings are (`S`, `s` and the long s `U+017F`; `ß` and `ẞ`, but never `ß` and `ss`). A blank
pattern matches nothing.

The matcher walks the name once and, on a mismatch, returns only to the latest `*`: a later `*` can
absorb anything an earlier one could, so no older choice needs revisiting. Each return lets that star
absorb one more code point, so there are at most `len(name)` returns and at most `len(pattern)` steps
between two of them: `step_bound` steps in all, whatever the input. A regular expression built from
the same pattern backtracks through the ways of splitting the name among the stars instead, which
grows with the name's length to the power of the number of stars.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, TypeAlias

STAR: Final = "*"

Token: TypeAlias = str | None
"""A pattern code point, case-folded; None for a `*`."""


def step_bound(pattern_length: int, name_length: int) -> int:
    """The most steps `WildcardPattern.match_steps` may take for these lengths (see the module)."""
    return (pattern_length + 1) * (name_length + 1) + pattern_length


@dataclass(frozen=True, slots=True)
class WildcardPattern:
    """One trimmed, non-blank pattern, folded once; build it with `WildcardPattern.parse`."""

    source: str
    """The pattern as written, trimmed."""
    tokens: tuple[Token, ...]
    """Its code points case-folded, None for each `*`."""

    @classmethod
    def parse(cls, raw: str) -> WildcardPattern | None:
        """The pattern `raw` trimmed, or None when it is blank (a blank pattern matches nothing)."""
        text = raw.strip()
        if not text:
            return None
        return cls(source=text, tokens=tuple(None if c == STAR else c.casefold() for c in text))

    def matches(self, name: str) -> bool:
        """Whether the whole of `name` matches the pattern."""
        return self.match_steps(name)[0]

    def match_steps(self, name: str) -> tuple[bool, int]:
        """`matches(name)` and the steps it took, never more than `step_bound(len(source), len(name))`."""
        pattern = self.tokens
        key = tuple(c.casefold() for c in name)
        p = k = steps = 0
        star = -1  # the latest `*` passed, or -1 before the first
        absorbed = 0  # where the run that star absorbs ends in `key`
        while k < len(key):
            steps += 1
            if p < len(pattern) and pattern[p] is None:
                star, absorbed = p, k
                p += 1
            elif p < len(pattern) and pattern[p] == key[k]:
                p += 1
                k += 1
            elif star >= 0:  # the latest star absorbs one more code point; retry what follows it
                absorbed += 1
                p, k = star + 1, absorbed
            else:
                return False, steps
        while p < len(pattern) and pattern[p] is None:
            steps += 1
            p += 1
        return p == len(pattern), steps


def parse_patterns(patterns: Iterable[str]) -> tuple[WildcardPattern, ...]:
    """The non-blank patterns among `patterns`, parsed."""
    return tuple(parsed for parsed in map(WildcardPattern.parse, patterns) if parsed is not None)


def matches_any(name: str, patterns: Iterable[str | WildcardPattern]) -> bool:
    """Whether `name` matches one of `patterns` (raw patterns are trimmed; blank ones match nothing)."""
    for pattern in patterns:
        parsed = WildcardPattern.parse(pattern) if isinstance(pattern, str) else pattern
        if parsed is not None and parsed.matches(name):
            return True
    return False
