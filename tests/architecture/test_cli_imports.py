"""The command line imports only what a command uses (ADR-0067, ADR-0071).

`sessionwatch --version` builds no parser, `--help` loads no model, no store, no event-sourcing
machinery and no command's module, and `status KEY` and `notices WATCHER` on a SQLite store answer
with `sqlite3` alone (no parser, no model, no store): each is run in a fresh interpreter as the
console script runs it, and the modules it leaves loaded are read from `sys.modules`. How long they
take is the `cli` benchmark's to say (bench/cli.py); these checks hold the imports that decide it.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import sessionwatch
from sessionwatch.cli import cli

MODELS_AND_STORES = (
    "pydantic",
    "pydantic_core",
    "eventsourcing",
    "orjson",
    "opentelemetry",
    "sessionwatch.adapters.stores.sqlite",
    "sessionwatch.adapters.stores.port",
    "sessionwatch.adapters.app",
    "sessionwatch.adapters.entry.watch",
    "sessionwatch.projections",
    "sessionwatch.domain.signals",
)
"""Module prefixes the parser, `--help` and `--version` never load: every command's own imports."""


def loaded_by(argv: Sequence[str]) -> tuple[int, str, list[str]]:
    """Run the command line in a fresh interpreter; its exit code, output and loaded modules."""
    script = (
        "import sys\n"
        f"sys.argv = ['sessionwatch', *{list(argv)!r}]\n"
        "from sessionwatch.cli.cli import main\n"
        "code = main()\n"
        "print('\\n'.join(['--modules--', *sorted(sys.modules)]))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    output, _, modules = done.stdout.partition("--modules--\n")
    return done.returncode, output, modules.split()


def heavy(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m in MODELS_AND_STORES or m.startswith(tuple(f"{p}." for p in MODELS_AND_STORES))
    ]


def test_version_builds_no_parser_and_loads_no_model() -> None:
    code, output, modules = loaded_by(["--version"])
    assert code == 0
    assert output.strip() == f"sessionwatch {importlib.metadata.version('sessionwatch')}"
    assert heavy(modules) == []
    assert "argparse" not in modules
    assert "sessionwatch.cli.cli_parser" not in modules
    assert "importlib.metadata" not in modules  # the version is read from the metadata file itself


@pytest.mark.parametrize(
    "argv", [["--help"], ["status", "--help"], ["claude-code", "hook", "--help"], ["mcp", "--help"]]
)
def test_help_loads_no_model_and_no_store(argv: list[str]) -> None:
    code, output, modules = loaded_by(argv)
    assert code == 0
    assert output.startswith("usage: sessionwatch")
    assert heavy(modules) == []


def test_the_top_level_help_builds_no_sub_command() -> None:
    code, output, modules = loaded_by(["--help"])
    assert code == 0
    assert "import-openclaw" in output
    assert "typing" not in modules  # a sub-command's module or a model would bring it
    assert [
        m for m in modules if m.startswith("sessionwatch.cli.cli_") and m != "sessionwatch.cli.cli_codes"
    ] == ["sessionwatch.cli.cli_parser"]


WATCHER = "agent:main:main"
TARGET = "agent:main:worker"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store where WATCHER has a notice pending on TARGET."""
    db = tmp_path_factory.mktemp("cli-imports") / "sessionwatch.db"
    with sessionwatch.open(str(db)) as watch:
        watch.upsert_session(WATCHER)
        watch.upsert_session(TARGET)
        assert watch.watch(WATCHER, TARGET)
        watch.record(TARGET, kind="goal_changed", actor=sessionwatch.Actor.human(), summary="new goal")
    return db


@pytest.mark.parametrize(
    ("argv", "first_line"),
    [
        (["status", TARGET], f"{TARGET}  stateVersion 1"),
        (["status", TARGET, "--json"], "{"),
        (["notices", WATCHER], f'Session "{TARGET}" changed (other actor).'),
        (["notices", "--json", WATCHER], "["),
    ],
)
def test_status_and_notices_read_a_sqlite_store_with_no_parser_and_no_model(
    store: Path, argv: list[str], first_line: str
) -> None:
    code, output, modules = loaded_by([*argv, "--db", str(store)])
    assert code == 0
    assert output.startswith(first_line)
    assert heavy(modules) == []
    assert "sessionwatch.cli.cli_parser" not in modules
    assert "sessionwatch.adapters.stores.sql.sqlite_schema" not in modules


def test_status_with_an_option_the_twin_does_not_read_runs_the_full_command(store: Path) -> None:
    code, output, modules = loaded_by(["status", TARGET, "--since", "0", "--db", str(store)])
    assert code == 0
    assert "1 change" in output
    assert "pydantic" in heavy(modules)


def test_bad_usage_is_told_without_loading_a_model() -> None:
    code, output, modules = loaded_by(["status"])
    assert (code, output) == (2, "")
    assert heavy(modules) == []


def test_the_check_sees_what_a_command_loads() -> None:
    """A command that reads a store loads the models: the list above would see a parser that did."""
    code, _, modules = loaded_by(["list", "--db", "memory://"])
    assert code == 0
    assert "pydantic" in heavy(modules)
    assert "opentelemetry" not in modules  # no provider can be set up: none imported, no variable names one


def test_every_route_names_a_function_that_exists() -> None:
    for prefix, target in cli.ROUTES.items():
        assert prefix
        assert callable(cli._route(target))


def test_a_route_runs_before_the_parser_with_the_arguments_after_its_prefix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[list[str]] = []

    def front(rest: Sequence[str]) -> int:
        seen.append(list(rest))
        return 7

    monkeypatch.setattr(sys.modules[__name__], "front", front, raising=False)
    monkeypatch.setitem(cli.ROUTES, ("claude-code", "hook"), f"{__name__}:front")
    monkeypatch.setattr(cli, "build_parser", lambda: pytest.fail("the parser was built"))
    assert cli.main(["claude-code", "hook", "--db", "x.db"]) == 7
    assert seen == [["--db", "x.db"]]
    assert capsys.readouterr() == ("", "")


def test_a_route_that_fails_says_one_line_as_every_command_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(rest: Sequence[str]) -> int:  # noqa: ARG001 - a route's signature
        raise RuntimeError("boom")

    monkeypatch.setattr(sys.modules[__name__], "broken", broken, raising=False)
    monkeypatch.setitem(cli.ROUTES, ("claude-code", "hook"), f"{__name__}:broken")
    assert cli.main(["claude-code", "hook"]) == 3
    assert capsys.readouterr() == ("", "sessionwatch: error: internal error: RuntimeError: boom\n")


def test_a_route_can_hand_the_whole_command_line_back_to_the_parser(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def front(rest: Sequence[str]) -> int:
        return cli.run_parsed(["--version", *rest])  # the parser's own version action, not the route

    monkeypatch.setattr(sys.modules[__name__], "front", front, raising=False)
    monkeypatch.setitem(cli.ROUTES, ("claude-code", "hook"), f"{__name__}:front")
    assert cli.main(["claude-code", "hook"]) == 0
    assert capsys.readouterr().out == "sessionwatch " + importlib.metadata.version("sessionwatch") + "\n"


@pytest.mark.parametrize("columns", [None, "100", "37", "0", "-5", "wide", ""])
def test_the_help_width_is_the_one_shutil_gives(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    """`cli_parser._width` reads the columns without importing `shutil`: the same answer as `shutil`'s."""
    import shutil  # noqa: PLC0415 - the rule the parser's width twins

    from sessionwatch.cli import cli_parser  # noqa: PLC0415

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    cli_parser._width.cache_clear()
    try:
        assert cli_parser._width() == shutil.get_terminal_size().columns - 2
    finally:
        cli_parser._width.cache_clear()
