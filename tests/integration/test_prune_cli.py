"""`sessionwatch prune` (SPEC §14, §8): text and JSON reports, options, archive, and bad input.

The command runs on the system clock, so the store is seeded through a fake clock set relative to
the real now: old signals occurred 40 days ago, recent ones a day ago.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from auditing import assert_audit_clean
from cli_runs import Outcome

import sessionwatch
from sessionwatch import Actor, Retention, SessionWatch
from sessionwatch.adapters.stores.archive import read_archive
from sessionwatch.cli.cli import main
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.testing import FakeClock

CHILD = "agent:main:subagent:child"
WORKER = "agent:main:worker"
MANAGER = "agent:main:main"
WATCHER = "agent:main:coordinator"
SCRIPT = Path(sys.executable).parent / "sessionwatch"
DAY_MS = 86_400_000

SEEDING = Retention(days=3650)
"""The seeding never prunes what the command is meant to prune."""


@dataclass(frozen=True)
class Seeded:
    old: list[int]  # occurred 40 days ago: CHILD x3, WORKER x2
    recent: list[int]  # occurred a day ago: CHILD x2, MANAGER x1
    heads: dict[str, int]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    code = main(list(argv))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def run_process(*argv: str, cwd: Path) -> Outcome:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    done = subprocess.run([*argv], capture_output=True, text=True, cwd=cwd, env=env, check=False, timeout=120)
    return Outcome(done.returncode, done.stdout, done.stderr)


def assert_one_line_error(outcome: Outcome) -> str:
    assert outcome.code == 2, outcome
    assert outcome.out == ""
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("sessionwatch: error: ")
    assert lines[0].removeprefix("sessionwatch: error: ").strip()
    assert "Traceback" not in outcome.err
    return lines[0]


def goal(watch: SessionWatch, key: str) -> int:
    return watch.record(key, kind="goal_changed", actor=Actor.system(), summary="goal updated").sequence


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


@pytest.fixture
def url(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.fixture
def seeded(url: str) -> Seeded:
    clock = FakeClock(datetime.now(UTC) - timedelta(days=40))
    with sessionwatch.open(url, clock=clock, retention=SEEDING) as watch:
        watch.upsert_session(MANAGER)
        watch.watch(WATCHER, WORKER)  # idle for 40 days: it expires
        old = [goal(watch, CHILD), goal(watch, WORKER), goal(watch, CHILD), goal(watch, WORKER)]
        old.append(goal(watch, CHILD))
        clock.advance(days=39)
        recent = [goal(watch, CHILD), goal(watch, MANAGER), goal(watch, CHILD)]
        heads = {key: watch.session_status(key).state_version for key in (CHILD, WORKER, MANAGER)}
    return Seeded(old, recent, heads)


def retained(url: str) -> list[int]:
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        model = watch.store.read_model()
    return sorted(s.sequence for log in model.signals.values() for s in log)


def snapshot(url: str) -> tuple[ReadModel, int, int | None]:
    """Everything a command could have written: read models, stored events, the last prune time."""
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        return watch.store.read_model(), watch.store.stored_event_count(), watch.store.last_prune_ms()


# ----------------------------------------------------------------------------------- the report


def test_prune_prints_one_line_saying_what_it_removed(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded
) -> None:
    outcome = cli(capsys, "prune", "--db", url)

    assert outcome.code == 0
    assert outcome.err == ""
    lines = outcome.out.splitlines()
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("prune: removed 5 signals (older than ")
    assert "at or below #0" in line
    assert "stamped 2 watermarks" in line
    assert "expired 1 cursor," in line
    assert line.endswith("archived 0")
    assert retained(url) == seeded.recent


def test_prune_json_reports_the_cutoffs_and_counts_in_camel_case(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded
) -> None:
    outcome = cli(capsys, "--json", "prune", "--db", url)

    assert outcome.code == 0
    assert outcome.err == ""
    report = json.loads(outcome.out)
    at = report.pop("at")
    assert isinstance(at, int)
    assert report.pop("occurredBefore") == at - 30 * DAY_MS
    events_deleted = report.pop("eventsDeleted")
    assert events_deleted > 0
    assert report == {
        "ran": True,
        "throughSequence": 0,
        "signalsRemoved": len(seeded.old),
        "sessionsStamped": 2,
        "cursorsExpired": 1,
        "archived": 0,
    }


def test_prune_keeps_heads_and_stamps_watermarks(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded
) -> None:
    assert cli(capsys, "prune", "--db", url).code == 0

    with sessionwatch.open(url, sweep_on_open=False) as watch:
        for key, head in seeded.heads.items():
            assert watch.session_status(key).state_version == head
        worker = watch.session_status(WORKER, changes_since=0).state_changes
        assert worker is not None
        assert worker.events == ()
        assert worker.history_gap is True
        assert worker.earliest_available_sequence == seeded.heads[WORKER] + 1
        child = watch.session_status(CHILD, changes_since=seeded.old[-1]).state_changes
        assert child is not None
        assert child.history_gap is False
        assert [c.sequence for c in child.events] == [seeded.recent[0], seeded.recent[2]]
        assert watch.cursor(WATCHER, WORKER) is None
        assert_audit_clean(watch)


@pytest.mark.parametrize("db_first", [True, False], ids=["db-before", "db-after"])
def test_prune_accepts_db_before_or_after_the_subcommand(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded, *, db_first: bool
) -> None:
    argv = ["--db", url, "prune"] if db_first else ["prune", "--db", url]

    outcome = cli(capsys, *argv, "--json")

    assert outcome.code == 0
    assert json.loads(outcome.out)["signalsRemoved"] == len(seeded.old)
    assert retained(url) == seeded.recent


def test_prune_max_signals_keeps_the_newest_globally(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded
) -> None:
    outcome = cli(capsys, "--json", "prune", "--db", url, "--max-signals", "2")

    assert outcome.code == 0
    report = json.loads(outcome.out)
    assert report["throughSequence"] == seeded.recent[0]
    assert report["signalsRemoved"] == len(seeded.old) + 1
    assert retained(url) == seeded.recent[1:]


def test_prune_days_sets_the_age_window(capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded) -> None:
    kept = cli(capsys, "--json", "prune", "--db", url, "--days", "45")
    assert json.loads(kept.out)["signalsRemoved"] == 0
    assert retained(url) == sorted(seeded.old + seeded.recent)

    outcome = cli(capsys, "--json", "prune", "--db", url, "--days", "0.5")

    assert outcome.code == 0
    report = json.loads(outcome.out)
    assert report["occurredBefore"] == report["at"] - DAY_MS // 2
    assert report["signalsRemoved"] == len(seeded.old) + len(seeded.recent)
    assert retained(url) == []


def test_prune_with_nothing_to_remove_says_so(capsys: pytest.CaptureFixture[str], url: str) -> None:
    with sessionwatch.open(url) as watch:
        goal(watch, CHILD)

    outcome = cli(capsys, "prune", "--db", url)

    assert outcome.code == 0
    assert outcome.out.startswith("prune: removed 0 signals ")
    assert "stamped 0 watermarks, expired 0 cursors, deleted 0 stored events, archived 0" in outcome.out


# ---------------------------------------------------------------------------------------- archive


def test_prune_archive_appends_exactly_the_pruned_signals(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded, tmp_path: Path
) -> None:
    archive = tmp_path / "pruned.jsonl"

    outcome = cli(capsys, "--json", "prune", "--db", url, "--archive", str(archive), "--max-signals", "2")

    assert outcome.code == 0
    gone = sorted(seeded.old + seeded.recent[:1])
    assert json.loads(outcome.out)["archived"] == len(gone)
    lines = read_archive(archive)
    assert all(line["type"] == "session.signal_recorded.v1" for line in lines)
    sequences = []
    for line in lines:
        data = line["data"]
        assert isinstance(data, dict)
        sequences.append(data["sequence"])
    assert sequences == gone
    assert set(sequences).isdisjoint(retained(url))
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600


def test_prune_archive_text_output_counts_the_archived_signals(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded, tmp_path: Path
) -> None:
    archive = tmp_path / "pruned.jsonl"

    outcome = cli(capsys, "prune", "--archive", str(archive), "--db", url)

    assert outcome.code == 0
    assert outcome.out.rstrip("\n").endswith(f"archived {len(seeded.old)}")
    assert len(archive.read_bytes().splitlines()) == len(seeded.old)


# ------------------------------------------------------------------------------------ bad input


@pytest.mark.usefixtures("seeded")
@pytest.mark.parametrize("days", ["abc", "", "0", "-1", "nan", "inf", "-inf", "1e309"])
def test_a_bad_days_value_is_one_error_line_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path, days: str
) -> None:
    archive = tmp_path / "pruned.jsonl"
    before = snapshot(url)

    outcome = cli(capsys, "prune", "--db", url, f"--days={days}", "--archive", str(archive))

    assert_one_line_error(outcome)
    assert snapshot(url) == before
    assert not archive.exists()


def test_a_window_too_large_to_represent_is_never_an_internal_error(
    capsys: pytest.CaptureFixture[str], url: str, seeded: Seeded
) -> None:
    outcome = cli(capsys, "--json", "prune", "--db", url, "--days", "1e300")

    if outcome.code == 0:  # honoured: nothing is old enough
        assert json.loads(outcome.out)["signalsRemoved"] == 0
        assert retained(url) == sorted(seeded.old + seeded.recent)
    else:  # or refused as bad input
        assert_one_line_error(outcome)


@pytest.mark.usefixtures("seeded")
@pytest.mark.parametrize("max_signals", ["abc", "", "0", "-5", "1.5", "1e3"])
def test_a_bad_max_signals_value_is_one_error_line_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path, max_signals: str
) -> None:
    archive = tmp_path / "pruned.jsonl"
    before = snapshot(url)

    outcome = cli(capsys, "prune", f"--max-signals={max_signals}", "--db", url, "--archive", str(archive))

    line = assert_one_line_error(outcome)
    assert line.startswith("sessionwatch: error: --max-signals: "), line
    assert snapshot(url) == before
    assert not archive.exists()


def test_pruning_a_missing_store_is_an_error_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "missing.db"

    outcome = cli(capsys, "prune", "--db", f"sqlite:///{missing}")

    line = assert_one_line_error(outcome)
    assert str(missing) in line
    assert not missing.exists()
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_prune_option_is_one_error_line(capsys: pytest.CaptureFixture[str], url: str) -> None:
    with sessionwatch.open(url):
        pass

    assert_one_line_error(cli(capsys, "prune", "--db", url, "--max-signal", "3"))


# ------------------------------------------------------------------------------ as real processes


def test_the_installed_script_prunes_and_prints_json(url: str, seeded: Seeded, tmp_path: Path) -> None:
    outcome = run_process(str(SCRIPT), "prune", "--json", "--db", url, cwd=tmp_path)

    assert outcome.code == 0, outcome.err
    assert outcome.err == ""
    assert json.loads(outcome.out)["signalsRemoved"] == len(seeded.old)
    assert retained(url) == seeded.recent


@pytest.mark.usefixtures("seeded")
def test_python_dash_m_reports_bad_input_on_one_line(url: str, tmp_path: Path) -> None:
    before = snapshot(url)

    outcome = run_process(
        sys.executable, "-m", "sessionwatch", "prune", "--days", "zero", "--db", url, cwd=tmp_path
    )

    assert_one_line_error(outcome)
    assert snapshot(url) == before
