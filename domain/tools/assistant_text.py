"""The assistant-text rules N1-N6 of `sessions_history`. Pure string functions.

The rules run in order, each on the output of the one before, and the whole N1-N6 sequence repeats
until the text stops changing; code regions are recomputed for every rule, and no rule touches a
match that starts inside one.

Why a fixed point rather than a single ordered pass (sanitizing twice must equal sanitizing
once):
removing text can complete a match that an earlier rule, or the same rule, already passed over
(`[Tool<think>x</think> Call: x]`, `<|a<|b|>|>`, `<tool_<think></think>call>{…}</tool_call>`), re-pair
the inline code spans after it, or move a fence to a line start. Repeating the sequence until nothing
changes makes the result a fixed point of every rule, so a second call changes nothing. Every rule
that changes the text makes it strictly shorter (N2 puts at most one space for a token of at least
four characters; the others only remove), so the loop ends after at most `len(text) + 1` sequences
without an arbitrary cap. Well-formed text settles in one or two; adversarially nested input
(`<|<|<|…|>|>|>`) costs one linear sequence per nesting level. Scanning is linear in the text for every
rule except the bounded look-aheads of N4 and N5 (a tag's quoted attributes, an `Arguments` value);
no regular expression here can backtrack catastrophically.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from sessionwatch.domain.tools.code_regions import JS_WHITESPACE, CodeIndex

_S: Final = f"[{JS_WHITESPACE}]"
_FLAGS: Final = re.IGNORECASE | re.ASCII  # ASCII \b and case folding, as the reference's regexes
_BLANKS: Final = " \t"

# ---------------------------------------------------------------------------------------------- N1

_MINIMAX_MARKER: Final = re.compile("minimax:tool_call", _FLAGS)
_MINIMAX_CANDIDATE: Final = re.compile(r"<(?:(invoke)\b|/?minimax:tool_call>)", _FLAGS)
_INVOKE_CLOSER: Final = re.compile("</invoke>", _FLAGS)
_TAG_END: Final = re.compile(">")


class _NextFinder:
    """The next occurrence at or after a rising offset, each part of the text searched once."""

    __slots__ = ("_found", "_pattern", "_searched_from", "_text")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self._text = text
        self._pattern = pattern
        self._searched_from = -1
        self._found: re.Match[str] | None = None

    def at_or_after(self, offset: int) -> re.Match[str] | None:
        """The first match starting at or after `offset` (offsets never decrease between calls)."""
        stale = self._found is not None and self._found.start() < offset
        if self._searched_from < 0 or stale:
            self._found = self._pattern.search(self._text, offset)
            self._searched_from = offset
        return self._found


def strip_minimax_tool_calls(text: str) -> str:
    """N1: when the text mentions `minimax:tool_call`, remove `<invoke …>…</invoke>` and the wrapper tags."""
    if _MINIMAX_MARKER.search(text) is None:
        return text
    code = CodeIndex.of(text)
    tag_ends = _NextFinder(text, _TAG_END)
    closers = _NextFinder(text, _INVOKE_CLOSER)
    kept: list[str] = []
    cursor = position = 0
    while (candidate := _MINIMAX_CANDIDATE.search(text, position)) is not None:
        start = candidate.start()
        if start in code:
            position = code.next_outside(start)
            continue
        end = candidate.end()
        if candidate.group(1) is not None:  # <invoke …> needs its `>` and then a `</invoke>`
            tag_end = tag_ends.at_or_after(end)
            closer = closers.at_or_after(tag_end.end()) if tag_end is not None else None
            if closer is None:
                position = start + 1
                continue
            end = closer.end()
        kept.append(text[cursor:start])
        cursor = position = end
    kept.append(text[cursor:])
    return "".join(kept)


# ---------------------------------------------------------------------------------------------- N2

_CONTROL_TOKEN: Final = re.compile("<[|\uff5c][^|\uff5c]*[|\uff5c]>")


def strip_control_tokens(text: str) -> str:
    """N2: remove `<|…|>` tokens, full-width bars (U+FF5C) included; a space stands in between non-blanks."""
    if "<|" not in text and "<\uff5c" not in text:
        return text
    code = CodeIndex.of(text)
    kept: list[str] = []
    cursor = 0
    for token in _CONTROL_TOKEN.finditer(text):
        start, end = token.span()
        if start in code:
            continue
        kept.append(text[cursor:start])
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        if before and after and before not in JS_WHITESPACE and after not in JS_WHITESPACE:
            kept.append(" ")
        cursor = end
    kept.append(text[cursor:])
    return "".join(kept)


# ---------------------------------------------------------------------------------------------- N3

_MEMORY_QUICK: Final = re.compile(rf"<{_S}*/?{_S}*relevant[-_]memories", _FLAGS)
_MEMORY_TAG: Final = re.compile(rf"<{_S}*(/?){_S}*relevant[-_]memories\b[^<>]*>", _FLAGS)
_SELF_CLOSING_END: Final = re.compile(rf"/{_S}*>\Z")


def _strip_tag_blocks(text: str, tags: re.Pattern[str], *, self_closing: bool) -> str:
    """Remove each block from an opening tag through the next closing tag, or to the end.

    `tags` captures the closing slash in group 1. Stray closing tags are removed; with
    `self_closing`, a `<tag … />` is removed alone instead of opening a block. Tags that start in a
    code region are text.
    """
    code = CodeIndex.of(text)
    kept: list[str] = []
    cursor = 0
    inside = False
    for tag in tags.finditer(text):
        if tag.start() in code:
            continue
        closing = tag.group(1) == "/"
        alone = closing or (self_closing and _SELF_CLOSING_END.search(tag.group()) is not None)
        if not inside:
            kept.append(text[cursor : tag.start()])
            inside = not alone
        elif closing:
            inside = False
        cursor = tag.end()
    if not inside:
        kept.append(text[cursor:])
    return "".join(kept)


def strip_relevant_memories(text: str) -> str:
    """N3: remove `<relevant-memories …>` (or `_`) blocks through a closer or to the end; stray closers."""
    if _MEMORY_QUICK.search(text) is None:
        return text
    return _strip_tag_blocks(text, _MEMORY_TAG, self_closing=False)


# ---------------------------------------------------------------------------------------------- N4

_TOOL_TAG: Final = re.compile(
    rf"<{_S}*(/?){_S}*(tool_calls?|function_calls?|tool_result|function_response)(?![A-Za-z_])", _FLAGS
)
_PAYLOAD_START: Final = re.compile(
    r"[ \t]*(?:\r?\n[ \t]*)?(?:([{\[])|<(?:invoke|parameters?|arguments?|function_call|tool_call)\b)", _FLAGS
)
_TAG_SCAN: Final = re.compile(r"""[<>"']""")
_QUOTE_OR_ANGLE: Final = re.compile(r"""[<"']""")


def skip_quoted(text: str, opening: int) -> int | None:
    """The offset just after the quote closing the one at `opening` (backslash escapes), or None."""
    quote = text[opening]
    position = opening + 1
    while (closing := text.find(quote, position)) != -1:
        backslashes = 0
        while closing - backslashes - 1 >= position and text[closing - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return closing + 1
        position = closing + 1
    return None


class _Quotes:
    """`skip_quoted` for one text, remembering the last string of each quote character.

    The quote closing an opening at `a` also closes every opening of that character between them,
    and no closing after an unclosed `a` means none after any later opening either: a backslash run
    never reaches back over a quote, so every opening sees the same escapes. Repeated look-ups over
    one stretch of text therefore cost nothing.
    """

    __slots__ = ("_last", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._last: dict[str, tuple[int, int | None]] = {}

    def after(self, opening: int) -> int | None:
        """The offset just after the quote closing the one at `opening`, or None."""
        quote = self._text[opening]
        known = self._last.get(quote)
        if known is not None:
            start, end = known
            if end is None and opening > start:
                return None
            if end is not None and start < opening < end - 1:
                return end
        end = skip_quoted(self._text, opening)
        self._last[quote] = (opening, end)
        return end


@dataclass(frozen=True, slots=True)
class _ToolTag:
    start: int
    end: int
    name: str
    closing: bool
    self_closing: bool


def _tool_tag_at(text: str, found: re.Match[str], quotes: _Quotes) -> _ToolTag | None:
    """The whole tag `found` starts, ending at the first `>` outside quotes; None when it never ends.

    A `<` outside quotes before that `>` also leaves the tag unfinished (it would swallow another tag).
    """
    name_end = found.end()
    if name_end < len(text) and text[name_end] not in JS_WHITESPACE and text[name_end] not in "/>":
        return None
    position = name_end
    while (mark := _TAG_SCAN.search(text, position)) is not None:
        char = mark.group()
        if char == "<":
            return None
        if char == ">":
            closing = found.group(1) == "/"
            inner = text[name_end : mark.start()]
            self_closing = not closing and inner.rstrip(JS_WHITESPACE).endswith("/")
            return _ToolTag(found.start(), mark.end(), found.group(2).lower(), closing, self_closing)
        after = quotes.after(mark.start())
        if after is None:
            return None
        position = after
    return None


def _hidden_block_end(text: str, opener: _ToolTag, quotes: _Quotes, *, quoted_json: bool) -> int | None:
    """Where the hidden block `opener` starts ends: just after the next closer of its name, or None.

    A `tool_result` block also ends at `</tool_call>`. For a JSON payload (`quoted_json`) a closer
    inside a quoted string does not count.
    """
    names = {opener.name, "tool_call"} if opener.name == "tool_result" else {opener.name}
    position = opener.end
    while True:
        pattern = _QUOTE_OR_ANGLE if quoted_json else _TOOL_TAG
        mark = pattern.search(text, position)
        if mark is None:
            return None
        if mark.group() in {'"', "'"}:
            after = quotes.after(mark.start())
            if after is None:
                return None
            position = after
            continue
        found = mark if not quoted_json else _TOOL_TAG.match(text, mark.start())
        tag = _tool_tag_at(text, found, quotes) if found is not None else None
        if tag is not None and tag.closing and tag.name in names:
            return tag.end
        position = mark.start() + 1


def _payload_kind(text: str, offset: int) -> Literal["json", "xml"] | None:
    """What the text after an opening tag starts with (after blanks and one line break), if hidden."""
    payload = _PAYLOAD_START.match(text, offset)
    if payload is None:
        return None
    return "json" if payload.group(1) is not None else "xml"


def strip_tool_call_xml(text: str) -> str:
    """N4: remove tool-call XML (`tool_call`, `function_calls`, … tags and hidden payload blocks).

    Self-closing tags and closing tags without a kept opener go; an opening tag whose payload starts
    with `{`, `[` or an `<invoke|parameter|…>` tag hides everything through the next closer of its
    name, or to the end; any other opening tag is prose and stays, with its closer.
    """
    if _TOOL_TAG.search(text) is None:
        return text
    code = CodeIndex.of(text)
    quotes = _Quotes(text)
    prose_open: Counter[str] = Counter()
    kept: list[str] = []
    cursor = position = 0
    while (found := _TOOL_TAG.search(text, position)) is not None:
        start = found.start()
        if start in code:
            position = code.next_outside(start)
            continue
        tag = _tool_tag_at(text, found, quotes)
        if tag is None:
            position = start + 1
            continue
        position = tag.end
        if tag.closing and prose_open[tag.name] > 0:
            prose_open[tag.name] -= 1
            continue
        if tag.closing or tag.self_closing:
            kept.append(text[cursor:start])
            cursor = tag.end
            continue
        kind = _payload_kind(text, tag.end)
        if kind is None:
            prose_open[tag.name] += 1
            continue
        kept.append(text[cursor:start])
        block_end = _hidden_block_end(text, tag, quotes, quoted_json=kind == "json")
        cursor = position = len(text) if block_end is None else block_end
    kept.append(text[cursor:])
    return "".join(kept)


# ---------------------------------------------------------------------------------------------- N5

_SCAFFOLDING_MARKER: Final = re.compile(r"\[Tool Call|\[Tool Result|\[Historical context", _FLAGS)
_TOOL_CALL_HEADER: Final = re.compile(r"\[Tool Call:", _FLAGS)
_TOOL_RESULT_HEADER: Final = re.compile(r"\[Tool Result for ID", _FLAGS)
_HISTORICAL_HEADER: Final = re.compile(r"\[Historical context:", _FLAGS)
_NEXT_TOOL_MARKER: Final = re.compile(r"\[Tool ", _FLAGS)
_JSONISH: Final = re.compile(r"""[{}\[\]"]""")
_CLOSING_BRACKET: Final = re.compile(r"\]")
_LINE_BREAK: Final = re.compile(r"[\r\n]")


def _skip_line_break(text: str, index: int) -> int:
    if text.startswith("\r\n", index):
        return index + 2
    if index < len(text) and text[index] in "\r\n":
        return index + 1
    return index


def _skip_blanks(text: str, index: int) -> int:
    while index < len(text) and text[index] in _BLANKS:
        index += 1
    return index


class _BracketMatcher:
    """Where the bracket at an offset is balanced, JSON strings skipped, for one text.

    A scan from an opening bracket runs to the end of the text and records the balancing offset of
    every bracket it passes outside strings: a later scan from such a bracket would see the very same
    characters, so it is answered from the record and the text is scanned a bounded number of times.
    """

    __slots__ = ("_balanced", "_quotes", "_text")

    def __init__(self, text: str, quotes: _Quotes) -> None:
        self._text = text
        self._quotes = quotes
        self._balanced: dict[int, int | None] = {}

    def end(self, index: int) -> int | None:
        """Just after the `}`/`]` that balances the `{`/`[` at `index`, or None."""
        if index not in self._balanced:
            self._scan(index)
        return self._balanced[index]

    def _scan(self, index: int) -> None:
        text = self._text
        open_brackets: list[int] = []
        position = index
        while (mark := _JSONISH.search(text, position)) is not None:
            char = mark.group()
            position = mark.end()
            if char == '"':
                after = self._quotes.after(mark.start())
                if after is None:
                    break
                position = after
            elif char in "{[":
                open_brackets.append(mark.start())
            elif open_brackets:
                self._balanced[open_brackets.pop()] = mark.end()
        for unbalanced in open_brackets:
            self._balanced[unbalanced] = None


def _arguments_value_end(text: str, index: int, brackets: _BracketMatcher, quotes: _Quotes) -> int | None:
    """The end of an `Arguments` value: balanced `{…}`/`[…]`, a quoted string, or the rest of the line."""
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    if index >= len(text):
        return None
    if text[index] in "{[":
        return brackets.end(index)
    if text[index] == '"':
        return quotes.after(index)
    line_break = _LINE_BREAK.search(text, index)
    return len(text) if line_break is None else line_break.start()


def _tool_call_end(
    text: str, header_end: int, brackets: _BracketMatcher, quotes: _Quotes, *, at_line_start: bool
) -> int:
    """Where a `[Tool Call: …]` removal stops: its blanks, line break, `Arguments` part, line break."""
    index = _skip_line_break(text, _skip_blanks(text, header_end))
    index = _skip_blanks(text, index)
    if text[index : index + 9].lower() == "arguments":
        index += 9
        if text.startswith(":", index):
            index += 1
        if text.startswith(" ", index):
            index += 1
        value_end = _arguments_value_end(text, index, brackets, quotes)
        if value_end is not None:
            index = value_end
    if at_line_start:  # the output so far is empty or ends with a line break
        index = _skip_line_break(text, index)
    return index


def _bracketed_end(header: re.Match[str], closing_brackets: _NextFinder) -> int | None:
    bracket = closing_brackets.at_or_after(header.end())
    return None if bracket is None else bracket.end()


def _strip_tool_calls(text: str) -> str:
    quotes = _Quotes(text)
    json_values = _BracketMatcher(text, quotes)
    return _strip_bracketed(
        text,
        _TOOL_CALL_HEADER,
        lambda header_end, at_line_start: _tool_call_end(
            text, header_end, json_values, quotes, at_line_start=at_line_start
        ),
    )


def _strip_bracketed(text: str, headers: re.Pattern[str], removal_end: Callable[[int, bool], int]) -> str:
    """Remove each `headers` match outside code whose `[...]` closes, through `removal_end(...)`.

    `removal_end(end, at_line_start)` gets the position just past the header's `]` and whether the output
    so far is empty or ends a line; a header that never closes ends the scan (nothing after it goes).
    """
    code = CodeIndex.of(text)
    brackets = _NextFinder(text, _CLOSING_BRACKET)
    kept: list[str] = []
    last_written = ""  # the output's last character, "" while the output is empty
    cursor = position = 0
    while (header := headers.search(text, position)) is not None:
        if header.start() in code:
            position = code.next_outside(header.start())
            continue
        header_end = _bracketed_end(header, brackets)
        if header_end is None:
            break
        kept.append(text[cursor : header.start()])
        last_written = kept[-1][-1:] or last_written
        end = removal_end(header_end, last_written in {"", "\n", "\r"})
        cursor = end
        position = max(end, header.start() + 1)
    kept.append(text[cursor:])
    return "".join(kept)


def _strip_tool_results(text: str) -> str:
    """Each `[Tool Result for ID …]` through the next `[Tool ` or the end (line breaks before it stay)."""
    next_markers = _NextFinder(text, _NEXT_TOOL_MARKER)

    def through_next_marker(header_end: int, _at_line_start: bool) -> int:
        body = header_end + 1 if text.startswith("\n", header_end) else header_end
        marker = next_markers.at_or_after(body)
        end = len(text) if marker is None else marker.start()
        while end > body and text[end - 1] == "\n":
            end -= 1
        return end

    return _strip_bracketed(text, _TOOL_RESULT_HEADER, through_next_marker)


def _strip_historical_context(text: str) -> str:
    """Each `[Historical context: …]` and one line break after it."""
    return _strip_bracketed(
        text,
        _HISTORICAL_HEADER,
        lambda header_end, _at_line_start: (
            header_end + 1 if text.startswith("\n", header_end) else header_end
        ),
    )


def strip_downgraded_scaffolding(text: str) -> str:
    """N5: remove downgraded tool scaffolding, then trim.

    `[Tool Call: …]` goes with its `Arguments` part, `[Tool Result for ID …]` through the next `[Tool `
    or the end, `[Historical context: …]` with one newline.
    """
    if _SCAFFOLDING_MARKER.search(text) is None:
        return text
    text = _strip_tool_calls(text)
    text = _strip_tool_results(text)
    text = _strip_historical_context(text)
    return text.strip(JS_WHITESPACE)


# ---------------------------------------------------------------------------------------------- N6

_REASONING_QUICK: Final = re.compile(rf"<{_S}*/?{_S}*(?:think|thought|antthinking|final)", _FLAGS)
_FINAL_TAG: Final = re.compile(rf"<{_S}*/?{_S}*final\b[^<>]*>", _FLAGS)
_THINKING_TAG: Final = re.compile(rf"<{_S}*(/?){_S}*(?:think(?:ing)?|thought|antthinking)\b[^<>]*>", _FLAGS)


def strip_thinking(text: str) -> str:
    """N6: drop `<final>` tags (content kept), then `<think>`-family blocks through a closer or to the end."""
    if _REASONING_QUICK.search(text) is None:
        return text
    code = CodeIndex.of(text)
    kept: list[str] = []
    cursor = 0
    for tag in _FINAL_TAG.finditer(text):
        if tag.start() in code:
            continue
        kept.append(text[cursor : tag.start()])
        cursor = tag.end()
    kept.append(text[cursor:])
    return _strip_tag_blocks("".join(kept), _THINKING_TAG, self_closing=True)


# ---------------------------------------------------------------------------------------------- H3

RULES: Final = (
    strip_minimax_tool_calls,
    strip_control_tokens,
    strip_relevant_memories,
    strip_tool_call_xml,
    strip_downgraded_scaffolding,
    strip_thinking,
)
"""N1-N6, in the order H3 applies them."""


def apply_rules_once(text: str) -> str:
    """N1-N6 once, in order, each on the previous one's output (one ordered pass)."""
    for rule in RULES:
        text = rule(text)
    return text


def sanitize_assistant_text(text: str) -> str:
    """H3: N1-N6 in order, repeated until the text stops changing (a fixed point of every rule).

    Each changing sequence shortens the text, so this ends after at most `len(text) + 1` sequences.
    """
    while True:
        sanitized = apply_rules_once(text)
        if sanitized == text:
            return sanitized
        if len(sanitized) >= len(text):  # pragma: no cover - every rule only shortens (module docstring)
            raise AssertionError("an assistant-text rule changed the text without shortening it")
        text = sanitized
