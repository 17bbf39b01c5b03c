"""Base classes for stored events and commands: frozen pydantic models of value types only."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict


class Event(BaseModel):
    """A past-tense fact. Subclasses declare `type: Literal["<stream>.<fact>.v<n>"]`, the stored name."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Command(BaseModel):
    """An imperative request to a stream's `decide`; time and sequences arrive as fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


M = TypeVar("M", bound=BaseModel)


def checked_model(cls: type[M], fields: dict[str, object]) -> M:
    """A model made of fields already checked into the types it declares, without validating again.

    `fields` holds every field of `cls`, in declaration order, each of its declared type: what
    pydantic's `model_construct` also assumes, set here directly because `model_construct` costs
    twice a validation. Only a checker that guarantees those types calls it (`check_signal`, and
    what is built from a signal it checked); property tests hold the result equal to the
    validated model.
    """
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", fields)
    object.__setattr__(model, "__pydantic_fields_set__", set(fields))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model
