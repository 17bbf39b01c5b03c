"""Maintenance use cases: the restart sweep and the prune, with its throttle.

The sweep re-freezes every open notice of an existing watcher and re-publishes it; a forced prune
follows it. A prune keeps history to the retention window and cap in one transaction; after a
record it runs only once the last prune, by any process sharing the store, is older than the
interval (`Retention.prune_due`). A start-up sweep that cannot write now (another process holds
the write lock, the disk is full) does not fail the open: it runs after the next write commits.
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionwatch.adapters.app.core import Core, Done, Work, logger, wakes_of
from sessionwatch.adapters.app.reports import PruneReport, SweepReport
from sessionwatch.adapters.stores.port import PruneCounts, StoreError, SweepCounts
from sessionwatch.domain.signals import from_epoch_ms


def sweep(core: Core) -> Work[SweepCounts, SweepCounts]:
    """Re-freeze `N := M` on every open cursor of an existing watcher; wake each one's watcher."""
    at_ms = core.now_ms()
    return Work(
        lambda tx: tx.sweep(at_ms),
        lambda counts: Done(counts, wakes_of(counts.woken)),
        "sessionwatch.sweep",
    )


def defer_startup_sweep(core: Core, exc: StoreError) -> None:
    """The start-up sweep could not write now: the open goes on; the next committed write runs it."""
    core.sweep_owed = True
    logger.warning("sessionwatch: start-up sweep deferred to the next write (error=%s)", exc)


def owed_sweep(core: Core) -> Work[SweepCounts, SweepCounts] | None:
    """The deferred start-up sweep, once (None when none is owed); `sweep_failed` owes it again."""
    if not core.sweep_owed or core.closed:
        return None
    core.sweep_owed = False
    return sweep(core)


def sweep_failed(core: Core, exc: Exception) -> None:
    """The deferred sweep failed: the next committed write tries again (the write it followed stands)."""
    core.sweep_owed = True
    logger.warning("sessionwatch: deferred start-up sweep failed (error=%s)", type(exc).__name__)


def sweep_report(counts: SweepCounts, woken: Sequence[str], *, prune: PruneReport) -> SweepReport:
    """What a sweep did, the watchers its wakes reached and the forced prune after it."""
    return SweepReport(
        refrozen=counts.refrozen,
        republished=len(counts.republished),
        woken=tuple(dict.fromkeys(woken)),
        skipped_missing_watchers=counts.skipped,
        prune=prune,
    )


def prune(core: Core, *, force: bool) -> Work[PruneCounts, PruneReport] | PruneReport:
    """A prune now; without `force` only when due, else the report that it did not run (no write)."""
    now_ms = core.now_ms()
    if force or _due(core, now_ms):
        return _prune_at(core, now_ms)
    return PruneReport(ran=False, at=from_epoch_ms(now_ms))


def prune_timer_due(core: Core, now_ms: int | None = None) -> bool:
    """Whether this process's own timer says a prune may be due: no store read (the common path)."""
    at = core.now_ms() if now_ms is None else now_ms
    return core.retention.prune_due(last_prune_ms=core.last_prune_ms, now_ms=at)


def prune_if_due(core: Core) -> Work[PruneCounts, PruneReport] | None:
    """The prune a record is followed by, or None when none is due."""
    now_ms = core.now_ms()
    if not prune_timer_due(core, now_ms):
        return None
    return _prune_at(core, now_ms) if _due(core, now_ms) else None


def _due(core: Core, now_ms: int) -> bool:
    """Whether the last prune, by any process sharing the store, is older than the interval."""
    if not prune_timer_due(core, now_ms):
        return False
    shared = core.store.last_prune_ms()  # read only when the local timer says it is due
    if shared is not None and shared > core.last_prune_ms:
        core.last_prune_ms = shared
    return core.retention.prune_due(last_prune_ms=core.last_prune_ms, now_ms=now_ms)


def _prune_at(core: Core, now_ms: int) -> Work[PruneCounts, PruneReport]:
    def finish(counts: PruneCounts) -> Done[PruneReport]:
        core.last_prune_ms = now_ms
        cutoffs = counts.cutoffs
        return Done(
            PruneReport(
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
        )

    return Work(lambda tx: tx.prune(now_ms, core.retention, core.archive), finish, "sessionwatch.prune")
