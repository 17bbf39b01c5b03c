"""`status KEY` and `notices WATCHER` on a SQLite store, read with `sqlite3` before any parser or model.

A named SQL twin (ADR-0071). The command line runs these two before building its parser (`cli.ROUTES`);
each answers the plain case from the SQLite file in one read snapshot and prints exactly what the
full command prints, loading neither pydantic nor event sourcing nor the store:

- `status_answer` twins `cli_commands.status_command` without `--since`, `--as-of`, `--archive`,
  `--agent` or `--limit`: `queries.session_status` (`SqliteStore.status`'s `SELECT_SESSION`, then
  `projections.status.build_status`), printed by `cli_text.status_line` or as
  `SessionStatus.to_json`.
- `notices_answer` twins `cli_commands.notices_command`: `cli_commands._watcher`,
  `notices.pending_notices` (`sqlite_dialect.cursors_of` with `pending_only`, `Notice.from_state`
  without links, as the command line opens its store) and `cli_commands._known`, printed one
  `domain.text.notice_text` per line or as `Notice.to_json`. A watcher with a creation digest row
  (`digests.pending_digest`) is left to the full command.

Every other case returns None and the caller runs the whole command line through the parser, so
errors, their lines and exit codes stay the full command's: another store than a SQLite file, a file
that is no sessionwatch store of schema `sqlite_front.SCHEMA_VERSION`, an option the twin does not
read, a malformed or unknown key. tests/contract/test_cli_read_twin.py feeds generated stores through
both paths and compares their output byte for byte.
"""

from __future__ import annotations

import sqlite3

from sessionwatch.adapters.stores.sqlite_front import is_current, sqlite_file
from sessionwatch.cli.cli_codes import EXIT_OK

TYPE_CHECKING = False  # `typing` is loaded by the key rules anyway; type checkers read the block below
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    _Answer = Callable[[str, str | None, bool], str | None]

STORE_TABLES = ("stored_events", "sw_meta")
"""The tables the command line's store check asks of a SQLite store (`cli_store._store_tables`)."""


def status(rest: Sequence[str]) -> int:
    """`status ...` (a route): the twin's answer when it has one, else the full command."""
    return _answer_or_run("status", rest, status_answer)


def notices(rest: Sequence[str]) -> int:
    """`notices ...` (a route): the twin's answer when it has one, else the full command."""
    return _answer_or_run("notices", rest, notices_answer)


def _answer_or_run(command: str, rest: Sequence[str], answer: _Answer) -> int:
    plain = plain_arguments(rest)
    printed = None if plain is None else answer(*plain)
    if printed is None:
        from sessionwatch.cli.cli import run_parsed  # noqa: PLC0415 - the way back, only when needed

        return run_parsed([command, *rest])
    if printed:
        print(printed)  # noqa: T201 - the command's answer
    return EXIT_OK


def plain_arguments(rest: Sequence[str]) -> tuple[str, str | None, bool] | None:
    """`ARG [--db URL] [--json]` in any order: the one positional, the URL and `--json`; else None.

    None for anything else (another option, a repeated `--db`, `--`, a second positional, a value
    that starts with `-`): the parser decides those.
    """
    positional: list[str] = []
    db: str | None = None
    as_json = False
    given = iter(rest)
    for word in given:
        if word == "--json":
            as_json = True
        elif word == "--db" or word.startswith("--db="):
            value = next(given, None) if word == "--db" else word.removeprefix("--db=")
            if db is not None or value is None or not value or value.startswith("-"):
                return None
            db = value
        elif word.startswith("-") or positional:
            return None
        else:
            positional.append(word)
    return (positional[0], db, as_json) if positional else None


def _read(db: str | None, query: Callable[[sqlite3.Connection], str | None]) -> str | None:
    """`query`'s answer from the sessionwatch store of schema `SCHEMA_VERSION` the URL names, else None.

    The file is opened as the store check reads one (`sqlite_reading.reading`: nothing is created,
    no side file is left behind), and every read sees one snapshot.
    """
    path = sqlite_file(db)
    if path is None:
        return None
    from sessionwatch.adapters.stores.sqlite_reading import reading  # noqa: PLC0415

    try:
        if not path.is_file() or path.stat().st_size == 0:
            return None
        with reading(path) as connection:
            connection.execute("BEGIN")
            names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            if not {row[0] for row in names}.issuperset(STORE_TABLES) or not is_current(connection):
                return None
            return query(connection)
    except (sqlite3.Error, OSError):
        return None


def status_answer(key: str, db: str | None, as_json: bool) -> str | None:
    """What `status KEY [--json]` prints (without its last newline), or None: the command decides."""
    from sessionwatch.cli.cli_text import json_text, status_line  # noqa: PLC0415
    from sessionwatch.domain.errors import InvalidSignal  # noqa: PLC0415
    from sessionwatch.domain.keys import resolve_identity  # noqa: PLC0415

    try:
        identity = resolve_identity(key, None)
    except InvalidSignal:
        return None

    def query(connection: sqlite3.Connection) -> str | None:
        row = connection.execute(
            "SELECT session_key, head FROM sw_sessions WHERE session_key = ? AND agent_id = ?", identity
        ).fetchone()
        if row is None:
            return None  # an unknown session: the full command says so
        session_key, head = row
        if as_json:
            return json_text({"sessionKey": session_key, "stateVersion": head})
        return status_line(session_key, head)

    return _read(db, query)


def notices_answer(watcher: str, db: str | None, as_json: bool) -> str | None:
    """What `notices WATCHER [--json]` prints (without its last newline), or None: the command decides."""
    from sessionwatch.cli.cli_text import json_text  # noqa: PLC0415
    from sessionwatch.domain.errors import InvalidSignal  # noqa: PLC0415
    from sessionwatch.domain.keys import check_key, is_agent_qualified, resolve_identity  # noqa: PLC0415
    from sessionwatch.domain.text import notice_text  # noqa: PLC0415

    try:
        checked = check_key(watcher, "watcher_key")
    except InvalidSignal:
        return None
    if not is_agent_qualified(checked):  # never notified: bad input, the full command's to say
        return None
    identity = resolve_identity(checked, None)

    def query(connection: sqlite3.Connection) -> str | None:
        if connection.execute(
            "SELECT 1 FROM sw_digests WHERE session_key = ? AND agent_id = ?", identity
        ).fetchone():
            return None  # a main session's creation digest: the full command lists it
        pending = connection.execute(
            "SELECT target_key, target_agent_id, last_seen, ambient FROM sw_cursors"
            " WHERE watcher = ? AND notified > last_seen ORDER BY target_key, target_agent_id",
            (checked,),
        ).fetchall()
        if not pending and not _known(connection, checked, identity):
            return None  # an unknown watcher: the full command says so
        texts = [notice_text(target, last_seen) for target, _, last_seen, _ in pending]
        if as_json:
            return json_text(
                [
                    {
                        "target": target,
                        "targetAgentId": agent,
                        "lastSeen": last_seen,
                        "text": text,
                        "provenance": "ambient" if ambient else "explicit",
                    }
                    for (target, agent, last_seen, ambient), text in zip(pending, texts, strict=True)
                ]
            )
        return "\n".join(texts)

    return _read(db, query)


def _known(connection: sqlite3.Connection, watcher: str, identity: tuple[str, str]) -> bool:
    """Twin of `cli_commands._known`: the watcher is a registered session or holds a cursor."""
    session = connection.execute(
        "SELECT 1 FROM sw_sessions WHERE session_key = ? AND agent_id = ?", identity
    ).fetchone()
    return (
        session is not None
        or connection.execute("SELECT 1 FROM sw_cursors WHERE watcher = ? LIMIT 1", (watcher,)).fetchone()
        is not None
    )
