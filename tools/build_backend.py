"""The build backend: setuptools, after writing the sync façade from the asyncio one.

`pyproject.toml` names this module as its in-tree backend (`backend-path = ["tools"]`). Every
build (a wheel, an sdist, an editable install) first runs `async_to_sync.write` on the source tree,
so the generated modules, which git ignores, are always there and always what the source gives;
every other hook (`get_requires_for_build_*`, `prepare_metadata_for_build_*`) is setuptools' own
`build_meta`, unchanged, through the module's `__getattr__`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from async_to_sync import write
from setuptools import build_meta

ROOT = Path(__file__).resolve().parents[1]
"""The source tree being built: the folder that holds `pyproject.toml`."""


def _after_writing(build: Callable[..., object]) -> Callable[..., str]:
    """Setuptools' `build`, of a tree whose generated modules are up to date."""

    def generated_first(*args: object, **kwargs: object) -> str:
        write(ROOT)
        return str(build(*args, **kwargs))

    generated_first.__name__ = generated_first.__qualname__ = build.__name__
    generated_first.__doc__ = f"Setuptools' `{build.__name__}`, after writing the generated modules."
    return generated_first


build_wheel = _after_writing(build_meta.build_wheel)
build_editable = _after_writing(build_meta.build_editable)
build_sdist = _after_writing(build_meta.build_sdist)
"""The sdist carries the generated modules, and this backend (MANIFEST.in) to write them again."""


def __getattr__(name: str) -> object:
    """Every other hook of the build interface is setuptools' own."""
    return getattr(build_meta, name)
