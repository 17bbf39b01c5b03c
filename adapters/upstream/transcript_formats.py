"""Which JSON Lines records of a transcript are human prompts: Claude Code, Codex, or configured.

Shell-side but pure in practice: each format reads one parsed record (and the small queue state a
link's marker carries) and says whether it is a prompt a person typed. The text rules themselves
are `sessionwatch.domain.prompt_origin`'s, shared with any other reader of the same tool.

Claude Code (`~/.claude/projects/<project>/<session>.jsonl`) counts each prompt where Claude Code
delivers it to the session, once, and only when no label says the tool wrote it:

- a `user` record whose words a person typed (plain text, `<bash-input>` shell-mode input, a
  `<command-name>` slash command, or only pasted images), and not: tool results; `isMeta`,
  `isSidechain` and compact-summary records; records Claude Code marks as not from a person
  (`origin.kind` other than `human`, `promptSource: "system"`: scheduled and cron prompts, task
  notifications); and text the tool writes as the user (task notifications, shell output echoes,
  other agents' messages, interrupt markers, local command output);
- a `system` `local_command` record naming a slash command that runs locally (`/context`,
  `/usage`: Claude Code writes no `user` record for those);
- a `queued_command` attachment of `commandMode` `prompt` with a person's origin: a prompt typed
  while the agent was busy, absorbed into the running turn;
- the person's answer to the agent's own question (an `AskUserQuestion` tool result that holds
  answers or a typed response);
- a `queue-operation` `remove` that carries the prompt's text: how older versions took a queued
  prompt out of the queue, delivered inside a tool result or withdrawn, without saying which.

`enqueue`, `dequeue` and `popAll` lines count nothing: a prompt queued while the agent was busy is
counted by its delivery (a `user` record after a `dequeue`, an attachment after a `remove`), which
also carries the labels that tell a scheduled prompt from a typed one; a prompt pulled back
(`popAll`) and queued again is delivered once. A prompt queued and never delivered (withdrawn,
or left in the queue when the session ended) never reached the session and is not counted. The
format keeps no queue state, so any split of a transcript into ticks counts the same.

Codex (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) counts the records
`sessionwatch.domain.codex_prompts` calls a person's act: `response_item` user messages a person
wrote (by Codex's labels where it writes them, else by their text: not environment context,
AGENTS.md and user instructions, skills, hook prompts, interrupt and sub-agent notices, compaction
summaries), a `!command`, a `/goal`, a review's outcome (`/review`), a compaction a person asked
for (`/compact`) and a typed answer to a Plan-mode question. `event_msg` records are never counted:
the versions that write a typed prompt as both a `response_item` and an `event_msg user_message`
would otherwise count it twice, and the newest write only the `response_item`. A rollout a
sub-agent or a review wrote counts nothing (`CodexFormat.for_file`, told its first record).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from sessionwatch.domain.codex_prompts import classify_codex_record, codex_rollout_is_subagent
from sessionwatch.domain.prompt_origin import (
    ClassifiedPrompt,
    PromptOrigin,
    classify_claude_code_prompt,
    claude_code_labels_not_human,
)
from sessionwatch.domain.upstream import normalize_text

QUEUE_LIMIT = 16
"""How many queued, not yet delivered prompts a marker keeps (newest last)."""


@dataclass(frozen=True, slots=True)
class QueuedPrompt:
    """A prompt counted at its enqueue: the record's byte offset in the file and, in memory, its words.

    Only `at` ever leaves the process (in a link's marker); `words` are what a delivery matches.
    """

    at: int
    words: str


Queue = tuple[QueuedPrompt, ...]
"""Prompts counted at enqueue whose delivery has not been seen, oldest first."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """A record that is a human prompt: its normalized words (for self-echo) and its time."""

    words: str
    occurred_at: datetime | None


class JsonlFormat(Protocol):
    """A transcript format: which records are human prompts, given the link's queue state."""

    @property
    def name(self) -> str:
        """The format's name, for logs and tests."""
        ...

    def read(self, record: object, queued: Queue, at: int) -> tuple[Prompt | None, Queue]:
        """The prompt this record is (None: not a human prompt) and the queue after it.

        `at` is the record's byte offset in its file: what a queued prompt is known by in a marker.
        """
        ...


@runtime_checkable
class FileAwareFormat(JsonlFormat, Protocol):
    """A format whose rules depend on the file: the provider hands it the file's first record."""

    def for_file(self, first_record: object) -> JsonlFormat:
        """The format for a file whose first complete line is `first_record` (None: none, or not JSON)."""
        ...


def parse_timestamp(stamp: object) -> datetime | None:
    """An ISO 8601 timestamp as an aware datetime, or None when absent, naive or unparseable."""
    if not isinstance(stamp, str):
        return None
    try:
        parsed = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


# ------------------------------------------------------------------------------ a configured one


@dataclass(frozen=True, slots=True)
class TranscriptFormat:
    """A configurable format: which JSONL records are human prompts, by field names alone.

    A record is a prompt when it is a JSON object whose `type_field` is `prompt_type`, whose
    `message_field` object has `role_field` equal to `prompt_role`, whose content is a string or a
    list of blocks with at least one text block and no `excluded_block_types` block, none of
    whose `excluded_flags` is `true`, and whose text starts with none of `excluded_prefixes`.
    """

    name: str
    type_field: str = "type"
    prompt_type: str = "user"
    message_field: str = "message"
    role_field: str = "role"
    prompt_role: str = "user"
    content_field: str = "content"
    block_type_field: str = "type"
    text_block_type: str = "text"
    text_field: str = "text"
    excluded_block_types: frozenset[str] = frozenset({"tool_result"})
    excluded_flags: tuple[str, ...] = ()
    excluded_prefixes: tuple[str, ...] = ()
    timestamp_field: str = "timestamp"

    def read(self, record: object, queued: Queue, at: int) -> tuple[Prompt | None, Queue]:  # noqa: ARG002
        """A prompt when `prompt_text` finds one; this format keeps no queue."""
        text = self.prompt_text(record)
        if text is None:
            return None, queued
        return Prompt(normalize_text(text), self.occurred_at(record)), queued

    def prompt_text(self, record: object) -> str | None:
        """The prompt's text (text blocks joined with a newline), or None when not a prompt."""
        if not isinstance(record, dict) or record.get(self.type_field) != self.prompt_type:
            return None
        if any(record.get(flag) is True for flag in self.excluded_flags):
            return None
        message = record.get(self.message_field)
        if not isinstance(message, dict) or message.get(self.role_field) != self.prompt_role:
            return None
        text = self._content_text(message.get(self.content_field))
        if text is None or not text.strip() or text.lstrip().startswith(self.excluded_prefixes):
            return None
        return text

    def _content_text(self, content: object) -> str | None:
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            return None
        texts: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get(self.block_type_field)
            if kind in self.excluded_block_types:
                return None
            text = block.get(self.text_field)
            if kind == self.text_block_type and isinstance(text, str):
                texts.append(text)
        return "\n".join(texts) if texts else None

    def occurred_at(self, record: object) -> datetime | None:
        """The record's timestamp as an aware datetime, or None when absent or unparseable."""
        if not isinstance(record, dict):
            return None
        return parse_timestamp(record.get(self.timestamp_field))


# ------------------------------------------------------------------------------------ Claude Code

_CLAUDE_EXCLUDED_FLAGS = ("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly")
"""isMeta: harness-written user records (hook feedback, command caveats, skill bodies);
isSidechain: a subagent's turns; isCompactSummary / isVisibleInTranscriptOnly: a /compact summary."""


@dataclass(frozen=True, slots=True)
class _Content:
    """A message's content: its text blocks joined, how many images, whether a tool result."""

    text: str
    images: int
    tool_result: bool


def _content(content: object) -> _Content | None:
    """Text, image count (pasted documents too) and tool-result flag of string or block content."""
    if isinstance(content, str):
        return _Content(content, 0, tool_result=False)
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    images = 0
    tool_result = False
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(text := block.get("text"), str):
            texts.append(text)
        elif kind in ("image", "document"):
            images += 1
        elif kind == "tool_result":
            tool_result = True
    return _Content("\n".join(texts), images, tool_result)


@dataclass(frozen=True, slots=True)
class ClaudeCodeFormat:
    """Claude Code session transcripts: each delivered human prompt once (see the module docstring)."""

    name: str = "claude-code"

    def read(self, record: object, queued: Queue, at: int) -> tuple[Prompt | None, Queue]:  # noqa: ARG002
        """The prompt this record is; Claude Code's delivery records need no queue state."""
        return claude_code_prompt(record), queued


def claude_code_prompt(record: object) -> Prompt | None:
    """The human turn one Claude Code transcript record is, or None."""
    if not isinstance(record, dict):
        return None
    match record.get("type"):
        case "user":
            classified = _user_record(record)
        case "system":
            classified = _local_command(record)
        case "attachment":
            classified = _absorbed_prompt(record.get("attachment"))
        case "queue-operation":
            classified = _removed_with_text(record)
        case _:
            classified = None
    if classified is None or not classified.origin.is_human:
        return None
    return Prompt(classified.words, parse_timestamp(record.get("timestamp")))


def _user_record(record: Mapping[str, object]) -> ClassifiedPrompt | None:
    """A `user` record: typed words, shell input, a slash command, images, or an answer."""
    if any(record.get(flag) is True for flag in _CLAUDE_EXCLUDED_FLAGS) or claude_code_labels_not_human(
        record
    ):
        return None
    message = record.get("message")
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = _content(message.get("content"))
    if content is None:
        return None
    if content.tool_result:
        return _answer(record.get("toolUseResult"))
    return classify_claude_code_prompt(content.text, images=content.images)


def _answer(result: object) -> ClassifiedPrompt | None:
    """The person's answer in an `AskUserQuestion` tool result (`questions` with answers or a response)."""
    if not isinstance(result, dict) or not isinstance(result.get("questions"), list):
        return None
    answers = result.get("answers")
    chosen = [str(value) for value in answers.values()] if isinstance(answers, dict) else []
    response = result.get("response")
    if isinstance(response, str) and response.strip():
        chosen.append(response)
    words = normalize_text(" ".join(chosen))
    return ClassifiedPrompt(PromptOrigin.TYPED, words) if words else None


def _local_command(record: Mapping[str, object]) -> ClassifiedPrompt | None:
    """A slash command that runs locally, written only as a `system` `local_command` record."""
    if record.get("subtype") != "local_command" or record.get("isMeta") is True:
        return None
    if claude_code_labels_not_human(record) or not isinstance(text := record.get("content"), str):
        return None
    classified = classify_claude_code_prompt(text)
    return classified if classified.origin is PromptOrigin.SLASH_COMMAND else None


def _absorbed_prompt(attachment: object) -> ClassifiedPrompt | None:
    """A prompt typed while the agent was busy and absorbed into the running turn (`queued_command`)."""
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        return None
    if attachment.get("commandMode", "prompt") != "prompt" or attachment.get("isMeta") is True:
        return None
    if claude_code_labels_not_human(attachment):
        return None
    return _classify(attachment.get("prompt"))


def _removed_with_text(record: Mapping[str, object]) -> ClassifiedPrompt | None:
    """An older version's `remove` naming the prompt it took out of the queue (delivered or withdrawn)."""
    if record.get("operation") != "remove" or "content" not in record:
        return None
    return _classify(record.get("content"))


def _classify(content: object) -> ClassifiedPrompt | None:
    """The classification of queued content (a string or blocks), or None when it is neither."""
    parsed = _content(content)
    if parsed is None or parsed.tool_result:
        return None
    return classify_claude_code_prompt(parsed.text, images=parsed.images)


# ------------------------------------------------------------------------------------------ Codex


@dataclass(frozen=True, slots=True)
class CodexFormat:
    """Codex CLI session rollouts: what `domain.codex_prompts` calls a person's act, once each.

    `subagent` is the format for a rollout a sub-agent or a review wrote: it counts nothing.
    """

    name: str = "codex"
    subagent: bool = False

    def for_file(self, first_record: object) -> CodexFormat:
        """This format for the rollout whose first record (`session_meta`) is `first_record`."""
        return CodexFormat(self.name, subagent=codex_rollout_is_subagent(first_record))

    def read(self, record: object, queued: Queue, at: int) -> tuple[Prompt | None, Queue]:  # noqa: ARG002
        """A prompt for a record that is a person's act; Codex needs no queue state."""
        if self.subagent or not isinstance(record, dict):
            return None, queued
        classified = classify_codex_record(record)
        if classified is None or not classified.origin.is_human:
            return None, queued
        return Prompt(classified.words, parse_timestamp(record.get("timestamp"))), queued


CLAUDE_CODE = ClaudeCodeFormat()
"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`)."""

CODEX = CodexFormat()
"""Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`)."""
