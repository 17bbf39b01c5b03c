"""One import namespace (SPEC §12, ADR-0001): the built wheel installs `sessionwatch` and nothing else.

The wheel is built from a copy of the working tree as a clean clone has it (so the build's own
`build/` and `*.egg-info` never land in the repository, a stale `build/lib` there cannot leak in,
and the generated sync façade, which git ignores, must be written by the build), then read as a zip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest
from async_to_sync import TARGETS, generate

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "sessionwatch"
LAYERS = ("domain", "projections", "adapters")
KIT = "testing"
"""The test kit for embedders, `sessionwatch.testing`: a package beside the layers."""
INTEGRATIONS = "integrations"
"""The hosts' integrations, `sessionwatch.integrations`: each module needs its own extra."""
COMMAND_LINE = "cli"
"""The command line and the demo, `sessionwatch.cli`: the top room, above the integrations."""
PACKAGES = (*LAYERS, KIT, INTEGRATIONS, COMMAND_LINE)
ROOT_FILES = frozenset({"__init__.py", "__main__.py", "aio.py", "py.typed"})
"""What the repository root contributes to the package: the package's own files, nothing else."""

BUILD_TIMEOUT = 180
_NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".pytest_cache",
    "*.db",
    "*.db-wal",
    "*.db-shm",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    """The wheel the install guide's command (`pip wheel --no-deps`) makes from a copy of the source tree."""
    source = tmp_path_factory.mktemp("source") / "sessionwatch"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCE)
    for target in TARGETS:  # a clean clone has none of them: git ignores them
        (source / target.output).unlink(missing_ok=True)
    out = tmp_path_factory.mktemp("dist")
    # An isolated build: the backend version pyproject.toml asks for, not whatever the venv has.
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
        cwd=source,
    )
    assert result.returncode == 0, (
        f"the wheel does not build:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    (built,) = out.glob("*.whl")
    with zipfile.ZipFile(built) as opened:
        yield opened


def _entries(wheel: zipfile.ZipFile) -> list[PurePosixPath]:
    return [PurePosixPath(name) for name in wheel.namelist()]


def _dist_info(wheel: zipfile.ZipFile) -> str:
    (info,) = {p.parts[0] for p in _entries(wheel) if p.parts[0].endswith(".dist-info")}
    return info


def test_the_wheel_installs_exactly_one_top_level_import_name(wheel: zipfile.ZipFile) -> None:
    info = _dist_info(wheel)
    tops = {p.parts[0] for p in _entries(wheel)} - {info}
    assert tops == {PACKAGE}
    top_level = wheel.read(f"{info}/top_level.txt").decode().split()
    assert top_level == [PACKAGE]


def test_the_wheel_holds_the_three_layers_the_kit_the_integrations_and_the_typed_marker(
    wheel: zipfile.ZipFile,
) -> None:
    names = set(wheel.namelist())
    for layer in PACKAGES:
        assert f"{PACKAGE}/{layer}/__init__.py" in names
        shipped = {n for n in names if n.startswith(f"{PACKAGE}/{layer}/") and n.endswith(".py")}
        in_repo = {
            f"{PACKAGE}/{layer}/{p.relative_to(REPO / layer).as_posix()}"
            for p in (REPO / layer).rglob("*.py")
        }
        assert shipped == in_repo, f"every module of {layer}/ ships, and only those"
    assert f"{PACKAGE}/py.typed" in names
    assert f"{PACKAGE}/__init__.py" in names


def test_the_build_writes_the_sync_facade_the_source_gives(wheel: zipfile.ZipFile) -> None:
    for target in TARGETS:
        shipped = wheel.read(f"{PACKAGE}/{target.output}").decode()
        assert shipped == generate(target), f"{target.output} is what {target.source} gives"
        assert shipped.startswith(f"# Generated from {target.source}")


RUNTIME_REQUIREMENTS = frozenset({"eventsourcing", "pydantic", "orjson"})
"""What `pip install sessionwatch` pulls: an embedding host gets these three and nothing else."""


def _requirements(wheel: zipfile.ZipFile) -> list[str]:
    metadata = wheel.read(f"{_dist_info(wheel)}/METADATA").decode()
    return [
        line.removeprefix("Requires-Dist: ")
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: ")
    ]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()


def test_a_plain_install_pulls_only_eventsourcing_pydantic_and_orjson(wheel: zipfile.ZipFile) -> None:
    unconditional = {_name(r) for r in _requirements(wheel) if ";" not in r}
    assert unconditional == RUNTIME_REQUIREMENTS


def test_every_host_integration_is_an_extra_of_its_own(wheel: zipfile.ZipFile) -> None:
    extras: dict[str, set[str]] = {}
    for requirement in _requirements(wheel):
        found = re.search(r"extra\s*==\s*[\"']([\w-]+)[\"']", requirement)
        if found:
            extras.setdefault(found.group(1), set()).add(_name(requirement))
    assert extras["mcp"] == {"mcp"}
    assert extras["openai-agents"] == {"openai-agents"}
    assert extras["langgraph"] == {"langgraph"}
    assert {"mcp", "openai-agents", "langgraph"} <= extras["dev"], "CI installs every extra it tests"


def test_the_wheel_carries_no_tests_benchmarks_or_repository_files(wheel: zipfile.ZipFile) -> None:
    info = _dist_info(wheel)
    for entry in _entries(wheel):
        if entry.parts[0] == info:
            continue
        inside = entry.parts[1:]
        assert inside, f"{entry} is a bare top-level file"
        if len(inside) == 1:
            assert inside[0] in ROOT_FILES, f"{entry} is repository-root junk inside the package"
        else:
            assert inside[0] in PACKAGES, f"{entry} is not part of a layer or of the kit"
        assert not {"tests", "bench", "ADR", ".ci", "conftest.py"} & set(entry.parts), entry


def test_the_wheel_imports_its_layers_from_itself(wheel: zipfile.ZipFile, tmp_path: Path) -> None:
    unpacked = tmp_path / "site"
    wheel.extractall(unpacked)
    probe = (
        "import sessionwatch, sessionwatch.domain.session, sessionwatch.projections.read_model,"
        " sessionwatch.adapters.entry.watch, sessionwatch.cli.cli\n"
        "for m in (sessionwatch, sessionwatch.domain.session, sessionwatch.projections.read_model,"
        " sessionwatch.adapters.entry.watch, sessionwatch.cli.cli):\n"
        "    print(m.__file__)\n"
        "print(callable(sessionwatch.open))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PYTHONPATH": str(unpacked), "PATH": ""},
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    *files, opened = result.stdout.splitlines()
    assert opened == "True"
    assert len(files) == 5
    for file in files:
        assert Path(file).is_relative_to(unpacked), f"{file} was not imported from the wheel"


def test_the_guides_install_the_file_the_documented_command_builds(wheel: zipfile.ZipFile) -> None:
    built = Path(str(wheel.filename)).name
    for page in (REPO / "README.md", REPO / "docs" / "index.md"):
        named = re.findall(r"dist/(sessionwatch-[^'\[\s`]+\.whl)", page.read_text(encoding="utf-8"))
        assert named, f"{page.name} shows how to install the built wheel"
        assert set(named) == {built}, page
