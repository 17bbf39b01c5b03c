"""Text rules shared by keys, summaries, ids and payload values: one line, printable, UTF-8."""

from __future__ import annotations

import re

_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
"""Unicode categories Cc (C0, DEL, C1 such as U+0085) and Cs (lone surrogates), and the line and
paragraph separators (Zl, Zp): none may appear in anything sessionwatch stores."""


def has_control_character(text: str) -> bool:
    """True when `text` holds a control character, a lone surrogate or a line/paragraph break."""
    return _FORBIDDEN.search(text) is not None


def one_line(message: str) -> str:
    """The message as one printable line: control and unencodable characters are escaped."""
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in message).strip()
    return text or "unknown error"
