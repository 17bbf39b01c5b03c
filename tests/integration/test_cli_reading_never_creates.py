"""Only a command that records may start a store: the others refuse a store that is not there.

`list`, `status`, `audit`, `export`, `notices`, `watched` read; `drain`, `unwatch`, `sweep` and
`prune` write, but only to what a store already holds. Given a store that does not exist (a SQLite
file, a PostgreSQL schema, or a schema holding no sessionwatch tables) they exit 2 with one line
naming `--db`, and create nothing. `record`, `watch`, `import` and `import-openclaw` create it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runs import Outcome, cli
from reference_gateway import REFERENCE_SCHEMA
from stores import PG_URL, admin, drop_schema, needs_postgres, new_schema, require_postgres, with_query

import sessionwatch
from sessionwatch import Actor

CHILD = "agent:main:subagent:child"
MANAGER = "agent:main:main"

NEED_A_STORE = [
    ["list"],
    ["status", CHILD],
    ["audit"],
    ["export"],
    ["notices", MANAGER],
    ["watched", MANAGER],
    ["watched", MANAGER, "--prompt"],
    ["drain", MANAGER],
    ["unwatch", MANAGER, CHILD],
    ["sweep"],
    ["prune"],
]
MAY_CREATE = [
    ["record", "goal_changed", CHILD, "--summary", "goal created"],
    ["watch", MANAGER, CHILD],
    ["import", "history.jsonl"],
    ["import-openclaw", "ref.db"],
]


def one_error_line(outcome: Outcome) -> str:
    assert (outcome.code, outcome.out) == (2, ""), outcome
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    return lines[0].removeprefix("sessionwatch: error: ")


def namespaces(prefix: str) -> list[str]:
    rows = admin().execute("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", (prefix,))
    return sorted(str(name) for (name,) in rows.fetchall())


def tables_in(schema: str) -> list[str]:
    rows = admin().execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
    )
    return sorted(str(name) for (name,) in rows.fetchall())


@pytest.fixture
def schema() -> Iterator[str]:
    """A schema name no store uses, dropped afterwards should a command have created it."""
    require_postgres()
    name = new_schema("sw_typo")
    yield name
    drop_schema(name)


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An export of a one-signal store and an empty reference database, for the importers."""
    monkeypatch.chdir(tmp_path)
    with sessionwatch.open(str(tmp_path / "source.db")) as watch:
        watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal created")
    raw = sqlite3.connect(tmp_path / "ref.db")
    raw.executescript(REFERENCE_SCHEMA)
    raw.close()
    return tmp_path


@needs_postgres
@pytest.mark.parametrize("argv", NEED_A_STORE)
def test_a_command_that_needs_a_store_refuses_a_missing_postgresql_schema_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], schema: str, argv: list[str]
) -> None:
    line = one_error_line(cli(capsys, *argv, "--db", with_query(PG_URL, schema=schema)))

    assert line.startswith(f"--db: no store in PostgreSQL schema '{schema}' (it does not exist)"), line
    assert namespaces(schema) == []


@needs_postgres
@pytest.mark.parametrize("argv", NEED_A_STORE)
def test_a_command_that_needs_a_store_refuses_a_schema_without_sessionwatch_tables_and_adds_none(
    capsys: pytest.CaptureFixture[str], schema: str, argv: list[str]
) -> None:
    admin().execute(f"CREATE SCHEMA {schema}")
    admin().execute(f"CREATE TABLE {schema}.notes (body text)")

    line = one_error_line(cli(capsys, *argv, "--db", with_query(PG_URL, schema=schema)))

    assert line.startswith(
        f"--db: no store in PostgreSQL schema '{schema}' (it holds no sessionwatch tables)"
    )
    assert tables_in(schema) == ["notes"]


@needs_postgres
def test_a_missing_schema_named_by_the_environment_says_so(
    capsys: pytest.CaptureFixture[str], schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONWATCH_URL", with_query(PG_URL, schema=schema))
    line = one_error_line(cli(capsys, "list"))

    assert line.startswith(f"$SESSIONWATCH_URL (or --db): no store in PostgreSQL schema '{schema}'"), line
    assert namespaces(schema) == []


@needs_postgres
@pytest.mark.parametrize("argv", NEED_A_STORE)
def test_a_command_that_needs_a_store_works_on_a_postgresql_store(
    capsys: pytest.CaptureFixture[str], schema: str, argv: list[str]
) -> None:
    url = with_query(PG_URL, schema=schema)
    with sessionwatch.open(url) as watch:
        watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal created")
        watch.watch(MANAGER, CHILD)

    outcome = cli(capsys, *argv, "--db", url)

    assert (outcome.code, outcome.err) == (0, ""), outcome


@needs_postgres
@pytest.mark.parametrize("argv", MAY_CREATE)
def test_a_command_that_records_creates_the_postgresql_schema(
    capsys: pytest.CaptureFixture[str], schema: str, sources: Path, argv: list[str]
) -> None:
    exported = cli(capsys, "export", "--db", str(sources / "source.db"))
    assert exported.code == 0
    (sources / "history.jsonl").write_text(exported.out, encoding="utf-8")
    url = with_query(PG_URL, schema=schema)

    outcome = cli(capsys, *argv, "--db", url)

    assert (outcome.code, outcome.err) == (0, ""), outcome
    assert namespaces(schema) == [schema]
    assert cli(capsys, "audit", "--db", url).code == 0


@pytest.mark.parametrize("argv", NEED_A_STORE)
def test_a_command_that_needs_a_store_refuses_a_missing_sqlite_file_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    line = one_error_line(cli(capsys, *argv, "--db", str(tmp_path / "typo.db")))

    assert line.startswith(f"--db: no store at {tmp_path / 'typo.db'} (it does not exist)"), line
    assert list(tmp_path.iterdir()) == []
