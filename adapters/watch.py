"""`SessionWatch`, the façade hosts program against (SPEC §13): load, decide, append, in one transaction.

Producers are best effort: they never raise, they log one line (session key, kind, error class;
never payload text) and return None. The strict API raises typed errors and writes nothing on error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict

from sessionwatch.adapters.clock import SystemClock
from sessionwatch.adapters.memory_store import MemorySignalStore
from sessionwatch.adapters.sqlite_store import SqliteSignalStore
from sessionwatch.adapters.store import SignalStore, WriteTransaction
from sessionwatch.adapters.urls import parse_url
from sessionwatch.domain import session
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.keys import SessionIdentity, check_key, resolve_identity
from sessionwatch.domain.ports import Clock
from sessionwatch.domain.recording import SignalDraft, check_signal
from sessionwatch.domain.session import (
    DeleteSession,
    ResetSession,
    SessionCommand,
    SessionEvent,
    UpsertSession,
)
from sessionwatch.domain.signals import (
    RUN_TERMINAL_SUMMARIES,
    Actor,
    SignalKind,
    check_optional_text,
    check_text,
    human_message_summary,
)
from sessionwatch.projections.models import SessionEntry, SessionRow, SessionStatus, Signal
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.projections.status import check_changes_since, clamp_limit

logger = logging.getLogger("sessionwatch")
logger.addHandler(logging.NullHandler())  # a library never prints through logging's last resort

_MAX_KIND_LENGTH = 64


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


def _query_identity(key: object, agent_id: object) -> SessionIdentity:
    try:
        return resolve_identity(key, agent_id)
    except InvalidSignal as exc:
        raise InvalidQuery(exc.field, exc.reason) from None


class SessionWatch:
    """Session state awareness over one store. Thread-safe; close it (or use `with`) when done."""

    def __init__(self, store: SignalStore, *, clock: Clock | None = None) -> None:
        self._store = store
        self._clock: Clock = clock or SystemClock()

    # ------------------------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Release the store."""
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def store(self) -> SignalStore:
        """The underlying store (for audits and tests)."""
        return self._store

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
        command = UpsertSession(
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
        with self._store.write() as tx:
            self._apply(tx, identity, command)
            state = tx.session(identity)
        return SessionEntry.from_state(state)

    def reset_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Reset a session: the cursors it holds as watcher go, its history stays (SPEC §9)."""
        identity = resolve_identity(key, agent_id)
        with self._store.write() as tx:
            self._apply(
                tx,
                identity,
                ResetSession(session_key=identity.session_key, agent_id=identity.agent_id),
            )

    def delete_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Delete one identity with its signals and head; other agents' same key is untouched."""
        identity = resolve_identity(key, agent_id)
        with self._store.write() as tx:
            self._apply(
                tx,
                identity,
                DeleteSession(session_key=identity.session_key, agent_id=identity.agent_id),
            )

    @staticmethod
    def _check_kind_name(kind: object) -> str:
        if not isinstance(kind, str) or not kind.strip() or len(kind) > _MAX_KIND_LENGTH:
            raise InvalidSignal(
                "kind", f"session kind must be a non-empty string of at most {_MAX_KIND_LENGTH}"
            )
        return kind

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
    ) -> Signal:
        """Record one signal; a duplicate dedupe key returns the existing signal unchanged."""
        draft = self._draft(
            SignalInput.model_construct(
                session_key=key,
                kind=kind,
                actor=actor,
                summary=summary,
                payload=payload,
                run_id=run_id,
                occurred_at=occurred_at,
                dedupe_key=dedupe_key,
                agent_id=agent_id,
            )
        )
        with self._store.write() as tx:
            recorded = self._record_in(tx, draft)
        return Signal.from_event(recorded)

    def record_many(self, inputs: Iterable[SignalInput]) -> list[Signal]:
        """Record many signals in one transaction: all of them, or none when any is invalid."""
        drafts = []
        for index, item in enumerate(inputs):
            if not isinstance(item, SignalInput):
                raise InvalidSignal(f"inputs[{index}]", "must be a SignalInput")
            try:
                drafts.append(self._draft(item))
            except InvalidSignal as exc:
                raise InvalidSignal(f"inputs[{index}].{exc.field}", exc.reason) from None
        if not drafts:
            return []
        with self._store.write() as tx:
            recorded = [self._record_in(tx, draft) for draft in drafts]
        return [Signal.from_event(event) for event in recorded]

    def _draft(self, item: SignalInput) -> SignalDraft:
        actor = item.actor
        if not isinstance(actor, Actor):
            raise InvalidSignal("actor", "must be an Actor (Actor.human(), Actor.agent(key), Actor.system())")
        return check_signal(
            session_key=item.session_key,
            agent_id=item.agent_id,
            kind=item.kind,
            actor_type=actor.actor_type,
            actor_id=actor.actor_id,
            summary=item.summary,
            payload=item.payload,
            run_id=item.run_id,
            occurred_at=item.occurred_at,
            dedupe_key=item.dedupe_key,
            now=self._clock.now(),
        )

    @staticmethod
    def _apply(
        tx: WriteTransaction, identity: SessionIdentity, command: SessionCommand
    ) -> list[SessionEvent]:
        events = session.decide(command, tx.session(identity))
        if events:
            tx.append(identity, events)
        return events

    def _record_in(self, tx: WriteTransaction, draft: SignalDraft) -> session.SignalRecorded:
        if draft.dedupe_key is not None:
            existing = tx.signal_by_dedupe(draft.dedupe_key)
            if existing is not None:
                return existing
        events = self._apply(tx, draft.identity, draft.at(tx.next_sequence()))
        recorded = events[-1]
        if not isinstance(recorded, session.SignalRecorded):  # the counter is above every head
            raise AssertionError("a freshly allocated sequence was not above the head")  # noqa: TRY004
        return recorded

    # ------------------------------------------------------------------------------- producers

    def _best_effort(self, key: object, kind: SignalKind, attempt: object) -> Signal | None:
        """Run a producer; any failure is logged once (key, kind, error class) and gives None."""
        try:
            result = attempt()  # type: ignore[operator]
        except Exception as exc:  # noqa: BLE001 - recording must never fail the host's action
            reason = exc.field if isinstance(exc, InvalidSignal) else type(exc).__name__
            logger.warning(
                "sessionwatch: signal not recorded (session_key=%r kind=%s reason=%s)",
                key,
                kind.value,
                reason,
                extra={"session_key": key, "signal_kind": kind.value, "reason": reason},
            )
            return None
        return result if isinstance(result, Signal) else None

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
            who = actor or Actor.human()
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
            with self._store.write() as tx:
                # A duplicate returns the existing signal even where a new one would be refused.
                existing = tx.signal_by_dedupe(draft.dedupe_key) if draft.dedupe_key else None
                if existing is not None:
                    return Signal.from_event(existing)
                if who.actor_type != "human":
                    return None
                state = tx.session(draft.identity)
                if session.human_message_is_gated(state, has_registered_watchers=False):
                    return None
                return Signal.from_event(self._record_in(tx, draft))

        return self._best_effort(key, kind, attempt)

    def record_goal_changed(
        self, key: str, *, summary: str, actor: Actor | None = None, agent_id: str | None = None
    ) -> Signal | None:
        """The session's goal was created, updated or cleared; always recorded (SPEC §4)."""
        who = actor or Actor.system()
        return self._best_effort(
            key,
            SignalKind.GOAL_CHANGED,
            lambda: self.record(
                key, kind=SignalKind.GOAL_CHANGED, actor=who, summary=summary, agent_id=agent_id
            ),
        )

    def record_spawn(
        self, *, requester_key: str, child_key: str, child_run_id: str, agent_id: str | None = None
    ) -> Signal | None:
        """A child was spawned: registers it under its requester and records `child_spawned` on it."""
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
            with self._store.write() as tx:
                existing = tx.signal_by_dedupe(f"child-spawned:{run}")
                if existing is not None:
                    return Signal.from_event(existing)
                upsert = UpsertSession(
                    session_key=draft.session_key, agent_id=draft.agent_id, spawned_by=requester
                )
                self._apply(tx, draft.identity, upsert)
                return Signal.from_event(self._record_in(tx, draft))

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
            with self._store.write() as tx:
                return Signal.from_event(self._record_in(tx, draft))

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

    # -------------------------------------------------------------------------- reconciliation

    def session_status(
        self,
        key: str,
        *,
        changes_since: int | None = None,
        limit: int = 200,
        agent_id: str | None = None,
    ) -> SessionStatus:
        """The session's head and, with `changes_since`, the typed delta after it (SPEC §7.1)."""
        since = check_changes_since(changes_since)
        page = clamp_limit(limit)
        identity = _query_identity(key, agent_id)
        status = self._store.status(identity, since, page)
        if status is None:
            raise UnknownSession(key)
        return status

    def sessions_list(
        self, *, agent_id: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[SessionRow]:
        """Known sessions ordered by key, optionally filtered by agent id and session kinds (SPEC §7.2)."""
        rows = [SessionRow.from_state(s) for s in self._store.sessions()]
        if agent_id is not None:
            rows = [r for r in rows if r.agent_id == agent_id]
        if kinds is not None:
            wanted = set(kinds)
            rows = [r for r in rows if r.kind in wanted]
        return rows

    # ------------------------------------------------------------------------------------ audit

    def rebuild_read_model(self) -> ReadModel:
        """Replay the whole event store into fresh read models (what `audit` compares with)."""
        from sessionwatch.projections.read_model import fold  # noqa: PLC0415 - audit-only path

        return fold(self._store.replay())


def open_store(
    url: str | None = None,
    *,
    synchronous: Literal["normal", "full"] | None = None,
) -> SignalStore:
    """Build the store a URL names (SPEC §13): memory, or a SQLite file (the default)."""
    parsed = parse_url(url)
    if parsed.scheme == "memory":
        return MemorySignalStore()
    if synchronous is not None and parsed.synchronous is not None and synchronous != parsed.synchronous:
        raise ValueError("synchronous: the argument and the URL disagree")
    return SqliteSignalStore(parsed.path, synchronous=synchronous or parsed.synchronous or "normal")


def open_watch(
    url: str | None = None,
    *,
    clock: Clock | None = None,
    synchronous: Literal["normal", "full"] | None = None,
) -> SessionWatch:
    """Open sessionwatch on the store `url` names (`None`: `$SESSIONWATCH_URL` or `./sessionwatch.db`)."""
    return SessionWatch(open_store(url, synchronous=synchronous), clock=clock)
