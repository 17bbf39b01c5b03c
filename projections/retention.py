"""The prune over the read models as pure functions: plan the cut-offs, then apply them."""

from __future__ import annotations

from dataclasses import dataclass

from sessionwatch.domain import retention
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import PruneCutoffs, Retention, SignalsPruned
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.projections.read_model import ReadModel


def plan_prune(model: ReadModel, now_ms: int, policy: Retention) -> PruneCutoffs:
    """The cut-offs of a prune at `now_ms`: age first, then the global cap over what age keeps."""
    occurred_before = now_ms - policy.window_ms
    survivors = sorted(
        (s.sequence for log in model.signals.values() for s in log if s.occurred_at_ms >= occurred_before),
        reverse=True,
    )
    return PruneCutoffs(
        at_ms=now_ms,
        occurred_before_ms=occurred_before,
        through_sequence=retention.cap_through_sequence(survivors, policy.max_signals),
        cursors_updated_before_ms=now_ms - policy.window_ms,
    )


@dataclass(frozen=True, slots=True)
class PruneOutcome:
    """A prune's result: the pruned read model, what it removed, and the event that records it."""

    model: ReadModel
    removed: tuple[SignalRecorded, ...]
    expired: tuple[CursorState, ...]
    stamped: tuple[SessionIdentity, ...]
    event: SignalsPruned


def prune(model: ReadModel, cutoffs: PruneCutoffs) -> PruneOutcome:
    """Apply `cutoffs`: remove signals, stamp each affected session's watermark, expire cursors.

    Creation digests are bounded by their own fold and are not pruned: the checkpoint carries them.
    """
    removed: list[SignalRecorded] = []
    signals: dict[SessionIdentity, tuple[SignalRecorded, ...]] = {}
    sessions: dict[SessionIdentity, SessionState] = dict(model.sessions)
    stamped: list[SessionIdentity] = []
    for identity, log in model.signals.items():
        kept = tuple(s for s in log if not cutoffs.removes(s))
        gone = [s for s in log if cutoffs.removes(s)]
        if kept:
            signals[identity] = kept
        if gone:
            removed.extend(gone)
            state = sessions.get(identity)
            if state is not None:  # stamping never creates a session or a head
                after = retention.stamp(state, max(s.sequence for s in gone))
                if after != state:
                    sessions[identity] = after
                    stamped.append(identity)
    dropped_keys = {s.dedupe_key for s in removed if s.dedupe_key is not None}
    dedupe = {k: v for k, v in model.dedupe.items() if k not in dropped_keys}
    expired = tuple(c for by in model.cursors.values() for c in by.values() if cutoffs.expires(c))
    cursors = {
        target: kept_cursors
        for target, by_watcher in model.cursors.items()
        if (kept_cursors := {w: c for w, c in by_watcher.items() if not cutoffs.expires(c)})
    }
    pruned = ReadModel(sessions, signals, dedupe, cursors, model.links, model.digests)
    event = SignalsPruned(
        cutoffs=cutoffs,
        sessions=tuple(sorted(pruned.sessions.values(), key=lambda s: s.identity)),
        cursors=tuple(pruned.all_cursors()),
        links=tuple(pruned.links[identity] for identity in sorted(pruned.links)),
        digests=tuple(pruned.digests[identity] for identity in sorted(pruned.digests)),
    )
    removed.sort(key=lambda s: s.sequence)
    return PruneOutcome(pruned, tuple(removed), expired, tuple(sorted(stamped)), event)
