"""What a front end on the standard library alone needs to read a SQLite store without opening it.

The Claude Code hook's front end (`integrations.claude_code_front`) and the command line's read path
(`cli.cli_read`) answer their plainest questions from the SQLite file with `sqlite3` before loading
the store, the models or event sourcing; each is a named SQL twin of the Python path it skips. Both
need the file a store URL names and the schema version their SQL was written for: any other version
goes to the Python path, which migrates or refuses it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA_VERSION = 6
"""The SQLite schema the twins read (`sqlite_schema.SCHEMA_VERSION`, which a test compares)."""


def sqlite_file(url: str | None) -> Path | None:
    """The SQLite file of a store URL; None for any other store (or a URL the store would refuse).

    A plain path (the hook's default: `sessionwatch.db` in the project) is a SQLite file, as
    `parse_url` says; anything else is parsed by `parse_url` itself, loaded only then.
    """
    if url is not None and url.strip() and "://" not in url:
        return Path(url)
    from sessionwatch.adapters.stores.urls import InvalidStoreUrl, parse_url  # noqa: PLC0415

    try:
        parsed = parse_url(url)
    except InvalidStoreUrl:
        return None
    return Path(parsed.path) if parsed.scheme == "sqlite" and parsed.path else None


def is_current(db: sqlite3.Connection) -> bool:
    """Whether the open file's schema is the one the twins read (`SCHEMA_VERSION`)."""
    version = db.execute("SELECT value FROM sw_meta WHERE name = 'schema_version'").fetchone()
    return version is not None and version[0] == SCHEMA_VERSION
