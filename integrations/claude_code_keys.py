"""Claude Code's session key scheme, its store and its hook input fields: the standard library only.

Shared by the hook (`claude_code`) and its front end (`claude_code_front`), which decides before
loading the rest of sessionwatch whether a hook run has anything to do: one copy of each rule.

Key scheme: `agent:<project>:claude-code:<session_id>`. The agent id names the project: the last
part of the project directory's path, reduced to `[a-z0-9._-]` (at most 40 characters), a `-`, and
the first 8 hex digits of the SHA-256 of the absolute path, so two checkouts called `app` differ.
The project directory is `$CLAUDE_PROJECT_DIR` (Claude Code sets it for hooks and MCP servers), else
the hook input's `cwd`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from sessionwatch.domain.text import has_control_character

HOST_PART = "claude-code"
"""The key part after the agent id that says the session is a Claude Code session."""

PROJECT_DIR_VARIABLE = "CLAUDE_PROJECT_DIR"
SESSION_ID_VARIABLE = "CLAUDE_CODE_SESSION_ID"
STORE_VARIABLE = "SESSIONWATCH_URL"
STORE_FILE = "sessionwatch.db"
"""The store without `--db` or `$SESSIONWATCH_URL`: this file in the project directory."""

_SLUG_LENGTH = 40
_HASH_DIGITS = 8
_SESSION_ID_LENGTH = 200
_NOT_SLUG = re.compile(r"[^a-z0-9._-]+")


class HookInputError(ValueError):
    """A hook input Claude Code did not send as expected; names the field."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def project_agent_id(project_dir: str | os.PathLike[str]) -> str:
    """The agent id of a project: `<name>-<8 hex digits of the absolute path's SHA-256>`."""
    path = Path(project_dir).expanduser().absolute()
    name = _NOT_SLUG.sub("-", path.name.lower()).strip("-.")[:_SLUG_LENGTH].strip("-.") or "project"
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    return f"{name}-{digest}"


def natural_key(agent_id: str, session_id: str) -> str:
    """The key of session `session_id` of the project `agent_id`, before a `/clear` continued it."""
    return f"agent:{agent_id}:{HOST_PART}:{session_id}"


def checked_session_id(value: object, field: str) -> str:
    """A Claude Code session id: a non-empty string without spaces or control characters."""
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


def transcript_of(hook_input: Mapping[str, object]) -> Path | None:
    """The transcript the input names (an absolute path), or None when it names none."""
    path = hook_input.get("transcript_path")
    if path is None:
        return None
    if not isinstance(path, str) or not path.strip() or has_control_character(path):
        raise HookInputError("transcript_path", "must be a non-empty path without control characters")
    if not Path(path).is_absolute():
        raise HookInputError("transcript_path", "must be an absolute path")
    return Path(path)


def store_url(db: str | None, environ: Mapping[str, str]) -> str | None:
    """`--db`, else `$SESSIONWATCH_URL`, else `sessionwatch.db` in `$CLAUDE_PROJECT_DIR` (None: neither)."""
    if db:
        return db
    if environ.get(STORE_VARIABLE):
        return environ[STORE_VARIABLE]
    configured = environ.get(PROJECT_DIR_VARIABLE, "").strip()
    return str(Path(configured) / STORE_FILE) if configured else None
