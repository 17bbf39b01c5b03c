"""The README's asyncio example and the asyncio how-to run as written, and print what they say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from helpers import readme_python_block

from sessionwatch import notice_text

HOW_TO = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "asyncio.md"


def run(code: str, tmp_path: Path) -> list[str]:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.splitlines()


def test_the_readme_asyncio_example_reconciles_and_drains_one_notice(tmp_path: Path) -> None:
    printed = run(readme_python_block("### asyncio hosts"), tmp_path)
    assert printed[0] == "2"
    assert printed[1:] == [notice_text("agent:main:subagent:worker", 1)]


def test_the_asyncio_how_to_wakes_once_for_eleven_changes_and_drains_one_notice(tmp_path: Path) -> None:
    [block] = re.findall(
        r"^```python\n(.*?)^```$", HOW_TO.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL
    )
    printed = run(block, tmp_path)
    assert printed == ["['agent:main:main (session-state:agent:main:subagent:worker)']", "[0]"]
