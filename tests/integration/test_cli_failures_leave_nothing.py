"""A command that fails leaves the folder as it found it, and its one error line names what to fix.

Every option of every sub-command is given a bad value here, on an existing SQLite store in WAL mode
(the store `sessionwatch.open` makes): the command exits 2 with one line starting with the option as
the user typed it (`--days: ...`, `KEY: ...`), and the folder holds exactly the files it held
before: no `-wal`, `-shm` or `-journal` beside the store or a file the command read, no new file.
Arguments are checked before any store is opened, and a file only read is read so that closing it
removes what reading made. On PostgreSQL, a command that fails creates no schema.
"""

from __future__ import annotations

import argparse
import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
from cli_runs import Outcome, cli
from reference_gateway import REFERENCE_SCHEMA
from stores import PG_URL, admin, drop_schema, needs_postgres, new_schema, require_postgres, with_query

import sessionwatch
from sessionwatch import Actor
from sessionwatch.cli.cli import build_parser

CHILD = "agent:main:subagent:child"
MANAGER = "agent:main:main"
BEFORE = ["good.db", "history.jsonl", "ref.db"]


def files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def one_error_line(outcome: Outcome) -> str:
    assert (outcome.code, outcome.out) == (2, ""), outcome
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("sessionwatch: error: ")
    return lines[0].removeprefix("sessionwatch: error: ")


def write_reference(path: Path) -> None:
    """A reference gateway's state file in WAL mode, as the gateway keeps it, with one signal."""
    raw = sqlite3.connect(path)
    try:
        raw.execute("PRAGMA journal_mode=WAL")
        raw.executescript(REFERENCE_SCHEMA)
        raw.execute(
            "INSERT INTO session_state_events (session_key, agent_id, kind, actor_type, occurred_at,"
            " summary) VALUES (?, 'main', 'goal_changed', 'system', 1700000000000, 'goal created')",
            (CHILD,),
        )
        raw.execute(
            "INSERT INTO session_state_heads VALUES (?, 'main', 1, 0, 1700000000000)",
            (CHILD,),
        )
        raw.commit()
    finally:
        raw.close()


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding a store with history (`good.db`), a reference database and a non-history file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SESSIONWATCH_URL", raising=False)
    with sessionwatch.open("good.db") as watch:
        watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal created")
        watch.watch(MANAGER, CHILD)
    write_reference(tmp_path / "ref.db")
    (tmp_path / "history.jsonl").write_text("not a history\n", encoding="utf-8")
    assert files(tmp_path) == BEFORE
    return tmp_path


# ------------------------------------------------------------------ the failures first reported


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", "{bad", "--db", "good.db"],
        ["record", "goal_changed", CHILD, "--summary", "s", "--actor", "robot", "--db", "good.db"],
        ["prune", "--days", "-1", "--db", "good.db"],
        ["import-openclaw", "good.db", "--db", "new.db"],  # a store, not a reference: read, refused
    ],
)
def test_a_refused_command_leaves_no_side_file_beside_the_store_it_was_given(
    capsys: pytest.CaptureFixture[str], folder: Path, argv: list[str]
) -> None:
    one_error_line(cli(capsys, *argv))
    assert files(folder) == BEFORE


def test_importing_a_reference_leaves_nothing_beside_it(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    outcome = cli(capsys, "import-openclaw", "ref.db", "--db", "new.db")

    assert outcome.code == 0, outcome
    assert files(folder) == sorted([*BEFORE, "new.db"])


def test_importing_a_reference_the_gateway_has_open_leaves_the_gateways_files_alone(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    gateway = sqlite3.connect(folder / "ref.db")  # the live gateway: its -wal and -shm are in use
    try:
        assert gateway.execute("SELECT count(*) FROM session_state_events").fetchone() == (1,)
        assert {"ref.db-wal", "ref.db-shm"} <= set(files(folder))
        outcome = cli(capsys, "import-openclaw", "ref.db", "--db", "new.db")
        assert outcome.code == 0, outcome
        assert {"ref.db-wal", "ref.db-shm"} <= set(files(folder))
        assert gateway.execute("SELECT count(*) FROM session_state_events").fetchone() == (1,)
    finally:
        gateway.close()
    assert files(folder) == sorted([*BEFORE, "new.db"])


# ------------------------------------------------------- every option of every command, refused

NAME_TOO_LONG = "a" * 300
BAD_OPTIONS = [
    # status
    pytest.param(["status", "agent:main"], "KEY", id="status-key"),
    pytest.param(["status", CHILD, "--since", "-1"], "--since", id="status-since-negative"),
    pytest.param(["status", CHILD, "--since", "x"], "--since", id="status-since-text"),
    pytest.param(["status", CHILD, "--agent", "ops"], "--agent", id="status-agent"),
    pytest.param(["status", CHILD, "--limit", "-5"], "--limit", id="status-limit-negative"),
    pytest.param(["status", CHILD, "--limit", "0"], "--limit", id="status-limit-zero"),
    pytest.param(["status", CHILD, "--limit", "x"], "--limit", id="status-limit-text"),
    pytest.param(["status", CHILD, "--as-of", "-1"], "--as-of", id="status-as-of-negative"),
    pytest.param(["status", CHILD, "--as-of", "x"], "--as-of", id="status-as-of-text"),
    pytest.param(["status", CHILD, "--as-of", "99"], "--as-of", id="status-as-of-future"),
    pytest.param(["status", CHILD, "--archive", "ref.db"], "--archive", id="status-archive-alone"),
    pytest.param(
        ["status", CHILD, "--as-of", "1", "--archive", "no/dir/a.jsonl"],
        "--archive",
        id="status-archive-missing",
    ),
    pytest.param(
        ["status", CHILD, "--as-of", "1", "--archive", "."], "--archive", id="status-archive-folder"
    ),
    pytest.param(
        ["status", CHILD, "--as-of", "1", "--archive", "ref.db"], "--archive", id="status-archive-not"
    ),
    # list
    pytest.param(["list", "--agent", ""], "--agent", id="list-agent-empty"),
    pytest.param(["list", "--agent", "a:b"], "--agent", id="list-agent-colon"),
    # record
    pytest.param(["record", "nope", CHILD, "--summary", "s"], "KIND", id="record-kind"),
    pytest.param(["record", "goal_changed", "agent:main", "--summary", "s"], "KEY", id="record-key"),
    pytest.param(["record", "goal_changed", CHILD, "--summary", "a\nb"], "--summary", id="record-summary"),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--actor", "robot"], "--actor", id="actor"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", "{bad"], "--payload", id="json"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", '{"text": "x"}'],
        "--payload",
        id="record-payload-key",
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--dedupe-key", ""],
        "--dedupe-key",
        id="dedupe-key",
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--agent", "ops"], "--agent", id="rec-agent"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--run-id", ""], "--run-id", id="run-id"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--watcher", "agent:x"], "--watcher", id="watcher"
    ),
    # watch, unwatch, watched, notices, drain
    pytest.param(["watch", "agent:main", CHILD], "WATCHER", id="watch-watcher"),
    pytest.param(["watch", MANAGER, "agent::x"], "TARGET", id="watch-target"),
    pytest.param(["watch", MANAGER, CHILD, "--agent", "ops"], "--agent", id="watch-agent"),
    pytest.param(["watch", MANAGER, CHILD, "--ambient=yes"], "--ambient", id="watch-ambient"),
    pytest.param(["unwatch", "agent:main", CHILD], "WATCHER", id="unwatch-watcher"),
    pytest.param(["unwatch", MANAGER, "agent::x"], "TARGET", id="unwatch-target"),
    pytest.param(["unwatch", MANAGER, CHILD, "--agent", "ops"], "--agent", id="unwatch-agent"),
    pytest.param(["watched", "agent:main"], "WATCHER", id="watched-watcher"),
    pytest.param(["watched", MANAGER, "--prompt=yes"], "--prompt", id="watched-prompt"),
    pytest.param(["notices", "agent:main"], "WATCHER", id="notices-watcher"),
    pytest.param(["drain", "agent::x"], "WATCHER", id="drain-watcher"),
    # prune
    pytest.param(["prune", "--days", "-1"], "--days", id="prune-days-negative"),
    pytest.param(["prune", "--days", "0"], "--days", id="prune-days-zero"),
    pytest.param(["prune", "--days", "x"], "--days", id="prune-days-text"),
    pytest.param(["prune", "--days", "nan"], "--days", id="prune-days-nan"),
    pytest.param(["prune", "--days", "36501"], "--days", id="prune-days-too-many"),
    pytest.param(["prune", "--max-signals", "0"], "--max-signals", id="prune-cap-zero"),
    pytest.param(["prune", "--max-signals", "x"], "--max-signals", id="prune-cap-text"),
    pytest.param(["prune", "--archive", "no/dir/a.jsonl"], "--archive", id="prune-archive-missing-dir"),
    pytest.param(["prune", "--archive", "."], "--archive", id="prune-archive-folder"),
    pytest.param(["prune", "--archive", NAME_TOO_LONG], "--archive", id="prune-archive-name-too-long"),
    pytest.param(["prune", "--archive", "a\x00.jsonl"], "--archive", id="prune-archive-nul"),
    # the importers
    pytest.param(["import", "missing.jsonl", "--db", "new.db"], "FILE", id="import-missing"),
    pytest.param(["import", ".", "--db", "new.db"], "FILE", id="import-folder"),
    pytest.param(["import", "history.jsonl", "--db", "new.db"], "FILE", id="import-not-a-history"),
    pytest.param(["import-openclaw", "missing.db", "--db", "new.db"], "PATH", id="import-openclaw-missing"),
    pytest.param(
        ["import-openclaw", "history.jsonl", "--db", "new.db"], "PATH", id="import-openclaw-not-a-db"
    ),
    pytest.param(
        ["import-openclaw", "good.db", "--db", "new.db"], "PATH", id="import-openclaw-not-a-reference"
    ),
    pytest.param(["import-openclaw", "ref.db"], "--db", id="import-openclaw-into-a-store-with-history"),
    # the servers and the host's installer (options checked before anything is served or written)
    pytest.param(["mcp", "--session", "agent:main"], "--session", id="mcp-session"),
    pytest.param(["mcp", "--session", "global", "--agent", "a:b"], "--agent", id="mcp-agent"),
    pytest.param(["mcp", "--session", MANAGER, "--transport", "pigeon"], "--transport", id="mcp-transport"),
    pytest.param(["mcp", "--session", MANAGER, "--port", "x"], "--port", id="mcp-port"),
    pytest.param(["mcp", "--session", MANAGER, "--port", "70000"], "--port", id="mcp-port-range"),
    pytest.param(["mcp", "--session", MANAGER, "--poll-interval", "-1"], "--poll-interval", id="mcp-poll"),
    pytest.param(
        ["mcp", "--session", MANAGER, "--visibility", "everyone"], "--visibility", id="mcp-visibility"
    ),
    pytest.param(
        ["mcp", "--session", MANAGER, "--transport", "http", "--token", "short"], "--token", id="mcp-token"
    ),
    pytest.param(
        ["mcp", "--session", MANAGER, "--transport", "http", "--host", "0.0.0.0"],  # noqa: S104 - refused: no token
        "--host",
        id="mcp-host",
    ),
    pytest.param(["claude-code", "install", "--project", "missing"], "--project", id="install-project"),
    pytest.param(["claude-code", "install", "--program", ""], "--program", id="install-program"),
    pytest.param(["codex", "install", "--project", "missing"], "--project", id="codex-install-project"),
    pytest.param(["codex", "install", "--program", ""], "--program", id="codex-install-program"),
    pytest.param(["codex", "install", "--codex-home", "good.db"], "--codex-home", id="codex-install-home"),
    pytest.param(["codex", "mcp", "--visibility", "everyone"], "--visibility", id="codex-mcp-visibility"),
    pytest.param(["demo", "--verbose=yes"], "--verbose", id="demo-verbose"),
]
"""One bad value for each option and argument; the store (`--db good.db` unless given) holds history."""

NOT_REFUSED_HERE = {
    ("claude-code mcp", "-- MCP_OPTION"): "passed on to `sessionwatch mcp`, whose options are refused above",
}
GLOBAL_OPTIONS = {"--db", "--json", "--notify-terminal-runs"}
HOSTS = ("claude-code", "codex")
"""The commands whose sub-commands are named by two words (`codex install`)."""
"""Every sub-command's; refused on each one below."""


def commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every leaf sub-command, named as typed (`claude-code install`), with its parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                named = f"{prefix} {name}".strip()
                if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                    yield from commands(sub, named)
                else:
                    yield named, sub


def arguments(parser: argparse.ArgumentParser) -> Iterator[str]:
    """Every option (as typed) and positional argument (its metavar) of one sub-command."""
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings:
            yield action.option_strings[0]
        else:
            yield str(action.metavar)


def command_of(argv: list[str]) -> str:
    return " ".join(argv[:2]) if argv[0] in HOSTS else argv[0]


def test_every_option_of_every_command_has_a_bad_value_here() -> None:
    covered = {(command_of(cast("list[str]", param.values[0])), param.values[1]) for param in BAD_OPTIONS}
    missing = [
        (command, option)
        for command, parser in commands(build_parser())
        for option in arguments(parser)
        if option not in GLOBAL_OPTIONS
        and (command, option) not in covered
        and (command, option) not in NOT_REFUSED_HERE
    ]
    assert missing == []


@pytest.mark.parametrize(("argv", "option"), BAD_OPTIONS)
def test_a_bad_value_is_refused_naming_its_option_and_leaves_the_folder_as_it_was(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    folder: Path,
    argv: list[str],
    option: str,
) -> None:
    monkeypatch.delenv("SESSIONWATCH_MCP_TOKEN", raising=False)  # without a token, --host 0.0.0.0 is refused
    given = "--db" in argv or argv[0] in HOSTS  # the installer's store is the project's
    line = one_error_line(cli(capsys, *argv, *([] if given else ["--db", "good.db"])))

    assert line.startswith(f"{option}: "), line
    assert "Errno" not in line
    assert files(folder) == BEFORE


EVERY_COMMAND = sorted(command for command, _ in commands(build_parser()))
HOOKS = ("claude-code hook", "codex hook")
"""Never fail: a host's turn must go on (tested below)."""


@pytest.mark.parametrize("command", [c for c in EVERY_COMMAND if c not in HOOKS])
@pytest.mark.parametrize(
    "option",
    [
        ("--db=ftp://x", "--db: unknown scheme"),
        ("--db=no/dir/x.db", "--db: "),
        ("--json=yes", "--json: "),
        ("--notify-terminal-runs=yes", "--notify-terminal-runs: "),
    ],
    ids=["db-scheme", "db-directory", "json", "notify-terminal-runs"],
)
def test_a_bad_global_option_is_refused_naming_it_on_every_command(
    capsys: pytest.CaptureFixture[str],
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    option: tuple[str, str],
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "2f1e0c9a-5b7d-4c3e-9a1f-000000000001")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(folder))
    needed = {
        "status": [CHILD],
        "record": ["goal_changed", CHILD, "--summary", "s"],
        "watch": [MANAGER, CHILD],
        "unwatch": [MANAGER, CHILD],
        "watched": [MANAGER],
        "notices": [MANAGER],
        "drain": [MANAGER],
        "import": ["history.jsonl"],
        "import-openclaw": ["ref.db"],
        "mcp": ["--session", MANAGER],
        "claude-code install": ["--project", "."],
        "codex install": ["--project", ".", "--codex-home", "."],
    }.get(command, [])
    given, message = option
    line = one_error_line(cli(capsys, *command.split(), *needed, given))

    assert line.startswith(message), line
    assert files(folder) == BEFORE


@pytest.mark.parametrize("hook", HOOKS)
def test_the_hook_never_fails_and_leaves_the_folder_as_it_was(
    capsys: pytest.CaptureFixture[str], folder: Path, monkeypatch: pytest.MonkeyPatch, hook: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    outcome = cli(capsys, *hook.split(), "--db", "no/dir/x.db")

    assert (outcome.code, outcome.out) == (0, "")
    assert files(folder) == BEFORE


# --------------------------------------------------------------------- PostgreSQL: no schema left


def schema_exists(schema: str) -> bool:
    return admin().execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is not None


@needs_postgres
@pytest.mark.parametrize(
    "argv",
    [
        ["record", "goal_changed", "global", "--summary", "s"],  # a bare key: the agent is missing
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", '{"text": "x"}'],
        ["record", "goal_changed", CHILD, "--summary", "s", "--actor", "robot"],
        ["watch", CHILD, CHILD],  # refused: exit 1, nothing written
        ["watch", "global", CHILD],  # refused: a bare watcher is never notified
        ["import", "history.jsonl"],
        ["import-openclaw", "good.db"],
        ["import-openclaw", "missing.db"],
    ],
)
def test_a_failing_write_command_creates_no_postgresql_schema(
    capsys: pytest.CaptureFixture[str], folder: Path, argv: list[str]
) -> None:
    require_postgres()
    schema = new_schema("sw_fail")
    try:
        outcome = cli(capsys, *argv, "--db", with_query(PG_URL, schema=schema))
        assert outcome.code in (1, 2), outcome
        assert not schema_exists(schema)
    finally:
        drop_schema(schema)
    assert files(folder) == BEFORE


@needs_postgres
@pytest.mark.parametrize(
    "argv", [["watch", CHILD, CHILD], ["import", "history.jsonl"], ["import-openclaw", "good.db"]]
)
def test_a_failing_write_command_adds_no_table_to_a_schema_of_another_program(
    capsys: pytest.CaptureFixture[str], folder: Path, argv: list[str]
) -> None:
    require_postgres()
    schema = new_schema("sw_theirs")
    try:
        admin().execute(f"CREATE SCHEMA {schema}")
        admin().execute(f"CREATE TABLE {schema}.notes (body text)")
        outcome = cli(capsys, *argv, "--db", with_query(PG_URL, schema=schema))
        assert outcome.code in (1, 2), outcome
        tables = admin().execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        )
        assert [name for (name,) in tables.fetchall()] == ["notes"]
    finally:
        drop_schema(schema)
    assert files(folder) == BEFORE


@needs_postgres
@pytest.mark.usefixtures("folder")
@pytest.mark.parametrize("history", ["none", "one signal"])
def test_a_failing_write_command_keeps_a_postgresql_store_that_was_there(
    capsys: pytest.CaptureFixture[str], history: str
) -> None:
    require_postgres()
    schema = new_schema("sw_kept")
    url = with_query(PG_URL, schema=schema)
    try:
        with sessionwatch.open(url) as watch:
            if history != "none":
                watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal created")
        assert cli(capsys, "watch", CHILD, CHILD, "--db", url).code == 1
        assert cli(capsys, "record", "goal_changed", "global", "--summary", "s", "--db", url).code == 2
        assert cli(capsys, "import", "history.jsonl", "--db", url).code == 2
        assert schema_exists(schema)
        with sessionwatch.open(url, sweep_on_open=False) as watch:
            assert len(watch.sessions_list()) == (0 if history == "none" else 1)
    finally:
        drop_schema(schema)
