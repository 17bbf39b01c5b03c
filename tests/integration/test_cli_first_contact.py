"""The command line on first contact: its version, its `--db` help, errors naming the flag that fixes
them, files it must never create or convert, and the README's command session run as written."""

from __future__ import annotations

import importlib.metadata
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import Outcome, cli
from reference_gateway import REFERENCE_SCHEMA

import sessionwatch
from sessionwatch import Actor

CHILD = "agent:main:subagent:child"
MANAGER = "agent:main:main"
BIN = Path(sys.executable).parent
README = Path(__file__).resolve().parents[2] / "README.md"


def one_error_line(outcome: Outcome) -> str:
    assert (outcome.code, outcome.out) == (2, ""), outcome
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("sessionwatch: error: ")
    return lines[0]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    with sessionwatch.open(str(path)) as watch:
        watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal created")
    return path


# ---------------------------------------------------------------------------------- version, help


def test_version_prints_the_installed_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = cli(capsys, "--version")
    assert outcome == Outcome(0, f"sessionwatch {importlib.metadata.version('sessionwatch')}\n", "")


def test_version_works_as_a_process() -> None:
    done = subprocess.run(
        [str(BIN / "sessionwatch"), "--version"], capture_output=True, text=True, check=False, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"sessionwatch {importlib.metadata.version('sessionwatch')}\n",
        "",
    )


@pytest.mark.parametrize("argv", [["--help"], ["status", "--help"], ["import", "--help"]])
def test_the_db_help_lists_every_url_form_and_the_default(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    outcome = cli(capsys, *argv)
    assert outcome.code == 0
    text = " ".join(outcome.out.split())
    for form in (
        "memory://",
        "sqlite:///relative.db",
        "sqlite:////absolute/path.db",
        "a plain file path",
        "?synchronous=full",
        "postgresql://",
        "$SESSIONWATCH_URL, else ./sessionwatch.db",
    ):
        assert form in text, form


def test_no_help_text_cites_the_specification(capsys: pytest.CaptureFixture[str]) -> None:
    commands = ["demo", "status", "list", "record", "watch", "unwatch", "watched", "notices", "drain"]
    commands += ["sweep", "prune", "audit", "export", "import", "import-openclaw", "claude-code"]
    commands += ["claude-code hook", "claude-code install", "claude-code mcp"]
    for argv in (["--help"], *([*command.split(), "--help"] for command in commands)):
        outcome = cli(capsys, *argv)
        assert outcome.code == 0
        assert "SPEC" not in outcome.out
        assert "§" not in outcome.out


# ---------------------------------------------------------------------- errors name their flag


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "main"],
        ["record", "goal_changed", "main", "--summary", "s"],
        ["watch", MANAGER, "main"],
        ["unwatch", MANAGER, "main"],
    ],
)
def test_a_bare_key_is_an_error_saying_to_pass_agent(
    capsys: pytest.CaptureFixture[str], store: Path, argv: list[str]
) -> None:
    line = one_error_line(cli(capsys, *argv, "--db", str(store)))
    assert "bare key ('main')" in line
    assert "pass --agent ID" in line


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["status", CHILD, "--since", "-1"], "--since: "),
        (["status", CHILD, "--limit", "x"], "--limit: "),
        (["status", CHILD, "--as-of", "-3"], "--as-of: "),
        (["status", CHILD, "--agent", "ops"], "--agent: "),
        (["record", "goal_changed", CHILD, "--summary", " "], "--summary: "),
        (["record", "goal_changed", CHILD, "--summary", "s", "--payload", '{"text": "x"}'], "--payload: "),
        (["record", "goal_changed", CHILD, "--summary", "s", "--run-id", ""], "--run-id: "),
        (["record", "goal_changed", CHILD, "--summary", "s", "--watcher", "agent:x"], "--watcher: "),
        (["record", "nope", CHILD, "--summary", "s"], "KIND: "),
        (["watch", "agent:main", CHILD], "WATCHER: "),
        (["watch", MANAGER, "agent::x"], "TARGET: "),
        (["list", "--db", "ftp://x"], "--db: "),
    ],
)
def test_an_error_a_flag_fixes_names_the_flag(
    capsys: pytest.CaptureFixture[str], store: Path, argv: list[str], flag: str
) -> None:
    db = [] if "--db" in argv else ["--db", str(store)]
    line = one_error_line(cli(capsys, *argv, *db))
    assert line.startswith(f"sessionwatch: error: {flag}"), line


def test_a_bad_default_url_names_the_environment_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONWATCH_URL", "ftp://x")
    line = one_error_line(cli(capsys, "list"))
    assert line.startswith("sessionwatch: error: $SESSIONWATCH_URL (or --db): unknown scheme 'ftp'")


# -------------------------------------------------------------------------- as of a future sequence


def test_status_as_of_past_the_highest_sequence_is_an_error_naming_it(
    capsys: pytest.CaptureFixture[str], store: Path
) -> None:
    line = one_error_line(cli(capsys, "status", CHILD, "--as-of", "999999", "--db", str(store)))
    assert line.startswith("sessionwatch: error: --as-of: 999999 is past the store's highest sequence 1")
    answered = cli(capsys, "status", CHILD, "--as-of", "1", "--db", str(store))
    assert answered.code == 0
    assert "stateVersion 1" in answered.out


# --------------------------------------------------------- files never created nor converted

READERS = [
    ["status", CHILD],
    ["list"],
    ["watched", MANAGER],
    ["notices", MANAGER],
    ["drain", MANAGER],
    ["unwatch", MANAGER, CHILD],
    ["sweep"],
    ["prune"],
    ["audit"],
    ["export"],
]
WRITERS = [
    ["record", "goal_changed", CHILD, "--summary", "s"],
    ["watch", MANAGER, CHILD],
]


def foreign_sqlite(path: Path) -> bytes:
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE notes (body TEXT)")
        raw.execute("INSERT INTO notes VALUES ('mine')")
    raw.close()
    return path.read_bytes()


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("argv", READERS)
def test_a_read_command_on_an_empty_file_refuses_and_leaves_it_byte_identical(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    line = one_error_line(cli(capsys, *argv, "--db", str(empty)))
    assert "--db: no store at" in line
    assert "empty file" in line
    assert empty.read_bytes() == b""
    assert files(tmp_path) == ["empty.db"]


@pytest.mark.parametrize("argv", READERS)
def test_a_read_command_on_a_missing_file_refuses_naming_db_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    line = one_error_line(cli(capsys, *argv, "--db", str(tmp_path / "missing.db")))
    assert "--db: no store at" in line
    assert files(tmp_path) == []


@pytest.mark.parametrize("argv", [*READERS, *WRITERS, ["demo"]])
@pytest.mark.parametrize("content", ["sqlite", "text"])
def test_no_command_converts_another_programs_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], content: str
) -> None:
    other = tmp_path / "other.db"
    if content == "sqlite":
        before = foreign_sqlite(other)
    else:
        before = b"my notes\n" * 50
        other.write_bytes(before)
    line = one_error_line(cli(capsys, *argv, "--db", str(other)))
    assert "is not a sessionwatch store" in line
    assert other.read_bytes() == before
    assert files(tmp_path) == ["other.db"]


@pytest.mark.parametrize("argv", WRITERS)
def test_a_write_command_turns_an_empty_file_into_a_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert cli(capsys, *argv, "--db", str(empty)).code == 0
    assert cli(capsys, "list", "--db", str(empty)).code == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "goal_changed", "main", "--summary", "s"],
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", '{"text": "x"}'],
        ["watch", CHILD, CHILD],  # refused: exit 1, nothing written
        ["import", "history.jsonl"],
        ["import-openclaw", "/nonexistent.db"],
    ],
)
@pytest.mark.parametrize("start", ["missing", "empty"])
def test_a_failing_write_command_leaves_no_store_behind(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    start: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "history.jsonl").write_text("not a history\n", encoding="utf-8")
    target = tmp_path / "new.db"
    if start == "empty":
        target.write_bytes(b"")
    outcome = cli(capsys, *argv, "--db", str(target))
    assert outcome.code in {1, 2}
    assert files(tmp_path) == sorted(["history.jsonl", *(["new.db"] if start == "empty" else [])])
    if start == "empty":
        assert target.read_bytes() == b""


def test_import_openclaw_of_a_missing_file_names_path_and_creates_no_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = one_error_line(cli(capsys, "import-openclaw", "/nonexistent.db", "--db", str(tmp_path / "new.db")))
    assert line == "sessionwatch: error: PATH: no reference database at /nonexistent.db"
    assert files(tmp_path) == []


# ---------------------------------------------------------------------------------- the README


def readme_session() -> list[str]:
    """The console lines of the README's "Command line" section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Command line") :]
    block = section[section.index("```console") : section.index("```\n", section.index("```console") + 3)]
    return [line.removeprefix("$ ") for line in block.splitlines() if line.startswith("$ ")]


def test_the_readme_command_session_runs_as_written_one_command_after_the_other(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".openclaw").mkdir(parents=True)
    with sqlite3.connect(home / ".openclaw" / "state.db") as raw:
        raw.executescript(REFERENCE_SCHEMA)
    raw.close()
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    env |= {"HOME": str(home), "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}"}
    session = readme_session()
    assert len(session) >= 10
    for command in session:
        assert command.split()[0] == "sessionwatch"
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert (done.returncode, done.stderr) == (0, ""), (command, done.stderr)
    assert (work / "pruned.jsonl").is_file()
    assert (work / "copy.db").is_file()
    assert (work / "audit.db").is_file()
