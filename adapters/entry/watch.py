# Generated from adapters/entry/aio.py by tests/async_to_sync.py (`make generate`): edit that.
"""`SessionWatch`, the synchronous façade hosts program against.

Each method names its use case (`adapters/app/`) and hands it to the caller's-thread scheduler:
every write is one transaction through group commit, its wakes are published after the commit, and
a record may be followed by a due prune. No rule lives here. Producers are best effort (they never
raise: one log line, None); the strict API raises typed errors and writes nothing on error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from sessionwatch.adapters.app import creations, maintenance, notices, queries, recording, registry
from sessionwatch.adapters.app.core import Core, is_async_waker, wake_from_elsewhere
from sessionwatch.adapters.app.recording import SignalInput
from sessionwatch.adapters.app.reports import AuditReport, PruneReport, RunOutcome, RunRecord, SweepReport
from sessionwatch.adapters.app.scheduler import CallerScheduler
from sessionwatch.adapters.entry.watch_upstream import Upstream
from sessionwatch.adapters.stores.port import CrossProcessWakes, SignalStore
from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.ports import Clock, Waker
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.signals import Actor, SignalKind
from sessionwatch.domain.watch_cursor import DEFAULT_MAIN_KEY
from sessionwatch.projections.models import (
    Cursor,
    Notice,
    RegistryEntry,
    SessionEntry,
    SessionRow,
    SessionStatus,
    Signal,
)
from sessionwatch.projections.read_model import ReadModel

__all__ = ["SessionWatch", "SignalInput"]


class SessionWatch(Upstream):
    """Session state awareness over one store. Thread-safe; close it (or use `with`) when done.

    On a store shared by several processes (PostgreSQL), a `waker` is also called, from a listener
    thread, for notices that other processes open, unless `cross_process_wakes=False`.
    """

    def __init__(
        self,
        store: SignalStore,
        *,
        clock: Clock | None = None,
        waker: Waker | None = None,
        retention: Retention | None = None,
        cross_process_wakes: bool = True,
        notice_links: str | None = None,
        notify_terminal_runs: bool = False,
        main_key: str = DEFAULT_MAIN_KEY,
        wake_coalesce: float = 0.0,
        notify_on_create: bool = False,
    ) -> None:
        if is_async_waker(waker):
            raise InvalidQuery("waker", "is async: its wakes need an event loop, use sessionwatch.aio.open()")
        self._core = Core.build(
            store,
            clock=clock,
            waker=waker,
            retention=retention,
            notice_links=notice_links,
            notify_terminal_runs=notify_terminal_runs,
            notify_on_create=notify_on_create,
            main_key=main_key,
            wake_coalesce=wake_coalesce,
        )
        self._scheduler = CallerScheduler(self._core)
        self.startup_sweep: SweepReport | None = None
        "What the sweep run by `open()` did (None: `sweep_on_open=False`, or deferred to the next write)."
        self.active_runs = self._core.active_runs
        self.run_ledger = self._core.run_ledger
        self.upstream_streaks = self._core.upstream_streaks
        if waker is not None and cross_process_wakes and isinstance(store, CrossProcessWakes):
            store.listen_for_wakes(functools.partial(wake_from_elsewhere, self._core))

    def close(self) -> None:
        """Stop the upstream monitors started here, then release the store."""
        self._core.monitors.stop_all()
        self._core.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def retention(self) -> Retention:
        """The retention policy in force."""
        return self._core.retention

    @property
    def store(self) -> SignalStore:
        """The underlying store (for audits and tests; its calls block the thread that makes them)."""
        return self._core.opened_store

    @property
    def clock(self) -> Clock:
        """The clock every timestamp of this instance comes from (the session tools share it)."""
        return self._core.clock

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
        """Register a session or update its registry fields; None keeps a value (a new one is `main`)."""
        return self._scheduler.run(
            registry.upsert_session(
                self._core,
                key,
                agent_id=agent_id,
                session_id=session_id,
                spawned_by=spawned_by,
                parent_session_key=parent_session_key,
                kind=kind,
            )
        )

    def reset_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Reset a session: the cursors it holds as watcher go, its history stays."""
        self._scheduler.run(registry.reset_session(self._core, key, agent_id=agent_id))

    def delete_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Delete one identity: its signals, its head and every cursor it holds or is the target of."""
        self._scheduler.run(registry.delete_session(self._core, key, agent_id=agent_id))

    def update_session(self, key: str, *, agent_id: str | None = None, **fields: object) -> RegistryEntry:
        """Set registry fields of a session, registering it first if it is unknown."""
        return self._scheduler.run(registry.update_session(self._core, key, agent_id=agent_id, **fields))

    def registry_entry(self, key: str, *, agent_id: str | None = None) -> RegistryEntry | None:
        """A known session's registry entry, or None."""
        return self._scheduler.read(registry.registry_entry, self._core, key, agent_id=agent_id)

    def registry_entries(self) -> list[RegistryEntry]:
        """Every known session's registry entry, ordered by key and agent id."""
        return self._scheduler.read(registry.registry_entries, self._core)

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
        """A run of the session began: the upstream monitor leaves its link alone until it ends."""
        core = self._open_core()
        registry.run_started(
            core, key, run_id, agent_id=agent_id, requester_key=requester_key, label=label, mode=mode
        )

    def run_ended(
        self, key: str, run_id: str, *, agent_id: str | None = None, outcome: RunOutcome | None = None
    ) -> None:
        """A run of the session ended (`ok`, `error`, `timeout`, `cancelled`; None when unknown)."""
        registry.run_ended(self._open_core(), key, run_id, agent_id=agent_id, outcome=outcome)

    def runs(self) -> list[RunRecord]:
        """The runs this process heard of: active ones and those ended within a day, newest first."""
        return registry.runs(self._open_core())

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
        """Record one signal with its reactions; a duplicate dedupe key returns the existing signal."""
        return self._scheduler.run(
            recording.record(
                recording.draft(
                    self._core,
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
            )
        )

    def record_many(self, inputs: Iterable[SignalInput]) -> list[Signal]:
        """Record many signals in one transaction, all or none, at one instant of the clock."""
        return self._scheduler.settle(recording.record_many(self._core, inputs))

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
        session_id: str | None = None,
    ) -> Signal | None:
        """A human turn straight into a session; agents, the system and unwatched sessions record nothing.

        `session_id`, the session's incarnation when the host knows it, is carried by the signal.
        """
        return recording.best_effort(
            self._scheduler,
            key,
            SignalKind.HUMAN_DIRECT_MESSAGE,
            lambda: recording.human_message(
                self._core,
                key,
                channel=channel,
                actor=actor,
                run_id=run_id,
                occurred_at=occurred_at,
                dedupe_key=dedupe_key,
                agent_id=agent_id,
                session_id=session_id,
            ),
        )

    def record_goal_changed(
        self,
        key: str,
        *,
        summary: str,
        actor: Actor | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> Signal | None:
        """The session's goal was created, updated or cleared; always recorded, with `session_id` if given."""
        return recording.best_effort(
            self._scheduler,
            key,
            SignalKind.GOAL_CHANGED,
            lambda: recording.goal_changed(
                self._core, key, summary=summary, actor=actor, agent_id=agent_id, session_id=session_id
            ),
        )

    def record_spawn(
        self, *, requester_key: str, child_key: str, child_run_id: str, agent_id: str | None = None
    ) -> Signal | None:
        """A child was spawned: registered under its requester, whose cursor `child_spawned` seeds."""
        return recording.best_effort(
            self._scheduler,
            child_key,
            SignalKind.CHILD_SPAWNED,
            lambda: recording.spawn(
                self._core,
                requester_key=requester_key,
                child_key=child_key,
                child_run_id=child_run_id,
                agent_id=agent_id,
            ),
        )

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
        return recording.best_effort(
            self._scheduler,
            child_key,
            recording.terminal_kind(outcome),
            lambda: recording.run_terminal(
                self._core,
                child_key=child_key,
                run_id=run_id,
                requester_key=requester_key,
                outcome=outcome,
                agent_id=agent_id,
            ),
        )

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
        return recording.best_effort(
            self._scheduler,
            key,
            SignalKind.COMPACTED,
            lambda: recording.compacted(
                self._core,
                key,
                operation_id=operation_id,
                session_id=session_id,
                run_id=run_id,
                agent_id=agent_id,
            ),
        )

    def record_adopted(self, key: str, *, agent_id: str | None = None) -> Signal | None:
        """A session was adopted from an external catalog (log only)."""
        return recording.best_effort(
            self._scheduler,
            key,
            SignalKind.ADOPTED,
            lambda: recording.adopted(self._core, key, agent_id=agent_id),
        )

    def record_session_created(
        self,
        key: str,
        *,
        actor: Actor,
        session_id: str | None = None,
        agent_id: str | None = None,
        internal: bool = False,
    ) -> Signal | None:
        """A session was created (log only); with `notify_on_create`, noted on its main session's digest."""
        return recording.best_effort(
            self._scheduler,
            key,
            SignalKind.CREATED,
            lambda: creations.session_created(
                self._core, key, actor=actor, session_id=session_id, agent_id=agent_id, internal=internal
            ),
        )

    def watch(
        self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None, ambient: bool = False
    ) -> bool:
        """Register a watch at the target's current head; False (nothing written) when refused.

        `ambient=True`: its notices are queue-only (never woken); an explicit watch promotes it.
        """
        return self._scheduler.settle(
            notices.watch(
                self._core, watcher_key, target_key, target_agent_id=target_agent_id, ambient=ambient
            )
        )

    def unwatch(self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None) -> bool:
        """Stop watching; True when a cursor was removed."""
        return self._scheduler.run(
            notices.unwatch(self._core, watcher_key, target_key, target_agent_id=target_agent_id)
        )

    def cursor(
        self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None
    ) -> Cursor | None:
        """The watcher's cursor on the target, or None."""
        return self._scheduler.read(
            notices.cursor, self._core, watcher_key, target_key, target_agent_id=target_agent_id
        )

    def watched_by(self, watcher_key: str) -> list[Cursor]:
        """The watcher's cursors, ordered by target: positions, and `pending` while a notice is open.

        Raises:
            InvalidQuery: a malformed `watcher_key`.
        """
        return self._scheduler.read(notices.watched_by, self._core, watcher_key)

    def is_watched(self, key: str, *, agent_id: str | None = None) -> bool:
        """Whether another session watches this one (holds a cursor on it, ambient ones included).

        Raises:
            InvalidQuery: a malformed key, or a bare key without `agent_id`.
        """
        return self._scheduler.read(notices.is_watched, self._core, key, agent_id=agent_id)

    def watch_prompt(self, watcher_key: str) -> str:
        """A short block for the watcher's system prompt: the sessions it watches and how to reconcile.

        It says the session tools can read them, lists at most 20 sessions in target order (the rest
        as "and K more") within 2,000 characters, and is byte-identical for the same cursors. A
        watcher without cursors gets "", so the host can leave the section out.

        Raises:
            InvalidQuery: a malformed `watcher_key`.
        """
        return self._scheduler.read(notices.watch_prompt, self._core, watcher_key)

    def pending_notices(self, watcher_key: str) -> list[Notice]:
        """The watcher's pending notices, one per stale target, without acknowledging them."""
        return self._scheduler.read(notices.pending_notices, self._core, watcher_key)

    def drain(self, watcher_key: str) -> list[Notice]:
        """Return the pending notices and acknowledge each (`L := N`; one follow-up where `M > N`)."""
        return self._scheduler.run(notices.drain(self._core, watcher_key))

    def acknowledge(self, watcher_key: str, targets: Iterable[str | Notice]) -> None:
        """Two-phase alternative to `drain`: acknowledge the notices read with `pending_notices`."""
        self._scheduler.run(notices.acknowledge(self._core, watcher_key, targets))

    def sweep(self) -> SweepReport:
        """Restart sweep: re-freeze and re-publish every open notice of an existing watcher, then prune."""
        counts, woken = self._scheduler.run_woken(maintenance.sweep(self._core))
        return maintenance.sweep_report(counts, woken, prune=self.prune(force=True))

    def prune(self, *, force: bool = True) -> PruneReport:
        """Prune history to the retention window and cap, in one transaction (without `force`: when due)."""
        return self._scheduler.settle(maintenance.prune(self._core, force=force))

    def session_status(
        self, key: str, *, changes_since: int | None = None, limit: int = 200, agent_id: str | None = None
    ) -> SessionStatus:
        """The session's head and, with `changes_since`, the typed delta after it; never acknowledges."""
        return self._scheduler.read(
            queries.session_status,
            self._core,
            key,
            changes_since=changes_since,
            limit=limit,
            agent_id=agent_id,
        )

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
        """`session_status` right after sequence `as_of` (before a watermark, from the prune `archive`)."""
        return self._scheduler.read(
            queries.status_in_the_past,
            self._core,
            key,
            as_of,
            changes_since=changes_since,
            limit=limit,
            agent_id=agent_id,
            archive=archive,
        )

    def sessions_list(
        self, *, agent_id: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[SessionRow]:
        """Known sessions ordered by key, optionally filtered by agent id and session kinds."""
        return self._scheduler.read(queries.sessions_list, self._core, agent_id=agent_id, kinds=kinds)

    def rebuild_read_model(self) -> ReadModel:
        """Replay the whole event store into fresh read models (what `audit` compares with)."""
        return self._scheduler.read(queries.rebuild_read_model, self._core)

    def audit(self, *, progress: Callable[[int], None] | None = None) -> AuditReport:
        """Replay the event store from one snapshot, diff the rebuilt read models, check the invariants."""
        return self._scheduler.read(queries.audit, self._core, progress=progress)
