"""Claude Code for real, offline: a home of its own, the fake Anthropic API, recorded hooks, sessionwatch's.

`ClaudeCodeHost` gives one scenario a folder with a temporary HOME and `CLAUDE_CONFIG_DIR` (so
nothing of the machine's own configuration is read), a project folder, and config files pre-seeded
so the first-run dialogs (theme, onboarding, folder trust, the API key question, the project's MCP
server) never show. Every hook event Claude Code has is recorded by `record_hook.py` (user
settings); sessionwatch's own hook and MCP server are installed in the project by
`sessionwatch claude-code install`, with the store in the scenario's SQLite file.

It runs the CLI three ways: `claude -p PROMPT` (one prompt, headless), `claude -p` with stream-json
input and output (prompts sent as the run goes), and the TUI under tmux.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from hosts.processes import reap
from hosts.tmux import HostTimeout, Pane

import sessionwatch

RECORD_HOOK = Path(__file__).resolve().parent / "record_hook.py"
WATCH_HOOK = Path(__file__).resolve().parent / "watch_hook.py"
LEAD = "agent:lead:main"
"""The session that watches every scenario's session from its start (see `watch_hook.py`)."""
SESSIONWATCH = Path(sys.executable).parent / "sessionwatch"

HOOK_EVENTS = (
    "SessionStart",
    "SessionEnd",
    "Setup",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "Stop",
    "StopFailure",
    "PreCompact",
    "PostCompact",
    "Notification",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "PermissionRequest",
    "PermissionDenied",
    "SubagentStart",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "TeammateIdle",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "InstructionsLoaded",
    "CwdChanged",
)
"""Every hook event Claude Code 2.1.197 names, but those that change what it does when a hook
answers (worktree creation), need a matcher to fire at all (file changes), or repeat each
streamed message (message display)."""

API_KEY = "sk-ant-fake-sessionwatch-hosts-0000"
"""A dummy key; the config approves its last 20 characters, as Claude Code does when a person says yes."""

QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_UPDATES": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_GROWTHBOOK": "1",
    "DISABLE_INSTALLATION_CHECKS": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL": "1",
}
"""No update checks, telemetry, error reports, feature-flag fetches or surveys: the run stays offline."""


class ClaudeCodeHost:
    """One scenario's Claude Code: its folders, its environment, and the ways to run it."""

    def __init__(
        self,
        command: Path,
        root: Path,
        model_url: str,
        *,
        sessionwatch: bool = True,
        settings: Mapping[str, object] | None = None,
        project: Path | None = None,
        store: Path | None = None,
    ) -> None:
        self.command = command
        self.root = root
        self.model_url = model_url
        self.home = root / "home"
        self.config = root / "config"
        self.project = project or root / "project"
        self.hooks_file = root / "hooks.jsonl"
        self.store = store or root / "sessionwatch.db"
        self.acknowledged = root / "acknowledged.json"
        self.with_sessionwatch = sessionwatch
        self._extra_settings = dict(settings or {})

    # ------------------------------------------------------------------------------- set-up

    def prepare(self) -> Self:
        """Create the folders and config files; install sessionwatch's hook and server in the project."""
        for folder in (self.home, self.config, self.project, self.root / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        self.hooks_file.touch()
        recorder = f"{sys.executable} -S {RECORD_HOOK} {self.hooks_file}"
        hooks: dict[str, list[object]] = {
            event: [{"hooks": [{"type": "command", "command": recorder}]}] for event in HOOK_EVENTS
        }
        if self.with_sessionwatch:
            watcher = f"{sys.executable} {WATCH_HOOK} {self.store} {LEAD}"
            hooks["SessionStart"].append({"hooks": [{"type": "command", "command": watcher}]})
        settings: dict[str, object] = {
            "hooks": hooks,
            "enabledMcpjsonServers": ["sessionwatch"],
            "enableAllProjectMcpServers": True,
            "permissions": {"allow": ["Bash", "CronCreate", "CronDelete", "Agent", "Read", "Write", "Edit"]},
            **self._extra_settings,
        }
        write_json(self.config / "settings.json", settings)
        write_json(
            self.config / ".claude.json",
            {
                "hasCompletedOnboarding": True,
                "lastOnboardingVersion": "2.1.197",
                "theme": "dark",
                "numStartups": 5,
                "bypassPermissionsModeAccepted": True,
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                "projects": {
                    str(self.project): {
                        "hasTrustDialogAccepted": True,
                        "hasCompletedProjectOnboarding": True,
                        "enabledMcpjsonServers": ["sessionwatch"],
                        "projectOnboardingSeenCount": 5,
                    }
                },
            },
        )
        if self.with_sessionwatch:
            subprocess.run(
                [
                    str(SESSIONWATCH),
                    "claude-code",
                    "install",
                    "--project",
                    str(self.project),
                    "--db",
                    str(self.store),
                    "--program",
                    str(SESSIONWATCH),
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
        return self

    def environ(self, **extra: str) -> dict[str, str]:
        """Exactly the environment Claude Code runs with: its home, the fake API, no traffic."""
        return {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "ANTHROPIC_BASE_URL": self.model_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "SHELL": "/bin/bash",
            "TMPDIR": str(self.root / "tmp"),
            "CLAUDE_CODE_TMPDIR": str(self.root / "tmp"),
            **QUIET,
            **extra,
        }

    # --------------------------------------------------------------------------------- runs

    def print_run(self, prompt: str, *options: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """`claude -p PROMPT --output-format stream-json --verbose --include-hook-events`."""
        return subprocess.run(
            [
                str(self.command),
                "-p",
                prompt,
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
                *options,
            ],
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def run(self, *arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """`claude ARGUMENTS...` in the project, output captured (for `mcp list` and the like)."""
        return subprocess.run(
            [str(self.command), *arguments],
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def stream(self, *options: str) -> StreamJson:
        """`claude -p` reading stream-json prompts from stdin, writing stream-json events."""
        words = [str(self.command), "-p", "--input-format", "stream-json", "--output-format", "stream-json"]
        words += ["--verbose", "--include-hook-events", *options]
        return StreamJson(words, cwd=self.project, environ=self.environ())

    def tui(self, *options: str) -> Pane:
        """The interactive CLI in a tmux pane (enter it with `with`)."""
        return Pane(
            self.root / "tmux", [str(self.command), *options], cwd=self.project, environ=self.environ()
        )

    def lead_acknowledges(self) -> None:
        """The lead reads and acknowledges its notices now; `acknowledged.json` names them, at their heads."""
        with sessionwatch.open(str(self.store), sweep_on_open=False, cross_process_wakes=False) as watch:
            pending = watch.pending_notices(LEAD)
            watch.acknowledge(LEAD, pending)
            heads = {n.target: watch.session_status(n.target).state_version for n in pending}
        write_json(self.acknowledged, heads)

    def clean_up(self) -> list[str]:
        """End what is left of the run (an MCP server Claude Code did not stop); their command lines."""
        return reap(self.root)

    # ----------------------------------------------------------------------------- evidence

    def hook_inputs(self) -> list[dict[str, object]]:
        """Every hook input the recorder got, in order (each with the event's environment)."""
        return read_jsonl(self.hooks_file)

    def events(self) -> list[str]:
        """The names of the hook events fired so far, in order."""
        names = []
        for entry in self.hook_inputs():
            hook_input = entry.get("input")
            if isinstance(hook_input, dict):
                names.append(str(hook_input.get("hook_event_name")))
        return names

    def wait_for_events(self, event: str, count: int, *, timeout: float = 60) -> None:
        """Wait until hook `event` fired at least `count` times."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.events().count(event) >= count:
                return
            time.sleep(0.2)
        raise HostTimeout(
            f"{event} fired {self.events().count(event)} times, not {count}, in {timeout}s: {self.events()}"
        )

    def transcripts(self) -> list[Path]:
        """The sessions' own transcripts Claude Code wrote, oldest first."""
        found = [
            path for path in (self.config / "projects").rglob("*.jsonl") if "subagents" not in path.parts
        ]
        return sorted(found, key=lambda path: path.stat().st_mtime_ns)

    def subagent_transcripts(self) -> list[Path]:
        """The transcripts of sub-agents (`<session>/subagents/agent-*.jsonl`)."""
        return sorted(
            path for path in (self.config / "projects").rglob("*.jsonl") if "subagents" in path.parts
        )


class StreamJson:
    """A `claude -p --input-format stream-json` process: send prompts, collect its events."""

    def __init__(self, words: Sequence[str], *, cwd: Path, environ: Mapping[str, str]) -> None:
        self._process = subprocess.Popen(
            list(words),
            cwd=cwd,
            env=dict(environ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.events: list[dict[str, object]] = []
        self.arrivals: list[float] = []
        """When each event's line arrived (`time.perf_counter()` on the reader thread), index for index:
        the stream's events carry no time of their own."""
        self._arrived: queue.Queue[None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            arrived = time.perf_counter()
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                self.arrivals.append(arrived)  # first: a reader of `events[i]` finds `arrivals[i]`
                self.events.append(event)
                self._arrived.put(None)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def send(self, content: str | list[dict[str, object]]) -> None:
        """One user message: text, or content blocks (an image)."""
        assert self._process.stdin is not None
        message = {"type": "user", "message": {"role": "user", "content": content}}
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def results(self) -> int:
        """How many turns ended (`result` events) so far."""
        return sum(1 for event in self.events if event.get("type") == "result")

    def wait(self, test: Callable[[StreamJson], bool], *, timeout: float = 60, what: str = "") -> None:
        """Wait until `test(self)` holds."""
        deadline = time.monotonic() + timeout
        while not test(self):
            left = deadline - time.monotonic()
            if left <= 0:
                kinds = [(e.get("type"), e.get("subtype")) for e in self.events]
                raise HostTimeout(
                    f"stream-json: waited {timeout}s for {what or 'the condition'}; events: {kinds}"
                )
            try:
                self._arrived.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue

    def close(self, *, timeout: float = 30) -> None:
        """End stdin, then wait for the process to finish (killed if it does not)."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        self._reader.join(timeout=5)
        if self._process.stdout is not None:
            self._process.stdout.close()


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def environ_for_tests() -> Mapping[str, str]:
    """The test process's environment (for the few subprocesses that are not the host)."""
    return os.environ
