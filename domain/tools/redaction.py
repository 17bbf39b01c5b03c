r"""Credential masking of `sessions_history` text. Pure string functions.

The default patterns follow the reference gateway's `DEFAULT_REDACT_PATTERNS` in meaning: ECMAScript
`\s`, ASCII `\b` and `\d`, case-insensitive, global. They are compiled once; none can backtrack more
than linearly, and the PEM block (whose lazy body would be quadratic over many unterminated headers)
is found by a linear scanner with the same result.

Idempotence (a departure from one literal pass, so that
`redact_text(redact_text(x)) == redact_text(x)`): a secret that is
already a mask is left as it is. That is a secret made only of `*` (`***` and any prefix H5 may cut
from it), or one lying inside a `first6…last4` mask and touching its ellipsis (the whole mask, or the
`first6` part a value pattern such as `Authorization: Bearer` stops at before `…`). A real secret of
at most ten characters written right against a `…` is therefore taken for a mask; the default
patterns' token shapes are ASCII and at least 11 characters long, so none of them is affected.
A PEM block masks to the same header and footer lines around `…redacted…`, which masks to itself.
A mask can still give a later pattern a match it lacked, so the patterns repeat until they change
nothing (`redact_text`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Final

from sessionwatch.domain.tools.code_regions import JS_WHITESPACE

_S: Final = f"[{JS_WHITESPACE}]"
_NOT_S: Final = f"[^{JS_WHITESPACE}"  # an open class: callers add their own exclusions and the `]`
_FLAGS: Final = re.IGNORECASE | re.ASCII  # ASCII \b, \d and case folding, as the reference's regexes

ENV_ASSIGNMENT: Final = (
    rf"\b[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)\b{_S}*[=:]{_S}*([\"']?)({_NOT_S}\"'\\]+)\1"
)
"""`NAME=value` / `NAME: value`, NAME ending KEY, TOKEN, SECRET, PASSWORD or PASSWD; optionally quoted."""

JSON_FIELD: Final = (
    rf"\"(?:apiKey|token|secret|password|passwd|accessToken|refreshToken)\"{_S}*:{_S}*\"([^\"]+)\""
)
"""A JSON string field named apiKey, token, secret, password, passwd, accessToken or refreshToken."""

CLI_FLAG: Final = rf"--(?:api[-_]?key|token|secret|password|passwd){_S}+([\"']?)({_NOT_S}\"']+)\1"
"""`--api-key v`, `--api_key`, `--apikey`, `--token`, `--secret`, `--password`, `--passwd`."""

AUTHORIZATION_HEADER: Final = rf"Authorization{_S}*[:=]{_S}*Bearer{_S}+([A-Za-z0-9._\-+=]+)"
"""`Authorization: Bearer v` (any length)."""

BEARER_TOKEN: Final = rf"\bBearer{_S}+([A-Za-z0-9._\-+=]{{18,}})\b"
"""A bare `Bearer v` with at least 18 token characters."""

PEM_PRIVATE_KEY: Final = r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----"
"""A PEM private-key block, header through footer (matched by `_pem_blocks`, linearly)."""

TOKEN_PREFIXES: Final = (
    r"\b(sk-[A-Za-z0-9_-]{8,})\b",
    r"\b(ghp_[A-Za-z0-9]{20,})\b",
    r"\b(github_pat_[A-Za-z0-9_]{20,})\b",
    r"\b(xox[baprs]-[A-Za-z0-9-]{10,})\b",
    r"\b(xapp-[A-Za-z0-9-]{10,})\b",
    r"\b(gsk_[A-Za-z0-9_-]{10,})\b",
    r"\b(AIza[0-9A-Za-z\-_]{20,})\b",
    r"\b(pplx-[A-Za-z0-9_-]{10,})\b",
    r"\b(npm_[A-Za-z0-9]{10,})\b",
    r"\b([0-9]{6,}:[A-Za-z0-9_-]{20,})\b",
)
"""Provider token shapes: `sk-`, `ghp_`, `github_pat_`, `xox[baprs]-`, `xapp-`, `gsk_`, `AIza`, `pplx-`,
`npm_`, and Telegram-style `<6+ digits>:<20+ chars>`."""

DEFAULT_REDACT_PATTERNS: Final[tuple[str, ...]] = (
    ENV_ASSIGNMENT,
    JSON_FIELD,
    CLI_FLAG,
    AUTHORIZATION_HEADER,
    BEARER_TOKEN,
    PEM_PRIVATE_KEY,
    *TOKEN_PREFIXES,
)
"""The reference gateway's default credential patterns, in its order; applied after the configured ones."""

MIN_PARTIAL_MASK_LENGTH: Final = 18
KEEP_START: Final = 6
KEEP_END: Final = 4
SHORT_MASK: Final = "***"
PEM_MASK: Final = "\n…redacted…\n"
MAX_REDACT_ROUNDS: Final = 16
"""Rounds of all the patterns after which text that still changes is replaced by `***` whole."""

_PEM_BEGIN: Final = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----", _FLAGS)
_PEM_END: Final = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----", _FLAGS)
_LINE_SPLIT: Final = re.compile(r"\r?\n")


def mask_secret(secret: str) -> str:
    """`***` below 18 characters, else the first 6 + `…` + the last 4."""
    if len(secret) < MIN_PARTIAL_MASK_LENGTH:
        return SHORT_MASK
    return f"{secret[:KEEP_START]}…{secret[-KEEP_END:]}"


def mask_pem_block(block: str) -> str:
    """A PEM block keeps its first and last lines around `…redacted…`; a one-line block becomes `***`."""
    lines = [line for line in _LINE_SPLIT.split(block) if line]
    if len(lines) < 2:  # noqa: PLR2004 - a header line and a footer line
        return SHORT_MASK
    return f"{lines[0]}{PEM_MASK}{lines[-1]}"


_ELLIPSIS: Final = "…"
_MASK_WIDTH: Final = KEEP_START + 1 + KEEP_END


def is_masked(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` is (part of) a mask H4 produced, so masking it again changes nothing.

    True for a run of `*` only, and for a span inside an 11-character `first6…last4` window that
    contains or touches the window's ellipsis.
    """
    if start >= end:
        return True
    if text.count("*", start, end) == end - start:
        return True
    if end - start > _MASK_WIDTH:
        return False
    low = max(0, start - 1)
    high = min(len(text), end + 1)
    position = text.find(_ELLIPSIS, low, high)
    while position != -1:
        if position - KEEP_START <= start and end <= position + 1 + KEEP_END:
            return True
        position = text.find(_ELLIPSIS, position + 1, high)
    return False


def _mask_match(match: re.Match[str]) -> str:
    """The match with its secret masked: the last non-empty capture group, else the whole match.

    A secret that is already a mask (`is_masked`) stays as it is.
    """
    whole = match.group()
    if not whole:
        return whole  # an empty match (a configured pattern such as `x*`) hides nothing
    offset = match.start()
    for index in range(len(match.groups()), 0, -1):
        secret = match.group(index)
        if secret:
            start, end = match.span(index)
            if is_masked(match.string, start, end):
                return whole
            return whole[: start - offset] + mask_secret(secret) + whole[end - offset :]
    if is_masked(match.string, match.start(), match.end()):
        return whole
    return mask_secret(whole)


def _pem_blocks(text: str) -> str:
    """Mask every PEM private-key block: a header, then the first footer at least one character later."""
    kept: list[str] = []
    cursor = 0
    while (header := _PEM_BEGIN.search(text, cursor)) is not None:
        footer = _PEM_END.search(text, header.end() + 1)
        if footer is None:
            break  # no footer follows this header, so none follows a later one either
        kept.append(text[cursor : header.start()])
        kept.append(mask_pem_block(text[header.start() : footer.end()]))
        cursor = footer.end()
    kept.append(text[cursor:])
    return "".join(kept)


def _substitution(pattern: re.Pattern[str]) -> Callable[[str], str]:
    return functools.partial(pattern.sub, _mask_match)


_DEFAULT_STEPS: Final[tuple[Callable[[str], str], ...]] = tuple(
    _pem_blocks if source == PEM_PRIVATE_KEY else _substitution(re.compile(source, _FLAGS))
    for source in DEFAULT_REDACT_PATTERNS
)


@functools.lru_cache(maxsize=64)
def _configured_steps(sources: tuple[str, ...]) -> tuple[Callable[[str], str], ...]:
    """Configured patterns, compiled case-insensitively; blank or invalid ones are skipped (as upstream)."""
    steps: list[Callable[[str], str]] = []
    for source in sources:
        if not source.strip():
            continue
        try:
            steps.append(_substitution(re.compile(source, re.IGNORECASE)))
        except re.error:
            continue
    return tuple(steps)


def redact_text(text: str, extra_patterns: Iterable[str] = ()) -> tuple[str, bool]:
    """H4: mask credential-like values, configured patterns first, then `DEFAULT_REDACT_PATTERNS`.

    The patterns repeat until they change nothing (a mask can give a later-listed pattern the word
    boundary it lacked: `npm_0000000000pplx-0000000000` masks to `npm_00…pplx-0000000000`, whose `pplx-`
    token the next round masks). Text that has not settled after `MAX_REDACT_ROUNDS` becomes `***`,
    which no pattern changes. Returns the masked text and whether anything changed.
    """
    steps = (*_configured_steps(tuple(extra_patterns)), *_DEFAULT_STEPS)
    redacted = text
    for _ in range(MAX_REDACT_ROUNDS):
        again = redacted
        for step in steps:
            again = step(again)
        if again == redacted:
            return redacted, redacted != text
        redacted = again
    return SHORT_MASK, True
