"""Every install line that ships works: sessionwatch comes from its checkout or its built wheel.

sessionwatch is not on a package index, so no page, help text or error message may tell a user to
`pip install sessionwatch` by name; each documented install names the checkout (`.`) or the wheel
built from it, with extras the project has. Error messages for a missing extra name the extra's
own requirements, read from the installed metadata (`adapters/extras.py`).
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from sessionwatch.adapters.extras import extra_requirements, install_hint

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = frozenset(PROJECT["optional-dependencies"]) - {"dev"}
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
SHIPPED_CODE = sorted(
    path
    for folder in ("domain", "projections", "adapters", "integrations", "testing")
    for path in (ROOT / folder).rglob("*.py")
) + sorted(ROOT.glob("*.py"))
BY_NAME = re.compile(r"pip install\s+['\"]?sessionwatch\b")
INSTALL = re.compile(r"pip install ([^`\n#]+)")
CHECKOUT = re.compile(r"^\.(?:\[([\w,-]+)\])?$")
WHEEL = re.compile(r"^dist/sessionwatch-([\w.]+)-py3-none-any\.whl(?:\[([\w,-]+)\])?$")


@pytest.mark.parametrize("path", [*PAGES, *SHIPPED_CODE], ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_that_ships_installs_sessionwatch_from_a_package_index(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert BY_NAME.findall(text) == [], "sessionwatch is not published: install the checkout or its wheel"
    assert "sessionwatch[" not in text, "an extra is installed as '.[extra]' from the checkout"


def _install_arguments() -> list[tuple[str, str]]:
    return [
        (page.name, word)
        for page in PAGES
        for command in INSTALL.findall(page.read_text(encoding="utf-8"))
        for word in shlex.split(command)
        if not word.startswith("-")
    ]


def _extras_of(word: str) -> set[str] | None:
    """The extras an install of the checkout or of this version's wheel asks for; None for another."""
    checkout, wheel = CHECKOUT.match(word), WHEEL.match(word)
    if checkout:
        named = checkout.group(1)
    elif wheel and wheel.group(1) == PROJECT["version"]:
        named = wheel.group(2)
    else:
        return None
    return set((named or "").split(",")) - {""}


def test_every_documented_install_names_the_checkout_or_its_wheel_with_real_extras() -> None:
    arguments = _install_arguments()
    assert len(arguments) >= 10
    for page, word in arguments:
        extras = _extras_of(word)
        assert extras is not None, (page, word)
        assert extras <= EXTRAS, (page, word)


def _spelled(requirement: str) -> tuple[str, frozenset[str]]:
    """A requirement as its name and its set of version clauses (the metadata reorders them)."""
    found = re.fullmatch(r"([\w.\[\]-]+)(.*)", requirement.replace(" ", ""))
    assert found is not None, requirement
    return found.group(1), frozenset(found.group(2).split(",")) - {""}


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_a_missing_extra_is_named_by_its_own_requirements(extra: str) -> None:
    declared = {_spelled(r) for r in PROJECT["optional-dependencies"][extra]}
    assert {_spelled(r) for r in extra_requirements(extra)} == declared
    assert install_hint(extra).startswith("pip install '")
