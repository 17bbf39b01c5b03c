"""A command hook that records what the host sent it: `python record_hook.py OUT.jsonl`.

Appends one JSON line per run to OUT.jsonl: the hook input read from stdin (parsed, or the raw text
when it is not JSON), the host's own environment variables (`CLAUDE_*`, `CODEX_*`) and how many
lines the transcript the input names held at that moment, then exits 0 printing nothing, so it never
changes what the host does. Standard library only: the real CLIs run
it with whatever Python the test names.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

_PREFIXES = ("CLAUDE", "CODEX")
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def main() -> int:
    """Record one hook run; never fail."""
    raw = sys.stdin.read()
    try:
        parsed: object = json.loads(raw)
    except ValueError:
        parsed = raw
    environ = {
        name: value
        for name, value in sorted(os.environ.items())
        if name.startswith(_PREFIXES) and not any(word in name for word in _SECRET_WORDS)
    }
    entry = {"input": parsed, "env": environ, "argv": sys.argv[2:], "transcript_lines": _lines(parsed)}
    with Path(sys.argv[1]).open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")
    return 0


def _lines(hook_input: object) -> int | None:
    """How many complete lines the transcript the input names held when the hook ran (None: no file yet).

    Claude Code writes its transcript a batch at a time, so what a hook can read depends on when it
    runs; the captured fixtures replay each hook against that many lines.
    """
    path = hook_input.get("transcript_path") if isinstance(hook_input, dict) else None
    if not isinstance(path, str):
        return None
    try:
        return Path(path).read_bytes().count(b"\n")
    except OSError:
        return None


if __name__ == "__main__":
    sys.exit(main())
