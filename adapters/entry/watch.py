"""`SessionWatch`, the façade hosts program against (SPEC §13): load, decide, append, publish.

Every operation is one store transaction: it loads the decision state, runs the pure domain, and
appends the events (which the store applies to the read models in the same transaction). Wakes are
published only after the commit, and a failing waker never undoes or blocks anything (SPEC §6.4).
Producers are best effort: they never raise, they log one line (session key, kind, error class;
never payload text) and return None. The strict API raises typed errors and writes nothing on error.
"""

from __future__ import annotations

import gc
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Final, Literal, Self, get_args

import orjson
from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from sessionwatch.adapters.app.clock import SystemClock
from sessionwatch.adapters.app.group_commit import GroupCommit
from sessionwatch.adapters.app.runs import RunLedger
from sessionwatch.adapters.stores.archive import JsonlArchive, archived_signals
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.adapters.stores.port import CrossProcessWakes, SignalStore, StoreError, WriteTransaction
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.adapters.stores.urls import parse_url
from sessionwatch.adapters.upstream.monitor import (
    ActiveRuns,
    MissingStreaks,
    MonitorHandle,
    Outcome,
    Publication,
    UpstreamPass,
)
from sessionwatch.domain import session, upstream, watch_cursor
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.keys import SessionIdentity, check_key, is_subagent_key, resolve_identity
from sessionwatch.domain.ports import Clock, Transcripts, UpstreamProvider, Waker
from sessionwatch.domain.recording import check_signal
from sessionwatch.domain.registry import META_FIELDS, Route, SessionMeta
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.session import (
    DeleteSession,
    RecordSignal,
    ResetSession,
    SessionCommand,
    SessionState,
    SignalDraft,
    SignalRecorded,
    UpdateSessionMeta,
    UpsertSession,
)
from sessionwatch.domain.signals import (
    RUN_TERMINAL_SUMMARIES,
    Actor,
    SignalKind,
    check_optional_text,
    check_text,
    from_epoch_ms,
    human_message_summary,
    to_epoch_ms,
)
from sessionwatch.domain.upstream import (
    AdvanceMarker,
    AdvanceOnly,
    LinkUpstream,
    RecordActivity,
    RecordMissing,
    Unlink,
    UpstreamLinkState,
    UpstreamSource,
)
from sessionwatch.domain.watch_cursor import (
    AcknowledgeNotice,
    CursorKey,
    CursorState,
    MaterialSignalSeen,
    RegisterWatch,
    RemoveWatch,
)
from sessionwatch.projections.audit import compare as compare_read_models
from sessionwatch.projections.audit import replay as replay_history
from sessionwatch.projections.models import (
    AuditReport,
    Cursor,
    Notice,
    PruneReport,
    RegistryEntry,
    RunOutcome,
    RunRecord,
    SessionEntry,
    SessionRow,
    SessionStatus,
    Signal,
    SweepReport,
    TickReport,
    UpstreamLink,
)
from sessionwatch.projections.read_model import ReadModel, fold
from sessionwatch.projections.status import check_changes_since, clamp_limit, status_as_of

logger = logging.getLogger("sessionwatch")
logger.addHandler(logging.NullHandler())  # a library never prints through logging's last resort

_MAX_KIND_LENGTH = 64
_MAX_JSON_BYTES = 4096
_MAX_SOURCE_FIELD = 256

Wake = tuple[str, str]
"""(watcher key, reason) of one wake request."""


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


def _query_identity(key: object, agent_id: object, field: str = "session_key") -> SessionIdentity:
    try:
        return resolve_identity(key, agent_id, field)
    except InvalidSignal as exc:
        raise InvalidQuery(exc.field, exc.reason) from None


def _query_key(key: object, field: str) -> str:
    try:
        return check_key(key, field)
    except InvalidSignal as exc:
        raise InvalidQuery(exc.field, exc.reason) from None


def wake_reason(target_key: str) -> str:
    """The heartbeat reason for a stale target (SPEC §6.4)."""
    return f"session-state:{target_key}"


def _wakes(notices: Iterable[CursorState | CursorKey | MaterialSignalSeen]) -> list[Wake]:
    """Wake requests for watchers that got a pending notice; subagents see it on their next turn.

    A watcher whose notice was already pending got nothing new, so it is not woken again: wakes
    may be coalesced, and the durable notice is never lost (SPEC §6.4).
    """
    return [(n.watcher, wake_reason(n.target_key)) for n in notices if not is_subagent_key(n.watcher)]


class SessionWatch:
    """Session state awareness over one store. Thread-safe; close it (or use `with`) when done.

    On a store shared by several processes (PostgreSQL), a `waker` is also called, from a listener
    thread, for notices that other processes open (SPEC §16), unless `cross_process_wakes=False`.
    """

    def __init__(
        self,
        store: SignalStore,
        *,
        clock: Clock | None = None,
        waker: Waker | None = None,
        retention: Retention | None = None,
        cross_process_wakes: bool = True,
    ) -> None:
        self._store = store
        self._clock: Clock = clock or SystemClock()
        self._waker = waker
        self._retention = retention or Retention()
        self._archive = JsonlArchive(self._retention.archive) if self._retention.archive else None
        # The hourly throttle counts from the last prune, or from opening a store never pruned.
        self._last_prune_ms = store.last_prune_ms() or self._now_ms()
        self.startup_sweep: SweepReport | None = None
        """What the sweep run by `open()` did (None when `sweep_on_open=False`)."""
        self._writes = GroupCommit(store)
        """Records from several threads share a transaction (ADR-0016)."""
        self.active_runs = ActiveRuns()
        """The runs this process started and has not ended (the monitor skips their sessions)."""
        self.run_ledger = RunLedger()
        """Every run this process heard of, with its requester and outcome (SPEC-tools §T10)."""
        self.upstream_streaks = MissingStreaks()
        """The upstream monitor's missing streaks per link version (ADR-0010)."""
        self._monitors: list[MonitorHandle] = []
        self._monitors_lock = threading.Lock()
        if waker is not None and cross_process_wakes and isinstance(store, CrossProcessWakes):
            store.listen_for_wakes(self._wake_from_elsewhere)

    # ------------------------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Stop the upstream monitors started here, then release the store."""
        with self._monitors_lock:
            monitors, self._monitors = self._monitors, []
        for monitor in monitors:
            monitor.stop()
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def retention(self) -> Retention:
        """The retention policy in force (SPEC §8)."""
        return self._retention

    @property
    def store(self) -> SignalStore:
        """The underlying store (for audits and tests)."""
        return self._store

    @property
    def clock(self) -> Clock:
        """The clock every timestamp of this instance comes from (the session tools share it)."""
        return self._clock

    def _now_ms(self) -> int:
        return to_epoch_ms(self._clock.now())

    def _publish(self, wakes: Iterable[Wake]) -> list[str]:
        """Ask the host to wake each watcher once per reason, after the commit; never raises."""
        woken: list[str] = []
        if self._waker is None:
            return woken
        for watcher, reason in dict.fromkeys(wakes):
            try:
                self._waker.wake(watcher, reason)
            except Exception as exc:  # noqa: BLE001 - a failing waker never undoes a committed record
                logger.warning(
                    "sessionwatch: wake failed (watcher=%r reason=%s error=%s)",
                    watcher,
                    reason,
                    type(exc).__name__,
                    extra={"watcher": watcher, "reason": reason, "error": type(exc).__name__},
                )
            else:
                woken.append(watcher)
        return woken

    def _wake_from_elsewhere(self, watcher: str, target_key: str) -> None:
        """Another process opened this notice: wake its watcher here too (SPEC §16)."""
        if not is_subagent_key(watcher):
            self._publish([(watcher, wake_reason(target_key))])

    # -------------------------------------------------------------------------------- sessions

    def upsert_session(
        self,
        key: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        spawned_by: str | None = None,
        parent_session_key: str | None = None,
        kind: str | None = None,
    ) -> SessionEntry:
        """Register a session or update its registry fields; None keeps a field's value.

        A new session's kind is `main` unless given (SPEC §13 writes the default as `kind="main"`).
        """
        identity = resolve_identity(key, agent_id)
        command = self._upsert_command(
            identity,
            session_id=session_id,
            spawned_by=spawned_by,
            parent_session_key=parent_session_key,
            kind=kind,
        )
        with self._store.write() as tx:
            self._apply(tx, identity, command)
            state = tx.session(identity)
        return SessionEntry.from_state(state)

    def _upsert_command(
        self,
        identity: SessionIdentity,
        *,
        session_id: object = None,
        spawned_by: object = None,
        parent_session_key: object = None,
        kind: object = None,
    ) -> UpsertSession:
        """The checked `UpsertSession` for these fields (None keeps a value)."""
        return UpsertSession(
            session_key=identity.session_key,
            agent_id=identity.agent_id,
            session_id=check_optional_text(session_id, "session_id"),
            kind=self._check_kind_name(kind) if kind is not None else None,
            spawned_by=check_key(spawned_by, "spawned_by") if spawned_by is not None else None,
            parent_session_key=(
                check_key(parent_session_key, "parent_session_key")
                if parent_session_key is not None
                else None
            ),
        )

    def reset_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Reset a session: the cursors it holds as watcher go, its history stays (SPEC §9)."""
        identity = resolve_identity(key, agent_id)
        with self._store.write() as tx:
            holds = bool(_held_by(tx, identity))
            command = ResetSession(
                session_key=identity.session_key, agent_id=identity.agent_id, holds_cursors=holds
            )
            self._apply(tx, identity, command)

    def delete_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Delete one identity: its signals, its head and every cursor it holds or is the target of."""
        identity = resolve_identity(key, agent_id)
        with self._store.write() as tx:
            involved = bool(_held_by(tx, identity)) or tx.has_cursor_on(identity)
            command = DeleteSession(
                session_key=identity.session_key, agent_id=identity.agent_id, has_cursors=involved
            )
            self._apply(tx, identity, command)

    def update_session(self, key: str, *, agent_id: str | None = None, **fields: object) -> RegistryEntry:
        """Set registry fields of a session (SPEC-tools §T10), registering it first if it is unknown.

        `fields` are the §T10 names: `session_id`, `kind`, `spawned_by` and `parent_session_key` as
        `upsert_session` sets them (None keeps a value), every other one (`META_FIELDS`) through one
        `session.meta_updated.v1` naming only the fields whose value changed (None clears one).
        A field outside the registry, or a bad value, is an `InvalidSignal` naming it; nothing is written.
        """
        identity = resolve_identity(key, agent_id)
        unknown = sorted(set(fields) - set(META_FIELDS) - set(_UPSERT_FIELDS))
        if unknown:
            raise InvalidSignal(unknown[0], "is not a session registry field")
        upsert = self._upsert_command(identity, **{n: v for n, v in fields.items() if n in _UPSERT_FIELDS})
        given = {name: value for name, value in fields.items() if name in META_FIELDS}
        update = UpdateSessionMeta(
            session_key=identity.session_key,
            agent_id=identity.agent_id,
            given=tuple(given),
            meta=_check_meta(given),
        )
        with self._store.write() as tx:
            self._apply(tx, identity, upsert)
            self._apply(tx, identity, update)
            state = tx.session(identity)
        return RegistryEntry.from_state(state)

    def registry_entry(self, key: str, *, agent_id: str | None = None) -> RegistryEntry | None:
        """A known session's registry entry (SPEC-tools §T10), or None."""
        state = self._store.session(_query_identity(key, agent_id))
        return RegistryEntry.from_state(state) if state is not None else None

    def registry_entries(self) -> list[RegistryEntry]:
        """Every known session's registry entry, ordered by key and agent id."""
        return [RegistryEntry.from_state(state) for state in self._store.sessions()]

    def run_started(
        self,
        key: str,
        run_id: str,
        *,
        agent_id: str | None = None,
        requester_key: str | None = None,
        label: str | None = None,
        mode: str | None = None,
    ) -> None:
        """A run of the session began: the upstream monitor leaves its link alone until it ends.

        `requester_key`, `label` and `mode` are what `subagents` lists (SPEC-tools §T9, §T10).
        """
        identity = resolve_identity(key, agent_id)
        run_id = check_text(run_id, "run_id")
        requester = check_key(requester_key, "requester_key") if requester_key is not None else None
        self.active_runs.start(identity, run_id)
        self.run_ledger.start(
            identity,
            run_id,
            at_ms=self._now_ms(),
            requester_key=requester,
            label=check_optional_text(label, "label"),
            mode=check_optional_text(mode, "mode"),
        )

    def run_ended(
        self, key: str, run_id: str, *, agent_id: str | None = None, outcome: RunOutcome | None = None
    ) -> None:
        """A run of the session ended (an unknown run id changes nothing).

        `outcome` is `ok`, `error`, `timeout` or `cancelled` (SPEC-tools §T4 shows them as `done`,
        `failed`, `timeout`, `killed`); None when the host does not know.
        """
        run_id = check_text(run_id, "run_id")
        if outcome is not None and outcome not in _RUN_OUTCOMES:
            raise InvalidSignal("outcome", f"must be one of {', '.join(_RUN_OUTCOMES)}")
        self.active_runs.end(resolve_identity(key, agent_id), run_id)
        self.run_ledger.end(run_id, at_ms=self._now_ms(), outcome=outcome)

    def runs(self) -> list[RunRecord]:
        """The runs this process heard of: active ones and those ended within a day, newest first."""
        return self.run_ledger.records(now_ms=self._now_ms())

    @staticmethod
    def _check_kind_name(kind: object) -> str:
        """A session kind: a short single-line string (`check_text`: no control characters, UTF-8)."""
        return check_text(kind, "kind", max_length=_MAX_KIND_LENGTH)

    # ---------------------------------------------------------------------------------- strict

    def record(
        self,
        key: str,
        *,
        kind: SignalKind | str,
        actor: Actor,
        summary: str,
        payload: dict[str, object] | None = None,
        run_id: str | None = None,
        occurred_at: datetime | float | None = None,
        dedupe_key: str | None = None,
        agent_id: str | None = None,
        watchers: Sequence[str] = (),
    ) -> Signal:
        """Record one signal with its §6 reactions; a duplicate dedupe key returns the existing signal."""
        draft = self._draft(
            session_key=key,
            kind=kind,
            actor=actor,
            summary=summary,
            payload=payload,
            run_id=run_id,
            occurred_at=occurred_at,
            dedupe_key=dedupe_key,
            agent_id=agent_id,
            watchers=watchers,
        )
        return self._commit(lambda tx: self._record_in(tx, draft))

    def record_many(self, inputs: Iterable[SignalInput]) -> list[Signal]:
        """Record many signals in one transaction: all of them, or none when any is invalid.

        The batch is recorded at one instant: the clock is read once for all of its signals.
        """
        if isinstance(inputs, str | bytes | Mapping) or not isinstance(inputs, Iterable):
            raise InvalidSignal("inputs", "must be an iterable of SignalInput")
        drafts = []
        now = self._clock.now()  # one transaction, one instant
        for index, item in enumerate(inputs):
            if not isinstance(item, SignalInput):
                raise InvalidSignal(f"inputs[{index}]", "must be a SignalInput")
            try:
                drafts.append(self._draft(**item.__dict__, now=now))
            except InvalidSignal as exc:
                raise InvalidSignal(f"inputs[{index}].{exc.field}", exc.reason) from None
        if not drafts:
            return []

        def record_all(tx: WriteTransaction) -> tuple[list[SignalRecorded], list[Wake]]:
            recorded, facts = self._record_batch(tx, drafts)
            return recorded, _wakes(facts)

        recorded, wakes = self._writes.run(record_all)
        self._publish(wakes)
        self._prune_if_due()
        return Signal.from_events(recorded)

    def _commit(
        self, decide: Callable[[WriteTransaction], tuple[SignalRecorded, list[MaterialSignalSeen]]]
    ) -> Signal:
        """`decide` in a write transaction (shared with concurrent callers), then the wakes it owes."""
        event, facts = self._writes.run(decide)
        self._publish(_wakes(facts))
        self._prune_if_due()
        return Signal.from_event(event)

    def _draft(
        self,
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
        checked_actor = _check_actor(actor)
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
            now=self._clock.now() if now is None else now,
        )

    @staticmethod
    def _apply(
        tx: WriteTransaction, identity: SessionIdentity, command: SessionCommand
    ) -> list[MaterialSignalSeen]:
        events = session.decide(command, tx.session(identity))
        return tx.append(identity, events) if events else []

    def _record_in(
        self, tx: WriteTransaction, draft: SignalDraft, *, spawn_edge: bool = False
    ) -> tuple[SignalRecorded, list[MaterialSignalSeen]]:
        """Record inside `tx`: a retained duplicate dedupe key returns the existing signal unchanged.

        With `spawn_edge`, the session's spawn-edge watcher is passed as a producer watcher (SPEC §4).
        """
        if draft.dedupe_key is not None:
            existing = tx.signal_by_dedupe(draft.dedupe_key)
            if existing is not None:
                return existing, []
        if spawn_edge:
            edge = session.spawn_edge_watcher(tx.session(draft.identity))
            if edge is not None and edge not in draft.watchers:
                draft = draft._replace(watchers=(*draft.watchers, edge))
        command = draft.at(tx.next_sequence())
        events = session.decide(command, tx.session(draft.identity))
        if not events:  # the counter is above every head, so this cannot happen
            raise AssertionError("a freshly allocated sequence was not above the head")
        facts = tx.append(draft.identity, events)
        recorded = events[-1]
        assert isinstance(recorded, SignalRecorded)  # noqa: S101 - decide(RecordSignal) yields one
        return recorded, facts

    @staticmethod
    def _record_batch(
        tx: WriteTransaction, drafts: Sequence[SignalDraft]
    ) -> tuple[list[SignalRecorded], list[MaterialSignalSeen]]:
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
        facts = tx.append_signals([fresh[index] for index in sorted(fresh)])
        return [fresh[answer] if isinstance(answer, int) else answer for answer in answers], facts

    # ------------------------------------------------------------------------------- producers

    def _best_effort(
        self, key: object, kind: SignalKind, attempt: Callable[[], Signal | None]
    ) -> Signal | None:
        """Run a producer; any failure is logged once (key, kind, error class) and gives None."""
        try:
            return attempt()
        except Exception as exc:  # noqa: BLE001 - recording must never fail the host's action
            reason = exc.field if isinstance(exc, InvalidSignal) else type(exc).__name__
            shown = _bounded(key)  # a malformed key can be any size: the log line stays one short line
            logger.warning(
                "sessionwatch: signal not recorded (session_key=%r kind=%s reason=%s)",
                shown,
                kind.value,
                reason,
                extra={"session_key": shown, "signal_kind": kind.value, "reason": reason},
            )
            return None

    def record_human_message(
        self,
        key: str,
        *,
        channel: str | None,
        actor: Actor | None = None,
        run_id: str | None = None,
        occurred_at: datetime | float | None = None,
        dedupe_key: str | None = None,
        agent_id: str | None = None,
    ) -> Signal | None:
        """A human turn straight into a session; agents, the system and unwatched sessions record nothing."""
        kind = SignalKind.HUMAN_DIRECT_MESSAGE

        def attempt() -> Signal | None:
            who = Actor.human() if actor is None else _check_actor(actor)
            draft = check_signal(
                session_key=key,
                agent_id=agent_id,
                kind=kind,
                actor_type=who.actor_type,
                actor_id=who.actor_id,
                summary=human_message_summary(channel),
                run_id=run_id,
                occurred_at=occurred_at,
                dedupe_key=dedupe_key,
                now=self._clock.now(),
            )

            def record_turn(tx: WriteTransaction) -> tuple[SignalRecorded | None, list[Wake], bool]:
                """The signal (None: nothing recorded), its wakes, and whether it was recorded now."""
                # A duplicate returns the existing signal even where a new one would be refused.
                existing = tx.signal_by_dedupe(draft.dedupe_key) if draft.dedupe_key else None
                if existing is not None:
                    return existing, [], False
                if who.actor_type != "human":
                    return None, [], False
                state = tx.session(draft.identity)
                watched = tx.has_cursor_on(draft.identity)
                if session.human_message_is_gated(state, has_registered_watchers=watched):
                    return None, [], False  # write-free for ordinary unwatched turns
                event, facts = self._record_in(tx, draft, spawn_edge=True)
                return event, _wakes(facts), True

            event, wakes, recorded = self._writes.run(record_turn)
            if recorded:
                self._publish(wakes)
                self._prune_if_due()
            return Signal.from_event(event) if event is not None else None

        return self._best_effort(key, kind, attempt)

    def record_goal_changed(
        self, key: str, *, summary: str, actor: Actor | None = None, agent_id: str | None = None
    ) -> Signal | None:
        """The session's goal was created, updated or cleared; always recorded (SPEC §4)."""
        kind = SignalKind.GOAL_CHANGED

        def attempt() -> Signal:
            who = Actor.system() if actor is None else _check_actor(actor)
            draft = check_signal(
                session_key=key,
                agent_id=agent_id,
                kind=kind,
                actor_type=who.actor_type,
                actor_id=who.actor_id,
                summary=summary,
                now=self._clock.now(),
            )
            return self._commit(lambda tx: self._record_in(tx, draft, spawn_edge=True))

        return self._best_effort(key, kind, attempt)

    def record_spawn(
        self, *, requester_key: str, child_key: str, child_run_id: str, agent_id: str | None = None
    ) -> Signal | None:
        """A child was spawned: register it under its requester and record `child_spawned` on it.

        The signal seeds the requester's cursor on the child at its own sequence (SPEC §5.1).
        """
        kind = SignalKind.CHILD_SPAWNED

        def attempt() -> Signal:
            requester = check_key(requester_key, "requester_key")
            run = check_text(child_run_id, "child_run_id")
            draft = check_signal(
                session_key=child_key,
                agent_id=agent_id,
                kind=kind,
                actor_type="agent",
                actor_id=requester,
                summary="child session spawned",
                run_id=run,
                dedupe_key=f"child-spawned:{run}",
                now=self._clock.now(),
            )

            def spawn(tx: WriteTransaction) -> tuple[SignalRecorded, list[MaterialSignalSeen]]:
                existing = tx.signal_by_dedupe(f"child-spawned:{run}")
                if existing is not None:
                    return existing, []
                upsert = UpsertSession(
                    session_key=draft.session_key, agent_id=draft.agent_id, spawned_by=requester
                )
                self._apply(tx, draft.identity, upsert)
                return self._record_in(tx, draft)

            return self._commit(spawn)

        return self._best_effort(child_key, kind, attempt)

    def record_run_terminal(
        self,
        *,
        child_key: str,
        run_id: str,
        requester_key: str,
        outcome: Literal["ok", "error", "timeout", "cancelled"],
        agent_id: str | None = None,
    ) -> Signal | None:
        """A child run ended: `ok` is `run_completed`, anything else `run_failed` with its outcome."""
        kind = SignalKind.RUN_COMPLETED if outcome == "ok" else SignalKind.RUN_FAILED

        def attempt() -> Signal:
            check_key(requester_key, "requester_key")
            if outcome not in RUN_TERMINAL_SUMMARIES:
                raise InvalidSignal("outcome", "must be ok, error, timeout or cancelled")
            run = check_text(run_id, "run_id")
            return self.record(
                child_key,
                kind=kind,
                actor=Actor.system(),
                summary=RUN_TERMINAL_SUMMARIES[outcome],
                payload=None if outcome == "ok" else {"outcome": outcome},
                run_id=run,
                dedupe_key=f"run-terminal:{run}",
                agent_id=agent_id,
            )

        return self._best_effort(child_key, kind, attempt)

    def record_compacted(
        self,
        key: str | None,
        *,
        operation_id: str,
        session_id: str | None = None,
        run_id: str | None = None,
        agent_id: str | None = None,
    ) -> Signal | None:
        """History was compacted; nothing is recorded without a session key."""
        kind = SignalKind.COMPACTED
        if key is None or (isinstance(key, str) and not key.strip()):
            return None

        def attempt() -> Signal:
            operation = check_text(operation_id, "operation_id")
            draft = check_signal(
                session_key=key,
                agent_id=agent_id,
                kind=kind,
                actor_type="system",
                actor_id=None,
                summary="session compacted",
                run_id=run_id,
                session_id=session_id,
                dedupe_key=f"compacted:{operation}",
                now=self._clock.now(),
            )
            return self._commit(lambda tx: self._record_in(tx, draft))

        return self._best_effort(key, kind, attempt)

    def record_adopted(self, key: str, *, agent_id: str | None = None) -> Signal | None:
        """A session was adopted from an external catalog (log only)."""
        kind = SignalKind.ADOPTED
        return self._best_effort(
            key,
            kind,
            lambda: self.record(
                key, kind=kind, actor=Actor.system(), summary="session adopted", agent_id=agent_id
            ),
        )

    # -------------------------------------------------------------------------------- watching

    def watch(self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None) -> bool:
        """Register an explicit watch at the target's current head (SPEC §5.2).

        Returns False, writing nothing, for a watcher that is not agent-qualified, a bare target
        without its agent id, or a self-watch; True when registered or already watching (an existing
        cursor is never clobbered).
        """
        watcher = check_key(watcher_key, "watcher_key")
        check_key(target_key, "target_key")
        if not watch_cursor.can_watch(watcher):
            return False
        try:
            target = resolve_identity(target_key, target_agent_id, "target_key")
        except InvalidSignal:
            return False
        if watch_cursor.watcher_identity(watcher) == target:
            return False
        key = CursorKey(watcher, target.session_key, target.agent_id)
        with self._store.write() as tx:
            current = tx.cursor(key)
            head = tx.session(target).head
            command = RegisterWatch(**_key_fields(key), at_ms=self._now_ms(), head=head)
            events = watch_cursor.decide(command, current)
            if events:
                tx.append_cursor(key, events, before=current)
        return True

    def unwatch(self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None) -> bool:
        """Stop watching; True when a cursor was removed (SPEC §16)."""
        key = self._cursor_key(watcher_key, target_key, target_agent_id)
        with self._store.write() as tx:
            current = tx.cursor(key)
            events = watch_cursor.decide(RemoveWatch(**_key_fields(key), at_ms=self._now_ms()), current)
            if events:
                tx.append_cursor(key, events, before=current)
        return bool(events)

    def cursor(
        self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None
    ) -> Cursor | None:
        """The watcher's cursor on the target, or None."""
        state = self._store.cursor(self._cursor_key(watcher_key, target_key, target_agent_id))
        return Cursor.from_state(state) if state is not None else None

    @staticmethod
    def _cursor_key(watcher_key: object, target_key: object, target_agent_id: object) -> CursorKey:
        watcher = _query_key(watcher_key, "watcher_key")
        target = _query_identity(target_key, target_agent_id, "target_key")
        return CursorKey(watcher, target.session_key, target.agent_id)

    # --------------------------------------------------------------------------------- notices

    def pending_notices(self, watcher_key: str) -> list[Notice]:
        """The watcher's pending notices, one per stale target, without acknowledging them."""
        watcher = _query_key(watcher_key, "watcher_key")
        return [Notice.from_state(c) for c in self._store.cursors_of(watcher, pending_only=True)]

    def drain(self, watcher_key: str) -> list[Notice]:
        """Return the pending notices and acknowledge each (SPEC §6.3).

        Each cursor gets `L := N`, then exactly one follow-up notice where more arrived (`M > N`).
        """
        watcher = _query_key(watcher_key, "watcher_key")
        with self._store.write() as tx:
            pending = tx.cursors_of(watcher, pending_only=True)
            follow_ups = self._acknowledge_in(tx, pending)
        self._publish(_wakes(follow_ups))
        return [Notice.from_state(c) for c in pending]

    def acknowledge(self, watcher_key: str, targets: Iterable[str | Notice]) -> None:
        """Two-phase alternative to `drain`: acknowledge the notices read with `pending_notices`.

        A `Notice` names its target exactly; a key names every target with that key.
        """
        watcher = _query_key(watcher_key, "watcher_key")
        if isinstance(targets, str | bytes | Mapping) or not isinstance(targets, Iterable):
            raise InvalidQuery("targets", "must be an iterable of target keys or notices")
        targets = list(targets)  # read twice below; a generator must not be spent by the first pass
        if any(not isinstance(t, str | Notice) for t in targets):
            raise InvalidQuery("targets", "each target must be a session key or a Notice")
        exact = {(t.target, t.target_agent_id) for t in targets if isinstance(t, Notice)}
        by_key = {_query_key(t, "targets") for t in targets if isinstance(t, str)}
        with self._store.write() as tx:
            chosen = [
                c
                for c in tx.cursors_of(watcher, pending_only=True)
                if (c.target_key, c.target_agent_id) in exact or c.target_key in by_key
            ]
            follow_ups = self._acknowledge_in(tx, chosen)
        self._publish(_wakes(follow_ups))

    def _acknowledge_in(self, tx: WriteTransaction, cursors: Sequence[CursorState]) -> list[CursorState]:
        """Acknowledge each cursor; return those left with a follow-up notice."""
        now_ms = self._now_ms()
        follow_ups = []
        for current in cursors:
            events = watch_cursor.decide(AcknowledgeNotice(**_key_fields(current.key), at_ms=now_ms), current)
            tx.append_cursor(current.key, events, before=current)
            after: CursorState | None = current
            for event in events:
                after = watch_cursor.evolve(after, event)
            if after is not None and after.pending:
                follow_ups.append(after)
        return follow_ups

    def sweep(self) -> SweepReport:
        """Restart sweep (SPEC §6.5): re-freeze `N := M` on every open cursor of an existing watcher.

        Every such notice is re-published: its non-subagent watcher is woken after the commit.
        An acknowledged cursor (`L == M`) is never reopened.
        """
        with self._store.write() as tx:
            counts = tx.sweep(self._now_ms())
        woken = self._publish(_wakes(counts.republished))
        return SweepReport(
            refrozen=counts.refrozen,
            republished=len(counts.republished),
            woken=tuple(dict.fromkeys(woken)),
            skipped_missing_watchers=counts.skipped,
            prune=self.prune(force=True),
        )

    # -------------------------------------------------------------------------------- retention

    def prune(self, *, force: bool = True) -> PruneReport:
        """Prune history to the retention window and cap (SPEC §8), in one transaction.

        Signals older than `retention.days` go, then all but the newest `retention.max_signals`
        globally; each affected session's watermark is stamped first and no head is lowered;
        cursors not updated within the window expire; the event store drops what a replay no
        longer needs (ADR-0008). Without `force`, it runs only when the last prune is older than
        `retention.prune_interval` (an hour): exactly an hour is not yet older.
        """
        now_ms = self._now_ms()
        if not force and not self._prune_due(now_ms):
            return PruneReport(ran=False, at=from_epoch_ms(now_ms))
        with self._store.write() as tx:
            counts = tx.prune(now_ms, self._retention, self._archive)
        self._last_prune_ms = now_ms
        cutoffs = counts.cutoffs
        return PruneReport(
            ran=True,
            at=from_epoch_ms(now_ms),
            occurred_before=from_epoch_ms(cutoffs.occurred_before_ms),
            through_sequence=cutoffs.through_sequence,
            signals_removed=counts.signals_removed,
            sessions_stamped=counts.sessions_stamped,
            cursors_expired=counts.cursors_expired,
            events_deleted=counts.events_deleted,
            archived=counts.archived,
        )

    def _prune_due(self, now_ms: int) -> bool:
        """Whether the last prune, by any process sharing the store, is older than the interval."""
        if not self._retention.prune_due(last_prune_ms=self._last_prune_ms, now_ms=now_ms):
            return False
        shared = self._store.last_prune_ms()  # read only when the local timer says it is due
        if shared is not None and shared > self._last_prune_ms:
            self._last_prune_ms = shared
        return self._retention.prune_due(last_prune_ms=self._last_prune_ms, now_ms=now_ms)

    def _prune_if_due(self) -> None:
        """After a record: prune when the interval has passed; a failure never fails the record."""
        if not self._retention.prune_due(last_prune_ms=self._last_prune_ms, now_ms=self._now_ms()):
            return
        try:
            self.prune(force=False)
        except Exception as exc:  # noqa: BLE001 - the record is committed; pruning retries next time
            logger.warning("sessionwatch: prune failed (error=%s)", type(exc).__name__)

    # -------------------------------------------------------------------------------- upstream

    def link_upstream(
        self,
        key: str,
        *,
        catalog_id: str,
        host_id: str,
        thread_id: str,
        upstream_kind: str,
        upstream_ref: JsonValue,
        marker: JsonValue,
        agent_id: str | None = None,
    ) -> UpstreamLink:
        """Link an adopted session to its upstream (SPEC §10); the session is registered if new.

        Linking the same source again keeps the current marker; another source starts from
        `marker`. Either way it is a new link version with a fresh missing streak. A session that
        had no active link gets the log-only `adopted` signal in the same transaction.
        """
        identity = resolve_identity(key, agent_id)
        source = UpstreamSource(
            catalog_id=check_text(catalog_id, "catalog_id", _MAX_SOURCE_FIELD),
            host_id=check_text(host_id, "host_id", _MAX_SOURCE_FIELD),
            thread_id=check_text(thread_id, "thread_id", _MAX_SOURCE_FIELD),
            upstream_kind=check_text(upstream_kind, "upstream_kind", _MAX_SOURCE_FIELD),
            upstream_ref=_check_json(upstream_ref, "upstream_ref"),
        )
        now = self._clock.now()
        adopted = check_signal(
            session_key=identity.session_key,
            agent_id=identity.agent_id,
            kind=SignalKind.ADOPTED,
            actor_type="system",
            actor_id=None,
            summary="session adopted",
            now=now,
        )
        command = LinkUpstream(
            **_identity_fields(identity),
            source=source,
            marker=_check_json(marker, "marker"),
            at_ms=to_epoch_ms(now),
        )
        with self._store.write() as tx:
            before = tx.upstream_link(identity)
            self._apply(tx, identity, UpsertSession(**_identity_fields(identity)))
            tx.append_link(identity, upstream.decide(command, before))
            if before is None or not before.active:
                self._record_in(tx, adopted)
            after = tx.upstream_link(identity)
        if after is None:  # decide(LinkUpstream) always links
            raise AssertionError("a link command left no link")
        return UpstreamLink.from_state(after)

    def unlink_upstream(self, key: str, *, agent_id: str | None = None) -> UpstreamLink | None:
        """Remove the session's upstream link; returns the link removed, None when there was none."""
        identity = resolve_identity(key, agent_id)
        command = Unlink(**_identity_fields(identity), reason="unlinked", at_ms=self._now_ms())
        with self._store.write() as tx:
            before = tx.upstream_link(identity)
            events = upstream.decide(command, before)
            tx.append_link(identity, events)
        self.upstream_streaks.forget(identity)
        return UpstreamLink.from_state(before) if events and before is not None else None

    def upstream_link(self, key: str, *, agent_id: str | None = None) -> UpstreamLink | None:
        """The session's active upstream link, or None."""
        link = self._store.upstream_link(_query_identity(key, agent_id))
        return UpstreamLink.from_state(link) if link is not None and link.active else None

    def upstream_tick(
        self, providers: Mapping[str, UpstreamProvider], *, transcripts: Transcripts | None = None
    ) -> TickReport:
        """One upstream monitor pass (SPEC §10); `providers` maps a catalog id to its provider."""
        return self._upstream_pass(providers, transcripts, Publication())

    def _upstream_pass(
        self,
        providers: Mapping[str, UpstreamProvider],
        transcripts: Transcripts | None,
        publication: Publication,
    ) -> TickReport:
        return UpstreamPass(self, dict(providers), transcripts, publication).run()

    def start_upstream_monitor(
        self,
        providers: Mapping[str, UpstreamProvider],
        *,
        transcripts: Transcripts | None = None,
        interval: float = 60.0,
        initial_delay: float = 15.0,
    ) -> MonitorHandle:
        """Run `upstream_tick` every `interval` seconds on a thread, the first after `initial_delay`.

        `stop()` on the handle (or `close()` here) ends it; nothing is published afterwards.
        """
        for name, value in (("interval", interval), ("initial_delay", initial_delay)):
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise InvalidQuery(name, "must be a finite number of seconds")
        if interval <= 0 or initial_delay < 0:
            raise InvalidQuery("interval", "must be positive (and initial_delay not negative)")
        chosen = dict(providers)
        handle = MonitorHandle(
            lambda publication: self._upstream_pass(chosen, transcripts, publication),
            interval=float(interval),
            initial_delay=float(initial_delay),
        )
        with self._monitors_lock:
            self._monitors.append(handle)
        return handle.start()

    def apply_upstream_verdict(
        self,
        link: UpstreamLinkState,
        verdict: RecordActivity | AdvanceOnly | RecordMissing,
        *,
        session: SessionState,
    ) -> tuple[Outcome, Signal | None]:
        """Publish one monitor verdict in one transaction (the monitor's; hosts call `upstream_tick`).

        Nothing is written when the link or the session changed since the scan read them
        (`"aborted"`). Activity records `human_direct_message` (unless nobody watches any more) and
        then advances the marker; if the record fails, the marker stays. The third miss records
        `upstream_missing` and removes the link.
        """
        now = self._clock.now()
        identity = link.identity
        plan = upstream.publication(link, verdict, at_ms=to_epoch_ms(now))
        if isinstance(plan.link_command, AdvanceMarker):  # a provider's marker gets stored: bounded
            _check_json(plan.link_command.marker, "next_marker")
        draft = None
        if plan.signal is not None:
            draft = check_signal(
                session_key=link.session_key,
                agent_id=link.agent_id,
                actor_id=None,
                now=now,
                **plan.signal.model_dump(exclude={"occurred_at"}),
                occurred_at=_provider_time(plan.signal.occurred_at),
            )
        recorded: SignalRecorded | None = None
        wakes: list[Wake] = []
        with self._store.write() as tx:
            state = tx.session(identity)
            seen = (session.known, session.session_id)
            if tx.upstream_link(identity) != link or (state.known, state.session_id) != seen:
                return "aborted", None
            gated = verdict_is_gated(verdict) and session_gated(state, watched=tx.has_cursor_on(identity))
            if draft is not None and not gated:
                recorded, facts = self._record_in(tx, draft, spawn_edge=True)
                wakes = _wakes(facts)
            tx.append_link(identity, upstream.decide(plan.link_command, link))
        self._publish(wakes)
        self._prune_if_due()
        if isinstance(verdict, RecordMissing):
            outcome: Outcome = "missing"
        else:
            outcome = "recorded" if recorded is not None else "advanced"
        return outcome, Signal.from_event(recorded) if recorded is not None else None

    # -------------------------------------------------------------------------- reconciliation

    def session_status(
        self, key: str, *, changes_since: int | None = None, limit: int = 200, agent_id: str | None = None
    ) -> SessionStatus:
        """The session's head and, with `changes_since`, the typed delta after it (SPEC §7.1).

        Reading the status never advances a cursor (SPEC §6.3).
        """
        since = check_changes_since(changes_since)
        page = clamp_limit(limit)
        identity = _query_identity(key, agent_id)
        status = self._store.status(identity, since, page)
        if status is None:
            raise UnknownSession(key)
        return status

    def status_as_of(
        self,
        key: str,
        as_of: int,
        *,
        changes_since: int | None = None,
        limit: int = 200,
        agent_id: str | None = None,
        archive: str | Path | None = None,
    ) -> SessionStatus:
        """`session_status` as it was right after sequence `as_of`, from the event store.

        Within the retained window the event store answers alone; before a session's prune
        watermark, pass the prune `archive` (`Retention(archive=...)`), which holds every pruned
        signal. Otherwise a point before the watermark is an `InvalidQuery` naming `as_of`.
        """
        since = check_changes_since(changes_since)
        page = clamp_limit(limit)
        identity = _query_identity(key, agent_id)
        state = self._store.session(identity)
        if state is None:
            raise UnknownSession(key)
        found: dict[int, SignalRecorded] = {}
        if archive is not None:
            try:
                archived = [s for s in archived_signals(archive) if s.identity == identity]
            except (
                OSError,
                ValueError,
                LookupError,
            ) as exc:  # missing, unreadable, not JSON Lines, not signals
                raise InvalidQuery("archive", f"cannot read {archive} as a prune archive ({exc})") from None
            found.update((s.sequence, s) for s in archived)
        for event in self._store.replay():
            if isinstance(event, SignalRecorded) and event.identity == identity:
                found[event.sequence] = event
        history = [found[sequence] for sequence in sorted(found)]
        covered = archive is not None and (state.pruned_through == 0 or state.pruned_through in found)
        if archive is not None and not covered:
            raise InvalidQuery("archive", f"does not hold the pruned history of {key}")
        return status_as_of(state, as_of, history, archived=covered, changes_since=since, limit=page)

    def sessions_list(
        self, *, agent_id: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[SessionRow]:
        """Known sessions ordered by key, optionally filtered by agent id and session kinds (SPEC §7.2)."""
        rows = [SessionRow.from_state(s) for s in self._store.sessions()]
        if agent_id is not None:
            rows = [r for r in rows if r.agent_id == agent_id]
        if kinds is not None:
            if isinstance(kinds, str | bytes) or not isinstance(kinds, Iterable):
                raise InvalidQuery("kinds", "must be a sequence of session kinds")
            wanted = set(kinds)
            rows = [r for r in rows if r.kind in wanted]
        return rows

    # ------------------------------------------------------------------------------------ audit

    def rebuild_read_model(self) -> ReadModel:
        """Replay the whole event store into fresh read models (what `audit` compares with)."""
        return fold(self._store.replay())

    def audit(self, *, progress: Callable[[int], None] | None = None) -> AuditReport:
        """Replay the event store, diff the rebuilt read models with the stored ones, check the invariants.

        SPEC §14: heads monotonic and at least every retained sequence, watermarks not above heads,
        `L <= N <= M`, no pending notice for a self-caused or log-only signal, no message text.
        `progress(n)` is called every 1,000 events replayed. The store is read, never written, from
        one snapshot: writes that commit meanwhile are neither replayed nor compared. Python's
        cyclic garbage collector is paused while it runs (the replay allocates one large acyclic
        structure), for every thread of the process.
        """
        started = time.perf_counter()
        with self._store.snapshot() as snapshot, _collector_paused():  # a large acyclic structure
            history = replay_history(snapshot.replay(), progress=progress)
            stored = snapshot.read_model(like=history.rebuilt)
            violations = [*history.violations, *compare_read_models(stored, history.rebuilt)]
            replayed = history.events_replayed
            del history, stored  # freed before the collector resumes, so it has nothing left to scan
        return AuditReport(
            ok=not violations,
            violations=tuple(violations),
            events_replayed=replayed,
            seconds=time.perf_counter() - started,
        )


_UPSERT_FIELDS: Final = ("session_id", "kind", "spawned_by", "parent_session_key")
"""The registry fields `session.upserted.v1` sets; `update_session` passes them to the upsert."""

_RUN_OUTCOMES: Final = get_args(RunOutcome)


_LOGGED_KEY_LENGTH: Final = 200


def _bounded(key: object) -> str:
    """The key as text (a non-string as its `repr`), cut to `_LOGGED_KEY_LENGTH` characters (marked `…`)."""
    shown = key if isinstance(key, str) else repr(key)
    return shown if len(shown) <= _LOGGED_KEY_LENGTH else f"{shown[:_LOGGED_KEY_LENGTH]}…"


def _check_actor(actor: object) -> Actor:
    """An `Actor`, else `InvalidSignal` naming `actor` (a falsy value is not "not given")."""
    if not isinstance(actor, Actor):
        raise InvalidSignal("actor", "must be an Actor (Actor.human(), Actor.agent(key), Actor.system())")
    return actor


def _check_meta(given: Mapping[str, object]) -> SessionMeta:
    """The metadata values `update_session` was given, checked, else `InvalidSignal` naming the field."""
    for name, value in given.items():
        parts = value.items() if isinstance(value, Mapping) else [("", value)]
        if isinstance(value, Route):
            parts = value.model_dump().items()
        for part, text in parts:
            if isinstance(text, str):
                check_optional_text(text, f"{name}.{part}" if part else name)
    try:
        return SessionMeta.model_validate(dict(given))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "fields"
        raise InvalidSignal(field, error["msg"]) from None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (if it was on) for a burst of long-lived allocations."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _held_by(tx: WriteTransaction, identity: SessionIdentity) -> list[CursorState]:
    """The cursors an identity holds as watcher (only an agent-qualified key can hold any)."""
    if watch_cursor.watcher_identity(identity.session_key) != identity:
        return []
    return tx.cursors_of(identity.session_key, pending_only=False)


def _identity_fields(identity: SessionIdentity) -> dict[str, str]:
    return {"session_key": identity.session_key, "agent_id": identity.agent_id}


def verdict_is_gated(verdict: RecordActivity | AdvanceOnly | RecordMissing) -> bool:
    """Whether the verdict's signal is a human turn, which nobody watching leaves unrecorded."""
    return isinstance(verdict, RecordActivity)


def session_gated(state: SessionState, *, watched: bool) -> bool:
    """A human turn on a session nobody watches writes nothing (SPEC §4)."""
    return session.human_message_is_gated(state, has_registered_watchers=watched)


def _check_json(value: object, field: str) -> JsonValue:
    """A JSON-compatible value (markers, upstream refs) of at most 4 KiB, else `InvalidSignal`."""
    try:
        encoded = orjson.dumps(value)
    except TypeError:
        raise InvalidSignal(field, "must be a JSON-compatible value") from None
    if len(encoded) > _MAX_JSON_BYTES:
        raise InvalidSignal(field, f"must encode to at most {_MAX_JSON_BYTES} bytes of JSON")
    decoded: JsonValue = orjson.loads(encoded)
    return decoded


def _provider_time(occurred_at: object) -> datetime | float | None:
    """A provider's time for a signal; anything unusable (naive, not a time) means now."""
    if isinstance(occurred_at, datetime):
        return occurred_at if occurred_at.utcoffset() is not None else None
    if isinstance(occurred_at, int | float) and not isinstance(occurred_at, bool):
        return occurred_at
    return None


def _key_fields(key: CursorKey) -> dict[str, str]:
    return {"watcher": key.watcher, "target_key": key.target_key, "target_agent_id": key.target_agent_id}


def open_store(
    url: str | None = None,
    *,
    synchronous: Literal["normal", "full"] | None = None,
) -> SignalStore:
    """Build the store a URL names (SPEC §13): memory, a SQLite file (the default), or PostgreSQL."""
    parsed = parse_url(url)
    if parsed.scheme == "memory":
        return MemorySignalStore()
    if parsed.postgres is not None:
        if synchronous is not None:
            raise ValueError("synchronous: a SQLite setting; PostgreSQL durability is the server's")
        try:  # the optional `sessionwatch[postgres]` extra: imported only when asked for
            from sessionwatch.adapters.stores.postgres import PostgresSignalStore  # noqa: PLC0415
        except ImportError as exc:
            raise StoreError(
                f"PostgreSQL stores need psycopg: pip install 'sessionwatch[postgres]' ({exc})"
            ) from exc
        return PostgresSignalStore(parsed.postgres)
    if synchronous is not None and parsed.synchronous is not None and synchronous != parsed.synchronous:
        raise ValueError("synchronous: the argument and the URL disagree")
    return SqliteSignalStore(parsed.path, synchronous=synchronous or parsed.synchronous or "normal")


def open_watch(
    url: str | None = None,
    *,
    clock: Clock | None = None,
    waker: Waker | None = None,
    synchronous: Literal["normal", "full"] | None = None,
    sweep_on_open: bool = True,
    retention: Retention | None = None,
    cross_process_wakes: bool = True,
) -> SessionWatch:
    """Open sessionwatch on the store `url` names (`None`: `$SESSIONWATCH_URL` or `./sessionwatch.db`).

    The restart sweep (SPEC §6.5) and its forced prune run once unless `sweep_on_open=False`.
    `cross_process_wakes=False` keeps a PostgreSQL store from waking `waker` for other processes.
    """
    store = open_store(url, synchronous=synchronous)
    try:
        watch = SessionWatch(
            store, clock=clock, waker=waker, retention=retention, cross_process_wakes=cross_process_wakes
        )
    except BaseException:
        store.close()
        raise
    if sweep_on_open:
        try:
            watch.startup_sweep = watch.sweep()
        except BaseException:
            watch.close()
            raise
    return watch
