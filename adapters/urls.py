"""Store URLs (SPEC §13, §15.1): `memory://`, `sqlite:///rel.db`, `sqlite:////abs.db?synchronous=full`.

No URL means `$SESSIONWATCH_URL`, else the SQLite file `./sessionwatch.db`. A plain path with no
scheme is a SQLite file too, for the CLI's convenience.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

DEFAULT_PATH = "sessionwatch.db"
ENV_URL = "SESSIONWATCH_URL"


class InvalidStoreUrl(ValueError):  # noqa: N818 - names the condition
    """The store URL cannot be understood; the message names the problem."""


@dataclass(frozen=True)
class StoreUrl:
    """A parsed store URL."""

    scheme: Literal["memory", "sqlite"]
    path: str = ""
    synchronous: Literal["normal", "full"] | None = None


def default_url() -> str:
    """`$SESSIONWATCH_URL`, else the SQLite file `./sessionwatch.db`."""
    return os.environ.get(ENV_URL) or f"sqlite:///{DEFAULT_PATH}"


def parse_url(url: str | None) -> StoreUrl:
    """Parse a store URL, raising `InvalidStoreUrl` with the reason."""
    text = default_url() if url is None else url
    if not isinstance(text, str) or not text.strip():
        raise InvalidStoreUrl("url: must be a non-empty string")
    if "://" not in text:
        return StoreUrl("sqlite", text)
    parts = urlsplit(text)
    if parts.scheme == "memory":
        return StoreUrl("memory")
    if parts.scheme == "sqlite":
        return _sqlite_url(parts.netloc, parts.path, parts.query)
    if parts.scheme in ("postgresql", "postgres"):
        raise InvalidStoreUrl("url: PostgreSQL stores are not supported by this version")
    raise InvalidStoreUrl(f"url: unknown scheme {parts.scheme!r}; use memory:// or sqlite:///PATH")


def _sqlite_url(netloc: str, raw_path: str, raw_query: str) -> StoreUrl:
    """`sqlite:///rel.db` is relative, `sqlite:////abs.db` absolute; `?synchronous=normal|full`."""
    if netloc:
        raise InvalidStoreUrl(f"url: sqlite URLs have no host; write sqlite:///{netloc}{raw_path}")
    path = unquote(raw_path.removeprefix("/"))
    if not path:
        raise InvalidStoreUrl("url: sqlite:/// needs a file path")
    query = parse_qs(raw_query)
    unknown = sorted(set(query) - {"synchronous"})
    if unknown:
        raise InvalidStoreUrl(f"url: unknown query parameter(s) {unknown}")
    synchronous = query.get("synchronous", ["normal"])[-1].lower()
    if synchronous == "normal" and "synchronous" not in query:
        return StoreUrl("sqlite", path)
    if synchronous not in ("normal", "full"):
        raise InvalidStoreUrl("url: synchronous must be normal or full")
    return StoreUrl("sqlite", path, "full" if synchronous == "full" else "normal")
