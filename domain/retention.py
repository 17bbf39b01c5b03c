"""Retention: how long and how much history is kept, and the prune as a stored fact.

A prune removes signals older than the age cut-off, then all but the newest `max_signals` globally,
then cursors not updated within the window. Heads never go down; each session's prune watermark
rises to the highest sequence of its own that was removed. The stored `SignalsPruned` event carries
the cut-offs and the state of every session and cursor after the prune, so the events before it can
be deleted from the event store and a replay still rebuilds every read model (ADR-0008).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sessionwatch.domain.digest import DigestState
from sessionwatch.domain.messages import Event
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.upstream import UpstreamLinkState
from sessionwatch.domain.watch_cursor import CursorState

DAY_MS = 86_400_000


class Retention(BaseModel):
    """How much history is kept; `archive` appends every pruned signal to a JSON Lines file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    days: float = Field(default=30, gt=0, le=36_500, allow_inf_nan=False)
    max_signals: int = Field(default=50_000, ge=1, le=2**63 - 1)
    archive: str | None = None
    prune_interval: timedelta = Field(default=timedelta(hours=1), ge=timedelta(0))

    @property
    def window_ms(self) -> int:
        """The age window in milliseconds."""
        return int(self.days * DAY_MS)

    @property
    def interval_ms(self) -> int:
        """The minimum time between two prunes run after records."""
        return self.prune_interval // timedelta(milliseconds=1)

    def prune_due(self, *, last_prune_ms: int, now_ms: int) -> bool:
        """Whether a prune after a record is due: the last one is *older* than the interval.

        Exactly one interval after the last prune is not yet due; a zero interval prunes after
        every record.
        """
        interval = self.interval_ms
        return interval == 0 or now_ms - last_prune_ms > interval


class PruneCutoffs(BaseModel):
    """What one prune removes.

    Signals older than `occurred_before_ms` (display time), then signals with
    `sequence <= through_sequence` (the global cap), and cursors last updated before
    `cursors_updated_before_ms` (the local clock).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    at_ms: int
    occurred_before_ms: int
    through_sequence: int
    cursors_updated_before_ms: int

    def removes(self, signal: SignalRecorded) -> bool:
        """Whether this prune removes `signal`."""
        return signal.occurred_at_ms < self.occurred_before_ms or signal.sequence <= self.through_sequence

    def expires(self, cursor: CursorState) -> bool:
        """Whether this prune removes `cursor`."""
        return cursor.updated_at_ms < self.cursors_updated_before_ms


class SignalsPruned(Event):
    """A prune ran; the store's history before it may be deleted (ADR-0008).

    `sessions`, `cursors` and `links` are every session, cursor and upstream link (tombstones
    included) after the prune: the checkpoint a replay restarts from once the events before this
    one are gone. Version 1 had no `links` (there were none; ADR-0010), version 2 no session
    `meta` (none was set; ADR-0012), version 3 no cursor `provenance` (every cursor was explicit;
    ADR-0049), version 4 no creation `digests` (none existed; ADR-0047): the mapper upcasts each.
    """

    type: Literal["store.pruned.v5"] = "store.pruned.v5"
    cutoffs: PruneCutoffs
    sessions: tuple[SessionState, ...]
    cursors: tuple[CursorState, ...]
    links: tuple[UpstreamLinkState, ...]
    digests: tuple[DigestState, ...] = ()


COMPACT_MIN_EVENTS = 1000
"""A prune that removed nothing compacts the event store only past this many replaceable events."""


def compaction_due(replaceable: int, checkpoint_entries: int) -> bool:
    """Whether a prune that removed nothing should still checkpoint and compact (ADR-0008).

    Only once the events it would delete outnumber the checkpoint's own entries (sessions, cursors
    and links; and at least `COMPACT_MIN_EVENTS`): the cost is amortised, and the event store stays
    within the retained signals plus `max(1000, entries)` plus what was written since.
    """
    return replaceable >= max(COMPACT_MIN_EVENTS, checkpoint_entries)


def cap_through_sequence(newest_first: Iterable[int], max_signals: int) -> int:
    """The highest sequence the global cap removes (0 for none): all but the newest `max_signals`."""
    for rank, sequence in enumerate(newest_first):
        if rank == max_signals:
            return sequence
    return 0


def stamp(state: SessionState, removed_through: int) -> SessionState:
    """Raise the prune watermark to the highest removed sequence; the head never goes down."""
    if removed_through <= state.pruned_through:
        return state
    return replace(state, pruned_through=removed_through, head=max(state.head, removed_through))
