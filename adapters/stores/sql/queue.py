"""What a SQL write holds back: the rows its hot path queued, and what committed writes left behind.

Signal rows and one row per session are queued and written together (`executemany`) before any
statement that reads a queued table, and at the end (ADR-0017). The cache keeps, across the
transactions of one writer connection, the session states, stream versions and counters its own
commits left, until another connection commits (ADR-0018).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from uuid import UUID

from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql.dialect import Cursor
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SessionState, SignalRecorded
from sessionwatch.domain.signals import NOTIFYING_KINDS


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


class RowQueue:
    """The signal rows and session rows a transaction queued, and the dedupe keys they carry."""

    __slots__ = ("dedupe", "sessions", "signals")

    def __init__(self) -> None:
        self.signals: list[tuple[object, ...]] = []
        self.dedupe: dict[str, SignalRecorded] = {}  # the queued signals that carry one
        self.sessions: dict[SessionIdentity, tuple[object, ...]] = {}

    def __bool__(self) -> bool:
        return bool(self.signals or self.sessions)

    def add_signal(self, signal: SignalRecorded, notification_id: int) -> None:
        """Queue a signal's row under its stored event's notification id."""
        self.signals.append(sql_rows.signal_params(signal, notification_id))
        if signal.dedupe_key is not None:
            self.dedupe[signal.dedupe_key] = signal

    def write(self, raw: Cursor, sql: ModuleType) -> None:
        """Write every queued row (one statement per table) and forget them."""
        for statement, rows in (
            (sql.INSERT_SIGNAL, self.signals),
            (sql.UPSERT_SESSION, list(self.sessions.values())),
        ):
            if len(rows) == 1:
                raw.execute(statement, rows[0])
            elif rows:
                raw.executemany(statement, rows)
        self.signals.clear()
        self.dedupe.clear()
        self.sessions.clear()


@dataclass
class StreamTail:
    """A Session stream's newest version while `append_signals` adds to it, and what it added."""

    stream: UUID
    key: object
    version: int
    signals: list[SignalRecorded] = field(default_factory=list)


def continues(previous: SignalRecorded, signal: SignalRecorded) -> bool:
    """Whether `signal` joins the material-update run `previous` ends: same actor, no producer watchers.

    Both are notifying signals on one target with rising sequences, as `append_signals` sees them;
    and both reach ambient cursors, or neither does (a run's end, where it notifies, does not).
    """
    return (
        previous.actor_id == signal.actor_id
        and not previous.watchers
        and not signal.watchers
        and (previous.kind in NOTIFYING_KINDS) == (signal.kind in NOTIFYING_KINDS)
    )
