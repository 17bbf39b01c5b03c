"""Signal kinds, actors, payload and summary rules. Pure values and checks."""

from __future__ import annotations

import functools
import math
from datetime import UTC, datetime, timedelta
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.kinds import SignalKind as SignalKind  # noqa: PLC0414 - re-exported: its home is kinds
from sessionwatch.domain.text import has_control_character
from sessionwatch.domain.text import notice_text as notice_text  # noqa: PLC0414 - re-exported: its home is text

MAX_SUMMARY_LENGTH = 200
MAX_PAYLOAD_BYTES = 4096
MAX_TURNS = 2**63 - 1
"""The largest `turns` a payload carries: a signed 64-bit integer, what stored JSON (orjson) holds."""
MAX_SEQUENCE = 2**63 - 1
"""The largest sequence a store can hold (a signed 64-bit integer in SQLite and PostgreSQL)."""
OCCURRED_AT_WINDOW = timedelta(hours=24)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

ActorType: TypeAlias = Literal["human", "agent", "system"]
RunOutcome: TypeAlias = Literal["ok", "error", "timeout", "cancelled"]
FailedOutcome: TypeAlias = Literal["error", "timeout", "cancelled"]


NOTIFYING_KINDS = frozenset(
    {SignalKind.HUMAN_DIRECT_MESSAGE, SignalKind.UPSTREAM_MISSING, SignalKind.GOAL_CHANGED}
)
"""Kinds that make a watcher's view stale; `child_spawned` seeds instead."""

TERMINAL_RUN_KINDS = frozenset({SignalKind.RUN_COMPLETED, SignalKind.RUN_FAILED})
"""A run's end: log-only unless a store is opened with terminal runs notifying."""


def notifying_kinds(*, terminal_runs: bool) -> frozenset[SignalKind]:
    """The kinds that notify watchers: `NOTIFYING_KINDS`, and a run's end when `terminal_runs`."""
    return NOTIFYING_KINDS | TERMINAL_RUN_KINDS if terminal_runs else NOTIFYING_KINDS


PAYLOAD_KEYS: dict[SignalKind, frozenset[str]] = {
    SignalKind.HUMAN_DIRECT_MESSAGE: frozenset({"turns", "channel"}),
    SignalKind.GOAL_CHANGED: frozenset({"status"}),
    SignalKind.RUN_FAILED: frozenset({"outcome"}),
    SignalKind.UPSTREAM_MISSING: frozenset({"channel"}),
}
"""The payload whitelist per kind; kinds not listed carry no payload."""

PUBLIC_PAYLOAD_KEYS = ("outcome", "channel", "turns")
"""The payload keys `session_status` shows."""


class Actor(BaseModel):
    """Who caused a signal: a human, an agent (by its session key) or the system."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    actor_type: ActorType
    actor_id: str | None = None

    @classmethod
    def human(cls, id: str | None = None) -> Actor:
        """A human, optionally identified."""
        return cls(actor_type="human", actor_id=id)

    @classmethod
    def agent(cls, session_key: str) -> Actor:
        """An agent, identified by the session key it acts from."""
        return cls(actor_type="agent", actor_id=session_key)

    @classmethod
    def system(cls) -> Actor:
        """The gateway itself."""
        return cls(actor_type="system")


def classify_actor(
    *,
    provenance_kind: str | None = None,
    source_session_key: str | None = None,
    internal_events: bool = False,
    session_effects: str | None = None,
) -> Actor:
    """Classify a turn's actor from its input provenance."""
    if provenance_kind == "inter_session":
        return Actor.agent(source_session_key) if source_session_key else Actor(actor_type="agent")
    if provenance_kind == "internal_system" or internal_events or session_effects == "internal":
        return Actor.system()
    return Actor.human()


class Payload(BaseModel):
    """Signal metadata, never message text; which keys a kind may carry is `PAYLOAD_KEYS`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: int | None = Field(default=None, ge=1, le=MAX_TURNS)
    channel: str | None = None
    status: str | None = None
    outcome: FailedOutcome | None = None

    def as_dict(self) -> dict[str, int | str]:
        """The set keys only, in a stable order."""
        values = (
            ("turns", self.turns),
            ("channel", self.channel),
            ("status", self.status),
            ("outcome", self.outcome),
        )
        return {k: v for k, v in values if v is not None}


def check_summary(summary: object) -> str:
    """A summary is one short line: non-empty, at most 200 characters, no control characters."""
    if not isinstance(summary, str):
        raise InvalidSignal("summary", "must be a string")
    return _checked_summary(summary) if type(summary) is str else _check_summary_text(summary)


@functools.lru_cache(maxsize=1024)  # summaries are fixed phrases: few, and repeated
def _checked_summary(summary: str) -> str:
    """`_check_summary_text` remembered (a refusal raises again each time: exceptions are never cached)."""
    return _check_summary_text(summary)


def _check_summary_text(summary: str) -> str:
    if not summary.strip():
        raise InvalidSignal("summary", "must not be empty")
    if len(summary.splitlines()) > 1 or "\n" in summary or "\r" in summary:
        raise InvalidSignal("summary", "must be a single line")
    if has_control_character(summary):
        raise InvalidSignal("summary", "must not contain control characters")
    if len(summary) > MAX_SUMMARY_LENGTH:
        raise InvalidSignal("summary", f"must be at most {MAX_SUMMARY_LENGTH} characters")
    _check_encodable(summary, "summary")
    return summary


def _check_encodable(text: str, field: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidSignal(field, "must be valid UTF-8 text") from exc


def check_kind(kind: object) -> SignalKind:
    """Resolve a kind from its enum member or stored name."""
    if type(kind) is SignalKind:
        return kind
    try:
        return SignalKind(str(kind)) if isinstance(kind, str) else SignalKind(kind)  # type: ignore[arg-type]
    except ValueError:
        names = ", ".join(k.value for k in SignalKind)
        raise InvalidSignal("kind", f"unknown kind {kind!r}; expected one of {names}") from None


def check_payload(kind: SignalKind, payload: object) -> Payload | None:
    """A payload is a JSON object of whitelisted metadata keys, at most 4 KiB."""
    if payload is None:
        return None
    if isinstance(payload, Payload):
        payload = payload.as_dict()
    if not isinstance(payload, dict):
        raise InvalidSignal("payload", "must be a JSON object")
    allowed = PAYLOAD_KEYS.get(kind, frozenset())
    extra = sorted(str(k) for k in payload if k not in allowed)
    if extra:
        allowed_text = ", ".join(sorted(allowed)) or "none"
        raise InvalidSignal(
            "payload", f"keys {extra} are not allowed for {kind.value} (allowed: {allowed_text})"
        )
    for key, value in payload.items():
        _check_payload_value(key, value)
    checked = Payload.model_validate(payload)
    if len(checked.model_dump_json(exclude_none=True).encode()) > MAX_PAYLOAD_BYTES:
        raise InvalidSignal("payload", f"must be at most {MAX_PAYLOAD_BYTES} bytes as compact JSON")
    return checked if checked.as_dict() else None


def _check_payload_value(key: str, value: object) -> None:
    if key == "turns":
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_TURNS:
            raise InvalidSignal("payload", f"turns must be a positive integer of at most {MAX_TURNS}")
    elif key == "outcome":
        if value not in ("error", "timeout", "cancelled"):
            raise InvalidSignal("payload", "outcome must be one of error, timeout, cancelled")
    elif not isinstance(value, str) or not value.strip():
        raise InvalidSignal("payload", f"{key} must be a non-empty string")
    elif has_control_character(value):
        raise InvalidSignal("payload", f"{key} must be a single line without control characters")
    else:
        _check_encodable(value, "payload")


def check_text(value: object, field: str, max_length: int = 512) -> str:
    """A required id (run id, operation id): a short single-line non-empty string."""
    checked = check_optional_text(value, field, max_length)
    if checked is None:
        raise InvalidSignal(field, "is required")
    return checked


def check_optional_text(value: object, field: str, max_length: int = 512) -> str | None:
    """Optional ids (run id, session id, actor id, dedupe key): short single-line strings."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidSignal(field, "must be a non-empty string")
    if len(value) > max_length:
        raise InvalidSignal(field, f"must be at most {max_length} characters")
    if has_control_character(value):
        raise InvalidSignal(field, "must not contain control characters or line breaks")
    _check_encodable(value, field)
    return value


_ONE_MS = timedelta(milliseconds=1)


def to_epoch_ms(moment: datetime) -> int:
    """Aware datetime to epoch milliseconds, the stored and wire format."""
    return (moment - EPOCH) // _ONE_MS


@functools.lru_cache(maxsize=4096)  # a batch's signals, and a page's, share a few instants
def from_epoch_ms(ms: int) -> datetime:
    """Epoch milliseconds to an aware UTC datetime."""
    return EPOCH + timedelta(milliseconds=ms)


def clamp_occurred_at(occurred_at: object, now: datetime) -> int:
    """Display time in epoch ms: missing or non-finite means now, else clamped to [now-24h, now]."""
    now_ms = to_epoch_ms(now)
    if occurred_at is None:
        return now_ms
    if isinstance(occurred_at, datetime):
        if occurred_at.tzinfo is None or occurred_at.utcoffset() is None:
            raise InvalidSignal("occurred_at", "must be timezone-aware")
        ms = to_epoch_ms(occurred_at)
    elif isinstance(occurred_at, int | float) and not isinstance(occurred_at, bool):
        if isinstance(occurred_at, float) and not math.isfinite(occurred_at):
            return now_ms  # an int is always finite; math.isfinite would overflow on a huge one
        ms = int(occurred_at)
    else:
        raise InvalidSignal("occurred_at", "must be an aware datetime or epoch milliseconds")
    lowest = now_ms - OCCURRED_AT_WINDOW // timedelta(milliseconds=1)
    return min(max(ms, lowest), now_ms)


def human_message_summary(channel: object) -> str:
    """`human message via <channel>`, the channel trimmed, `unknown` when empty."""
    if channel is not None and not isinstance(channel, str):  # bytes would read as "b'...'"
        raise InvalidSignal("channel", "must be a string")
    trimmed = (channel or "").strip()
    return f"human message via {trimmed or 'unknown'}"


CREATED_SUMMARY = "session created"
"""The summary of every `created` signal."""


def created_dedupe_key(agent_id: str, session_key: str, session_id: str | None) -> str:
    """`created:<agentId>:<sessionKey>:<sessionId>`; without a session id the last part is empty."""
    return f"created:{agent_id}:{session_key}:{session_id or ''}"


RUN_TERMINAL_SUMMARIES: dict[RunOutcome, str] = {
    "ok": "child run completed",
    "error": "child run failed",
    "timeout": "child run timed out",
    "cancelled": "child run cancelled",
}
