"""Codex-CLI-shaped rollout lines for the tests that read real rollout files.

Each builder returns one line as Codex CLI writes it to
`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`: the `{timestamp, type, payload}` envelope
around `session_meta`, `turn_context`, `response_item` (user, assistant and developer messages,
reasoning, tool calls and their outputs), `event_msg` (the `user_message` / `agent_message` twins
some versions write next to each message, token counts, aborted turns) and `compacted` records,
with the context Codex injects as user messages (environment context, AGENTS.md and user
instructions, skills, interrupt and sub-agent notices, compaction summaries). Write them with
`claude_transcripts.append`, which writes any record as one complete JSONL line.
"""

from __future__ import annotations

from collections.abc import Mapping

THREAD_ID = "019a8f3e-5c21-7d40-b9e6-2f4d81c0a7e3"

Record = dict[str, object]


def _line(kind: str, timestamp: str, payload: Mapping[str, object]) -> Record:
    return {"timestamp": timestamp, "type": kind, "payload": payload}


def session_meta(timestamp: str = "2026-11-30T11:50:00.000Z") -> Record:
    """The first line of a rollout: the thread, where it runs, which CLI wrote it."""
    return _line(
        "session_meta",
        timestamp,
        {
            "id": THREAD_ID,
            "timestamp": timestamp,
            "cwd": "/repo",
            "originator": "codex_cli_rs",
            "cli_version": "0.63.0",
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
            "git": {"commit_hash": "4be1c0d", "branch": "main", "repository_url": "git@example.org:repo.git"},
        },
    )


def turn_context(timestamp: str = "2026-11-30T11:59:00.100Z") -> Record:
    """The settings of the turn about to run."""
    sandbox = {"type": "workspace-write", "network_access": False, "writable_roots": []}
    payload = {
        "cwd": "/repo",
        "approval_policy": "on-request",
        "sandbox_policy": sandbox,
        "model": "gpt-5.1-codex",
        "effort": "medium",
        "summary": "auto",
    }
    return _line("turn_context", timestamp, payload)


def _message(role: str, blocks: list[object], timestamp: str) -> Record:
    return _line("response_item", timestamp, {"type": "message", "role": role, "content": blocks})


def user_message(text: str, timestamp: str = "2026-11-30T11:59:00.000Z", *, images: int = 0) -> Record:
    """A user message (`input_text`, and `input_image` blocks wrapped in their tags)."""
    blocks: list[object] = []
    for number in range(1, images + 1):
        blocks.append({"type": "input_text", "text": f"<image name=[Image #{number}]>"})
        blocks.append({"type": "input_image", "image_url": "data:image/png;base64,AA=="})
        blocks.append({"type": "input_text", "text": "</image>"})
    if text:
        blocks.append({"type": "input_text", "text": text})
    return _message("user", blocks, timestamp)


def user_event(text: str, timestamp: str = "2026-11-30T11:59:00.001Z", *, legacy: bool = False) -> Record:
    """The `event_msg user_message` twin of a typed prompt (with `kind` in older versions)."""
    payload: Record = {"type": "user_message", "message": text, "images": []}
    if legacy:
        payload["kind"] = "plain"
    else:
        payload.update(local_images=[], text_elements=[])
    return _line("event_msg", timestamp, payload)


def context_event(text: str, kind: str, timestamp: str = "2026-11-30T11:50:00.003Z") -> Record:
    """An older version's `user_message` event for injected context (`kind` says which)."""
    return _line("event_msg", timestamp, {"type": "user_message", "message": text, "kind": kind})


def assistant_message(text: str, timestamp: str = "2026-11-30T11:59:20.000Z") -> Record:
    """The model's reply."""
    return _message("assistant", [{"type": "output_text", "text": text}], timestamp)


def agent_event(text: str, timestamp: str = "2026-11-30T11:59:20.001Z") -> Record:
    """The `event_msg agent_message` twin of a reply."""
    return _line("event_msg", timestamp, {"type": "agent_message", "message": text})


def developer_message(timestamp: str = "2026-11-30T11:50:00.001Z") -> Record:
    """Permissions and sandbox instructions, written in the developer role."""
    text = "<permissions instructions>\nFilesystem sandboxing: workspace-write.\n</permissions instructions>"
    return _message("developer", [{"type": "input_text", "text": text}], timestamp)


def environment_context(timestamp: str = "2026-11-30T11:50:00.002Z") -> Record:
    """The environment Codex describes to the model as a user message: injected, not typed."""
    text = (
        "<environment_context>\n  <cwd>/repo</cwd>\n  <approval_policy>on-request</approval_policy>\n"
        "  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n"
        "  <shell>zsh</shell>\n</environment_context>"
    )
    return user_message(text, timestamp)


def agents_md(timestamp: str = "2026-11-30T11:50:00.002Z", *, legacy: bool = False) -> Record:
    """The project's AGENTS.md, injected as a user message (`<user_instructions>` in older versions)."""
    body = "Run `make test` before every commit.\nKeep modules under 600 lines."
    if legacy:
        return user_message(f"<user_instructions>\n\n{body}\n\n</user_instructions>", timestamp)
    return user_message(
        f"# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n{body}\n</INSTRUCTIONS>", timestamp
    )


def skill_instructions(timestamp: str = "2026-11-30T11:59:00.050Z") -> Record:
    """A skill's instructions, injected when the person names the skill."""
    path = "<path>/repo/.codex/skills/release/SKILL.md</path>"
    text = f"<skill>\n<name>release</name>\n{path}\nTag, then push.\n</skill>"
    return user_message(text, timestamp)


def turn_aborted(timestamp: str = "2026-11-30T11:59:40.000Z") -> Record:
    """The notice Codex writes as a user message after the person interrupts a turn."""
    text = (
        "<turn_aborted>\nThe user interrupted the previous turn on purpose. Any running unified exec "
        "processes may still be running in the background.\n</turn_aborted>"
    )
    return user_message(text, timestamp)


def aborted_event(timestamp: str = "2026-11-30T11:59:40.001Z") -> Record:
    """The `event_msg` for an interrupted turn."""
    return _line("event_msg", timestamp, {"type": "turn_aborted", "reason": "interrupted"})


def user_shell_command(command: str, output: str, timestamp: str = "2026-11-30T11:59:30.000Z") -> Record:
    """A `!command` the person ran from the prompt, recorded with its output as a user message."""
    text = (
        f"<user_shell_command>\n<command>\n{command}\n</command>\n<result>\nExit code: 0\n"
        f"Duration: 0.0214 seconds\nOutput:\n{output}\n</result>\n</user_shell_command>"
    )
    return user_message(text, timestamp)


def subagent_notification(timestamp: str = "2026-11-30T11:59:45.000Z") -> Record:
    """A sub-agent's status, delivered to its parent as a user message: not a person."""
    status = '{"agent_path":"/root/worker","status":{"completed":"done"}}'
    text = f"<subagent_notification>\n{status}\n</subagent_notification>"
    return user_message(text, timestamp)


def compaction_summary(timestamp: str = "2026-11-30T11:59:50.000Z") -> Record:
    """The summary that replaces a compacted history, written as a user message."""
    text = (
        "Another language model started to solve this problem and produced a summary of its thinking "
        "process. Here is the summary produced by the other language model, use the information in "
        "this summary to assist with your own analysis:\nThe build was fixed; tests remain."
    )
    return user_message(text, timestamp)


def compacted(timestamp: str = "2026-11-30T11:59:50.001Z") -> Record:
    """The compaction marker with the history that replaces the old one."""
    history = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the build"}]}
    ]
    return _line("compacted", timestamp, {"message": "The build was fixed.", "replacement_history": history})


def reasoning(timestamp: str = "2026-11-30T11:59:05.000Z") -> Record:
    """The model's reasoning summary (its content encrypted)."""
    payload = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "**Planning the fix**"}],
        "content": None,
        "encrypted_content": "gAAAAABo-encrypted",
    }
    return _line("response_item", timestamp, payload)


def function_call(
    command: str, timestamp: str = "2026-11-30T11:59:06.000Z", call_id: str = "call_7Qx"
) -> Record:
    """A tool call the model made."""
    arguments = f'{{"command":"{command}","workdir":"/repo"}}'
    payload = {"type": "function_call", "name": "shell_command", "arguments": arguments, "call_id": call_id}
    return _line("response_item", timestamp, payload)


def function_call_output(
    output: str, timestamp: str = "2026-11-30T11:59:07.000Z", call_id: str = "call_7Qx"
) -> Record:
    """The output of that tool call."""
    return _line(
        "response_item", timestamp, {"type": "function_call_output", "call_id": call_id, "output": output}
    )


def token_count(timestamp: str = "2026-11-30T11:59:21.000Z") -> Record:
    """Token usage after a model response."""
    info = {"total_token_usage": {"input_tokens": 5120, "output_tokens": 310}, "model_context_window": 272000}
    return _line("event_msg", timestamp, {"type": "token_count", "info": info, "rate_limits": None})
