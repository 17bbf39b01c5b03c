"""The audit (SPEC §14) as pure functions: replay the history, compare, check the invariants.

`audit(stored, events)` folds the stored events from the start (or from the newest checkpoint a
prune left, ADR-0008) into fresh read models, diffs them with the stored ones, and checks the
invariants on both: heads never lowered in the history and never below a retained signal, prune
watermarks not above heads, `L <= N <= M` on every cursor, no pending notice for a self-caused or a
log-only signal, and no message text (summaries one short line, payload keys on the whitelist).
At most one pending notice per pair holds by construction: cursors are keyed by the pair.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionReset,
    SessionState,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.signals import MAX_PAYLOAD_BYTES, NOTIFYING_KINDS, PAYLOAD_KEYS, check_summary
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.projections.read_model import Projection, ReadModel

VIOLATION_KINDS = {
    "head_lowered": "a session's head went down in the history",
    "session_mismatch": "a stored session differs from the replayed one",
    "session_missing": "the history has a session the stored read model lacks",
    "session_unexpected": "the stored read model has a session the history does not",
    "signal_mismatch": "a stored signal differs from the replayed one",
    "signal_missing": "the history retains a signal missing from the stored log view",
    "signal_unexpected": "the stored log view has a signal the history does not retain",
    "dedupe_mismatch": "a dedupe key points elsewhere than the history says",
    "cursor_mismatch": "a stored cursor differs from the replayed one",
    "cursor_missing": "the history has a cursor the stored read model lacks",
    "cursor_unexpected": "the stored read model has a cursor the history does not",
    "link_mismatch": "a stored upstream link differs from the replayed one",
    "link_missing": "the history has an upstream link the stored read model lacks",
    "link_unexpected": "the stored read model has an upstream link the history does not",
    "head_below_signal": "a head is below one of its session's retained sequences",
    "watermark_above_head": "a prune watermark is above its head",
    "cursor_order": "a cursor breaks L <= N <= M",
    "notice_self_caused": "a pending notice is for the watcher's own signal",
    "notice_log_only": "a pending notice is for a log-only signal",
    "message_text": "a summary or payload could carry message text",
}
"""Every violation kind the audit reports, with what it means."""


class Violation(BaseModel):
    """One broken rule: its kind (a `VIOLATION_KINDS` key), what is wrong, and the sessions involved."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    detail: str
    session_keys: tuple[str, ...] = ()


@dataclass
class AuditResult:
    """What `audit` found, and how many stored events it replayed."""

    violations: list[Violation] = field(default_factory=list)
    events_replayed: int = 0
    rebuilt: ReadModel = field(default_factory=ReadModel)


def audit(
    stored: ReadModel, events: Iterable[DomainEvent], *, progress: Callable[[int], None] | None = None
) -> AuditResult:
    """Replay `events` into fresh read models, diff them with `stored`, check the invariants on both.

    `progress(n)` is called every 1,000 events replayed.
    """
    result = AuditResult()
    rebuilt = _replay(events, result, progress)
    result.rebuilt = rebuilt
    found = result.violations
    found.extend(_diff(stored, rebuilt))
    found.extend(check_invariants(stored))
    known = {(v.kind, v.detail) for v in found}
    found.extend(v for v in check_invariants(rebuilt) if (v.kind, v.detail) not in known)
    return result


def _replay(
    events: Iterable[DomainEvent], result: AuditResult, progress: Callable[[int], None] | None
) -> ReadModel:
    """Fold the history, reporting every head that goes down (SPEC §2: heads are monotonic)."""
    projection = Projection()
    heads: dict[SessionIdentity, int] = {}
    count = 0
    for event in events:
        projection.apply(event)
        count += 1
        if progress is not None and count % 1000 == 0:
            progress(count)
        if isinstance(event, SignalsPruned):
            for state in event.sessions:
                _note_head(heads, state, result)
        elif isinstance(event, SessionDeleted):
            heads.pop(SessionIdentity(event.session_key, event.agent_id), None)
        elif isinstance(event, SessionUpserted | SignalRecorded | SessionReset):
            current = projection.sessions.get(SessionIdentity(event.session_key, event.agent_id))
            if current is not None:
                _note_head(heads, current, result)
    result.events_replayed = count
    if progress is not None:
        progress(count)
    return projection.build()


def _note_head(heads: dict[SessionIdentity, int], state: SessionState, result: AuditResult) -> None:
    before = heads.get(state.identity, 0)
    if state.head < before:
        result.violations.append(
            Violation(
                kind="head_lowered",
                detail=f"{_name(state.identity)}: head {before} -> {state.head}",
                session_keys=(state.session_key,),
            )
        )
    heads[state.identity] = max(before, state.head)


def _name(identity: SessionIdentity) -> str:
    return f"{identity.session_key} (agent {identity.agent_id})"


# -------------------------------------------------------------------------------------- the diff


def _diff(stored: ReadModel, rebuilt: ReadModel) -> Iterator[Violation]:
    yield from _diff_mapping("session", stored.sessions, rebuilt.sessions, _name, lambda i: (i.session_key,))
    have_signals = {(s.identity, s.sequence): s for log in stored.signals.values() for s in log}
    want_signals = {(s.identity, s.sequence): s for log in rebuilt.signals.values() for s in log}
    yield from _diff_mapping(
        "signal",
        have_signals,
        want_signals,
        lambda k: f"{_name(k[0])} sequence {k[1]}",
        lambda k: (k[0].session_key,),
    )
    for key in sorted(set(stored.dedupe) | set(rebuilt.dedupe)):
        have_ref, want_ref = stored.dedupe.get(key), rebuilt.dedupe.get(key)
        if have_ref != want_ref:
            keys = tuple(sorted({ref[0].session_key for ref in (have_ref, want_ref) if ref is not None}))
            yield Violation(
                kind="dedupe_mismatch", detail=f"{key!r}: {have_ref} vs {want_ref}", session_keys=keys
            )
    have_cursors = {c.key: c for c in stored.all_cursors()}
    want_cursors = {c.key: c for c in rebuilt.all_cursors()}
    yield from _diff_mapping(
        "cursor",
        have_cursors,
        want_cursors,
        lambda k: f"{k.watcher} on {_name(k.target)}",
        lambda k: (k.watcher, k.target_key),
    )
    yield from _diff_mapping("link", stored.links, rebuilt.links, _name, lambda i: (i.session_key,))


K = TypeVar("K")
V = TypeVar("V", bound=BaseModel)


def _diff_mapping(
    noun: str,
    have: Mapping[K, V],
    want: Mapping[K, V],
    name: Callable[[K], str],
    keys: Callable[[K], tuple[str, ...]],
) -> Iterator[Violation]:
    for key in sorted(have.keys() | want.keys(), key=repr):
        stored_value, replayed = have.get(key), want.get(key)
        if stored_value == replayed:
            continue
        if stored_value is None:
            yield Violation(kind=f"{noun}_missing", detail=name(key), session_keys=keys(key))
        elif replayed is None:
            yield Violation(kind=f"{noun}_unexpected", detail=name(key), session_keys=keys(key))
        else:
            stored_fields, replayed_fields = stored_value.model_dump(), replayed.model_dump()
            changed = ", ".join(
                f"{f} {stored_fields[f]!r} (replay {replayed_fields[f]!r})"
                for f in stored_fields
                if stored_fields[f] != replayed_fields.get(f)
            )
            yield Violation(kind=f"{noun}_mismatch", detail=f"{name(key)}: {changed}", session_keys=keys(key))


# -------------------------------------------------------------------------------- the invariants


def check_invariants(model: ReadModel) -> list[Violation]:
    """The invariants of SPEC §14 on one read model."""
    found: list[Violation] = []
    for identity, state in model.sessions.items():
        log = model.signals.get(identity, ())
        newest = log[-1].sequence if log else 0
        if state.head < newest:
            found.append(
                Violation(
                    kind="head_below_signal",
                    detail=f"{_name(identity)}: head {state.head} < retained sequence {newest}",
                    session_keys=(identity.session_key,),
                )
            )
        if state.pruned_through > state.head:
            found.append(
                Violation(
                    kind="watermark_above_head",
                    detail=f"{_name(identity)}: watermark {state.pruned_through} > head {state.head}",
                    session_keys=(identity.session_key,),
                )
            )
    for log in model.signals.values():
        found.extend(_message_text(signal) for signal in log if _carries_text(signal))
    by_sequence = {s.sequence: s for log in model.signals.values() for s in log}
    for cursor in model.all_cursors():
        found.extend(_cursor_violations(cursor, by_sequence))
    return found


def _carries_text(signal: SignalRecorded) -> bool:
    try:
        check_summary(signal.summary)
    except InvalidSignal:
        return True
    if signal.payload is None:
        return False
    values = signal.payload.as_dict()
    allowed = PAYLOAD_KEYS.get(signal.kind, frozenset())
    encoded = json.dumps(values, separators=(",", ":"), ensure_ascii=False).encode()
    return not set(values) <= allowed or len(encoded) > MAX_PAYLOAD_BYTES


def _message_text(signal: SignalRecorded) -> Violation:
    return Violation(
        kind="message_text",
        detail=f"{_name(signal.identity)} sequence {signal.sequence}: summary or payload outside the rules",
        session_keys=(signal.session_key,),
    )


def _cursor_violations(cursor: CursorState, by_sequence: Mapping[int, SignalRecorded]) -> Iterator[Violation]:
    where = f"{cursor.watcher} on {_name(cursor.key.target)}"
    keys = (cursor.watcher, cursor.target_key)
    if not cursor.last_seen <= cursor.notified <= cursor.material:
        yield Violation(
            kind="cursor_order",
            detail=f"{where}: (L, N, M) = ({cursor.last_seen}, {cursor.notified}, {cursor.material})",
            session_keys=keys,
        )
    if cursor.notified <= cursor.last_seen:
        return
    signal = by_sequence.get(cursor.notified)  # a pruned signal cannot be checked
    if signal is None or signal.identity != cursor.key.target:
        return
    if signal.kind not in NOTIFYING_KINDS:
        yield Violation(
            kind="notice_log_only",
            detail=f"{where}: pending for {signal.kind.value} at sequence {signal.sequence}",
            session_keys=keys,
        )
    if signal.actor_type == "agent" and signal.actor_id == cursor.watcher:
        yield Violation(
            kind="notice_self_caused",
            detail=f"{where}: pending for its own signal at sequence {signal.sequence}",
            session_keys=keys,
        )
