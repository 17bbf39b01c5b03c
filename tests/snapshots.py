"""What a call could have written: a store's whole state, compared before and after a refused call.

The read models hold every session, head, prune watermark, retained signal, dedupe key, cursor and
pending notice; the counter, the stored-event count and the last prune time cover the event store.
Two equal states mean nothing was written (SPEC §3.3, §15.2: "on error nothing is written").
"""

from __future__ import annotations

from dataclasses import dataclass

from sessionwatch import SessionWatch
from sessionwatch.projections.read_model import ReadModel


@dataclass(frozen=True)
class StoreState:
    """Everything a write could change."""

    read_model: ReadModel
    last_sequence: int
    stored_events: int
    last_prune_ms: int | None


def store_state(watch: SessionWatch) -> StoreState:
    """The store's whole state as of now."""
    store = watch.store
    return StoreState(
        read_model=store.read_model(),
        last_sequence=store.last_sequence(),
        stored_events=store.stored_event_count(),
        last_prune_ms=store.last_prune_ms(),
    )
