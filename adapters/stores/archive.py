"""The prune archive: every pruned signal's stored event, one JSON line each.

Lines are appended and fsynced before the prune's transaction commits, so a signal is never deleted
without being archived; a prune that then fails to commit may archive a signal twice (at least once).
The rows are written as they come, a chunk at a time, so memory does not grow with what a prune
removes; an append that fails part way takes the file back to what it held before.
Each line has the stored event's notification `id`, `stream`, `version`, stored `type` and `data`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Final
from uuid import UUID

import orjson

from sessionwatch.adapters.stores.mapper import decode
from sessionwatch.domain.session import SignalRecorded

CHUNK: Final = 1000
"""Rows formatted and written at a time."""


class JsonlArchive:
    """Appends stored events to a JSON Lines file readable by its owner only."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def append(self, events: Iterable[tuple[int, UUID, int, str, bytes]]) -> int:
        """Append `(id, stream, version, type, body)` rows as they come, then fsync; return how many.

        `events` is consumed lazily, `CHUNK` rows at a time. When reading a row or writing fails, the
        file is cut back to its size before this append (unless another writer appended meanwhile).
        """
        rows = iter(events)
        chunk = list(islice(rows, CHUNK))
        if not chunk:
            return 0
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        start = end = os.fstat(fd).st_size
        written = 0
        try:
            while chunk:
                end += _write_all(fd, b"".join(_line(*row) for row in chunk))
                written += len(chunk)
                chunk = list(islice(rows, CHUNK))
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):  # the failure itself is what the caller must see
                if os.fstat(fd).st_size == end:
                    os.ftruncate(fd, start)
            raise
        finally:
            os.close(fd)
        return written


def _line(nid: int, stream: UUID, version: int, topic: str, body: bytes) -> bytes:
    return b'{"id":%d,"stream":"%s","version":%d,"type":%s,"data":%s}\n' % (
        nid,
        str(stream).encode(),
        version,
        orjson.dumps(topic),
        body,
    )


def _write_all(fd: int, data: bytes) -> int:
    """Write all of `data` (a regular file may take it in parts); return its length."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return len(data)


def archived_signals(path: str | Path) -> Iterator[SignalRecorded]:
    """The signals an archive holds, decoded (a signal archived twice comes twice).

    Raises `OSError` for a file it cannot read and `ValueError` (or `LookupError` for an unknown
    stored name) for one that is not an archive.
    """
    for entry in read_archive(path):
        if not isinstance(entry, dict):
            raise ValueError(f"an archive line is a JSON object, not {type(entry).__name__}")  # noqa: TRY004 - bad content, not a caller error
        topic, data = entry.get("type"), entry.get("data")
        if isinstance(topic, str) and topic.startswith("session.signal_recorded."):
            event = decode(topic, orjson.dumps(data))
            if isinstance(event, SignalRecorded):
                yield event


def read_archive(path: str | Path) -> list[dict[str, object]]:
    """Every line of an archive, parsed (for audits and tests)."""
    with Path(path).open("rb") as handle:
        return [orjson.loads(line) for line in handle if line.strip()]
