"""Progress on stderr for the long commands: drawn on a terminal (with rich), never on a pipe or a file,
and never needed: without rich the commands work the same, silently."""

from __future__ import annotations

import io
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from reference_gateway import REFERENCE_SCHEMA

import sessionwatch
from sessionwatch import Actor
from sessionwatch.cli.cli import main
from sessionwatch.cli.cli_progress import progress

WORKER = "agent:main:worker"
MANAGER = "agent:main:main"


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal and keeps what was drawn on it."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with 1,500 signals, an export of it, and an empty reference gateway database."""
    monkeypatch.chdir(tmp_path)
    with sessionwatch.open("state.db") as watch:
        watch.watch(MANAGER, WORKER)
        for n in range(1_500):
            watch.record(WORKER, kind="goal_changed", actor=Actor.system(), summary=f"goal {n}")
    with sqlite3.connect(tmp_path / "reference.db") as raw:
        raw.executescript(REFERENCE_SCHEMA)
    raw.close()
    return tmp_path


def commands(folder: Path) -> dict[str, list[str]]:
    return {
        "audit": ["audit", "--db", "state.db"],
        "export": ["export", "--db", "state.db"],
        "import": ["import", str(folder / "history.jsonl"), "--db", "copy.db"],
        "import-openclaw": ["import-openclaw", "reference.db", "--db", "audit.db"],
        "prune": ["prune", "--db", "state.db", "--max-signals", "100", "--archive", "pruned.jsonl"],
    }


def export(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--db", "state.db"]) == 0
    (folder / "history.jsonl").write_text(capsys.readouterr().out, encoding="utf-8")


LONG_COMMANDS = ["audit", "export", "import", "import-openclaw", "prune"]


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_a_long_command_draws_progress_on_a_terminal_stderr(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    export(folder, capsys)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)

    assert main(commands(folder)[command]) == 0

    drawn = terminal.getvalue()
    assert f"{command}:" in drawn
    assert "\x1b[" in drawn  # drawn with terminal control sequences, then erased (transient)


def test_audit_progress_counts_the_events_replayed(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert folder
    assert capsys
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["audit", "--db", "state.db"]) == 0
    assert "events replayed" in terminal.getvalue()


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_without_a_terminal_stderr_stays_empty_on_success(
    folder: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    export(folder, capsys)
    code = main(commands(folder)[command])
    captured = capsys.readouterr()
    assert (code, captured.err) == (0, "")
    assert captured.out


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_without_rich_a_terminal_gets_no_progress_and_the_command_works(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    export(folder, capsys)
    monkeypatch.setitem(sys.modules, "rich", None)  # `import rich` now raises ImportError
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)

    assert main(commands(folder)[command]) == 0
    assert terminal.getvalue() == ""
    assert capsys.readouterr().out


def test_the_progress_display_leaves_stdout_and_stderr_where_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    out = sys.stdout
    with progress("export", "events written") as count:
        count(1)
        inside = (sys.stdout, sys.stderr)
    assert inside == (out, terminal), "a command's own writes go where it sent them, not into the display"


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_a_long_command_updates_its_progress_once_per_thousand_items_at_most(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    from rich.progress import Progress  # noqa: PLC0415 - the cli extra, which the dev extra includes

    export(folder, capsys)
    updates: list[int] = []
    real = Progress.update

    def counting(display: Progress, *args: Any, **kwargs: Any) -> None:
        updates.append(1)
        real(display, *args, **kwargs)

    monkeypatch.setattr(Progress, "update", counting)
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    assert main(commands(folder)[command]) == 0
    assert len(updates) <= 3, "about 1,500 items: one update per thousand, and one at the end"
