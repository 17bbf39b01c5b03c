"""`sessionwatch demo`: a manager, two children and a human, played on a real SQLite file.

Shell code only: the story drives the public `SessionWatch` API and tells each step in plain words,
in about one screen (notice lines byte-exact, indented); `verbose` adds every reconciliation's and
the history's full JSON. The manager spawns two children; a human types into one three times (one
notice, however many changes); through `SessionTools` the manager lists its children and reads one's
sanitized history; a human changes the other child's goal (a second notice); that child's run fails
(kept in its history, no notice); the manager reads its notices and catches up, and a human types
again before it marks them read (exactly one follow-up notice); the store restarts, the start-up
sweep publishes the follow-up again and wakes the manager, which drains it; an adopted Claude Code
and an adopted Codex session show that only what a person typed is a human turn; the read models
rebuilt from the stored events must be identical to the stored ones (else the demo exits 1).
Re-runnable: without a URL it resets its own file (`./sessionwatch-demo.db`); with one it keeps the
store and uses fresh child keys and run ids (a short run token), so dedupe keys never collide.
"""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.adapters.entry.watch_open import open_watch
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.urls import InvalidStoreUrl, parse_url
from sessionwatch.adapters.tools.session_tools import SessionTools
from sessionwatch.cli.cli_codes import DEMO_PATH
from sessionwatch.cli.demo_host import DemoModels, DemoRuntime, DemoTranscripts, run_id_of
from sessionwatch.cli.demo_upstream import upstream_step
from sessionwatch.domain.signals import Actor, classify_actor
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.projections.models import Notice, Signal

_SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")

MANAGER = "agent:main:main"
_HUMAN_TURNS = 3


Json = dict[str, Any]


@dataclass(frozen=True)
class DemoReport:
    """What the demo showed, step by step, and the closing check (`sessionwatch demo --json`)."""

    url: str
    run: str
    children: tuple[str, str]
    notices_after_turns: tuple[Json, ...]
    tools: Json
    notices: tuple[Json, ...]
    reconciliations: tuple[Json, ...]
    acknowledged: tuple[Json, ...]
    follow_ups: tuple[Json, ...]
    sweep: Json
    wakes: tuple[Json, ...]
    drained: tuple[Json, ...]
    follow_up_reconciliation: Json
    pending_at_end: tuple[Json, ...]
    upstream: Json
    sessions: tuple[Json, ...]
    gated_turn_recorded: bool
    read_models_identical: bool
    audit: Json

    def to_json(self) -> Json:
        """The one JSON object `sessionwatch demo --json` prints."""
        return {
            "store": self.url,
            "run": self.run,
            "manager": MANAGER,
            "children": list(self.children),
            "noticesAfterTurns": list(self.notices_after_turns),
            "tools": self.tools,
            "notices": list(self.notices),
            "reconciliations": list(self.reconciliations),
            "acknowledged": list(self.acknowledged),
            "followUps": list(self.follow_ups),
            "sweep": self.sweep,
            "wakes": list(self.wakes),
            "drained": list(self.drained),
            "followUpReconciliation": self.follow_up_reconciliation,
            "pendingAtEnd": list(self.pending_at_end),
            "upstream": self.upstream,
            "sessions": list(self.sessions),
            "gatedTurnRecorded": self.gated_turn_recorded,
            "readModelsIdentical": self.read_models_identical,
            "audit": self.audit,
        }

    @property
    def ok(self) -> bool:
        """The closing checks passed: the rebuilt read models are identical and the audit is clean."""
        return self.read_models_identical and bool(self.audit["ok"])


def demo_url(db_url: str | None) -> tuple[str, bool]:
    """The store URL to play on and whether it is the demo's own (reset) file.

    The story restarts its store, so it needs a file: `memory://` is refused.
    """
    if db_url is None:
        return f"sqlite:///{DEMO_PATH}", True
    scheme = parse_url(db_url).scheme
    if scheme != "sqlite":
        raise InvalidStoreUrl(f"url: the demo restarts its store, so it needs a SQLite file, not {scheme}://")
    return db_url, False


def _reset_demo_file() -> None:
    for suffix in _SQLITE_SIDE_FILES:
        path = Path(DEMO_PATH + suffix)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot reset the demo file {path}: {exc}") from exc


_run_id = run_id_of

_PLAIN_KINDS = {
    "human_direct_message": "a human message",
    "goal_changed": "goal changed",
    "run_failed": "run failed",
    "run_completed": "run completed",
    "child_spawned": "child started",
}


def _seq(signal: Signal | None) -> str:
    return f"#{signal.sequence}" if signal is not None else "nothing recorded"


def _require(signal: Signal | None, step: str) -> Signal:
    if signal is None:
        raise StoreError(f"demo: {step} was not recorded (see the sessionwatch log)")
    return signal


def _changes(status: Json) -> str:
    """`#3, #4 a human message; #5 goal changed`: a delta in plain words, runs of one kind together."""
    groups: list[tuple[str, list[int]]] = []
    for event in status["stateChanges"]["events"]:
        kind = _PLAIN_KINDS.get(event["kind"], event["kind"].replace("_", " "))
        outcome = (event.get("payload") or {}).get("outcome")
        kind += f" ({outcome})" if outcome else ""
        if groups and groups[-1][0] == kind:
            groups[-1][1].append(event["sequence"])
        else:
            groups.append((kind, [event["sequence"]]))
    return "; ".join(f"{', '.join(f'#{n}' for n in numbers)} {kind}" for kind, numbers in groups)


Say = Callable[[str], None]


class _Heartbeat:
    """The demo host's `Waker`: keeps every wake request and, while `live`, prints it."""

    def __init__(self, say: Say) -> None:
        self._say = say
        self.live = False
        self.requests: list[tuple[str, str]] = []

    def wake(self, watcher_key: str, reason: str) -> None:
        """One wake request: the host would now give the watcher a turn."""
        self.requests.append((watcher_key, reason))
        if self.live:
            self._say(f"     wake {watcher_key} ({reason})")

    def take(self) -> list[tuple[str, str]]:
        """The requests since the last call."""
        taken, self.requests = self.requests, []
        return taken


@dataclass(frozen=True)
class _Story:
    """The demo's sessions (fresh per run) and how it talks: `say` always, `detail` when verbose."""

    watch: SessionWatch
    say: Say
    detail: Say
    heartbeat: _Heartbeat
    researcher: str
    writer: str

    def name(self, child: str) -> str:
        """`the researcher` / `the writer`."""
        return "the researcher" if child == self.researcher else "the writer"

    def unseen(self, child: str) -> list[int]:
        """The changes of `child` its watcher has not marked read yet."""
        cursor = self.watch.cursor(MANAGER, child)
        if cursor is None or cursor.material <= cursor.last_seen:
            return []
        changes = self.watch.session_status(child, changes_since=cursor.last_seen).state_changes
        return [e.sequence for e in changes.events] if changes else []

    def show(self, notices: Sequence[Notice]) -> tuple[Json, ...]:
        """Print each notice line, byte-exact, indented; return their JSON."""
        for notice in notices:
            self.say(f"     {notice.text}")
        return tuple(notice.to_json() for notice in notices)

    def reconcile(self, child: str, since: int) -> Json:
        """`session_status(child, changes_since=since)`: one plain line, and its JSON when verbose."""
        status = self.watch.session_status(child, changes_since=since).to_json()
        self.say(
            f"     {self.name(child).removeprefix('the ')}, after #{since}: {_changes(status)}; "
            f"now at stateVersion {status['stateVersion']}"
        )
        self.detail(json.dumps(status, indent=2))
        return status


def run_demo(
    db_url: str | None,
    out: TextIO,
    *,
    as_json: bool = False,
    verbose: bool = False,
    command: str = "sessionwatch",
) -> DemoReport:
    """Play the story on `db_url` (None: the demo's own file) and print it to `out`.

    Text by default, about one screen; `verbose` adds the full JSON of each step; with `as_json`
    only the one `DemoReport.to_json()` object is printed. `command` is how the closing lines spell
    the `sessionwatch` command, so they can be pasted as printed.
    """
    url, own_file = demo_url(db_url)
    if own_file:
        _reset_demo_file()
    run = uuid.uuid4().hex[:8]
    researcher = f"agent:main:subagent:researcher-{run}"
    writer = f"agent:main:subagent:writer-{run}"

    def say(line: str) -> None:
        if not as_json:
            print(line, file=out)

    def detail(text: str) -> None:
        if verbose and not as_json:
            print(text, file=out)

    heartbeat = _Heartbeat(say)
    watch = open_watch(url, waker=heartbeat)
    try:
        heartbeat.take()  # a fresh story: what an earlier, interrupted run left is not part of it
        where = "the demo's own file, reset on every run" if own_file else "kept for inspection"
        say(f"sessionwatch demo: a manager agent, two child agents and a human, on {url}")
        say(f"({where}; run {run}). Every change gets the next number of one sequence.")
        story = _Story(watch, say, detail, heartbeat, researcher, writer)
        after_turns = _spawns_and_turns(story)
        tools = _tools_step(story, run)
        gated = _gated_turn(story, f"agent:main:telegram:direct:bob-{run}")
        _goal_and_failure(story)
        read, reconciliations, acknowledged, follow_ups = _read_reconcile_acknowledge(story)
    finally:
        watch.close()

    heartbeat.take()
    say("8. Restart: the store is closed and opened again from its file. The start-up sweep finds the")
    say("   unread follow-up, publishes it again and wakes the manager:")
    watch = open_watch(url, waker=heartbeat, sweep_on_open=False)
    try:
        heartbeat.live = True
        sweep = watch.sweep()  # exactly what open() runs on start, here with its report kept
        heartbeat.live = False
        wakes = tuple({"watcher": w, "reason": r} for w, r in heartbeat.take())
        story = _Story(watch, say, detail, heartbeat, researcher, writer)
        detail(json.dumps(sweep.to_json(), indent=2))
        drained, follow_up_status, pending = _drain_after_restart(story)
        upstream = upstream_step(watch, say, manager=MANAGER, run=run)
        sessions, identical, audit = _closing(story, run)
        _try_it(say, command, DEMO_PATH if own_file else url, researcher, drained)
    finally:
        watch.close()

    report = DemoReport(
        url=url,
        run=run,
        children=(researcher, writer),
        notices_after_turns=after_turns,
        tools=tools,
        notices=read,
        reconciliations=reconciliations,
        acknowledged=acknowledged,
        follow_ups=follow_ups,
        sweep=sweep.to_json(),
        wakes=wakes,
        drained=drained,
        follow_up_reconciliation=follow_up_status,
        pending_at_end=pending,
        upstream=upstream,
        sessions=sessions,
        gated_turn_recorded=gated,
        read_models_identical=identical,
        audit=audit,
    )
    if as_json:
        print(json.dumps(report.to_json(), indent=2), file=out)
    return report


def _try_it(say: Say, command: str, db: str, researcher: str, drained: tuple[Json, ...]) -> None:
    """Commands to look at what the story left, spelled as this command was run, so they paste."""
    store = shlex.quote(db)
    since = drained[0]["lastSeen"] if drained else 0
    say("Try it:")
    say(f"  {command} list --db {store}")
    say(f"  {command} status {researcher} --since {since} --db {store}")
    say(f"  {command} demo --verbose      # the same story with every step's full JSON")


def _closing(story: _Story, run: str) -> tuple[tuple[Json, ...], bool, Json]:
    """This run's sessions, then the closing checks: rebuilt read models identical, and the audit."""
    watch, say = story.watch, story.say
    sessions = tuple(row.to_json() for row in watch.sessions_list())
    say("10. This run's sessions; stateVersion is the number of a session's latest change:")
    for row in sessions:
        if row["sessionKey"] != MANAGER and not row["sessionKey"].endswith(f"-{run}"):
            continue
        version = f"stateVersion {row['stateVersion']}" if "stateVersion" in row else "no changes"
        say(f"     {row['sessionKey']}  {version}")
    identical = watch.rebuild_read_model() == watch.store.read_model()
    say(
        "Checks: the read models rebuilt from the stored events are "
        f"{'identical to the stored ones' if identical else 'DIFFERENT from the stored ones'};"
    )
    audit = watch.audit()
    found = len(audit.violations)
    say(
        f"the audit replayed {audit.events_replayed} events: {'clean' if audit.ok else 'VIOLATIONS'}, "
        f"{found} violation{'s' if found != 1 else ''}."
    )
    for violation in audit.violations:
        say(f"  {violation.kind}: {violation.detail}")
    return sessions, identical, audit.to_json()


def _spawns_and_turns(story: _Story) -> tuple[Json, ...]:
    """Two spawns make the manager watch both children; three human turns into one give ONE notice."""
    watch, say = story.watch, story.say
    watch.upsert_session(MANAGER)
    say(f"1. The manager ({MANAGER}) starts two children, and so watches both:")
    for child in (story.researcher, story.writer):
        spawn = watch.record_spawn(requester_key=MANAGER, child_key=child, child_run_id=_run_id(child))
        say(f"     {story.name(child)}, {child} (change {_seq(_require(spawn, 'the spawn'))})")
    turns = [
        _require(watch.record_human_message(story.researcher, channel="telegram"), "a human turn")
        for _ in range(_HUMAN_TURNS)
    ]
    say(f"2. A human types into the researcher {len(turns)} times (changes {', '.join(map(_seq, turns))}).")
    relayed = watch.record_human_message(
        story.researcher,
        channel="telegram",
        actor=classify_actor(provenance_kind="inter_session", source_session_key=MANAGER),
    )
    say(
        "   A message the manager itself sends the researcher is "
        f"{'not recorded' if relayed is None else 'recorded ' + _seq(relayed)}: an agent is not a human."
    )
    woken = len(story.heartbeat.take())
    notices = [n for n in watch.pending_notices(MANAGER) if n.target == story.researcher]
    say(
        f"   The manager is woken {'once' if woken == 1 else f'{woken} times'} and holds exactly "
        f"{len(notices)} notice for it, however many changes came:"
    )
    return story.show(notices)


def _tools_step(story: _Story, run: str) -> Json:
    """The manager lists its children and reads one's sanitized history through `SessionTools`."""
    watch, say = story.watch, story.say
    for child in (story.researcher, story.writer):
        watch.update_session(child, label=child.rsplit(":", 1)[-1].split("-")[0])
    tools = SessionTools(
        watch,
        transcripts=DemoTranscripts(story.researcher),
        runtime=DemoRuntime(),
        models=DemoModels(),
        config=ToolsConfig(visibility="tree"),
    )
    ctx = ToolContext(session_key=MANAGER, channel="telegram")
    listed = tools.sessions_list(ctx, {"search": run}).to_json()
    say("3. Through the session tools the manager lists its children (label, stateVersion):")
    for row in listed["sessions"]:
        say(f"     {row.get('label')}  stateVersion {row.get('stateVersion', 0)}")
    history = tools.sessions_history(ctx, {"sessionKey": story.researcher}).to_json()
    say(
        f"   and reads the researcher's history: {len(history['messages'])} messages, read from the host "
        "when asked and never stored;"
    )
    redacted = " and a secret token redacted" if history["contentRedacted"] else ""
    say(f"   its thinking and tool output are dropped{redacted}.")
    story.detail(json.dumps(history, indent=2, ensure_ascii=False))
    return {"sessionsList": listed, "sessionsHistory": history}


def _gated_turn(story: _Story, bystander: str) -> bool:
    """An ordinary session nobody watches: a human turn writes nothing."""
    story.watch.upsert_session(bystander)
    turn = story.watch.record_human_message(bystander, channel="telegram")
    verdict = "nothing is recorded" if turn is None else f"recorded {_seq(turn)}"
    story.say(f"4. A human types into a session nobody watches ({bystander}): {verdict}.")
    return turn is not None


def _goal_and_failure(story: _Story) -> None:
    """A human changes the writer's goal (a second notice); its run fails (kept, no notice)."""
    watch, say, writer = story.watch, story.say, story.writer
    goal = watch.record_goal_changed(writer, summary="goal updated", actor=Actor.human())
    say(f"5. A human changes the writer's goal (change {_seq(goal)}): a second notice for the manager.")
    before = len(watch.pending_notices(MANAGER))
    failed = watch.record_run_terminal(
        child_key=writer, run_id=_run_id(writer), requester_key=MANAGER, outcome="error"
    )
    extra = len(watch.pending_notices(MANAGER)) - before
    verdict = "no notice of its own" if extra == 0 else f"{extra} more notice"
    say(f"   The writer's run then fails (change {_seq(failed)}): kept in its history, {verdict}.")
    story.heartbeat.take()


def _read_reconcile_acknowledge(
    story: _Story,
) -> tuple[tuple[Json, ...], tuple[Json, ...], tuple[Json, ...], tuple[Json, ...]]:
    """Read the notices, catch up on each child, mark them read; a turn in between gives one follow-up."""
    watch, say = story.watch, story.say
    notices = watch.pending_notices(MANAGER)
    say(f"6. The manager reads its {len(notices)} notices (reading alone does not mark them read):")
    read = story.show(notices)
    say("   and catches up on each child, asking for the changes after the number in its notice:")
    reconciliations = tuple(story.reconcile(n.target, n.last_seen) for n in notices)
    late = _require(watch.record_human_message(story.researcher, channel="telegram"), "a human turn")
    say(f"7. A human types into the researcher again ({_seq(late)}) just before the manager marks them read.")
    watch.acknowledge(MANAGER, notices)
    researcher_unseen = story.unseen(story.researcher)
    caught_up = [story.name(n.target) for n in notices if not story.unseen(n.target)]
    say(
        f"   The manager marks the {len(notices)} notices read. A notice is read up to the change that "
        "raised it, never further,"
    )
    say(
        f"   so nothing is lost: {' and '.join(caught_up) or 'nobody'} is caught up, and the researcher's "
        f"later changes ({', '.join(f'#{n}' for n in researcher_unseen)}) wait in one follow-up notice:"
    )
    acknowledged = tuple(notice.to_json() for notice in notices)
    follow_ups = watch.pending_notices(MANAGER)
    shown = story.show(follow_ups)
    story.heartbeat.take()
    return read, reconciliations, acknowledged, shown


def _drain_after_restart(story: _Story) -> tuple[tuple[Json, ...], Json, tuple[Json, ...]]:
    """The follow-up survived the restart: drain it, catch up, and drain again (nothing left)."""
    watch, say = story.watch, story.say
    notices = watch.drain(MANAGER)
    say("   The manager drains it (reads it and marks it read in one step):")
    drained = story.show(notices)
    follow_up = next((n for n in notices if n.target == story.researcher), None)
    if follow_up is None:
        raise StoreError("demo: the follow-up notice did not survive the restart")
    say("   catches up:")
    status = story.reconcile(story.researcher, follow_up.last_seen)
    pending = watch.drain(MANAGER)
    verdict = "nothing left to read" if not pending else f"{len(pending)} still pending"
    say(f"   and drains again: {verdict}.")
    story.show(pending)
    story.heartbeat.take()
    return drained, status, tuple(n.to_json() for n in pending)
