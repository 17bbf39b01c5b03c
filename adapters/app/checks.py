"""Input checks the use cases share: queries raise `InvalidQuery`, writes `InvalidSignal`, naming the field.

The domain's checks (`domain.keys`, `domain.signals`) hold the rules; these adapt them to a query's
error type or check what only the shell can (JSON encodability, pydantic validation of metadata).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

import orjson
from pydantic import JsonValue, ValidationError

from sessionwatch.domain.errors import InvalidQuery, InvalidSignal
from sessionwatch.domain.keys import SessionIdentity, check_key, resolve_identity
from sessionwatch.domain.registry import Route, SessionMeta
from sessionwatch.domain.signals import Actor, check_optional_text
from sessionwatch.domain.watch_cursor import CursorKey

MAX_JSON_BYTES: Final = 4096
_LOGGED_KEY_LENGTH: Final = 200


def query_identity(key: object, agent_id: object, field: str = "session_key") -> SessionIdentity:
    """The identity a query names, else `InvalidQuery` naming the field."""
    try:
        return resolve_identity(key, agent_id, field)
    except InvalidSignal as exc:
        raise InvalidQuery(exc.field, exc.reason) from None


def query_key(key: object, field: str) -> str:
    """A well-formed key a query names, else `InvalidQuery` naming the field."""
    try:
        return check_key(key, field)
    except InvalidSignal as exc:
        raise InvalidQuery(exc.field, exc.reason) from None


def query_cursor_key(watcher_key: object, target_key: object, target_agent_id: object) -> CursorKey:
    """The cursor a query names (a bare target needs its agent id), else `InvalidQuery`."""
    watcher = query_key(watcher_key, "watcher_key")
    target = query_identity(target_key, target_agent_id, "target_key")
    return CursorKey(watcher, target.session_key, target.agent_id)


def check_actor(actor: object) -> Actor:
    """An `Actor`, else `InvalidSignal` naming `actor` (a falsy value is not "not given")."""
    if not isinstance(actor, Actor):
        raise InvalidSignal("actor", "must be an Actor (Actor.human(), Actor.agent(key), Actor.system())")
    return actor


def check_meta(given: Mapping[str, object]) -> SessionMeta:
    """Registry metadata values, checked, else `InvalidSignal` naming the field."""
    for name, value in given.items():
        parts = value.items() if isinstance(value, Mapping) else [("", value)]
        if isinstance(value, Route):
            parts = value.model_dump().items()
        for part, text in parts:
            if isinstance(text, str):
                check_optional_text(text, f"{name}.{part}" if part else name)
    try:
        return SessionMeta.model_validate(dict(given))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "fields"
        raise InvalidSignal(field, error["msg"]) from None


def check_json(value: object, field: str) -> JsonValue:
    """A JSON-compatible value (markers, upstream refs) of at most 4 KiB, else `InvalidSignal`."""
    try:
        encoded = orjson.dumps(value)
    except TypeError:
        raise InvalidSignal(field, "must be a JSON-compatible value") from None
    if len(encoded) > MAX_JSON_BYTES:
        raise InvalidSignal(field, f"must encode to at most {MAX_JSON_BYTES} bytes of JSON")
    decoded: JsonValue = orjson.loads(encoded)
    return decoded


def provider_time(occurred_at: object) -> datetime | float | None:
    """A provider's time for a signal; anything unusable (naive, not a time) means now."""
    if isinstance(occurred_at, datetime):
        return occurred_at if occurred_at.utcoffset() is not None else None
    if isinstance(occurred_at, int | float) and not isinstance(occurred_at, bool):
        return occurred_at
    return None


def bounded(key: object) -> str:
    """The key as text (a non-string as its `repr`), cut to 200 characters (marked `…`) for a log line."""
    shown = key if isinstance(key, str) else repr(key)
    return shown if len(shown) <= _LOGGED_KEY_LENGTH else f"{shown[:_LOGGED_KEY_LENGTH]}…"
