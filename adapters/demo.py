"""`sessionwatch demo` (SPEC §14): a manager, two children and a human, played on a real SQLite file.

Shell code only: the story drives the public `SessionWatch` API and prints what each step did.
Re-runnable: without a URL it resets its own file (`./sessionwatch-demo.db`); with one it keeps the
store and uses fresh child keys and run ids (a short run token), so dedupe keys never collide.
"""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sessionwatch.adapters.store import StoreError
from sessionwatch.adapters.urls import InvalidStoreUrl, parse_url
from sessionwatch.adapters.watch import SessionWatch, open_watch
from sessionwatch.domain.signals import Actor, classify_actor
from sessionwatch.projections.models import Signal

DEMO_PATH = "sessionwatch-demo.db"
"""The demo's own file, in the working directory; deleted and recreated by every default run."""

_SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")

MANAGER = "agent:main:main"


@dataclass(frozen=True)
class DemoReport:
    """What the demo showed: the reconciliations (§7.1 objects), the session list, the closing check."""

    url: str
    run: str
    reconciliations: tuple[dict[str, Any], ...]
    sessions: tuple[dict[str, Any], ...]
    gated_turn_recorded: bool
    read_models_identical: bool

    def to_json(self) -> dict[str, Any]:
        """The one JSON object `sessionwatch demo --json` prints."""
        return {
            "store": self.url,
            "run": self.run,
            "reconciliations": list(self.reconciliations),
            "sessions": list(self.sessions),
            "gatedTurnRecorded": self.gated_turn_recorded,
            "readModelsIdentical": self.read_models_identical,
        }


def demo_url(db_url: str | None) -> tuple[str, bool]:
    """The store URL to play on and whether it is the demo's own (reset) file.

    The story restarts its store, so it needs a file: `memory://` is refused.
    """
    if db_url is None:
        return f"sqlite:///{DEMO_PATH}", True
    if parse_url(db_url).scheme != "sqlite":
        raise InvalidStoreUrl("url: the demo restarts its store, so it needs a SQLite file, not memory://")
    return db_url, False


def _reset_demo_file() -> None:
    for suffix in _SQLITE_SIDE_FILES:
        path = Path(DEMO_PATH + suffix)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot reset the demo file {path}: {exc}") from exc


def _run_id(child: str) -> str:
    """The child's run id, unique per demo run because the child key carries the run token."""
    return "run-" + child.rsplit(":", 1)[-1]


def _seq(signal: Signal | None) -> str:
    return f"#{signal.sequence}" if signal is not None else "nothing recorded"


def _require(signal: Signal | None, step: str) -> Signal:
    if signal is None:
        raise StoreError(f"demo: {step} was not recorded (see the sessionwatch log)")
    return signal


def run_demo(db_url: str | None, out: TextIO, *, as_json: bool = False) -> DemoReport:
    """Play the story on `db_url` (None: the demo's own file) and print it to `out`.

    Text by default; with `as_json` only the one `DemoReport.to_json()` object is printed.
    """
    url, own_file = demo_url(db_url)
    if own_file:
        _reset_demo_file()
    run = uuid.uuid4().hex[:8]
    researcher = f"agent:main:subagent:researcher-{run}"
    writer = f"agent:main:subagent:writer-{run}"
    bystander = f"agent:main:telegram:direct:bob-{run}"

    def say(line: str) -> None:
        if not as_json:
            print(line, file=out)

    watch = open_watch(url)
    try:
        where = "a fresh file, reset on every run" if own_file else "kept for inspection"
        say(f"sessionwatch demo on {url} ({where}), run {run}")
        spawns = _story(watch, say, researcher=researcher, writer=writer)
        gated = _gated_turn(watch, say, bystander)
        _after_the_fact(watch, say, researcher=researcher, writer=writer)
    finally:
        watch.close()

    watch = open_watch(url)
    try:
        head = watch.session_status(researcher).state_version
        say(f"restart: store closed and reopened from the file; {researcher} still at stateVersion {head}")
        reconciliations = []
        for child, spawn in ((researcher, spawns[0]), (writer, spawns[1])):
            status = watch.session_status(child, changes_since=spawn).to_json()
            reconciliations.append(status)
            say(f"{MANAGER} reconciles {child}: session_status changesSince {spawn} (its spawn)")
            say(json.dumps(status, indent=2))
        sessions = tuple(row.to_json() for row in watch.sessions_list())
        say("sessions_list:")
        for row in sessions:
            version = f"  stateVersion {row['stateVersion']}" if "stateVersion" in row else ""
            say(f"  {row['sessionKey']}{version}")
        identical = watch.rebuild_read_model() == watch.store.read_model()
        say(f"read models rebuilt from the event store: {'identical' if identical else 'DIFFERENT'}")
        db_option = DEMO_PATH if own_file else url
        say(f"inspect: sessionwatch status {researcher} --since {spawns[0]} --db {shlex.quote(db_option)}")
    finally:
        watch.close()

    report = DemoReport(
        url=url,
        run=run,
        reconciliations=tuple(reconciliations),
        sessions=sessions,
        gated_turn_recorded=gated,
        read_models_identical=identical,
    )
    if as_json:
        print(json.dumps(report.to_json(), indent=2), file=out)
    return report


def _story(
    watch: SessionWatch, say: Callable[[str], None], *, researcher: str, writer: str
) -> tuple[int, int]:
    """The manager spawns two children and a human steps into one; returns the spawn sequences."""
    watch.upsert_session(MANAGER)
    say(f"{MANAGER} is the manager session")
    spawns = []
    for child in (researcher, writer):
        signal = _require(
            watch.record_spawn(requester_key=MANAGER, child_key=child, child_run_id=_run_id(child)),
            "the spawn",
        )
        spawns.append(signal.sequence)
        say(f"manager spawns {child}: child_spawned {_seq(signal)}")
    typed = watch.record_human_message(researcher, channel="telegram")
    say(f"a human types into {researcher} via telegram: human_direct_message {_seq(typed)}")
    relayed = watch.record_human_message(
        researcher,
        channel="telegram",
        actor=classify_actor(provenance_kind="inter_session", source_session_key=MANAGER),
    )
    say(f"the manager's own sessions_send turn into {researcher}: {_seq(relayed)} (agents are not humans)")
    goal = watch.record_goal_changed(MANAGER, summary="goal updated", actor=Actor.human())
    say(f"a human changes the manager's goal: goal_changed {_seq(goal)}")
    return spawns[0], spawns[1]


def _gated_turn(watch: SessionWatch, say: Callable[[str], None], bystander: str) -> bool:
    """An ordinary session nobody watches: a human turn writes nothing (SPEC §4)."""
    watch.upsert_session(bystander)
    turn = watch.record_human_message(bystander, channel="telegram")
    head = watch.session_status(bystander).state_version
    verdict = "gated, nothing written" if turn is None else f"recorded {_seq(turn)}"
    say(f"a human types into {bystander} (nobody watches it): {verdict}; stateVersion {head}")
    return turn is not None


def _after_the_fact(watch: SessionWatch, say: Callable[[str], None], *, researcher: str, writer: str) -> None:
    """A child run fails and both children are compacted: log-only history for reconciliation."""
    failed = watch.record_run_terminal(
        child_key=writer, run_id=_run_id(writer), requester_key=MANAGER, outcome="error"
    )
    say(f"{writer}'s run fails: run_failed {_seq(failed)} (outcome error)")
    compactions = [
        watch.record_compacted(child, operation_id=f"compact-{_run_id(child)}")
        for child in (researcher, writer)
    ]
    say(f"both children are compacted: compacted {', '.join(_seq(c) for c in compactions)}")
