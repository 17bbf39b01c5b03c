"""The prune archive: every pruned signal's stored event, one JSON line each.

Lines are appended and fsynced before the prune's transaction commits, so a signal is never deleted
without being archived; a prune that then fails to commit may archive a signal twice (at least once).
Each line has the stored event's notification `id`, `stream`, `version`, stored `type` and `data`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from uuid import UUID

import orjson

from sessionwatch.adapters.stores.mapper import decode
from sessionwatch.domain.session import SignalRecorded


class JsonlArchive:
    """Appends stored events to a JSON Lines file readable by its owner only."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def append(self, events: Iterable[tuple[int, UUID, int, str, bytes]]) -> int:
        """Append `(id, stream, version, type, body)` rows; return how many were written."""
        lines = [
            b'{"id":%d,"stream":"%s","version":%d,"type":%s,"data":%s}\n'
            % (nid, str(stream).encode(), version, orjson.dumps(topic), body)
            for nid, stream, version, topic, body in events
        ]
        if not lines:
            return 0
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b"".join(lines))
            os.fsync(fd)
        finally:
            os.close(fd)
        return len(lines)


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
