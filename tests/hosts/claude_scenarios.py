"""Claude Code 2.1.197 scenarios: what a person does, and the human turns that makes.

Each drive step runs the real CLI (headless, stream-json, or its TUI under tmux) against the fake
Anthropic API. Trigger words in a prompt make the fake model call a tool (`sleep` in Bash to keep
the agent busy, CronCreate, a sub-agent, a background command). A TUI session ends with Ctrl-D
twice (an `/exit` would itself be a slash command a person typed).

`hook_wrong` and `provider_wrong` name what sessionwatch gets wrong today; the tests expect exactly
those rows to fail (none, for this version).
"""

from __future__ import annotations

import base64
import json
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hosts.claude_host import ClaudeCodeHost
from hosts.fake_models import ToolCall
from hosts.images import tiny_png
from hosts.scenario import Scenario, ScenarioBroken
from hosts.tmux import Pane, trimmed

CONTEXT_HOOK = Path(__file__).resolve().parent / "context_hook.py"
PROMPT_CONTEXT = "context from a prompt hook"
READY = "? for shortcuts"
BUSY = "esc to interrupt"
SHELL_MODE = "! for shell mode"
"""The hint line once a typed `!` switched the input to shell mode."""

SLEEP = {"SLEEPY": ToolCall("Bash", {"command": "sleep 6", "description": "Wait six seconds"})}
"""A prompt with SLEEPY keeps the agent busy for six seconds (long enough to type into)."""


# --------------------------------------------------------------------------------------- helpers


@contextmanager
def tui(host: ClaudeCodeHost, *options: str) -> Iterator[Pane]:
    """The TUI, ready for input; left with Ctrl-D twice once the steps are done."""
    with host.tui(*options) as pane:
        try:
            pane.wait_for(READY, timeout=60, what="the Claude Code prompt")
            yield pane
        except Exception as exc:
            raise ScenarioBroken(f"{exc}\nthe screen was:\n{trimmed(pane.screen())}") from exc
        ended = host.events().count("SessionEnd")
        pane.wait_for(lambda screen: BUSY not in screen, timeout=30, what="an idle prompt")
        pane.keys("C-d")
        time.sleep(0.4)
        pane.keys("C-d")
        host.wait_for_events("SessionEnd", ended + 1, timeout=30)
        _wait_dead(pane)


def _wait_dead(pane: Pane, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not pane.dead():
        if time.monotonic() > deadline:
            raise ScenarioBroken(f"Claude Code did not exit; the screen was:\n{pane.screen()}")
        time.sleep(0.2)


def turn(host: ClaudeCodeHost, pane: Pane, text: str) -> None:
    """Type a prompt and wait until its turn ends (one more Stop)."""
    stops = host.events().count("Stop")
    pane.submit(text)
    host.wait_for_events("Stop", stops + 1, timeout=60)


def busy(pane: Pane) -> None:
    """Wait until the agent runs a tool."""
    pane.wait_for("Running", timeout=30, what="a running tool")


def paste(pane: Pane, text: str) -> None:
    """Paste `text` as a terminal paste (bracketed), as a person dropping a file path does."""
    pane.tmux("set-buffer", "--", text)
    pane.tmux("paste-buffer", "-p", "-t", "host")


# ---------------------------------------------------------------------------------------- drives


def print_typed(host: ClaudeCodeHost) -> None:
    done = host.print_run("hello there")
    _check(done.returncode == 0, f"claude -p failed: {done.stderr[-500:]}")


def print_with_claude_md(host: ClaudeCodeHost) -> None:
    (host.project / "CLAUDE.md").write_text("# Project rules\n\nAnswer briefly.\n", encoding="utf-8")
    print_typed(host)


def print_resumed(host: ClaudeCodeHost) -> None:
    first = host.print_run("first prompt")
    _check(first.returncode == 0, f"claude -p failed: {first.stderr[-500:]}")
    session = next(
        json.loads(line)["session_id"] for line in first.stdout.splitlines() if '"session_id"' in line
    )
    second = host.print_run("second prompt", "--resume", session)
    _check(second.returncode == 0, f"claude -p --resume failed: {second.stderr[-500:]}")


def print_hook_context(host: ClaudeCodeHost) -> None:
    settings_path = host.config / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    command = f"{sys.executable} -S {CONTEXT_HOOK} {shlex.quote(PROMPT_CONTEXT)}"
    settings["hooks"]["UserPromptSubmit"].append({"hooks": [{"type": "command", "command": command}]})
    settings_path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    print_typed(host)


def mcp_list(host: ClaudeCodeHost) -> None:
    done = host.run("mcp", "list")
    _check(
        "sessionwatch" in done.stdout, f"claude mcp list did not list the server: {done.stdout} {done.stderr}"
    )


def stream_two(host: ClaudeCodeHost) -> None:
    with host.stream() as run:
        run.send("first prompt")
        run.wait(lambda r: r.results() >= 1, what="the first result")
        run.send("second prompt")
        run.wait(lambda r: r.results() >= 2, what="the second result")


def stream_while_busy(host: ClaudeCodeHost) -> None:
    with host.stream() as run:
        run.send("SLEEPY first prompt")
        run.wait(lambda _: "PreToolUse" in host.events(), what="the tool to start")
        run.send("second prompt while busy")
        run.wait(lambda r: r.results() >= 1, timeout=60, what="the result")
        time.sleep(1)


def stream_image(host: ClaudeCodeHost) -> None:
    data = base64.b64encode(tiny_png()).decode()
    with host.stream() as run:
        run.send([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}])
        run.wait(lambda r: r.results() >= 1, what="the result")


def tui_typed(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "hello there")


def tui_two(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "first prompt")
        turn(host, pane, "second prompt")


def tui_xml_tag(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "<bug_report>the build fails on main</bug_report>")


def tui_absorbed(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        stops = host.events().count("Stop")
        pane.submit("SLEEPY first prompt")
        busy(pane)
        pane.submit("typed while the tool runs")
        host.wait_for_events("Stop", stops + 1, timeout=60)


def tui_requeued(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        stops = host.events().count("Stop")
        pane.submit("SLEEPY first prompt")
        busy(pane)
        pane.submit("queued then pulled back")
        pane.wait_for("Press up to edit queued messages", timeout=10)
        pane.keys("Up")  # pulls the queued prompt back into the input
        pane.wait_for(lambda screen: "Press up to edit queued messages" not in screen, timeout=10)
        time.sleep(0.3)
        pane.keys("Enter")  # and queues it again, unchanged
        host.wait_for_events("Stop", stops + 1, timeout=60)


def tui_shell(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        stops = host.events().count("Stop")
        pane.type("!")
        pane.wait_for(SHELL_MODE, timeout=15, what="shell mode")  # typed on before it shows, `!` lands late
        pane.submit("ls -a")
        host.wait_for_events("Stop", stops + 1, timeout=60)


def tui_context(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        pane.submit("/context")
        pane.wait_for("Estimated usage", timeout=30)


def tui_usage(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        pane.submit("/usage")
        pane.wait_for("Esc to cancel", timeout=30)
        pane.keys("Escape")
        pane.wait_for("dialog dismissed", timeout=15)


def tui_compact(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "first prompt")  # one exchange is "not enough messages to compact"
        turn(host, pane, "second prompt")
        pane.submit("/compact")
        host.wait_for_events("PostCompact", 1, timeout=60)
        pane.wait_for(READY, timeout=30)


def tui_clear(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "before clear")
        pane.submit("/clear")
        host.wait_for_events("SessionStart", 2, timeout=30)
        pane.wait_for(READY, timeout=30)
        host.lead_acknowledges()  # the lead has read what came before: what follows must notify it again
        turn(host, pane, "after clear")


def tui_exit_command(host: ClaudeCodeHost) -> None:
    with host.tui() as pane:
        pane.wait_for(READY, timeout=60)
        turn(host, pane, "hello there")
        pane.submit("/exit")
        host.wait_for_events("SessionEnd", 1, timeout=30)
        _wait_dead(pane)


def tui_image(host: ClaudeCodeHost) -> None:
    image = host.project / "screenshot.png"
    image.write_bytes(tiny_png())
    with tui(host) as pane:
        stops = host.events().count("Stop")
        paste(pane, str(image))
        pane.wait_for("[Image #1]", timeout=15)
        pane.keys("Enter")
        host.wait_for_events("Stop", stops + 1, timeout=60)


def tui_cron(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "CRONME remind me in a minute")
        host.wait_for_events("Stop", 2, timeout=100)  # the job fires at the next minute


def tui_interrupt(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        pane.submit("SLEEPY first prompt")
        busy(pane)
        pane.keys("Escape")
        pane.wait_for("Interrupted", timeout=20)


def tui_background_task(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "BGTASK start it")
        host.wait_for_events("Stop", 2, timeout=60)  # the task's notification starts a turn of its own


def tui_subagent(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        turn(host, pane, "AGENT please delegate")


def tui_question(host: ClaudeCodeHost) -> None:
    with tui(host) as pane:
        stops = host.events().count("Stop")
        pane.submit("ASKME pick a database")
        pane.wait_for(QUESTION, timeout=60, what="the agent's question")
        pane.keys("Enter")  # the person picks the first answer
        host.wait_for_events("Stop", stops + 1, timeout=60)


def tui_custom_command(host: ClaudeCodeHost) -> None:
    commands = host.project / ".claude" / "commands"
    commands.mkdir(parents=True, exist_ok=True)
    (commands / "greet.md").write_text("Say hello to the team in one line.\n", encoding="utf-8")
    with tui(host) as pane:
        turn(host, pane, "/greet")


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ScenarioBroken(message)


# ------------------------------------------------------------------------------------- scenarios

CRON = {
    "CRONME": ToolCall(
        "CronCreate", {"cron": "* * * * *", "prompt": "check the deploy status", "recurring": False}
    )
}
BACKGROUND = {
    "BGTASK": ToolCall(
        "Bash", {"command": "sleep 2", "description": "Wait in the background", "run_in_background": True}
    )
}
SUBAGENT = {
    "AGENT": ToolCall(
        "Agent",
        {
            "description": "Check a detail",
            "prompt": "look at the readme and say ok",
            "subagent_type": "general-purpose",
        },
    )
}

QUESTION = "Which database should I use?"
ASK = {
    "ASKME": ToolCall(
        "AskUserQuestion",
        {
            "questions": [
                {
                    "question": QUESTION,
                    "header": "Database",
                    "options": [
                        {"label": "SQLite", "description": "one file"},
                        {"label": "PostgreSQL", "description": "a server"},
                    ],
                    "multiSelect": False,
                }
            ]
        },
    )
}

TUI = "TUI (tmux)"
PRINT = "claude -p"
STREAM = "claude -p stream-json"


def _scenario(
    name: str,
    how: str,
    truth: int,
    drive: Callable[[ClaudeCodeHost], None],
    prompt_hooks: int,
    **more: Any,
) -> Scenario:
    return Scenario(
        name=name, host="claude-code", how=how, truth=truth, drive=drive, prompt_hooks=prompt_hooks, **more
    )


SCENARIOS: tuple[Scenario, ...] = (
    _scenario("cc-print-typed", PRINT, 1, print_typed, 1, seconds=6, shape="typed prompt (headless)"),
    _scenario(
        "cc-print-claude-md",
        PRINT,
        1,
        print_with_claude_md,
        1,
        seconds=6,
        shape="project instructions (CLAUDE.md)",
    ),
    _scenario(
        "cc-print-hook-context", PRINT, 1, print_hook_context, 1, seconds=6, shape="hook context to the model"
    ),
    _scenario(
        "cc-print-resumed", PRINT + " --resume", 2, print_resumed, 2, seconds=10, shape="a session resumed"
    ),
    _scenario(
        "cc-mcp-list",
        "claude mcp list",
        0,
        mcp_list,
        0,
        seconds=8,
        store_sessions=0,
        shape="`claude mcp list` health check",
    ),
    _scenario(
        "cc-stream-two", STREAM, 2, stream_two, 2, seconds=8, shape="stream-json prompts, one after the other"
    ),
    _scenario(
        "cc-stream-busy",
        STREAM,
        2,
        stream_while_busy,
        1,
        triggers=SLEEP,
        seconds=14,
        shape="second stream-json prompt while busy",
    ),
    _scenario(
        "cc-stream-image",
        STREAM,
        1,
        stream_image,
        1,
        seconds=6,
        shape="image-only prompt (stream-json)",
    ),
    _scenario("cc-tui-typed", TUI, 1, tui_typed, 1, seconds=10, shape="typed prompt"),
    _scenario("cc-tui-two", TUI, 2, tui_two, 2, seconds=12, shape="two typed prompts"),
    _scenario(
        "cc-tui-xml-tag",
        TUI,
        1,
        tui_xml_tag,
        1,
        seconds=10,
        shape="typed prompt starting with an XML-like tag",
    ),
    _scenario(
        "cc-tui-absorbed",
        TUI,
        2,
        tui_absorbed,
        1,
        triggers=SLEEP,
        seconds=18,
        shape="prompt typed while a tool runs (absorbed)",
    ),
    _scenario(
        "cc-tui-requeued",
        TUI,
        2,
        tui_requeued,
        1,
        triggers=SLEEP,
        seconds=18,
        shape="queued, pulled back (popAll), queued again",
    ),
    _scenario(
        "cc-tui-shell",
        TUI,
        1,
        tui_shell,
        0,
        seconds=12,
        shape="`!` shell mode",
    ),
    _scenario(
        "cc-tui-context",
        TUI,
        1,
        tui_context,
        0,
        seconds=10,
        shape="/context",
    ),
    _scenario(
        "cc-tui-usage",
        TUI,
        1,
        tui_usage,
        0,
        seconds=10,
        shape="/usage",
    ),
    _scenario(
        "cc-tui-compact",
        TUI,
        3,
        tui_compact,
        2,
        seconds=14,
        shape="/compact",
    ),
    _scenario(
        "cc-tui-clear",
        TUI,
        3,
        tui_clear,
        2,
        seconds=14,
        shape="/clear (a new session id)",
    ),
    _scenario(
        "cc-tui-exit-command",
        TUI,
        2,
        tui_exit_command,
        1,
        seconds=10,
        shape="/exit typed",
    ),
    _scenario("cc-tui-image", TUI, 1, tui_image, 1, seconds=10, shape="image-only prompt (pasted file)"),
    _scenario(
        "cc-tui-cron",
        TUI,
        1,
        tui_cron,
        2,
        triggers=CRON,
        seconds=75,
        shape="cron-fired prompt (CronCreate)",
    ),
    _scenario(
        "cc-tui-interrupt",
        TUI,
        1,
        tui_interrupt,
        1,
        triggers=SLEEP,
        seconds=12,
        shape="a turn interrupted (Esc)",
    ),
    _scenario(
        "cc-tui-background-task",
        TUI,
        1,
        tui_background_task,
        2,  # the task's notification runs the prompt hook too
        triggers=BACKGROUND,
        seconds=14,
        shape="background task notification",
    ),
    _scenario(
        "cc-tui-subagent",
        TUI,
        1,
        tui_subagent,
        1,
        triggers=SUBAGENT,
        seconds=12,
        shape="sub-agent (Agent tool)",
    ),
    _scenario(
        "cc-tui-custom-command", TUI, 1, tui_custom_command, 1, seconds=10, shape="a project slash command"
    ),
    _scenario(
        "cc-tui-question",
        TUI,
        2,
        tui_question,
        1,
        triggers=ASK,
        seconds=14,
        shape="a person answers the agent's question (AskUserQuestion)",
    ),
)
