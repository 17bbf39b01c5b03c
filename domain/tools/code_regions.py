"""Markdown code regions of a text, which the assistant-text rules never touch.

Pure string scanning, linear in the text: no I/O, and no regular expression that can backtrack.
"""

from __future__ import annotations

import bisect
import re
from typing import Final, TypeAlias

JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""The reference gateway's `\\s` and `trim()` set (ECMAScript WhiteSpace and LineTerminator): unlike
`str.isspace` it holds U+FEFF and lacks U+001C-U+001F and U+0085. The text rules use it throughout."""

CodeRegion: TypeAlias = tuple[int, int]
"""A half-open `[start, end)` span of code-point offsets."""

_FENCE_OPENER: Final = re.compile(r"^(?:```|~~~)", re.MULTILINE)
_BACKTICK_RUN: Final = re.compile(r"`+")


def _fence_closer(fence: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(fence), re.MULTILINE)


_FENCE_CLOSERS: Final = {fence: _fence_closer(fence) for fence in ("```", "~~~")}


def _fenced_blocks(text: str) -> list[CodeRegion]:
    """Each line opening with ``` or ~~~ through the next line opening with the same fence, or the end."""
    blocks: list[CodeRegion] = []
    position = 0
    while (opener := _FENCE_OPENER.search(text, position)) is not None:
        start = opener.start()
        first_line_end = text.find("\n", start)
        if first_line_end == -1:
            blocks.append((start, len(text)))
            break
        closer = _FENCE_CLOSERS[opener.group()].search(text, first_line_end + 1)
        if closer is None:
            blocks.append((start, len(text)))
            break
        closer_line_end = text.find("\n", closer.start())
        end = len(text) if closer_line_end == -1 else closer_line_end
        blocks.append((start, end))
        position = end
    return blocks


def _inline_spans(text: str, start: int, end: int) -> list[CodeRegion]:
    """Backtick runs in `text[start:end]`, each closed by the next run of the same length.

    A run no later run of its length closes is literal text; pairing goes on from the run after it.
    """
    runs = [(run.start(), run.end()) for run in _BACKTICK_RUN.finditer(text, start, end)]
    following: list[int | None] = [None] * len(runs)
    last_of_width: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        width = runs[index][1] - runs[index][0]
        following[index] = last_of_width.get(width)
        last_of_width[width] = index
    spans: list[CodeRegion] = []
    index = 0
    while index < len(runs):
        closer = following[index]
        if closer is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closer][1]))
        index = closer + 1
    return spans


def code_regions(text: str) -> tuple[CodeRegion, ...]:
    """Fenced blocks and inline code spans of `text`, sorted and disjoint.

    A fenced block runs from a line opening with ```` ``` ```` or `~~~` through the next line opening
    with the same fence (the whole closing line included), or to the end of the text. An inline span
    is a backtick run closed by the next run of equal length; spans pair within the text between
    fenced blocks, since inline code never crosses a block.
    """
    fenced = _fenced_blocks(text)
    regions: list[CodeRegion] = []
    segment_start = 0
    for block in fenced:
        regions.extend(_inline_spans(text, segment_start, block[0]))
        regions.append(block)
        segment_start = block[1]
    regions.extend(_inline_spans(text, segment_start, len(text)))
    return tuple(regions)


class CodeIndex:
    """Answers "does offset `i` fall inside a code region?" in logarithmic time for one text."""

    __slots__ = ("_ends", "_starts")

    def __init__(self, regions: tuple[CodeRegion, ...]) -> None:
        self._starts = [start for start, _ in regions]
        self._ends = [end for _, end in regions]

    @classmethod
    def of(cls, text: str) -> CodeIndex:
        """The index of `text`'s code regions."""
        return cls(code_regions(text))

    def __contains__(self, offset: object) -> bool:
        if not isinstance(offset, int):
            return False
        slot = bisect.bisect_right(self._starts, offset) - 1
        return slot >= 0 and offset < self._ends[slot]

    def next_outside(self, offset: int) -> int:
        """The first offset at or after `offset` that no code region covers."""
        while offset in self:
            offset = self._ends[bisect.bisect_right(self._starts, offset) - 1]
        return offset
