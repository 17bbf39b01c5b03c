"""Crafting exported histories for the import tests: a trailer recomputed by hand, a version 1 copy.

The digest here is computed with `hashlib` directly over the lines' bytes, not with the code under
test, so a test that seals a changed history checks the import's own computation against it.
"""

from __future__ import annotations

import hashlib

import orjson


def seal(lines: list[str]) -> list[str]:
    """Header and event lines (with or without their newlines) followed by a trailer that matches them."""
    body = [line.rstrip("\n") + "\n" for line in lines]
    digest = hashlib.sha256("".join(body).encode()).hexdigest()
    trailer = orjson.dumps(
        {"events": len(body) - 1, "sha256": digest, "trailer": "sessionwatch.history"},
        option=orjson.OPT_SORT_KEYS,
    )
    return [*body, trailer.decode() + "\n"]


def unsealed(lines: list[str]) -> list[str]:
    """An exported history's lines without its trailer (the last line)."""
    assert '"trailer":"sessionwatch.history"' in lines[-1], "the last line is the trailer"
    return lines[:-1]


def as_version_one(lines: list[str]) -> list[str]:
    """An exported history as sessionwatch 0.1.0 wrote it: header version 1, no trailer."""
    header = {**orjson.loads(lines[0]), "version": 1}
    first = orjson.dumps(header, option=orjson.OPT_SORT_KEYS).decode() + "\n"
    return [first, *unsealed(lines)[1:]]
