"""`sessionwatch export` / `sessionwatch import` (SPEC §14): a history moved between stores by command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import sessionwatch
from sessionwatch import Actor, SignalKind
from sessionwatch.adapters.entry import cli_commands
from sessionwatch.adapters.entry.cli import main
from sessionwatch.adapters.history import check_process
from sessionwatch.testing import FakeClock

WORKER = "agent:main:worker"
MANAGER = "agent:main:main"


def seed(url: str) -> None:
    with sessionwatch.open(url, clock=FakeClock()) as watch:
        watch.upsert_session(MANAGER)
        watch.record(WORKER, kind="goal_changed", actor=Actor.system(), summary="goal created")
        watch.watch(MANAGER, WORKER)
        watch.record_human_message(WORKER, channel="telegram")


@pytest.fixture(params=["one process", "a second process"])
def checking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Import as a small file does, or as a big one does: checked in a second process."""
    if request.param == "a second process":
        monkeypatch.setattr(cli_commands, "CHECK_ELSEWHERE_FROM", 0)
        started: list[str] = []
        real = check_process.ElsewhereReader.__init__

        def counting(
            reader: check_process.ElsewhereReader, header_text: str, *kinds: frozenset[SignalKind]
        ) -> None:
            started.append(header_text)
            real(reader, header_text, *kinds)

        monkeypatch.setattr(check_process.ElsewhereReader, "__init__", counting)
        yield str(request.param)
        assert len(started) == 1, "the import of a big file is checked in a second process"
    else:
        yield str(request.param)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.usefixtures("checking")
def test_export_then_import_moves_the_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, target = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    seed(source)
    code, exported, _ = run(capsys, "export", "--db", source)
    assert code == 0
    assert json.loads(exported.splitlines()[0])["format"] == "sessionwatch.history"
    history = tmp_path / "history.jsonl"
    history.write_text(exported, encoding="utf-8")
    code, out, _ = run(capsys, "import", str(history), "--db", target, "--json")
    assert code == 0
    assert json.loads(out)["signals"] == 2
    assert run(capsys, "export", "--db", target)[1] == exported
    for db in (source, target):
        assert run(capsys, "notices", MANAGER, "--db", db)[1].count("changesSince") == 1
    assert run(capsys, "audit", "--db", target)[0] == 0


@pytest.mark.usefixtures("checking")
def test_a_bad_history_is_one_line_naming_the_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    seed(source)
    lines = run(capsys, "export", "--db", source)[1].splitlines()
    lines[2] = lines[2].replace('"version":', '"version":"x","was":')
    history = tmp_path / "bad.jsonl"
    history.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "import", str(history), "--db", target)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("sessionwatch: error: FILE: line 3:")
    # the refused import created nothing: the target is still not a store
    assert not (tmp_path / "b.db").exists()
    code, _, err = run(capsys, "list", "--db", target)
    assert code == 2
    assert "--db: no store at" in err


def test_importing_into_a_store_with_history_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    seed(source)
    history = tmp_path / "history.jsonl"
    history.write_text(run(capsys, "export", "--db", source)[1], encoding="utf-8")
    code, _, err = run(capsys, "import", str(history), "--db", source)
    assert code == 2
    assert "already holds history" in err
    code, _, err = run(capsys, "import", str(tmp_path / "absent.jsonl"), "--db", source)
    assert code == 2
    assert "no such file" in err
