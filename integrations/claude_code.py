"""Claude Code: one command hook for two events, the session key scheme, and the MCP server's key.

Claude Code runs `sessionwatch claude-code hook` with a JSON object on stdin (`session_id`, `cwd`,
`hook_event_name`, `prompt`, `source`, ...). `SessionStart` (a start, a resume, a compaction)
registers the session under its key and tells it that key and the sessions it watches (the watch
prompt, so the model knows it can read them); `UserPromptSubmit` records a `human_direct_message`
when a person typed the prompt (the rule is `sessionwatch.domain.prompt_origin`'s, the one the
transcript provider uses) and hands the session its pending notices as `additionalContext`,
acknowledging exactly those it handed over.

A hook never blocks or fails a prompt: `run_hook` turns any failure (bad JSON, a missing field, a
broken store) into no output at all and one line for the log; the caller exits 0.

Key scheme: `agent:<project>:claude-code:<session_id>`. The agent id names the project: the last
part of the project directory's path, reduced to `[a-z0-9._-]` (at most 40 characters), a `-`, and
the first 8 hex digits of the SHA-256 of the absolute path, so two checkouts called `app` differ.
The project directory is `$CLAUDE_PROJECT_DIR` (Claude Code sets it for hooks and MCP servers), else
the hook input's `cwd`. No Claude Code package is needed: this module only reads JSON and the
environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

import sessionwatch
from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.domain.keys import check_key
from sessionwatch.domain.prompt_origin import classify_claude_code_hook_prompt
from sessionwatch.domain.text import has_control_character
from sessionwatch.projections.models import Notice

CHANNEL = "claude-code"
"""The channel of the human messages the hook records (`human message via claude-code`)."""

HOST_PART = "claude-code"
"""The key part after the agent id that says the session is a Claude Code session."""

PROJECT_DIR_VARIABLE = "CLAUDE_PROJECT_DIR"
SESSION_ID_VARIABLE = "CLAUDE_CODE_SESSION_ID"
STORE_VARIABLE = "SESSIONWATCH_URL"
STORE_FILE = "sessionwatch.db"
"""The store without `--db` or `$SESSIONWATCH_URL`: this file in the project directory."""

CONTEXT_LIMIT = 9000
"""At most this many characters of notices go into one prompt's context (Claude Code shows a long
`additionalContext` as a short preview only); the notices left out stay pending for the next prompt."""

_SLUG_LENGTH = 40
_HASH_DIGITS = 8
_SESSION_ID_LENGTH = 200
_NOT_SLUG = re.compile(r"[^a-z0-9._-]+")

HookEvent = Literal["SessionStart", "UserPromptSubmit"]
EVENTS: tuple[HookEvent, ...] = ("SessionStart", "UserPromptSubmit")
"""The hook events `install` adds the hook for, and the only ones the hook acts on."""


class HookInputError(ValueError):
    """A hook input Claude Code did not send as expected; names the field."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


# ------------------------------------------------------------------------------------- key scheme


def project_agent_id(project_dir: str | os.PathLike[str]) -> str:
    """The agent id of a project: `<name>-<8 hex digits of the absolute path's SHA-256>`."""
    path = Path(project_dir).expanduser().absolute()
    name = _NOT_SLUG.sub("-", path.name.lower()).strip("-.")[:_SLUG_LENGTH].strip("-.") or "project"
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    return f"{name}-{digest}"


def session_key(project_dir: str | os.PathLike[str], session_id: object) -> str:
    """The key of a Claude Code session: `agent:<project agent id>:claude-code:<session_id>`."""
    checked = _session_id(session_id, "session_id")
    return check_key(f"agent:{project_agent_id(project_dir)}:{HOST_PART}:{checked}")


def _session_id(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise HookInputError(field, "must be a non-empty string")
    if value != value.strip() or any(c.isspace() for c in value) or has_control_character(value):
        raise HookInputError(field, "must not contain spaces or control characters")
    if len(value) > _SESSION_ID_LENGTH:
        raise HookInputError(field, f"must be at most {_SESSION_ID_LENGTH} characters")
    return value


def project_dir(hook_input: Mapping[str, object], environ: Mapping[str, str]) -> Path:
    """`$CLAUDE_PROJECT_DIR`, else the input's `cwd` (an absolute path)."""
    configured = environ.get(PROJECT_DIR_VARIABLE, "").strip()
    if configured:
        return Path(configured)
    cwd = hook_input.get("cwd")
    if not isinstance(cwd, str) or not cwd.strip():
        raise HookInputError("cwd", f"must be a non-empty string when ${PROJECT_DIR_VARIABLE} is not set")
    if not Path(cwd).is_absolute():
        raise HookInputError("cwd", "must be an absolute path")
    return Path(cwd)


def store_url(db: str | None, environ: Mapping[str, str]) -> str | None:
    """`--db`, else `$SESSIONWATCH_URL`, else `sessionwatch.db` in `$CLAUDE_PROJECT_DIR` (None: neither)."""
    if db:
        return db
    if environ.get(STORE_VARIABLE):
        return environ[STORE_VARIABLE]
    configured = environ.get(PROJECT_DIR_VARIABLE, "").strip()
    return str(Path(configured) / STORE_FILE) if configured else None


def server_session_key(environ: Mapping[str, str]) -> tuple[str, str]:
    """The key (and Claude Code's session id) of the session an MCP server was started for.

    Claude Code passes `$CLAUDE_CODE_SESSION_ID` and `$CLAUDE_PROJECT_DIR` to the stdio MCP servers
    it starts; the project falls back to the working directory, as Claude Code starts servers there.
    """
    raw = environ.get(SESSION_ID_VARIABLE)
    if raw is None:
        raise HookInputError(
            f"${SESSION_ID_VARIABLE}",
            "is not set: Claude Code sets it for the MCP servers it starts; outside Claude Code run "
            "`sessionwatch mcp --session KEY` instead",
        )
    session_id = _session_id(raw, f"${SESSION_ID_VARIABLE}")
    where = environ.get(PROJECT_DIR_VARIABLE, "").strip() or str(Path.cwd())
    return session_key(where, session_id), session_id


def register_server_session(db: str | None, environ: Mapping[str, str]) -> tuple[str | None, str]:
    """Register the session an MCP server serves (it may start before `SessionStart` ran).

    Returns the store URL and the session's key, which `sessionwatch mcp` is then started with.
    """
    key, session_id = server_session_key(environ)
    url = store_url(db, environ)
    with sessionwatch.open(url, sweep_on_open=False, cross_process_wakes=False) as watch:
        watch.upsert_session(key, session_id=session_id)
    return url, key


# ------------------------------------------------------------------------------------------ hook


def parse_hook_input(text: str) -> dict[str, object]:
    """The hook's stdin as a JSON object."""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookInputError(
            "stdin", f"is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    if not isinstance(parsed, dict):
        raise HookInputError("stdin", f"must be a JSON object, not {type(parsed).__name__}")
    return parsed


def handle_hook(
    hook_input: Mapping[str, object], *, db: str | None, environ: Mapping[str, str]
) -> dict[str, object] | None:
    """What one hook event does; the JSON to print, or None to print nothing. Raises on bad input."""
    event = hook_input.get("hook_event_name")
    if not isinstance(event, str):
        raise HookInputError("hook_event_name", "must be a string")
    if event not in EVENTS:
        return None  # an event this hook is not installed for: nothing to do
    session_id = hook_input.get("session_id")
    key = session_key(project_dir(hook_input, environ), session_id)
    prompt = _prompt_of(hook_input) if event == "UserPromptSubmit" else None  # None: SessionStart
    with sessionwatch.open(store_url(db, environ), sweep_on_open=False, cross_process_wakes=False) as watch:
        if event == "SessionStart" or watch.registry_entry(key) is None:
            watch.upsert_session(key, session_id=str(session_id))
        if prompt is None:  # a session started, resumed or compacted: what it is, and what it watches
            told = [session_context(key, watched=watch.is_watched(key)), watch.watch_prompt(key)]
            return _output("SessionStart", "\n\n".join(filter(None, told)))
        context = _prompt_submitted(watch, key, prompt, hook_input)
    return None if context is None else _output("UserPromptSubmit", context)


def _prompt_of(hook_input: Mapping[str, object]) -> str:
    prompt = hook_input.get("prompt")
    if not isinstance(prompt, str):
        raise HookInputError("prompt", "must be a string")
    return prompt


def _prompt_submitted(
    watch: SessionWatch, key: str, prompt: str, hook_input: Mapping[str, object]
) -> str | None:
    """Record the prompt if a person typed it; hand over (and acknowledge) the pending notices."""
    if classify_claude_code_hook_prompt(prompt, hook_input).origin.is_human:
        watch.record_human_message(
            key, channel=CHANNEL, dedupe_key=_dedupe_key(hook_input), session_id=str(hook_input["session_id"])
        )
    shown = within_limit(watch.pending_notices(key))
    if not shown:
        return None
    watch.acknowledge(key, shown)
    return notice_context(shown)


def run_hook(
    stdin_text: str, *, db: str | None, environ: Mapping[str, str], log: Callable[[str], None]
) -> str:
    """The text to print on stdout for one hook run: empty on any failure, which `log` gets in one line."""
    event = "hook"
    try:
        hook_input = parse_hook_input(stdin_text)
        named = hook_input.get("hook_event_name")
        event = named if isinstance(named, str) and named else event
        output = handle_hook(hook_input, db=db, environ=environ)
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the prompt: every error is logged
        log(f"{event}: {type(exc).__name__}: {exc}; nothing was added to the session")
        return ""
    return "" if output is None else json.dumps(output, ensure_ascii=False) + "\n"


def _output(event: HookEvent, context: str) -> dict[str, object]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


def _dedupe_key(hook_input: Mapping[str, object]) -> str | None:
    """`claude-code:<prompt_id>` when Claude Code names the prompt, so a repeated hook records it once."""
    prompt_id = hook_input.get("prompt_id")
    if isinstance(prompt_id, str) and prompt_id.strip() and not has_control_character(prompt_id):
        return f"{HOST_PART}:{prompt_id.strip()}"
    return None


def session_context(key: str, *, watched: bool) -> str:
    """What a starting session is told: its key, and that another session watches it only when one does."""
    by_key = (
        "Another session watches this one by that key"
        if watched
        else "No other session watches this one; one can watch it by that key"
    )
    return (
        f"sessionwatch: this session's key is {key}. {by_key}; "
        "notices about sessions this one watches arrive with the next prompt."
    )


def within_limit(notices: list[Notice]) -> list[Notice]:
    """The first notices whose lines fit into `CONTEXT_LIMIT` characters (always at least one)."""
    shown: list[Notice] = []
    size = len(notice_context([]))
    for notice in notices:
        size += len(notice.text) + 3
        if shown and size > CONTEXT_LIMIT:
            break
        shown.append(notice)
    return shown


def notice_context(notices: list[Notice]) -> str:
    """The context a prompt gets: a heading and one line per changed session."""
    count = len(notices)
    heading = (
        f"sessionwatch: {count} watched session{'s' if count != 1 else ''} changed since this session looked:"
    )
    return "\n".join([heading, *(f"- {notice.text}" for notice in notices)])
