"""The session registry's metadata: what the session tools read besides the head.

Values only. The Session stream carries them (`session.meta_updated.v1` in `domain.session`): each
update names the fields it changes, so the stream is the registry's history. Nothing here is
message text: labels, display names and subjects are metadata the host sets.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

_FROZEN = ConfigDict(frozen=True, extra="forbid")

_MAX_TEXT = 512
"""The longest metadata string (ids, labels, routes, model references)."""

Text = Field(default=None, min_length=1, max_length=_MAX_TEXT)


class Route(BaseModel):
    """Where a session's messages go (JSON `channel`, `to`, `accountId`, `threadId`)."""

    model_config = _FROZEN

    channel: str | None = Text
    to: str | None = Text
    account_id: str | None = Text
    thread_id: str | None = Text

    def to_json(self) -> dict[str, str]:
        """The route as the tools show it: camelCase, unset parts omitted."""
        out = {
            "channel": self.channel,
            "to": self.to,
            "accountId": self.account_id,
            "threadId": self.thread_id,
        }
        return {k: v for k, v in out.items() if v is not None}


Count = Field(default=None, ge=0)


class SessionMeta(BaseModel):
    """Every registry field but the four `session.upserted.v1` sets.

    Those are `session_id`, `kind`, `spawned_by` and `parent_session_key`. Times are epoch
    milliseconds; flags default to False; everything else to unset (None).
    """

    model_config = _FROZEN

    label: str | None = Text
    display_name: str | None = Text
    subject: str | None = Text
    channel: str | None = Text
    origin: Route | None = None
    delivery_context: Route | None = None
    thread_binding: Route | None = None
    last_channel: str | None = Text
    last_to: str | None = Text
    last_account_id: str | None = Text
    model: str | None = Text
    model_override: str | None = Text
    thinking_level: str | None = Text
    input_tokens: int | None = Count
    output_tokens: int | None = Count
    total_tokens: int | None = Count
    context_tokens: int | None = Count
    cache_read: int | None = Count
    cache_write: int | None = Count
    created_at: int | None = Count
    updated_at: int | None = Count
    pinned: bool = False
    archived: bool = False
    aborted_last_run: bool = False
    spawn_depth: int | None = Count
    subagent_role: str | None = Text
    sandboxed: bool = False


META_FIELDS: Final = tuple(SessionMeta.model_fields)
"""The names `SessionWatch.update_session` writes through `session.meta_updated.v1`."""

EMPTY_META: Final = SessionMeta()
"""A session's metadata before any update."""
