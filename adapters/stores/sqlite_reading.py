"""Reading a SQLite file that is not opened as a store, and leaving its folder as it was found.

Shell code only. A read-only connection to a WAL database creates the `-wal` and `-shm` files
beside it and, being unable to checkpoint, leaves them there when it closes. So a file with neither
is opened read-write with every write refused (`query_only`): SQLite's last connection to close
then removes what reading made. A file that has them (a program has it open, or one crashed)
is opened read-only, and they stay as they were.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from urllib.parse import quote

SIDE_FILES = ("-wal", "-shm", "-journal")
"""What SQLite may keep beside a database file."""


def side_files(path: Path) -> list[Path]:
    """The files SQLite may keep beside `path`."""
    return [path.with_name(path.name + suffix) for suffix in SIDE_FILES]


@contextmanager
def reading(path: str | Path) -> Iterator[sqlite3.Connection]:
    """A connection that only reads the existing database at `path` and leaves no file beside it.

    Never creates `path`; raises `sqlite3.Error` when it cannot be opened or read.
    """
    absolute = Path(path).absolute()
    shared = any(side.exists() for side in side_files(absolute))
    mode = "ro" if shared else "rw"
    with closing(sqlite3.connect(f"file:{quote(str(absolute))}?mode={mode}", uri=True)) as raw:
        raw.execute("PRAGMA query_only = ON")
        yield raw
