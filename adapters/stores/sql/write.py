"""The write transaction both SQL stores share: the read models as set-based SQL (ADR-0005, 0007, 0008).

`SetBasedWrite` holds every rule; a store's subclass gives its schema module (`sql`, the same
statement names in each dialect), how a stream id is bound, how an event's notification id comes
back, how sequences are taken and written, and, for PostgreSQL, the cross-process wakes it owes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from types import ModuleType
from typing import Any, cast
from uuid import UUID

from sessionwatch.adapters.stores.archive import JsonlArchive
from sessionwatch.adapters.stores.mapper import (
    STORE_STREAM_ID,
    cursor_stream_id,
    encode,
    link_stream_id,
    session_stream_id,
)
from sessionwatch.adapters.stores.port import PruneCounts, StoreError, StoreNotEmptyError, SweepCounts
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.domain import session, upstream, watch_cursor
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity, agent_id_of
from sessionwatch.domain.retention import PruneCutoffs, Retention, SignalsPruned, compaction_due
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionEvent,
    SessionReset,
    SessionState,
    SignalRecorded,
)
from sessionwatch.domain.signals import NOTIFYING_KINDS
from sessionwatch.domain.upstream import LinkEvent, UpstreamLinkState
from sessionwatch.domain.watch_cursor import (
    CursorEvent,
    CursorKey,
    CursorState,
    MaterialSignalSeen,
    NoticesSwept,
)
from sessionwatch.projections.read_model import ReadModel

ArchiveRow = tuple[int, UUID, int, str, bytes]


def migrate(cursor: Any, sql: ModuleType) -> None:  # noqa: ANN401 - a DB-API cursor of either driver
    """Bring a store written by an older version of the schema `sql` up to date, in the caller's transaction.

    A new store is created at the current version and needs nothing; a store written by a newer
    version is refused rather than misread.
    """
    cursor.execute(sql.SELECT_SCHEMA_VERSION)
    found = int(cursor.fetchone()[0])
    if found > sql.SCHEMA_VERSION:
        raise StoreError(
            f"the store was written by a newer sessionwatch (schema version {found}, this one reads"
            f" up to {sql.SCHEMA_VERSION})"
        )
    for version in range(found + 1, sql.SCHEMA_VERSION + 1):
        for statement in sql.MIGRATIONS[version]:
            cursor.execute(statement)
    if found < sql.SCHEMA_VERSION:
        cursor.execute(sql.WRITE_SCHEMA_VERSION, (sql.SCHEMA_VERSION,))


@dataclass
class _StreamTail:
    """A Session stream's newest version while `append_signals` adds to it, and what it added."""

    stream: UUID
    key: object
    version: int
    signals: list[SignalRecorded] = field(default_factory=list)


def _continues(previous: SignalRecorded, signal: SignalRecorded) -> bool:
    """Whether `signal` joins the §6.1 run `previous` ends: same actor, no producer watcher in either.

    Both are notifying signals on one target with rising sequences, as `_apply_signals` sees them.
    """
    return previous.actor_id == signal.actor_id and not previous.watchers and not signal.watchers


class WriteCache:
    """What this process's committed writes left: session states, stream versions, counters.

    Kept by a store whose writes all go through one connection, which drops it whenever another
    connection committed in between (SQLite's `PRAGMA data_version`, ADR-0018). A transaction reads
    through it and hands it what it wrote only once it committed; one that changed rows wholesale
    (a prune, an import, a migration) empties it instead.
    """

    LIMIT = 65536
    """Identities kept at most: beyond, the cache starts again empty (reads refill it)."""

    def __init__(self) -> None:
        self.states: dict[SessionIdentity, SessionState] = {}
        self.versions: dict[UUID, int] = {}
        self.counters: dict[str, int] = {}

    def clear(self) -> None:
        """Forget everything: the next transactions read the store."""
        self.states.clear()
        self.versions.clear()
        self.counters.clear()


class SetBasedWrite(ABC):
    """One exclusive write transaction over the SQL read models; caches what it read or wrote."""

    sql: ModuleType

    def __init__(self, cursor: Any, cache: WriteCache | None = None) -> None:  # noqa: ANN401 - either driver's
        self._raw = cursor
        self._cache = cache
        self.wholesale = False  # rows changed beyond what `_states` and `_versions` track
        self._states: dict[SessionIdentity, SessionState] = {}
        self._versions: dict[UUID, int] = {}
        self._signal_rows: list[tuple[object, ...]] = []
        self._queued_dedupe: dict[str, SignalRecorded] = {}  # the queued signals that carry one
        self._session_rows: dict[SessionIdentity, tuple[object, ...]] = {}
        self.vacuum_due = False

    @property
    def _c(self) -> Any:  # noqa: ANN401 - a DB-API cursor of either driver
        """The cursor for any statement: the rows the hot path queued are written first (ADR-0017).

        So every statement run through it, a read above all, sees everything this transaction
        appended. Only statements that touch no queued table use `_raw` directly.
        """
        if self._signal_rows or self._session_rows or self._has_queued_events():
            self._flush()
        return self._raw

    def _flush(self) -> None:
        """Write what the hot path queued: stored events, signal rows, one row per session."""
        self._write_queued_events()
        for statement, rows in (
            (self.sql.INSERT_SIGNAL, self._signal_rows),
            (self.sql.UPSERT_SESSION, list(self._session_rows.values())),
        ):
            if len(rows) == 1:
                self._raw.execute(statement, rows[0])
            elif rows:
                self._raw.executemany(statement, rows)
        self._signal_rows.clear()
        self._queued_dedupe.clear()
        self._session_rows.clear()

    # ---------------------------------------------------------------- what each store supplies

    @abstractmethod
    def _stream_key(self, stream: UUID) -> object:
        """How this driver binds a stream id."""

    @abstractmethod
    def _insert_event(self, stream_key: object, version: int, event: DomainEvent) -> int:
        """Insert one stored event on the stream `_stream_key` bound; return its notification id."""

    @abstractmethod
    def _archive_row(self, row: Sequence[Any]) -> ArchiveRow:
        """A removed signal's stored-event row as the archive takes it."""

    @abstractmethod
    def _bulk_insert(self, table: str, columns: str, rows: Sequence[Sequence[object]]) -> None:
        """Insert many rows into an empty table in one go (`executemany`, `COPY`)."""

    def _after_load(self, last_notification_id: int) -> None:  # noqa: B027 - optional hook, empty by design
        """Whatever the driver needs once stored events were inserted with explicit ids."""

    def _wake(self, watcher: str, target_key: str) -> None:  # noqa: B027 - optional hook, empty by design
        """A wake this write owes another process (PostgreSQL); a no-op for a single-process store."""

    def finish(self) -> None:
        """Before the commit: write everything still queued."""
        self._flush()

    def _before_deleting_signals(self) -> None:  # noqa: B027 - optional hook, empty by design
        """Whatever must happen before signal rows are deleted (SQLite raises its counter's floor)."""

    def _has_queued_events(self) -> bool:
        """Whether `_insert_event` queued stored events not yet written (a store that queues them)."""
        return False

    def _write_queued_events(self) -> None:  # noqa: B027 - optional hook, empty by design
        """Write the stored events `_insert_event` queued (a store that queues them)."""

    def _one(self) -> Sequence[Any]:
        row = self._raw.fetchone()
        if row is None:  # aggregates and counters always return a row
            raise LookupError("the store returned no row where one was due")
        return tuple(row)

    # ------------------------------------------------------------------------------ shared rules

    def keep(self) -> None:
        """After the commit: hand the cache what this transaction wrote (or empty it)."""
        cache = self._cache
        if cache is None:
            return
        if self.wholesale or len(cache.states) > cache.LIMIT:
            cache.clear()
            return
        cache.states.update(self._states)
        cache.versions.update(self._versions)

    def session(self, identity: SessionIdentity) -> SessionState:
        """The identity's state as of this transaction (its stream version cached with it)."""
        state = self._states.get(identity)
        if state is None and self._cache is not None:
            state = self._cache.states.get(identity)
            stream = session_stream_id(identity)
            version = self._cache.versions.get(stream)
            if state is not None and (version is not None or not state.known):
                if version is not None:
                    self._versions[stream] = version
                self._states[identity] = state
                return state
            state = None  # not remembered whole: read it
        if state is None:  # nothing is queued for an identity not cached: the raw cursor reads it right
            self._raw.execute(self.sql.SELECT_SESSION, identity)
            row = self._raw.fetchone()
            if row is None:
                state = session.initial(identity)
            else:
                state = sql_rows.session_state(row)
                self._versions[session_stream_id(identity)] = row[-1]
            self._states[identity] = state
        return state

    def signal_by_dedupe(self, dedupe_key: str) -> SignalRecorded | None:
        """The retained signal carrying `dedupe_key`, globally.

        One still queued is known here; any other is in the table, so the lookup need not write
        the queue first (a batch of signals with dedupe keys stays one `executemany`).
        """
        queued = self._queued_dedupe.get(dedupe_key)
        if queued is not None:
            return queued
        self._raw.execute(self.sql.SELECT_BY_DEDUPE, (dedupe_key,))
        row = self._raw.fetchone()
        return sql_rows.signal(row) if row is not None else None

    def _stream_version(self, stream: UUID) -> int:
        """The stream's newest version as of this transaction (0 for a new stream)."""
        version = self._versions.get(stream)
        if version is None and self._cache is not None:
            version = self._cache.versions.get(stream)
        if version is None:
            self._c.execute(self.sql.SELECT_STREAM_VERSION, {"s": self._stream_key(stream)})
            version = int(self._one()[0])
        return version

    def _store_event(self, stream: UUID, event: DomainEvent) -> tuple[int, int]:
        """Insert one stored event; return its stream version and notification id."""
        version = self._stream_version(stream) + 1
        notification_id = self._insert_event(self._stream_key(stream), version, event)
        self._versions[stream] = version
        if not isinstance(event, SessionEvent):
            # cursor and store streams: no read-model row carries their version (sw_sessions does)
            self._c.execute(self.sql.UPSERT_STREAM, (self._stream_key(stream), version))
        return version, notification_id

    def append(self, identity: SessionIdentity, events: Sequence[SessionEvent]) -> list[MaterialSignalSeen]:
        """Store Session events and apply them, with the cursor facts they imply; return opened notices.

        Signals go through `append_signals`; any other event is stored and applied in turn.
        """
        if not events:
            return []
        if all(isinstance(event, SignalRecorded) for event in events):
            return self.append_signals(cast("Sequence[SignalRecorded]", events))
        stream = session_stream_id(identity)
        state = self.session(identity)
        opened: list[MaterialSignalSeen] = []
        version = 0
        for event in events:
            version, notification_id = self._store_event(stream, event)
            if isinstance(event, SignalRecorded):
                self._queue_signal(event, notification_id)
            opened.extend(self._apply_implied(identity, event))
            state = session.evolve(state, event)
        self._put_session(state, version)
        self._wake_all(opened)
        return opened

    def append_signals(self, signals: Sequence[SignalRecorded]) -> list[MaterialSignalSeen]:
        """Store freshly decided signals, of any sessions, and apply them; return opened notices.

        The stored events and rows are queued in the order given, so notification ids follow the
        sequences. Then each session's signals are applied to its cursors and its row: signals on
        other sessions touch none of them, so a session's signals may be taken together, and
        consecutive notifying ones by one actor naming no producer watcher apply §6.1 as one
        statement (`_material_update`), which leaves every cursor exactly as one statement each.
        The opened notices come back in the order of the signals that opened them.
        """
        streams: dict[SessionIdentity, _StreamTail] = {}
        for signal in signals:
            identity = SessionIdentity(signal.session_key, signal.agent_id)
            tail = streams.get(identity)
            if tail is None:
                tail = streams[identity] = self._stream_tail(identity)
            tail.version += 1
            tail.signals.append(signal)
            self._queue_signal(signal, self._insert_event(tail.key, tail.version, signal))
        opened: list[MaterialSignalSeen] = []
        for identity, tail in streams.items():
            opened.extend(self._apply_signals(identity, tail))
        if len(streams) > 1:
            opened.sort(key=attrgetter("sequence"))
        self._wake_all(opened)
        return opened

    def _stream_tail(self, identity: SessionIdentity) -> _StreamTail:
        stream = session_stream_id(identity)
        self.session(identity)  # caches the stream's version with the state
        return _StreamTail(stream, self._stream_key(stream), self._stream_version(stream))

    def _queue_signal(self, signal: SignalRecorded, notification_id: int) -> None:
        self._signal_rows.append(sql_rows.signal_params(signal, notification_id))
        if signal.dedupe_key is not None:
            self._queued_dedupe[signal.dedupe_key] = signal

    def _apply_signals(self, identity: SessionIdentity, tail: _StreamTail) -> list[MaterialSignalSeen]:
        """One session's stored signals, in order, applied to its cursors and its state."""
        state = self.session(identity)
        head = state.head  # raised alone by most signals: the state is rebuilt only when needed
        opened: list[MaterialSignalSeen] = []
        run: list[SignalRecorded] = []
        for signal in tail.signals:
            notifying = signal.kind in NOTIFYING_KINDS
            if run and not (notifying and _continues(run[-1], signal)):
                opened.extend(self._material_update(run))
                run = []
            if notifying:
                run.append(signal)
            else:
                opened.extend(self._apply_implied(identity, signal))
            if session.raises_head_only(state, signal):
                head = max(head, signal.sequence)
            else:
                state = session.evolve(session.with_head(state, head), signal)
                head = state.head
        if run:
            opened.extend(self._material_update(run))
        self._versions[tail.stream] = tail.version
        self._put_session(session.with_head(state, head), tail.version)
        return opened

    def _wake_all(self, opened: Iterable[MaterialSignalSeen]) -> None:
        for fact in opened:
            self._wake(fact.watcher, fact.target_key)

    def _put_session(self, state: SessionState, version: int) -> None:
        """Queue the session's row at its stream's `version`, or delete it when the fold drops it."""
        identity = state.identity
        self._states[identity] = state
        if state.known:
            self._session_rows[identity] = sql_rows.session_params(state, version)
            return
        # deleted, or reset while known only by its cursors: not listed (as the fold)
        self._c.execute(self.sql.DELETE_SESSION, identity)
        # no row carries the stream's version now: keep it, so a compaction cannot bring it back
        self._c.execute(self.sql.UPSERT_STREAM, (self._stream_key(session_stream_id(identity)), version))

    def _apply_implied(self, identity: SessionIdentity, event: SessionEvent) -> list[MaterialSignalSeen]:
        """The SQL form of `read_model.implied_facts` (the contract suite keeps them equal).

        Returns the notices the event opened (what the shell wakes watchers for).
        """
        match event:
            case SignalRecorded() if event.kind in NOTIFYING_KINDS:
                return self._material_update([event])
            case SignalRecorded():  # seeding (SPEC §5.1) needs no cursor state: it overwrites
                for command in watch_cursor.react(event, {}, at_ms=event.recorded_at_ms):
                    for fact in watch_cursor.derive(command, None):
                        seeded = watch_cursor.evolve(None, fact)
                        if seeded is not None:
                            self._c.execute(self.sql.UPSERT_CURSOR, sql_rows.cursor_params(seeded))
                return []
            case SessionReset():
                self._drop_cursors(identity, deleted=False)
                return []
            case SessionDeleted():
                self._drop_cursors(identity, deleted=True)
                self._before_deleting_signals()
                self._c.execute(self.sql.DELETE_SESSION_SIGNALS, identity)
                self._c.execute(self.sql.DELETE_LINK, identity)  # its link goes too (SPEC §9)
                return []
            case _:
                return []

    def _material_update(self, run: Sequence[SignalRecorded]) -> list[MaterialSignalSeen]:
        """SPEC §6.1 for every holder but the actor in one statement, like the peer's.

        `run` is one notifying signal, or several in a row on one target by one actor naming no
        producer watcher: applying them one by one moves `N` (if no notice was open) to the first
        and `M` to the last, so one statement with both does the same. Then a `(0, e, e)` cursor
        for each producer watcher without one. Returns the notices this opened (`N` moved to the
        first signal); it touches only `sw_cursors`, so it needs nothing queued written first.
        """
        first, last = run[0], run[-1]
        e = first.sequence
        self._raw.execute(
            self.sql.MATERIAL_UPDATE,
            {
                "first": e,
                "e": last.sequence,
                "now": last.recorded_at_ms,
                "key": first.session_key,
                "agent": first.agent_id,
                "actor": first.actor_id,
            },
        )
        rows = self._raw.fetchall()
        updated = {watcher for watcher, _, _ in rows}
        opened = [(watcher, seen) for watcher, seen, notified in rows if notified == e]
        for watcher in watch_cursor.notified_watchers(first, first.watchers, ()):
            if watcher not in updated:
                new = (watcher, first.session_key, first.agent_id, e, e, first.recorded_at_ms)
                self._raw.execute(self.sql.INSERT_NEW_CURSOR, (*new, agent_id_of(watcher)))
                opened.append((watcher, 0))
        return [
            MaterialSignalSeen(
                watcher=watcher,
                target_key=first.session_key,
                target_agent_id=first.agent_id,
                at_ms=first.recorded_at_ms,
                sequence=e,
                notified=e,
                last_seen=seen,
            )
            for watcher, seen in opened
        ]

    def _drop_cursors(self, identity: SessionIdentity, *, deleted: bool) -> None:
        """Reset drops the cursors the session holds; deletion also those on it (SPEC §5.4, §9)."""
        if watch_cursor.watcher_identity(identity.session_key) == identity:
            self._c.execute(self.sql.DROP_CURSORS_OF_WATCHER, (identity.session_key,))
        if deleted:
            self._c.execute(self.sql.DROP_CURSORS_ON_TARGET, identity)

    def sweep(self, at_ms: int) -> SweepCounts:
        """The SQL form of `read_model.plan_sweep`.

        One statement re-freezes every open notice of an existing watcher; one `NoticesSwept` event
        records it when anything changed (ADR-0007).
        """
        self._c.execute(self.sql.SELECT_REPUBLISHED)
        republished = [CursorKey(*row) for row in self._c.fetchall()]
        self._c.execute(self.sql.COUNT_OPEN)
        open_count = int(self._one()[0])
        self._c.execute(self.sql.REFREEZE, {"now": at_ms})
        refrozen = self._c.rowcount
        if refrozen:
            self._store_event(STORE_STREAM_ID, NoticesSwept(at_ms=at_ms))
        for key in republished:
            self._wake(key.watcher, key.target_key)
        return SweepCounts(tuple(republished), refrozen, open_count - len(republished))

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        """Whether any registered cursor targets the identity (the human-message gate, SPEC §4)."""
        self._c.execute(self.sql.SELECT_ANY_CURSOR_ON, identity)
        return self._c.fetchone() is not None

    def append_cursor(
        self, key: CursorKey, events: Sequence[CursorEvent], *, before: CursorState | None
    ) -> None:
        """Store a cursor's own events and write the row they leave (or delete it)."""
        stream = cursor_stream_id(key)
        state = before
        for event in events:
            self._store_event(stream, event)
            state = watch_cursor.evolve(state, event)
        if state is None:
            self._c.execute(self.sql.DELETE_CURSOR, (key.target_key, key.target_agent_id, key.watcher))
            return
        self._c.execute(self.sql.UPSERT_CURSOR, sql_rows.cursor_params(state))
        if events and state.pending:  # an acknowledgement left a follow-up notice (SPEC §6.3)
            self._wake(key.watcher, key.target_key)

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        """The identity's link row (a tombstone included) as of this transaction."""
        self._c.execute(self.sql.SELECT_LINK, identity)
        row = self._c.fetchone()
        return sql_rows.link_state(row) if row is not None else None

    def append_link(self, identity: SessionIdentity, events: Sequence[LinkEvent]) -> None:
        """Store the link's events and write the row they leave."""
        stream = link_stream_id(identity)
        state = self.upstream_link(identity) if events else None
        for event in events:
            self._store_event(stream, event)
            state = upstream.evolve(state, event)
        if state is not None:
            self._c.execute(self.sql.UPSERT_LINK, sql_rows.link_params(state))

    def prune(self, now_ms: int, policy: Retention, archive: JsonlArchive | None) -> PruneCounts:
        """The SQL form of `projections.retention.prune` (the contract suite keeps them equal)."""
        c = self._c
        occurred_before = now_ms - policy.window_ms
        c.execute(self.sql.CAP_THROUGH, (occurred_before, policy.max_signals))
        row = c.fetchone()
        cutoffs = PruneCutoffs(
            at_ms=now_ms,
            occurred_before_ms=occurred_before,
            through_sequence=row[0] if row is not None else 0,
            cursors_updated_before_ms=now_ms - policy.window_ms,
        )
        removed = {"cut": cutoffs.occurred_before_ms, "through": cutoffs.through_sequence}
        archived = 0
        if archive is not None:
            c.execute(self.sql.SELECT_REMOVED_EVENTS, removed)
            archived = archive.append(self._archive_rows(c.fetchall()))
        c.execute(self.sql.STAMP_WATERMARKS, removed)
        stamped = c.rowcount
        self._before_deleting_signals()
        c.execute(self.sql.DELETE_REMOVED, removed)
        signals_removed = c.rowcount
        c.execute(self.sql.EXPIRE_CURSORS, (cutoffs.cursors_updated_before_ms,))
        expired = c.rowcount
        self._states.clear()  # heads and watermarks changed under the cache
        self.wholesale = True
        c.execute(self.sql.STAMP_LAST_PRUNE, (now_ms,))
        counts = PruneCounts(cutoffs, signals_removed, stamped, expired, events_deleted=0, archived=archived)
        self.vacuum_due = signals_removed > 0
        if not (signals_removed or expired):
            c.execute(self.sql.COUNT_REPLACEABLE_EVENTS)
            replaceable, entries = self._one()
            if not compaction_due(replaceable, entries):
                return counts  # nothing changed and too little to compact: a prune that writes no event
        c.execute(self.sql.SELECT_SESSIONS)
        sessions = tuple(sql_rows.session_state(r) for r in c.fetchall())
        c.execute(self.sql.SELECT_ALL_CURSORS)
        cursors = tuple(sql_rows.cursor_state(r) for r in c.fetchall())
        c.execute(self.sql.SELECT_ALL_LINKS)
        links = tuple(sql_rows.link_state(r) for r in c.fetchall())
        _, checkpoint = self._store_event(
            STORE_STREAM_ID, SignalsPruned(cutoffs=cutoffs, sessions=sessions, cursors=cursors, links=links)
        )
        c = self._c  # the checkpoint is written first
        c.execute(self.sql.TRUNCATE_EVENTS, (checkpoint,))
        self.vacuum_due = self.vacuum_due or c.rowcount > 0
        return replace(counts, events_deleted=c.rowcount)

    def _archive_rows(self, rows: Iterable[Sequence[Any]]) -> list[ArchiveRow]:
        return [self._archive_row(row) for row in rows]

    def load_history(
        self,
        events: Sequence[tuple[UUID, int, DomainEvent]],
        model: ReadModel,
        *,
        sequence: int,
        stream_versions: Mapping[UUID, int],
        last_prune_ms: int | None,
    ) -> None:
        """`SignalStore.load_history` inside this transaction: check the store is empty, then bulk-insert.

        The stored events get the notification ids 1..n (no other id exists in an empty store) so
        the signal rows can name theirs before anything is inserted.
        """
        c = self._c
        self.wholesale = True
        c.execute(self.sql.SELECT_HISTORY_PRESENT)
        counter, present = self._one()
        if counter or present:
            raise StoreNotEmptyError(
                f"the store already holds history (sequence counter at {counter});"
                " import into a new, empty store"
            )
        versions = dict(stream_versions)
        event_rows: list[tuple[object, ...]] = []
        signal_ids: dict[int, int] = {}
        for notification_id, (stream, version, event) in enumerate(events, 1):
            event_rows.append((notification_id, self._stream_key(stream), version, event.type, encode(event)))
            if isinstance(event, SignalRecorded):
                signal_ids[event.sequence] = notification_id
            versions[stream] = max(versions.get(stream, 0), version)
        sql = self.sql
        self._bulk_insert(sql.EVENTS_TABLE, sql.LOADED_EVENT_COLUMNS, event_rows)
        self._after_load(len(event_rows))
        sessions = sorted(model.sessions.values(), key=lambda s: (s.session_key, s.agent_id))
        carried = {session_stream_id(s.identity) for s in sessions}
        rows = [sql_rows.session_params(s, versions.get(session_stream_id(s.identity), 0)) for s in sessions]
        self._bulk_insert("sw_sessions", f"{sql.SESSION_COLUMNS}, stream_version", rows)
        signals = sorted((s for log in model.signals.values() for s in log), key=lambda s: s.sequence)
        rows = [sql_rows.signal_params(s, signal_ids[s.sequence]) for s in signals]
        self._bulk_insert("sw_signals", f"{sql.SIGNAL_COLUMNS}, notification_id", rows)
        rows = [sql_rows.cursor_params(cursor) for cursor in model.all_cursors()]
        self._bulk_insert("sw_cursors", f"{sql.CURSOR_COLUMNS}, watcher_agent_id", rows)
        rows = [sql_rows.link_params(model.links[identity]) for identity in sorted(model.links)]
        self._bulk_insert("sw_upstream_links", sql.LINK_COLUMNS, rows)
        rows = [(self._stream_key(s), v) for s, v in sorted(versions.items()) if s not in carried]
        self._bulk_insert("sw_streams", "stream_id, version", rows)
        c.execute(sql.WRITE_COUNTER, (sequence,))
        if last_prune_ms is None:
            c.execute(sql.CLEAR_LAST_PRUNE)
        else:
            c.execute(sql.STAMP_LAST_PRUNE, (last_prune_ms,))
