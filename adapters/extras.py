"""How to install what an optional extra brings, read from the installed package's own metadata.

Shell code, used only on the error path of a missing optional package. The command it gives names
the extra's own requirements (`pip install 'psycopg[binary]<4,>=3.3'`), so it works wherever the
package came from (a checkout, a built wheel, an index) and never drifts from `pyproject.toml`.
"""

from __future__ import annotations

import re
import shlex
from importlib import metadata

_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def extra_requirements(extra: str) -> list[str]:
    """The requirements the extra `extra` adds, as the package metadata lists them (none if unknown)."""
    try:
        requires = metadata.requires("sessionwatch") or []
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return []
    found = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        named = _EXTRA_MARKER.search(marker)
        if named is not None and named.group(1) == extra:
            found.append(requirement.strip())
    return found


def install_hint(extra: str) -> str:
    """The command that installs the packages of `extra`, or where to find them if unknown."""
    requirements = extra_requirements(extra)
    if not requirements:
        return f"install sessionwatch with its {extra!r} extra"
    return "pip install " + " ".join(shlex.quote(requirement) for requirement in requirements)
