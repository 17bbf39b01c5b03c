"""`import sessionwatch` loads no store driver, no session tools and no CLI; each name loads on first use.

The package root names its exports twice: `TYPE_CHECKING` imports for type checkers and a
name -> module table that `__getattr__` imports from at run time. These tests hold the two to one
another (every exported name resolves to the object its typed import names), check that a fresh
interpreter's `import sessionwatch` leaves the heavy parts unloaded, and that `__version__` is the
installed distribution's.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import sessionwatch
from sessionwatch.adapters.extras import install_hint

ROOT = Path(sessionwatch.__file__)

NOT_LOADED_BY_IMPORT = (
    "psycopg",
    "sessionwatch.adapters.stores.postgres",
    "sessionwatch.adapters.tools",
    "sessionwatch.domain.tools",
    "sessionwatch.cli.cli",
    "sessionwatch.integrations.",
    "agents",
    "langgraph",
    "langchain",
)
"""Module prefixes `import sessionwatch` must not load (`cli` also covers `cli_commands`, `cli_text`;
`langchain` also `langchain_core`): the integrations and the frameworks they need load only when used."""

EXTRAS = {
    "sessionwatch.integrations.openai_agents": ("agents", "openai-agents"),
    "sessionwatch.integrations.langgraph": ("langgraph", "langgraph"),
}
"""Each integration module: the package its extra brings, and the extra's name."""


def typed_imports() -> dict[str, tuple[str, str]]:
    """Exported name -> (module, name there), as the root's `TYPE_CHECKING` block imports it."""
    tree = ast.parse(ROOT.read_text(encoding="utf-8"))
    [block] = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    found: dict[str, tuple[str, str]] = {}
    for statement in block.body:
        if isinstance(statement, ast.ImportFrom):
            assert statement.module is not None
            for alias in statement.names:
                found[alias.asname or alias.name] = (statement.module, alias.name)
    return found


def loaded_after(statement: str) -> list[str]:
    """The modules a fresh interpreter has loaded after running `statement`."""
    script = f"{statement}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return result.stdout.split()


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.startswith(NOT_LOADED_BY_IMPORT)]


@pytest.mark.parametrize(
    ("statement", "loaded"),
    [
        ("import sessionwatch", "sessionwatch"),
        ("from sessionwatch import SessionWatch, open", "sessionwatch.adapters.entry.watch"),
        ("import sessionwatch.aio", "sessionwatch.adapters.entry.aio"),
        ("import sessionwatch.integrations", "sessionwatch.integrations"),
    ],
)
def test_importing_loads_no_driver_no_tools_and_no_cli(statement: str, loaded: str) -> None:
    modules = loaded_after(statement)
    assert loaded in modules
    assert heavy(modules) == []


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_the_check_sees_what_an_integration_loads(module: str) -> None:
    package, _extra = EXTRAS[module]
    assert package in heavy(loaded_after(f"import {module}"))


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_an_integration_without_its_extra_names_the_install_command(module: str) -> None:
    package, extra = EXTRAS[module]
    script = f"import sys\nsys.modules[{package!r}] = None  # not installed\nimport {module}"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: sessionwatch.integrations.")
    assert last.endswith(f"the {extra} extra: {install_hint(extra)}")
    assert install_hint(extra).startswith("pip install '")


def test_import_sessionwatch_loads_none_of_its_exports() -> None:
    assert [m for m in loaded_after("import sessionwatch") if m.startswith("sessionwatch.")] == []


def test_opening_a_sqlite_store_loads_no_driver_no_tools_and_no_cli(tmp_path: Path) -> None:
    url = str(tmp_path / "first.db")
    modules = loaded_after(f"import sessionwatch\nsessionwatch.open({url!r}).close()")
    assert "sessionwatch.adapters.stores.sqlite" in modules
    assert heavy(modules) == []


def test_the_check_sees_what_the_tools_load() -> None:
    assert heavy(loaded_after("import sessionwatch\nsessionwatch.SessionTools")) != []


def test_every_exported_name_has_one_typed_import() -> None:
    assert sorted(typed_imports()) == sorted(sessionwatch.__all__)


@pytest.mark.parametrize("name", sorted(sessionwatch.__all__))
def test_every_exported_name_resolves_to_the_object_its_typed_import_names(name: str) -> None:
    module, original = typed_imports()[name]
    assert getattr(sessionwatch, name) is getattr(importlib.import_module(module), original)


def test_from_import_and_dir_see_every_exported_name() -> None:
    namespace: dict[str, object] = {}
    exec("from sessionwatch import *", namespace)  # noqa: S102 - the star import is what is tested
    assert set(sessionwatch.__all__) <= set(namespace)
    assert set(sessionwatch.__all__) | {"__version__"} <= set(dir(sessionwatch))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = sessionwatch.no_such_name  # type: ignore[attr-defined]


def test_the_version_is_the_installed_distributions() -> None:
    assert sessionwatch.__version__ == importlib.metadata.version("sessionwatch")
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    assert sessionwatch.__version__ == project["project"]["version"]
