"""`sessionwatch codex install`: hook and MCP server into a project's `.codex/`, their trust into Codex's.

Codex 0.171 reads a trusted project's `.codex/hooks.json` (the same shape as Claude Code's hooks)
and `.codex/config.toml` (`[mcp_servers.NAME]`), and runs a hook only once a person trusted it: it
records that in the user's `config.toml` (in `$CODEX_HOME`, else `~/.codex`), never in a
project's, as `[hooks.state."<hooks.json path>:<event in snake case>:<group>:<handler>"]` with
`trusted_hash = "sha256:<hex>"`, the SHA-256 of the compact, key-sorted JSON of
`{"event_name": <event>, "hooks": [{"async": false, "command": ..., "timeout": ..., "type":
"command"}]}`. The install writes those entries for the handlers it adds, exactly as Codex computes
them, so the hooks run without asking; a person who changes a handler makes Codex ask again.
`SessionEnd`'s timeout is written as 3 seconds, the most Codex allows it (and hashes), and its
handler runs the hook in the background of Codex's shell (`DETACHED`): Codex kills a `SessionEnd`
handler still running after 3 seconds, and a Python process can take longer than that only to start
on a busy machine, while `SessionEnd` can be the only hook that reads a session's last act.

Every file is edited in its text: `hooks.json` with the span edits of the Claude Code installer
(`claude_code_install`), the TOML files one whole table at a time (`toml_tables`); every byte not
added or replaced stays, a file already holding this installation is not written, and all three
files are checked before any is written (a file that is not JSON or TOML, or whose entries have the
wrong type, stops the install naming it). A hook handler is sessionwatch's when its command runs
`sessionwatch codex hook`; each event keeps exactly one. The MCP server is `[mcp_servers.sessionwatch]`,
with `SESSIONWATCH_URL` passed through (Codex starts servers with a bare environment).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sessionwatch.integrations.claude_code_install import (
    Edit,
    Installed,
    InstallError,
    Span,
    Style,
    edited,
    insert,
    parse_spans,
    remove,
    replace,
    write_atomically,
)
from sessionwatch.integrations.codex import EVENTS
from sessionwatch.integrations.toml_tables import TableError, TomlValue, parse, set_table

SERVER_NAME = "sessionwatch"
HOOK_TIMEOUT_S = 10
"""Seconds Codex waits for the hook (it opens the store and answers in well under one)."""
SESSION_END_TIMEOUT_S = 3
"""Codex caps a SessionEnd hook at 3 seconds, and hashes the capped value."""
DETACHED = ("exec 3<&0; ", " <&3 3<&- >/dev/null 2>&1 &")
"""What goes before and after the `SessionEnd` handler's command: the hook runs as a background job
of Codex's shell, so the shell returns at once and Codex neither waits for the hook nor kills it at
its 3-second cap. The hook input reaches it through descriptor 3 (a shell gives a background job
/dev/null as its stdin, dash even before its own `<&0`), and it holds none of Codex's
pipes, which Codex would otherwise wait on. Nothing is lost: Codex reads no output of a
`SessionEnd` hook."""
DETACHED_EVENTS = frozenset({"SessionEnd"})
"""The events whose handler runs detached: those Codex caps below a hook's start on a busy machine."""
STORE_VARIABLE = "SESSIONWATCH_URL"

HOOKS_FILE = Path(".codex") / "hooks.json"
PROJECT_CONFIG = Path(".codex") / "config.toml"
USER_CONFIG = Path("config.toml")
HOME_VARIABLE = "CODEX_HOME"

JsonValue = object


@dataclass(frozen=True)
class _Planned:
    path: Path
    old: str | None
    new: str


# --------------------------------------------------------------------------- what gets installed


def hook_command(db: str | None, program: str = "sessionwatch", *, detached: bool = False) -> str:
    """The shell command of the hook handler (`detached`: run in the background, see `DETACHED`)."""
    command = shlex.join([program, "codex", "hook", *(["--db", db] if db else [])])
    before, after = DETACHED
    return f"{before}{command}{after}" if detached else command


def hook_handler(event: str, db: str | None, program: str = "sessionwatch") -> dict[str, JsonValue]:
    """One `command` hook handler running the hook, with the timeout Codex keeps for the event."""
    timeout = SESSION_END_TIMEOUT_S if event == "SessionEnd" else HOOK_TIMEOUT_S
    command = hook_command(db, program, detached=event in DETACHED_EVENTS)
    return {"type": "command", "command": command, "timeout": timeout}


def server_table(db: str | None, program: str = "sessionwatch") -> dict[str, TomlValue]:
    """The `[mcp_servers.sessionwatch]` table: a stdio server for the project's Codex sessions."""
    return {
        "command": program,
        "args": ["codex", "mcp", *(["--db", db] if db else [])],
        "env_vars": [STORE_VARIABLE],
    }


def is_our_handler(handler: object) -> bool:
    """Whether a hook handler runs `sessionwatch codex hook` (any options or path, detached or not)."""
    if not isinstance(handler, Mapping) or not isinstance(handler.get("command"), str):
        return False
    command: str = handler["command"]
    try:
        words = shlex.split(command.removeprefix(DETACHED[0]))
    except ValueError:
        return False
    return len(words) >= 3 and Path(words[0]).stem == "sessionwatch" and words[1:3] == ["codex", "hook"]  # noqa: PLR2004


def snake_case(event: str) -> str:
    """`UserPromptSubmit` -> `user_prompt_submit`: how Codex names an event in a trust entry."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_hash(event: str, handler: Mapping[str, JsonValue]) -> str:
    """The `trusted_hash` Codex records when a person trusts this handler of this event."""
    entry = {"async": False, **{key: handler[key] for key in ("command", "timeout", "type")}}
    identity = {"event_name": snake_case(event), "hooks": [entry]}
    canonical = json.dumps(identity, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def trust_key(hooks_path: Path, event: str, group: int, handler: int) -> str:
    """The name of the `hooks.state` entry of one handler: its file, event, group and place."""
    return f"{hooks_path}:{snake_case(event)}:{group}:{handler}"


def codex_home(environ: Mapping[str, str]) -> Path:
    """`$CODEX_HOME`, else `~/.codex`: where Codex keeps the user's config.toml."""
    configured = environ.get(HOME_VARIABLE, "").strip()
    return Path(configured) if configured else Path.home() / ".codex"


# ---------------------------------------------------------------------------------- hooks.json


def hooks_edit(text: str, handlers: Mapping[str, dict[str, JsonValue]], style: Style) -> Edit | None:
    """The next edit that brings `hooks.json` closer to one handler of ours per event, or None."""
    root = _json_root(text)
    hooks = root.member("hooks")
    if hooks is None:
        fresh = {event: [{"hooks": [handler]}] for event, handler in handlers.items()}
        return insert(text, root, "hooks", fresh, style)
    _expect(hooks, dict, "'hooks' must be an object")
    for event, handler in handlers.items():
        groups = hooks.member(event)
        if groups is None:
            return insert(text, hooks, event, [{"hooks": [handler]}], style)
        _expect(groups, list, f"'hooks.{event}' must be a list")
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


def places(text: str) -> dict[str, tuple[int, int]]:
    """Where our handler of each event is: its group's index and its index in the group."""
    root = json.loads(text)
    found: dict[str, tuple[int, int]] = {}
    for event, groups in root.get("hooks", {}).items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if is_our_handler(handler) and event not in found:
                    found[event] = (g, h)
    return found


def _json_root(text: str) -> Span:
    try:
        root = parse_spans(text)
    except ValueError as exc:
        raise InstallError(f"{HOOKS_FILE}: not valid JSON ({exc}); nothing was written") from None
    _expect(root, dict, "must hold a JSON object")
    return root


def _expect(span: Span, kind: type, message: str) -> None:
    if not isinstance(span.value, kind):
        raise InstallError(f"{HOOKS_FILE}: {message}; nothing was written")


# ------------------------------------------------------------------------------------- install


def install(project: Path, *, home: Path, db: str | None, program: str = "sessionwatch") -> list[Installed]:
    """Add the hooks, the server and the hooks' trust, idempotently; every file checked before any write."""
    handlers: dict[str, dict[str, JsonValue]] = {event: hook_handler(event, db, program) for event in EVENTS}
    hooks_path = project / HOOKS_FILE
    old_hooks = _read(hooks_path, HOOKS_FILE)
    if old_hooks is None:
        fresh = {"hooks": {event: [{"hooks": [handler]}] for event, handler in handlers.items()}}
        new_hooks = json.dumps(fresh, ensure_ascii=False, indent=2) + "\n"
    else:
        new_hooks = edited(old_hooks if old_hooks.strip() else "{}", lambda t, s: hooks_edit(t, handlers, s))
    server = (("mcp_servers", SERVER_NAME), server_table(db, program))
    trusted = project.resolve() / HOOKS_FILE  # the path Codex names the file by (its working directory's)
    entries = [
        (
            ("hooks", "state", trust_key(trusted, event, g, h)),
            {"trusted_hash": trust_hash(event, handlers[event])},
        )
        for event, (g, h) in places(new_hooks).items()
        if event in handlers
    ]
    planned = [
        _Planned(hooks_path, old_hooks, new_hooks),
        _toml(project / PROJECT_CONFIG, PROJECT_CONFIG, [server]),
        _toml(home / USER_CONFIG, home / USER_CONFIG, entries),
    ]
    done = []
    for item in planned:
        if item.old == item.new:
            done.append(Installed(item.path, "unchanged"))
            continue
        write_atomically(item.path, item.new)
        done.append(Installed(item.path, "created" if item.old is None else "updated"))
    return done


def _toml(
    path: Path, name: Path, tables: Sequence[tuple[tuple[str, ...], Mapping[str, TomlValue]]]
) -> _Planned:
    old = _read(path, name)
    text = old or ""
    try:
        for table, values in tables:
            text = set_table(text, table, values)
    except TableError as exc:
        raise InstallError(f"{name}: {exc}; nothing was written") from None
    return _Planned(path, old, text)


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


def project_trusted(project: Path, home: Path) -> bool:
    """Whether Codex trusts the project (it reads a project's `.codex/` only then)."""
    try:
        document = parse((home / USER_CONFIG).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, TableError):
        return False
    projects = document.get("projects")
    entry = projects.get(str(project.resolve())) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def describe(results: Sequence[Installed], project: Path, home: Path, *, trusted: bool) -> list[str]:
    """One line per file (relative to the project where it is inside), and a note when Codex won't read it."""
    lines = []
    for result in results:
        try:
            shown: Path = result.path.relative_to(project)
        except ValueError:
            shown = result.path
        lines.append(f"{result.outcome}: {shown}")
    if not trusted:
        lines.append(
            f"note: Codex reads {HOOKS_FILE.parent}/ of a trusted project only: trust {project.resolve()} "
            'when Codex asks (or set trust_level = "trusted" for it under [projects] in '
            f"{home / USER_CONFIG})"
        )
    return lines
