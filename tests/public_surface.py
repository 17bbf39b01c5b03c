"""The public surface of `sessionwatch` as text: every exported name, its kind and its signatures.

`python tests/public_surface.py --write` rewrites `tests/architecture/public_surface.txt`; the test next
to it compares a fresh rendering with that file, so a restructure cannot rename, drop or re-sign
anything a host programs against without the diff showing it.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

MODULES = ("sessionwatch", "sessionwatch.aio", "sessionwatch.testing")
"""The modules whose `__all__` is public."""

SNAPSHOT = Path(__file__).parent / "architecture" / "public_surface.txt"


_MODULE_PATH = re.compile(r"\b(?:sessionwatch|typing|collections\.abc|datetime|pydantic)\.(?:\w+\.)*(?=\w)")
_CLASS_REPR = re.compile(r"<class '(?:[\w.]*\.)?(\w+)'>")


def _plain(text: str) -> str:
    """Type names without the modules they live in: moving a class is not an API change."""
    return _MODULE_PATH.sub("", _CLASS_REPR.sub(r"\1", text))


def _signature(obj: object) -> str:
    try:
        return _plain(str(inspect.signature(obj)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"


def _own_attributes(cls: type) -> dict[str, object]:
    """Attributes the class and its sessionwatch bases define (pydantic's and object's left out)."""
    found: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if base is cls or base.__module__.startswith("sessionwatch"):
            found.update(vars(base))
    return found


def _member(name: str, value: object) -> str | None:
    if isinstance(value, (staticmethod, classmethod)):
        return f"    {type(value).__name__} {name}{_signature(value.__func__)}"
    if isinstance(value, property):
        return f"    property {name}"
    if inspect.iscoroutinefunction(value):
        return f"    async def {name}{_signature(value)}"
    if inspect.isfunction(value):
        return f"    def {name}{_signature(value)}"
    return None


def _members(cls: type) -> Iterator[str]:
    if issubclass(cls, enum.Enum):
        for member in cls:
            yield f"    {member.name} = {member.value!r}"
        return
    if issubclass(cls, BaseModel):
        for name, info in cls.model_fields.items():
            yield f"    field {name}: {_plain(repr(info.annotation))}"
    for name, value in sorted(_own_attributes(cls).items()):
        if name.startswith("_") and name != "__init__":
            continue
        line = _member(name, value)
        if line is not None:
            yield line


def render() -> str:
    """The surface, one line per name and per public member, in a stable order."""
    lines: list[str] = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        lines.append(f"[{module_name}]")
        for name in sorted(module.__all__):
            obj = getattr(module, name)
            if inspect.iscoroutinefunction(obj):
                lines.append(f"async def {name}{_signature(obj)}")
            elif inspect.isclass(obj):
                lines.append(f"class {name}")
                lines.extend(_members(obj))
            elif callable(obj):
                lines.append(f"def {name}{_signature(obj)}")
            else:
                lines.append(f"value {name}: {type(obj).__name__}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        SNAPSHOT.write_text(render(), encoding="utf-8")
    else:
        sys.stdout.write(render())
