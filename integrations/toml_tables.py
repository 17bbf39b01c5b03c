"""Editing TOML tables in a file's text: one table set to given values, every other byte kept.

The Codex installer owns a few whole tables of `config.toml` files that belong to the user (its MCP
server, the trust of its hooks). `set_table` finds the table's `[header]` line and replaces that
table (the header line to the next header) when its values differ, or appends it at the end;
nothing else of the text changes. A table defined another way (dotted keys, an inline table) is
not edited but refused, naming it. Every result is checked by parsing it (`tomllib`): the table
must hold exactly the values asked for, and everything else what it held before; otherwise the
edit is refused, so a text the line scanner misread (a header-like line inside a multi-line
string, say) can never be written.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TomlValue = str | int | bool | Sequence[str]
"""The values an installer writes: strings, numbers, booleans and lists of strings."""

_HEADER = re.compile(r"^[ \t]*\[(?!\[)(?P<name>[^\n]*?)\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_ANY_HEADER = re.compile(r"^[ \t]*\[[^\n]*\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_BARE = re.compile(r"[A-Za-z0-9_-]+")


class TableError(ValueError):
    """The text cannot be edited as asked: not TOML, or the table is defined another way."""


@dataclass(frozen=True)
class _Table:
    path: tuple[str, ...]
    start: int
    end: int


def parse(text: str) -> dict[str, object]:
    """The document's values (raises `TableError` for text that is not TOML)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TableError(f"not valid TOML ({exc})") from None


def set_table(text: str, path: Sequence[str], values: Mapping[str, TomlValue]) -> str:
    """The text with table `path` holding exactly `values` (unchanged text when it already does)."""
    before = parse(text)
    wanted = {key: _plain(value) for key, value in values.items()}
    if _at(before, path) == wanted:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    rendered = render_table(path, values, newline)
    own = [table for table in _tables(text) if table.path == tuple(path)]
    if own:
        table = own[-1]
        edited = text[: table.start] + rendered + text[table.end :]
    elif _at(before, path) is not None:
        raise TableError(f"[{_name(path)}] is written as dotted keys or an inline table; make it a table")
    else:
        body = text if not text or text.endswith("\n") else text + newline
        edited = body + (newline if body.strip() else "") + rendered
    _check(before, edited, path, wanted)
    return edited


def render_table(path: Sequence[str], values: Mapping[str, TomlValue], newline: str = "\n") -> str:
    """`[path]` and one `key = value` line per value, each line ending in `newline`."""
    lines = [f"[{_name(path)}]", *(f"{_key(key)} = {_value(value)}" for key, value in values.items())]
    return "".join(line + newline for line in lines)


def _tables(text: str) -> list[_Table]:
    """Every `[table]` header with its span: to its last value line before the next header or the end.

    Blank and comment lines after a table's last value stay outside its span (they may introduce
    the next table).
    """
    starts = [match.start() for match in _ANY_HEADER.finditer(text)]
    found = []
    for match in _HEADER.finditer(text):
        following = [start for start in starts if start > match.start()]
        region = text[match.start() : following[0] if following else len(text)]
        lines = region.splitlines(keepends=True)
        while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
            lines.pop()
        path = _header_path(match.group("name"))
        if path is not None:
            found.append(_Table(path, match.start(), match.start() + sum(len(line) for line in lines)))
    return found


def _header_path(name: str) -> tuple[str, ...] | None:
    """The key path a header names (None when it does not parse as one)."""
    try:
        parsed: object = tomllib.loads(f"[{name}]\n")
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(parsed, dict) and len(parsed) == 1:
        key, parsed = next(iter(parsed.items()))
        path.append(key)
    return tuple(path) if path and parsed == {} else None


def _check(before: dict[str, object], text: str, path: Sequence[str], wanted: Mapping[str, object]) -> None:
    """The edited text parses, holds `wanted` at `path` and, elsewhere, what `before` held."""
    refusal = f"[{_name(path)}] could not be edited without touching the rest of the file"
    try:
        after = parse(text)
    except TableError:
        raise TableError(refusal) from None
    if _at(after, path) != wanted or _without(after, path) != _without(before, path):
        raise TableError(refusal)


def _at(document: Mapping[str, object], path: Sequence[str]) -> object:
    value: object = document
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def _without(document: Mapping[str, object], path: Sequence[str]) -> dict[str, object]:
    """A copy of the document without the table at `path` (and without parents it alone filled)."""
    head, rest = path[0], path[1:]
    copy = dict(document)
    if head in copy:
        if not rest:
            del copy[head]
        elif isinstance(copy[head], Mapping):
            inner = _without(copy[head], rest)  # type: ignore[arg-type]
            copy[head] = inner
            if not inner:
                del copy[head]
    return copy


def _plain(value: TomlValue) -> object:
    return list(value) if not isinstance(value, str | int | bool) else value


def _name(path: Sequence[str]) -> str:
    return ".".join(_key(key) for key in path)


def _key(key: str) -> str:
    return key if _BARE.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _value(value: TomlValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    return "[" + ", ".join(json.dumps(item, ensure_ascii=False) for item in value) + "]"
