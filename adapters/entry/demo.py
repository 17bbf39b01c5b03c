"""`sessionwatch demo` (SPEC §14): a manager, two children and a human, played on a real SQLite file.

Shell code only: the story drives the public `SessionWatch` API and prints what each step did,
one line per step (notice lines byte-exact, indented) plus the §7.1 reconciliation JSON:
the manager spawns two children (seeding its cursors); a human types into one three times (one
notice, however many changes); through `SessionTools` (with in-memory host ports defined here) the
manager lists its children and reads one's sanitized history; a human changes the other child's goal
(a second notice); that child's run fails
(log only, no notice); the manager reads its notices, reconciles each with `changesSince`, and a
human types again before it acknowledges (exactly one follow-up notice); the store restarts, the
start-up sweep re-publishes the follow-up and wakes the manager, which drains it; an adopted Claude
Code and an adopted Codex session show that only what a person typed is a human turn; the read
models rebuilt from the event store must be identical to the stored ones.
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

from sessionwatch.adapters.app.reports import SweepReport
from sessionwatch.adapters.entry.demo_upstream import upstream_step
from sessionwatch.adapters.entry.watch import SessionWatch, open_watch
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.urls import InvalidStoreUrl, parse_url
from sessionwatch.adapters.tools.session_tools import SessionTools
from sessionwatch.domain.registry import Route
from sessionwatch.domain.signals import Actor, classify_actor
from sessionwatch.domain.tools.config import ToolContext, ToolsConfig
from sessionwatch.domain.tools.ports import (
    AnnounceRequest,
    ChildRunRequest,
    Dispatch,
    DispatchRequest,
    InputProvenance,
    RunWait,
    TitleFields,
    TranscriptPage,
    Usage,
)
from sessionwatch.projections.models import Notice, Signal

DEMO_PATH = "sessionwatch-demo.db"
"""The demo's own file, in the working directory; deleted and recreated by every default run."""

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


Say = Callable[[str], None]


class _Heartbeat:
    """The demo host's `Waker`: keeps every wake request and, while `live`, prints it."""

    def __init__(self, say: Say) -> None:
        self._say = say
        self.live = False
        self.requests: list[tuple[str, str]] = []

    def wake(self, watcher_key: str, reason: str) -> None:
        """One wake request (SPEC §6.4)."""
        self.requests.append((watcher_key, reason))
        if self.live:
            self._say(f"  wake {watcher_key} ({reason})")

    def take(self) -> list[tuple[str, str]]:
        """The requests since the last call."""
        taken, self.requests = self.requests, []
        return taken


@dataclass(frozen=True)
class _Story:
    """The demo's sessions (fresh per run) and how it talks."""

    watch: SessionWatch
    say: Say
    heartbeat: _Heartbeat
    researcher: str
    writer: str

    def cursor(self, child: str) -> str:
        """The manager's cursor on `child` as `(L, N, M)`."""
        cursor = self.watch.cursor(MANAGER, child)
        if cursor is None:
            return "(no cursor)"
        return f"({cursor.last_seen}, {cursor.notified}, {cursor.material})"

    def owed(self, child: str) -> str:
        """The manager's cursor on `child` and what it still owes (SPEC §6.3)."""
        cursor = self.watch.cursor(MANAGER, child)
        if cursor is None or cursor.material <= cursor.last_seen:
            return f"cursor now {self.cursor(child)}, closed"
        changes = self.watch.session_status(child, changes_since=cursor.last_seen).state_changes
        owed = ", ".join(f"#{e.sequence}" for e in changes.events) if changes else "?"
        return f"cursor now {self.cursor(child)}, {owed} still owed"

    def show(self, notices: Sequence[Notice]) -> tuple[Json, ...]:
        """Print each notice line, byte-exact, indented; return their JSON."""
        for notice in notices:
            self.say(f"  {notice.text}")
        return tuple(notice.to_json() for notice in notices)

    def reconcile(self, child: str, since: int) -> Json:
        """`session_status(child, changes_since=since)`, printed as §7.1 JSON."""
        status = self.watch.session_status(child, changes_since=since).to_json()
        self.say(f"{MANAGER} reconciles {child}: session_status changesSince {since}")
        self.say(json.dumps(status, indent=2))
        return status


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

    def say(line: str) -> None:
        if not as_json:
            print(line, file=out)

    heartbeat = _Heartbeat(say)
    watch = open_watch(url, waker=heartbeat)
    try:
        heartbeat.take()  # a fresh story: what an earlier, interrupted run left is not part of it
        where = "a fresh file, reset on every run" if own_file else "kept for inspection"
        say(f"sessionwatch demo on {url} ({where}), run {run}")
        story = _Story(watch, say, heartbeat, researcher, writer)
        after_turns = _spawns_and_turns(story)
        tools = _tools_step(story, run)
        gated = _gated_turn(story, f"agent:main:telegram:direct:bob-{run}")
        _goal_and_failure(story)
        read, reconciliations, acknowledged, follow_ups = _read_reconcile_acknowledge(story)
    finally:
        watch.close()

    heartbeat.take()
    say("restart: the store is closed and reopened from the file; the start-up sweep (SPEC §6.5) runs:")
    watch = open_watch(url, waker=heartbeat, sweep_on_open=False)
    try:
        heartbeat.live = True
        sweep = watch.sweep()  # exactly what open() runs on start, here with its report kept
        heartbeat.live = False
        wakes = tuple({"watcher": w, "reason": r} for w, r in heartbeat.take())
        story = _Story(watch, say, heartbeat, researcher, writer)
        say(_sweep_line(story, sweep))
        drained, follow_up_status, pending = _drain_after_restart(story)
        upstream = upstream_step(watch, say, manager=MANAGER, run=run)
        sessions, identical, audit = _closing(story, run)
        db = shlex.quote(DEMO_PATH if own_file else url)
        since = drained[0]["lastSeen"] if drained else 0
        say(
            f"inspect: sessionwatch notices {MANAGER} --db {db}; "
            f"sessionwatch status {researcher} --since {since} --db {db}"
        )
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


def _closing(story: _Story, run: str) -> tuple[tuple[Json, ...], bool, Json]:
    """This run's sessions, then the closing checks: rebuilt read models identical, and the audit."""
    watch, say = story.watch, story.say
    sessions = tuple(row.to_json() for row in watch.sessions_list())
    say("sessions_list (the manager and this run's sessions):")
    for row in sessions:
        if row["sessionKey"] != MANAGER and not row["sessionKey"].endswith(f"-{run}"):
            continue
        version = f"  stateVersion {row['stateVersion']}" if "stateVersion" in row else ""
        say(f"  {row['sessionKey']}{version}")
    identical = watch.rebuild_read_model() == watch.store.read_model()
    say(f"read models rebuilt from the event store: {'identical' if identical else 'DIFFERENT'}")
    audit = watch.audit()
    found = len(audit.violations)
    say(
        f"closing audit: {'clean' if audit.ok else 'VIOLATIONS'}: {audit.events_replayed} events replayed, "
        f"{found} violation{'s' if found != 1 else ''}"
    )
    for violation in audit.violations:
        say(f"  {violation.kind}: {violation.detail}")
    return sessions, identical, audit.to_json()


def _spawns_and_turns(story: _Story) -> tuple[Json, ...]:
    """Two spawns seed the manager's cursors; three human turns into one child give ONE notice."""
    watch, say = story.watch, story.say
    watch.upsert_session(MANAGER)
    say(f"{MANAGER} is the manager session")
    for child in (story.researcher, story.writer):
        spawn = watch.record_spawn(requester_key=MANAGER, child_key=child, child_run_id=_run_id(child))
        _require(spawn, "the spawn")
        say(f"the manager spawns {child}: child_spawned {_seq(spawn)} seeds its cursor {story.cursor(child)}")
    turns = [
        _require(watch.record_human_message(story.researcher, channel="telegram"), "a human turn")
        for _ in range(_HUMAN_TURNS)
    ]
    say(
        f"a human types into {story.researcher} {len(turns)} times via telegram: "
        f"human_direct_message {', '.join(_seq(t) for t in turns)}"
    )
    relayed = watch.record_human_message(
        story.researcher,
        channel="telegram",
        actor=classify_actor(provenance_kind="inter_session", source_session_key=MANAGER),
    )
    say(
        f"the manager's own sessions_send turn into {story.researcher}: {_seq(relayed)} "
        "(agents are not humans)"
    )
    woken = len(story.heartbeat.take())
    notices = [n for n in watch.pending_notices(MANAGER) if n.target == story.researcher]
    say(
        f"{MANAGER} was woken {woken} time{'s' if woken != 1 else ''} (a wake only opens a notice) and "
        f"holds exactly {len(notices)} notice for it, "
        f"cursor {story.cursor(story.researcher)}:"
    )
    return story.show(notices)


_RESEARCH_TRANSCRIPT: tuple[dict[str, object], ...] = (
    {"role": "user", "content": "Find the three slowest endpoints."},
    {
        "role": "assistant",
        "content": "<think>check the APM export first</think>The slowest are /search, /export and /login.",
    },
    {"role": "toolResult", "content": "apm.csv: 1200 rows"},
    {"role": "user", "content": "Pull the next export with token sk-live1234567890abcdef."},
)
"""What the demo host's transcript store holds for the researcher (message text stays on the host)."""


class _DemoTranscripts:
    """The demo host's transcript store: the researcher's canned transcript, nothing else."""

    def __init__(self, researcher: str) -> None:
        self._researcher = researcher

    def _messages(self, key: str) -> tuple[dict[str, object], ...]:
        return _RESEARCH_TRANSCRIPT if key == self._researcher else ()

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> list[str]:
        """The session's own user texts, newest last."""
        del agent_id
        texts = [str(m["content"]) for m in self._messages(session_key) if m["role"] == "user"]
        return texts[-limit:]

    def read_messages(
        self, key: str, agent_id: str, *, limit: int, offset: int | None, merged_imports: bool
    ) -> TranscriptPage:
        """The newest `limit` messages before `offset`."""
        del agent_id, merged_imports
        messages = self._messages(key)
        end = len(messages) - (offset or 0)
        return TranscriptPage(
            messages=messages[max(0, end - limit) : max(0, end)], total_messages=len(messages)
        )

    def title_fields(self, key: str, agent_id: str) -> TitleFields:
        """The first user message and the last message of the session."""
        del agent_id
        messages = self._messages(key)
        users = [str(m["content"]) for m in messages if m["role"] == "user"]
        return TitleFields(
            first_user_message=users[0] if users else None,
            last_message_preview=str(messages[-1]["content"]) if messages else None,
        )

    def latest_usage(self, key: str, agent_id: str) -> Usage | None:
        """No usage counters in the demo."""
        del key, agent_id
        return None


class _DemoRuntime:
    """The demo host's runtime: nothing runs; dispatches queue, waits time out, yields are refused."""

    def __init__(self) -> None:
        self.requests: list[object] = []

    def dispatch(self, request: DispatchRequest) -> Dispatch:
        """Queue the message."""
        self.requests.append(request)
        return Dispatch(run_id=f"demo-run-{len(self.requests)}", session_key=request.session_key)

    def wait(self, run_id: str, timeout_seconds: float) -> RunWait:
        """Nothing finishes in the demo."""
        del run_id, timeout_seconds
        return RunWait(status="timeout", terminal=False)

    def run_agent_step(  # noqa: PLR0917 - the positional port signature
        self,
        key: str,
        agent_id: str,
        message: str,
        extra_system_prompt: str,
        timeout_seconds: float,
        provenance: InputProvenance,
    ) -> str | None:
        """No agent answers in the demo."""
        del key, agent_id, message, extra_system_prompt, timeout_seconds, provenance
        return None

    def announce(self, route: Route, text: str) -> None:
        """Keep the delivery."""
        self.requests.append((route, text))

    def start_child_run(self, request: ChildRunRequest) -> str:
        """Keep the request; the run id is the child's."""
        self.requests.append(request)
        return _run_id(request.child_session_key)

    def request_announce(self, request: AnnounceRequest) -> None:
        """Keep the request."""
        self.requests.append(request)

    def yield_turn(self, key: str, message: str) -> bool:
        """The demo has no turns to end."""
        del key, message
        return False


class _DemoModels:
    """The demo host's model catalog: one model."""

    def resolve(self, raw: str, agent_id: str) -> str | None:
        """Only the one model resolves."""
        del agent_id
        return "demo/model" if raw.strip() == "demo/model" else None

    def is_allowed(self, ref: str, agent_id: str) -> bool:
        """The one model is allowed."""
        del agent_id
        return ref == "demo/model"

    def default_for(self, agent_id: str) -> str:
        """The one model."""
        del agent_id
        return "demo/model"


def _tools_step(story: _Story, run: str) -> Json:
    """The manager lists its children and reads one's sanitized history through `SessionTools`."""
    watch, say = story.watch, story.say
    for child in (story.researcher, story.writer):
        watch.update_session(child, label=child.rsplit(":", 1)[-1].split("-")[0])
    tools = SessionTools(
        watch,
        transcripts=_DemoTranscripts(story.researcher),
        runtime=_DemoRuntime(),
        models=_DemoModels(),
        config=ToolsConfig(visibility="tree"),
    )
    ctx = ToolContext(session_key=MANAGER, channel="telegram")
    listed = tools.sessions_list(ctx, {"search": run}).to_json()
    say(f"{MANAGER} lists its children through SessionTools (sessions_list, visibility tree):")
    for row in listed["sessions"]:
        say(f"  {row['key']}  label {row.get('label')}  stateVersion {row.get('stateVersion', 0)}")
    history = tools.sessions_history(ctx, {"sessionKey": story.researcher}).to_json()
    say(
        f"{MANAGER} reads {story.researcher}'s history (sessions_history: read through the host's "
        "transcript port at call time, thinking and tool results dropped, secrets redacted, never stored):"
    )
    say(json.dumps(history, indent=2, ensure_ascii=False))
    return {"sessionsList": listed, "sessionsHistory": history}


def _gated_turn(story: _Story, bystander: str) -> bool:
    """An ordinary session nobody watches: a human turn writes nothing (SPEC §4)."""
    story.watch.upsert_session(bystander)
    turn = story.watch.record_human_message(bystander, channel="telegram")
    head = story.watch.session_status(bystander).state_version
    verdict = "gated, nothing written" if turn is None else f"recorded {_seq(turn)}"
    story.say(f"a human types into {bystander} (nobody watches it): {verdict}; stateVersion {head}")
    return turn is not None


def _goal_and_failure(story: _Story) -> None:
    """A human changes the writer's goal (a second notice); its run fails (log only: none)."""
    watch, say, writer = story.watch, story.say, story.writer
    goal = watch.record_goal_changed(writer, summary="goal updated", actor=Actor.human())
    say(
        f"a human changes {writer}'s goal: goal_changed {_seq(goal)}, "
        f"the manager's cursor {story.cursor(writer)}"
    )
    failed = watch.record_run_terminal(
        child_key=writer, run_id=_run_id(writer), requester_key=MANAGER, outcome="error"
    )
    pending = len(watch.pending_notices(MANAGER))
    say(
        f"{writer}'s run fails: run_failed {_seq(failed)} (outcome error), log only: "
        f"cursor still {story.cursor(writer)}, still {pending} pending notices, no extra one"
    )
    story.heartbeat.take()


def _read_reconcile_acknowledge(
    story: _Story,
) -> tuple[tuple[Json, ...], tuple[Json, ...], tuple[Json, ...], tuple[Json, ...]]:
    """Read the notices, reconcile each child, acknowledge; a turn in between gives one follow-up."""
    watch, say = story.watch, story.say
    notices = watch.pending_notices(MANAGER)
    say(f"{MANAGER} reads its {len(notices)} pending notices (pending_notices: nothing acknowledged yet):")
    read = story.show(notices)
    reconciliations = tuple(story.reconcile(n.target, n.last_seen) for n in notices)
    late = _require(watch.record_human_message(story.researcher, channel="telegram"), "a human turn")
    say(
        f"a human types into {story.researcher} again, after the read and before the acknowledgement: "
        f"human_direct_message {_seq(late)}"
    )
    watch.acknowledge(MANAGER, notices)
    say(
        f"{MANAGER} acknowledges the {len(notices)} notices it read: "
        f"L := N (each notice's frozen watermark), never to the head {late.sequence}"
    )
    for notice in notices:
        say(f"  acknowledged {notice.target} changesSince {notice.last_seen}: {story.owed(notice.target)}")
    acknowledged = tuple(notice.to_json() for notice in notices)
    follow_ups = watch.pending_notices(MANAGER)
    say(f"exactly {len(follow_ups)} follow-up notice, with the new changesSince:")
    shown = story.show(follow_ups)
    story.heartbeat.take()
    return read, reconciliations, acknowledged, shown


def _sweep_line(story: _Story, sweep: SweepReport) -> str:
    head = story.watch.session_status(story.researcher).state_version
    woken = ", ".join(sweep.woken) or "nobody"
    return (
        f"sweep: re-published {sweep.republished} pending notice{'s' if sweep.republished != 1 else ''} "
        f"({sweep.refrozen} re-frozen), "
        f"woke {woken}; {story.researcher} still at stateVersion {head}"
    )


def _drain_after_restart(story: _Story) -> tuple[tuple[Json, ...], Json, tuple[Json, ...]]:
    """The follow-up survived the restart: drain it, reconcile, and drain again (nothing left)."""
    watch, say = story.watch, story.say
    notices = watch.drain(MANAGER)
    say(f"{MANAGER} drains the notice that survived the restart (read and acknowledged in one step):")
    drained = story.show(notices)
    follow_up = next((n for n in notices if n.target == story.researcher), None)
    if follow_up is None:
        raise StoreError("demo: the follow-up notice did not survive the restart")
    status = story.reconcile(story.researcher, follow_up.last_seen)
    pending = watch.drain(MANAGER)
    verdict = "nothing pending" if not pending else f"{len(pending)} pending"
    say(f"{MANAGER} drains again: {verdict}, cursor {story.cursor(story.researcher)}")
    story.show(pending)
    story.heartbeat.take()
    return drained, status, tuple(n.to_json() for n in pending)
