"""Which SQLite file a command may open, and what a failed command leaves behind: nothing.

Shell code only. A reading command needs an existing sessionwatch store; a creating command may
start one in a new or 0-byte file. No command turns another program's file into a store, and a
creating command that fails (or answers "no") on a file it created or filled leaves it as it was.
"""

from __future__ import annotations

import argparse
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from urllib.parse import quote

from sessionwatch.adapters.entry.cli_text import CliError
from sessionwatch.adapters.stores.sql import sqlite_schema
from sessionwatch.adapters.stores.urls import parse_url

_SQLITE_MAGIC = b"SQLite format 3\x00"
_STORE_TABLES = frozenset({sqlite_schema.EVENTS_TABLE, "sw_meta"})
"""Tables every sessionwatch SQLite store has from its first open on."""
_SIDE_FILES = ("-wal", "-shm", "-journal")


class StoreUse(Enum):
    """How a command uses the store `--db` names."""

    DEMO = "demo"  # the demo's own file (which it resets), else like CREATE for the --db it is given
    READ = "read"  # an existing sessionwatch store only
    CREATE = "create"  # an existing store, or a new one in a missing or 0-byte file
    OWN = "own"  # the command checks its store itself (the Claude Code hook must never fail)


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
        with closing(_read_only(path)) as raw:
            tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        return _Kind.FOREIGN, f"it cannot be read as a SQLite database ({exc})"
    if tables >= _STORE_TABLES:
        return _Kind.STORE, ""
    return _Kind.FOREIGN, "it is a SQLite database of another program"


@dataclass
class StoreGuard:
    """The SQLite file a creating command may start, and how to leave it as it was on failure."""

    path: Path | None = None
    was_empty: bool = False
    side_files: tuple[Path, ...] = ()

    @classmethod
    def check(cls, args: argparse.Namespace, use: StoreUse) -> StoreGuard:
        """Refuse, before anything is opened, a file this command must not read or turn into a store."""
        if use is StoreUse.OWN or (use is StoreUse.DEMO and args.db is None):
            return cls()
        parsed = parse_url(args.db)
        if parsed.scheme != "sqlite":
            return cls()
        path = Path(parsed.path)
        kind, why = _kind(path)
        if kind is _Kind.STORE:
            return cls()
        if kind is _Kind.FOREIGN:
            raise CliError(f"--db: {path} is not a sessionwatch store ({why}); nothing was changed")
        if use is StoreUse.READ:
            state = "is an empty file" if kind is _Kind.EMPTY else "does not exist"
            raise CliError(
                f"--db: no store at {path} (it {state}); pass --db with the store to read, "
                "or record something first"
            )
        existing = tuple(p for p in _side_files(path) if p.exists())
        return cls(path, was_empty=kind is _Kind.EMPTY, side_files=existing)

    def undo(self) -> None:
        """Give back the missing or 0-byte file the failed command found, if it still holds no history."""
        if self.path is None or not _holds_no_history(self.path):
            return
        if self.was_empty:
            self.path.write_bytes(b"")
        else:
            self.path.unlink(missing_ok=True)
        for side in _side_files(self.path):
            if side not in self.side_files:
                side.unlink(missing_ok=True)


def _side_files(path: Path) -> list[Path]:
    return [path.with_name(path.name + suffix) for suffix in _SIDE_FILES]


def _holds_no_history(path: Path) -> bool:
    """True when the store at `path` has no stored event (a file another process filled is kept)."""
    kind, _ = _kind(path)
    if kind in (_Kind.MISSING, _Kind.EMPTY):
        return True
    if kind is _Kind.FOREIGN:
        return False
    try:
        with closing(_read_only(path)) as raw:
            (count,) = raw.execute(f"SELECT count(*) FROM {sqlite_schema.EVENTS_TABLE}").fetchone()
    except sqlite3.Error:
        return False
    return int(count) == 0


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro", uri=True)
