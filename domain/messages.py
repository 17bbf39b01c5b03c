"""Base classes for stored events and commands: frozen pydantic models of value types only."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Event(BaseModel):
    """A past-tense fact. Subclasses declare `type: Literal["<stream>.<fact>.v<n>"]`, the stored name."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Command(BaseModel):
    """An imperative request to a stream's `decide`; time and sequences arrive as fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")
