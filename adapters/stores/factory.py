"""Building the store a URL names: memory, a SQLite file (the default), or PostgreSQL.

Each store module is imported only when a URL of its kind is opened (the PostgreSQL one also needs
its driver), so importing the façade costs none of them.
"""

from __future__ import annotations

from typing import Literal

from sessionwatch.adapters.stores.port import SignalStore, StoreError
from sessionwatch.adapters.stores.urls import parse_url


def open_store(
    url: str | None = None,
    *,
    synchronous: Literal["normal", "full"] | None = None,
) -> SignalStore:
    """Build the store `url` names (None: `$SESSIONWATCH_URL`, else `./sessionwatch.db`)."""
    parsed = parse_url(url)
    if parsed.scheme == "memory":
        from sessionwatch.adapters.stores.memory import MemorySignalStore  # noqa: PLC0415

        return MemorySignalStore()
    if parsed.postgres is not None:
        if synchronous is not None:
            raise ValueError("synchronous: a SQLite setting; PostgreSQL durability is the server's")
        try:  # the optional `postgres` extra: imported only when asked for
            from sessionwatch.adapters.stores.postgres import PostgresSignalStore  # noqa: PLC0415
        except ImportError as exc:
            from sessionwatch.adapters.extras import install_hint  # noqa: PLC0415 - the error path only

            raise StoreError(
                f"PostgreSQL stores need psycopg, the postgres extra: {install_hint('postgres')} ({exc})"
            ) from exc
        return PostgresSignalStore(parsed.postgres)
    if synchronous is not None and parsed.synchronous is not None and synchronous != parsed.synchronous:
        raise ValueError("synchronous: the argument and the URL disagree")
    from sessionwatch.adapters.stores.sqlite import SqliteSignalStore  # noqa: PLC0415

    return SqliteSignalStore(parsed.path, synchronous=synchronous or parsed.synchronous or "normal")
