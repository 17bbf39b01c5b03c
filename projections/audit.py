"""The audit as pure functions: replay the history, compare, check the invariants.

`replay(events)` folds the stored events from the start (or from the newest checkpoint a prune
left, ADR-0008) into fresh read models; `compare(stored, rebuilt)` diffs them with the stored ones
and checks the invariants: heads never lowered in the history and never below a retained signal, prune
watermarks not above heads, `L <= N <= M` on every cursor, no pending notice for a self-caused or a
log-only signal, and no message text (summaries one short line, payload keys on the whitelist).
At most one pending notice per pair holds by construction: cursors are keyed by the pair.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import (
    SessionState,
    SignalRecorded,
)
from sessionwatch.domain.signals import (
    MAX_PAYLOAD_BYTES,
    MAX_SUMMARY_LENGTH,
    NOTIFYING_KINDS,
    PAYLOAD_KEYS,
    SignalKind,
    check_summary,
)
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.domain.wire import WIRE_CONFIG
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
    "digest_mismatch": "a stored creation digest differs from the replayed one",
    "digest_missing": "the history has a creation digest the stored read model lacks",
    "digest_unexpected": "the stored read model has a creation digest the history does not",
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

    model_config = WIRE_CONFIG  # camelCase inside an audit report's JSON

    kind: str
    detail: str
    session_keys: tuple[str, ...] = ()


@dataclass
class Replay:
    """A replayed history: the rebuilt read models, the heads it saw go down, the events it read."""

    rebuilt: ReadModel = field(default_factory=ReadModel)
    violations: list[Violation] = field(default_factory=list)
    events_replayed: int = 0


def replay(
    events: Iterable[DomainEvent],
    *,
    progress: Callable[[int], None] | None = None,
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
) -> Replay:
    """Fold the history into fresh read models, reporting every head that goes down.

    Only a prune checkpoint can lower a head in a replay (a signal raises it to at most its own
    sequence, a deletion forgets the identity), so each checkpoint is checked against the heads
    the replay had reached. `progress(n)` is called every 1,000 events replayed, and at the end.
    `notifying` is the store's set of kinds that notify (`signals.notifying_kinds`).
    """
    result = Replay()
    projection = Projection(notifying=notifying)
    count = 0
    for event in events:
        if isinstance(event, SignalsPruned):
            _check_checkpoint(projection.sessions, event, result)
        projection.apply(event)
        count += 1
        if progress is not None and count % 1000 == 0:
            progress(count)
    result.events_replayed = count
    result.rebuilt = projection.build()
    if progress is not None:
        progress(count)
    return result


def _check_checkpoint(
    before: Mapping[SessionIdentity, SessionState], checkpoint: SignalsPruned, result: Replay
) -> None:
    for state in checkpoint.sessions:
        reached = before.get(state.identity)
        if reached is not None and state.head < reached.head:
            result.violations.append(
                Violation(
                    kind="head_lowered",
                    detail=f"{_name(state.identity)}: head {reached.head} -> {state.head}",
                    session_keys=(state.session_key,),
                )
            )


def compare(
    stored: ReadModel, rebuilt: ReadModel, *, notifying: frozenset[SignalKind] = NOTIFYING_KINDS
) -> list[Violation]:
    """Diff the stored read models with the rebuilt ones, then check the invariants on the stored ones.

    Where they differ, the invariants are checked on the rebuilt ones too: the history itself may
    break one that the stored models hide.
    """
    found = list(_diff(stored, rebuilt))
    mismatched = bool(found)
    found.extend(check_invariants(stored, notifying=notifying))
    if mismatched:
        known = {(v.kind, v.detail) for v in found}
        found.extend(
            v for v in check_invariants(rebuilt, notifying=notifying) if (v.kind, v.detail) not in known
        )
    return found


def _name(identity: SessionIdentity) -> str:
    return f"{identity.session_key} (agent {identity.agent_id})"


# -------------------------------------------------------------------------------------- the diff


def _diff(stored: ReadModel, rebuilt: ReadModel) -> Iterator[Violation]:
    """Every difference between the stored and the replayed read models (equal parts are skipped whole)."""
    yield from diff_sessions(stored, rebuilt)
    for identity in stored.signals.keys() | rebuilt.signals.keys():
        have_log, want_log = stored.signals.get(identity, ()), rebuilt.signals.get(identity, ())
        if have_log == want_log:
            continue
        yield from _diff_mapping(
            "signal",
            {s.sequence: s for s in have_log},
            {s.sequence: s for s in want_log},
            lambda sequence, i=identity: f"{_name(i)} sequence {sequence}",  # type: ignore[misc]
            lambda _sequence, i=identity: (i.session_key,),  # type: ignore[misc]
        )
    yield from diff_dedupe(stored.dedupe, rebuilt.dedupe)
    yield from diff_cursors_and_links(stored, rebuilt)


def diff_sessions(stored: ReadModel, rebuilt: ReadModel) -> Iterator[Violation]:
    """The session rows that differ between the stored and the replayed read models."""
    if stored.sessions != rebuilt.sessions:
        yield from _diff_mapping(
            "session", stored.sessions, rebuilt.sessions, _name, lambda i: (i.session_key,)
        )


def diff_dedupe(
    have: Mapping[str, tuple[SessionIdentity, int]], want: Mapping[str, tuple[SessionIdentity, int]]
) -> Iterator[Violation]:
    """The dedupe keys whose stored signal differs from the replayed one (or is missing on a side)."""
    if have == want:
        return
    for key in sorted(have.keys() | want.keys()):
        have_ref, want_ref = have.get(key), want.get(key)
        if have_ref != want_ref:
            keys = tuple(sorted({ref[0].session_key for ref in (have_ref, want_ref) if ref is not None}))
            detail = f"{key!r}: {have_ref} (replay {want_ref})"
            yield Violation(kind="dedupe_mismatch", detail=detail, session_keys=keys)


def diff_cursors_and_links(stored: ReadModel, rebuilt: ReadModel) -> Iterator[Violation]:
    """The cursor, upstream-link and digest rows that differ between the stored and replayed read models."""
    if stored.cursors != rebuilt.cursors:
        yield from _diff_mapping(
            "cursor",
            {c.key: c for c in stored.all_cursors()},
            {c.key: c for c in rebuilt.all_cursors()},
            lambda k: f"{k.watcher} on {_name(k.target)}",
            lambda k: (k.watcher, k.target_key),
        )
    if stored.links != rebuilt.links:
        yield from _diff_mapping("link", stored.links, rebuilt.links, _name, lambda i: (i.session_key,))
    if stored.digests != rebuilt.digests:
        yield from _diff_mapping("digest", stored.digests, rebuilt.digests, _name, lambda i: (i.session_key,))


K = TypeVar("K")
V = TypeVar("V")


def _fields(value: object) -> dict[str, object]:
    """A read-model value's fields by name (pydantic models and dataclasses alike)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return {"value": value}


def _diff_mapping(
    noun: str,
    have: Mapping[K, V],
    want: Mapping[K, V],
    name: Callable[[K], str],
    keys: Callable[[K], tuple[str, ...]],
) -> Iterator[Violation]:
    differing = [key for key in have.keys() | want.keys() if have.get(key) != want.get(key)]
    for key in sorted(differing, key=repr):
        stored_value, replayed = have.get(key), want.get(key)
        if stored_value is None:
            yield Violation(kind=f"{noun}_missing", detail=name(key), session_keys=keys(key))
        elif replayed is None:
            yield Violation(kind=f"{noun}_unexpected", detail=name(key), session_keys=keys(key))
        else:
            stored_fields, replayed_fields = _fields(stored_value), _fields(replayed)
            changed = ", ".join(
                f"{f} {stored_fields[f]!r} (replay {replayed_fields[f]!r})"
                for f in stored_fields
                if stored_fields[f] != replayed_fields.get(f)
            )
            yield Violation(kind=f"{noun}_mismatch", detail=f"{name(key)}: {changed}", session_keys=keys(key))


# -------------------------------------------------------------------------------- the invariants


def head_violations(identity: SessionIdentity, state: SessionState, newest: int) -> list[Violation]:
    """A session's head below its newest retained sequence, or its watermark above its head."""
    found: list[Violation] = []
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
    return found


def check_invariants(
    model: ReadModel, *, notifying: frozenset[SignalKind] = NOTIFYING_KINDS
) -> list[Violation]:
    """The audit's invariants on one read model (`notifying`: the kinds a notice may be for)."""
    found: list[Violation] = []
    for identity, state in model.sessions.items():
        log = model.signals.get(identity, ())
        found.extend(head_violations(identity, state, log[-1].sequence if log else 0))
    for log in model.signals.values():
        for signal in log:
            summary = signal.summary
            plain = signal.payload is None and len(summary) <= MAX_SUMMARY_LENGTH and summary.isprintable()
            if not (plain and summary and not summary.isspace()) and _carries_text(signal):
                found.append(_message_text(signal))
    for cursor in model.all_cursors():
        found.extend(_cursor_violations(cursor, model.signals.get(cursor.key.target, ()), notifying))
    return found


def _carries_text(signal: SignalRecorded) -> bool:
    summary = signal.summary
    if len(summary) > MAX_SUMMARY_LENGTH or not summary.isprintable() or not summary.strip():
        try:  # the full rule decides (isprintable also refuses what check_summary allows)
            check_summary(summary)
        except InvalidSignal:
            return True
    payload = signal.payload
    if payload is None:
        return False
    values = payload.as_dict()
    if not set(values) <= PAYLOAD_KEYS.get(signal.kind, frozenset()):
        return True
    texts = (payload.channel or "", payload.status or "")
    if sum(len(t) for t in texts) * 4 < MAX_PAYLOAD_BYTES - 64:  # cannot reach the limit: UTF-8 <= 4 bytes
        return False
    return len(json.dumps(values, separators=(",", ":"), ensure_ascii=False).encode()) > MAX_PAYLOAD_BYTES


def _message_text(signal: SignalRecorded) -> Violation:
    return Violation(
        kind="message_text",
        detail=f"{_name(signal.identity)} sequence {signal.sequence}: summary or payload outside the rules",
        session_keys=(signal.session_key,),
    )


def _cursor_violations(
    cursor: CursorState, target_log: Sequence[SignalRecorded], notifying: frozenset[SignalKind]
) -> Iterator[Violation]:
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
    at = bisect.bisect_left(target_log, cursor.notified, key=lambda s: s.sequence)
    if at == len(target_log) or target_log[at].sequence != cursor.notified:
        return  # a pruned signal cannot be checked
    signal = target_log[at]
    if signal.kind not in notifying:
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
