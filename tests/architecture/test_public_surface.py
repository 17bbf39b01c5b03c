"""The names `sessionwatch`, `sessionwatch.aio` and `sessionwatch.testing` export are a contract.

A change shows as a diff against `public_surface.txt`; an intended one is recorded by
`python tests/public_surface.py --write` (and, for a rename, an ADR).
"""

from __future__ import annotations

from public_surface import SNAPSHOT, render


def test_the_public_surface_is_the_checked_in_one() -> None:
    assert render() == SNAPSHOT.read_text(encoding="utf-8")
