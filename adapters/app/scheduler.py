"""The caller's-thread scheduler: runs a use case's `Work` through group commit, then what it owes.

Every write of the sync façade goes this one way: the work runs in a write transaction shared with
concurrent callers (ADR-0016), then its wakes are published after the commit, then, after a
record, a prune runs if one is due (a failure of that prune never fails the record), and after
any write a start-up sweep `open()` had to defer runs (its failure never fails the write either).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from sessionwatch.adapters.app import maintenance
from sessionwatch.adapters.app.core import Core, Done, Work, failed, logger, observed, publish

R = TypeVar("R")
P = ParamSpec("P")


class CallerScheduler:
    """Runs work on the calling thread; thread-safe (group commit serializes the transactions)."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def run(self, work: Work[Any, R]) -> R:
        """Run `work`, publish its wakes, prune when due after a record; the work's result."""
        return self.run_woken(work)[0]

    def settle(self, step: Work[Any, R] | R) -> R:
        """Run a use case's answer when it is work; an answer it gave without writing, as it is."""
        return self.run(step) if isinstance(step, Work) else step

    def read(self, query: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Answer a read on the calling thread (the event-loop scheduler's runs on a reader thread)."""
        return query(*args, **kwargs)

    def run_woken(self, work: Work[Any, R]) -> tuple[R, list[str]]:
        """`run`, and the watchers its wakes reached; `StoreError` before anything runs once closed."""
        core = self._core
        if core.telemetry.on:  # the one check telemetry costs when off
            return self._run_observed(work)
        core.check_open()
        result: Done[R] = work.finish(core.writes.run(work.run))
        woken = publish(core.waker, core.coalesced(result.wakes)) if result.wakes else []
        if result.recorded:
            self._prune_if_due()
        if core.sweep_owed:
            self._sweep_if_owed()
        return result.value, woken

    def _run_observed(self, work: Work[Any, R]) -> tuple[R, list[str]]:
        """`run_woken` in the work's span, its facts counted after the commit, its wakes timed."""
        core = self._core
        telemetry = core.telemetry
        counted, span = observed(telemetry, work)
        try:
            core.check_open()
            value = core.writes.run(counted.run)
        except BaseException as exc:
            failed(telemetry, span, exc)
            raise
        committed = time.perf_counter()
        result: Done[R] = counted.finish(value)
        woken = (
            publish(core.waker, core.coalesced(result.wakes), telemetry, committed) if result.wakes else []
        )
        if result.recorded:
            self._prune_if_due()
        if core.sweep_owed:
            self._sweep_if_owed()
        return result.value, woken

    def _sweep_if_owed(self) -> None:
        """The start-up sweep `open()` deferred, now that a write of this process committed."""
        owed = maintenance.owed_sweep(self._core)
        if owed is None:
            return
        try:
            self.run_woken(owed)
        except Exception as exc:  # noqa: BLE001 - the write is committed; the next one tries again
            maintenance.sweep_failed(self._core, exc)

    def _prune_if_due(self) -> None:
        due = maintenance.prune_if_due(self._core)
        if due is None:
            return
        try:
            self.run(due)
        except Exception as exc:  # noqa: BLE001 - the record is committed; pruning retries next time
            logger.warning("sessionwatch: prune failed (error=%s)", type(exc).__name__)
