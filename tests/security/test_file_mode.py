"""Files the store creates are readable by their owner only (SPEC §15.2): 0o600.

That covers a new SQLite file, its `-wal` and `-shm` (SQLite gives them the database file's mode),
and the prune archive, whoever creates them: `open()`, the CLI, the demo. A file that already exists
keeps the mode its owner gave it. The tests run as root, who may read anything: they check the
mode bits, never access. They run under umask 0, so a 0o600 is the creator's choice, not the umask's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import sessionwatch
from sessionwatch import Actor, Retention, SessionWatch
from sessionwatch.cli.cli import main
from sessionwatch.testing import FakeClock

CHILD = "agent:main:subagent:child"
MANAGER = "agent:main:main"
OWNER_ONLY = 0o600


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """Umask 0: every mode bit a creator asks for is kept."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(directory: Path) -> dict[str, int]:
    return {path.name: mode(path) for path in sorted(directory.iterdir())}


def record_some(watch: SessionWatch) -> None:
    assert watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1") is not None
    watch.record(CHILD, kind="goal_changed", actor=Actor.human(), summary="goal updated")


def test_a_new_store_file_and_its_wal_and_shared_memory_files_are_owner_only(tmp_path: Path) -> None:
    with sessionwatch.open(f"sqlite:///{tmp_path / 'state.db'}") as watch:
        record_some(watch)

        assert modes(tmp_path) == {
            "state.db": OWNER_ONLY,
            "state.db-shm": OWNER_ONLY,
            "state.db-wal": OWNER_ONLY,
        }


def test_a_store_created_by_the_command_line_is_owner_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cli.db"

    code = main(["record", "goal_changed", MANAGER, "--summary", "goal created", "--db", str(db)])

    assert (code, capsys.readouterr().err) == (0, "")
    assert mode(db) == OWNER_ONLY
    assert all(mode(path) == OWNER_ONLY for path in tmp_path.iterdir())


def test_the_demo_file_is_owner_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    code = main(["demo"])

    assert code == 0
    assert capsys.readouterr().err == ""
    assert mode(tmp_path / "sessionwatch-demo.db") == OWNER_ONLY
    assert all(mode(path) == OWNER_ONLY for path in tmp_path.iterdir())


def test_a_new_prune_archive_is_owner_only(tmp_path: Path) -> None:
    archive = tmp_path / "archive" / "pruned.jsonl"
    archive.parent.mkdir()
    retention = Retention(max_signals=1, archive=str(archive))

    with sessionwatch.open(f"sqlite:///{tmp_path / 'state.db'}", retention=retention) as watch:
        record_some(watch)
        report = watch.prune()

    assert report.archived == 1
    assert modes(archive.parent) == {"pruned.jsonl": OWNER_ONLY}


def test_a_prune_archive_created_by_the_command_line_is_owner_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'state.db'}"
    with sessionwatch.open(db) as watch:
        record_some(watch)
    archive = tmp_path / "pruned.jsonl"

    code = main(["prune", "--max-signals", "1", "--archive", str(archive), "--db", db])

    assert (code, capsys.readouterr().err) == (0, "")
    assert mode(archive) == OWNER_ONLY


def test_an_existing_store_file_keeps_its_mode(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    db.touch(mode=0o640)

    with sessionwatch.open(f"sqlite:///{db}") as watch:
        record_some(watch)
        assert mode(db) == 0o640
        assert mode(tmp_path / "shared.db-wal") == 0o640  # SQLite gives its side files the file's mode
    assert mode(db) == 0o640


def test_reopening_a_store_keeps_its_mode(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sessionwatch.open(f"sqlite:///{db}") as watch:
        record_some(watch)
    db.chmod(0o644)

    with sessionwatch.open(f"sqlite:///{db}") as watch:
        watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal cleared")

    assert mode(db) == 0o644


def test_an_existing_prune_archive_keeps_its_mode(tmp_path: Path) -> None:
    archive = tmp_path / "pruned.jsonl"
    archive.write_bytes(b"")
    archive.chmod(0o640)
    retention = Retention(max_signals=1, archive=str(archive))

    with sessionwatch.open(
        f"sqlite:///{tmp_path / 'state.db'}", retention=retention, clock=FakeClock()
    ) as watch:
        record_some(watch)
        assert watch.prune().archived == 1

    assert mode(archive) == 0o640
    assert archive.read_bytes().count(b"\n") == 1
