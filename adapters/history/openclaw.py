"""`sessionwatch import-openclaw PATH`: a reference-gateway state database into a sessionwatch store.

The reference gateway keeps its state in one SQLite file: the signal log
(`session_state_events`), the heads with their prune watermarks (`session_state_heads`) and the
watch cursors (`session_watch_cursors`). The import turns that into a history sessionwatch can
replay: one `session.signal_recorded.v1` per retained row, in sequence order, on its session's
stream, then one `store.pruned.v4` checkpoint carrying every head, watermark and cursor exactly as
the reference has them (a prune that removed nothing: the reference's own prunes are already
behind it). The store is then bulk-loaded like any imported history, and `audit` runs on it.

Read-only on the reference file, leaving nothing beside it. What cannot be carried is reported,
never guessed:
- a cursor on a bare target key (the reference's targets carry no agent id) is resolved through the
  single head with that key; none or several is `unresolved` / `ambiguous` and the cursor skipped;
- a cursor whose watcher is its own target (the reference makes one when a session spawns itself,
  or a producer names the target as its own watcher) is skipped and reported (`self_watch`):
  sessionwatch never lets a session watch itself, so such a cursor would open notices a replay
  cannot explain;
- payload keys outside sessionwatch's whitelist are dropped (`payload_keys_dropped`), and so are
  whitelisted values the strict API refuses (`{"turns": 0}`, a numeric `status`, `outcome: "ok"`
  on `run_failed`: `payload_values_dropped`), the row itself kept; a payload that is not a JSON
  object is ignored (as the reference reads it);
- a row of an unknown kind or actor type is an error naming the sequence: nothing is written.
Every session with a head, and every watcher holding a cursor, is registered (so the restart sweep
treats them as existing); the local recording time of a signal is its `occurred_at`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
from pydantic import ValidationError

from sessionwatch.adapters.history.jsonl import HistoryError
from sessionwatch.adapters.stores.mapper import STORE_STREAM_ID, session_stream_id
from sessionwatch.adapters.stores.port import HistoryTail, SignalStore, StoreNotEmptyError
from sessionwatch.adapters.stores.sqlite_reading import reading
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity, agent_id_of
from sessionwatch.domain.recording import check_recorded
from sessionwatch.domain.retention import PruneCutoffs, SignalsPruned
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import PAYLOAD_KEYS, SignalKind, check_payload
from sessionwatch.domain.watch_cursor import AMBIENT, EXPLICIT, CursorState, Provenance, watcher_identity
from sessionwatch.domain.wire import WireModel
from sessionwatch.projections.read_model import SignalFreeProjection

_EVENTS = (
    "SELECT sequence, session_key, agent_id, session_id, kind, actor_type, actor_id, run_id,"
    " occurred_at, summary, payload_json, dedupe_key FROM session_state_events ORDER BY sequence"
)
_HEADS = "SELECT session_key, agent_id, last_sequence, pruned_max_sequence FROM session_state_heads"
_CURSORS = (
    "SELECT watcher_session_key, target_session_key, last_seen_sequence, notified_sequence,"
    " material_sequence, updated_at, {provenance}, {store_path} FROM session_watch_cursors"
    " ORDER BY watcher_session_key, target_session_key"
)
"""The cursors; later versions of the reference added `provenance` and `watcher_store_path`."""
_CURSOR_COLUMNS = "SELECT name FROM pragma_table_info('session_watch_cursors')"
_AMBIENT_PROVENANCES = frozenset({"ambient", "ambient-group"})
"""The reference's provenances of an ambient watch (a main session over its group sessions)."""
_COUNTER = "SELECT seq FROM sqlite_sequence WHERE name = 'session_state_events'"


class OpenclawImportError(HistoryError):
    """The reference database cannot be read or carried over; nothing was written."""


class OpenclawReport(WireModel):
    """What `import_openclaw` carried over, and what it could not."""

    signals: int
    sessions: int
    cursors: int
    sequence: int
    unresolved_cursors: tuple[str, ...] = ()
    ambiguous_cursors: tuple[str, ...] = ()
    self_watch_cursors: tuple[str, ...] = ()
    ambient_cursors: int = 0
    """Cursors the reference marked ambient, carried over as ambient (queue-only) cursors."""
    watcher_store_paths: tuple[str, ...] = ()
    """The reference's per-watcher store paths, reported and ignored: one store holds every cursor here."""
    payload_keys_dropped: int = 0
    payload_values_dropped: int = 0


@dataclass
class _Reference:
    """The reference tables, read."""

    heads: list[tuple[str, str, int, int]] = field(default_factory=list)
    cursors: list[tuple[str, str, int, int, int, int, str | None]] = field(default_factory=list)
    watcher_store_paths: tuple[str, ...] = ()
    counter: int = 0
    payload_keys_dropped: int = 0
    payload_values_dropped: int = 0


def import_openclaw(
    store: SignalStore, path: str | Path, *, now_ms: int, progress: Callable[[int], None] | None = None
) -> OpenclawReport:
    """Carry the reference database at `path` into the empty `store`, in one transaction.

    Sequences, heads, prune watermarks and cursor positions are preserved exactly; `now_ms` stamps
    the checkpoint (the import's local time). The signal rows are read as they are written, so
    memory does not grow with them; `progress(n)` is called every 1,000 signals, and at the end.
    """
    if store.last_sequence() or store.stored_event_count():
        full = StoreNotEmptyError("the store already holds history; import into a new, empty store")
        raise OpenclawImportError(str(full)) from full
    path = Path(path)
    reference = _read(path)
    heads_by_key: dict[str, list[str]] = {}
    for key, agent, _, _ in reference.heads:
        heads_by_key.setdefault(key, []).append(agent)
    cursors, skipped = _cursors(reference, heads_by_key)
    signals_only = SignalFreeProjection()
    versions: dict[SessionIdentity, int] = {}
    carried = _Carried(highest=max([reference.counter, *(h[2] for h in reference.heads)]))

    def events() -> Iterator[tuple[UUID, int, DomainEvent]]:
        for signal in _signals(path, reference):
            signals_only.apply(signal)
            identity = signal.identity
            versions[identity] = versions.get(identity, 0) + 1
            carried.signals += 1
            carried.highest = max(carried.highest, signal.sequence)
            if progress is not None and carried.signals % 1000 == 0:
                progress(carried.signals)
            yield session_stream_id(identity), versions[identity], signal
        sessions = _sessions(reference, signals_only, cursors)
        carried.sessions = len(sessions)
        checkpoint = SignalsPruned(
            cutoffs=PruneCutoffs(
                at_ms=now_ms, occurred_before_ms=0, through_sequence=0, cursors_updated_before_ms=0
            ),
            sessions=tuple(
                sorted(_sessions(reference, signals_only, cursors).values(), key=lambda s: s.identity)
            ),
            cursors=tuple(sorted(cursors, key=lambda c: c.key)),
            links=(),
        )
        signals_only.apply(checkpoint)
        yield STORE_STREAM_ID, 1, checkpoint

    def tail() -> HistoryTail:
        stream_versions = {session_stream_id(i): v for i, v in versions.items()} | {STORE_STREAM_ID: 1}
        return HistoryTail(signals_only.build(), carried.highest, stream_versions, now_ms)

    try:
        store.load_history(events(), tail)
    except StoreNotEmptyError as exc:
        raise OpenclawImportError(str(exc)) from exc
    if progress is not None:
        progress(carried.signals)
    return OpenclawReport(
        signals=carried.signals,
        sessions=carried.sessions,
        cursors=len(cursors),
        sequence=carried.highest,
        unresolved_cursors=tuple(skipped.unresolved),
        ambiguous_cursors=tuple(skipped.ambiguous),
        self_watch_cursors=tuple(skipped.self_watch),
        ambient_cursors=sum(1 for cursor in cursors if cursor.ambient),
        watcher_store_paths=reference.watcher_store_paths,
        payload_keys_dropped=reference.payload_keys_dropped,
        payload_values_dropped=reference.payload_values_dropped,
    )


@dataclass
class _Carried:
    """What the streamed part of an import counted."""

    highest: int
    signals: int = 0
    sessions: int = 0


@dataclass
class _Skipped:
    """Reference cursors that are not carried over, as `watcher -> target` lines, by reason."""

    unresolved: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    self_watch: list[str] = field(default_factory=list)


def _cursors(reference: _Reference, heads_by_key: dict[str, list[str]]) -> tuple[list[CursorState], _Skipped]:
    """Cursors with their targets' agent ids resolved; those sessionwatch cannot hold, skipped."""
    cursors: list[CursorState] = []
    skipped = _Skipped()
    for watcher, target, last_seen, notified, material, updated_at, provenance in reference.cursors:
        line = f"{watcher} -> {target}"
        agent = agent_id_of(target)
        if agent is None:
            owners = heads_by_key.get(target, [])
            if len(owners) != 1:
                (skipped.ambiguous if owners else skipped.unresolved).append(line)
                continue
            agent = owners[0]
        if watcher_identity(watcher) == SessionIdentity(target, agent):
            skipped.self_watch.append(line)
            continue
        cursors.append(
            CursorState(
                watcher=watcher,
                target_key=target,
                target_agent_id=agent,
                last_seen=last_seen,
                notified=notified,
                material=material,
                updated_at_ms=updated_at,
                provenance=AMBIENT
                if (provenance or "").strip().lower() in _AMBIENT_PROVENANCES
                else EXPLICIT,
            )
        )
    return cursors, skipped


def _sessions(
    reference: _Reference, signals_only: SignalFreeProjection, cursors: list[CursorState]
) -> dict[SessionIdentity, SessionState]:
    """Every head exactly as the reference has it, and every watcher, registered."""
    sessions: dict[SessionIdentity, SessionState] = {}
    for key, agent, head, watermark in reference.heads:
        identity = SessionIdentity(key, agent)
        folded = signals_only.sessions.get(identity)
        base = folded or SessionState(session_key=key, agent_id=agent)
        sessions[identity] = replace(base, known=True, registered=True, head=head, pruned_through=watermark)
    for cursor in cursors:
        watcher_agent = agent_id_of(cursor.watcher)
        watcher = SessionIdentity(cursor.watcher, watcher_agent) if watcher_agent is not None else None
        if watcher is not None and watcher not in sessions:
            sessions[watcher] = SessionState(
                session_key=watcher.session_key, agent_id=watcher.agent_id, known=True, registered=True
            )
    for identity, state in signals_only.sessions.items():  # a signal without a head row keeps its head
        sessions.setdefault(identity, replace(state, registered=True))
    return sessions


def _read(path: Path) -> _Reference:
    if not path.is_file():
        raise OpenclawImportError(f"no reference database at {path}")
    try:
        with reading(path) as raw:
            reference = _Reference()
            raw.execute(_EVENTS.replace("ORDER BY sequence", "LIMIT 0"))  # the table is there, readable
            reference.heads = [(k, a, int(h), int(w)) for k, a, h, w in raw.execute(_HEADS)]
            columns = {name for (name,) in raw.execute(_CURSOR_COLUMNS)}
            query = _CURSORS.format(
                provenance="provenance" if "provenance" in columns else "NULL",
                store_path="watcher_store_path" if "watcher_store_path" in columns else "NULL",
            )
            rows = raw.execute(query).fetchall()
            reference.cursors = [
                (watcher, target, int(last), int(notified), int(material), int(updated), _text(provenance))
                for watcher, target, last, notified, material, updated, provenance, _ in rows
            ]
            paths = {_text(path) for *_, path in rows}
            reference.watcher_store_paths = tuple(sorted(path for path in paths if path))
            reference.counter = _optional_counter(raw)
            return reference
    except sqlite3.Error as exc:
        raise OpenclawImportError(f"cannot read {path} as a reference state database: {exc}") from exc


def _signals(path: Path, reference: _Reference) -> Iterator[SignalRecorded]:
    """The reference's signal rows in sequence order, read as they are consumed."""
    try:
        with reading(path) as raw:
            rows = raw.execute(_EVENTS)
            while page := rows.fetchmany(1000):
                for row in page:
                    yield _signal(row, reference)
    except sqlite3.Error as exc:
        raise OpenclawImportError(f"cannot read {path} as a reference state database: {exc}") from exc


def _provenance(reference: str | None) -> Provenance:
    """The reference's `provenance` column read as sessionwatch's: `ambient-group` is ambient."""
    return AMBIENT if (reference or "").strip().lower() in _AMBIENT_PROVENANCES else EXPLICIT


def _text(value: object) -> str | None:
    """A reference column's text, or None where it holds none."""
    return value if isinstance(value, str) and value.strip() else None


def _optional_counter(raw: sqlite3.Connection) -> int:
    try:
        row = raw.execute(_COUNTER).fetchone()
    except sqlite3.OperationalError:  # no AUTOINCREMENT table at all
        return 0
    return int(row[0]) if row is not None else 0


def _signal(row: tuple[Any, ...], reference: _Reference) -> SignalRecorded:
    (
        sequence,
        key,
        agent,
        session_id,
        kind,
        actor_type,
        actor_id,
        run_id,
        occurred,
        summary,
        payload_json,
        dedupe,
    ) = row
    try:
        signal_kind = SignalKind(kind)
        payload = _payload(signal_kind, payload_json, reference)
        signal = SignalRecorded(
            sequence=sequence,
            session_key=key,
            agent_id=agent,
            session_id=session_id,
            kind=signal_kind,
            actor_type=actor_type,
            actor_id=actor_id,
            run_id=run_id,
            occurred_at_ms=occurred,
            recorded_at_ms=occurred,
            summary=summary,
            payload=payload,
            dedupe_key=dedupe,
        )
        check_recorded(signal)  # what the strict API refuses does not enter by the back door
    except (ValueError, ValidationError) as exc:
        raise OpenclawImportError(f"session_state_events sequence {sequence}: {_reason(exc)}") from None
    return signal


def _payload(kind: SignalKind, payload_json: object, reference: _Reference) -> dict[str, Any] | None:
    """What the strict API accepts of a JSON-object payload; the rest is dropped and counted.

    Keys off the kind's whitelist count as dropped keys, whitelisted values the strict API refuses
    as dropped values; a payload that is not a JSON object is ignored, as the reference reads it.
    """
    if not isinstance(payload_json, str):
        return None
    try:
        value = orjson.loads(payload_json)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    allowed = PAYLOAD_KEYS.get(kind, frozenset())
    whitelisted = {k: v for k, v in value.items() if k in allowed}
    reference.payload_keys_dropped += len(value) - len(whitelisted)
    kept = {k: v for k, v in whitelisted.items() if _accepted(kind, {k: v})}
    if kept and not _accepted(kind, kept):  # each value fits, together they are over the size cap
        kept = {}
    reference.payload_values_dropped += len(whitelisted) - len(kept)
    return kept or None


def _accepted(kind: SignalKind, payload: dict[str, Any]) -> bool:
    try:
        check_payload(kind, payload)
    except InvalidSignal:
        return False
    return True


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc)
