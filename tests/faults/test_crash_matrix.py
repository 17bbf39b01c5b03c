"""The crash matrix (SPEC §15.2): a SIGKILL before and after every SQL statement of an operation.

Each operation (a record, a batch, a record that finds the hourly prune due, a drain, a sweep with its
forced prune, a prune) first runs once uncrashed in a child that counts its SQL statements and copies
the database after each COMMIT (tests/crashing.py). Then, for every point, a child starts from a copy
of the same base store and kills itself with SIGKILL: before statement k (for every k), right after
each COMMIT returned, and right after the operation returned. After each kill the store must hold
exactly the state of the last commit that happened before the kill, table by table, so an operation
that returned is all there and nothing partial of an unfinished one is visible; the prune archive
holds every signal the store no longer does (at least once); the audit is clean; and the reopened
store sweeps and records on.

By default a few points per operation run (the first statement, a middle one, each COMMIT, after each
COMMIT, after the return). The whole matrix, every statement of every operation:

    SESSIONWATCH_CRASH_MATRIX=full .venv/bin/pytest tests/faults/test_crash_matrix.py
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import crashing
import pytest
from auditing import assert_audit_clean
from crashing import OPERATIONS, State, Where

import sessionwatch
from sessionwatch import Actor
from sessionwatch.adapters.stores.archive import archived_signals
from sessionwatch.testing import FakeClock

pytestmark = pytest.mark.slow

FULL = os.environ.get("SESSIONWATCH_CRASH_MATRIX") == "full"
ANSWER_TIMEOUT_S = crashing.CHILD_TIMEOUT_S + 30.0
"""A deadlock guard only: a child answers in well under a second (and dies of SIGALRM if it hangs)."""
TESTS_DIR = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Point:
    """Where a child is killed (tests/crashing.py): before statement k, after commit j, or after return."""

    where: Where
    index: int

    def __str__(self) -> str:
        return f"{self.where} {self.index}" if self.where != "returned" else "returned"


@dataclass(frozen=True)
class Census:
    """What an uncrashed run did: its statements, the statement number of each COMMIT, its states."""

    statements: list[str]
    commits: list[int]
    states: list[State]
    """The store before the operation, then after each commit."""
    result: object

    def points(self, *, full: bool) -> list[Point]:
        """Every point of the operation, or the fast subset."""
        count = len(self.statements)
        befores = range(1, count + 1) if full else sorted({1, count // 2, *self.commits})
        return [
            *(Point("before", k) for k in befores),
            *(Point("after_commit", j) for j in range(1, len(self.commits) + 1)),
            Point("returned", 0),
        ]

    def expected_state(self, point: Point) -> State:
        """The state of the last commit that returned before the kill."""
        if point.where == "before":
            done = sum(1 for c in self.commits if c < point.index)
        elif point.where == "after_commit":
            done = point.index
        else:
            done = len(self.commits)
        return self.states[done]


class ForkServer:
    """`python -m crashing`: forks one child per point, answers how it ended."""

    def __init__(self, errors: Path) -> None:
        self._errors = errors.open("w", encoding="utf-8")  # a file: a chatty child can never block on it
        self._process = subprocess.Popen(
            [sys.executable, "-m", "crashing"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]),
            },
        )

    def run(self, directory: Path, operation: str, point: Point | None) -> dict[str, int]:
        """Run the operation on `directory/store.db` and return how its child ended."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        request = {
            "directory": str(directory),
            "operation": operation,
            "where": point.where if point is not None else None,
            "index": point.index if point is not None else 0,
        }
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        ready, _, _ = select.select([stdout], [], [], ANSWER_TIMEOUT_S)
        assert ready, f"the fork server did not answer within {ANSWER_TIMEOUT_S} s"
        answer = stdout.readline()
        assert answer, "the fork server died"
        parsed: dict[str, int] = json.loads(answer)
        return parsed

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=ANSWER_TIMEOUT_S)
        finally:
            if self._process.poll() is None:
                self._process.kill()
                self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._errors.close()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crash-base") / "base.db"
    crashing.build_base(path)
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    started = ForkServer(tmp_path_factory.mktemp("crash-server") / "stderr.txt")
    try:
        yield started
    finally:
        started.close()


def fresh_copy(base: Path, directory: Path) -> Path:
    directory.mkdir()
    shutil.copyfile(base, directory / "store.db")
    return directory


def census(server: ForkServer, base: Path, root: Path, operation: str) -> Census:
    """Run the operation uncrashed and read what it did."""
    directory = fresh_copy(base, root)
    assert server.run(directory, operation, None) == {"exit": 0}
    counted = json.loads((directory / crashing.STATEMENTS).read_text(encoding="utf-8"))
    commits: list[int] = counted["commits"]
    states = [
        crashing.dump(base),
        *(crashing.dump(directory / f"state-{j}.db") for j in range(1, len(commits) + 1)),
    ]
    assert crashing.dump(directory / "store.db") == states[-1], "the last commit left the final state"
    result = json.loads((directory / crashing.RESULT).read_text(encoding="utf-8"))
    return Census(counted["statements"], commits, states, result)


def signal_sequences(state: State) -> set[int]:
    return {int(str(row[0])) for row in state["sw_signals"]}


def check_point(
    server: ForkServer, base: Path, root: Path, *, operation: str, counted: Census, point: Point
) -> None:
    """Kill the operation at `point` and check the store it leaves; raise AssertionError when wrong."""
    directory = fresh_copy(base, root / str(point).replace(" ", "-"))
    assert server.run(directory, operation, point) == {"signal": signal.SIGKILL}, "the child was killed"

    killed = json.loads((directory / crashing.KILLED).read_text(encoding="utf-8"))
    assert (killed["where"], killed["index"]) == (point.where, point.index)
    if point.where == "before":
        assert killed["statement"] == counted.statements[point.index - 1], "the run hit the counted statement"
    elif point.where == "after_commit":
        assert killed["statement"] == "COMMIT"
    returned = (directory / crashing.RESULT).exists()
    assert returned is (point.where == "returned"), "only the last point lets the operation return"
    if returned:
        assert json.loads((directory / crashing.RESULT).read_text(encoding="utf-8")) == counted.result

    left = crashing.dump(directory / "store.db")
    assert left == counted.expected_state(point), "the store is exactly the last committed state"

    gone = signal_sequences(counted.states[0]) - signal_sequences(left)
    archive = directory / crashing.ARCHIVE
    archived = {s.sequence for s in archived_signals(archive)} if archive.exists() else set()
    assert gone <= archived, "no signal was deleted without being archived first"
    assert archived <= signal_sequences(counted.states[0]), "the archive holds only signals of the base"

    op = OPERATIONS[operation]
    url = crashing.url_of(directory / "store.db")
    retention = crashing.retention(directory)
    with sessionwatch.open(url, clock=FakeClock(op.at), retention=retention, sweep_on_open=False) as watch:
        assert_audit_clean(watch)
    with sessionwatch.open(url, clock=FakeClock(op.at), retention=retention) as watch:
        counter = watch.store.last_sequence()
        after = watch.record(
            crashing.OTHER, kind="goal_changed", actor=Actor.system(), summary="goal updated"
        )
        assert after.sequence == counter + 1, "the counter goes on from where the crash left it"
        assert_audit_clean(watch)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_kill_at_any_statement_leaves_exactly_the_last_committed_state(
    server: ForkServer, base: Path, tmp_path: Path, operation: str
) -> None:
    counted = census(server, base, tmp_path / "census", operation)
    again = census(server, base, tmp_path / "census-again", operation)
    assert again.statements == counted.statements, "the operation runs the same statements every time"
    assert counted.states[0] != counted.states[-1], "the operation changes the store"
    assert [counted.statements[c - 1] for c in counted.commits] == ["COMMIT"] * len(counted.commits)

    failures: list[str] = []
    points = counted.points(full=FULL)
    for point in points:
        try:
            check_point(server, base, tmp_path, operation=operation, counted=counted, point=point)
        except AssertionError as exc:
            failures.append(f"{operation} {point}: {' '.join(str(exc).split())[:400]}")
    assert not failures, "\n".join(failures)
