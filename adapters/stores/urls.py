"""Store URLs: `memory://`, `sqlite:///rel.db`, `postgresql://user@host:5432/db`.

SQLite takes `?synchronous=normal|full`; PostgreSQL takes `?schema=`, `lock_timeout=`,
`statement_timeout=`, `connect_timeout=` and `network_timeout=` (seconds), and passes every other
parameter to libpq.

No URL means `$SESSIONWATCH_URL`, else the SQLite file `./sessionwatch.db`. A plain path with no
scheme is a SQLite file too, for the CLI's convenience. Parsing never connects to anything.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit, urlunsplit

DEFAULT_PATH = "sessionwatch.db"
ENV_URL = "SESSIONWATCH_URL"
DEFAULT_SCHEMA = "sessionwatch"
"""The PostgreSQL schema of a URL without `?schema=`: its own, so no host table is ever touched."""

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_TIMEOUTS = {"lock_timeout": 5.0, "statement_timeout": 30.0, "connect_timeout": 10.0, "network_timeout": 10.0}
"""sessionwatch's own query parameters (seconds) and their defaults; the rest go to libpq."""


class InvalidStoreUrl(ValueError):  # noqa: N818 - names the condition
    """The store URL cannot be understood; the message names the problem."""


@dataclass(frozen=True)
class PostgresUrl:
    """A PostgreSQL store: where to connect, which schema, and how long any wait may last."""

    conninfo: str
    """The URL for libpq, without sessionwatch's own query parameters."""
    schema: str = DEFAULT_SCHEMA
    lock_timeout: float = _TIMEOUTS["lock_timeout"]
    statement_timeout: float = _TIMEOUTS["statement_timeout"]
    connect_timeout: float = _TIMEOUTS["connect_timeout"]
    network_timeout: float = _TIMEOUTS["network_timeout"]
    """How long a connection may go silent before it counts as dead (ADR-0062): TCP keepalives and
    `tcp_user_timeout` on both ends, a write transaction's idle limit on the server, and, added to
    `statement_timeout`, the longest a call waits for any one answer from the server."""


@dataclass(frozen=True)
class StoreUrl:
    """A parsed store URL."""

    scheme: Literal["memory", "sqlite", "postgresql"]
    path: str = ""
    synchronous: Literal["normal", "full"] | None = None
    postgres: PostgresUrl | None = None


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
    try:
        parts = urlsplit(text)
    except ValueError:  # its message may quote the netloc, password included: not repeated here
        raise InvalidStoreUrl(
            "url: cannot be parsed (an unbalanced '[' or a character not allowed in the host part)"
        ) from None
    if parts.scheme == "memory":
        return StoreUrl("memory")
    if parts.scheme == "sqlite":
        return _sqlite_url(parts.netloc, parts.path, parts.query)
    if parts.scheme in ("postgresql", "postgres"):
        return StoreUrl("postgresql", postgres=_postgres_url(text))
    raise InvalidStoreUrl(
        f"url: unknown scheme {parts.scheme!r}; use memory://, sqlite:///PATH or postgresql://HOST/DB"
    )


def _postgres_url(text: str) -> PostgresUrl:
    """`postgresql://` or `postgres://`; `schema` and the timeouts (`lock_timeout`, ..., `network_timeout`).

    Timeouts are seconds (> 0: no wait is ever unbounded); every other query parameter is libpq's.
    """
    parts = urlsplit(text)
    query = parse_qs(parts.query, keep_blank_values=True)
    schema = query.pop("schema", [DEFAULT_SCHEMA])[-1]
    if not _SCHEMA_NAME.fullmatch(schema):
        raise InvalidStoreUrl(
            "url: schema must be a lowercase identifier ([a-z_][a-z0-9_]*, at most 63 characters)"
        )
    timeouts = {
        name: _seconds(name, query.pop(name, [None])[-1], default) for name, default in _TIMEOUTS.items()
    }
    conninfo = urlunsplit(
        ("postgresql", parts.netloc, parts.path, urlencode(query, doseq=True, quote_via=quote), "")
    )
    return PostgresUrl(conninfo, schema, **timeouts)


def _seconds(name: str, raw: str | None, default: float) -> float:
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise InvalidStoreUrl(f"url: {name} must be a positive number of seconds")
    return value


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
