"""What the operations report: a prune, a sweep, a monitor pass, an audit, and the runs heard of.

Results of use cases, not projections of the event store: built once by the operation that ran,
shown to the host (and on the wire through `to_json()`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, field_serializer

from sessionwatch.domain.wire import EpochMs, EpochMsOrNone, Leading, WireModel
from sessionwatch.projections.audit import Violation
from sessionwatch.projections.models import Signal


class PruneReport(WireModel):
    """What a prune did; `ran` is False when the hourly throttle skipped it."""

    ran: bool
    at: EpochMs
    occurred_before: EpochMsOrNone = None
    through_sequence: int = 0
    signals_removed: int = 0
    sessions_stamped: int = 0
    cursors_expired: int = 0
    events_deleted: int = 0
    archived: int = 0


class SweepReport(WireModel):
    """What a restart sweep did: notices re-frozen and watchers woken."""

    refrozen: int  # cursors re-frozen and stamped now (N := M, updated_at := now) by a stored event
    republished: int  # open notices of existing watchers, each re-published (refrozen or not)
    woken: tuple[str, ...]
    skipped_missing_watchers: int
    prune: Leading[PruneReport | None] = None  # the forced prune that follows the sweep


class TickReport(WireModel):
    """What one upstream monitor pass did; session keys name the links concerned.

    `recorded` are the `human_direct_message` signals and `missing` the `upstream_missing` ones this
    pass wrote; `advanced` counts marker advances (with or without a record). `deferred` links had a
    run active or started during the scan; `aborted` ones changed during the scan; `discarded` ones
    were answered after the monitor stopped, so nothing was published for them.
    """

    probed: int = 0
    recorded: tuple[Signal, ...] = ()
    advanced: int = 0
    missed: tuple[str, ...] = ()
    missing: tuple[Signal, ...] = ()
    deferred: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()
    aborted: tuple[str, ...] = ()
    discarded: tuple[str, ...] = ()
    failed_links: tuple[str, ...] = ()
    failed_catalogs: tuple[str, ...] = ()
    unknown_catalogs: tuple[str, ...] = ()

    @field_serializer("recorded", "missing", when_used="json")
    def _signal_refs(self, signals: tuple[Signal, ...]) -> list[dict[str, int | str]]:
        """The JSON names a tick's signals by sequence and session key only."""
        return [{"sequence": s.sequence, "sessionKey": s.session_key} for s in signals]


class AuditReport(WireModel):
    """What `audit()` found: `ok` when the history and the read models agree."""

    ok: bool
    violations: tuple[Violation, ...]
    events_replayed: int
    seconds: float

    def by_kind(self) -> dict[str, list[Violation]]:
        """The violations grouped by kind, kinds in alphabetical order."""
        groups: dict[str, list[Violation]] = {}
        for violation in sorted(self.violations, key=lambda v: (v.kind, v.detail)):
            groups.setdefault(violation.kind, []).append(violation)
        return groups


RunOutcome = Literal["ok", "error", "timeout", "cancelled"]


class RunRecord(BaseModel):
    """One run this process was told about (`run_started`, `run_ended`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    session_key: str
    agent_id: str
    requester_key: str | None = None
    label: str | None = None
    mode: str | None = None
    started_at_ms: int
    ended_at_ms: int | None = None
    outcome: RunOutcome | None = None
