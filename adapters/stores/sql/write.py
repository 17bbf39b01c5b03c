"""The write transaction the SQL stores share: events stored, read models kept as set-based SQL.

`SqlWrite` holds every rule of a write (ADR-0025, 0026): stream versions, the stored events, the
signal and session rows (queued, ADR-0017), and the notice rules' SQL (`notices`), the prune's
(`prune`) and the bulk load (`load`). What differs between SQLite and PostgreSQL is its `Dialect`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any, cast
from uuid import UUID

from sessionwatch.adapters.stores.archive import JsonlArchive
from sessionwatch.adapters.stores.mapper import (
    cursor_stream_id,
    digest_stream_id,
    link_stream_id,
    session_stream_id,
)
from sessionwatch.adapters.stores.port import HistoryTail, PruneCounts, SweepCounts
from sessionwatch.adapters.stores.sql import load, notices
from sessionwatch.adapters.stores.sql import prune as sql_prune
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.dialect import Cursor, Dialect
from sessionwatch.adapters.stores.sql.queue import RowQueue, StreamTail, WriteCache, continues
from sessionwatch.domain import digest, session, upstream, watch_cursor
from sessionwatch.domain.digest import DigestEvent, DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.session import SessionEvent, SessionState, SignalRecorded
from sessionwatch.domain.signals import NOTIFYING_KINDS, SignalKind
from sessionwatch.domain.upstream import LinkEvent, UpstreamLinkState
from sessionwatch.domain.watch_cursor import EXPLICIT, CursorEvent, CursorKey, CursorState, MaterialSignalSeen


class SqlWrite:
    """One exclusive write transaction over the SQL read models; caches what it read or wrote."""

    def __init__(
        self,
        cursor: Cursor,
        dialect: Dialect,
        cache: WriteCache | None = None,
        notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
    ) -> None:
        self.raw = cursor
        """The cursor for statements that touch no queued table (see `statement`)."""
        self.dialect = dialect
        self.sql = dialect.sql
        self._cache = cache
        self.wholesale = False  # rows changed beyond what `_states` and `_versions` track
        self.vacuum_due = False
        self.notifying = notifying
        """The kinds that notify watchers, the store's setting (`signals.notifying_kinds`)."""
        self._states: dict[SessionIdentity, SessionState] = {}
        self._versions: dict[UUID, int] = {}
        self._queue = RowQueue()

    @property
    def statement(self) -> Any:  # noqa: ANN401 - a DB-API cursor of either driver
        """The cursor for any statement: the rows the hot path queued are written first (ADR-0017).

        So every statement run through it, a read above all, sees everything this transaction
        appended. Only statements that touch no queued table use `raw` directly.
        """
        if self._queue or self.dialect.has_queued_events():
            self._flush()
        return self.raw

    def _flush(self) -> None:
        """Write what the hot path queued: stored events, signal rows, one row per session."""
        self.dialect.write_queued_events(self.raw)
        self._queue.write(self.raw, self.sql)

    def one(self) -> Sequence[Any]:
        """The one row the last statement returned (aggregates and counters always return one)."""
        row = self.raw.fetchone()
        if row is None:
            raise LookupError("the store returned no row where one was due")
        return tuple(row)

    def changed_wholesale(self) -> None:
        """Rows changed beyond what this transaction tracks (a prune, an import): the cache goes."""
        self._states.clear()
        self.wholesale = True

    def finish(self) -> None:
        """Before the commit: write everything still queued, then the dialect's last statements."""
        self._flush()
        self.dialect.finish(self.raw)

    def keep(self) -> None:
        """After the commit: hand the cache what this transaction wrote (or empty it)."""
        cache = self._cache
        if cache is not None:
            if self.wholesale or len(cache.states) > cache.LIMIT:
                cache.clear()
            else:
                cache.states.update(self._states)
                cache.versions.update(self._versions)
        self.dialect.keep(wholesale=self.wholesale)

    # ------------------------------------------------------------------------------- reads

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
            self.raw.execute(self.sql.SELECT_SESSION, identity)
            row = self.raw.fetchone()
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
        queued = self._queue.dedupe.get(dedupe_key)
        if queued is not None:
            return queued
        self.raw.execute(self.sql.SELECT_BY_DEDUPE, (dedupe_key,))
        row = self.raw.fetchone()
        return sql_rows.signal(row) if row is not None else None

    def next_sequence(self) -> int:
        """Allocate the next global sequence (ADR-0025)."""
        return self.dialect.next_sequence(self.raw)

    def cursor(self, key: CursorKey) -> CursorState | None:
        """One cursor as of this transaction."""
        return self.dialect.cursor(self.statement, key)

    def cursors_of(self, watcher: str, *, pending_only: bool) -> list[CursorState]:
        """The watcher's cursors as of this transaction, ordered by target."""
        return self.dialect.cursors_of(self.statement, watcher, pending_only=pending_only)

    def has_cursor_on(self, identity: SessionIdentity) -> bool:
        """Whether any registered cursor targets the identity (the human-turn gate)."""
        c = self.statement
        c.execute(self.sql.SELECT_ANY_CURSOR_ON, identity)
        return c.fetchone() is not None

    def upstream_link(self, identity: SessionIdentity) -> UpstreamLinkState | None:
        """The identity's link row (a tombstone included) as of this transaction."""
        c = self.statement
        c.execute(self.sql.SELECT_LINK, identity)
        row = c.fetchone()
        return sql_rows.link_state(row) if row is not None else None

    # ------------------------------------------------------------------------- stored events

    def _stream_version(self, stream: UUID) -> int:
        """The stream's newest version as of this transaction (0 for a new stream)."""
        version = self._versions.get(stream)
        if version is None and self._cache is not None:
            version = self._cache.versions.get(stream)
        if version is None:
            self.statement.execute(self.sql.SELECT_STREAM_VERSION, {"s": self.dialect.stream_key(stream)})
            version = int(self.one()[0])
        return version

    def store_event(self, stream: UUID, event: DomainEvent) -> tuple[int, int]:
        """Insert one stored event; return its stream version and notification id."""
        version = self._stream_version(stream) + 1
        key = self.dialect.stream_key(stream)
        notification_id = self.dialect.insert_event(self.raw, key, version, event)
        self._versions[stream] = version
        if not isinstance(event, SessionEvent):
            # cursor and store streams: no read-model row carries their version (sw_sessions does)
            self.statement.execute(self.sql.UPSERT_STREAM, (key, version))
        return version, notification_id

    # ------------------------------------------------------------------------------- appends

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
            version, notification_id = self.store_event(stream, event)
            if isinstance(event, SignalRecorded):
                self._queue.add_signal(event, notification_id)
            opened.extend(notices.apply_implied(self, identity, event))
            state = session.evolve(state, event)
        self._put_session(state, version)
        self._owe_wakes(opened)
        return opened

    def append_signals(self, signals: Sequence[SignalRecorded]) -> list[MaterialSignalSeen]:
        """Store freshly decided signals, of any sessions, and apply them; return opened notices.

        The stored events and rows are queued in the order given, so notification ids follow the
        sequences. Then each session's signals are applied to its cursors and its row: signals on
        other sessions touch none of them, so a session's signals may be taken together, and
        consecutive notifying ones by one actor naming no producer watcher apply the material
        update as one statement, which leaves every cursor exactly as one statement each.
        The opened notices come back in the order of the signals that opened them.
        """
        streams: dict[SessionIdentity, StreamTail] = {}
        insert, raw, queue = self.dialect.insert_event, self.raw, self._queue
        for signal in signals:
            identity = SessionIdentity(signal.session_key, signal.agent_id)
            tail = streams.get(identity)
            if tail is None:
                tail = streams[identity] = self._stream_tail(identity)
            tail.version += 1
            tail.signals.append(signal)
            queue.add_signal(signal, insert(raw, tail.key, tail.version, signal))
        opened: list[MaterialSignalSeen] = []
        for identity, tail in streams.items():
            opened.extend(self._apply_signals(identity, tail))
        if len(streams) > 1:
            opened.sort(key=attrgetter("sequence"))
        self._owe_wakes(opened)
        return opened

    def _stream_tail(self, identity: SessionIdentity) -> StreamTail:
        stream = session_stream_id(identity)
        self.session(identity)  # caches the stream's version with the state
        return StreamTail(stream, self.dialect.stream_key(stream), self._stream_version(stream))

    def _apply_signals(self, identity: SessionIdentity, tail: StreamTail) -> list[MaterialSignalSeen]:
        """One session's stored signals, in order, applied to its cursors and its state."""
        state = self.session(identity)
        head = state.head  # raised alone by most signals: the state is rebuilt only when needed
        opened: list[MaterialSignalSeen] = []
        run: list[SignalRecorded] = []
        for signal in tail.signals:
            notifying = signal.kind in self.notifying
            if run and not (notifying and continues(run[-1], signal)):
                opened.extend(notices.material_update(self, run))
                run = []
            if notifying:
                run.append(signal)
            else:
                opened.extend(notices.apply_implied(self, identity, signal))
            if session.raises_head_only(state, signal):
                head = max(head, signal.sequence)
            else:
                state = session.evolve(session.with_head(state, head), signal)
                head = state.head
        if run:
            opened.extend(notices.material_update(self, run))
        self._versions[tail.stream] = tail.version
        self._put_session(session.with_head(state, head), tail.version)
        return opened

    def _owe_wakes(self, opened: Sequence[MaterialSignalSeen]) -> None:
        for fact in opened:
            if fact.provenance == EXPLICIT:  # an ambient notice is queue-only
                self.dialect.owe_wake(fact.watcher, fact.target_key)

    def _put_session(self, state: SessionState, version: int) -> None:
        """Queue the session's row at its stream's `version`, or delete it when the fold drops it."""
        identity = state.identity
        self._states[identity] = state
        if state.known:
            self._queue.sessions[identity] = sql_rows.session_params(state, version)
            return
        # deleted, or reset while known only by its cursors: not listed (as the fold)
        self.statement.execute(self.sql.DELETE_SESSION, identity)
        # no row carries the stream's version now: keep it, so a compaction cannot bring it back
        key = self.dialect.stream_key(session_stream_id(identity))
        self.statement.execute(self.sql.UPSERT_STREAM, (key, version))

    def append_cursor(
        self, key: CursorKey, events: Sequence[CursorEvent], *, before: CursorState | None
    ) -> None:
        """Store a cursor's own events and write the row they leave (or delete it)."""
        stream = cursor_stream_id(key)
        state = before
        for event in events:
            self.store_event(stream, event)
            state = watch_cursor.evolve(state, event)
        if state is None:
            self.statement.execute(self.sql.DELETE_CURSOR, (key.target_key, key.target_agent_id, key.watcher))
            return
        self.statement.execute(self.sql.UPSERT_CURSOR, sql_rows.cursor_params(state))
        if events and state.pending and not state.ambient:  # a follow-up notice, or a promoted one
            self.dialect.owe_wake(key.watcher, key.target_key)

    def append_link(self, identity: SessionIdentity, events: Sequence[LinkEvent]) -> None:
        """Store the link's events and write the row they leave."""
        stream = link_stream_id(identity)
        state = self.upstream_link(identity) if events else None
        for event in events:
            self.store_event(stream, event)
            state = upstream.evolve(state, event)
        if state is not None:
            self.statement.execute(self.sql.UPSERT_LINK, sql_rows.link_params(state))

    def digest(self, identity: SessionIdentity) -> DigestState | None:
        """The main session's digest row as of this transaction."""
        c = self.statement
        c.execute(self.sql.SELECT_DIGEST, identity)
        row = c.fetchone()
        return sql_rows.digest_state(row) if row is not None else None

    def append_digest(self, identity: SessionIdentity, events: Sequence[DigestEvent]) -> None:
        """Store the digest's events and write the row they leave (or delete it)."""
        if not events:
            return
        stream = digest_stream_id(identity)
        state = self.digest(identity)
        for event in events:
            self.store_event(stream, event)
            state = digest.evolve(state, event)
        if state is None:
            self.statement.execute(self.sql.DELETE_DIGEST, identity)
        else:
            self.statement.execute(self.sql.UPSERT_DIGEST, sql_rows.digest_params(state))

    # --------------------------------------------------------------------- whole-store writes

    def sweep(self, at_ms: int) -> SweepCounts:
        """The restart sweep (see `notices.sweep`)."""
        return notices.sweep(self, at_ms)

    def prune(self, now_ms: int, policy: Retention, archive: JsonlArchive | None) -> PruneCounts:
        """The prune (see `prune.prune`)."""
        return sql_prune.prune(self, now_ms, policy, archive)

    def load_history(
        self,
        events: Iterable[tuple[UUID, int, DomainEvent]],
        tail: HistoryTail | Callable[[], HistoryTail],
    ) -> int:
        """`SignalStore.load_history` inside this transaction (see `load.load_history`)."""
        return load.load_history(self, events, tail)
