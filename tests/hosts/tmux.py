"""A terminal UI under tmux: start a command in a detached pane, type into it, read the screen.

Each `Pane` runs its own tmux server (a socket in the scenario's folder), so parallel scenarios
never share one and ending a scenario ends exactly its server. The command runs from a small shell
script with an explicit environment (`env -i`), so nothing of the test process's environment leaks
into the host under test.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

WIDTH = 200
HEIGHT = 50


class HostTimeout(Exception):  # noqa: N818 - names the condition
    """A host never did what a step waited for (a screen, a hook event); the message says what it did."""


class PaneTimeout(HostTimeout):
    """The screen never showed what a step waited for; the message holds the last screen."""


class Pane:
    """One tmux server with one pane running `command` in `cwd` with exactly `environ`."""

    def __init__(
        self, folder: Path, command: Sequence[str], *, cwd: Path, environ: Mapping[str, str]
    ) -> None:
        self.folder = folder
        self.socket = folder / "tmux.sock"
        folder.mkdir(parents=True, exist_ok=True)
        launcher = folder / "launch.sh"
        assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(environ.items()))
        launcher.write_text(
            f"#!/bin/sh\ncd {shlex.quote(str(cwd))} || exit 1\n"
            f"exec env -i {assignments} {shlex.join(command)}\n",
            encoding="utf-8",
        )
        launcher.chmod(0o755)
        self._launcher = launcher

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            check=check,
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "TERM": "xterm-256color"},
        )

    def __enter__(self) -> Self:
        self.tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "host",
            "-x",
            str(WIDTH),
            "-y",
            str(HEIGHT),
            str(self._launcher),
        )
        self.tmux("set-option", "-t", "host", "remain-on-exit", "on")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.tmux("kill-server", check=False)

    # ---------------------------------------------------------------------------------- typing

    def type(self, text: str) -> None:
        """Type `text` literally (no key names), without pressing Enter."""
        self.tmux("send-keys", "-t", "host", "-l", text)

    def keys(self, *names: str) -> None:
        """Press keys by tmux name: `Enter`, `Escape`, `Up`, `C-c`, `BTab`, ..."""
        for name in names:
            self.tmux("send-keys", "-t", "host", name)
            time.sleep(0.15)

    def submit(self, text: str, *, settle: float = 0.4) -> None:
        """Type `text`, wait until the screen shows it, then press Enter.

        Pressing Enter in the same instant as the last typed character can make a TUI take the
        keys for a paste, where Enter is a newline; waiting for the echo avoids that.
        """
        self.type(text)
        tail = text.strip()[-20:]
        if tail:
            self.wait_for(tail, timeout=15, what=f"the typed text {tail!r}")
        time.sleep(settle)
        self.keys("Enter")

    # --------------------------------------------------------------------------------- reading

    def screen(self) -> str:
        """The visible screen and some scrollback, lines joined where the terminal wrapped them."""
        return self.tmux("capture-pane", "-p", "-J", "-t", "host", "-S", "-300").stdout

    def dead(self) -> bool:
        """Whether the command in the pane has exited."""
        shown = self.tmux("display-message", "-p", "-t", "host", "#{pane_dead}", check=False)
        return shown.stdout.strip() == "1"

    def wait_for(self, found: str | Callable[[str], bool], *, timeout: float = 30.0, what: str = "") -> str:
        """Poll the screen until `found` (a substring or a test) holds; the screen, or `PaneTimeout`."""
        test = (lambda screen: found in screen) if isinstance(found, str) else found
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if test(screen):
                return screen
            time.sleep(0.25)
        label = what or (found if isinstance(found, str) else "the condition")
        raise PaneTimeout(f"waited {timeout:.0f}s for {label!r}; the screen was:\n{trimmed(screen)}")


def trimmed(screen: str, lines: int = 40) -> str:
    """The screen's last non-blank lines, right-stripped (for error messages)."""
    shown = [line.rstrip() for line in screen.splitlines() if line.strip()]
    return "\n".join(shown[-lines:])
