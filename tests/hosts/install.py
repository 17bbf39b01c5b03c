"""The pinned host CLIs, installed once from the npm registry into a cache folder outside the repository.

`$SESSIONWATCH_HOSTS_CACHE`, else `$XDG_CACHE_HOME/sessionwatch-hosts`, else
`~/.cache/sessionwatch-hosts`, holds one folder per pin (`claude-code@2.1.197`, `codex@0.171.0`).
An install runs under an exclusive file lock (parallel pytest-xdist workers and scenario threads
wait for the first one), into a scratch folder renamed into place only once the CLI answers
`--version` with the pinned version, so a broken or half-finished install is never reused.

Without node, npm or tmux the host suite skips with the reason; with `SESSIONWATCH_REQUIRE_HOSTS=1`
(CI) it fails instead.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REQUIRE_VARIABLE = "SESSIONWATCH_REQUIRE_HOSTS"
CACHE_VARIABLE = "SESSIONWATCH_HOSTS_CACHE"
TOOLS = ("node", "npm", "tmux")
INSTALL_TIMEOUT_S = 600


@dataclass(frozen=True)
class Pin:
    """One CLI at one version: its npm package, the command it installs, and how it names its version."""

    slug: str
    package: str
    version: str
    command: str

    @property
    def folder_name(self) -> str:
        """`<slug>@<version>`: the cache folder, and the label of fixtures it wrote."""
        return f"{self.slug}@{self.version}"

    @property
    def label(self) -> str:
        """`<slug>-<version>`: the fixture folder name under tests/data/hosts/."""
        return f"{self.slug}-{self.version}"


CLAUDE_CODE = Pin("claude-code", "@anthropic-ai/claude-code", "2.1.197", "claude")
CODEX = Pin("codex", "@openai/codex", "0.171.0", "codex")
PINS = (CLAUDE_CODE, CODEX)


class HostUnavailable(Exception):  # noqa: N818 - names the condition
    """The host suite cannot run here; the message says why (a missing tool, a failed install)."""


def required() -> bool:
    """Whether a missing host is a failure (`SESSIONWATCH_REQUIRE_HOSTS=1`) rather than a skip."""
    return os.environ.get(REQUIRE_VARIABLE, "").strip() not in {"", "0"}


def missing_tools() -> list[str]:
    """The tools of `TOOLS` that are not on PATH."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def cache_root() -> Path:
    """Where the pinned CLIs are installed."""
    configured = os.environ.get(CACHE_VARIABLE, "").strip()
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "sessionwatch-hosts"


def binary(pin: Pin, root: Path | None = None) -> Path:
    """The command the pin's package puts in `node_modules/.bin` (present only once installed)."""
    return _command_in((root or cache_root()) / pin.folder_name, pin)


def _command_in(folder: Path, pin: Pin) -> Path:
    return folder / "node_modules" / ".bin" / pin.command


def ensure(pin: Pin, root: Path | None = None) -> Path:
    """The pinned CLI's command, installing it first when the cache does not hold a working one."""
    missing = missing_tools()
    if missing:
        raise HostUnavailable(
            f"{', '.join(missing)} not found on PATH (the host suite needs {', '.join(TOOLS)})"
        )
    root = root or cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with (root / f".{pin.slug}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        command = binary(pin, root)
        if _answers(pin, command):
            return command
        _install(pin, root)
        if not _answers(pin, command):
            raise HostUnavailable(f"{pin.package}@{pin.version} installed but `{command} --version` fails")
        return command


def _answers(pin: Pin, command: Path) -> bool:
    """Whether `command --version` runs and names the pinned version."""
    if not command.exists():
        return False
    try:
        shown = subprocess.run(
            [str(command), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "DISABLE_AUTOUPDATER": "1"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return shown.returncode == 0 and pin.version in shown.stdout


def _install(pin: Pin, root: Path) -> None:
    """`npm install` into a scratch folder, then rename it into place (the old one, if any, removed)."""
    final = root / pin.folder_name
    scratch = root / f".{pin.folder_name}.partial"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    # --include=optional: the native binaries ship as platform-specific optional dependencies.
    # --foreground-scripts: Claude Code's postinstall puts its native binary in place of a stub.
    words = ["npm", "install", "--prefix", str(scratch), "--no-audit", "--no-fund", "--include=optional"]
    words += ["--foreground-scripts", "--loglevel=error", f"{pin.package}@{pin.version}"]
    try:
        done = subprocess.run(words, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise HostUnavailable(
            f"npm install {pin.package}@{pin.version} took over {INSTALL_TIMEOUT_S}s"
        ) from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise HostUnavailable(f"npm install {pin.package}@{pin.version} failed: {' / '.join(tail)}")
    _finish_claude_code(pin, scratch)
    shutil.rmtree(final, ignore_errors=True)
    scratch.rename(final)


def _finish_claude_code(pin: Pin, folder: Path) -> None:
    """Run Claude Code's postinstall when npm skipped it (the wrapper stays a stub without it)."""
    if pin != CLAUDE_CODE or _answers(pin, _command_in(folder, pin)):
        return
    package = folder / "node_modules" / "@anthropic-ai" / "claude-code"
    subprocess.run(["node", "install.cjs"], cwd=package, capture_output=True, timeout=120, check=False)
