"""The application core's context and its unit of work.

A use case takes a `Core` (the store, the clock, the waker, the policy and this process's own
state) and returns either an answer (a read) or a `Work` (a write): what runs inside one write
transaction, and what follows once it committed (the result, the wakes owed, whether a prune may
be due). A scheduler runs the work: the caller's thread through group commit, or a writer thread.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Generic, TypeVar

from typing_extensions import TypeIs

from sessionwatch.adapters.app.clock import SystemClock
from sessionwatch.adapters.app.coalescing import WakeCoalescer
from sessionwatch.adapters.app.group_commit import GroupCommit
from sessionwatch.adapters.app.runs import ActiveRuns, RunLedger
from sessionwatch.adapters.app.streaks import MissingStreaks
from sessionwatch.adapters.app.telemetry import (
    NO_SPAN,
    NO_TELEMETRY,
    Span,
    Telemetry,
    is_store_error,
    store_kind,
)
from sessionwatch.adapters.stores.archive import JsonlArchive
from sessionwatch.adapters.stores.port import SignalStore, StoreError, WriteTransaction
from sessionwatch.adapters.upstream.monitor import Monitors
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal
from sessionwatch.domain.keys import agent_id_of, is_subagent_key
from sessionwatch.domain.notice_links import NoticeLinks, check_notice_links
from sessionwatch.domain.ports import AsyncWaker, Clock, Waker
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.signals import NOTIFYING_KINDS, SignalKind, check_text, notifying_kinds, to_epoch_ms
from sessionwatch.domain.wake_coalescing import check_wake_coalesce
from sessionwatch.domain.watch_cursor import (
    AMBIENT,
    DEFAULT_MAIN_KEY,
    CursorKey,
    CursorState,
    MaterialSignalSeen,
    main_session_key,
)

logger = logging.getLogger("sessionwatch")
logger.addHandler(logging.NullHandler())  # a library never prints through logging's last resort

T = TypeVar("T")
R = TypeVar("R")

Wake = tuple[str, str]
"""(watcher key, reason) of one wake request."""

MAX_MAIN_KEY_LENGTH = 200
"""The longest `main_key` (the rest of a key) a host may name."""

CLOSED = "the store is closed"
"""The one message of every call on a closed store, whatever the store and the method."""


@dataclass(frozen=True, slots=True)
class Done(Generic[R]):
    """What a committed write answers: its result, the wakes it owes, whether it recorded signals.

    The rest is for telemetry: the kinds of the signals it newly recorded (a duplicate dedupe key
    answered with the retained signal records none), the notices it opened and acknowledged.
    """

    value: R
    wakes: Sequence[Wake] = ()
    recorded: bool = False  # a prune may be due after a record
    kinds: tuple[str, ...] = ()
    opened: int = 0
    acknowledged: int = 0


@dataclass(frozen=True, slots=True)
class Work(Generic[T, R]):
    """One write: `run` inside the transaction, then `finish` on its outcome once committed.

    `run` may run again alone (group commit retries each write of a failed shared transaction), so
    it reads only what `tx` gives it.
    """

    run: Callable[[WriteTransaction], T]
    finish: Callable[[T], Done[R]]
    name: str | None = None
    """The span the schedulers open around it when telemetry is on (None: no span of its own)."""


def done(value: R) -> Done[R]:
    """A write that owes nothing after its commit."""
    return Done(value)


@dataclass(eq=False)
class Core:
    """What every use case runs against; one per open store.

    Once closed, every use case raises `StoreError(CLOSED)`: those that use the store when they
    reach it (`store`), the others and every write before they start (`check_open`).
    """

    opened_store: SignalStore
    """The store as opened: `store` unless closed (closing it goes through `close`)."""
    clock: Clock
    waker: Waker | AsyncWaker | None
    """The host's wake port: a sync one (the sync façade's), or either kind (the async façade's)."""
    retention: Retention
    archive: JsonlArchive | None
    writes: GroupCommit
    """The one write path: writes from several threads share a transaction (ADR-0016)."""
    active_runs: ActiveRuns
    """The runs this process started and has not ended (the monitor skips their sessions)."""
    run_ledger: RunLedger
    """Every run this process heard of, with its requester and outcome."""
    upstream_streaks: MissingStreaks
    """The upstream monitor's missing streaks per link version (ADR-0010)."""
    monitors: Monitors
    """The upstream monitors started over this store (stopped when it closes)."""
    last_prune_ms: int
    """When this process last saw a prune run (the throttle's start, ADR-0008)."""
    telemetry: Telemetry = NO_TELEMETRY
    """Spans and metrics (ADR-0037); the no-op unless OpenTelemetry is installed and set up."""
    notice_links: NoticeLinks | None = None
    """The host's link template for notice texts (ADR-0044); None: notices carry no link."""
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS
    """The kinds that notify watchers on this store, for its replays and audits (ADR-0045)."""
    main_key: str = DEFAULT_MAIN_KEY
    """The rest of each agent's main session key: `agent:<agentId>:<main_key>` (ADR-0049)."""
    coalescer: WakeCoalescer | None = None
    """Wake coalescing (ADR-0046); None: every wake goes out at once."""
    notify_on_create: bool = False
    """Whether a `created` signal is noted on its main session's creation digest (ADR-0047)."""
    closed: bool = False
    sweep_owed: bool = False
    """The start-up sweep could not write (the write lock held elsewhere, the disk full): it runs
    after the next write of this process commits (ADR-0064)."""

    @classmethod
    def build(
        cls,
        store: SignalStore,
        *,
        clock: Clock | None = None,
        waker: Waker | AsyncWaker | None = None,
        retention: Retention | None = None,
        notice_links: str | None = None,
        notify_terminal_runs: bool = False,
        main_key: str = DEFAULT_MAIN_KEY,
        wake_coalesce: float = 0.0,
        notify_on_create: bool = False,
    ) -> Core:
        """A core over `store`; the prune throttle counts from the last prune, else from now.

        The defaults are a façade's: the system clock, the default retention, no links. A
        `notice_links` template is checked here (`InvalidQuery` naming it). `notify_terminal_runs`
        makes a run's end notify on this store, its writes and replays alike. `main_key` names
        each agent's main session, `agent:<agentId>:<main_key>` (checked: `InvalidQuery` naming it).
        `wake_coalesce` (in seconds, checked here too) wakes a watcher at most once per window, a
        trailing wake covering the rest; 0 sends every wake at once.
        `notify_on_create` notes each created session on its main session's digest (ADR-0047).
        """
        main_key = check_main_key(main_key)
        window = check_wake_coalesce(wake_coalesce)
        clock = clock or SystemClock()
        retention = retention or Retention()
        notifying = notifying_kinds(terminal_runs=notify_terminal_runs)
        if notify_terminal_runs:  # the default needs no call: a store starts with it
            store.set_notifying_kinds(notifying)
        core = cls(
            opened_store=store,
            clock=clock,
            waker=waker,
            retention=retention,
            archive=JsonlArchive(retention.archive) if retention.archive else None,
            writes=GroupCommit(store),
            active_runs=ActiveRuns(),
            run_ledger=RunLedger(),
            upstream_streaks=MissingStreaks(),
            monitors=Monitors(),
            last_prune_ms=store.last_prune_ms() or to_epoch_ms(clock.now()),
            telemetry=telemetry_for(store),
            notice_links=check_notice_links(notice_links),
            notifying=notifying,
            main_key=main_key,
            notify_on_create=notify_on_create,
        )
        if window and waker is not None:  # without a waker there is nothing to coalesce
            core.coalescer = WakeCoalescer(
                window,
                clock,
                store,
                send=lambda wakes: publish(core.waker, wakes, core.telemetry, time.perf_counter()),
                timers=isinstance(clock, SystemClock),
            )
        return core

    @property
    def store(self) -> SignalStore:
        """The store; `StoreError(CLOSED)` once closed."""
        self.check_open()
        return self.opened_store

    def check_open(self) -> None:
        """Raise `StoreError(CLOSED)` once closed; else first deliver the trailing wakes that are due."""
        if self.closed:
            raise StoreError(CLOSED)
        if self.coalescer is not None:
            self.coalescer.poll()

    def coalesced(self, wakes: Sequence[Wake]) -> Sequence[Wake]:
        """The wakes to send now: all of them, unless coalescing defers some to their window's end."""
        return wakes if self.coalescer is None else self.coalescer.offer(wakes)

    def close(self) -> None:
        """Release the store; every later use case raises `StoreError(CLOSED)`. Closing again is harmless."""
        if not self.closed:
            self.closed = True
            if self.coalescer is not None:
                self.coalescer.close()  # no trailing wake after this
            self.opened_store.close()

    def now_ms(self) -> int:
        """The clock's time in epoch milliseconds."""
        return to_epoch_ms(self.clock.now())

    def main_session_of(self, agent_id: str) -> str:
        """The agent's main session key."""
        return main_session_key(agent_id, self.main_key)


def check_options(*, notice_links: object, main_key: object, wake_coalesce: object) -> None:
    """What `Core.build` checks, checked before a façade opens a store: a bad option opens none."""
    check_notice_links(notice_links)
    check_main_key(main_key)
    check_wake_coalesce(wake_coalesce)


def check_main_key(main_key: object) -> str:
    """The rest of a main session key: `main`, or a host's own such as `home` (no `agent:` prefix)."""
    if not isinstance(main_key, str):
        raise InvalidQuery("main_key", "must be a string such as 'main'")
    try:
        rest = check_text(main_key, "main_key", MAX_MAIN_KEY_LENGTH)
    except InvalidSignal as exc:
        raise InvalidQuery("main_key", exc.reason) from None
    if rest != rest.strip() or rest.lower().startswith("agent:") or agent_id_of(f"agent:x:{rest}") != "x":
        raise InvalidQuery("main_key", "must be the rest of a key, such as 'main' (no 'agent:<id>:' prefix)")
    return rest


_PROVIDER_VARIABLES = frozenset({"OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER"})
"""What makes OpenTelemetry's API load a provider of its own on first use, with nothing imported before."""


def telemetry_for(store: object) -> Telemetry:
    """OpenTelemetry's port when it is installed and the host set a provider up, else the no-op."""
    if find_spec("opentelemetry") is None:  # not installed: never imported
        return NO_TELEMETRY
    if "opentelemetry" not in sys.modules and _PROVIDER_VARIABLES.isdisjoint(os.environ):
        return NO_TELEMETRY  # nothing in this process set a provider up, and the environment names none
    from sessionwatch.adapters.app import otel  # noqa: PLC0415 - only with OpenTelemetry installed

    return otel.telemetry(store_kind(store))


def observed(telemetry: Telemetry, work: Work[T, R]) -> tuple[Work[T, R], Span]:
    """`work` in its span (when named), its committed facts counted; the span ends with `finish`.

    The run is the same (writes of a kind still run together); a failed write is the scheduler's
    to end the span with (`failed`).
    """
    span = telemetry.start(work.name) if work.name is not None else NO_SPAN

    def finish(value: T) -> Done[R]:
        try:
            result = work.finish(value)
        except BaseException as exc:
            span.end(exc)
            raise
        telemetry.committed(result.kinds, result.opened, result.acknowledged)
        span.end()
        return result

    return Work(work.run, finish, work.name), span


def failed(telemetry: Telemetry, span: Span, error: BaseException) -> None:
    """A write that did not commit: counted by class when the store failed it, its span ended."""
    if is_store_error(error):
        telemetry.store_error(error)
    span.end(error)


def wake_reason(target_key: str) -> str:
    """The heartbeat reason for a stale target."""
    return f"session-state:{target_key}"


def wakes_of(notices: Iterable[CursorState | CursorKey | MaterialSignalSeen]) -> list[Wake]:
    """Wake requests for watchers that got a pending notice; subagents see it on their next turn.

    A watcher whose notice was already pending got nothing new, so it is not woken again: wakes
    may be coalesced, and the durable notice is never lost. An ambient notice is queue-only.
    """
    return [(n.watcher, wake_reason(n.target_key)) for n in notices if owes_wake(n)]


def owes_wake(notice: CursorState | CursorKey | MaterialSignalSeen) -> bool:
    """Whether a pending notice wakes its watcher: never a subagent's, never an ambient one."""
    if is_subagent_key(notice.watcher):
        return False
    return isinstance(notice, CursorKey) or notice.provenance != AMBIENT


def is_async_waker(waker: object) -> TypeIs[AsyncWaker]:
    """Whether the waker's `wake` is a coroutine function (`async def wake(...)`)."""
    return inspect.iscoroutinefunction(getattr(waker, "wake", None))


def publish(
    waker: Waker | AsyncWaker | None,
    wakes: Iterable[Wake],
    telemetry: Telemetry = NO_TELEMETRY,
    committed: float = 0.0,
) -> list[str]:
    """Ask a sync waker to wake each watcher once per reason, after the commit; never raises.

    Returns the watchers woken (a failing waker is logged and leaves its watcher out). An async
    waker is the event-loop scheduler's to await; none is ever called here. `committed` is the
    commit's `time.perf_counter()`, for the wake delay `telemetry` measures.
    """
    woken: list[str] = []
    if waker is None or is_async_waker(waker):
        return woken
    for watcher, reason in dict.fromkeys(wakes):
        asked = time.perf_counter()
        error: Exception | None = None
        try:
            waker.wake(watcher, reason)
        except Exception as exc:  # noqa: BLE001 - a failing waker never undoes a committed record
            error = exc
        wake_done(woken, watcher, reason, error, telemetry=telemetry, delay_s=asked - committed)
    return woken


def wake_done(
    woken: list[str],
    watcher: str,
    reason: str,
    error: Exception | None,
    *,
    telemetry: Telemetry,
    delay_s: float,
) -> None:
    """After one wake, either scheduler's: the watcher noted as woken, or the failure logged; then counted."""
    if error is None:
        woken.append(watcher)
    else:
        log_wake_failure(watcher, reason, error)
    if telemetry.on:
        telemetry.woke(ok=error is None, delay_s=delay_s)


def log_wake_failure(watcher: str, reason: str, exc: BaseException) -> None:
    """One line for a waker that failed (the watcher, the reason, the error class)."""
    logger.warning(
        "sessionwatch: wake failed (watcher=%r reason=%s error=%s)",
        watcher,
        reason,
        type(exc).__name__,
        extra={"watcher": watcher, "reason": reason, "error": type(exc).__name__},
    )


def wakes_from_elsewhere(watcher: str, target_key: str) -> list[Wake]:
    """The wake owed here for a notice another process opened (none for a subagent watcher)."""
    return [] if is_subagent_key(watcher) else [(watcher, wake_reason(target_key))]


def wake_from_elsewhere(core: Core, watcher: str, target_key: str) -> None:
    """Another process opened this notice (a shared store): wake its watcher here too, unless a subagent.

    The wake goes through this store's coalescing as the wakes of its own writes do.
    """
    publish(core.waker, core.coalesced(wakes_from_elsewhere(watcher, target_key)))
