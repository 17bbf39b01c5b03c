"""A SessionStart hook standing in for a lead that watches the session from its start.

`python watch_hook.py STORE WATCHER_KEY` reads Claude Code's SessionStart input and, for a session
that starts (`source: "startup"`), registers WATCHER_KEY as a watcher of the session's key in
STORE, the key sessionwatch's own hook derives. sessionwatch records a person's turn only into a
session someone watches, so without a watcher the hook's verdicts would leave no trace to count.
A session continued under a new id (`/clear`) is deliberately not watched again: a lead watching
the old key is what a person has. Prints nothing; exits 0 (a failure goes to stderr, one line).
"""

from __future__ import annotations

import json
import os
import sys

import sessionwatch
from sessionwatch.integrations.claude_code import project_dir, session_key


def main() -> int:
    """Register the watch for a starting session."""
    store, watcher = sys.argv[1], sys.argv[2]
    try:
        hook_input = json.loads(sys.stdin.read())
        if hook_input.get("source") != "startup":
            return 0
        key = session_key(project_dir(hook_input, os.environ), hook_input.get("session_id"))
        with sessionwatch.open(store, sweep_on_open=False, cross_process_wakes=False) as watch:
            watch.watch(watcher, key)
    except Exception as exc:  # noqa: BLE001 - a hook never fails the session
        print(f"watch_hook: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
