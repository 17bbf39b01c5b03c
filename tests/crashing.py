"""Crash points on the SQLite store (SPEC §15.2): run one operation and SIGKILL it at a chosen point.

`python -m crashing` (with `tests/` on `PYTHONPATH`) is a small fork server: it imports sessionwatch
once, then for each JSON request on stdin forks a child that opens a copy of the base store, runs one
operation and kills itself with SIGKILL at the requested point, and answers how the child ended. No
store code is changed for this: the child wraps `sqlite3.connect` so that every connection the store
opens reports each statement to a trace callback (`set_trace_callback`, called just before the
statement runs) and each commit to an overridden `commit()` (just after it returned).

A point is one of:
- `("before", k)`: killed as statement k of the operation is about to run (statements 1..k-1 ran);
- `("after_commit", j)`: killed right after the operation's j-th COMMIT returned, before anything else;
- `("returned", 0)`: killed right after the operation returned and its result was written down.

A counting run (no point) lists the statements and commits and copies the database after each commit:
the reference states a killed run must leave.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeAlias

import sessionwatch
from sessionwatch import Actor, Retention, SessionWatch, SignalInput
from sessionwatch.testing import START, FakeClock

Where: TypeAlias = Literal["before", "after_commit", "returned"]
Rows: TypeAlias = list[tuple[object, ...]]
State: TypeAlias = dict[str, Rows]
"""Every table of a database file, its rows in a canonical order."""

MANAGER = "agent:main:main"
COORDINATOR = "agent:ops:main"
WORKER = "agent:main:subagent:worker"
OTHER = "agent:main:other"
GHOST = "agent:ghost:main"
"""Watches the worker but was never registered: the sweep skips its open notice."""
NEWCOMER = "agent:main:newcomer"
"""A producer watcher with no cursor yet: the recorded signal creates its `(0, e, e)` cursor."""
GLOBAL = ("global", "main")
CAP = 3
"""The operations' signal cap: a prune at `LATE` removes by age and by the cap."""

SOON = START + timedelta(days=20, minutes=10)
"""When record, record_many and drain run: no prune is due (the last ran at +20 days)."""
LATE = START + timedelta(days=31)
"""When the sweep, the prune and the record that finds a prune due run: the first day's history expired."""

ARCHIVE = "archive.jsonl"
STATEMENTS = "statements.json"
RESULT = "result.json"
KILLED = "killed.json"
CHILD_TIMEOUT_S = 60
"""A deadlock guard only: a child that has not ended by then dies of SIGALRM (not the expected SIGKILL)."""


def url_of(path: Path) -> str:
    """The store URL of a database file."""
    return f"sqlite:///{path}"


def human(watch: SessionWatch, key: str, *, actor: Actor | None = None, agent_id: str | None = None) -> int:
    """Record a human message on `key` (strict API); its sequence."""
    return watch.record(
        key,
        kind="human_direct_message",
        actor=actor or Actor.human(),
        summary="human message via telegram",
        payload={"channel": "telegram"},
        agent_id=agent_id,
    ).sequence


def build_base(path: Path) -> None:
    """The store every crash point starts from: watchers with open notices, old and recent history.

    Day 0: a spawn seeds the manager's cursor on the worker, the coordinator, the manager and a ghost
    watch targets, humans and the system change them. Day 20: more changes (an hourly prune runs then
    and removes nothing), one by the coordinator itself, and the coordinator drains once. At `LATE`
    the day-0 signals and the manager's cursor on `global` (last updated on day 0) have expired.
    """
    clock = FakeClock()
    with sessionwatch.open(url_of(path), clock=clock) as watch:
        watch.upsert_session(MANAGER)
        watch.upsert_session(COORDINATOR)
        assert watch.record_spawn(requester_key=MANAGER, child_key=WORKER, child_run_id="run-1") is not None
        assert watch.watch(COORDINATOR, WORKER)
        watch.upsert_session(OTHER)
        assert watch.watch(MANAGER, OTHER)
        assert watch.watch(GHOST, WORKER)
        assert watch.watch(COORDINATOR, GLOBAL[0], target_agent_id=GLOBAL[1])
        assert watch.watch(MANAGER, GLOBAL[0], target_agent_id=GLOBAL[1])  # untouched after day 0: expires
        human(watch, WORKER)
        human(watch, WORKER)
        watch.record(OTHER, kind="goal_changed", actor=Actor.system(), summary="goal created")
        human(watch, GLOBAL[0], agent_id=GLOBAL[1])
        clock.advance(days=20)
        human(watch, WORKER)
        assert [n.target for n in watch.drain(COORDINATOR)] == [WORKER, GLOBAL[0]]
        human(watch, WORKER, actor=Actor.agent(COORDINATOR))
        watch.record(OTHER, kind="goal_changed", actor=Actor.system(), summary="goal updated")
        human(watch, WORKER)


# ------------------------------------------------------------------------------------ operations


@dataclass(frozen=True)
class Operation:
    """One operation of the matrix: when it runs and what it does (returning a JSON-able result)."""

    at: datetime
    run: Callable[[SessionWatch], object]


def _record(watch: SessionWatch) -> object:
    signal = watch.record(
        WORKER,
        kind="human_direct_message",
        actor=Actor.human(),
        summary="human message via telegram",
        payload={"channel": "telegram"},
        dedupe_key="crash-matrix:record",
        watchers=(NEWCOMER,),
    )
    return {"sequence": signal.sequence}


def _record_many(watch: SessionWatch) -> object:
    signals = watch.record_many(
        [
            SignalInput(session_key=OTHER, kind="goal_changed", actor=Actor.system(), summary="goal updated"),
            SignalInput(
                session_key=GLOBAL[0],
                agent_id=GLOBAL[1],
                kind="human_direct_message",
                actor=Actor.human(),
                summary="human message via slack",
                payload={"channel": "slack"},
            ),
            SignalInput(
                session_key=WORKER,
                kind="run_failed",
                actor=Actor.system(),
                summary="child run failed",
                payload={"outcome": "error"},
                run_id="run-1",
                dedupe_key="run-terminal:run-1",
            ),
        ]
    )
    return {"sequences": [s.sequence for s in signals]}


def _drain(watch: SessionWatch) -> object:
    return {"notices": [[n.target, n.last_seen] for n in watch.drain(MANAGER)]}


def _sweep(watch: SessionWatch) -> object:
    report = watch.sweep()
    assert report.prune is not None
    return {"refrozen": report.refrozen, "removed": report.prune.signals_removed}


def _prune(watch: SessionWatch) -> object:
    report = watch.prune()
    return {"removed": report.signals_removed, "expired": report.cursors_expired}


OPERATIONS: dict[str, Operation] = {
    "record": Operation(SOON, _record),
    "record_many": Operation(SOON, _record_many),
    "record_then_due_prune": Operation(LATE, _record),
    "drain": Operation(SOON, _drain),
    "sweep": Operation(LATE, _sweep),
    "prune": Operation(LATE, _prune),
}
"""What the matrix crashes, by name. A record at `LATE` finds the hourly prune due: two transactions."""


def retention(directory: Path) -> Retention:
    """The operations' retention: the default window, a small cap, and an archive in `directory`."""
    return Retention(max_signals=CAP, archive=str(directory / ARCHIVE))


# --------------------------------------------------------------------------------------- states


def dump(path: Path) -> State:
    """Every table of the database file with its rows, sorted: what "the same store" means here."""
    with closing(sqlite3.connect(path)) as connection:
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            ).fetchall()
        ]
        return {
            table: sorted(
                (tuple(row) for row in connection.execute(f'SELECT * FROM "{table}"').fetchall()),
                key=repr,
            )
            for table in tables
        }


# ------------------------------------------------------------------------------ the forked child


class _Probe:
    """What the child's connections report to: statements before they run, commits after they return."""

    def __init__(self, directory: Path, where: Where | None, index: int) -> None:
        self.directory = directory
        self.where = where
        self.index = index
        self.armed = False
        self.statements: list[str] = []
        self.commits: list[int] = []
        """The statement number of each COMMIT that returned."""
        self.connect = sqlite3.connect

    def statement(self, sql: str) -> None:
        if not self.armed:
            return
        self.statements.append(sql)
        if self.where == "before" and len(self.statements) == self.index:
            self.die({"statement": sql})

    def committed(self) -> None:
        if not self.armed:
            return
        self.commits.append(len(self.statements))
        if self.where is None:  # counting: keep the reference state this commit left
            self._copy(self.directory / f"state-{len(self.commits)}.db")
        elif self.where == "after_commit" and len(self.commits) == self.index:
            self.die({"statement": self.statements[-1]})

    def _copy(self, target: Path) -> None:
        with (
            closing(self.connect(self.directory / "store.db")) as source,
            closing(self.connect(target)) as copy,
        ):
            source.backup(copy)

    def die(self, detail: dict[str, object]) -> None:
        """Say where, then SIGKILL this process: no cleanup, no close, no checkpoint."""
        _write_json(self.directory / KILLED, {"where": self.where, "index": self.index, **detail})
        os.kill(os.getpid(), signal.SIGKILL)

    def connection_class(self) -> type[sqlite3.Connection]:
        probe = self

        class ProbedConnection(sqlite3.Connection):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.set_trace_callback(probe.statement)

            def commit(self) -> None:
                super().commit()
                probe.committed()

        return ProbedConnection


@contextmanager
def _probed_connections(probe: _Probe) -> Iterator[None]:
    """Every `sqlite3.connect` in this process makes a probed connection (the store calls it by name)."""
    factory = probe.connection_class()

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return probe.connect(*args, **kwargs, factory=factory)

    sqlite3.connect = connect  # type: ignore[assignment]  # the child's own interpreter, by design
    try:
        yield
    finally:
        sqlite3.connect = probe.connect


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value), encoding="utf-8")


def run_operation(directory: Path, name: str, where: Where | None, index: int) -> None:
    """In the forked child: open `directory/store.db`, run the operation, die at the point (or count)."""
    operation = OPERATIONS[name]
    probe = _Probe(directory, where, index)
    with _probed_connections(probe):
        watch = sessionwatch.open(
            url_of(directory / "store.db"),
            clock=FakeClock(operation.at),
            retention=retention(directory),
            sweep_on_open=False,
        )
        probe.armed = True
        result = operation.run(watch)
        probe.armed = False
        _write_json(directory / RESULT, result)
        if where == "returned":
            probe.die({"statement": None})
        _write_json(directory / STATEMENTS, {"statements": probe.statements, "commits": probe.commits})
        watch.close()


def serve() -> None:
    """The fork server: one JSON request per line in, one JSON answer per line out."""
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            signal.alarm(CHILD_TIMEOUT_S)
            code = 0
            try:
                run_operation(
                    Path(request["directory"]), request["operation"], request["where"], request["index"]
                )
            except BaseException as exc:  # noqa: BLE001 - the child reports any failure through its exit code
                sys.stderr.write(f"crash point child failed: {exc!r}\n")
                sys.stderr.flush()
                code = 1
            os._exit(code)  # never return into the server loop, nor flush its buffers twice
        _, status = os.waitpid(pid, 0)
        answer = (
            {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit": os.WEXITSTATUS(status)}
        )
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
