"""Every code block of the README and of `docs/` works as written.

- A ```python block runs as a script in a fresh temporary directory (its own process, no
  `$SESSIONWATCH_URL`), and must exit 0. When the next block after it (blank lines between only)
  is a ```text block, that block is exactly what the script prints.
- Fixture header: a line `<!-- docs-test: SESSIONWATCH_URL=postgres -->` right above a block runs
  it with `$SESSIONWATCH_URL` naming a fresh PostgreSQL schema of the test server (the block then
  calls `sessionwatch.open()` without a URL, as a host configured by its environment does).
- A ```console block's `$ ` lines and a ```sh block's lines are commands: each runs an executable
  the project has (`sessionwatch` with a real subcommand, `make` with a real target, `python`,
  `pip`, `.venv/bin/...`).
- A python block runs with the packages of every optional extra hidden, except the extras it says
  it needs: an install line `'.[extra]'` in the block or in the shell block right before it (a
  reader who installed only the core sees the block fail in the same way).
- A page's python blocks, run one after the other in one folder and then all again, each print what
  the page shows: blocks that share a file do not change each other's output, nor their own.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from stores import needs_postgres, postgres_url

from sessionwatch.cli.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
FENCE = re.compile(r"^( *)```(\w*)\s*$")
"""A fence, at the margin or indented inside a list item (its block is read dedented)."""
HEADER = re.compile(r"^<!-- docs-test: (.+?) -->$")
HEADERS = frozenset({"SESSIONWATCH_URL=postgres"})
EXECUTABLES = frozenset({"sessionwatch", "make", "python", "python3", "pip"})
SHELL_LANGS = frozenset({"console", "sh", "shell", "bash"})


REQUIREMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def _distribution(requirement: str) -> str:
    found = REQUIREMENT_NAME.match(requirement.strip())
    assert found is not None, requirement
    return re.sub(r"[-_.]+", "-", found.group(0)).lower()


def _requirements(distribution: str, extra: str | None = None) -> set[str]:
    """What `distribution` (with `extra`, else without any) requires, by distribution name."""
    try:
        lines = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:  # an optional dependency that is not installed
        return set()
    wanted = f'extra == "{extra}"' if extra else None
    found = set()
    for line in lines:
        requirement, _, marker = line.partition(";")
        if ("extra ==" in marker and (wanted is None or wanted not in marker)) or (
            wanted and wanted not in marker
        ):
            continue
        found.add(_distribution(requirement))
    return found


def _closure(distributions: set[str]) -> set[str]:
    """The distributions `distributions` bring, themselves included (their extras left out)."""
    seen: set[str] = set()
    todo = set(distributions)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo |= _requirements(name)
    return seen


def _modules_of(distributions: set[str]) -> set[str]:
    """The top-level modules the installed `distributions` provide."""
    owners = importlib.metadata.packages_distributions()
    return {module for module, names in owners.items() if {_distribution(n) for n in names} & distributions}


def _extras() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return sorted(set(project["project"]["optional-dependencies"]) - {"dev"})


def modules_without(extras: frozenset[str]) -> list[str]:
    """The modules that only the other extras bring: hidden from a block that needs just `extras`."""
    kept = _closure(
        _requirements("sessionwatch") | {d for e in extras for d in _requirements("sessionwatch", e)}
    )
    others = _closure({d for e in _extras() if e not in extras for d in _requirements("sessionwatch", e)})
    return sorted(_modules_of(others - kept) - {"sessionwatch"})


INSTALL_EXTRAS = re.compile(r"""'\.\[([\w,-]+)\]'""")
"""An install line's extras: `pip install '.[postgres,cli]'`."""
HIDING_RUNNER = """\
import runpy
import sys
from importlib.machinery import PathFinder

HIDDEN = frozenset(name for name in sys.argv[1].split(",") if name)


class NotInstalled(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return None
        return PathFinder.find_spec(name, path, target)


sys.meta_path[:] = [NotInstalled if finder is PathFinder else finder for finder in sys.meta_path]
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text, its header and the output it shows."""

    page: Path
    line: int
    lang: str
    code: str
    header: str | None = None
    output: str | None = None
    installs: str = ""
    """The shell block right before it, when one is (the reader's install step)."""

    @property
    def extras(self) -> frozenset[str]:
        """The extras the block says it needs, in itself or in the install step right before it."""
        named = INSTALL_EXTRAS.findall(self.code + self.installs)
        needed = {extra for group in named for extra in group.split(",")}
        if self.header == "SESSIONWATCH_URL=postgres":
            needed.add("postgres")
        return frozenset(needed)

    @property
    def hidden_modules(self) -> list[str]:
        """The modules of the extras the block does not say it needs (and none that one it names brings)."""
        return modules_without(self.extras)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opened = FENCE.match(lines[index])
        if not opened:
            index += 1
            continue
        indent = len(opened.group(1))
        end = next(i for i in range(index + 1, len(lines)) if lines[i].lstrip().startswith("```"))
        above = lines[index - 1].strip() if index > 0 else ""
        header = HEADER.match(above)
        found.append(
            Block(
                page,
                index + 1,
                opened.group(2),
                "\n".join(line[indent:] for line in lines[index + 1 : end]) + "\n",
                header.group(1) if header else None,
            )
        )
        index = end + 1
    return [
        _with_installs(
            _with_output(block, found[i + 1] if i + 1 < len(found) else None), found[i - 1] if i else None
        )
        for i, block in enumerate(found)
    ]


def _with_installs(block: Block, before: Block | None) -> Block:
    """A python block's install step: the shell block right before it on the page."""
    if block.lang != "python" or before is None or before.lang not in SHELL_LANGS:
        return block
    return replace(block, installs=before.code)


def _with_output(block: Block, following: Block | None) -> Block:
    """A python block's output is the ```text block right after it (blank lines between only)."""
    if block.lang != "python" or following is None or following.lang != "text":
        return block
    lines = block.page.read_text(encoding="utf-8").splitlines()
    end = next(i for i in range(block.line, len(lines)) if lines[i].lstrip().startswith("```"))
    between = lines[end + 1 : following.line - 1]
    if any(line.strip() for line in between):
        return block
    return replace(block, output=following.code)


ALL = [block for page in PAGES for block in blocks_of(page)]
PYTHON = [
    pytest.param(b, id=b.name, marks=[needs_postgres] if b.header else []) for b in ALL if b.lang == "python"
]
SHELL = [pytest.param(b, id=b.name) for b in ALL if b.lang in SHELL_LANGS]
PAGES_WITH_PYTHON = [
    pytest.param(page, id=str(page.relative_to(ROOT)))
    for page in PAGES
    if any(b.page == page and b.lang == "python" and not b.header for b in ALL)
]


def test_the_pages_hold_blocks_of_every_kind_the_test_checks() -> None:
    assert len(PYTHON) >= 10
    assert len(SHELL) >= 3
    assert any(b.output is not None for b in ALL)


def test_every_block_says_its_language_and_every_header_is_known() -> None:
    assert [b.name for b in ALL if not b.lang] == []
    assert {b.header for b in ALL if b.header} <= HEADERS


@pytest.mark.parametrize("block", PYTHON)
def test_the_python_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    if block.header == "SESSIONWATCH_URL=postgres":
        with postgres_url("sw_docs") as url:
            done = _run(script, {**env, "SESSIONWATCH_URL": url}, block.hidden_modules)
    else:
        done = _run(script, env, block.hidden_modules)
    assert done.returncode == 0, (
        f"{block.name} failed (extras it names: {sorted(block.extras)}):\n{done.stderr}"
    )
    if block.output is not None:
        assert done.stdout == block.output


@pytest.mark.parametrize("page", PAGES_WITH_PYTHON)
def test_a_pages_blocks_run_in_one_folder_twice_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    blocks = [b for b in ALL if b.page == page and b.lang == "python" and not b.header]
    for attempt in ("first", "again"):
        for block in blocks:
            script = tmp_path / "block.py"
            script.write_text(block.code, encoding="utf-8")
            done = _run(script, env)
            assert done.returncode == 0, (
                f"{block.name}, run {attempt} after the page's others:\n{done.stderr}"
            )
            if block.output is not None:
                assert done.stdout == block.output, f"{block.name}, run {attempt} after the page's others"


def test_a_block_that_names_no_extra_runs_without_the_packages_of_every_extra() -> None:
    hidden = modules_without(frozenset())
    assert {"psycopg", "hypothesis", "rich", "mcp", "agents", "langgraph", "opentelemetry"} <= set(hidden)
    assert not {"pydantic", "orjson", "eventsourcing"} & set(hidden)
    assert "hypothesis" not in modules_without(frozenset({"testing"}))


def _run(script: Path, env: dict[str, str], hidden: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run `script` in its folder, with the modules `hidden` as if they were not installed."""
    return subprocess.run(
        [sys.executable, "-c", HIDING_RUNNER, ",".join(hidden), script.name],
        cwd=script.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def commands_of(block: Block) -> list[list[str]]:
    """The commands of a shell block, as words, with env assignments and `# comments` left out."""
    if block.lang == "console":
        lines = [line[2:] for line in block.code.splitlines() if line.startswith("$ ")]
    else:
        lines = [
            line for line in block.code.splitlines() if line.strip() and not line.lstrip().startswith("#")
        ]
    commands = []
    for line in lines:
        words = shlex.split(line, comments=True)
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            words = words[1:]
        commands.append(words)
    return commands


def _subcommands() -> set[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name for action in actions for name in action.choices}


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):", text, re.MULTILINE))


@pytest.mark.parametrize("block", SHELL)
def test_the_shell_block_runs_only_commands_that_exist(block: Block) -> None:
    commands = commands_of(block)
    assert commands, f"{block.name} holds no command"
    subcommands, targets = _subcommands(), _make_targets()
    for words in commands:
        program = words[0]
        assert program in EXECUTABLES or program.startswith(".venv/bin/"), (block.name, words)
        if program == "sessionwatch":
            named = [
                w
                for i, w in enumerate(words[1:], 1)
                if not w.startswith(("-", "[")) and words[i - 1] != "--db"
            ]
            assert named, (block.name, words)
            assert named[0] in subcommands, (block.name, words)
        if program == "make":
            assert set(words[1:]) <= targets, (block.name, words)
        if program.startswith(".venv/bin/"):
            assert (ROOT / program).exists(), (block.name, words)


def test_the_cli_reference_page_is_generated_for_every_subcommand() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    hook_path = ROOT / "docs" / "hooks" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference", hook_path)
    assert spec is not None
    assert spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    assert hook.MARKER in page
    rendered: str = hook.on_page_markdown(page)
    assert hook.MARKER not in rendered
    for name in sorted(_subcommands()):
        assert f"## sessionwatch {name}\n" in rendered
        assert f"usage: sessionwatch {name} " in rendered
