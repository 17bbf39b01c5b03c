"""Text rules shared by keys, summaries, ids and payload values (one line, printable, UTF-8); notices.

Standard library only: the command line's read path (`cli_read`) prints notices without loading the models.
"""

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


def notice_text(target: str, last_seen: int, *, link: str | None = None) -> str:
    """The one notice line a stale watcher gets for a target, byte-stable.

    With a `link`, the sentence ` Open: [session](<link>).` follows the first one; without, the text is
    as always.
    """
    opened = f" Open: [session]({link})." if link is not None else ""
    return (
        f'Session "{target}" changed (other actor).{opened} Reconcile before acting: '
        f'session_status sessionKey "{target}" changesSince {last_seen}.'
    )
