"""Codex for real, offline: a CODEX_HOME of its own, the fake Responses API, recorded hooks.

`CodexHost` gives one scenario a folder with a temporary HOME and CODEX_HOME whose `config.toml`
points a custom model provider (`wire_api = "responses"`) at the fake server, trusts the project,
switches off update checks, analytics and the sandbox (the fake model only runs `sleep`), runs the
TUI in its own process rather than through Codex's managed app-server daemon (which a scenario
can switch back on: the daemon copies 400 MB into CODEX_HOME and starts slowly), and
whose `hooks.json` runs `record_hook.py` for every lifecycle event Codex has. Codex runs a hook only
once a person trusted it (`/hooks`), which it records in config.toml as
`[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash = "sha256:<hex>"`: the
SHA-256 of the compact, key-sorted JSON of `{"event_name": <event in snake case>, "hooks":
[<the handler with async, command, timeout and type>]}`. The harness writes those entries itself,
so the hooks run exactly as for a person who trusted them.

With `sessionwatch` (the default), sessionwatch itself is installed as a person would:
`sessionwatch codex install --project PROJECT --codex-home CODEX_HOME --db STORE`, its hook,
MCP server and trust entries written by the installer, and a lead (`LEAD`) watches each session
from its first hook (`watch_first.py`, run as the installed `--program`).

It runs `codex exec PROMPT` (headless, `--json` events on stdout) and the TUI under tmux.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from hosts.claude_host import LEAD, RECORD_HOOK, SESSIONWATCH, read_jsonl, write_json
from hosts.processes import reap
from hosts.tmux import HostTimeout, Pane

HOOK_EVENTS = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "Stop",
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
)
"""The lifecycle events Codex 0.171 documents for hooks."""

MODEL = "gpt-5.4"
PROVIDER = "fakeresponses"
SESSION_END_TIMEOUT_S = 3
"""Codex clamps a SessionEnd hook's timeout to 3 seconds (and hashes the clamped value)."""
WATCH_FIRST = Path(__file__).resolve().parent / "watch_first.py"
SETTLE_TIMEOUT_S = 60
"""How long a run waits at most for sessionwatch's last hooks once Codex ended."""


class CodexHost:
    """One scenario's Codex: its folders, its environment, and the ways to run it."""

    def __init__(
        self,
        command: Path,
        root: Path,
        model_url: str,
        *,
        extra_config: str = "",
        daemon: bool = False,
        sessionwatch: bool = True,
        project: Path | None = None,
        store: Path | None = None,
        lead: str = LEAD,
    ) -> None:
        self.command = command
        self.root = root
        self.model_url = model_url
        self.home = root / "home"
        self.codex_home = root / "codex-home"
        self.project = project or root / "project"
        self.hooks_file = root / "hooks.jsonl"
        self.store = store or root / "sessionwatch.db"
        self.sessionwatch_log = root / "sessionwatch-hooks.jsonl"
        """One line per run of sessionwatch's hook that ended (written by `watch_first.py`)."""
        self.with_sessionwatch = sessionwatch
        self.lead = lead
        self._extra_config = extra_config
        self.daemon = daemon
        """Let the TUI start Codex's managed app-server daemon (the default), or run in its own process."""

    def prepare(self) -> Self:
        """Write config.toml and hooks.json; create the folders."""
        for folder in (self.home, self.codex_home, self.project, self.root / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        self.hooks_file.touch()
        recorder = f"{sys.executable} -S {RECORD_HOOK} {self.hooks_file}"
        hooks: dict[str, list[dict[str, Any]]] = {
            event: [{"hooks": [command_handler(recorder, event)]}] for event in HOOK_EVENTS
        }
        self.write_hooks(hooks)
        return self

    def write_hooks(self, hooks: Mapping[str, list[dict[str, Any]]]) -> None:
        """Write hooks.json, and config.toml with every handler in it trusted."""
        path = self.codex_home / "hooks.json"
        write_json(path, {"hooks": dict(hooks)})
        entries = []
        for event, groups in hooks.items():
            for g, group in enumerate(groups):
                handlers: list[dict[str, Any]] = group["hooks"]
                for h, handler in enumerate(handlers):
                    key = f"{path}:{snake_case(event)}:{g}:{h}"
                    entries.append(
                        f'\n[hooks.state."{key}"]\ntrusted_hash = "{trust_hash(event, handler)}"\n'
                    )
        trusted = "".join(entries)
        (self.codex_home / "config.toml").write_text(self.config_toml() + trusted, encoding="utf-8")
        if self.with_sessionwatch:
            self.install_sessionwatch()

    def install_sessionwatch(self) -> None:
        """`sessionwatch codex install` into the project and the home, the hook run through `watch_first`."""
        program = self.root / "bin" / "sessionwatch"
        program.parent.mkdir(parents=True, exist_ok=True)
        words = [sys.executable, WATCH_FIRST, self.store, self.lead, self.sessionwatch_log]
        program.write_text(f'#!/bin/sh\nexec {" ".join(map(str, words))} "$@"\n', encoding="utf-8")
        program.chmod(0o755)
        subprocess.run(
            [
                str(SESSIONWATCH),
                "codex",
                "install",
                "--project",
                str(self.project),
                "--codex-home",
                str(self.codex_home),
                "--db",
                str(self.store),
                "--program",
                str(program),
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def config_toml(self) -> str:
        """The home's config.toml: the fake provider, a trusted project, no traffic of its own."""
        return (
            f'model = "{MODEL}"\n'
            f'model_provider = "{PROVIDER}"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            "check_for_update_on_startup = false\n"
            "disable_paste_burst = true\n"
            "\n"
            f"[model_providers.{PROVIDER}]\n"
            'name = "fake responses"\n'
            f'base_url = "{self.model_url}/v1"\n'
            'wire_api = "responses"\n'
            "requires_openai_auth = false\n"
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
            "\n"
            "[analytics]\n"
            "enabled = false\n"
            "\n"
            "[features]\n"
            f"daemon_auto_start = {'true' if self.daemon else 'false'}\n"
            "\n"
            f'[projects."{self.project}"]\n'
            'trust_level = "trusted"\n'
            f"{self._extra_config}"
        )

    def environ(self, **extra: str) -> dict[str, str]:
        """Exactly the environment Codex runs with."""
        return {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "SHELL": "/bin/bash",
            "NO_COLOR": "1",
            "TMPDIR": str(self.root / "tmp"),
            **extra,
        }

    # --------------------------------------------------------------------------------- runs

    def exec_run(
        self, *arguments: str, timeout: float = 120, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`codex exec --json --skip-git-repo-check ARGUMENTS...`."""
        words = [str(self.command), "exec", "--json", "--skip-git-repo-check", *arguments]
        return subprocess.run(
            words,
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            check=False,
        )

    def tui(self, *options: str) -> Pane:
        """The interactive CLI in a tmux pane (enter it with `with`)."""
        words = [str(self.command), *options]
        return Pane(self.root / "tmux", words, cwd=self.project, environ=self.environ())

    def use_daemon(self) -> None:
        """Switch the TUI to Codex's default: a managed app-server daemon it connects to."""
        self.daemon = True
        hooks = json.loads((self.codex_home / "hooks.json").read_text(encoding="utf-8"))["hooks"]
        self.write_hooks(hooks)

    def stop_daemon(self) -> None:
        """`codex app-server daemon stop`: ends the sessions the TUI left running (their SessionEnd runs)."""
        subprocess.run(
            [str(self.command), "app-server", "daemon", "stop"],
            cwd=self.project,
            env=self.environ(),
            capture_output=True,
            timeout=60,
            check=False,
        )

    def clean_up(self) -> list[str]:
        """Stop the daemon, let sessionwatch's last hooks end, end what is left of the run, drop the
        daemon's 400 MB copy of Codex.

        Returns the command lines of the processes that were still running.
        """
        if (self.codex_home / "packages").exists():
            self.stop_daemon()
        self.settle_hooks()
        left = reap(self.root)
        shutil.rmtree(self.codex_home / "packages", ignore_errors=True)
        return left

    # ----------------------------------------------------------------------------- evidence

    def hook_inputs(self) -> list[dict[str, object]]:
        """Every hook input the recorder got, in order."""
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

    def sessionwatch_runs(self, event: str) -> int:
        """How many runs of sessionwatch's hook for `event` have ended."""
        return sum(1 for entry in read_jsonl(self.sessionwatch_log) if entry.get("event") == event)

    def wait_for_hooks(self, event: str, count: int, *, timeout: float = 60) -> None:
        """Wait until `event` fired `count` times and, with sessionwatch, its hook ended as often."""
        self.wait_for_events(event, count, timeout=timeout)
        deadline = time.monotonic() + timeout
        while self.with_sessionwatch and self.sessionwatch_runs(event) < count:
            if time.monotonic() > deadline:
                raise HostTimeout(
                    f"sessionwatch's {event} hook ended {self.sessionwatch_runs(event)} times, not {count}"
                )
            time.sleep(0.2)

    def settle_hooks(self, *, timeout: float = SETTLE_TIMEOUT_S) -> None:
        """Wait (at most `timeout` seconds) until sessionwatch's hook ended once for each `SessionEnd`.

        The installed `SessionEnd` handler runs the hook in the background (Codex returns and exits
        without waiting), so a session's end does not mean its last hook ended; the run is read, and
        its processes ended, only after that. A hook that never ends is not waited for longer: the
        row then shows what it failed to record.
        """
        if not self.with_sessionwatch:
            return
        deadline = time.monotonic() + timeout
        while self.sessionwatch_runs("SessionEnd") < self.events().count("SessionEnd"):
            if time.monotonic() > deadline:
                return
            time.sleep(0.2)

    def rollouts(self) -> list[Path]:
        """The rollouts of sessions a person started (not sub-agents' or reviews'), oldest first."""
        return [path for path in self._all_rollouts() if not is_subagent_rollout(path)]

    def subagent_rollouts(self) -> list[Path]:
        """The rollouts of sub-agents and reviews (`session_meta.payload.source` names a sub-agent)."""
        return [path for path in self._all_rollouts() if is_subagent_rollout(path)]

    def _all_rollouts(self) -> list[Path]:
        return sorted((self.codex_home / "sessions").rglob("rollout-*.jsonl"))


def is_subagent_rollout(path: Path) -> bool:
    """Whether a rollout's `session_meta` says a sub-agent (or a review) wrote it."""
    with path.open(encoding="utf-8") as rollout:
        first = rollout.readline()
    try:
        meta = json.loads(first)
    except ValueError:
        return False
    payload = meta.get("payload") if isinstance(meta, dict) else None
    if not isinstance(payload, dict):
        return False
    source = payload.get("source")
    return payload.get("thread_source") == "subagent" or (isinstance(source, dict) and "subagent" in source)


def command_handler(command: str, event: str) -> dict[str, object]:
    """A command hook handler with an explicit timeout (SessionEnd's as Codex clamps it)."""
    timeout = SESSION_END_TIMEOUT_S if event == "SessionEnd" else 30
    return {"type": "command", "command": command, "timeout": timeout}


def snake_case(event: str) -> str:
    """`UserPromptSubmit` -> `user_prompt_submit`: how Codex names an event in a trust key."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_hash(event: str, handler: Mapping[str, object], matcher: str | None = None) -> str:
    """The `trusted_hash` Codex records when a person trusts this handler."""
    entry = {"async": False, **{k: handler[k] for k in ("command", "timeout", "type")}}
    identity: dict[str, object] = {"event_name": snake_case(event), "hooks": [entry]}
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
