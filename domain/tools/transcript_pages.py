"""The `sessions_history` pipeline: transcript pages sanitized for a model, with their offset window. Pure.

The shell reads transcript rows through the `Transcripts` port and hands them here; what comes back
is a frozen value holding fresh JSON-compatible dicts (the input is never mutated) and the flags the
tool reports. Sizes are compact JSON (`separators=(",", ":")`, non-ASCII unescaped) in UTF-8 bytes.

H3-H5 on a string form a fixed point rather than one ordered pass (sanitizing twice must equal
sanitizing once, and no credential may survive):

- H4 runs before H3 as well as after it, so a secret is masked before an assistant-text removal can
  glue a word onto it (`a[Tool Call: x] sk-…` would otherwise become an unmatched `ask-…`), and again
  after it for a secret a removal assembled. Masking can in turn swallow a backtick and uncover tags,
  so H3 and H4 alternate until neither changes anything (`settle_text`); well-formed text settles in
  one round. Should adversarial input not settle within `MAX_SETTLE_ROUNDS`, the string becomes empty,
  which is a fixed point and hides everything.
- H5 measures the settled text. A longer one keeps a prefix of at most 4000 characters plus
  `TRUNCATION_MARKER`: the longest prefix (from 4000 down) whose truncated form is itself settled. A
  cut can split a mask (`KEY=***` → `KEY=**`), leave `KEY=` before the marker or cut an inline code
  span open, and such a cut moves back instead; a cut inside an inline code span is also tried with
  the span's backtick run closing it, so the code it quoted stays code. The closing run is part of
  the kept characters (it takes the place of the prefix's last ones), so the cap holds for it too.
  The empty prefix qualifies (the marker alone is settled) unless a configured pattern masks the
  marker itself, and then the string becomes empty. A settled string that already ends with the
  marker after at most 4000 characters is what H5 made, and stays as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from sessionwatch.domain.tools.assistant_text import sanitize_assistant_text
from sessionwatch.domain.tools.code_regions import CodeRegion, code_regions
from sessionwatch.domain.tools.errors import InvalidToolInput
from sessionwatch.domain.tools.redaction import redact_text

JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = dict[str, JsonValue]

HISTORY_MAX_BYTES: Final = 81920
"""H7: the largest `messages` array, 80 KiB of compact JSON."""

MAX_TEXT_CHARS: Final = 4000
"""H5: a longer string keeps this many characters (code points) and gains `TRUNCATION_MARKER`."""

TRUNCATION_MARKER: Final = "\n…(truncated)…"
HISTORY_PLACEHOLDER: Final = "[sessions_history omitted: message too large]"
SESSIONS_LIST_PLACEHOLDER: Final = "[sessions_list omitted: message too large]"
"""The H7 placeholder text of `sessions_list` rows' `messages`."""

TOOL_ROLES: Final = frozenset({"toolResult", "tool"})
"""H1: the roles dropped unless `includeTools`."""

HEAVY_MESSAGE_KEYS: Final = ("details", "usage", "cost")
"""H2: message keys deleted."""

HEAVY_THINKING_KEYS: Final = ("thinkingSignature", "openclawReasoningReplay")
"""H2: keys deleted from `thinking` blocks."""

_MAX_SAFE_INTEGER: Final = 2**53 - 1  # the gateway reads `__openclaw.seq` as a safe JS integer


# ----------------------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class SanitizedHistory:
    """What H1-H7 made of a page of transcript messages, with the flags `sessions_history` reports."""

    messages: tuple[JsonObject, ...]
    content_truncated: bool
    """Some H2 key, H5 string or H6 image data was cut."""
    content_redacted: bool
    """H4 changed some string."""
    dropped_messages: bool
    """H7 dropped older messages or replaced the lone newest one by the placeholder."""
    bytes: int
    """The compact-JSON UTF-8 size of the `messages` array."""

    @property
    def truncated(self) -> bool:
        """`truncated`: content was cut or messages were dropped."""
        return self.content_truncated or self.dropped_messages

    @property
    def oldest_seq(self) -> int | None:
        """The smallest `__openclaw.seq` among the returned messages, if any carries one."""
        return smallest_seq(self.messages)


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """The pagination fields of a `sessions_history` call that gave an `offset`."""

    offset: int
    total_messages: int
    has_more: bool
    next_offset: int | None
    """Only set when `has_more`."""

    def to_json(self) -> dict[str, int | bool]:
        """`offset`, `nextOffset` (only with more to read), `hasMore`, `totalMessages`."""
        fields: dict[str, int | bool] = {"offset": self.offset}
        if self.next_offset is not None:
            fields["nextOffset"] = self.next_offset
        fields["hasMore"] = self.has_more
        fields["totalMessages"] = self.total_messages
        return fields


# ------------------------------------------------------------------------------------- JSON sizes


def json_size(value: object) -> int:
    """Compact JSON, non-ASCII unescaped, in UTF-8 bytes (a lone surrogate counts 3, as in the gateway)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def _plain(value: object) -> JsonValue:
    """A fresh JSON-compatible copy: mappings become dicts, sequences lists, anything else its text."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {key if isinstance(key, str) else str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return str(value)


def message_seq(message: Mapping[str, object]) -> int | None:
    """`__openclaw.seq` when it is a positive safe integer, else None."""
    meta = message.get("__openclaw")
    if not isinstance(meta, Mapping):
        return None
    seq = meta.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 < seq <= _MAX_SAFE_INTEGER:
        return None
    return seq


def smallest_seq(messages: Iterable[Mapping[str, object]]) -> int | None:
    """The smallest valid `__openclaw.seq` among `messages`, or None when none carries one."""
    return min((seq for seq in map(message_seq, messages) if seq is not None), default=None)


# -------------------------------------------------------------------------------------- H1-H6


@dataclass(slots=True)
class _Flags:
    truncated: bool = False
    redacted: bool = False


MAX_SETTLE_ROUNDS: Final = 32
"""H3/H4 rounds after which a string that still changes is emptied (only adversarial input gets there)."""


def truncate_text(text: str) -> tuple[str, bool]:
    """H5 alone: keep the first 4000 characters of a longer string and append `TRUNCATION_MARKER`."""
    if len(text) <= MAX_TEXT_CHARS:
        return text, False
    return text[:MAX_TEXT_CHARS] + TRUNCATION_MARKER, True


def settle_text(text: str, *, assistant: bool, patterns: tuple[str, ...] = ()) -> tuple[str, bool]:
    """H4, then (assistant text) H3 and H4 in turn until neither changes the text.

    Returns the settled text and whether H4 changed anything on the way.
    """
    settled, redacted = redact_text(text, patterns)
    if not assistant:
        return settled, redacted
    for _ in range(MAX_SETTLE_ROUNDS):
        stripped = sanitize_assistant_text(settled)
        if stripped == settled:
            return settled, redacted
        settled, changed = redact_text(stripped, patterns)
        redacted |= changed
    return "", redacted


def _cuts() -> tuple[int, ...]:
    """Prefix lengths H5 tries, longest first: every one down to 3968, then halving steps back to 0."""
    near = list(range(MAX_TEXT_CHARS, MAX_TEXT_CHARS - 33, -1))
    step, far = 64, []
    while MAX_TEXT_CHARS - step > 0:
        far.append(MAX_TEXT_CHARS - step)
        step *= 2
    return (*near, *far, 0)


_CUTS: Final = _cuts()


def _is_truncated_form(text: str) -> bool:
    return text.endswith(TRUNCATION_MARKER) and len(text) - len(TRUNCATION_MARKER) <= MAX_TEXT_CHARS


def _truncations(text: str, cut: int, regions: tuple[CodeRegion, ...]) -> list[str]:
    """The truncated forms of `text` keeping `cut` characters: the prefix, then the closed-span variant.

    When the cut falls inside an inline code span, the span's backtick run closing it is tried too,
    so the code the span quoted stays code rather than prose. The closing run counts towards the
    `cut` characters (it replaces the prefix's last ones), so no candidate keeps more than
    `MAX_TEXT_CHARS`; a span whose opening run and one character of code do not fit gets no variant.
    """
    candidates = [text[:cut] + TRUNCATION_MARKER]
    for start, end in regions:
        if start < cut < end and text[start] == "`":
            width = len(text[start:end]) - len(text[start:end].lstrip("`"))
            if start + width < cut - width:
                candidates.append(text[: cut - width] + "`" * width + TRUNCATION_MARKER)
    return candidates


def sanitize_text(text: str, *, assistant: bool, patterns: tuple[str, ...] = ()) -> tuple[str, bool, bool]:
    """H3 (assistant text only), H4 and H5 on one string, as a fixed point (module docstring).

    Returns the text, whether H4 changed anything and whether H5 cut it (the settled text was over
    4000 characters). `sanitize_text` of the result returns the result unchanged.
    """
    settled, redacted = settle_text(text, assistant=assistant, patterns=patterns)
    if len(settled) <= MAX_TEXT_CHARS:
        return settled, redacted, False
    if _is_truncated_form(settled):
        return settled, redacted, True
    regions = code_regions(settled) if assistant else ()
    for cut in _CUTS:
        for candidate in _truncations(settled, cut, regions):
            if settle_text(candidate, assistant=assistant, patterns=patterns)[0] == candidate:
                return candidate, redacted, True
    return "", redacted, True  # a configured pattern masks the marker itself; "" is always settled


def _text(text: str, flags: _Flags, *, assistant: bool, patterns: tuple[str, ...]) -> str:
    """H3 (assistant text only), H4 and H5 on one string."""
    text, redacted, truncated = sanitize_text(text, assistant=assistant, patterns=patterns)
    flags.redacted |= redacted
    flags.truncated |= truncated
    return text


def decoded_base64_size(data: str) -> int:
    """The decoded size of base64 `data`: 3 bytes per 4 characters (blanks ignored), less the padding."""
    compact = "".join(data.split())
    padding = 2 if compact.endswith("==") else 1 if compact.endswith("=") else 0
    return max(0, len(compact) * 3 // 4 - padding)


def _block(block: JsonObject, flags: _Flags, *, assistant: bool, patterns: tuple[str, ...]) -> None:
    """H2, H3, H4, H5 and H6 on one content block, in place (the block is already a fresh copy)."""
    kind = block.get("type")
    if kind == "thinking":
        for key in HEAVY_THINKING_KEYS:
            if key in block:
                del block[key]
                flags.truncated = True
    text = block.get("text")
    if isinstance(text, str):
        block["text"] = _text(text, flags, assistant=assistant and kind == "text", patterns=patterns)
    for key in ("thinking", "partialJson"):
        value = block.get(key)
        if isinstance(value, str):
            block[key] = _text(value, flags, assistant=False, patterns=patterns)
    if kind == "image":
        _omit_image_data(block, flags)


def _omit_image_data(block: JsonObject, flags: _Flags) -> None:
    """H6: the image loses `data` and gains `omitted` and `bytes` (decoded size, else the existing one)."""
    size = block.get("bytes")
    if "data" in block:
        data = block.pop("data")
        flags.truncated = True
        if isinstance(data, str):
            size = decoded_base64_size(data)
    block["omitted"] = True
    if isinstance(size, int | float) and not isinstance(size, bool):
        block["bytes"] = size


def _message(message: Mapping[str, object], flags: _Flags, patterns: tuple[str, ...]) -> JsonObject:
    """H2-H6 on one message, returning a fresh dict."""
    entry: JsonObject = {}
    for key, value in message.items():
        if key in HEAVY_MESSAGE_KEYS:
            flags.truncated = True
        else:
            entry[key if isinstance(key, str) else str(key)] = _plain(value)
    assistant = entry.get("role") == "assistant"
    content = entry.get("content")
    if isinstance(content, str):
        entry["content"] = _text(content, flags, assistant=assistant, patterns=patterns)
    elif isinstance(content, list):
        for index, block in enumerate(content):
            if isinstance(block, dict):
                _block(block, flags, assistant=assistant, patterns=patterns)
            elif isinstance(block, str):  # a bare string in a content list is text too
                content[index] = _text(block, flags, assistant=assistant, patterns=patterns)
    text = entry.get("text")
    if isinstance(text, str):
        entry["text"] = _text(text, flags, assistant=assistant, patterns=patterns)
    return entry


def without_tool_messages(messages: Iterable[Mapping[str, object]]) -> list[Mapping[str, object]]:
    """H1: the messages whose `role` is neither `toolResult` nor `tool`."""
    return [message for message in messages if message.get("role") not in TOOL_ROLES]


# ------------------------------------------------------------------------------------------- H7


def _placeholder(source: JsonObject, text: str) -> JsonObject:
    entry: JsonObject = {"role": "assistant", "content": text}
    seq = message_seq(source)
    if seq is not None:
        entry["__openclaw"] = {"seq": seq}
    return entry


def cap_messages(messages: list[JsonObject], placeholder: str) -> tuple[tuple[JsonObject, ...], bool, int]:
    """H7: drop the oldest while over 80 KiB and more than one remains; a lone one still over is replaced.

    Returns the messages, whether any was dropped or replaced by `placeholder`, and the array size.
    """
    sizes = [json_size(message) for message in messages]
    total = 2 + sum(sizes) + max(len(messages) - 1, 0)
    first = 0
    while total > HISTORY_MAX_BYTES and len(messages) - first > 1:
        total -= sizes[first] + 1
        first += 1
    kept = tuple(messages[first:])
    if total > HISTORY_MAX_BYTES:
        kept = (_placeholder(kept[0], placeholder),)
        return kept, True, json_size(kept)
    return kept, first > 0, total


def sanitize_history(
    messages: Iterable[Mapping[str, object]],
    *,
    include_tools: bool,
    redact_patterns: Iterable[str] = (),
    placeholder: str = HISTORY_PLACEHOLDER,
) -> SanitizedHistory:
    """H1-H7 of `sessions_history` over transcript messages, oldest first.

    `redact_patterns` are `ToolsConfig.redact_patterns`, applied before the defaults. `sessions_list`
    passes its own tool-free rows with `include_tools=True` and `SESSIONS_LIST_PLACEHOLDER`.
    """
    selected = messages if include_tools else without_tool_messages(messages)
    patterns = tuple(redact_patterns)
    flags = _Flags()
    sanitized = [_message(message, flags, patterns) for message in selected]
    kept, dropped, size = cap_messages(sanitized, placeholder)
    return SanitizedHistory(
        messages=kept,
        content_truncated=flags.truncated,
        content_redacted=flags.redacted,
        dropped_messages=dropped,
        bytes=size,
    )


# ----------------------------------------------------------------------------------- pagination


def history_window(total: int, limit: int, offset: int | None) -> range:
    """The seqs to read, ascending: the newest `limit`, or with `offset` o `[max(1, T-o-limit+1), T-o]`.

    Raises:
        InvalidToolInput: `offset` is negative.
    """
    if offset is None:
        return range(max(1, total - limit + 1), total + 1)
    if offset < 0:
        raise InvalidToolInput("offset", "offset must be a non-negative integer")
    last = total - offset
    return range(max(1, last - limit + 1), last + 1)


def history_page(*, total: int, offset: int, oldest_seq: int | None, rows_read: int) -> HistoryPage:
    """The fields of a page read with an explicit `offset`.

    `nextOffset = max(offset, T - s + 1)` with `s` the smallest returned seq (no seq: `offset +
    rows_read`), and `hasMore = nextOffset < T`.
    """
    next_offset = max(offset, total - oldest_seq + 1) if oldest_seq is not None else offset + rows_read
    has_more = next_offset < total
    return HistoryPage(
        offset=offset,
        total_messages=total,
        has_more=has_more,
        next_offset=next_offset if has_more else None,
    )
