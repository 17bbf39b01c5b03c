"""The build backend: setuptools, after writing the sync façade from the asyncio one.

`pyproject.toml` names this module as its in-tree backend (`backend-path = ["tools"]`). Every
build (a wheel, an sdist, an editable install) first runs `async_to_sync.write` on the source tree,
so the generated modules, which git ignores, are always there and always what the source gives;
every other hook (`get_requires_for_build_*`, `prepare_metadata_for_build_*`) is setuptools' own
`build_meta`, unchanged, through the module's `__getattr__`.
"""

from __future__ import annotations

from pathlib import Path

from async_to_sync import write
from setuptools import build_meta

ROOT = Path(__file__).resolve().parents[1]
"""The source tree being built: the folder that holds `pyproject.toml`."""


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, str | list[str]] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Setuptools' wheel, of a tree whose generated modules are up to date."""
    write(ROOT)
    return str(build_meta.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, str | list[str]] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Setuptools' editable wheel, of a tree whose generated modules are up to date."""
    write(ROOT)
    return str(build_meta.build_editable(wheel_directory, config_settings, metadata_directory))


def build_sdist(sdist_directory: str, config_settings: dict[str, str | list[str]] | None = None) -> str:
    """Setuptools' sdist, which carries the generated modules (and this backend, to build them again)."""
    write(ROOT)
    return str(build_meta.build_sdist(sdist_directory, config_settings))


def __getattr__(name: str) -> object:
    """Every other hook of the build interface is setuptools' own."""
    return getattr(build_meta, name)
