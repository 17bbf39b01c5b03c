"""The stores every contract suite runs on: memory, SQLite and PostgreSQL.

PostgreSQL runs against `$SESSIONWATCH_PG_URL` (default `postgresql://postgres@127.0.0.1:5432/test`),
each store in a schema of its own that is dropped afterwards. With no server answering, the
PostgreSQL cases skip and say why, unless `SESSIONWATCH_REQUIRE_PG=1` (CI): then they fail.

Stores for the suites commit with `synchronous_commit=off` (through the URL's libpq `options`), as the
SQLite properties run on tmpfs: a commit then skips its WAL flush (~3 ms here) and nothing else
changes; durability across a server crash is not what they test. The multi-process tests commit
durably. Hypothesis examples need a fresh store each, hundreds per test: creating and dropping a schema
costs ~150 ms of catalog work, so they take `reuse=True` schemas, emptied back to exactly the state
of a new store (every table empty, the counter and the notification-id serial at 0) after each
example and dropped when the session ends. Creating the schema is covered by every contract test.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import pytest

if TYPE_CHECKING:
    import psycopg

PG_URL = os.environ.get("SESSIONWATCH_PG_URL") or "postgresql://postgres@127.0.0.1:5432/test"
REQUIRE_PG = os.environ.get("SESSIONWATCH_REQUIRE_PG") == "1"
_PROBE_TIMEOUT_S = 3
FAST_COMMITS = "-c synchronous_commit=off"


@functools.cache
def postgres_problem() -> str | None:
    """Why no PostgreSQL server can be used at `PG_URL`, or None when one answers."""
    try:
        import psycopg  # noqa: PLC0415 - the optional extra: probed, not required
    except ImportError:
        return "psycopg is not installed (the postgres extra)"
    try:
        with psycopg.connect(PG_URL, connect_timeout=_PROBE_TIMEOUT_S) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"no PostgreSQL server answers at {PG_URL}: {type(exc).__name__}: {' '.join(str(exc).split())}"
    return None


def _skip_reason() -> str:
    return f"{postgres_problem()} (set SESSIONWATCH_PG_URL; SESSIONWATCH_REQUIRE_PG=1 fails instead)"


needs_postgres = pytest.mark.skipif(postgres_problem() is not None and not REQUIRE_PG, reason=_skip_reason())
"""Skip a test without a PostgreSQL server, unless one is required."""

STORES = (
    pytest.param("memory", id="memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=needs_postgres),
)
"""`store_kind` values of the contract suites."""

FILE_STORES = STORES[1:]
"""The stores that outlive a `SessionWatch`: reopening one finds its history."""


def require_postgres() -> None:
    """Fail (not skip) a test that reached PostgreSQL without a server: only `REQUIRE_PG` gets here."""
    problem = postgres_problem()
    if problem is not None:
        pytest.fail(f"SESSIONWATCH_REQUIRE_PG=1 but {problem}")


def with_query(url: str, **params: str) -> str:
    """`url` with query parameters added (or replaced; libpq `options` are appended to)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    if "options" in params and query.get("options"):
        params = {**params, "options": f"{query['options']} {params['options']}"}
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


@functools.cache
def admin() -> psycopg.Connection[tuple[object, ...]]:
    """One autocommit connection for the tests' own DDL (drops and resets)."""
    import psycopg  # noqa: PLC0415

    conn = psycopg.connect(PG_URL, autocommit=True, connect_timeout=_PROBE_TIMEOUT_S)
    conn.execute("SET lock_timeout = '20s'")
    return conn


def drop_schema(schema: str) -> None:
    """Drop a test schema and everything in it."""
    admin().execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def new_schema(prefix: str = "sw_test") -> str:
    """A schema name no other test uses."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


@contextmanager
def postgres_url(prefix: str = "sw_test", *, durable: bool = False) -> Iterator[str]:
    """The URL of a store in a new schema of its own, dropped afterwards (module docstring)."""
    require_postgres()
    schema = new_schema(prefix)
    try:
        yield (
            with_query(PG_URL, schema=schema)
            if durable
            else with_query(PG_URL, schema=schema, options=FAST_COMMITS)
        )
    finally:
        drop_schema(schema)


_SPARE_SCHEMAS: list[str] = []
_REUSED_SCHEMAS: set[str] = set()
# DELETE, not TRUNCATE: TRUNCATE rewrites every relation file and costs as much as a new schema.
_RESET = (
    *(
        f"DELETE FROM {table}"
        for table in (
            "stored_events",
            "sw_streams",
            "sw_sessions",
            "sw_signals",
            "sw_cursors",
            "sw_upstream_links",
            "sw_digests",
        )
    ),
    "ALTER SEQUENCE stored_events_notification_id_seq RESTART",
    "DELETE FROM sw_meta WHERE name NOT IN ('sequence', 'schema_version')",
    "UPDATE sw_meta SET value = 0 WHERE name = 'sequence'",
)


def reset_schema(schema: str) -> None:
    """Empty a store back to the state of a new one."""
    conn = admin()
    with conn.transaction():
        conn.execute(f"SET LOCAL search_path TO {schema}")
        for statement in _RESET:
            conn.execute(statement)


@contextmanager
def reused_postgres_url() -> Iterator[str]:
    """The URL of an empty store in a schema reused across Hypothesis examples (module docstring)."""
    require_postgres()
    schema = _SPARE_SCHEMAS.pop() if _SPARE_SCHEMAS else new_schema("sw_reused")
    _REUSED_SCHEMAS.add(schema)
    try:
        yield with_query(PG_URL, schema=schema, options=FAST_COMMITS)
    finally:
        try:
            reset_schema(schema)
        except Exception:
            _REUSED_SCHEMAS.discard(schema)
            drop_schema(schema)
            raise
        _SPARE_SCHEMAS.append(schema)


def drop_reused_schemas() -> None:
    """Drop every schema `reused_postgres_url` made (at the end of the session)."""
    for schema in sorted(_REUSED_SCHEMAS):
        drop_schema(schema)
    _REUSED_SCHEMAS.clear()
    _SPARE_SCHEMAS.clear()


@contextmanager
def fresh_store_url(
    kind: str, directory: Path, name: str = "state.db", *, reuse: bool = False
) -> Iterator[str]:
    """The URL of a new, empty store of `kind` (a SQLite file in `directory`, a PostgreSQL schema).

    `reuse=True` (Hypothesis examples) takes an emptied PostgreSQL schema instead of a new one.
    """
    if kind == "memory":
        yield "memory://"
    elif kind == "sqlite":
        yield f"sqlite:///{directory / name}"
    elif kind == "postgres":
        with reused_postgres_url() if reuse else postgres_url() as url:
            yield url
    else:
        raise ValueError(f"unknown store kind {kind!r}")
