"""Building the store a URL names: memory, a SQLite file (the default), or PostgreSQL.

The PostgreSQL store and its driver are imported only when a `postgresql://` URL asks for them.
"""

from __future__ import annotations

from typing import Literal

from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.adapters.stores.port import SignalStore, StoreError
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.adapters.stores.urls import parse_url


def open_store(
    url: str | None = None,
    *,
    synchronous: Literal["normal", "full"] | None = None,
) -> SignalStore:
    """Build the store `url` names (None: `$SESSIONWATCH_URL`, else `./sessionwatch.db`)."""
    parsed = parse_url(url)
    if parsed.scheme == "memory":
        return MemorySignalStore()
    if parsed.postgres is not None:
        if synchronous is not None:
            raise ValueError("synchronous: a SQLite setting; PostgreSQL durability is the server's")
        try:  # the optional `sessionwatch[postgres]` extra: imported only when asked for
            from sessionwatch.adapters.stores.postgres import PostgresSignalStore  # noqa: PLC0415
        except ImportError as exc:
            raise StoreError(
                f"PostgreSQL stores need psycopg: pip install 'sessionwatch[postgres]' ({exc})"
            ) from exc
        return PostgresSignalStore(parsed.postgres)
    if synchronous is not None and parsed.synchronous is not None and synchronous != parsed.synchronous:
        raise ValueError("synchronous: the argument and the URL disagree")
    return SqliteSignalStore(parsed.path, synchronous=synchronous or parsed.synchronous or "normal")
