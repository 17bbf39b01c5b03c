"""Rollout lines as Codex 0.171 writes them, with its labels: for the tests of the labelled rules.

Newer Codex versions label each content block of a message they record
(`internal_chat_message_metadata_passthrough.content_item_kinds` and
`content_item_metadata[].provenance.type`), wrap records in an `ordinal` envelope, write
`task_started` with the turn's `turn_attribution`, give `compacted` records a `resume_metadata`,
and record a typed answer to a Plan-mode question as `retained_context`. The shapes follow the
captured runs of tests/data/hosts/codex-0.171.0; write them with `claude_transcripts.append`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from codex_transcripts import THREAD_ID

Record = dict[str, object]
Block = tuple[str, str | None, str | None]
"""A content block: its kind, its provenance (None: no metadata) and its text (None: an image)."""

TURN = "01a24247-188d-7a63-8353-6ab48a350b55"
COMPACT_TURN = "01a24246-9acb-7773-ba78-498fe4d6208e"
IMAGE = "data:image/png;base64,iVBORw0KGgo="


def _line(kind: str, payload: Mapping[str, object], timestamp: str, ordinal: int) -> Record:
    return {"timestamp": timestamp, "ordinal": ordinal, "type": kind, "payload": payload}


def meta(source: object = "cli", thread_source: str = "user", thread: str = THREAD_ID) -> Record:
    """The first line: the thread, and who started it (`{"subagent": ...}` for a sub-agent or review)."""
    payload = {
        "id": thread,
        "session_id": thread,
        "timestamp": "2026-12-04T18:18:05.000Z",
        "cwd": "/repo",
        "originator": "codex-tui",
        "cli_version": "0.171.0",
        "source": source,
        "thread_source": thread_source,
        "model_provider": "openai",
        "history_mode": "paginated",
    }
    return _line("session_meta", payload, "2026-12-04T18:18:05.000Z", 0)


def task_started(trigger: str | None = "user", turn: str = TURN) -> Record:
    """A turn starts; a turn a trigger started carries its `turn_attribution` (a `/compact` has none)."""
    payload: Record = {
        "type": "task_started",
        "turn_id": turn,
        "root_turn_id": turn,
        "started_at": 1796408285,
    }
    if trigger is not None:
        payload["turn_attribution"] = {
            "turn_id": turn,
            "turn_trigger": trigger,
            "parent_turn_id": None,
            "initiating_agent_path": None,
            "root_turn_id": turn,
        }
    return _line("event_msg", payload, "2026-12-04T18:18:05.100Z", 1)


def message(
    blocks: Sequence[Block], *, role: str = "user", timestamp: str = "2026-12-04T18:18:06.000Z"
) -> Record:
    """A message whose blocks carry Codex's kinds and provenances."""
    content: list[Record] = [
        {"type": "input_image", "image_url": IMAGE} if text is None else {"type": "input_text", "text": text}
        for _, _, text in blocks
    ]
    labels: Record = {"turn_id": TURN, "content_item_kinds": [kind for kind, _, _ in blocks]}
    provenances = [provenance for _, provenance, _ in blocks]
    if any(provenance is not None for provenance in provenances):
        labels["content_item_metadata"] = [{"provenance": {"type": provenance}} for provenance in provenances]
    payload = {
        "type": "message",
        "role": role,
        "content": content,
        "internal_chat_message_metadata_passthrough": labels,
    }
    return _line("response_item", payload, timestamp, 7)


def typed(text: str, timestamp: str = "2026-12-04T18:18:06.000Z") -> Record:
    """A prompt a person typed."""
    return message([("user.text", "user", text)], timestamp=timestamp)


def pasted_image(path: str = "/repo/screenshot.png", words: str = "[Image #1]") -> Record:
    """A pasted image: its tags, the image, and the composer's text (`[Image #1]` when nothing else)."""
    return message(
        [
            ("user.text", "user", f'<image name=[Image #1] path="{path}">'),
            ("user.image", "user", None),
            ("user.text", "user", "</image>"),
            ("user.text", "user", words),
        ]
    )


def environment() -> Record:
    """The environment context Codex sends as a user message."""
    text = "<environment_context>\n  <cwd>/repo</cwd>\n  <shell>bash</shell>\n</environment_context>"
    return message([("environments.environment_context", "harness", text)])


def agents_md_and_environment() -> Record:
    """AGENTS.md and the environment context in one message."""
    return message(
        [
            (
                "agents_md.instructions",
                "agents_md",
                "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>",
            ),
            ("environments.environment_context", "harness", "<environment_context>\n</environment_context>"),
        ]
    )


def shell_command(command: str = "ls -a") -> Record:
    """A `!command` a person ran: the harness writes it, with its output."""
    text = (
        f"<user_shell_command>\n<command>\n{command}\n</command>\n"
        "<result>\nExit code: 0\n</result>\n</user_shell_command>"
    )
    return message([("shell.user_command", "harness", text)])


def goal(objective: str = "ship the release notes") -> Record:
    """A goal a person set with `/goal`, which Codex records as its own context."""
    text = (
        f'<codex_internal_context source="user_goal">\nUser set the goal: "{objective}"\n'
        "</codex_internal_context>"
    )
    return message([("user.goal", "harness", text)])


def goal_continuation() -> Record:
    """Codex's own nudge to keep working toward the goal."""
    text = (
        '<codex_internal_context source="goal">\nContinue working toward the active goal.\n'
        "</codex_internal_context>"
    )
    return message([("goal.internal_context", "harness", text)])


def turn_aborted() -> Record:
    """The interrupt marker after a person pressed Esc."""
    text = "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"
    return message([("generic.turn_aborted", "harness", text)])


def subagent_notification() -> Record:
    """A sub-agent's status for its parent."""
    text = '<subagent_notification>\n{"agent_path":"x","status":"completed"}\n</subagent_notification>'
    return message([("multi_agent.subagent_notification", "tool", text)])


def review_outcome(results: str = "ok") -> Record:
    """What a review a person started leaves in the session's rollout (Codex labels it `unknown`)."""
    text = (
        "<user_action>\n  <context>User initiated a review task. Here's the full review output from reviewer "
        f"model.</context>\n  <action>review</action>\n  <results>\n  {results}\n  </results>\n"
        "  </user_action>\n"
    )
    return message([("unknown", None, text)])


def compacted(*, turn: str, attributed: str | None) -> Record:
    """A compaction in turn `turn`; `attributed` is the newest turn a trigger started (its attribution)."""
    resume: Record = {"multi_agent_version": "v1", "last_started_turn_id": turn}
    if attributed is not None:
        resume["turn_attribution"] = {
            "turn_id": attributed,
            "turn_trigger": "user",
            "root_turn_id": attributed,
        }
    payload = {
        "message": "Another language model started to solve this problem and produced a summary:\nok",
        "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello there"}]}
        ],
        "resume_metadata": resume,
        "window_number": 1,
    }
    return _line("compacted", payload, "2026-12-04T18:18:09.000Z", 19)


def verified_answer(answer: str = "None of the above\nuser_note: green, like the logo") -> Record:
    """A person's answer to a Plan-mode question, as Codex retains it."""
    payload = {
        "type": "verified_answer",
        "turn_id": TURN,
        "call_id": "call_fake0001",
        "questions": [{"question": "Which color should the banner use?", "answer": answer}],
    }
    return _line("retained_context", payload, "2026-12-04T18:18:08.000Z", 13)


def answers_output(answer: str = "user_note: green, like the logo") -> Record:
    """The same answer as the tool's output the model reads."""
    output = '{"answers":{"color":{"answers":["None of the above","' + answer + '"]}}}'
    payload = {"type": "function_call_output", "call_id": "call_fake0001", "output": output}
    return _line("response_item", payload, "2026-12-04T18:18:08.001Z", 14)


def item_completed_user(text: str) -> Record:
    """The `item_completed` event of a user message (never counted: the message is)."""
    item = {"type": "UserMessage", "id": "01a24247-19c6", "content": [{"type": "text", "text": text}]}
    return _line(
        "event_msg",
        {"type": "item_completed", "thread_id": THREAD_ID, "item": item},
        "2026-12-04T18:18:06.001Z",
        8,
    )
