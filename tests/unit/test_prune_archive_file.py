"""The prune archive file: rows written as they come, and an append that fails leaves the file as it was."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionwatch.adapters.stores.archive import CHUNK, JsonlArchive, read_archive

STREAM = uuid.UUID("7ac7cf4b-77b2-409f-8b80-214ca1d9851d")


def row(n: int) -> tuple[int, uuid.UUID, int, str, bytes]:
    return n, STREAM, n, "session.signal_recorded.v1", b'{"sequence":%d}' % n


def test_rows_are_written_while_later_ones_are_still_being_read(tmp_path: Path) -> None:
    path = tmp_path / "pruned.jsonl"
    seen_on_disk: list[int] = []

    def rows() -> Iterator[tuple[int, uuid.UUID, int, str, bytes]]:
        for n in range(1, 3 * CHUNK + 1):
            if n % CHUNK == 1:  # the first row of each chunk: what did the archive hold by then?
                seen_on_disk.append(len(read_archive(path)) if path.exists() else 0)
            yield row(n)

    assert JsonlArchive(path).append(rows()) == 3 * CHUNK
    assert seen_on_disk == [0, CHUNK, 2 * CHUNK], "each chunk was on disk before the next was read"
    assert [entry["id"] for entry in read_archive(path)] == list(range(1, 3 * CHUNK + 1))


def test_an_append_that_fails_part_way_leaves_the_archive_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "pruned.jsonl"
    archive = JsonlArchive(path)
    assert archive.append([row(1), row(2)]) == 2
    before = path.read_bytes()

    def failing() -> Iterator[tuple[int, uuid.UUID, int, str, bytes]]:
        for n in range(3, 3 + 2 * CHUNK):
            yield row(n)
        raise RuntimeError("the store's read failed")

    with pytest.raises(RuntimeError, match="the store's read failed"):
        archive.append(failing())
    assert path.read_bytes() == before
