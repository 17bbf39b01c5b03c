"""A history's last line, its trailer: the event count and a sha256 digest of every line before it.

Since format version 2 an export ends with `{"events": N, "sha256": "<hex>", "trailer":
"sessionwatch.history"}` (keys sorted): `N` event lines came before it, and the digest covers the
header and event lines, each one's text followed by one newline, in UTF-8: the exact bytes export
wrote before the trailer, so `head -n -1 history.jsonl | sha256sum` shows it. A history without its
trailer, or whose count or digest disagree with its lines, was cut or changed after export and is
refused whole (ADR-0050). Version 1 histories (sessionwatch 0.1.0) have no trailer. Pure.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Final

import orjson

from sessionwatch.adapters.history.reading import HISTORY_FORMAT, Header, HistoryError

TRAILER_KEY: Final = "trailer"
"""The key that marks a history's trailer line (its value is `HISTORY_FORMAT`)."""
_KEYS: Final = frozenset({"events", "sha256", TRAILER_KEY})
_TRAILER_END: Final = f'"{TRAILER_KEY}":"{HISTORY_FORMAT}"}}'
"""How a trailer line ends (its last key), and an event line never does (its last key is `payload`)."""
_HEX: Final = re.compile(r"[0-9a-f]{64}")
SHAPE: Final = '{"events": N, "sha256": "<64 hex digits>", "trailer": "sessionwatch.history"}'
"""The trailer as an error message shows it."""


class Digest:
    """The running count and sha256 of a history's lines, as export writes them and import reads them."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()
        self.lines = 0

    def add(self, line: bytes) -> None:
        """One line as export writes it: its bytes, ending in one newline."""
        self._sha.update(line)
        self.lines += 1

    def add_read(self, text: str) -> None:
        """One line as an import reads it: with its line ending (LF or CRLF) or without one."""
        if text[-1:] == "\n" and text[-2:-1] not in _LINE_END_CHARACTERS:  # as export wrote it
            self.add_exact(text)
        else:
            self.add(text.rstrip("\r\n").encode() + b"\n")

    def add_exact(self, text: str) -> None:
        """One line that ends in exactly one LF, as export writes it (`add_read` of it, without the look)."""
        self._sha.update(text.encode())
        self.lines += 1

    def trailer(self, events: int) -> bytes:
        """The trailer line for `events` event lines and the lines added so far."""
        value = {"events": events, "sha256": self._sha.hexdigest(), TRAILER_KEY: HISTORY_FORMAT}
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS) + b"\n"

    def check(self, number: int, text: str, events: int) -> None:
        """`HistoryError` unless line `number` is a trailer for these `events` lines and those added."""
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = None
        if not isinstance(value, dict) or value.get(TRAILER_KEY) != HISTORY_FORMAT:
            raise HistoryError(
                f"no trailer: the history ends at line {number} without the line export writes last"
                " (its event count and digest), so it was cut or is not a whole export"
            )
        if value.keys() != _KEYS or not _is_hex(value["sha256"]) or not _is_count(value["events"]):
            raise HistoryError(f"the trailer must be {SHAPE}, not {text.strip()}", line=number)
        if value["events"] != events:
            raise HistoryError(
                f"the trailer counts {value['events']} events but {events} event lines precede it:"
                " lines were lost or added after export",
                line=number,
            )
        if value["sha256"] != self._sha.hexdigest():
            raise HistoryError(
                "the trailer's sha256 digest differs from that of the lines before it:"
                " the history was changed after export",
                line=number,
            )


def _is_hex(value: object) -> bool:
    return isinstance(value, str) and _HEX.fullmatch(value) is not None


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def event_lines(
    header: Header, header_text: str, numbered: Iterator[tuple[int, str]]
) -> Iterator[tuple[int, str]]:
    """The numbered event lines after the header, all but the trailer; the trailer checked at their end.

    A version 2 history's last line is held back and checked as its trailer once every line before
    it went by, so a consumer that reads to the end gets `HistoryError` for a history that was cut
    or changed, before it finishes; a trailer with lines after it is refused where it stands. A
    version 1 history has no trailer: every line is an event line.
    """
    if header.version == 1:
        for number, text in numbered:
            _not_a_trailer(number, text, "a trailer in a version 1 history, which has none")
            yield number, text
        return
    digest = Digest()
    digest.add_read(header_text)
    held: tuple[int, str] | None = None
    follows = "a trailer must be the history's last line, and lines follow this one"
    add, update = digest.add_read, digest.add_exact
    for item in numbered:
        if held is not None:
            text = held[1]
            if text[-1:] == "\n" and text[-2:-1] not in _LINE_END_CHARACTERS:  # as export wrote it
                if text.endswith(_TRAILER_LINE):
                    raise HistoryError(follows, line=held[0])
                update(text)
            else:
                _not_a_trailer(*held, follows)
                add(text)
            yield held
        held = item
    if held is None:
        raise HistoryError(
            "no trailer: the history ends after its header (line 1) without the line export writes last"
            " (its event count and digest), so it was cut or is not a whole export"
        )
    digest.check(held[0], held[1], digest.lines - 1)


_LINE_END_CHARACTERS: Final = ("\r", "\n")
_TRAILER_LINE: Final = _TRAILER_END + "\n"


def _not_a_trailer(number: int, text: str, refusal: str) -> None:
    if text[-1:] == "\n" and text[-2:-1] not in _LINE_END_CHARACTERS:  # one LF: the line is the rest
        trailer = text.endswith(_TRAILER_LINE)
    else:
        trailer = text.rstrip("\r\n").endswith(_TRAILER_END)
    if trailer:
        raise HistoryError(refusal, line=number)
