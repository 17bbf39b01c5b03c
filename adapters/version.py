"""The installed distribution's version, found without loading `importlib.metadata` when it can be.

`importlib.metadata` costs tens of milliseconds to import (it brings `email`, `zipfile`, `csv`...),
more than the rest of `sessionwatch --version`. `installed_version` is its named twin for the one
question asked here: it walks `sys.path` in order as `importlib.metadata` does, takes the first
`sessionwatch` metadata directory found (in one directory, the first listed), and reads its
`Version:` header. Whenever the answer is not that plain (a zip file on the path, no header, an
unreadable file), it asks `importlib.metadata` itself. A contract test holds the two to the same
answer (tests/unit/test_version.py).
"""

from __future__ import annotations

import os
import sys

DISTRIBUTION = "sessionwatch"
_SUFFIXES = (".dist-info", ".egg-info")
_UNKNOWN = "unknown"


def _is_ours(entry: str) -> bool:
    """Whether a directory entry is this distribution's metadata (`sessionwatch-0.1.0.dist-info`)."""
    stem, dot, suffix = entry.rpartition(".")
    if not dot or f".{suffix.lower()}" not in _SUFFIXES:
        return False
    name = stem.partition("-")[0]
    return name.lower().replace(".", "_").replace("-", "_") == DISTRIBUTION


# `os.path`, not `pathlib`: importing `pathlib` costs more than the rest of `--version`.


def _metadata_file(folder: str) -> str:
    name = "PKG-INFO" if folder.lower().endswith(".egg-info") else "METADATA"
    return os.path.join(folder, name)  # noqa: PTH118


def _header_version(path: str) -> str | None:
    """The `Version:` header of a metadata file (the headers end at the first blank line)."""
    try:
        with open(path, encoding="utf-8") as file:  # noqa: PTH123
            for line in file:
                if not line.strip():
                    return None
                name, colon, value = line.partition(":")
                if colon and name.strip().lower() == "version":
                    return value.strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _first_metadata() -> str | None:
    """The first `sessionwatch` metadata directory on `sys.path`, or None (then the long way decides)."""
    for entry in sys.path:
        folder = entry or "."
        try:
            ours = [name for name in os.listdir(folder) if _is_ours(name)]  # noqa: PTH208
        except OSError:  # not a directory (a zip file, a missing entry): only the long way reads a zip
            if os.path.isfile(folder):  # noqa: PTH113
                return None
            continue
        if ours:  # within one directory, the first listed (a .dist-info or an .egg-info alike)
            return os.path.join(folder, ours[0])  # noqa: PTH118
    return None


def metadata_version() -> str:
    """The version `importlib.metadata` gives ("unknown" in a source tree that was never installed)."""
    from importlib import metadata  # noqa: PLC0415 - the long way, only when the short one cannot tell

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _UNKNOWN


def installed_version() -> str:
    """The installed `sessionwatch` version, as `importlib.metadata.version` gives it."""
    folder = _first_metadata()
    found = None if folder is None else _header_version(_metadata_file(folder))
    return found if found is not None else metadata_version()
