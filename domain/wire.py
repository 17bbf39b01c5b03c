"""Wire shapes: the camelCase JSON a host or a model sees, declared on the fields. Pure (stdlib, pydantic).

A `WireModel`'s `to_json()` is its JSON-mode dump by alias: keys in camelCase, `EpochMs` times as
epoch milliseconds, and the field rules below. The omission rules act only inside `to_json()`, so
`model_dump()` keeps every field, and `model_json_schema(mode="serialization")` names the wire keys.
"""

from __future__ import annotations

from contextvars import ContextVar
from datetime import datetime
from typing import Annotated, Any, ClassVar, TypeAlias, TypeVar

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field, PlainSerializer
from pydantic.alias_generators import to_camel

from sessionwatch.domain.signals import to_epoch_ms

WIRE_CONFIG = ConfigDict(
    frozen=True, extra="forbid", alias_generator=AliasGenerator(serialization_alias=to_camel)
)
"""Frozen, no extra fields, camelCase names when dumped by alias (validation keeps the field names)."""

_EPOCH_MS = PlainSerializer(to_epoch_ms, return_type=int, when_used="json-unless-none")

EpochMs: TypeAlias = Annotated[datetime, _EPOCH_MS]
"""A UTC time that the wire shows as epoch milliseconds."""
EpochMsOrNone: TypeAlias = Annotated[datetime | None, _EPOCH_MS]
"""An optional `EpochMs`; None stays null."""

_ON_THE_WIRE: ContextVar[bool] = ContextVar("sessionwatch_on_the_wire", default=False)
"""True while `to_json()` dumps: the omission rules test it, so other dumps keep every field."""


def _empty_on_the_wire(value: object) -> bool:
    return not value and _ON_THE_WIRE.get()


def _none_on_the_wire(value: object) -> bool:
    return value is None and _ON_THE_WIRE.get()


def _on_the_wire(_value: object) -> bool:
    return _ON_THE_WIRE.get()


_T = TypeVar("_T")

OmitEmpty: TypeAlias = Annotated[_T, Field(exclude_if=_empty_on_the_wire)]
"""Left out of the wire while falsy (None, "", {}); when shown, after the fields without a rule."""
OmitNone: TypeAlias = Annotated[_T, Field(exclude_if=_none_on_the_wire)]
"""Left out of the wire while None; when shown, after the fields without a rule."""
Hidden: TypeAlias = Annotated[_T, Field(exclude_if=_on_the_wire)]
"""Never on the wire."""


class _Leads:
    """Marks a field the wire shows first."""


Leading: TypeAlias = Annotated[_T, _Leads()]
"""Shown first on the wire."""

_OPTIONAL = (_empty_on_the_wire, _none_on_the_wire)


def _wire_order(model: type[BaseModel]) -> tuple[str, ...] | None:
    """The wire keys in order: leading, plain, then optional fields; None when that is the declared order.

    It orders the object `to_json()` is called on; a model nested in it keeps its declared order.
    """
    declared: list[str] = []
    leading: list[str] = []
    plain: list[str] = []
    optional: list[str] = []
    for name, info in model.model_fields.items():
        key = info.serialization_alias or name
        declared.append(key)
        if any(isinstance(rule, _Leads) for rule in info.metadata):
            leading.append(key)
        elif info.exclude_if in _OPTIONAL:
            optional.append(key)
        else:
            plain.append(key)
    order = (*leading, *plain, *optional)
    return None if order == tuple(declared) else order


class WireModel(BaseModel):
    """A frozen model with a wire shape; `to_json()` is the object a host or a model sees."""

    model_config = WIRE_CONFIG

    _wire_exclude_none: ClassVar[bool] = False
    """Set on a family whose wire leaves out every None, nested models included."""
    _wire_keys: ClassVar[tuple[str, ...] | None] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: object) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._wire_keys = _wire_order(cls)

    def to_json(self) -> dict[str, Any]:
        """The wire object: camelCase keys, times in epoch ms, the fields' omission rules applied."""
        token = _ON_THE_WIRE.set(True)
        try:
            out: dict[str, Any] = self.model_dump(
                mode="json", by_alias=True, exclude_none=self._wire_exclude_none
            )
        finally:
            _ON_THE_WIRE.reset(token)
        if self._wire_keys is not None:
            out = {key: out[key] for key in self._wire_keys if key in out}
        return out
