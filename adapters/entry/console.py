"""The `sessionwatch` console script: the Claude Code hook's front end first, else the command line.

Claude Code runs `sessionwatch claude-code hook` before every prompt; this entry point reaches its
front end (`claude_code_front`, standard library only) without importing the command line's
parser and the modules behind it. Every other command line goes to `cli.main` unchanged.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run the hook's front end for `claude-code hook [--db URL]`, else the command line."""
    from sessionwatch.integrations.claude_code_front import hook_db  # noqa: PLC0415

    is_hook, db = hook_db(sys.argv[1:])
    if is_hook:
        from sessionwatch.integrations.claude_code_front import run  # noqa: PLC0415

        return run(db)
    from sessionwatch.adapters.entry.cli import main as cli_main  # noqa: PLC0415

    return cli_main()
