"""Schema migrations of the SQL stores: a store written by an older version brought up to date."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TypeAlias

from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.sql.dialect import Cursor

MigrationStep: TypeAlias = Callable[[Cursor, ModuleType], None]
"""A migration that SQL alone cannot say: it reads rows and writes them back, in the same transaction."""


def refuse_newer(found: int, sql: ModuleType) -> None:
    """Refuse a store written by a newer version of the schema `sql` rather than misread it."""
    if found > sql.SCHEMA_VERSION:
        raise StoreError(
            f"the store was written by a newer sessionwatch (schema version {found}, this one reads"
            f" up to {sql.SCHEMA_VERSION})"
        )


def migrate(cursor: Cursor, sql: ModuleType) -> None:
    """Bring a store written by an older version of the schema `sql` up to date, in the caller's transaction.

    A new store is created at the current version and needs nothing; a store written by a newer
    version is refused rather than misread.
    """
    cursor.execute(sql.SELECT_SCHEMA_VERSION)
    found = int(cursor.fetchone()[0])
    refuse_newer(found, sql)
    for version in range(found + 1, sql.SCHEMA_VERSION + 1):
        for statement in sql.MIGRATIONS[version]:
            if callable(statement):
                statement(cursor, sql)
            else:
                cursor.execute(statement)
    if found < sql.SCHEMA_VERSION:
        cursor.execute(sql.WRITE_SCHEMA_VERSION, (sql.SCHEMA_VERSION,))
