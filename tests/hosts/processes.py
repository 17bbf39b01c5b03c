"""Ending what a scenario left running: processes tied to its folder, by their own ids.

Codex's TUI starts a managed app-server daemon from a copy of itself under CODEX_HOME that outlives
the TUI (and a helper that outlives `codex app-server daemon stop`); Claude Code's MCP servers run
from the scenario's store path. Every process whose command line names the scenario's folder was
started for that scenario, so ending exactly those (SIGTERM, then SIGKILL) touches nothing else.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def processes_under(root: Path) -> list[int]:
    """The ids of the processes whose command line names `root` (this process excluded)."""
    marker = str(root).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker in command:
            found.append(int(entry.name))
    return found


def command_line(pid: int) -> str:
    """A process's command line, its arguments joined by spaces ("" once it is gone)."""
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def reap(root: Path, *, grace: float = 3.0) -> list[str]:
    """End the processes tied to `root`: SIGTERM, and SIGKILL for any still there after `grace` seconds.

    Returns the command lines of the processes it found (what the host left running).
    """
    pids = processes_under(root)
    found = [command_line(pid) for pid in pids]
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    for pid in pids:
        if _alive(pid):
            _signal(pid, signal.SIGKILL)
    return [line for line in found if line]


def _signal(pid: int, number: signal.Signals) -> None:
    try:
        os.kill(pid, number)
    except (ProcessLookupError, PermissionError):
        return


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().split(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
