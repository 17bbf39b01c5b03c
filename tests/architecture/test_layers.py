"""The dependency rule (SPEC §12, CONVENTIONS §1): domain <- projections <- adapters, checked on the AST.

Every module of the three layer folders is parsed (never imported), every import is resolved to an
absolute module name (relative imports included), and each layer's allowance is applied. Then the
rooms of the whole package in one order (domain, projections, the application core and stores, the
façades, the integrations, the command line): every import runs down it, none back up.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "sessionwatch"
LAYERS = ("domain", "projections", "adapters")

IO_MODULES = frozenset(
    {
        "eventsourcing",
        "orjson",
        "sqlite3",
        "psycopg",
        "psycopg2",
        "psycopg_pool",
        "logging",
        "time",
        "os",
        "io",
        "pathlib",
        "shutil",
        "tempfile",
        "glob",
        "threading",
        "multiprocessing",
        "concurrent",
        "asyncio",
        "subprocess",
        "signal",
        "socket",
        "ssl",
        "select",
        "selectors",
        "urllib",
        "http",
        "random",
        "secrets",
        "importlib",
    }
)
"""Modules a pure layer must not import: I/O, clocks, process state, randomness, dynamic imports."""

TEST_ONLY = frozenset({"pytest", "_pytest", "tests", "conftest", "helpers", "strategies"})
"""Test tooling and the test suite's own modules: no library module may need them at run time."""

PURE_THIRD_PARTY = frozenset({"pydantic", "pydantic_core", "typing_extensions", "annotated_types"})
"""Non-stdlib packages the pure layers may use (CONVENTIONS §1: stdlib + pydantic)."""

IMPURE_CALLS = frozenset(
    {
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
        "datetime.datetime.today",
        "datetime.date.today",
        "uuid.uuid1",
        "uuid.uuid4",
        "__import__",
    }
)
"""Calls that ask the clock or the OS for a value (or import by name): time and ids enter the pure
layers inside commands (CONVENTIONS §1). `uuid.UUID` as a value type stays allowed."""


@dataclass(frozen=True)
class Module:
    """One source file of a layer, with the dotted name it has inside the installed package."""

    layer: str
    path: Path
    name: str

    @property
    def package(self) -> str:
        """The package relative imports of this module start from."""
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class Import:
    """An import statement, resolved to the absolute module it names."""

    module: str
    line: int


def layer_modules(layer: str) -> list[Module]:
    """Every `.py` file under the layer folder, named as `sessionwatch.<layer>.<...>`."""
    root = REPO / layer
    modules = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        dotted = ".".join((PACKAGE, layer, *(p for p in parts if p != "__init__")))
        modules.append(Module(layer=layer, path=path, name=dotted))
    return modules


def _from_target(node: ast.ImportFrom, module: Module) -> str:
    """The absolute module a `from X import ...` reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = module.package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    prefix = ".".join(base)
    return f"{prefix}.{node.module}" if node.module else prefix


def _resolve_from(node: ast.ImportFrom, module: Module) -> Iterator[str]:
    target = _from_target(node, module)
    # `from sessionwatch import adapters` or `from .. import adapters` names a sub-module.
    if target == PACKAGE or not node.module:
        for alias in node.names:
            yield f"{target}.{alias.name}"
    else:
        yield target


def imports_of(tree: ast.AST, module: Module) -> list[Import]:
    """Every import in the tree, function-level and `TYPE_CHECKING` ones included."""
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend(Import(name, node.lineno) for name in _resolve_from(node, module))
    return found


def _aliases(tree: ast.AST, module: Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for (`from datetime import date as d`: d -> datetime.date)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            base = _from_target(node, module)
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}"
    return names


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def impure_calls(tree: ast.AST, module: Module) -> list[tuple[str, int]]:
    """Calls such as `datetime.now(...)`, resolved through import aliases to their full name."""
    aliases = _aliases(tree, module)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (dotted := _dotted(node.func)) is None:
            continue
        head, dot, rest = dotted.partition(".")
        full = aliases.get(head, head) + dot + rest
        if full in IMPURE_CALLS:
            found.append((full, node.lineno))
    return found


def _top(name: str) -> str:
    return name.partition(".")[0]


def _in_layer(name: str, layer: str) -> bool:
    return name == f"{PACKAGE}.{layer}" or name.startswith(f"{PACKAGE}.{layer}.")


def wrong_arrows(module: Module, source: str) -> list[str]:
    """Every import or call in `source` that breaks the rule for `module`'s layer."""
    tree = ast.parse(source, filename=str(module.path))
    allowed_layers = {"domain": ("domain",), "projections": ("domain", "projections")}.get(module.layer)
    problems = []
    for found in imports_of(tree, module):
        name, where = found.module, f"{module.path.relative_to(REPO)}:{found.line}"
        if _top(name) in TEST_ONLY:
            problems.append(f"{where} {module.layer} imports the test-only {name}")
        elif allowed_layers is None:  # adapters may import both inner layers and any library
            continue
        elif _top(name) == PACKAGE:
            if not any(_in_layer(name, layer) for layer in allowed_layers):
                problems.append(f"{where} {module.layer} imports {name}")
        elif _top(name) in IO_MODULES:
            problems.append(f"{where} {module.layer} imports the I/O module {name}")
        elif _top(name) == "__future__" or _top(name) in PURE_THIRD_PARTY:
            continue
        elif _top(name) not in sys.stdlib_module_names:
            problems.append(f"{where} {module.layer} imports the third-party {name}")
    if allowed_layers is not None:
        problems.extend(
            f"{module.path.relative_to(REPO)}:{line} {module.layer} calls {call}"
            for call, line in impure_calls(tree, module)
        )
    return problems


ALL_MODULES = [module for layer in LAYERS for module in layer_modules(layer)]


@pytest.mark.parametrize("module", ALL_MODULES, ids=lambda m: str(m.path.relative_to(REPO)))
def test_each_module_imports_only_along_the_allowed_arrows(module: Module) -> None:
    assert wrong_arrows(module, module.path.read_text(encoding="utf-8")) == []


# ------------------------------------------------------------------ the walker really looks


def test_every_layer_folder_has_modules_to_check() -> None:
    for layer in LAYERS:
        names = {m.name for m in ALL_MODULES if m.layer == layer}
        assert f"{PACKAGE}.{layer}" in names, f"{layer}/__init__.py is walked"
        assert len(names) > 1, f"{layer}/ has modules besides its __init__"
    assert f"{PACKAGE}.domain.session" in {m.name for m in ALL_MODULES}


def _imported_by(layer: str) -> set[str]:
    return {
        found.module
        for module in ALL_MODULES
        if module.layer == layer
        for found in imports_of(ast.parse(module.path.read_text(encoding="utf-8")), module)
    }


def test_the_walker_finds_the_real_inward_imports_of_each_layer() -> None:
    adapters, projections, domain = (
        _imported_by("adapters"),
        _imported_by("projections"),
        _imported_by("domain"),
    )
    assert any(_in_layer(name, "domain") for name in adapters)
    assert any(_in_layer(name, "projections") for name in adapters)
    assert any(_in_layer(name, "domain") for name in projections)
    assert "pydantic" in domain
    assert any(_top(name) in IO_MODULES for name in adapters), "the shell is where I/O is imported"


FAKE_DOMAIN = Module("domain", REPO / "domain" / "fake.py", f"{PACKAGE}.domain.fake")
FAKE_ADAPTER = Module("adapters", REPO / "adapters" / "fake.py", f"{PACKAGE}.adapters.fake")
FAKE_PROJECTION = Module("projections", REPO / "projections" / "fake.py", f"{PACKAGE}.projections.fake")


@pytest.mark.parametrize(
    ("module", "source"),
    [
        (FAKE_DOMAIN, "from sessionwatch.projections.models import Signal"),
        (FAKE_DOMAIN, "import sessionwatch.adapters.entry.watch"),
        (FAKE_DOMAIN, "from ..adapters import watch"),
        (FAKE_DOMAIN, "from .. import adapters"),
        (FAKE_DOMAIN, "from sessionwatch import adapters"),
        (FAKE_DOMAIN, "from sessionwatch import Actor"),
        (FAKE_DOMAIN, "import eventsourcing.persistence"),
        (FAKE_DOMAIN, "import orjson"),
        (FAKE_DOMAIN, "import sqlite3"),
        (FAKE_DOMAIN, "from psycopg import connect"),
        (FAKE_DOMAIN, "import logging"),
        (FAKE_DOMAIN, "from time import monotonic"),
        (FAKE_DOMAIN, "import os.path"),
        (FAKE_DOMAIN, "from threading import Lock"),
        (FAKE_DOMAIN, "import socket"),
        (FAKE_DOMAIN, "from datetime import datetime\ndef f():\n    return datetime.now()"),
        (FAKE_DOMAIN, "import datetime\nx = datetime.datetime.utcnow()"),
        (FAKE_DOMAIN, "from datetime import date as d\nx = d.today()"),
        (FAKE_DOMAIN, "x = __import__('sqlite3')"),
        (FAKE_DOMAIN, "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import sqlite3"),
        (FAKE_PROJECTION, "from sessionwatch.adapters.stores.port import SignalStore"),
        (FAKE_PROJECTION, "from ..adapters.store import SignalStore"),
        (FAKE_PROJECTION, "import orjson"),
        (FAKE_PROJECTION, "import sqlite3"),
        (FAKE_PROJECTION, "import numpy"),
        (FAKE_PROJECTION, "from datetime import datetime\nx = datetime.now()"),
        (FAKE_PROJECTION, "import uuid\nx = uuid.uuid4()"),
        (FAKE_ADAPTER, "import pytest"),
        (FAKE_ADAPTER, "from helpers import FakeClock"),
    ],
)
def test_a_wrong_arrow_is_reported(module: Module, source: str) -> None:
    assert wrong_arrows(module, source) != []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        (FAKE_DOMAIN, "from sessionwatch.domain.keys import SessionIdentity\nfrom . import errors"),
        (FAKE_DOMAIN, "from datetime import UTC, datetime\nx = datetime(2026, 1, 1, tzinfo=UTC)"),
        (FAKE_DOMAIN, "from pydantic import BaseModel"),
        (FAKE_PROJECTION, "from sessionwatch.domain import session\nfrom .models import Signal"),
        (FAKE_PROJECTION, "import bisect\nfrom dataclasses import dataclass"),
        (FAKE_PROJECTION, "from uuid import UUID\nx = UUID(int=1)"),
        (FAKE_ADAPTER, "import sqlite3, orjson\nfrom sessionwatch.projections import read_model"),
        (FAKE_ADAPTER, "from datetime import UTC, datetime\nx = datetime.now(UTC)"),
    ],
)
def test_an_allowed_arrow_is_not_reported(module: Module, source: str) -> None:
    assert wrong_arrows(module, source) == []


# ----------------------------------------------------------------------------- no import cycles

ROOT_MODULES = [
    Module("root", REPO / "__init__.py", PACKAGE),
    Module("root", REPO / "__main__.py", f"{PACKAGE}.__main__"),
    Module("root", REPO / "aio.py", f"{PACKAGE}.aio"),
    *layer_modules("testing"),  # the test kit: a package beside the layers, not a layer
]


def import_graph(modules: list[Module]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (any import: top level, in a function, for typing).

    `from a.b import c` is an arrow to `a.b.c` when that is a module, else to `a.b`; the parent
    packages Python imports along the way are not arrows (their `__init__` would make every module
    of a package look circular).
    """
    names = {m.name for m in modules}
    graph: dict[str, set[str]] = {m.name: set() for m in modules}
    for module in modules:
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _from_target(node, module)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names]
            graph[module.name].update(t for t in targets if t in names and t != module.name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module, each sorted (two reachability passes)."""

    def reach(start: str, arrows: dict[str, set[str]]) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in arrows.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reverse: dict[str, set[str]] = {}
    for source, targets in graph.items():
        for target in targets:
            reverse.setdefault(target, set()).add(source)
    found: list[list[str]] = []
    placed: set[str] = set()
    for node in sorted(graph):
        if node in placed:
            continue
        component = reach(node, graph) & reach(node, reverse)  # both ways: one circle
        placed |= component
        if len(component) > 1:
            found.append(sorted(component))
    return found


def test_no_module_of_the_package_imports_itself_round_a_circle() -> None:
    assert cycles(import_graph([*ALL_MODULES, *ROOT_MODULES])) == []


def test_the_cycle_finder_finds_a_circle_through_a_typing_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    real = import_graph([*ALL_MODULES, *ROOT_MODULES])
    assert f"{PACKAGE}.adapters.entry.watch" in real[PACKAGE]  # the walker sees the real arrows


# ------------------------------------------------------------- the rooms, in one order, one way

TIERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("domain", ("domain",)),
    ("projections", ("projections",)),
    ("the application core and stores", ("adapters",)),
    ("the façades", ("adapters.entry", "aio")),
    ("the integrations", ("integrations",)),
    ("the command line", ("cli", "__main__")),
)
"""The package's rooms from the bottom up, each by the module prefixes under `sessionwatch` it holds
(`sessionwatch` itself, and any name it re-exports, is the façades' room too). A module imports its own
room and those below it, never one above: the command line uses the integrations, which use the façades."""

FACADES = 3
"""The room of the package itself (`import sessionwatch`, `from sessionwatch import SessionWatch`)."""

TIER_FOLDERS = ("domain", "projections", "adapters", "integrations", "cli")
"""The folders of the rooms; the package's own modules (`__init__`, `aio`, `__main__`) are beside."""


def tier_of(name: str) -> int | None:
    """The room of `sessionwatch.<...>` by its longest matching prefix; None outside the package."""
    if name != PACKAGE and not name.startswith(f"{PACKAGE}."):
        return None
    rest = name.removeprefix(PACKAGE).removeprefix(".")
    matches = [
        (len(prefix), room)
        for room, (_, prefixes) in enumerate(TIERS)
        for prefix in prefixes
        if rest == prefix or rest.startswith(f"{prefix}.")
    ]
    return max(matches)[1] if matches else FACADES


def tier_modules(root: Path) -> list[Module]:
    """Every module of the rooms under `root`, the package's own modules included."""
    modules = [
        Module("root", root / f"{stem}.py", PACKAGE if stem == "__init__" else f"{PACKAGE}.{stem}")
        for stem in ("__init__", "aio", "__main__")
    ]
    for folder in TIER_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            modules.append(
                Module(folder, path, ".".join((PACKAGE, folder, *(p for p in parts if p != "__init__"))))
            )
    return modules


def arrows_up(root: Path) -> list[str]:
    """Every import under `root` that runs from a room to one above it (typing and lazy ones too)."""
    problems = []
    for module in tier_modules(root):
        here = tier_of(module.name)
        assert here is not None, f"{module.name} is in no room"
        for found in imports_of(ast.parse(module.path.read_text(encoding="utf-8")), module):
            there = tier_of(found.module)
            if there is not None and there > here:
                problems.append(
                    f"{module.path.relative_to(root)}:{found.line} {TIERS[here][0]} imports"
                    f" {found.module} ({TIERS[there][0]})"
                )
    return problems


def test_every_import_runs_down_the_rooms() -> None:
    assert arrows_up(REPO) == []


def test_the_rooms_are_named_in_their_order() -> None:
    assert [name for name, _ in TIERS] == [
        "domain",
        "projections",
        "the application core and stores",
        "the façades",
        "the integrations",
        "the command line",
    ]
    assert tier_of(f"{PACKAGE}.adapters.entry.watch") == 3
    assert tier_of(f"{PACKAGE}.adapters.app.recording") == 2
    assert tier_of(f"{PACKAGE}.cli.cli") == 5
    assert tier_of(PACKAGE) == tier_of(f"{PACKAGE}.aio") == tier_of(f"{PACKAGE}.SessionWatch") == FACADES
    assert tier_of("pydantic") is None


@pytest.mark.parametrize(
    ("planted_in", "back_import"),
    [
        ("adapters/entry/watch_open.py", "from sessionwatch.cli import cli"),
        ("adapters/entry/aio.py", "from sessionwatch.integrations import mcp"),
        ("integrations/mcp.py", "import sessionwatch.cli.cli_commands"),
        ("adapters/app/recording.py", "from sessionwatch.adapters.entry.watch import SessionWatch"),
        ("adapters/stores/factory.py", "from sessionwatch import SessionWatch"),
        ("projections/models.py", "from sessionwatch.integrations.claude_code import x"),
    ],
)
def test_an_import_planted_back_up_in_a_copy_is_caught(
    tmp_path: Path, planted_in: str, back_import: str
) -> None:
    for module in tier_modules(REPO):
        copy = tmp_path / module.path.relative_to(REPO)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(module.path.read_text(encoding="utf-8"), encoding="utf-8")
    assert arrows_up(tmp_path) == []
    target = tmp_path / planted_in
    target.write_text(target.read_text(encoding="utf-8") + f"\n\ndef planted() -> None:\n    {back_import}\n")
    [problem] = arrows_up(tmp_path)
    assert problem.startswith(f"{planted_in}:")
