"""The Claude Code hook's front end: decide from the store whether there is anything to do, cheaply.

Standard library only, so that the console script reaches it without loading the rest of
sessionwatch. Claude Code runs the hook before every prompt, and most prompts of most sessions have
nothing to record and nothing to hand over: the transcript has not grown since the last turn ended
(`Stop` read it to its end) and no watched session changed. `nothing_to_do` answers that from the
SQLite file in one read-only query per table; it is the SQL twin of what `claude_code.handle_hook`
does for `UserPromptSubmit` and `Stop`, and says "nothing" only where that function would neither
write to the store nor print anything (a contract test compares the two on generated stores).

When there is work, the front end hands it to the session's MCP server over its private socket
(`claude_code_socket`), which runs the same hook function, already loaded; only when no server
answers does it load sessionwatch and run the hook in its own process. Every other event, a
PostgreSQL or in-memory store, and anything the twin cannot read take that same way.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from sessionwatch.adapters.stores.sqlite_front import is_current, sqlite_file
from sessionwatch.domain.text import one_line
from sessionwatch.integrations.claude_code_keys import (
    HOST_PART,
    HookInputError,
    checked_session_id,
    natural_key,
    project_agent_id,
    project_dir,
    store_url,
    transcript_of,
)

LOG_PREFIX = "sessionwatch claude-code hook"
TWIN_EVENTS = frozenset({"UserPromptSubmit", "Stop"})
"""The events whose "nothing to do" the SQL twin decides; every other one goes to the hook function."""
HOOK_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"})
"""The events the hook acts on (`claude_code.EVENTS`, which a test compares)."""
CATALOG = "claude-code"
FOLLOWING = "transcript"
"""`claude_code_follow.CATALOG` and `FOLLOWING`, which a test compares."""


# --------------------------------------------------------------------------------- the SQL twin


def nothing_to_do(hook_input: Mapping[str, object], *, db: str | None, environ: Mapping[str, str]) -> bool:
    """SQL twin of `claude_code.handle_hook`: True only where it would write nothing and print nothing.

    For `UserPromptSubmit`: the session (by its own key, or the one a `/clear` continued) is
    registered, its link follows this very transcript, the link's marker is at the transcript's end
    with no queued prompt, and no cursor of the session has a pending notice. For `Stop`: the store
    does not exist, or the session's link does not follow this session (the hook leaves it alone), or
    it does and its marker is at the transcript's end. Every other case is False: the hook decides.
    """
    event = hook_input.get("hook_event_name")
    if event not in TWIN_EVENTS:
        return False
    try:  # the same checks, in the same order, as the hook function: a bad input is its to log
        project = project_dir(hook_input, environ)
        session_id = checked_session_id(hook_input.get("session_id"), "session_id")
        transcript = transcript_of(hook_input)
    except HookInputError:
        return False
    path = sqlite_file(store_url(db, environ))
    if path is None:
        return False
    if not path.exists():
        return event == "Stop"  # the hook returns before opening (creating) the store
    try:
        return _nothing_in(path, str(event), project_agent_id(project), session_id, transcript)
    except (sqlite3.Error, OSError, ValueError, TypeError, KeyError):
        return False


def _nothing_in(path: Path, event: str, agent_id: str, session_id: str, transcript: Path | None) -> bool:
    uri = f"file:{quote(str(path.absolute()))}?mode=ro"
    with contextlib_closing(sqlite3.connect(uri, uri=True, timeout=1.0, isolation_level=None)) as db:
        db.execute("BEGIN")  # one snapshot for every read below
        if not is_current(db):
            return False
        natural = natural_key(agent_id, session_id)
        registered = _registered(db, natural, agent_id)
        key = natural if registered else _following_key(db, agent_id, session_id)
        if event == "UserPromptSubmit":
            if key is None or not (registered or _registered(db, key, agent_id)):
                return False  # the hook registers the session
        elif key is None:
            return True  # no link follows this session: the hook leaves it alone
        link = db.execute(
            "SELECT catalog_id, agent_id, upstream_kind, thread_id, upstream_ref, marker"
            " FROM sw_upstream_links WHERE session_key = ? AND agent_id = ? AND active = 1",
            (key, agent_id),
        ).fetchone()
        follows = link is not None and tuple(link[:4]) == (CATALOG, agent_id, FOLLOWING, session_id)
        if event == "Stop":
            return not follows or _read_to_end(link[4], link[5])
        if transcript is not None and not (
            follows and json.loads(link[4]) == str(transcript) and _read_to_end(link[4], link[5])
        ):
            return False
        pending = db.execute(
            "SELECT 1 FROM sw_cursors WHERE watcher = ? AND notified > last_seen LIMIT 1", (key,)
        ).fetchone()
        return pending is None


def _registered(db: sqlite3.Connection, key: str, agent_id: str) -> bool:
    row = db.execute("SELECT 1 FROM sw_sessions WHERE session_key = ? AND agent_id = ?", (key, agent_id))
    return row.fetchone() is not None


def _following_key(db: sqlite3.Connection, agent_id: str, session_id: str) -> str | None:
    """Twin of `claude_code_follow.following_key`: the first active link (by key) following the thread."""
    row = db.execute(
        "SELECT session_key FROM sw_upstream_links WHERE active = 1 AND catalog_id = ? AND agent_id = ?"
        " AND upstream_kind = ? AND thread_id = ? ORDER BY session_key, agent_id LIMIT 1",
        (CATALOG, agent_id, FOLLOWING, session_id),
    ).fetchone()
    return None if row is None else str(row[0])


def _read_to_end(ref_json: str, marker_json: str) -> bool:
    """Whether the marker stands at the transcript's end with no queued prompt (nothing to read on)."""
    ref = json.loads(ref_json)
    marker = json.loads(marker_json)
    if not isinstance(ref, str) or not isinstance(marker, dict) or set(marker) - {"offset", "queued"}:
        return False
    offset = marker.get("offset")
    if marker.get("queued") or not isinstance(offset, int) or isinstance(offset, bool):
        return False
    try:
        return os.stat(ref).st_size == offset  # noqa: PTH116 - one stat, no Path object
    except OSError:
        return False


class contextlib_closing:  # noqa: N801 - `contextlib.closing` for a connection, typed
    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        return self.connection

    def __exit__(self, *_: object) -> None:
        self.connection.close()


# ---------------------------------------------------------------------------------- the command


def hook_db(argv: Sequence[str]) -> tuple[bool, str | None]:
    """Whether the arguments are `claude-code hook [--db URL]` (and the URL): the front end's command."""
    args = list(argv)
    if args[:2] != ["claude-code", "hook"]:
        return False, None
    rest = args[2:]
    if not rest:
        return True, None
    if len(rest) == 2 and rest[0] == "--db":  # noqa: PLR2004 - the option and its value
        return True, rest[1]
    if len(rest) == 1 and rest[0].startswith("--db="):
        return True, rest[0].removeprefix("--db=")
    return False, None


def run(db: str | None, *, environ: Mapping[str, str] | None = None) -> int:
    """`claude-code hook`: read stdin, decide, hand over or run the hook; print at most one JSON object; 0."""
    env = os.environ if environ is None else environ
    try:
        stdin_text = sys.stdin.buffer.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _log(f"stdin: cannot be read as UTF-8 ({type(exc).__name__}); nothing was added to the session")
        return 0
    _write(answer(stdin_text, db=db, environ=env))
    return 0


def answer(stdin_text: str, *, db: str | None, environ: Mapping[str, str]) -> str:
    """What the hook prints for this input: nothing when nothing is to do, else the hook function's answer."""
    try:
        hook_input = json.loads(stdin_text)
    except ValueError:
        hook_input = None
    if isinstance(hook_input, dict):
        if nothing_to_do(hook_input, db=db, environ=environ):
            return ""
        # The socket's module (`socket`, `struct`) only now: a prompt with nothing to do never needs it.
        from sessionwatch.integrations import claude_code_socket as handoff  # noqa: PLC0415

        reached = _server_of(hook_input, environ)
        if reached is not None:
            try:
                result = handoff.hand_over(reached, stdin_text, db=db, environ=environ)
            except handoff.Unanswered:  # nobody took the work: it is done here
                return run_in_process(stdin_text, db=db, environ=environ, log=_log)
            if result is None:
                _log("the session's MCP server took the hook's work but gave no answer")
                return ""
            for line in result.log:
                _log(line)
            return result.output
    return run_in_process(stdin_text, db=db, environ=environ, log=_log)


def run_in_process(
    stdin_text: str, *, db: str | None, environ: Mapping[str, str], log: Callable[[str], None]
) -> str:
    """Load sessionwatch and run the hook function here (no server answered)."""
    from sessionwatch.integrations.claude_code import run_hook  # noqa: PLC0415 - the heavy way, only now

    return run_hook(stdin_text, db=db, environ=environ, log=log)


def _server_of(hook_input: Mapping[str, object], environ: Mapping[str, str]) -> Path | None:
    """The socket of the session's MCP server (None: the input names no session the hook could serve)."""
    from sessionwatch.integrations import claude_code_socket as handoff  # noqa: PLC0415 - loaded by `answer`

    try:
        project = project_dir(hook_input, environ)
        session_id = checked_session_id(hook_input.get("session_id"), "session_id")
    except HookInputError:
        return None
    return handoff.socket_path(handoff.socket_folder(environ), project_agent_id(project), session_id)


def _log(message: str) -> None:
    try:
        print(f"{LOG_PREFIX}: {one_line(message)}", file=sys.stderr, flush=True)  # noqa: T201 - the log line
    except OSError:  # no stderr to log to: the prompt goes on all the same
        return


def _write(output: str) -> None:
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except OSError as exc:
        _log(f"stdout: cannot be written ({type(exc).__name__})")


__all__ = ["HOST_PART", "answer", "hook_db", "nothing_to_do", "run", "run_in_process", "sqlite_file"]
