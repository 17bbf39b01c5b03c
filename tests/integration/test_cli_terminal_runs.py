"""`--notify-terminal-runs` on the command line: the store opens with a run's end notifying watchers.

A store written with the setting audits clean with the flag, and reports the cursors a run's end
moved without it: the setting is the opener's, and every command must agree with the host.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli

import sessionwatch

CHILD = "agent:main:subagent:child"
MANAGER = "agent:main:main"


@pytest.fixture
def written(tmp_path: Path) -> str:
    """A SQLite store a host wrote with terminal runs notifying: one run's end left a notice."""
    url = f"sqlite:///{tmp_path / 'state.db'}"
    with sessionwatch.open(url, notify_terminal_runs=True) as watch:
        watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="r1")
        watch.record_run_terminal(child_key=CHILD, run_id="r1", requester_key=MANAGER, outcome="ok")
    return url


def test_the_audit_with_the_flag_is_clean_on_a_store_written_with_the_setting(
    capsys: pytest.CaptureFixture[str], written: str
) -> None:
    outcome = cli(capsys, "audit", "--db", written, "--notify-terminal-runs", "--json")
    assert outcome.code == 0, outcome.out
    assert json.loads(outcome.out)["ok"] is True


def test_the_audit_without_the_flag_reports_the_cursor_a_runs_end_moved(
    capsys: pytest.CaptureFixture[str], written: str
) -> None:
    outcome = cli(capsys, "--json", "audit", "--db", written)
    assert outcome.code == 1
    kinds = {v["kind"] for v in json.loads(outcome.out)["violations"]}
    assert "notice_log_only" in kinds


def test_a_run_recorded_through_the_cli_with_the_flag_notifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    with sessionwatch.open(url) as watch:
        watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="r1")
    argv = ["record", "run_failed", CHILD, "--summary", "child run failed", "--actor", "system"]
    assert cli(capsys, "--notify-terminal-runs", *argv, "--db", url).code == 0
    with sessionwatch.open(url, notify_terminal_runs=True) as watch:
        assert [n.target for n in watch.pending_notices(MANAGER)] == [CHILD]
