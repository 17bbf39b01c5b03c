"""The reconciliation query as pure functions over a session's state and log page."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import replace

from sessionwatch.domain.errors import InvalidQuery
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import MAX_SEQUENCE
from sessionwatch.projections.models import SessionStatus, StateChange, StateChanges

MAX_PAGE = 200


def check_changes_since(changes_since: object) -> int | None:
    """`changes_since` is absent or an `int >= 0`."""
    if changes_since is None:
        return None
    if not isinstance(changes_since, int) or isinstance(changes_since, bool):
        raise InvalidQuery("changes_since", "must be an integer >= 0")
    if changes_since < 0:
        raise InvalidQuery("changes_since", "must be >= 0")
    return min(changes_since, MAX_SEQUENCE)  # no sequence is above it: the answer is the same


def clamp_limit(limit: object) -> int:
    """A page limit is clamped into [1, 200]; a non-integer is an `InvalidQuery`."""
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise InvalidQuery("limit", "must be an integer")
    return min(max(limit, 1), MAX_PAGE)


def page_after(
    log: Sequence[SignalRecorded], changes_since: int, limit: int
) -> tuple[Sequence[SignalRecorded], bool]:
    """The first `limit` signals after `changes_since` in an ascending log, and whether more exist."""
    start = bisect.bisect_right(log, changes_since, key=lambda s: s.sequence)
    page = log[start : start + limit]
    return page, len(log) - start > limit


def earliest_available_sequence(first_retained: int | None, head: int) -> int:
    """The smallest retained sequence; with none retained, head + 1 if head > 0, else 0."""
    if first_retained is not None:
        return first_retained
    return head + 1 if head > 0 else 0


def build_status(
    state: SessionState,
    changes_since: int | None,
    page: Sequence[StateChange] = (),
    *,
    truncated: bool = False,
    first_retained: int | None = None,
) -> SessionStatus:
    """Assemble `session_status`; `historyGap` is exactly `changes_since < prune watermark`."""
    if changes_since is None:
        return SessionStatus(session_key=state.session_key, state_version=state.head)
    changes = StateChanges(
        events=tuple(page),
        truncated=truncated,
        earliest_available_sequence=earliest_available_sequence(first_retained, state.head),
        history_gap=changes_since < state.pruned_through,
    )
    return SessionStatus(session_key=state.session_key, state_version=state.head, state_changes=changes)


def status_as_of(
    state: SessionState,
    as_of: int,
    history: Sequence[SignalRecorded],
    *,
    archived: bool,
    changes_since: int | None,
    limit: int,
    highest: int,
) -> SessionStatus:
    """The `session_status` the session had right after sequence `as_of` was allocated.

    `state` is the session now (its prune watermark says what history it lost); `history` is every
    signal of the session still available, ascending: the retained ones, plus the pruned ones from
    the prune archive when `archived` (then none is missing). Without the archive, a point below the
    watermark is unknowable and an `InvalidQuery`; above it, changes before the watermark are a
    `historyGap`, exactly as `session_status` reports them now. `highest` is the store's counter: a
    sequence past it was never allocated, so there is no "right after it" to answer (an `InvalidQuery`).
    """
    if not isinstance(as_of, int) or isinstance(as_of, bool) or as_of < 0:
        raise InvalidQuery("as_of", "must be an integer >= 0")
    if as_of > highest:
        raise InvalidQuery(
            "as_of", f"{as_of} is past the store's highest sequence {highest}; no status exists after it yet"
        )
    watermark = 0 if archived else state.pruned_through
    if as_of < watermark:
        raise InvalidQuery(
            "as_of",
            f"history up to sequence {watermark} of {state.session_key} was pruned; "
            "pass the prune archive to look before it",
        )
    known = history[: bisect.bisect_right(history, as_of, key=lambda s: s.sequence)]
    head = max(known[-1].sequence if known else 0, watermark)
    then = replace(state, head=head, pruned_through=watermark)
    if changes_since is None:
        return build_status(then, None)
    page, truncated = page_after(known, changes_since, limit)
    first = known[0].sequence if known else None
    changes = [StateChange.from_event(s) for s in page]
    return build_status(then, changes_since, changes, truncated=truncated, first_retained=first)
