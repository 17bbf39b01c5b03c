"""eventsourcing's own recorder test cases on every recorder the stores expose (ADR-0021).

The cases are the library's (`eventsourcing.tests.persistence`), run unchanged: each class here only
says how to build the recorder. Memory and SQLite run on `store.recorder` of a new store, on the
schema that store created; PostgreSQL runs eventsourcing's own `PostgresApplicationRecorder` on the
events table of a new store's schema (that store has no recorder object of its own).

Left out, with the reason next to each class: the subscription case on SQLite, whose recorder
offers no subscriptions (eventsourcing's SQLite recorder does not either).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import AggregateRecorder, ApplicationRecorder, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.tests import persistence as library
from psycopg.conninfo import conninfo_to_dict
from stores import PG_URL, STORES, admin, fresh_store_url, needs_postgres, postgres_url

import sessionwatch
from sessionwatch import Actor
from sessionwatch.adapters.stores.memory import MemoryEventRecorder, MemorySignalStore
from sessionwatch.adapters.stores.postgres import PostgresSignalStore
from sessionwatch.adapters.stores.sql import postgres_schema
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.adapters.stores.sqlite_recorder import SqliteEventRecorder
from sessionwatch.adapters.stores.urls import parse_url
from sessionwatch.testing import FakeClock


class _AsAggregateRecorder(AggregateRecorder):
    """An application recorder used as a plain aggregate recorder: `insert_events` returns None.

    The library's aggregate case asserts the None that a plain aggregate recorder returns, where an
    application recorder returns the new notification ids (the application cases check those).
    Everything else goes to the recorder unchanged.
    """

    def __init__(self, recorder: ApplicationRecorder) -> None:
        self.recorder = recorder

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        self.recorder.insert_events(stored_events, **kwargs)

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        return self.recorder.select_events(originator_id, gt=gt, lte=lte, desc=desc, limit=limit)


@contextmanager
def _eventsourcing_recorder_on(schema: str) -> Iterator[PostgresApplicationRecorder]:
    """eventsourcing's PostgreSQL recorder on the events table of the store schema `schema`.

    Its `create_table` finds the store's table and index (same names, `IF NOT EXISTS`) and adds the
    composite type and insert function it writes with; the table itself is the store's.
    """
    given = conninfo_to_dict(PG_URL)
    datastore = PostgresDatastore(
        dbname=str(given.get("dbname", "")),
        host=str(given.get("host", "")),
        port=str(given.get("port", "5432")),
        user=str(given.get("user", "")),
        password=str(given.get("password", "")),
        schema=schema,
        pool_size=4,
        max_overflow=8,  # the concurrent cases run 10 writers and 2 readers
    )
    try:
        table = f"{schema}.{postgres_schema.EVENTS_TABLE}"
        found = admin().execute(
            "SELECT to_regclass(%s), to_regclass(%s)", (table, f"{table}_notification_id_idx")
        )
        assert found.fetchone() == (table, f"{table}_notification_id_idx"), "the store made the table"
        recorder = PostgresApplicationRecorder(datastore, events_table_name=postgres_schema.EVENTS_TABLE)
        recorder.create_table()
        yield recorder
    finally:
        datastore.close()


# ------------------------------------------------------------------ how each recorder is built


class _MemoryRecorder(library.RecorderTestCase):
    """`store.recorder` of a new memory store."""

    def store_recorder(self) -> MemoryEventRecorder:
        return MemorySignalStore().recorder


class _SqliteRecorder(library.RecorderTestCase):
    """`store.recorder` of a new SQLite store, in a directory of its own that is removed afterwards."""

    def store_recorder(self) -> SqliteEventRecorder:
        directory = tempfile.TemporaryDirectory(prefix="sw_recorder_")
        self.addCleanup(directory.cleanup)
        store = SqliteSignalStore(Path(directory.name) / "state.db")
        self.addCleanup(store.close)
        return store.recorder


class _PostgresRecorder(library.RecorderTestCase):
    """eventsourcing's PostgreSQL recorder on a new store's schema, dropped afterwards."""

    def store_recorder(self) -> PostgresApplicationRecorder:
        url = parse_url(self.enterContext(postgres_url("sw_recorder"))).postgres
        assert url is not None
        PostgresSignalStore(url).close()  # the store creates its schema, as `sessionwatch.open` does
        return self.enterContext(_eventsourcing_recorder_on(url.schema))


# ------------------------------------------------------------------ the library's cases, per recorder


class TestMemoryRecorderAsAggregateRecorder(_MemoryRecorder, library.AggregateRecorderTestCase):
    def create_recorder(self) -> AggregateRecorder:
        return _AsAggregateRecorder(self.store_recorder())


class TestMemoryRecorderAsApplicationRecorder(
    _MemoryRecorder, library.ApplicationRecorderTestCase[ApplicationRecorder]
):
    def create_recorder(self) -> ApplicationRecorder:
        return self.store_recorder()

    def test_insert_subscribe(self) -> None:
        self.optional_test_insert_subscribe()


class TestMemoryRecorderNotificationIdsDoNotInterleave(
    _MemoryRecorder, library.NonInterleavingNotificationIDsBaseCase
):
    def create_recorder(self) -> ApplicationRecorder:
        return self.store_recorder()


class TestSqliteRecorderAsAggregateRecorder(_SqliteRecorder, library.AggregateRecorderTestCase):
    def create_recorder(self) -> AggregateRecorder:
        return _AsAggregateRecorder(self.store_recorder())


class TestSqliteRecorderAsApplicationRecorder(
    _SqliteRecorder, library.ApplicationRecorderTestCase[ApplicationRecorder]
):
    # Left out: `optional_test_insert_subscribe` (the library's opt-in case, which the memory and
    # PostgreSQL classes run as `test_insert_subscribe`). The SQLite recorder offers no subscriptions:
    # `subscribe` raises NotImplementedError, as in eventsourcing's own SQLite recorder, and the
    # store wakes watchers by its own means, never through the recorder.

    def create_recorder(self) -> ApplicationRecorder:
        return self.store_recorder()


class TestSqliteRecorderNotificationIdsDoNotInterleave(
    _SqliteRecorder, library.NonInterleavingNotificationIDsBaseCase
):
    def create_recorder(self) -> ApplicationRecorder:
        return self.store_recorder()


@needs_postgres
class TestPostgresRecorderAsAggregateRecorder(_PostgresRecorder, library.AggregateRecorderTestCase):
    def create_recorder(self) -> AggregateRecorder:
        return _AsAggregateRecorder(self.store_recorder())


@needs_postgres
class TestPostgresRecorderAsApplicationRecorder(
    _PostgresRecorder, library.ApplicationRecorderTestCase[ApplicationRecorder]
):
    def create_recorder(self) -> ApplicationRecorder:
        return self.store_recorder()

    def test_insert_subscribe(self) -> None:
        self.optional_test_insert_subscribe()


@needs_postgres
class TestPostgresRecorderNotificationIdsDoNotInterleave(
    _PostgresRecorder, library.NonInterleavingNotificationIDsBaseCase
):
    def create_recorder(self) -> ApplicationRecorder:
        return self.store_recorder()


# ------------------------------------------------------------- the recorder beside the store's own writes


@pytest.fixture(params=STORES)
def watch_and_recorder(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[sessionwatch.SessionWatch, ApplicationRecorder]]:
    """A `SessionWatch` on a new store of each kind, and the recorder over its events table."""
    with (
        fresh_store_url(str(request.param), tmp_path) as url,
        sessionwatch.open(url, clock=FakeClock()) as watch,
    ):
        store = watch.store
        if isinstance(store, PostgresSignalStore):
            with _eventsourcing_recorder_on(store.schema) as recorder:
                yield watch, recorder
        else:
            assert isinstance(store, MemorySignalStore | SqliteSignalStore)
            yield watch, store.recorder


def _goal(watch: sessionwatch.SessionWatch) -> None:
    watch.record("agent:main:worker", kind="goal_changed", actor=Actor.human(), summary="goal updated")


def test_the_recorder_reads_the_events_the_store_wrote_itself(
    watch_and_recorder: tuple[sessionwatch.SessionWatch, ApplicationRecorder],
) -> None:
    watch, recorder = watch_and_recorder
    watch.watch("agent:main:coordinator", "agent:main:worker")
    _goal(watch)
    notifications = recorder.select_notifications(None, 10)
    assert [n.topic for n in notifications] == ["cursor.watch_registered.v2", "session.signal_recorded.v1"]
    assert recorder.max_notification_id() == notifications[-1].id
    for notification in notifications:
        (stored,) = recorder.select_events(
            notification.originator_id, lte=notification.originator_version, desc=True, limit=1
        )
        assert (stored.topic, stored.state) == (notification.topic, notification.state)


def test_the_recorder_and_the_stores_own_writes_never_share_a_notification_id(
    watch_and_recorder: tuple[sessionwatch.SessionWatch, ApplicationRecorder],
) -> None:
    watch, recorder = watch_and_recorder
    _goal(
        watch
    )  # the store's write remembers the newest id it gave (SQLite: until another connection writes)
    before = recorder.max_notification_id()
    assert before is not None
    theirs = recorder.insert_events([StoredEvent(uuid4(), 1, "foreign.topic", b"{}")])
    assert theirs == [before + 1]
    _goal(watch)
    assert [n.id for n in recorder.select_notifications(None, 10)] == [before, before + 1, before + 2]


def test_the_sqlite_recorder_offers_no_subscriptions(tmp_path: Path) -> None:
    store = SqliteSignalStore(tmp_path / "state.db")
    try:
        with pytest.raises(NotImplementedError, match="does not support subscriptions"):
            store.recorder.subscribe(gt=None)
    finally:
        store.close()


def test_closing_the_sqlite_store_lets_a_recorder_read_in_flight_finish_on_its_connection(
    tmp_path: Path,
) -> None:
    # The library's concurrent case leaves its readers running past its end, into the store's close.
    store = SqliteSignalStore(tmp_path / "state.db")
    datastore = store.recorder.datastore
    with datastore.get_connection(commit=False) as connection:
        store.close()
        cursor = connection.cursor()
        cursor.execute("SELECT COUNT(*) FROM stored_events")
        assert cursor.fetchone()[0] == 0
    assert connection.closed
    assert datastore.pool.num_in_use == 0
