"""Whether a PostgreSQL schema holds a sessionwatch store, and taking back a store a failed command began.

Shell code for the command line, which never creates a store where it only reads, and leaves no
schema behind when a command that may create one fails (ADR-0051). The probe only reads the
catalog; opening a `PostgresSignalStore` is what creates a schema.
"""

from __future__ import annotations

import re
from contextlib import closing
from enum import Enum
from typing import Final

import psycopg

from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.postgres import _wrap
from sessionwatch.adapters.stores.postgres_connections import (
    Connection,
    answer_bound,
    connect,
    connect_kwargs,
    redacted,
)
from sessionwatch.adapters.stores.sql import postgres_schema as sql
from sessionwatch.adapters.stores.urls import InvalidStoreUrl, PostgresUrl

_STORE_TABLES: Final = [sql.EVENTS_TABLE, "sw_meta"]
"""Tables every sessionwatch schema has from its first open on."""
_TABLES: Final = re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", " ".join(sql.SCHEMA))
_VIEWS: Final = re.findall(r"CREATE OR REPLACE VIEW (\w+)", " ".join(sql.SCHEMA))
_PRESENCE: Final = (
    "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = %s),"
    " (SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename = ANY(%s))"
)


class SchemaKind(Enum):
    """What a PostgreSQL URL's schema holds."""

    MISSING = "it does not exist"
    EMPTY = "it holds no sessionwatch tables"
    STORE = "a sessionwatch store"


def schema_kind(url: PostgresUrl) -> SchemaKind:
    """What the schema of `url` holds, read from the catalog; `StoreError` when the server cannot say.

    Its errors are those opening the store would raise, the password never in them.
    """
    try:
        settings = connect_kwargs(url)
    except psycopg.Error as exc:  # libpq cannot parse the URL; its message may quote the password
        raise InvalidStoreUrl(f"url: {redacted(str(exc), url.conninfo).strip()}") from None
    try:
        with closing(connect(url.conninfo, settings, answer_bound(url))) as conn:
            return _kind(conn, url.schema)
    except psycopg.Error as exc:
        raise StoreError(f"cannot open PostgreSQL schema {url.schema!r}: {_wrap(exc)}") from exc


def drop_if_unused(url: PostgresUrl, *, keep_schema: bool) -> bool:
    """Drop the store in the schema of `url` if it holds no history, and the schema unless `keep_schema`.

    Under the lock a store takes to create its schema, so no store is being created meanwhile; a
    store another process wrote to, or a schema that then holds anything else, is kept. True when
    dropped.
    """
    try:
        opened = connect(url.conninfo, connect_kwargs(url), answer_bound(url))
        with closing(opened) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"sessionwatch.schema:{url.schema}",))
            if _kind(conn, url.schema) is not SchemaKind.STORE:
                return False
            row = conn.execute(sql.SELECT_HISTORY_PRESENT).fetchone()
            if row is None or row[0] != 0 or row[1]:
                return False
            # RESTRICT throughout: anything else depending on the store, or in the schema, fails the drop.
            conn.execute(f"DROP VIEW IF EXISTS {', '.join(_VIEWS)}")
            conn.execute(f"DROP TABLE IF EXISTS {', '.join(_TABLES)}")
            if not keep_schema:
                conn.execute(f"DROP SCHEMA {url.schema}")
    except psycopg.Error:
        return False
    return True


def _kind(conn: Connection, schema: str) -> SchemaKind:
    row = conn.execute(_PRESENCE, (schema, schema, _STORE_TABLES)).fetchone()
    if row is None or not row[0]:
        return SchemaKind.MISSING
    return SchemaKind.STORE if row[1] == len(_STORE_TABLES) else SchemaKind.EMPTY
