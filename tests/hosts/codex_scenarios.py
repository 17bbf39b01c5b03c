"""Codex 0.171.0 scenarios: what a person does, and the human turns that makes.

Each drive step runs the real CLI (`codex exec`, or its TUI under tmux) against the fake Responses
API. Trigger words in a prompt make the fake model call a tool: `exec_command` running `sleep` to
keep the agent busy, `request_user_input` (a Plan-mode question), `spawn_agent` (a sub-agent), and
`update_goal` to finish a goal. A TUI session ends with Ctrl-C twice.

sessionwatch is installed in the project by `sessionwatch codex install` (its hook follows the
session's rollout) with a lead watching each session from its first hook, so every row compares
what a person did with what the hook recorded and what the provider counts. `prompt_hooks` pins how
often Codex runs a `UserPromptSubmit` hook. `hook_wrong` and `provider_wrong` name what sessionwatch
cannot get right, and why; the tests expect exactly those rows to fail.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hosts.claude_host import write_json
from hosts.codex_host import CodexHost, command_handler
from hosts.fake_models import ToolCall
from hosts.images import tiny_png
from hosts.install import CODEX
from hosts.scenario import Scenario, ScenarioBroken
from hosts.tmux import Pane, PaneTimeout, trimmed

RECORD_MCP_SERVER = Path(__file__).resolve().parent / "record_mcp_server.py"
CONTEXT_HOOK = Path(__file__).resolve().parent / "context_hook.py"
SESSION_CONTEXT = "context from a session start hook"
PROMPT_CONTEXT = "context from a prompt hook"
READY = "? for shortcuts"
MODEL = "gpt-5.4"
PROMPT_MARK = "\u203a"
"""The mark Codex draws before the composer's text (a single right-pointing angle quotation mark)."""
BUSY = "esc to interrupt"

SLEEP = {"SLEEPY": ToolCall("exec_command", {"cmd": "sleep 6"})}
QUESTION = {
    "ASKME": ToolCall(
        "request_user_input",
        {
            "questions": [
                {
                    "id": "color",
                    "header": "Color",
                    "question": "Which color should the banner use?",
                    "options": [
                        {"label": "Red (Recommended)", "description": "warm"},
                        {"label": "Blue", "description": "cool"},
                    ],
                }
            ]
        },
    )
}
SUBAGENT = {
    "SPAWN": ToolCall("spawn_agent", {"message": "look at the readme and say ok"}, namespace="multi_agent_v1")
}
SESSIONS_TOOL = {"LISTME": ToolCall("sessions_list", {}, namespace="mcp__sessionwatch")}
"""The model calls sessionwatch's own MCP tool (`sessions_list`), as Codex offers it."""
GOAL = {'<codex_internal_context source="goal">': ToolCall("update_goal", {"status": "complete"})}


# --------------------------------------------------------------------------------------- helpers


@contextmanager
def tui(host: CodexHost, *options: str) -> Iterator[Pane]:
    """The TUI, ready for input; left with Ctrl-C twice once the steps are done.

    The TUI is a client of a managed app-server daemon that Codex starts on first use: leaving the
    TUI only disconnects it, and the session ends (SessionEnd) when the daemon is stopped.
    """
    with host.tui(*options) as pane:
        try:
            pane.wait_for(READY, timeout=60, what="the Codex prompt")
            yield pane
            pane.wait_for(lambda screen: BUSY not in screen, timeout=30, what="an idle prompt")
            _quit(pane)
        except Exception as exc:
            raise ScenarioBroken(f"{exc}\nthe screen was:\n{trimmed(pane.screen())}") from exc
    if host.daemon:
        write_json(host.root / "events-at-exit.json", host.events())
        ended = host.events().count("SessionEnd")
        host.stop_daemon()
        host.wait_for_events("SessionEnd", ended + 1, timeout=30)


def _quit(pane: Pane, attempts: int = 6) -> None:
    """Ctrl-C until Codex exits (the first clears or arms, the second quits; a key can be lost)."""
    for _ in range(attempts):
        pane.keys("C-c")
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            if pane.dead():
                return
            time.sleep(0.1)
    raise ScenarioBroken("Codex did not exit")


def composer(screen: str) -> str:
    """What the composer holds: its prompt line (`PROMPT_MARK`, `!` in shell mode) above the status line."""
    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    status = max((i for i, line in enumerate(lines) if line.lstrip().startswith(MODEL)), default=len(lines))
    above = [line.strip() for line in lines[:status] if line.strip().startswith((PROMPT_MARK, "!"))]
    return above[-1][1:].strip() if above else ""


def submit(pane: Pane, text: str) -> None:
    """Type `text` and press Enter until the composer lets go of it (a key pressed while Codex is
    still starting can be dropped)."""
    pane.submit(text)
    tail = text.strip()[-20:]
    for _ in range(3):
        try:
            pane.wait_for(
                lambda screen: tail not in composer(screen), timeout=4, what="the prompt to be taken"
            )
        except PaneTimeout:
            pane.keys("Enter")
            continue
        return
    raise ScenarioBroken(f"Codex never took the prompt {text!r}:\n{trimmed(pane.screen())}")


def turn(host: CodexHost, pane: Pane, text: str) -> None:
    """Type a prompt and wait until its turn ends (one more Stop, every Stop hook done)."""
    stops = host.events().count("Stop")
    submit(pane, text)
    host.wait_for_hooks("Stop", stops + 1, timeout=60)
    time.sleep(0.5)  # Codex marks the turn done once its hooks returned


def busy(pane: Pane) -> None:
    """Wait until the agent runs a tool."""
    pane.wait_for("background terminal running", timeout=30, what="a running command")


def exec_ok(host: CodexHost, *arguments: str, stdin: str | None = None) -> None:
    """`codex exec ...`, which must succeed."""
    done = host.exec_run(*arguments, stdin=stdin)
    if done.returncode != 0 or '"turn.completed"' not in done.stdout:
        raise ScenarioBroken(f"codex exec {arguments} failed: {done.stdout[-800:]} {done.stderr[-800:]}")


def git_repository(host: CodexHost, *, changed: bool) -> None:
    """Make the project a git repository with one commit (and an uncommitted change)."""
    (host.project / "notes.txt").write_text("first\n", encoding="utf-8")
    identity = ["-c", "user.email=hosts@example.invalid", "-c", "user.name=hosts"]
    for words in (["init", "-q"], ["add", "."], [*identity, "commit", "-qm", "first"]):
        subprocess.run(["git", *words], capture_output=True, check=True, cwd=host.project)
    if changed:
        (host.project / "notes.txt").write_text("second\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------- drives


def exec_typed(host: CodexHost) -> None:
    exec_ok(host, "hello there")


def exec_stdin(host: CodexHost) -> None:
    exec_ok(host, "-", stdin="a prompt piped on stdin\n")


def exec_image(host: CodexHost) -> None:
    (host.project / "screenshot.png").write_bytes(tiny_png())
    exec_ok(host, "--image=screenshot.png", "what is in this picture")


def exec_resumed(host: CodexHost) -> None:
    exec_ok(host, "first prompt")
    exec_ok(host, "resume", "--last", "second prompt")


def exec_agents_md(host: CodexHost) -> None:
    (host.project / "AGENTS.md").write_text("# Rules\n\nAnswer briefly.\n", encoding="utf-8")
    exec_ok(host, "hello there")


def exec_untrusted_hooks(host: CodexHost) -> None:
    (host.codex_home / "config.toml").write_text(host.config_toml(), encoding="utf-8")  # no trust entries
    exec_ok(host, "hello there")


def exec_hook_context(host: CodexHost) -> None:
    hooks = json.loads((host.codex_home / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    for event, text in (("SessionStart", SESSION_CONTEXT), ("UserPromptSubmit", PROMPT_CONTEXT)):
        command = f"{sys.executable} -S {CONTEXT_HOOK} {shlex.quote(text)}"
        hooks[event].append({"hooks": [command_handler(command, event)]})
    host.write_hooks(hooks)
    exec_ok(host, "hello there")


def tui_daemon(host: CodexHost) -> None:
    host.use_daemon()
    with tui(host) as pane:
        pane.wait_for(lambda screen: "Waiting for startup" not in screen, timeout=30)
        time.sleep(2)  # the daemon answers after the first screen is drawn
        turn(host, pane, "hello there")


def tui_typed(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "hello there")


def tui_two(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "first prompt")
        turn(host, pane, "second prompt")


def tui_xml_tag(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "<bug_report>the build fails on main</bug_report>")


def tui_agents_md(host: CodexHost) -> None:
    (host.project / "AGENTS.md").write_text("# Rules\n\nAnswer briefly.\n", encoding="utf-8")
    with tui(host) as pane:
        turn(host, pane, "hello there")


def tui_steer(host: CodexHost) -> None:
    with tui(host) as pane:
        stops = host.events().count("Stop")
        submit(pane, "SLEEPY first prompt")
        busy(pane)
        submit(pane, "typed while the command runs")  # Enter while busy steers the running turn
        host.wait_for_events("Stop", stops + 1, timeout=60)


def tui_queued(host: CodexHost) -> None:
    with tui(host) as pane:
        stops = host.events().count("Stop")
        submit(pane, "SLEEPY first prompt")
        busy(pane)
        _queue(pane, "queued for the next turn")
        host.wait_for_events("Stop", stops + 2, timeout=60)


def tui_requeued(host: CodexHost) -> None:
    with tui(host) as pane:
        stops = host.events().count("Stop")
        submit(pane, "SLEEPY first prompt")
        busy(pane)
        _queue(pane, "queued then pulled back")
        pane.keys("M-Up")  # pulls the last queued message back into the composer
        pane.wait_for(lambda screen: "Queued follow-up" not in screen, timeout=10)
        pane.keys("Tab")  # and queues it again, unchanged
        pane.wait_for("Queued follow-up", timeout=10)
        host.wait_for_events("Stop", stops + 2, timeout=60)


def _queue(pane: Pane, text: str) -> None:
    pane.type(text)
    pane.wait_for(text, timeout=10)
    time.sleep(0.3)
    pane.keys("Tab")
    pane.wait_for("Queued follow-up", timeout=10)


def tui_shell(host: CodexHost) -> None:
    with tui(host) as pane:
        pane.type("!")
        pane.wait_for("Shell mode", timeout=15, what="shell mode")  # typed on before it shows, `!` lands late
        submit(pane, "ls -a")
        pane.wait_for("ran ls -a", timeout=30)


def tui_init(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "/init")


def tui_compact(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "hello there")
        submit(pane, "/compact")
        host.wait_for_events("PostCompact", 1, timeout=60)


def tui_status(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "hello there")
        submit(pane, "/status")
        pane.wait_for("Context window", timeout=20)
        pane.keys("Escape")


def tui_goal(host: CodexHost) -> None:
    with tui(host) as pane:
        submit(pane, "/goal ship the release notes")
        host.wait_for_events("Stop", 1, timeout=60)  # the goal's turn, which the fake model completes
        pane.wait_for(lambda screen: "Pursuing goal" not in screen, timeout=30)


def tui_review(host: CodexHost) -> None:
    git_repository(host, changed=True)
    with tui(host) as pane:
        submit(pane, "/review")
        pane.wait_for("Review uncommitted changes", timeout=20)
        pane.keys("Down", "Enter")  # the second preset: the uncommitted changes
        host.wait_for_events("UserPromptSubmit", 1, timeout=60)
        pane.wait_for(lambda screen: BUSY not in screen and READY in screen, timeout=60)


def tui_plan_answer(host: CodexHost) -> None:
    with tui(host) as pane:
        _plan_mode(pane)
        stops = host.events().count("Stop")
        submit(pane, "ASKME which color for the banner")
        pane.wait_for("None of the above", timeout=30)
        pane.keys("Down", "Down", "Enter")  # "None of the above", then type the answer as a note
        pane.wait_for("Add notes", timeout=10)
        pane.submit("green, like the logo")
        host.wait_for_events("Stop", stops + 1, timeout=60)


def _plan_mode(pane: Pane) -> None:
    """Shift-Tab until the footer says Plan mode (a key pressed while the TUI starts can be lost)."""
    for _ in range(4):
        pane.keys("BTab")
        try:
            pane.wait_for("Plan mode", timeout=3)
        except PaneTimeout:
            continue
        return
    raise ScenarioBroken(f"Shift-Tab never switched to Plan mode:\n{trimmed(pane.screen())}")


def tui_subagent(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "SPAWN a helper for the readme")
        host.wait_for_events("SubagentStop", 1, timeout=60)


def tui_image(host: CodexHost) -> None:
    image = host.project / "screenshot.png"
    image.write_bytes(tiny_png())
    with tui(host) as pane:
        stops = host.events().count("Stop")
        _paste_image(pane, str(image))
        time.sleep(0.3)
        pane.keys("Enter")
        host.wait_for_events("Stop", stops + 1, timeout=60)


def _paste_image(pane: Pane, path: str) -> None:
    """Paste an image's path (bracketed), which the composer turns into `[Image #1]`.

    Right after start the composer may take the paste as plain text; then it is cleared and pasted again.
    """
    for _ in range(3):
        pane.tmux("set-buffer", "--", path)
        pane.tmux("paste-buffer", "-p", "-t", "host")
        try:
            pane.wait_for("[Image #1]", timeout=4)
        except PaneTimeout:
            pane.keys("C-u")
            time.sleep(1.5)
            continue
        return
    raise ScenarioBroken(f"the pasted image never became [Image #1]:\n{trimmed(pane.screen())}")


def tui_new(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "before new")
        submit(pane, "/new")
        pane.wait_for(lambda screen: "before new" not in screen, timeout=30, what="a fresh session")
        turn(host, pane, "after new")  # the new session's SessionStart runs with its first turn


def tui_interrupt(host: CodexHost) -> None:
    with tui(host) as pane:
        submit(pane, "SLEEPY first prompt")
        busy(pane)
        pane.keys("Escape")
        pane.wait_for(lambda screen: BUSY not in screen, timeout=20)


def tui_mcp_server(host: CodexHost) -> None:
    config = host.codex_home / "config.toml"
    server = (
        "\n[mcp_servers.recorder]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(RECORD_MCP_SERVER))}, {json.dumps(str(host.root / 'mcp-server.jsonl'))}]\n"
    )
    config.write_text(config.read_text(encoding="utf-8") + server, encoding="utf-8")
    with tui(host) as pane:
        turn(host, pane, "hello there")
        deadline = time.monotonic() + 20
        while not (host.root / "mcp-server.jsonl").exists():
            if time.monotonic() > deadline:
                raise ScenarioBroken("Codex never started the MCP server")
            time.sleep(0.2)


def tui_mcp_tools(host: CodexHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "hello there")  # Codex offers a server's tools once it started, not before
        turn(host, pane, "LISTME which sessions are there")


# ------------------------------------------------------------------------------------- scenarios

CODEX_VERSION = CODEX.version
TUI = "TUI (tmux)"
EXEC = "codex exec"

_NO_TRACE = (
    "Codex {version} leaves no trace of {what}: it runs no hook and writes nothing to the rollout, "
    "history.jsonl or its state databases, so neither the hook nor the provider can count it"
)


def _scenario(
    name: str, how: str, truth: int, drive: Callable[[CodexHost], None], prompt_hooks: int, **more: Any
) -> Scenario:
    return Scenario(
        name=name, host="codex", how=how, truth=truth, drive=drive, prompt_hooks=prompt_hooks, **more
    )


SCENARIOS: tuple[Scenario, ...] = (
    _scenario("cx-exec-typed", EXEC, 1, exec_typed, 1, seconds=5, shape="typed prompt (headless)"),
    _scenario("cx-exec-stdin", EXEC + " -", 1, exec_stdin, 1, seconds=5, shape="prompt piped on stdin"),
    _scenario("cx-exec-image", EXEC + " --image", 1, exec_image, 1, seconds=5, shape="prompt with an image"),
    _scenario("cx-exec-resumed", EXEC + " resume", 2, exec_resumed, 2, seconds=8, shape="a session resumed"),
    _scenario("cx-exec-agents-md", EXEC, 1, exec_agents_md, 1, seconds=5, shape="AGENTS.md in the project"),
    _scenario(
        "cx-exec-untrusted-hooks",
        EXEC,
        1,
        exec_untrusted_hooks,
        0,
        seconds=5,
        shape="hooks.json not trusted",
        sessionwatch=False,
    ),
    _scenario(
        "cx-exec-hook-context", EXEC, 1, exec_hook_context, 1, seconds=5, shape="hook context to the model"
    ),
    _scenario("cx-tui-typed", TUI, 1, tui_typed, 1, seconds=10, shape="typed prompt"),
    _scenario(
        "cx-tui-daemon",
        TUI + " via the app-server daemon",
        1,
        tui_daemon,
        1,
        seconds=14,
        shape="typed prompt, default daemon",
    ),
    _scenario("cx-tui-two", TUI, 2, tui_two, 2, seconds=10, shape="two typed prompts"),
    _scenario(
        "cx-tui-xml-tag",
        TUI,
        1,
        tui_xml_tag,
        1,
        seconds=10,
        shape="typed prompt starting with an XML-like tag",
    ),
    _scenario("cx-tui-agents-md", TUI, 1, tui_agents_md, 1, seconds=10, shape="AGENTS.md in the project"),
    _scenario(
        "cx-tui-steer",
        TUI,
        2,
        tui_steer,
        2,
        triggers=SLEEP,
        seconds=16,
        shape="prompt typed while a command runs",
    ),
    _scenario(
        "cx-tui-queued",
        TUI,
        2,
        tui_queued,
        2,
        triggers=SLEEP,
        seconds=16,
        shape="prompt queued (Tab) while busy",
    ),
    _scenario(
        "cx-tui-requeued",
        TUI,
        2,
        tui_requeued,
        2,
        triggers=SLEEP,
        seconds=16,
        shape="queued, pulled back, queued again",
    ),
    _scenario("cx-tui-shell", TUI, 1, tui_shell, 0, seconds=10, shape="`!` shell command"),
    _scenario("cx-tui-init", TUI, 1, tui_init, 1, seconds=10, shape="/init (a built-in prompt)"),
    _scenario(
        "cx-tui-compact",
        TUI,
        2,
        tui_compact,
        1,
        seconds=12,
        shape="/compact",
    ),
    _scenario(
        "cx-tui-status",
        TUI,
        2,
        tui_status,
        1,
        seconds=10,
        shape="/status (runs locally)",
        hook_wrong=_NO_TRACE.format(version=CODEX_VERSION, what="/status"),
        provider_wrong=_NO_TRACE.format(version=CODEX_VERSION, what="/status"),
    ),
    _scenario(
        "cx-tui-goal",
        TUI,
        1,
        tui_goal,
        0,
        triggers=GOAL,
        seconds=12,
        shape="/goal",
    ),
    _scenario(
        "cx-tui-review",
        TUI,
        1,
        tui_review,
        1,
        seconds=14,
        shape="/review (a review rollout)",
    ),
    _scenario(
        "cx-tui-plan-answer",
        TUI,
        2,
        tui_plan_answer,
        1,
        triggers=QUESTION,
        seconds=14,
        shape="Plan-mode question answered (request_user_input)",
    ),
    _scenario(
        "cx-tui-subagent",
        TUI,
        1,
        tui_subagent,
        2,
        triggers=SUBAGENT,
        seconds=14,
        shape="sub-agent rollout (spawn_agent)",
    ),
    _scenario("cx-tui-image", TUI, 1, tui_image, 1, seconds=10, shape="image-only prompt (pasted file)"),
    _scenario(
        "cx-tui-new",
        TUI,
        3,
        tui_new,
        2,
        seconds=14,
        shape="/new (a new session)",
        hook_wrong=_NO_TRACE.format(version=CODEX_VERSION, what="/new"),
        provider_wrong=_NO_TRACE.format(version=CODEX_VERSION, what="/new"),
    ),
    _scenario(
        "cx-tui-interrupt",
        TUI,
        1,
        tui_interrupt,
        1,
        triggers=SLEEP,
        seconds=12,
        shape="a turn interrupted (Esc)",
    ),
    _scenario(
        "cx-tui-mcp-server", TUI, 1, tui_mcp_server, 1, seconds=12, shape="an MCP server from config.toml"
    ),
    _scenario(
        "cx-tui-mcp-tools",
        TUI,
        2,
        tui_mcp_tools,
        2,
        triggers=SESSIONS_TOOL,
        seconds=12,
        shape="sessionwatch's own MCP tool called",
    ),
)
