"""Query use cases: reconciliation, listing, status in the past, and the audit. None of them writes.

`session_status` answers the head and, with `changes_since`, the typed delta after it; reading it
never advances a cursor. The audit replays the event store from one snapshot, rebuilds every read
model and diffs it with the stored one.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sessionwatch.adapters.app.checks import query_identity
from sessionwatch.adapters.app.core import Core
from sessionwatch.adapters.app.reports import AuditReport
from sessionwatch.adapters.stores.archive import archived_signals
from sessionwatch.domain.errors import InvalidQuery, UnknownSession
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.projections.audit import Violation
from sessionwatch.projections.audit import compare as compare_read_models
from sessionwatch.projections.audit import replay as replay_history
from sessionwatch.projections.audit_stream import audit as stream_audit
from sessionwatch.projections.models import SessionRow, SessionStatus
from sessionwatch.projections.read_model import ReadModel, fold
from sessionwatch.projections.status import check_changes_since, clamp_limit, status_as_of


def session_status(
    core: Core, key: str, *, changes_since: object = None, limit: object = 200, agent_id: object = None
) -> SessionStatus:
    """The session's head and, with `changes_since`, the delta after it; unknown: `UnknownSession`."""
    since = check_changes_since(changes_since)
    page = clamp_limit(limit)
    identity = query_identity(key, agent_id)
    status = core.store.status(identity, since, page)
    if status is None:
        raise UnknownSession(key)
    if core.telemetry.on and status.state_changes is not None and status.state_changes.history_gap:
        core.telemetry.history_gap()
    return status


def status_in_the_past(
    core: Core,
    key: str,
    as_of: int,
    *,
    changes_since: object = None,
    limit: object = 200,
    agent_id: object = None,
    archive: str | Path | None = None,
) -> SessionStatus:
    """`session_status` as it was right after sequence `as_of`, from the event store (and archive).

    Within the retained window the event store answers alone; before a session's prune
    watermark, the prune `archive` must hold every pruned signal, else `InvalidQuery("archive")`.
    A sequence past the store's counter is an `InvalidQuery("as_of")`, never a silent "now".
    """
    since = check_changes_since(changes_since)
    page = clamp_limit(limit)
    identity = query_identity(key, agent_id)
    state = core.store.session(identity)
    if state is None:
        raise UnknownSession(key)
    highest = core.store.last_sequence()  # read before the replay: every sequence up to it is in it
    found: dict[int, SignalRecorded] = {}
    if archive is not None:
        try:
            archived = [s for s in archived_signals(archive) if s.identity == identity]
        except (OSError, ValueError, LookupError) as exc:  # missing, unreadable, not JSON Lines, not signals
            raise InvalidQuery("archive", f"cannot read {archive} as a prune archive ({exc})") from None
        found.update((s.sequence, s) for s in archived)
    for event in core.store.replay():
        if isinstance(event, SignalRecorded) and event.identity == identity:
            found[event.sequence] = event
    history = [found[sequence] for sequence in sorted(found)]
    covered = archive is not None and (state.pruned_through == 0 or state.pruned_through in found)
    if archive is not None and not covered:
        raise InvalidQuery("archive", f"does not hold the pruned history of {key}")
    return status_as_of(
        state,
        as_of,
        history,
        archived=covered,
        changes_since=since,
        limit=page,
        highest=highest,
    )


def sessions_list(
    core: Core, *, agent_id: str | None = None, kinds: Sequence[str] | None = None
) -> list[SessionRow]:
    """Known sessions ordered by key, optionally filtered by agent id and session kinds."""
    rows = [SessionRow.from_state(s) for s in core.store.sessions()]
    if agent_id is not None:
        rows = [r for r in rows if r.agent_id == agent_id]
    if kinds is not None:
        if isinstance(kinds, str | bytes) or not isinstance(kinds, Iterable):
            raise InvalidQuery("kinds", "must be a sequence of session kinds")
        wanted = set(kinds)
        rows = [r for r in rows if r.kind in wanted]
    return rows


def rebuild_read_model(core: Core) -> ReadModel:
    """Replay the whole event store into fresh read models (what `audit` compares with)."""
    return fold(core.store.replay(), notifying=core.notifying)


def audit(core: Core, *, progress: Callable[[int], None] | None = None) -> AuditReport:
    """Replay the event store, diff the rebuilt read models with the stored ones, check the invariants.

    Heads never lowered and at least every retained sequence, watermarks not above heads,
    `L <= N <= M`, no pending notice for a self-caused or log-only signal, no message text.
    `progress(n)` is called every 1,000 events replayed. The store is read, never written, from one
    snapshot, in bounded memory: the events twice and the stored signals once, a page at a time
    (`projections.audit_stream`). A history whose retained signals are out of sequence order (no
    store records them so) is audited whole, with Python's cyclic garbage collector paused.
    """
    started = time.perf_counter()
    with core.telemetry.span("sessionwatch.audit"):
        violations, replayed = _audited(core, progress)
    return AuditReport(
        ok=not violations,
        violations=tuple(violations),
        events_replayed=replayed,
        seconds=time.perf_counter() - started,
    )


def _audited(core: Core, progress: Callable[[int], None] | None) -> tuple[list[Violation], int]:
    """The audit's violations and the number of events replayed (see `audit`)."""
    with core.store.snapshot() as snapshot:
        streamed = stream_audit(
            snapshot.replay,
            snapshot.tables(),
            snapshot.signals(),
            stored_dedupe=snapshot.dedupe(),
            progress=progress,
            notifying=core.notifying,
        )
    if streamed is not None:
        violations, replayed = streamed
        return list(violations), replayed
    # retained signals out of sequence order: no store records them so, audit them whole
    with core.store.snapshot() as snapshot, _collector_paused():
        history = replay_history(snapshot.replay(), progress=progress, notifying=core.notifying)
        stored = snapshot.read_model(like=history.rebuilt)
        found = compare_read_models(stored, history.rebuilt, notifying=core.notifying)
        violations = [*history.violations, *found]
        replayed = history.events_replayed
        del history, stored  # freed before the collector resumes, so it has nothing left to scan
    return violations, replayed


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (if it was on) for a burst of long-lived allocations."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
