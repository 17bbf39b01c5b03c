"""Which records of a Codex rollout are a person's act, read from the labels Codex writes. Pure.

Codex labels each content block of a message it records: `content_item_kinds` (`user.text`,
`user.image`, `user.goal`, `shell.user_command`, `environments.environment_context`,
`agents_md.instructions`, `generic.turn_aborted`, ...) and `content_item_metadata[].provenance.type`
(`user`, `harness`, `skills`, `agents_md`, `tool`). A block is a person's when its provenance is
`user`; a message with such a block is a prompt a person typed (its words are those blocks' words,
without the tags around a pasted image or its `[Image #n]` placeholder). Codex writes two acts of a
person with the harness's provenance, and they count too: a `!command` (`shell.user_command`) and
a goal set with `/goal` (`user.goal`). Everything else a message's labels name is the tool's.

Three more records are a person's act: a review's outcome (`<user_action>` ... `review`, which
Codex leaves unlabelled), a compaction a person asked for (`/compact`: a `compacted` record whose
turn no prompt started, which `resume_metadata` tells), and a typed answer to a Plan-mode question
(`retained_context` of type `verified_answer`). A rollout a sub-agent or a review wrote
(`session_meta.source` names a sub-agent) holds nothing a person typed.

A message without labels (versions before them, or kinds all `unknown`) is judged by its text:
`prompt_origin.classify_codex_message`, the rule older rollouts were always read with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sessionwatch.domain.prompt_origin import (
    ClassifiedPrompt,
    PromptOrigin,
    classify_codex_message,
    codex_shell_command,
    codex_typed_or_image,
)
from sessionwatch.domain.upstream import normalize_text

COMPACT_WORDS = "/compact"
"""The words of a compaction a person asked for."""

_PERSON = "user"
"""The provenance of what a person wrote."""

_UNLABELLED = "unknown"
"""The kind Codex gives a block it does not label."""

_IMAGE_TAGS = ("<image", "</image>", "<local_image", "</local_image>")
"""How the text blocks around a pasted image begin (Codex labels them as the person's text)."""


@dataclass(frozen=True, slots=True)
class CodexBlock:
    """One content block of a Codex message: its text (None for an image) and Codex's two labels."""

    text: str | None
    kind: str | None
    provenance: str | None


def classify_codex_record(record: Mapping[str, object]) -> ClassifiedPrompt | None:
    """What a rollout record is, when it may be a person's act: a user message, a compaction, an answer.

    None for every other record (replies, tool calls, events, settings). A returned prompt whose
    origin is not human is a user-role message the tool wrote.
    """
    payload = record.get("payload")
    if not isinstance(payload, Mapping):
        return None
    match record.get("type"):
        case "response_item":
            return _message(payload)
        case "compacted":
            return (
                ClassifiedPrompt(PromptOrigin.SLASH_COMMAND, COMPACT_WORDS) if _requested(payload) else None
            )
        case "retained_context":
            return _answer(payload)
        case _:
            return None


def codex_rollout_is_subagent(first_record: object) -> bool:
    """Whether a rollout's first record (`session_meta`) says a sub-agent or a review wrote it."""
    if not isinstance(first_record, Mapping) or first_record.get("type") != "session_meta":
        return False
    payload = first_record.get("payload")
    if not isinstance(payload, Mapping):
        return False
    source = payload.get("source")
    return payload.get("thread_source") == "subagent" or (
        isinstance(source, Mapping) and "subagent" in source
    )


def classify_codex_labelled(blocks: Sequence[CodexBlock]) -> ClassifiedPrompt | None:
    """Classify a user message by Codex's labels; None when it carries none (every kind unknown)."""
    if not blocks or all(block.kind in (None, _UNLABELLED) for block in blocks):
        return None
    texts: list[str] = []
    images = 0
    tool_origin = PromptOrigin.INJECTED_CONTEXT
    for block in blocks:
        if block.kind == "shell.user_command" and block.text is not None:
            return ClassifiedPrompt(PromptOrigin.SHELL_INPUT, codex_shell_command(block.text))
        if block.kind == "user.goal" and block.text is not None:
            return ClassifiedPrompt(PromptOrigin.SLASH_COMMAND, _goal_words(block.text))
        if block.provenance != _PERSON:
            tool_origin = _tool_origin(block.kind, tool_origin)
            continue
        if block.text is None:
            images += 1
        elif not block.text.strip().startswith(_IMAGE_TAGS):
            texts.append(block.text)
    if not texts and not images:
        return ClassifiedPrompt(tool_origin, "")
    return codex_typed_or_image(texts, images)


def _message(payload: Mapping[str, object]) -> ClassifiedPrompt | None:
    if payload.get("type") != "message" or payload.get("role") != "user":
        return None
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    blocks = _blocks(content, payload.get("internal_chat_message_metadata_passthrough"))
    labelled = classify_codex_labelled(blocks)
    if labelled is not None:
        return labelled
    texts = [block.text for block in blocks if block.text is not None]
    return classify_codex_message(texts, images=sum(1 for block in blocks if block.text is None))


def _blocks(content: list[object], labels: object) -> list[CodexBlock]:
    """The message's text and image blocks, each with its labels (None where Codex gave none)."""
    kinds: list[object] = []
    metadata: list[object] = []
    if isinstance(labels, Mapping):
        found_kinds, found_metadata = labels.get("content_item_kinds"), labels.get("content_item_metadata")
        kinds = found_kinds if isinstance(found_kinds, list) and len(found_kinds) == len(content) else []
        metadata = (
            found_metadata if isinstance(found_metadata, list) and len(found_metadata) == len(content) else []
        )
    blocks: list[CodexBlock] = []
    for index, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        kind = kinds[index] if kinds else None
        provenance = _provenance(metadata[index]) if metadata else None
        labels_of = {"kind": kind if isinstance(kind, str) else None, "provenance": provenance}
        if block.get("type") == "input_text" and isinstance(text := block.get("text"), str):
            blocks.append(CodexBlock(text=text, **labels_of))
        elif block.get("type") == "input_image":
            blocks.append(CodexBlock(text=None, **labels_of))
    return blocks


def _provenance(entry: object) -> str | None:
    if not isinstance(entry, Mapping):
        return None
    provenance = entry.get("provenance")
    kind = provenance.get("type") if isinstance(provenance, Mapping) else None
    return kind if isinstance(kind, str) else None


def _tool_origin(kind: str | None, so_far: PromptOrigin) -> PromptOrigin:
    """What the tool's block is, by its kind (an interrupt or another agent's message wins over context)."""
    if kind == "generic.turn_aborted":
        return PromptOrigin.INTERRUPT
    if kind is not None and kind.startswith("multi_agent."):
        return PromptOrigin.AGENT_MESSAGE
    return so_far


def _goal_words(text: str) -> str:
    """`/goal OBJECTIVE` from the goal Codex records (`User set the goal: "OBJECTIVE"`), else the text."""
    marker = 'User set the goal: "'
    start = text.find(marker)
    end = text.find('"', start + len(marker)) if start >= 0 else -1
    if end < 0:
        return normalize_text(text)
    return normalize_text(f"/goal {text[start + len(marker) : end]}")


def _requested(payload: Mapping[str, object]) -> bool:
    """Whether a person asked for this compaction (`/compact`), not Codex while a prompt's turn ran.

    Codex gives every turn a prompt started its `turn_attribution`; a compaction a person asks for
    runs as a turn of its own without one. So the compaction was asked for when the turn it ran in
    (`last_started_turn_id`) is not the turn of the newest attribution. Without `resume_metadata`
    (older versions) a manual and an automatic compaction cannot be told apart: neither counts.
    """
    resume = payload.get("resume_metadata")
    if not isinstance(resume, Mapping):
        return False
    turn = resume.get("last_started_turn_id")
    if not isinstance(turn, str) or not turn:
        return False
    attribution = resume.get("turn_attribution")
    attributed = attribution.get("turn_id") if isinstance(attribution, Mapping) else None
    return attributed != turn


def _answer(payload: Mapping[str, object]) -> ClassifiedPrompt | None:
    """A person's answer to the agent's own questions (Plan mode's `request_user_input`), once."""
    if payload.get("type") != "verified_answer":
        return None
    questions = payload.get("questions")
    answers = [
        question["answer"]
        for question in (questions if isinstance(questions, list) else [])
        if isinstance(question, Mapping) and isinstance(question.get("answer"), str)
    ]
    if not answers:
        return None
    return ClassifiedPrompt(PromptOrigin.TYPED, normalize_text("\n".join(answers)))
