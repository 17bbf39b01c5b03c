"""Codex: one command hook for its lifecycle events, and the key scheme its sessions share with Claude Code.

Codex runs `sessionwatch codex hook` with a JSON object on stdin (`session_id`, `transcript_path`:
the session's rollout, `cwd`, `hook_event_name`, `prompt`, `source`, ...). Every run follows the
session's own rollout (`transcript_hook.follow_transcript`, with the Codex rollout provider): a
person's turns are recorded once, by the rule the provider reads rollouts with, when the next hook
runs after Codex wrote them (a prompt is in the rollout by the turn's `Stop`; a `!command`, a
`/compact` or a review by the next hook, at the latest `SessionEnd`). `SessionStart` registers the
session and tells it its key and what it watches; `UserPromptSubmit` hands the session its pending
notices as `additionalContext` (Codex gives the model hook context in the developer role) and
acknowledges exactly those. A sub-agent's hook input (it carries `agent_id`) names the parent's
session and the sub-agent's rollout: it follows the parent's rollout and hands over nothing.

Key scheme: `agent:<project>:codex:<session_id>`, the project agent id of Claude Code's scheme
(`claude_code.project_agent_id`) for the session's working directory (`cwd`: where Codex was
started), so Claude Code and Codex sessions of one project are one agent and see each other.

A hook never blocks or fails a turn: `run_hook` turns any failure into no output and one log line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

import sessionwatch
from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider
from sessionwatch.domain.keys import check_key
from sessionwatch.integrations.claude_code import (
    STORE_FILE,
    STORE_VARIABLE,
    HookInputError,
    notice_context,
    parse_hook_input,
    project_agent_id,
    session_context,
    within_limit,
)
from sessionwatch.integrations.claude_code_keys import checked_session_id
from sessionwatch.integrations.transcript_hook import Transcript, follow_transcript

HOST_PART = "codex"
"""The key part after the agent id that says the session is a Codex session (and the link's catalog)."""

HookEvent = Literal["SessionStart", "UserPromptSubmit", "Stop", "PostCompact", "SessionEnd"]
EVENTS: tuple[HookEvent, ...] = ("SessionStart", "UserPromptSubmit", "Stop", "PostCompact", "SessionEnd")
"""The events `install` adds the hook for: each follows the rollout; two answer the model."""

SUBAGENT_FIELD = "agent_id"
"""The input field that says a sub-agent's turn runs the hook (its `session_id` is the parent's)."""

_FIRST_LINE_LIMIT = 1_048_576
"""At most this many bytes of a rollout's first line are read to learn whose rollout it is."""


# ------------------------------------------------------------------------------------- key scheme


def session_key(project_dir: str | os.PathLike[str], session_id: object) -> str:
    """The key of a Codex session: `agent:<project agent id>:codex:<session_id>`."""
    checked = checked_session_id(session_id, "session_id")
    return check_key(f"agent:{project_agent_id(project_dir)}:{HOST_PART}:{checked}")


def project_dir(hook_input: Mapping[str, object]) -> Path:
    """The session's working directory (the input's `cwd`, an absolute path): where Codex was started."""
    cwd = hook_input.get("cwd")
    if not isinstance(cwd, str) or not cwd.strip():
        raise HookInputError("cwd", "must be a non-empty string")
    if not Path(cwd).is_absolute():
        raise HookInputError("cwd", "must be an absolute path")
    return Path(cwd)


def store_url(db: str | None, environ: Mapping[str, str], project: Path) -> str:
    """`--db`, else `$SESSIONWATCH_URL`, else `sessionwatch.db` in the project directory."""
    if db:
        return db
    if environ.get(STORE_VARIABLE):
        return environ[STORE_VARIABLE]
    return str(project / STORE_FILE)


def own_rollout(hook_input: Mapping[str, object], session_id: str) -> str | None:
    """The input's `transcript_path` when it is the session's own rollout, else None.

    A review's or a sub-agent's hook names the parent's session but its own rollout; a rollout is
    the session's when its first record (`session_meta`) carries the session's id.
    """
    path = hook_input.get("transcript_path")
    if not isinstance(path, str) or not path or not Path(path).is_absolute():
        return None
    try:
        with Path(path).open("rb") as rollout:
            first = rollout.readline(_FIRST_LINE_LIMIT)
        meta = json.loads(first)
    except (OSError, ValueError):
        return None
    payload = meta.get("payload") if isinstance(meta, dict) and meta.get("type") == "session_meta" else None
    return path if isinstance(payload, dict) and payload.get("id") == session_id else None


# ------------------------------------------------------------------------------------------ hook


def handle_hook(
    hook_input: Mapping[str, object], *, db: str | None, environ: Mapping[str, str]
) -> dict[str, object] | None:
    """What one hook event does; the JSON to print, or None to print nothing. Raises on bad input."""
    event = hook_input.get("hook_event_name")
    if not isinstance(event, str):
        raise HookInputError("hook_event_name", "must be a string")
    if event not in EVENTS:
        return None  # an event this hook is not installed for: nothing to do
    session_id = checked_session_id(hook_input.get("session_id"), "session_id")
    project = project_dir(hook_input)
    key = session_key(project, session_id)
    path = own_rollout(hook_input, session_id)
    transcript = None if path is None else Transcript(HOST_PART, session_id, path)
    url = store_url(db, environ, project)
    with sessionwatch.open(url, sweep_on_open=False, cross_process_wakes=False) as watch:
        if event == "SessionStart" or watch.registry_entry(key) is None:
            watch.upsert_session(key, session_id=session_id)
        follow_transcript(watch, key, transcript, JsonlTranscriptProvider.codex())
        if _another_threads_turn(hook_input, path):
            return None  # a sub-agent's or a review's turn: the session's notices wait for its own
        if event == "SessionStart":
            told = [session_context(key, watched=watch.is_watched(key)), watch.watch_prompt(key)]
            started = "\n\n".join(filter(None, told))
            return _output("SessionStart", started)
        if event == "UserPromptSubmit":
            notices = _hand_over(watch, key)
            return None if notices is None else _output("UserPromptSubmit", notices)
    return None


def _another_threads_turn(hook_input: Mapping[str, object], own: str | None) -> bool:
    """Whether the hook runs for a sub-agent's or a review's turn (it names another rollout)."""
    named = hook_input.get("transcript_path")
    return SUBAGENT_FIELD in hook_input or (isinstance(named, str) and bool(named) and own is None)


def _hand_over(watch: SessionWatch, key: str) -> str | None:
    """The session's pending notices as context, acknowledged (None when there are none)."""
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
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the turn: every error is logged
        log(f"{event}: {type(exc).__name__}: {exc}; nothing was added to the session")
        return ""
    return "" if output is None else json.dumps(output, ensure_ascii=False) + "\n"


def _output(event: HookEvent, context: str) -> dict[str, object]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
