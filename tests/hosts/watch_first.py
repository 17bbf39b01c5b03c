"""The harness's `sessionwatch` for Codex: a lead watches each session from its first hook, then it runs.

`python watch_first.py STORE WATCHER_KEY LOG ARGS...` stands in for the `sessionwatch` executable
that `sessionwatch codex install --program` writes into the hooks (a `sessionwatch` script in the
run's `bin/` calls it). For `codex hook`, it reads the hook input, has WATCHER_KEY watch the
session's key in STORE (the key sessionwatch's hook derives; watching again changes nothing), then
runs sessionwatch's command line (`sessionwatch ARGS...`, in this process) on the same input, and
appends to LOG one line saying the hook ran to its end (its event, what it printed, how long it
took). Codex runs the handlers of one event in parallel, so a lead's own hook could not be sure to
watch before sessionwatch's hook reads the turn: this wrapper makes "a lead watching the session
from its start" exact, and LOG lets a scenario wait until Codex's hooks are done. Any other
command is sessionwatch's command line as it is.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import sessionwatch
from sessionwatch.cli.cli import main as sessionwatch_main
from sessionwatch.integrations.codex import project_dir, session_key


def main() -> int:
    """Watch, then run sessionwatch's command line."""
    store, watcher, log, arguments = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4:]
    if arguments[:2] != ["codex", "hook"]:
        return sessionwatch_main(arguments)
    started = time.monotonic()
    stdin = sys.stdin.buffer.read()
    event = None
    try:
        hook_input = json.loads(stdin)
        event = hook_input.get("hook_event_name")
        key = session_key(project_dir(hook_input), hook_input.get("session_id"))
        with sessionwatch.open(store, sweep_on_open=False, cross_process_wakes=False) as watch:
            watch.watch(watcher, key)
    except Exception as exc:  # noqa: BLE001 - the real hook still runs; the failure is logged
        sys.stderr.write(f"watch_first: {type(exc).__name__}: {exc}\n")
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    printed = io.StringIO()
    real_stdout, sys.stdout = sys.stdout, printed
    try:
        code = sessionwatch_main(arguments)
    finally:
        sys.stdout = real_stdout
    sys.stdout.write(printed.getvalue())
    sys.stdout.flush()
    entry = {
        "event": event,
        "output": printed.getvalue(),
        "seconds": round(time.monotonic() - started, 2),
        "since_start": _since_start(),
    }
    with log.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")
    return code


def _since_start() -> float | None:
    """Seconds since this process started (its interpreter's start-up included), as the host waits."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return round(uptime - ticks / os.sysconf("SC_CLK_TCK"), 2)


if __name__ == "__main__":
    sys.exit(main())
