"""Helpers shared by the suites: reading the README's worked examples.

The fake clock and the recording waker ship in the test kit (`sessionwatch.testing`); import them
from there.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["readme_python_block"]

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_python_block(heading: str) -> str:
    """The one Python block of the README section under `heading` (it ends at the next heading)."""
    text = README.read_text(encoding="utf-8")
    start = text.find(f"\n{heading}\n")
    assert start >= 0, f"README.md has no {heading!r} section"
    section = text[start + len(heading) + 2 :]
    fences = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
    outside_code = fences.sub(lambda block: " " * len(block.group(0)), section)
    following = re.search(r"^#{1,3} ", outside_code, re.MULTILINE)  # a heading, not a comment in a block
    section = section[: following.start()] if following else section
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, f"the {heading!r} section holds {len(blocks)} Python blocks, not one"
    return str(blocks[0])
