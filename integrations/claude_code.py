"""Claude Code: one command hook for four events, the session key scheme, and the MCP server's key.

Claude Code runs `sessionwatch claude-code hook` with a JSON object on stdin (`session_id`, `cwd`,
`transcript_path`, `hook_event_name`, `source`, `reason`, `prompt_id`, ...). The hook records a
session's human turns from its transcript, never from the prompt hook's input, which does not say who
wrote the prompt (a cron prompt reaches it as plain text) and misses prompts that fire no prompt hook
(typed while a tool runs, `!` shell mode, `/context`): at each event it reads the transcript on from
where it stopped, with the transcript provider's own reader (`claude_code_follow`).

- `SessionStart` (a start, a resume, a compaction, a `/clear`) registers the session under its key,
  links it to its transcript (a `/clear` continues the session it ended, under its key), reads on,
  and tells the session its key and the sessions it watches (the watch prompt).
- `UserPromptSubmit` reads on (the prompt itself is written after the hook) and hands the session
  its pending notices as `additionalContext`, acknowledging exactly those it handed over.
- `Stop` (a turn ended) and `SessionEnd` read on (`SessionEnd` until the transcript stops growing,
  at most a second: Claude Code writes an `/exit` while its end hooks run); a `SessionEnd` of a
  `/clear` parks the session for the one that continues it. Both leave alone a session the hook
  never met (`claude mcp list` ends one that never started).

A hook never blocks or fails a prompt: `run_hook` turns any failure (bad JSON, a missing field, a
broken store) into no output at all and one line for the log; the caller exits 0.

Key scheme: `agent:<project>:claude-code:<session_id>`. The agent id names the project: the last
part of the project directory's path, reduced to `[a-z0-9._-]` (at most 40 characters), a `-`, and
the first 8 hex digits of the SHA-256 of the absolute path, so two checkouts called `app` differ.
The project directory is `$CLAUDE_PROJECT_DIR` (Claude Code sets it for hooks and MCP servers), else
the hook input's `cwd`. A session continued by `/clear` keeps the key of the session it continues.
No Claude Code package is needed: this module only reads JSON and the environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

import sessionwatch
from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.adapters.stores.urls import parse_url
from sessionwatch.domain.keys import check_key, resolve_identity
from sessionwatch.domain.text import has_control_character
from sessionwatch.integrations import claude_code_follow as follow
from sessionwatch.integrations.claude_code_keys import (
    HOST_PART,
    PROJECT_DIR_VARIABLE,
    SESSION_ID_VARIABLE,
    STORE_FILE,
    STORE_VARIABLE,
    HookInputError,
    checked_session_id,
    natural_key,
    project_agent_id,
    project_dir,
    store_url,
    transcript_of,
)
from sessionwatch.projections.models import Notice

__all__ = [  # the key scheme and the input's fields live in `claude_code_keys` (standard library only)
    "CONTEXT_LIMIT",
    "EVENTS",
    "HOST_PART",
    "PROJECT_DIR_VARIABLE",
    "SESSION_ID_VARIABLE",
    "STORE_FILE",
    "STORE_VARIABLE",
    "HookEvent",
    "HookInputError",
    "handle_hook",
    "notice_context",
    "parse_hook_input",
    "project_agent_id",
    "project_dir",
    "resolve_key",
    "run_hook",
    "served_key",
    "server_session_key",
    "session_context",
    "session_key",
    "store_url",
    "within_limit",
]

CONTEXT_LIMIT = 9000
"""At most this many characters of notices go into one prompt's context (Claude Code shows a long
`additionalContext` as a short preview only); the notices left out stay pending for the next prompt."""

HookEvent = Literal["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]
EVENTS: tuple[HookEvent, ...] = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
"""The hook events `install` adds the hook for, and the only ones the hook acts on.

Claude Code 2.1 fires `Stop` after each turn (also one started by `!` shell mode or absorbing a
prompt typed while a tool ran) and `SessionEnd` at the end (after `/context` or `/usage` too), by
when the transcript holds what the prompt hook never saw."""


# ------------------------------------------------------------------------------------- key scheme


def session_key(project_dir: str | os.PathLike[str], session_id: object) -> str:
    """The key of a Claude Code session: `agent:<project agent id>:claude-code:<session_id>`."""
    checked = checked_session_id(session_id, "session_id")
    return check_key(natural_key(project_agent_id(project_dir), checked))


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
    session_id = checked_session_id(raw, f"${SESSION_ID_VARIABLE}")
    where = environ.get(PROJECT_DIR_VARIABLE, "").strip() or str(Path.cwd())
    return session_key(where, session_id), session_id


def resolve_key(watch: SessionWatch, natural: str, session_id: str) -> str:
    """The key Claude Code's session `session_id` (its own key: `natural`) goes by in the store.

    Its own, unless it continues another session (`/clear`): then the key of the session whose
    link follows its transcript.
    """
    if watch.registry_entry(natural) is not None:
        return natural
    return follow.following_key(watch, resolve_identity(natural).agent_id, session_id) or natural


def served_key(db: str | None, environ: Mapping[str, str]) -> tuple[str | None, str]:
    """The store URL and the key an MCP server serves (`resolve_key`); reads the store, creates none.

    Claude Code does not restart a server at `/clear`; one started after it (reconnected) gets the
    new session id, which goes by the key of the session it continues.
    """
    natural, session_id = server_session_key(environ)
    url = store_url(db, environ)
    if not _store_exists(url):
        return url, natural
    with sessionwatch.open(url, sweep_on_open=False, cross_process_wakes=False) as watch:
        return url, resolve_key(watch, natural, session_id)


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
    hook_input: Mapping[str, object],
    *,
    db: str | None,
    environ: Mapping[str, str],
    settle: float = follow.SETTLE_S,
) -> dict[str, object] | None:
    """What one hook event does; the JSON to print, or None to print nothing. Raises on bad input.

    `settle`: how long a `SessionEnd` waits at most for the transcript's last lines (0: not at all).
    """
    event = hook_input.get("hook_event_name")
    if not isinstance(event, str):
        raise HookInputError("hook_event_name", "must be a string")
    if event not in EVENTS:
        return None  # an event this hook is not installed for: nothing to do
    project = project_dir(hook_input, environ)
    session_id = checked_session_id(hook_input.get("session_id"), "session_id")
    transcript = transcript_of(hook_input)
    url = store_url(db, environ)
    if event in ("Stop", "SessionEnd") and not _store_exists(url):
        return None  # no session was ever registered there
    with sessionwatch.open(url, sweep_on_open=False, cross_process_wakes=False) as watch:
        session = _Session(watch, project, session_id, transcript, settle=settle)
        match event:
            case "SessionStart":
                key = session.start(hook_input.get("source"), _prompt_id(hook_input))
                told = [session_context(key, watched=watch.is_watched(key)), watch.watch_prompt(key)]
                context = "\n\n".join(filter(None, told))
                return _output("SessionStart", context)
            case "UserPromptSubmit":
                return session.prompted()
            case "Stop":
                session.turn_ended()
                return None
            case _:
                session.ended(hook_input.get("reason"), _prompt_id(hook_input))
                return None


class _Session:
    """One hook run's Claude Code session: its key (across `/clear`) and its transcript."""

    def __init__(
        self, watch: SessionWatch, project: Path, session_id: str, transcript: Path | None, *, settle: float
    ) -> None:
        self.watch = watch
        self.settle = settle
        self.agent_id = project_agent_id(project)
        self.session_id = session_id
        self.transcript = transcript
        self.key = resolve_key(watch, session_key(project, session_id), session_id)

    def start(self, source: object, prompt_id: str | None) -> str:
        """Register (or continue) the session, follow its transcript, read on; its key."""
        if source == "clear" and prompt_id is not None:
            self.key = follow.continued_key(self.watch, self.agent_id, prompt_id) or self.key
        self.watch.upsert_session(self.key, session_id=self.session_id)
        self._read(from_start=follow.reads_from_start(source))
        return self.key

    def prompted(self) -> dict[str, object] | None:
        """Read on, then hand over (and acknowledge) the session's pending notices."""
        if self.watch.registry_entry(self.key) is None:  # the hook was installed mid-session
            self.watch.upsert_session(self.key, session_id=self.session_id)
        self._read(from_start=False)
        shown = within_limit(self.watch.pending_notices(self.key))
        if not shown:
            return None
        self.watch.acknowledge(self.key, shown)
        return _output("UserPromptSubmit", notice_context(shown))

    def turn_ended(self) -> None:
        """Read on: the turn's prompt, and what fired no prompt hook (shell mode, an absorbed prompt)."""
        if self._followed():
            follow.read_transcript(self.watch, self.key)

    def ended(self, reason: object, prompt_id: str | None) -> None:
        """Read on to the transcript's last line; a `/clear` parks the link for the session it starts."""
        if not self._followed():
            return
        follow.read_transcript(self.watch, self.key, settle=self.settle)
        current = self.watch.upstream_link(self.key)
        if reason == "clear" and prompt_id is not None and current is not None:
            follow.park_for_continuation(self.watch, self.key, current, prompt_id)

    def _followed(self) -> bool:
        """Whether the hook follows this session's transcript (not one never met, nor one continued since)."""
        link = self.watch.upstream_link(self.key)
        return link is not None and follow.follows(link, self.agent_id, self.session_id)

    def _read(self, *, from_start: bool) -> None:
        if self.transcript is None:
            return
        follow.link_transcript(
            self.watch, self.key, self.agent_id, self.session_id, self.transcript, from_start=from_start
        )
        follow.read_transcript(self.watch, self.key)


def _prompt_id(hook_input: Mapping[str, object]) -> str | None:
    """The input's `prompt_id` (what links a `/clear`'s end and start), or None."""
    prompt_id = hook_input.get("prompt_id")
    if isinstance(prompt_id, str) and prompt_id.strip() and not has_control_character(prompt_id):
        return prompt_id.strip()
    return None


def _store_exists(url: str | None) -> bool:
    """False only for a SQLite file that is not there (reading it would create it)."""
    parsed = parse_url(url)
    return parsed.scheme != "sqlite" or Path(parsed.path).exists()


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
