"""Text rules shared by keys, summaries, ids and payload values: one line, printable, UTF-8."""

from __future__ import annotations

import unicodedata

_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
"""Control characters (C0, DEL, C1 such as U+0085), lone surrogates, and the Unicode line and
paragraph separators: none may appear in anything sessionwatch stores."""


def has_control_character(text: str) -> bool:
    """True when `text` holds a control character, a lone surrogate or a line/paragraph break."""
    return any(unicodedata.category(ch) in _FORBIDDEN_CATEGORIES for ch in text)
