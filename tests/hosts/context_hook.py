"""A command hook that hands the model a line of context: `python context_hook.py TEXT`.

Prints `{"hookSpecificOutput": {"hookEventName": <the input's event>, "additionalContext": TEXT}}`,
the answer Claude Code and Codex both read from a SessionStart or UserPromptSubmit hook, so a
scenario can check where that context reaches the model. Standard library only.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    """Answer with the context; never fail."""
    try:
        event = json.loads(sys.stdin.read()).get("hook_event_name", "UserPromptSubmit")
    except ValueError:
        event = "UserPromptSubmit"
    print(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": sys.argv[1]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
