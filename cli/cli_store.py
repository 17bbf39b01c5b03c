"""Which store a command may open, and what a failed command leaves behind: nothing.

Shell code only. A command that needs a store (every one that reads, and those that only change
what a store holds) refuses one that does not exist: a missing or 0-byte SQLite file, a missing
PostgreSQL schema or one without sessionwatch tables. A creating command may start one. No command
turns another program's file into a store, and a creating command that fails (or answers "no")
on a file or schema it started leaves none (ADR-0033, ADR-0051).
"""

from __future__ import annotations

import argparse
import sqlite3
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from sessionwatch.adapters.stores.sqlite_reading import reading, side_files
from sessionwatch.adapters.stores.urls import PostgresUrl, parse_url
from sessionwatch.cli.cli_codes import StoreUse
from sessionwatch.cli.cli_text import CliError, naming_the_store

_SQLITE_MAGIC = b"SQLite format 3\x00"


def _events_table() -> str:
    """The stored events' table, from the schema module (loaded when a file is looked into, not before)."""
    from sessionwatch.adapters.stores.sql import sqlite_schema  # noqa: PLC0415 - it loads the models

    return sqlite_schema.EVENTS_TABLE


def _store_tables() -> frozenset[str]:
    """Tables every sessionwatch SQLite store has from its first open on."""
    return frozenset({_events_table(), "sw_meta"})


_HOW_TO_FIX = "pass --db with the store to read, or record something first"


class _Kind(Enum):
    MISSING = "missing"
    EMPTY = "empty"
    STORE = "store"
    FOREIGN = "foreign"


def _kind(path: Path) -> tuple[_Kind, str]:
    """What is at `path`, read without writing a byte (and why it is not a store, when it is not)."""
    try:
        if not path.exists():
            return _Kind.MISSING, ""
        if path.is_dir():
            return _Kind.FOREIGN, "it is a directory"
        if path.stat().st_size == 0:
            return _Kind.EMPTY, "it is an empty file"
        with path.open("rb") as file:
            header = file.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise CliError(f"--db: cannot read {path}: {exc.strerror or exc}") from None
    if header != _SQLITE_MAGIC:
        return _Kind.FOREIGN, "it is not a SQLite database"
    try:
        with reading(path) as raw:
            tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        return _Kind.FOREIGN, f"it cannot be read as a SQLite database ({exc})"
    if tables >= _store_tables():
        return _Kind.STORE, ""
    return _Kind.FOREIGN, "it is a SQLite database of another program"


@dataclass
class StoreGuard:
    """The store a creating command may start, and how to leave things as they were on failure."""

    path: Path | None = None
    was_empty: bool = False
    side_files: tuple[Path, ...] = ()
    schema: PostgresUrl | None = None
    """A PostgreSQL schema that held no store when the command began."""
    schema_existed: bool = False

    @classmethod
    def check(cls, args: argparse.Namespace, use: StoreUse) -> StoreGuard:
        """Refuse, before anything is opened, a store this command must not read, create or convert."""
        if use is StoreUse.OWN or (use is StoreUse.DEMO and args.db is None):
            return cls()
        parsed = parse_url(args.db)
        if parsed.postgres is not None and use is not StoreUse.DEMO:  # the demo says it needs a file
            return cls._check_schema(args, parsed.postgres, use)
        if parsed.scheme != "sqlite":
            return cls()
        path = Path(parsed.path)
        kind, why = _kind(path)
        if kind is _Kind.STORE:
            return cls()
        if kind is _Kind.FOREIGN:
            raise _refused(args, f"{path} is not a sessionwatch store ({why}); nothing was changed")
        if use is StoreUse.READ:
            state = "is an empty file" if kind is _Kind.EMPTY else "does not exist"
            raise _refused(args, f"no store at {path} (it {state}); {_HOW_TO_FIX}")
        if not path.parent.is_dir():
            raise _refused(
                args, f"cannot create a store at {path}: the directory {path.parent} does not exist"
            )
        existing = tuple(p for p in side_files(path) if p.exists())
        return cls(path, was_empty=kind is _Kind.EMPTY, side_files=existing)

    @classmethod
    def _check_schema(cls, args: argparse.Namespace, url: PostgresUrl, use: StoreUse) -> StoreGuard:
        """A command that needs a store refuses a schema without one; a creating one may start it."""
        from sessionwatch.adapters.stores.port import StoreError  # noqa: PLC0415 - it loads the models

        try:
            from sessionwatch.adapters.stores.postgres_probe import SchemaKind, schema_kind  # noqa: PLC0415
        except ImportError:  # no driver: opening the store says how to install it
            return cls()
        try:
            kind = schema_kind(url)
        except StoreError as exc:
            raise _refused(args, str(exc)) from None
        if kind is SchemaKind.STORE:
            return cls()
        if use is StoreUse.READ:
            raise _refused(
                args, f"no store in PostgreSQL schema {url.schema!r} ({kind.value}); {_HOW_TO_FIX}"
            )
        return cls(schema=url, schema_existed=kind is SchemaKind.EMPTY)

    def undo(self) -> None:
        """Give back the missing or 0-byte file, or the schema without a store, the failed command found.

        Only while it still holds no history: a store another process wrote to meanwhile is kept.
        """
        if self.schema is not None:
            from sessionwatch.adapters.stores.postgres_probe import drop_if_unused  # noqa: PLC0415

            drop_if_unused(self.schema, keep_schema=self.schema_existed)
        if self.path is None or not _holds_no_history(self.path):
            return
        if self.was_empty:
            self.path.write_bytes(b"")
        else:
            self.path.unlink(missing_ok=True)
        for side in side_files(self.path):
            if side not in self.side_files:
                side.unlink(missing_ok=True)


def _refused(args: argparse.Namespace, message: str) -> CliError:
    """The one error line of a store this command cannot use, naming where its URL came from."""
    return CliError(naming_the_store(message, args))


def _holds_no_history(path: Path) -> bool:
    """True when the store at `path` has no stored event (a file another process filled is kept)."""
    kind, _ = _kind(path)
    if kind in (_Kind.MISSING, _Kind.EMPTY):
        return True
    if kind is _Kind.FOREIGN:
        return False
    try:
        with reading(path) as raw:
            (count,) = raw.execute(f"SELECT count(*) FROM {_events_table()}").fetchone()
    except sqlite3.Error:
        return False
    return int(count) == 0
