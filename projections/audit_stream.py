"""The audit in bounded memory: the same report as `audit.replay` + `audit.compare`, without whole logs.

Two passes over the stored events, and one over the stored signals, all from one snapshot:

1. the fold without signal logs (`SignalFreeProjection`) gives the sessions, cursors and links,
   checks every prune checkpoint's heads, and notes where the history deletes a session and what
   each prune checkpoint cuts;
2. the events again: a signal is retained exactly when no later deletion of its session and no
   later checkpoint's cut-offs remove it (the fold's rule), so the retained signals come out in
   commit order, to be merged with the stored signals (ascending sequence) one pair at a time.

The invariants are checked on the way: a session's newest retained sequence, every signal's text,
and the one signal each pending notice points at. Memory holds the sessions, cursors, links, the
retained dedupe keys and one page of signals, never the signal log. The merge needs the retained
signals in ascending sequence (every store records them so); `audit` returns None for a history
that breaks it, and the caller audits it whole instead.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import SessionDeleted, SignalRecorded
from sessionwatch.domain.signals import MAX_SUMMARY_LENGTH, NOTIFYING_KINDS, SignalKind
from sessionwatch.projections.audit import (
    Replay,
    Violation,
    _carries_text,
    _check_checkpoint,
    _cursor_violations,
    _diff_mapping,
    _message_text,
    _name,
    diff_cursors_and_links,
    diff_dedupe,
    diff_sessions,
    head_violations,
)
from sessionwatch.projections.read_model import ReadModel, SignalFreeProjection

Dedupe = dict[str, tuple[SessionIdentity, int]]


@dataclass
class _Removals:
    """Where the history removes signals: each session's last deletion, each checkpoint's cut-offs."""

    deleted_at: dict[SessionIdentity, int] = field(default_factory=dict)
    positions: list[int] = field(default_factory=list)  # of the checkpoints, ascending
    cut_after: list[int] = field(default_factory=list)  # the highest age cut-off from each on
    through_after: list[int] = field(default_factory=list)  # the highest sequence cut-off from each on

    def settle(self) -> None:
        """Turn the cut-offs noted into running maxima from the last checkpoint back."""
        for at in range(len(self.positions) - 2, -1, -1):
            self.cut_after[at] = max(self.cut_after[at], self.cut_after[at + 1])
            self.through_after[at] = max(self.through_after[at], self.through_after[at + 1])

    def retained(self, position: int, signal: SignalRecorded) -> bool:
        """Whether the signal at `position` is still in the log once every event is applied."""
        if self.deleted_at.get(signal.identity, -1) > position:
            return False
        at = bisect.bisect_right(self.positions, position)
        if at == len(self.positions):
            return True
        return not (signal.occurred_at_ms < self.cut_after[at] or signal.sequence <= self.through_after[at])


@dataclass
class _Side:
    """What the invariants need of one side's signals, gathered as they stream by."""

    pointed: set[tuple[SessionIdentity, int]]  # the signals pending notices point at
    notifying: frozenset[SignalKind]  # the kinds a notice may be for
    newest: dict[SessionIdentity, int] = field(default_factory=dict)
    texts: list[Violation] = field(default_factory=list)
    found: dict[tuple[SessionIdentity, int], SignalRecorded] = field(default_factory=dict)
    dedupe: Dedupe = field(default_factory=dict)

    def see(self, signal: SignalRecorded) -> None:
        identity = signal.identity
        self.newest[identity] = signal.sequence
        summary = signal.summary
        plain = signal.payload is None and len(summary) <= MAX_SUMMARY_LENGTH and summary.isprintable()
        if not (plain and summary and not summary.isspace()) and _carries_text(signal):
            self.texts.append(_message_text(signal))
        if (identity, signal.sequence) in self.pointed:
            self.found[identity, signal.sequence] = signal
        if signal.dedupe_key is not None:
            self.dedupe[signal.dedupe_key] = (identity, signal.sequence)

    def invariants(self, model: ReadModel) -> list[Violation]:
        """`audit.check_invariants` of `model` with this side's signals."""
        found: list[Violation] = []
        for identity, state in model.sessions.items():
            found.extend(head_violations(identity, state, self.newest.get(identity, 0)))
        found.extend(self.texts)
        for cursor in model.all_cursors():
            pointed = self.found.get((cursor.key.target, cursor.notified))
            found.extend(
                _cursor_violations(cursor, (pointed,) if pointed is not None else (), self.notifying)
            )
        return found


def _pointed(model: ReadModel) -> set[tuple[SessionIdentity, int]]:
    return {
        (c.key.target, c.notified)
        for by in model.cursors.values()
        for c in by.values()
        if c.notified > c.last_seen
    }


def _signal_diff(have: SignalRecorded | None, want: SignalRecorded | None) -> Iterator[Violation]:
    """`audit._diff` of one sequence: the stored signal against the retained one."""
    for identity in dict.fromkeys(s.identity for s in (have, want) if s is not None):
        stored = {have.sequence: have} if have is not None and have.identity == identity else {}
        replayed = {want.sequence: want} if want is not None and want.identity == identity else {}
        yield from _diff_mapping(
            "signal",
            stored,
            replayed,
            lambda sequence, i=identity: f"{_name(i)} sequence {sequence}",  # type: ignore[misc]
            lambda _sequence, i=identity: (i.session_key,),  # type: ignore[misc]
        )


def _first_pass(
    events: Iterable[DomainEvent], progress: Callable[[int], None] | None, notifying: frozenset[SignalKind]
) -> tuple[Replay, _Removals]:
    result, removals = Replay(), _Removals()
    projection = SignalFreeProjection(notifying=notifying)
    count = 0
    for position, event in enumerate(events):
        if isinstance(event, SignalsPruned):
            _check_checkpoint(projection.sessions, event, result)
            removals.positions.append(position)
            removals.cut_after.append(event.cutoffs.occurred_before_ms)
            removals.through_after.append(event.cutoffs.through_sequence)
        elif isinstance(event, SessionDeleted):
            removals.deleted_at[SessionIdentity(event.session_key, event.agent_id)] = position
        projection.apply(event)
        count += 1
        if progress is not None and count % 1000 == 0:
            progress(count)
    removals.settle()
    result.events_replayed = count
    result.rebuilt = projection.build()
    return result, removals


def audit(
    replay: Callable[[], Iterable[DomainEvent]],
    tables: ReadModel,
    stored_signals: Iterable[SignalRecorded],
    *,
    stored_dedupe: Mapping[str, tuple[SessionIdentity, int]] | None = None,
    progress: Callable[[int], None] | None = None,
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
) -> tuple[list[Violation], int] | None:
    """The violations and the events replayed, or None when the retained signals are out of order.

    `replay` gives the stored events afresh on each call; `tables` is the stored read model
    without signals (`StoreSnapshot.tables`), `stored_signals` the stored signals ascending, and
    `stored_dedupe` the store's dedupe index where it is kept apart from them (else it is theirs);
    `notifying` is the store's set of kinds that notify (`signals.notifying_kinds`).
    """
    history, removals = _first_pass(replay(), progress, notifying)
    rebuilt = history.rebuilt
    have_side, want_side = _Side(_pointed(tables), notifying), _Side(_pointed(rebuilt), notifying)
    signal_found: list[Violation] = []
    retained = (
        e for p, e in enumerate(replay()) if isinstance(e, SignalRecorded) and removals.retained(p, e)
    )
    stored = iter(stored_signals)
    have, want = next(stored, None), next(retained, None)
    last = 0
    while have is not None or want is not None:
        if want is not None:
            if want.sequence <= last:
                return None
            if have is None or want.sequence < have.sequence:
                last = want.sequence
                want_side.see(want)
                signal_found.extend(_signal_diff(None, want))
                want = next(retained, None)
                continue
        assert have is not None  # noqa: S101 - the loop condition with the branch above
        have_side.see(have)
        if want is not None and want.sequence == have.sequence:
            last = want.sequence
            want_side.see(want)
            if have != want:
                signal_found.extend(_signal_diff(have, want))
            want = next(retained, None)
        else:
            signal_found.extend(_signal_diff(have, None))
        have = next(stored, None)
    if progress is not None:
        progress(history.events_replayed)
    have_dedupe = dict(stored_dedupe) if stored_dedupe is not None else have_side.dedupe
    found = list(_diff(tables, rebuilt, signal_found, have_dedupe, want_side.dedupe))
    mismatched = bool(found)
    found.extend(have_side.invariants(tables))
    if mismatched:
        known = {(v.kind, v.detail) for v in found}
        found.extend(v for v in want_side.invariants(rebuilt) if (v.kind, v.detail) not in known)
    return [*history.violations, *found], history.events_replayed


def _diff(
    stored: ReadModel, rebuilt: ReadModel, signals: list[Violation], have: Dedupe, want: Dedupe
) -> Iterator[Violation]:
    """`audit._diff` with the signal differences already found and both dedupe indexes gathered."""
    yield from diff_sessions(stored, rebuilt)
    yield from signals
    yield from diff_dedupe(have, want)
    yield from diff_cursors_and_links(stored, rebuilt)
