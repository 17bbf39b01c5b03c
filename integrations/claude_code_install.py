"""`sessionwatch claude-code install`: the hooks into `.claude/settings.json`, the server into `.mcp.json`.

The writer edits the files' text, never re-serializes them: every byte it does not add or replace
stays as it was, and a file that already holds exactly this installation is not written at all.
An edit inserts a member into an object or an element into an array, replaces one value, or removes
one array element. What it adds is JSON re-indented to where it goes, in the file's indent unit
(the first indented line's, else two spaces) and line ending; it stays on one line where the
enclosing object or array is on one line (an empty one: where the whole file is one line). A
replaced value keeps its shape (one line or several). A new file is the installation alone, two-space
indented. Both files are checked before either is written: a file that is not a UTF-8 JSON object
(or whose `hooks`, an event's list or `mcpServers` has the wrong type) stops the install with an
error naming the file, writing nothing. Files are replaced atomically (a temporary file in the same
directory, then a rename) and keep their permissions.

A hook handler is sessionwatch's when its command runs `sessionwatch claude-code hook`; the MCP
server is the `mcpServers` entry named `sessionwatch`. Each event keeps exactly one such handler
(a changed one is replaced where it is, copies are removed); the user's own hooks stay untouched.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sessionwatch.integrations.claude_code import EVENTS

SERVER_NAME = "sessionwatch"
HOOK_TIMEOUT_S = 10
"""Seconds Claude Code waits for the hook (it opens the store and answers in well under one)."""

SETTINGS_FILE = Path(".claude") / "settings.json"
MCP_FILE = Path(".mcp.json")

JsonValue = object


class InstallError(Exception):
    """A file the install cannot edit; the message names it. Nothing was written."""


@dataclass(frozen=True)
class Installed:
    """What the install did to one file: `created`, `updated` or `unchanged`."""

    path: Path
    outcome: str


# --------------------------------------------------------------------------- what gets installed


def hook_command(db: str | None, program: str = "sessionwatch") -> str:
    """The shell command of the hook handler."""
    words = [program, "claude-code", "hook", *(["--db", db] if db else [])]
    return shlex.join(words)


def hook_handler(db: str | None, program: str = "sessionwatch") -> dict[str, JsonValue]:
    """One `command` hook handler running the hook."""
    return {"type": "command", "command": hook_command(db, program), "timeout": HOOK_TIMEOUT_S}


def server_entry(db: str | None, program: str = "sessionwatch") -> dict[str, JsonValue]:
    """The `.mcp.json` entry: a stdio server for the session Claude Code starts it in."""
    return {
        "type": "stdio",
        "command": program,
        "args": ["claude-code", "mcp", *(["--db", db] if db else [])],
    }


def is_our_handler(handler: object) -> bool:
    """Whether a hook handler runs `sessionwatch claude-code hook` (whatever the options or path)."""
    if not isinstance(handler, Mapping) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    return len(words) >= 3 and Path(words[0]).stem == "sessionwatch" and words[1:3] == ["claude-code", "hook"]  # noqa: PLR2004


# ------------------------------------------------------------------------------- JSON text spans


@dataclass(frozen=True)
class Span:
    """Where one JSON value sits in the text (`start` to `end`), and its members or elements."""

    start: int
    end: int
    value: JsonValue
    members: tuple[tuple[str, Span], ...] = ()
    elements: tuple[Span, ...] = ()

    def member(self, key: str) -> Span | None:
        """The last member named `key` (the one a JSON reader keeps), or None."""
        found = [span for name, span in self.members if name == key]
        return found[-1] if found else None


_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def parse_spans(text: str) -> Span:
    """The document's root value with the spans of every nested value (raises `ValueError`)."""
    span = _value(text, _skip(text, 0))
    if _skip(text, span.end) != len(text):
        raise ValueError(f"extra data at character {_skip(text, span.end)}")
    return span


def _value(text: str, at: int) -> Span:
    if text.startswith("{", at):
        return _object(text, at)
    if text.startswith("[", at):
        return _array(text, at)
    value, end = _DECODER.raw_decode(text, at)
    return Span(at, end, value)


def _object(text: str, start: int) -> Span:
    members: list[tuple[str, Span]] = []
    at = _skip(text, start + 1)
    if text.startswith("}", at):
        return Span(start, at + 1, {}, ())
    while True:
        if not text.startswith('"', at):
            raise ValueError(f"expected a member name at character {at}")
        name, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if not text.startswith(":", at):
            raise ValueError(f"expected ':' at character {at}")
        member = _value(text, _skip(text, at + 1))
        members.append((name, member))
        at = _skip(text, member.end)
        if text.startswith("}", at):
            value = {name: span.value for name, span in members}
            return Span(start, at + 1, value, tuple(members))
        if not text.startswith(",", at):
            raise ValueError(f"expected ',' or '}}' at character {at}")
        at = _skip(text, at + 1)


def _array(text: str, start: int) -> Span:
    elements: list[Span] = []
    at = _skip(text, start + 1)
    if text.startswith("]", at):
        return Span(start, at + 1, [], elements=())
    while True:
        element = _value(text, at)
        elements.append(element)
        at = _skip(text, element.end)
        if text.startswith("]", at):
            return Span(start, at + 1, [e.value for e in elements], elements=tuple(elements))
        if not text.startswith(",", at):
            raise ValueError(f"expected ',' or ']' at character {at}")
        at = _skip(text, at + 1)


# ----------------------------------------------------------------------------------- text edits


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` with `new`."""

    start: int
    end: int
    new: str

    def apply(self, text: str) -> str:
        """The text with this edit made."""
        return text[: self.start] + self.new + text[self.end :]


@dataclass(frozen=True)
class Style:
    """The file's indent unit and line ending, which added text follows."""

    unit: str
    newline: str

    @classmethod
    def of(cls, text: str) -> Style:
        """The first indented line's indent (two spaces when none), and CRLF when the file uses it."""
        newline = "\r\n" if "\r\n" in text else "\n"
        for line in text.splitlines():
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            if indent and line.strip():
                return cls(indent, newline)
        return cls("  ", newline)


def _line_indent(text: str, at: int) -> str:
    """The indentation of the line `at` is on."""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _render(value: JsonValue, indent: str, style: Style, *, inline: bool) -> str:
    """`value` as JSON, indented for a place whose line is indented by `indent`."""
    if inline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    lines = json.dumps(value, ensure_ascii=False, indent=1).split("\n")
    rendered = [_reindent(line, style.unit) for line in lines]
    return (style.newline + indent).join(rendered)


def _reindent(line: str, unit: str) -> str:
    depth = len(line) - len(line.lstrip(" "))
    return unit * depth + line.lstrip(" ")


def _is_inline(text: str, container: Span) -> bool:
    """Whether added items stay on the container's line.

    A container on one line that holds something keeps them there; an empty one does when the
    whole file is one line (and it is not the file's root object, which gets lines of its own).
    """
    if "\n" in text[container.start : container.end]:
        return False
    if container.members or container.elements:
        return True
    return "\n" not in text.strip() and container.start != _skip(text, 0)


def insert(text: str, container: Span, item: str | None, value: JsonValue, style: Style) -> Edit:
    """Add a member `item` (an object) or an element (`item` None, an array) at the container's end."""
    inline = _is_inline(text, container)
    children = [span for _, span in container.members] if item is not None else list(container.elements)
    outer = _line_indent(text, container.start)
    inner = outer + style.unit
    if children and _line_indent(text, children[-1].start) != outer:
        inner = _line_indent(text, children[-1].start)  # the siblings' indent
    head = f"{json.dumps(item, ensure_ascii=False)}: " if item is not None else ""
    body = head + _render(value, inner, style, inline=inline)
    if children:
        gap = " " if inline else style.newline + inner
        return Edit(children[-1].end, children[-1].end, f",{gap}{body}")
    if inline:
        return Edit(container.start + 1, container.end - 1, body)
    return Edit(container.start + 1, container.end - 1, f"{style.newline}{inner}{body}{style.newline}{outer}")


def replace(text: str, span: Span, value: JsonValue, style: Style) -> Edit:
    """Put `value` where `span` is, on one line when the value it replaces was on one line."""
    inline = "\n" not in text[span.start : span.end]
    return Edit(span.start, span.end, _render(value, _line_indent(text, span.start), style, inline=inline))


def remove(array: Span, index: int) -> Edit:
    """Take element `index` out of `array`, with the comma and spacing that separated it."""
    elements = array.elements
    if len(elements) == 1:
        return Edit(array.start + 1, array.end - 1, "")
    if index == 0:
        return Edit(elements[0].start, elements[1].start, "")
    return Edit(elements[index - 1].end, elements[index].end, "")


# ------------------------------------------------------------------------------------- planning


def settings_edit(text: str, handler: dict[str, JsonValue], style: Style) -> Edit | None:
    """The next edit that brings `.claude/settings.json` closer to one handler per event, or None."""
    root = _root(text, SETTINGS_FILE)
    hooks = root.member("hooks")
    if hooks is None:
        return insert(text, root, "hooks", {event: [{"hooks": [handler]}] for event in EVENTS}, style)
    _expect(hooks, dict, f"{SETTINGS_FILE}: 'hooks' must be an object")
    for event in EVENTS:
        groups = hooks.member(event)
        if groups is None:
            return insert(text, hooks, event, [{"hooks": [handler]}], style)
        _expect(groups, list, f"{SETTINGS_FILE}: 'hooks.{event}' must be a list")
        edit = _event_edit(text, groups, handler, style)
        if edit is not None:
            return edit
    return None


def _event_edit(text: str, groups: Span, handler: dict[str, JsonValue], style: Style) -> Edit | None:
    ours: list[tuple[int, Span, int]] = []  # (group index, the group's handler list, handler index)
    for g, group in enumerate(groups.elements):
        handlers = group.member("hooks") if isinstance(group.value, dict) else None
        if handlers is None or not isinstance(handlers.value, list):
            continue
        ours += [(g, handlers, h) for h, item in enumerate(handlers.elements) if is_our_handler(item.value)]
    if not ours:
        return insert(text, groups, None, {"hooks": [handler]}, style)
    if len(ours) > 1:  # keep the first copy, take the last one out
        g, handlers, h = ours[-1]
        return remove(groups, g) if len(handlers.elements) == 1 else remove(handlers, h)
    _, handlers, h = ours[0]
    if handlers.elements[h].value != handler:
        return replace(text, handlers.elements[h], handler, style)
    return None


def mcp_edit(text: str, entry: dict[str, JsonValue], style: Style) -> Edit | None:
    """The next edit that puts the `sessionwatch` server into `.mcp.json`, or None."""
    root = _root(text, MCP_FILE)
    servers = root.member("mcpServers")
    if servers is None:
        return insert(text, root, "mcpServers", {SERVER_NAME: entry}, style)
    _expect(servers, dict, f"{MCP_FILE}: 'mcpServers' must be an object")
    ours = servers.member(SERVER_NAME)
    if ours is None:
        return insert(text, servers, SERVER_NAME, entry, style)
    return None if ours.value == entry else replace(text, ours, entry, style)


def _root(text: str, name: Path) -> Span:
    try:
        root = parse_spans(text)
    except ValueError as exc:
        raise InstallError(f"{name}: not valid JSON ({exc}); nothing was written") from None
    _expect(root, dict, f"{name}: must hold a JSON object")
    return root


def _expect(span: Span, kind: type, message: str) -> None:
    if not isinstance(span.value, kind):
        raise InstallError(f"{message}; nothing was written")


def edited(text: str, plan: Callable[[str, Style], Edit | None]) -> str:
    """The text once every planned edit is made (each edit is planned on the text the last one left)."""
    style = Style.of(text)
    for _ in range(64):  # each edit fixes one event or copy; a file needs only a few
        edit = plan(text, style)
        if edit is None:
            return text
        text = edit.apply(text)
    raise InstallError("the install did not settle after 64 edits; nothing was written")


# --------------------------------------------------------------------------------------- install


def install(project: Path, *, db: str | None, program: str = "sessionwatch") -> list[Installed]:
    """Add the hooks and the MCP server to `project`, idempotently; both files checked before any write."""
    handler, entry = hook_handler(db, program), server_entry(db, program)
    planned: list[tuple[Path, str | None, str]] = []
    for relative, plan, fresh in (
        (
            SETTINGS_FILE,
            lambda t, s: settings_edit(t, handler, s),
            {"hooks": {e: [{"hooks": [handler]}] for e in EVENTS}},
        ),
        (MCP_FILE, lambda t, s: mcp_edit(t, entry, s), {"mcpServers": {SERVER_NAME: entry}}),
    ):
        path = project / relative
        old = _read(path, relative)
        if old is None:
            planned.append((path, None, json.dumps(fresh, ensure_ascii=False, indent=2) + "\n"))
            continue
        new = edited(old if old.strip() else "{}", plan)
        planned.append((path, old, new))
    done = []
    for path, old, new in planned:
        if old == new:
            done.append(Installed(path, "unchanged"))
            continue
        write_atomically(path, new)
        done.append(Installed(path, "created" if old is None else "updated"))
    return done


def _read(path: Path, name: Path) -> str | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"{name}: cannot be read ({exc.strerror or exc}); nothing was written") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InstallError(f"{name}: not UTF-8 text; nothing was written") from None


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file next to `path`, flush it to disk, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else _new_file_mode()
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        Path(temporary).chmod(mode)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _new_file_mode() -> int:
    """What `open()` would give a new file: read-write for all, less the process's umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def describe(results: Sequence[Installed], project: Path) -> list[str]:
    """One line per file: what happened to it, its path relative to the project."""
    lines = []
    for result in results:
        try:
            shown = result.path.relative_to(project)
        except ValueError:
            shown = result.path
        lines.append(f"{result.outcome}: {shown}")
    return lines
