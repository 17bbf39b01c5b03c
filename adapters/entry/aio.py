"""`AsyncSessionWatch`, the asyncio façade, and `open()`: every capability of `SessionWatch` as coroutines.

The same use cases as the sync façade (`adapters/app/`), handed to the event-loop scheduler: writes
run on the store's writer thread, which commits together what concurrent coroutines submitted, and
each coroutine resumes once its own write is durable; reads run on reader threads. No store call
runs on the loop's thread. Producers stay best effort. A write already submitted is not undone by
cancelling its coroutine; `aclose()` (or leaving `async with`) finishes the queued writes and stops
every thread this façade started.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from sessionwatch.adapters.app import (
    creations,
    maintenance,
    notices,
    queries,
    recording,
    registry,
)
from sessionwatch.adapters.app.core import Core
from sessionwatch.adapters.app.loop_scheduler import LoopScheduler
from sessionwatch.adapters.app.recording import SignalInput
from sessionwatch.adapters.app.reports import (
    AuditReport,
    PruneReport,
    RunOutcome,
    RunRecord,
    SweepReport,
)
from sessionwatch.adapters.entry.aio_upstream import AsyncUpstream
from sessionwatch.adapters.stores.port import CrossProcessWakes, SignalStore
from sessionwatch.domain.ports import AsyncWaker, Clock, Waker
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

if True:  # ASYNC: what only the asyncio façade has; `else:` holds what only the sync one has
    import asyncio
    from contextvars import ContextVar

    from sessionwatch.adapters.app.core import wakes_from_elsewhere
    from sessionwatch.adapters.upstream.aio_monitor import AsyncMonitorHandle

    __all__ = ["OPENING_FOR", "AsyncMonitorHandle", "AsyncSessionWatch"]

    OPENING_FOR: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar(
        "sessionwatch_opening_for", default=None
    )
    """The loop `open()` builds a façade for on a thread of its own, so no store call runs on the loop."""
else:
    import functools

    from sessionwatch.adapters.app.core import is_async_waker, wake_from_elsewhere
    from sessionwatch.adapters.app.scheduler import CallerScheduler
    from sessionwatch.domain.errors import InvalidQuery

    __all__ = ["SessionWatch", "SignalInput"]  # noqa: F822 - the names of the sync twin, watch.py


class AsyncSessionWatch(AsyncUpstream):
    """Session state awareness over one store, for the coroutines of one event loop.

    Build it with `await sessionwatch.aio.open(...)`; close it with `await watch.aclose()` or
    `async with`. The waker may be sync (`wake(...)`, called off the loop) or async
    (`async def wake(...)`, a task on the loop); a write never awaits its wakes.
    """

    def __init__(
        self,
        store: SignalStore,
        *,
        clock: Clock | None = None,
        waker: Waker | AsyncWaker | None = None,
        retention: Retention | None = None,
        cross_process_wakes: bool = True,
        notice_links: str | None = None,
        notify_terminal_runs: bool = False,
        main_key: str = DEFAULT_MAIN_KEY,
        wake_coalesce: float = 0.0,
        notify_on_create: bool = False,
    ) -> None:
        if True:  # ASYNC
            loop = OPENING_FOR.get() or asyncio.get_running_loop()
        elif is_async_waker(waker):
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
        if True:  # ASYNC
            self._scheduler = LoopScheduler(self._core, loop)
            self._loop = loop
            self._monitors: list[AsyncMonitorHandle] = []
        else:
            self._scheduler = CallerScheduler(self._core)
        self.startup_sweep: SweepReport | None = None
        """What the sweep run by `open()` did (None: `sweep_on_open=False`, or deferred to the next write)."""
        self.active_runs = self._core.active_runs
        self.run_ledger = self._core.run_ledger
        self.upstream_streaks = self._core.upstream_streaks
        if waker is not None and cross_process_wakes and isinstance(store, CrossProcessWakes):
            if True:  # ASYNC
                try:
                    store.listen_for_wakes(self._wake_from_elsewhere)
                except BaseException:
                    self._scheduler.writer.close()  # the façade is not built: its writer thread goes too
                    raise
            else:
                store.listen_for_wakes(functools.partial(wake_from_elsewhere, self._core))

    # ------------------------------------------------------------------------------- lifecycle

    if True:  # ASYNC

        def _wake_from_elsewhere(self, watcher: str, target_key: str) -> None:
            """On the listener thread: another process opened this notice; wake its watcher from the loop."""
            wakes = self._core.coalesced(wakes_from_elsewhere(watcher, target_key))
            self._loop.call_soon_threadsafe(self._scheduler.publish_in_background, wakes)

        async def aclose(self) -> None:
            """Stop the monitors started here, finish the queued writes, stop every thread, free the store."""
            for monitor in self._monitors:
                await monitor.stop()
            self._monitors.clear()
            await self._scheduler.aclose()

        async def settled(self) -> None:
            """Wait until the wakes and prunes that earlier writes left running in the background are done."""
            await self._scheduler.idle()

        @property
        def writer_thread(self) -> int | None:
            """The id of the thread every write of this instance runs on."""
            return self._scheduler.writer.ident

    else:

        def close(self) -> None:
            """Stop the upstream monitors started here, then release the store."""
            self._core.monitors.stop_all()
            self._core.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

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

    # -------------------------------------------------------------------------------- sessions

    async def upsert_session(
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
        return await self._scheduler.run(
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

    async def reset_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Reset a session: the cursors it holds as watcher go, its history stays."""
        await self._scheduler.run(registry.reset_session(self._core, key, agent_id=agent_id))

    async def delete_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Delete one identity: its signals, its head and every cursor it holds or is the target of."""
        await self._scheduler.run(registry.delete_session(self._core, key, agent_id=agent_id))

    async def update_session(
        self, key: str, *, agent_id: str | None = None, **fields: object
    ) -> RegistryEntry:
        """Set registry fields of a session, registering it first if it is unknown."""
        return await self._scheduler.run(
            registry.update_session(self._core, key, agent_id=agent_id, **fields)
        )

    async def registry_entry(self, key: str, *, agent_id: str | None = None) -> RegistryEntry | None:
        """A known session's registry entry, or None."""
        return await self._scheduler.read(registry.registry_entry, self._core, key, agent_id=agent_id)

    async def registry_entries(self) -> list[RegistryEntry]:
        """Every known session's registry entry, ordered by key and agent id."""
        return await self._scheduler.read(registry.registry_entries, self._core)

    async def run_started(
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

    async def run_ended(
        self, key: str, run_id: str, *, agent_id: str | None = None, outcome: RunOutcome | None = None
    ) -> None:
        """A run of the session ended (`ok`, `error`, `timeout`, `cancelled`; None when unknown)."""
        registry.run_ended(self._open_core(), key, run_id, agent_id=agent_id, outcome=outcome)

    async def runs(self) -> list[RunRecord]:
        """The runs this process heard of: active ones and those ended within a day, newest first."""
        return registry.runs(self._open_core())

    # ---------------------------------------------------------------------------------- strict

    async def record(
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
        return await self._scheduler.run(
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

    async def record_many(self, inputs: Iterable[SignalInput]) -> list[Signal]:
        """Record many signals in one transaction, all or none, at one instant of the clock."""
        return await self._scheduler.settle(recording.record_many(self._core, inputs))

    # ------------------------------------------------------------------------------- producers

    async def record_human_message(
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
        return await recording.best_effort_async(
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

    async def record_goal_changed(
        self,
        key: str,
        *,
        summary: str,
        actor: Actor | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> Signal | None:
        """The session's goal was created, updated or cleared; always recorded, with `session_id` if given."""
        return await recording.best_effort_async(
            self._scheduler,
            key,
            SignalKind.GOAL_CHANGED,
            lambda: recording.goal_changed(
                self._core, key, summary=summary, actor=actor, agent_id=agent_id, session_id=session_id
            ),
        )

    async def record_spawn(
        self, *, requester_key: str, child_key: str, child_run_id: str, agent_id: str | None = None
    ) -> Signal | None:
        """A child was spawned: registered under its requester, whose cursor `child_spawned` seeds."""
        return await recording.best_effort_async(
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

    async def record_run_terminal(
        self,
        *,
        child_key: str,
        run_id: str,
        requester_key: str,
        outcome: Literal["ok", "error", "timeout", "cancelled"],
        agent_id: str | None = None,
    ) -> Signal | None:
        """A child run ended: `ok` is `run_completed`, anything else `run_failed` with its outcome."""
        return await recording.best_effort_async(
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

    async def record_compacted(
        self,
        key: str | None,
        *,
        operation_id: str,
        session_id: str | None = None,
        run_id: str | None = None,
        agent_id: str | None = None,
    ) -> Signal | None:
        """History was compacted; nothing is recorded without a session key."""
        return await recording.best_effort_async(
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

    async def record_adopted(self, key: str, *, agent_id: str | None = None) -> Signal | None:
        """A session was adopted from an external catalog (log only)."""
        return await recording.best_effort_async(
            self._scheduler,
            key,
            SignalKind.ADOPTED,
            lambda: recording.adopted(self._core, key, agent_id=agent_id),
        )

    async def record_session_created(
        self,
        key: str,
        *,
        actor: Actor,
        session_id: str | None = None,
        agent_id: str | None = None,
        internal: bool = False,
    ) -> Signal | None:
        """A session was created (log only); with `notify_on_create`, noted on its main session's digest."""
        return await recording.best_effort_async(
            self._scheduler,
            key,
            SignalKind.CREATED,
            lambda: creations.session_created(
                self._core, key, actor=actor, session_id=session_id, agent_id=agent_id, internal=internal
            ),
        )

    # -------------------------------------------------------------------------------- watching

    async def watch(
        self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None, ambient: bool = False
    ) -> bool:
        """Register a watch at the target's current head; False (nothing written) when refused.

        `ambient=True`: its notices are queue-only (never woken); an explicit watch promotes it.
        """
        return await self._scheduler.settle(
            notices.watch(
                self._core, watcher_key, target_key, target_agent_id=target_agent_id, ambient=ambient
            )
        )

    async def unwatch(self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None) -> bool:
        """Stop watching; True when a cursor was removed."""
        return await self._scheduler.run(
            notices.unwatch(self._core, watcher_key, target_key, target_agent_id=target_agent_id)
        )

    async def cursor(
        self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None
    ) -> Cursor | None:
        """The watcher's cursor on the target, or None."""
        return await self._scheduler.read(
            notices.cursor, self._core, watcher_key, target_key, target_agent_id=target_agent_id
        )

    async def watched_by(self, watcher_key: str) -> list[Cursor]:
        """The watcher's cursors, ordered by target: positions, and `pending` while a notice is open.

        Raises:
            InvalidQuery: a malformed `watcher_key`.
        """
        return await self._scheduler.read(notices.watched_by, self._core, watcher_key)

    async def is_watched(self, key: str, *, agent_id: str | None = None) -> bool:
        """Whether another session watches this one (holds a cursor on it, ambient ones included).

        Raises:
            InvalidQuery: a malformed key, or a bare key without `agent_id`.
        """
        return await self._scheduler.read(notices.is_watched, self._core, key, agent_id=agent_id)

    async def watch_prompt(self, watcher_key: str) -> str:
        """A short block for the watcher's system prompt: the sessions it watches and how to reconcile.

        It says the session tools can read them, lists at most 20 sessions in target order (the rest
        as "and K more") within 2,000 characters, and is byte-identical for the same cursors. A
        watcher without cursors gets "", so the host can leave the section out.

        Raises:
            InvalidQuery: a malformed `watcher_key`.
        """
        return await self._scheduler.read(notices.watch_prompt, self._core, watcher_key)

    # --------------------------------------------------------------------------------- notices

    async def pending_notices(self, watcher_key: str) -> list[Notice]:
        """The watcher's pending notices, one per stale target, without acknowledging them."""
        return await self._scheduler.read(notices.pending_notices, self._core, watcher_key)

    async def drain(self, watcher_key: str) -> list[Notice]:
        """Return the pending notices and acknowledge each (`L := N`; one follow-up where `M > N`)."""
        return await self._scheduler.run(notices.drain(self._core, watcher_key))

    async def acknowledge(self, watcher_key: str, targets: Iterable[str | Notice]) -> None:
        """Two-phase alternative to `drain`: acknowledge the notices read with `pending_notices`."""
        await self._scheduler.run(notices.acknowledge(self._core, watcher_key, targets))

    async def sweep(self) -> SweepReport:
        """Restart sweep: re-freeze and re-publish every open notice of an existing watcher, then prune."""
        counts, woken = await self._scheduler.run_woken(maintenance.sweep(self._core))
        return maintenance.sweep_report(counts, woken, prune=await self.prune(force=True))

    # -------------------------------------------------------------------------------- retention

    async def prune(self, *, force: bool = True) -> PruneReport:
        """Prune history to the retention window and cap, in one transaction (without `force`: when due)."""
        return await self._scheduler.settle(maintenance.prune(self._core, force=force))

    # -------------------------------------------------------------------------- reconciliation

    async def session_status(
        self, key: str, *, changes_since: int | None = None, limit: int = 200, agent_id: str | None = None
    ) -> SessionStatus:
        """The session's head and, with `changes_since`, the typed delta after it; never acknowledges."""
        return await self._scheduler.read(
            queries.session_status,
            self._core,
            key,
            changes_since=changes_since,
            limit=limit,
            agent_id=agent_id,
        )

    async def status_as_of(
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
        return await self._scheduler.read(
            queries.status_in_the_past,
            self._core,
            key,
            as_of,
            changes_since=changes_since,
            limit=limit,
            agent_id=agent_id,
            archive=archive,
        )

    async def sessions_list(
        self, *, agent_id: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[SessionRow]:
        """Known sessions ordered by key, optionally filtered by agent id and session kinds."""
        return await self._scheduler.read(queries.sessions_list, self._core, agent_id=agent_id, kinds=kinds)

    # ------------------------------------------------------------------------------------ audit

    async def rebuild_read_model(self) -> ReadModel:
        """Replay the whole event store into fresh read models (what `audit` compares with)."""
        return await self._scheduler.read(queries.rebuild_read_model, self._core)

    async def audit(self, *, progress: Callable[[int], None] | None = None) -> AuditReport:
        """Replay the event store from one snapshot, diff the rebuilt read models, check the invariants."""
        return await self._scheduler.read(queries.audit, self._core, progress=progress)
