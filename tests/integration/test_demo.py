"""`sessionwatch demo`: the story runs on a real SQLite file, re-runs, restarts and reconciles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sessionwatch
from sessionwatch.adapters.cli import main

SCRIPT = Path(sys.executable).parent / "sessionwatch"
CLOSING_LINE = "read models rebuilt from the event store: identical"


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object printed in `text`, each starting at the beginning of a line."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = 0
    while position < len(text):
        if text.startswith("{", position):
            value, position = decoder.raw_decode(text, position)
            assert isinstance(value, dict)
            found.append(value)
            continue
        newline = text.find("\n", position)
        if newline == -1:
            break
        position = newline + 1
    return found


def reconciliations(text: str) -> list[dict[str, Any]]:
    return [obj for obj in json_objects(text) if "stateChanges" in obj]


def run_demo(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["demo", *argv])
    captured = capsys.readouterr()
    assert (code, captured.err) == (0, "")
    return captured.out


def run_process(command: list[str], *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    return subprocess.run(
        [*command, *argv], capture_output=True, text=True, cwd=cwd, env=env, check=False, timeout=120
    )


def assert_reconciliation(status: dict[str, Any]) -> None:
    """A §7.1 object with a delta: the head is the last change and no history is missing."""
    assert set(status) == {"sessionKey", "stateVersion", "stateChanges"}
    changes = status["stateChanges"]
    assert set(changes) == {"events", "truncated", "earliestAvailableSequence", "historyGap"}
    assert changes["events"]
    assert status["stateVersion"] == changes["events"][-1]["sequence"]
    assert changes["historyGap"] is False
    assert changes["truncated"] is False


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SESSIONWATCH_URL", raising=False)
    return tmp_path


def test_the_demo_runs_twice_on_its_own_file_and_reconciles_each_time(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    first = run_demo(capsys)
    second = run_demo(capsys)

    for out in (first, second):
        found = reconciliations(out)
        assert len(found) == 2
        for status in found:
            assert_reconciliation(status)
        assert CLOSING_LINE in out.splitlines()
    # the demo's own file is reset: the second run starts from sequence 1 again
    assert [s["stateChanges"]["events"][0]["sequence"] for s in reconciliations(second)] == [
        s["stateChanges"]["events"][0]["sequence"] for s in reconciliations(first)
    ]
    assert (in_tmp / "sessionwatch-demo.db").is_file()
    assert not (in_tmp / "sessionwatch.db").exists()


def test_the_demo_runs_twice_on_the_same_db_file_and_keeps_both_stories(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "kept.db")
    first = reconciliations(run_demo(capsys, "--db", db))
    second = reconciliations(run_demo(capsys, "--db", db))

    for status in (*first, *second):
        assert_reconciliation(status)
    assert {s["sessionKey"] for s in first}.isdisjoint(s["sessionKey"] for s in second)
    assert min(s["stateVersion"] for s in second) > max(s["stateVersion"] for s in first)
    with sessionwatch.open(db) as watch:
        for status in (*first, *second):
            assert watch.session_status(status["sessionKey"]).state_version == status["stateVersion"]


def test_the_reconciliation_shows_the_human_turn_and_the_failed_run_after_the_spawns(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    researcher, writer = reconciliations(run_demo(capsys))

    assert [(e["kind"], e["actorType"], e["summary"]) for e in researcher["stateChanges"]["events"]] == [
        ("human_direct_message", "human", "human message via telegram"),
        ("compacted", "system", "session compacted"),
    ]
    failed, compacted = writer["stateChanges"]["events"]
    assert (failed["kind"], failed["payload"]) == ("run_failed", {"outcome": "error"})
    assert compacted["kind"] == "compacted"
    assert researcher["stateChanges"]["earliestAvailableSequence"] < failed["sequence"]


def test_the_demo_json_mode_prints_only_one_json_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    printed = json.loads(run_demo(capsys, "--json", "--db", db))

    assert printed["store"] == db
    assert printed["readModelsIdentical"] is True
    assert printed["gatedTurnRecorded"] is False
    assert len(printed["reconciliations"]) == 2
    for status in printed["reconciliations"]:
        assert_reconciliation(status)
    keys = {row["sessionKey"] for row in printed["sessions"]}
    assert "agent:main:main" in keys
    assert {s["sessionKey"] for s in printed["reconciliations"]} <= keys


def test_the_gated_human_turn_leaves_its_session_at_state_version_zero(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "demo.db")
    printed = json.loads(run_demo(capsys, "--db", db, "--json"))

    unwatched = [row for row in printed["sessions"] if ":telegram:direct:" in row["sessionKey"]]
    assert len(unwatched) == 1
    assert "stateVersion" not in unwatched[0]
    with sessionwatch.open(db) as watch:
        status = watch.session_status(unwatched[0]["sessionKey"], changes_since=0)
        assert status.state_version == 0
        assert status.state_changes is not None
        assert status.state_changes.events == ()


def test_the_demo_never_writes_the_default_store_nor_sessionwatch_url(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONWATCH_URL", f"sqlite:///{in_tmp / 'production.db'}")
    run_demo(capsys)

    assert sorted(p.name for p in in_tmp.iterdir() if p.name.endswith(".db")) == ["sessionwatch-demo.db"]


def test_the_demo_on_a_memory_store_is_refused_with_one_line(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    code = main(["demo", "--db", "memory://"])
    captured = capsys.readouterr()

    assert code == 2
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("sessionwatch: error: url: the demo restarts its store")
    assert list(in_tmp.iterdir()) == []


def test_the_demo_in_a_missing_directory_is_refused_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(["demo", "--db", str(tmp_path / "missing" / "demo.db")])
    captured = capsys.readouterr()

    assert (code, captured.out) == (2, "")
    assert len(captured.err.splitlines()) == 1
    assert "does not exist" in captured.err


def test_the_demo_runs_twice_as_python_m_sessionwatch(tmp_path: Path) -> None:
    runs = [run_process([sys.executable, "-m", "sessionwatch"], "demo", cwd=tmp_path) for _ in range(2)]

    for done in runs:
        assert (done.returncode, done.stderr) == (0, "")
        found = reconciliations(done.stdout)
        assert found
        for status in found:
            assert_reconciliation(status)
        assert CLOSING_LINE in done.stdout.splitlines()


def test_the_installed_console_script_runs_the_demo_in_json_mode_twice_on_one_file(tmp_path: Path) -> None:
    assert SCRIPT.is_file(), f"the console script is not installed next to {sys.executable}"
    runs = [run_process([str(SCRIPT)], "--json", "demo", "--db", "kept.db", cwd=tmp_path) for _ in range(2)]

    for done in runs:
        assert (done.returncode, done.stderr) == (0, "")
        printed = json.loads(done.stdout)
        assert printed["readModelsIdentical"] is True
        for status in printed["reconciliations"]:
            assert_reconciliation(status)
    assert (tmp_path / "kept.db").is_file()
