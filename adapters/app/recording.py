"""Recording use cases: the strict `record` and `record_many`, and the best-effort producers.

Each checks its input (a typed `InvalidSignal` naming the field, nothing written), then returns the
`Work` that records inside one transaction: a retained duplicate dedupe key answers with the
existing signal; otherwise the next sequence is allocated, the Session stream decides, and the
store applies the signal to every read model. The notices it opened are woken after the commit.
Producers never raise: `best_effort` logs one line (session key, kind, error class; never payload
text) and answers None.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from sessionwatch.adapters.app.checks import bounded, check_actor
from sessionwatch.adapters.app.core import Core, Done, Work, logger, wakes_of
from sessionwatch.adapters.app.notices import register_in
from sessionwatch.adapters.stores.port import WriteTransaction
from sessionwatch.domain import session, watch_cursor
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.keys import SessionIdentity, check_key
from sessionwatch.domain.recording import check_signal
from sessionwatch.domain.session import RecordSignal, SignalDraft, SignalRecorded, UpsertSession
from sessionwatch.domain.signals import (
    RUN_TERMINAL_SUMMARIES,
    Actor,
    SignalKind,
    check_text,
    human_message_summary,
)
from sessionwatch.domain.watch_cursor import AMBIENT, CursorKey, MaterialSignalSeen
from sessionwatch.projections.models import Signal

R = TypeVar("R")

RECORD = "sessionwatch.record"
"""The span of every write that records one signal (the strict `record` and the producers)."""

Recorded = tuple[SignalRecorded, list[MaterialSignalSeen], bool]
"""A signal recorded in a transaction (or the retained one its dedupe key names), the notices it
opened, and whether it was recorded now (False for the retained one)."""


class SignalInput(BaseModel):
    """The arguments of `record` as one value, for `record_many` (the key as `session_key`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    session_key: str
    kind: SignalKind | str
    actor: Actor
    summary: str
    payload: dict[str, object] | None = None
    run_id: str | None = None
    occurred_at: datetime | int | float | None = None
    dedupe_key: str | None = None
    agent_id: str | None = None
    watchers: tuple[str, ...] = ()


class Scheduler(Protocol):
    """What runs a `Work` on the caller's thread."""

    def run(self, work: Work[Any, R]) -> R:
        """Run the work and what it owes after its commit; its result."""
        ...


class AsyncScheduler(Protocol):
    """What runs a `Work` for a coroutine."""

    def run(self, work: Work[Any, R]) -> Awaitable[R]:
        """Run the work and what it owes after its commit; await its result."""
        ...


ProducerAttempt = Callable[[], "Work[Any, Signal | None] | Work[Any, Signal] | None"]
"""A producer's use case: its checked work, or None when there is nothing to record."""


# ------------------------------------------------------------------------------- inside a write


def record_in(tx: WriteTransaction, draft: SignalDraft, *, spawn_edge: bool = False) -> Recorded:
    """Record inside `tx`: a retained duplicate dedupe key returns the existing signal unchanged.

    With `spawn_edge`, the session's spawn-edge watcher is passed as a producer watcher.
    """
    if draft.dedupe_key is not None:
        existing = tx.signal_by_dedupe(draft.dedupe_key)
        if existing is not None:
            return existing, [], False
    if spawn_edge:
        draft = session.with_spawn_edge_watcher(draft, tx.session(draft.identity))
    command = draft.at(tx.next_sequence())
    events = session.decide(command, tx.session(draft.identity))
    if not events:  # the counter is above every head, so this cannot happen
        raise AssertionError("a freshly allocated sequence was not above the head")
    facts = tx.append(draft.identity, events)
    recorded = events[-1]
    assert isinstance(recorded, SignalRecorded)  # noqa: S101 - decide(RecordSignal) yields one
    return recorded, facts, True


Batch = tuple[list[SignalRecorded], list[MaterialSignalSeen], list[SignalRecorded]]
"""What a batch answers (a signal per draft), the notices it opened, and the signals it recorded now."""


def record_batch(tx: WriteTransaction, drafts: Sequence[SignalDraft]) -> Batch:
    """Record the drafts in order, together: sequences in turn, `decide` per session, one append.

    A draft whose dedupe key is already retained, or was recorded earlier in the batch, records
    nothing and answers with that signal. Each session's commands are decided at once
    (`decide_records`): the sequences are fresh, so every one is above the head.
    """
    answers: list[SignalRecorded | int] = []  # the existing signal, or the draft that records it
    batches: dict[SessionIdentity, tuple[list[int], list[RecordSignal]]] = {}
    first_with_key: dict[str, int] = {}
    for index, draft in enumerate(drafts):
        key = draft.dedupe_key
        if key is not None:
            earlier = first_with_key.get(key)
            if earlier is not None:
                answers.append(earlier)
                continue
            existing = tx.signal_by_dedupe(key)
            if existing is not None:
                answers.append(existing)
                continue
            first_with_key[key] = index
        indexes, commands = batches.setdefault(draft.identity, ([], []))
        indexes.append(index)
        commands.append(draft.at(tx.next_sequence()))
        answers.append(index)
    fresh: dict[int, SignalRecorded] = {}
    for identity, (indexes, commands) in batches.items():
        events = session.decide_records(commands, tx.session(identity))
        if len(events) != len(commands):  # the counter is above every head: cannot happen
            raise AssertionError("a freshly allocated sequence was not above the head")
        fresh.update(zip(indexes, events, strict=True))
    appended = [fresh[index] for index in sorted(fresh)]
    facts = tx.append_signals(appended)
    return [fresh[answer] if isinstance(answer, int) else answer for answer in answers], facts, appended


@dataclass(frozen=True, slots=True)
class RecordOne:
    """The write of one checked signal (no spawn edge); consecutive ones in a transaction run as a batch.

    A batch records exactly what the writes would one after another (`record_batch` is the same
    rule for many drafts); each write gets its own signal and the notices its signal opened.
    """

    draft: SignalDraft

    def __call__(self, tx: WriteTransaction) -> Recorded:
        """The write alone."""
        return record_in(tx, self.draft)

    @staticmethod
    def together(tx: WriteTransaction, writes: Sequence[RecordOne]) -> list[Recorded]:
        """The writes recorded as one batch, each answered as if alone."""
        recorded, facts, appended = record_batch(tx, [write.draft for write in writes])
        opened: dict[int, list[MaterialSignalSeen]] = {}
        for fact in facts:  # a notice opens at its signal: the write that recorded that sequence
            opened.setdefault(fact.sequence, []).append(fact)
        fresh = {id(event) for event in appended}  # a duplicate answers with another write's signal
        answers: list[Recorded] = []
        for event in recorded:
            now = id(event) in fresh
            fresh.discard(id(event))  # the first write of a dedupe key recorded it, the others did not
            answers.append((event, opened.pop(event.sequence, []), now))
        return answers


def _signal(recorded: Recorded) -> Done[Signal]:
    event, facts, now = recorded
    return Done(
        Signal.from_event(event),
        wakes_of(facts),
        recorded=True,
        kinds=(event.kind,) if now else (),
        opened=len(facts),
    )


def record(draft: SignalDraft, *, spawn_edge: bool = False) -> Work[Recorded, Signal]:
    """One checked signal with its reactions (the strict `record`: no gate, no actor filter)."""
    if spawn_edge:
        return Work(lambda tx: record_in(tx, draft, spawn_edge=True), _signal, RECORD)
    return Work(RecordOne(draft), _signal, RECORD)


# ---------------------------------------------------------------------------------- strict API


def draft(
    core: Core,
    *,
    session_key: object,
    kind: object,
    actor: object,
    summary: object,
    payload: object = None,
    run_id: object = None,
    occurred_at: object = None,
    dedupe_key: object = None,
    agent_id: object = None,
    watchers: object = (),
    now: datetime | None = None,
) -> SignalDraft:
    """Every field of a signal checked (`SignalInput`'s fields, by name), else `InvalidSignal`.

    Recorded at `now`, else at the clock's time.
    """
    checked_actor = check_actor(actor)
    return check_signal(
        session_key=session_key,
        agent_id=agent_id,
        kind=kind,
        actor_type=checked_actor.actor_type,
        actor_id=checked_actor.actor_id,
        summary=summary,
        payload=payload,
        run_id=run_id,
        occurred_at=occurred_at,
        dedupe_key=dedupe_key,
        watchers=watchers,
        now=core.clock.now() if now is None else now,
    )


def record_many(core: Core, inputs: Iterable[SignalInput]) -> Work[Any, list[Signal]] | list[Signal]:
    """Many signals in one transaction, all or none, at one instant (the clock read once).

    An empty batch writes nothing and answers `[]`.
    """
    if isinstance(inputs, str | bytes | Mapping) or not isinstance(inputs, Iterable):
        raise InvalidSignal("inputs", "must be an iterable of SignalInput")
    drafts = []
    now = core.clock.now()  # one transaction, one instant
    for index, item in enumerate(inputs):
        if not isinstance(item, SignalInput):
            raise InvalidSignal(f"inputs[{index}]", "must be a SignalInput")
        try:
            drafts.append(draft(core, **item.__dict__, now=now))
        except InvalidSignal as exc:
            raise InvalidSignal(f"inputs[{index}].{exc.field}", exc.reason) from None
    if not drafts:
        return []

    def finish(batch: Batch) -> Done[list[Signal]]:
        recorded, facts, appended = batch
        return Done(
            Signal.from_events(recorded),
            wakes_of(facts),
            recorded=True,
            kinds=tuple(event.kind for event in appended),
            opened=len(facts),
        )

    return Work(lambda tx: record_batch(tx, drafts), finish, "sessionwatch.record_many")


# ----------------------------------------------------------------------------------- producers


def best_effort(
    scheduler: Scheduler, key: object, kind: SignalKind, attempt: ProducerAttempt
) -> Signal | None:
    """Build and run a producer's work; any failure is logged once (key, kind, error class): None."""
    try:
        work = attempt()
        return None if work is None else scheduler.run(cast("Work[Any, Signal | None]", work))
    except Exception as exc:  # noqa: BLE001 - recording must never fail the host's action
        log_not_recorded(key, kind, exc)
        return None


async def best_effort_async(
    scheduler: AsyncScheduler, key: object, kind: SignalKind, attempt: ProducerAttempt
) -> Signal | None:
    """`best_effort` for the event-loop scheduler."""
    try:
        work = attempt()
        return None if work is None else await scheduler.run(cast("Work[Any, Signal | None]", work))
    except Exception as exc:  # noqa: BLE001 - recording must never fail the host's action
        log_not_recorded(key, kind, exc)
        return None


def log_not_recorded(key: object, kind: SignalKind, exc: Exception) -> None:
    """One line for a producer that recorded nothing: the key (bounded), the kind, the field or error."""
    reason = exc.field if isinstance(exc, InvalidSignal) else type(exc).__name__
    shown = bounded(key)  # a malformed key can be any size: the log line stays one short line
    logger.warning(
        "sessionwatch: signal not recorded (session_key=%r kind=%s reason=%s)",
        shown,
        kind.value,
        reason,
        extra={"session_key": shown, "signal_kind": kind.value, "reason": reason},
    )


def human_message(
    core: Core,
    key: object,
    *,
    channel: object,
    actor: object = None,
    run_id: object = None,
    occurred_at: object = None,
    dedupe_key: object = None,
    agent_id: object = None,
    session_id: object = None,
) -> Work[tuple[SignalRecorded | None, list[MaterialSignalSeen], bool], Signal | None]:
    """A human turn straight into a session; agents, the system and unwatched sessions record nothing.

    A human's turn into a group session first makes its agent's main session an ambient watcher of
    it (`watch_ambiently`), so such a turn is always recorded and reaches that main session.
    `session_id` is the session's incarnation when the host knows it: the signal carries it.
    """
    who = Actor.human() if actor is None else check_actor(actor)
    turn = check_signal(
        session_key=key,
        agent_id=agent_id,
        kind=SignalKind.HUMAN_DIRECT_MESSAGE,
        actor_type=who.actor_type,
        actor_id=who.actor_id,
        summary=human_message_summary(channel),
        run_id=run_id,
        session_id=session_id,
        occurred_at=occurred_at,
        dedupe_key=dedupe_key,
        now=core.clock.now(),
    )

    def run(tx: WriteTransaction) -> tuple[SignalRecorded | None, list[MaterialSignalSeen], bool]:
        """The signal (None: nothing recorded), the notices it opened, and whether it was recorded now."""
        # A duplicate returns the existing signal even where a new one would be refused.
        existing = tx.signal_by_dedupe(turn.dedupe_key) if turn.dedupe_key else None
        if existing is not None:
            return existing, [], False
        identity = turn.identity
        if who.actor_type == "human":  # before the turn, so the turn itself reaches the main session
            watch_ambiently(core, tx, identity)
        if not session.records_human_turn(
            who.actor_type, tx.session(identity), watched=lambda: tx.has_cursor_on(identity)
        ):
            return None, [], False  # write-free for ordinary unwatched turns
        return record_in(tx, turn, spawn_edge=True)

    def finish(outcome: tuple[SignalRecorded | None, list[MaterialSignalSeen], bool]) -> Done[Signal | None]:
        event, facts, recorded = outcome
        return Done(
            Signal.from_event(event) if event is not None else None,
            wakes_of(facts),
            recorded,
            kinds=(event.kind,) if recorded and event is not None else (),
            opened=len(facts),
        )

    return Work(run, finish, RECORD)


def watch_ambiently(core: Core, tx: WriteTransaction, identity: SessionIdentity) -> None:
    """Before a human turn into a group session is recorded: its agent's main session watches it ambiently.

    Registered at the group's head when the main session holds no cursor on it (an explicit one is
    kept as it is), so the turn, the first one too, leaves it a queue-only notice; never a group
    watching itself.
    """
    watcher = watch_cursor.ambient_watcher(tx.session(identity), core.main_key)
    if watcher is not None:
        register_in(tx, CursorKey(watcher, identity.session_key, identity.agent_id), AMBIENT, core.now_ms())


def goal_changed(
    core: Core,
    key: object,
    *,
    summary: object,
    actor: object = None,
    agent_id: object = None,
    session_id: object = None,
) -> Work[Recorded, Signal]:
    """The session's goal was created, updated or cleared; always recorded, the spawn edge notified.

    `session_id` is the session's incarnation when the host knows it: the signal carries it.
    """
    who = Actor.system() if actor is None else check_actor(actor)
    goal = check_signal(
        session_key=key,
        agent_id=agent_id,
        kind=SignalKind.GOAL_CHANGED,
        actor_type=who.actor_type,
        actor_id=who.actor_id,
        summary=summary,
        session_id=session_id,
        now=core.clock.now(),
    )
    return record(goal, spawn_edge=True)


def spawn(
    core: Core, *, requester_key: object, child_key: object, child_run_id: object, agent_id: object = None
) -> Work[Recorded, Signal]:
    """A child was spawned: register it under its requester and record `child_spawned` on it.

    The signal seeds the requester's cursor on the child at its own sequence.
    """
    requester = check_key(requester_key, "requester_key")
    run_id = check_text(child_run_id, "child_run_id")
    spawned = check_signal(
        session_key=child_key,
        agent_id=agent_id,
        kind=SignalKind.CHILD_SPAWNED,
        actor_type="agent",
        actor_id=requester,
        summary="child session spawned",
        run_id=run_id,
        dedupe_key=f"child-spawned:{run_id}",
        now=core.clock.now(),
    )

    def run(tx: WriteTransaction) -> Recorded:
        existing = tx.signal_by_dedupe(f"child-spawned:{run_id}")
        if existing is not None:
            return existing, [], False
        identity = spawned.identity
        upsert = UpsertSession(
            session_key=identity.session_key, agent_id=identity.agent_id, spawned_by=requester
        )
        events = session.decide(upsert, tx.session(identity))
        if events:
            tx.append(identity, events)
        return record_in(tx, spawned)

    return Work(run, _signal, RECORD)


def run_terminal(
    core: Core,
    *,
    child_key: object,
    run_id: object,
    requester_key: object,
    outcome: Literal["ok", "error", "timeout", "cancelled"],
    agent_id: object = None,
) -> Work[Recorded, Signal]:
    """A child run ended: `ok` is `run_completed`, anything else `run_failed` with its outcome.

    The requester is the signal's producer watcher, as for any producer: where terminal runs notify,
    it is notified whatever cursor it holds (none: one from `(0, e, e)`; an ambient one: queue-only).
    """
    requester = check_key(requester_key, "requester_key")
    if outcome not in RUN_TERMINAL_SUMMARIES:
        raise InvalidSignal("outcome", "must be ok, error, timeout or cancelled")
    run = check_text(run_id, "run_id")
    return record(
        draft(
            core,
            session_key=child_key,
            kind=terminal_kind(outcome),
            actor=Actor.system(),
            summary=RUN_TERMINAL_SUMMARIES[outcome],
            payload=None if outcome == "ok" else {"outcome": outcome},
            run_id=run,
            dedupe_key=f"run-terminal:{run}",
            agent_id=agent_id,
            watchers=(requester,),
        )
    )


def terminal_kind(outcome: object) -> SignalKind:
    """The kind a run's end records: `ok` is `run_completed`, the rest `run_failed`."""
    return SignalKind.RUN_COMPLETED if outcome == "ok" else SignalKind.RUN_FAILED


def compacted(
    core: Core,
    key: object,
    *,
    operation_id: object,
    session_id: object = None,
    run_id: object = None,
    agent_id: object = None,
) -> Work[Recorded, Signal] | None:
    """History was compacted; nothing is recorded (None) without a session key."""
    if key is None or (isinstance(key, str) and not key.strip()):
        return None
    operation = check_text(operation_id, "operation_id")
    compaction = check_signal(
        session_key=key,
        agent_id=agent_id,
        kind=SignalKind.COMPACTED,
        actor_type="system",
        actor_id=None,
        summary="session compacted",
        run_id=run_id,
        session_id=session_id,
        dedupe_key=f"compacted:{operation}",
        now=core.clock.now(),
    )
    return record(compaction)


def adopted(core: Core, key: object, *, agent_id: object = None) -> Work[Recorded, Signal]:
    """A session was adopted from an external catalog (log only)."""
    return record(
        draft(
            core,
            session_key=key,
            kind=SignalKind.ADOPTED,
            actor=Actor.system(),
            summary="session adopted",
            agent_id=agent_id,
        )
    )
