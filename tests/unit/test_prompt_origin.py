"""Who wrote a user-role prompt: the pure rules a transcript provider and a prompt hook share.

Each case is a prompt text as Claude Code or Codex writes it; the classification says whether a
person typed it and which words self-echo and queued-prompt matching compare.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionwatch.domain.prompt_origin import (
    ClassifiedPrompt,
    PromptOrigin,
    classify_claude_code_prompt,
    classify_codex_message,
)

P = PromptOrigin
SLASH_MODEL = (
    "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
    "            <command-args>opus</command-args>"
)
SLASH_REVIEW = (
    "<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n"
    "<command-args>the parser</command-args>"
)
SHELL_COMMAND = (
    "<user_shell_command>\n<command>\nls -la\n</command>\n<result>\nOutput:\n.\n</result>\n"
    "</user_shell_command>"
)

CLAUDE_CASES: list[tuple[str, str, int, PromptOrigin, str]] = [
    ("typed", "  fix the\n build  ", 0, P.TYPED, "fix the build"),
    ("shell-input", "<bash-input>git status</bash-input>", 0, P.SHELL_INPUT, "git status"),
    (
        "slash-command",
        SLASH_MODEL,
        0,
        P.SLASH_COMMAND,
        "/model opus",
    ),
    (
        "slash-command-message-first",
        SLASH_REVIEW,
        0,
        P.SLASH_COMMAND,
        "/review the parser",
    ),
    ("slash-command-without-slash", "<command-name>init</command-name>", 0, P.SLASH_COMMAND, "/init"),
    ("image-only", "", 1, P.IMAGE, ""),
    ("image-placeholder-only", "[Image #1] [Image #2]", 2, P.IMAGE, ""),
    ("image-with-words", "[Image #1] why is this red?", 1, P.TYPED, "why is this red?"),
    ("empty", " \n\t", 0, P.EMPTY, ""),
    (
        "task-notification",
        "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>",
        0,
        P.TASK_NOTIFICATION,
        "<task-notification> <task-id>b1</task-id> <status>completed</status> </task-notification>",
    ),
    ("shell-stdout", "<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>", 0, P.SHELL_OUTPUT, ""),
    ("shell-stderr", "<bash-stderr>boom</bash-stderr>", 0, P.SHELL_OUTPUT, ""),
    ("teammate", '<teammate-message teammate_id="lead">go</teammate-message>', 0, P.AGENT_MESSAGE, ""),
    (
        "teammate-introduced",
        'Another Claude session sent a message:\n<teammate-message teammate_id="w">x</teammate-message>',
        0,
        P.AGENT_MESSAGE,
        "",
    ),
    (
        "cross-session",
        '<cross-session-message from="bridge:s">hi</cross-session-message>',
        0,
        P.AGENT_MESSAGE,
        "",
    ),
    ("interrupt", "[Request interrupted by user]", 0, P.INTERRUPT, ""),
    ("interrupt-tool-use", "[Request interrupted by user for tool use]", 0, P.INTERRUPT, ""),
    (
        "command-stdout",
        "<local-command-stdout>Set model to opus</local-command-stdout>",
        0,
        P.COMMAND_OUTPUT,
        "",
    ),
    ("command-stderr", "<local-command-stderr>error</local-command-stderr>", 0, P.COMMAND_OUTPUT, ""),
    ("command-caveat", "<local-command-caveat>Caveat: …</local-command-caveat>", 0, P.COMMAND_OUTPUT, ""),
    ("hook-feedback", "Stop hook feedback:\n[hook]: keep going", 0, P.INJECTED_CONTEXT, ""),
    ("reminder-only", "<system-reminder>todo list empty</system-reminder>", 0, P.INJECTED_CONTEXT, ""),
    (
        "reminder-then-words",
        "<system-reminder>x</system-reminder>\n<ide_opened_file>a.py</ide_opened_file>\nship it",
        0,
        P.TYPED,
        "ship it",
    ),
    ("words-then-reminder", "ship it\n<system-reminder>x</system-reminder>", 0, P.TYPED, "ship it"),
    (
        "reminder-then-notification",
        "<system-reminder>x</system-reminder><task-notification>",
        0,
        P.TASK_NOTIFICATION,
        "",
    ),
]


@pytest.mark.parametrize(
    ("text", "images", "origin", "words"),
    [case[1:] for case in CLAUDE_CASES],
    ids=[case[0] for case in CLAUDE_CASES],
)
def test_claude_code_prompt_origin_and_words(
    text: str, images: int, origin: PromptOrigin, words: str
) -> None:
    classified = classify_claude_code_prompt(text, images=images)

    assert classified.origin is origin
    if origin.is_human or words:
        assert classified.words == words


def test_exactly_typed_words_shell_input_slash_commands_and_images_are_a_persons() -> None:
    assert {o for o in PromptOrigin if o.is_human} == {P.TYPED, P.SHELL_INPUT, P.SLASH_COMMAND, P.IMAGE}


CODEX_CASES: list[tuple[str, list[str], int, PromptOrigin, str]] = [
    ("typed", ["fix the\nflaky test"], 0, P.TYPED, "fix the flaky test"),
    ("two-blocks", ["first part", "second part"], 0, P.TYPED, "first part second part"),
    ("image-only", ["<image name=[Image #1]>", "</image>"], 1, P.IMAGE, ""),
    (
        "image-with-words",
        ["<image name=[Image #1]>", "</image>", "what is this?"],
        1,
        P.TYPED,
        "what is this?",
    ),
    ("empty", [], 0, P.EMPTY, ""),
    (
        "environment",
        ["<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"],
        0,
        P.INJECTED_CONTEXT,
        "",
    ),
    (
        "agents-md",
        ["# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>"],
        0,
        P.INJECTED_CONTEXT,
        "",
    ),
    ("user-instructions", ["<user_instructions>\nx\n</user_instructions>"], 0, P.INJECTED_CONTEXT, ""),
    ("skill", ["<skill>\n<name>release</name>\n</skill>"], 0, P.INJECTED_CONTEXT, ""),
    ("hook-prompt", ['<hook_prompt hook_run_id="r1">again</hook_prompt>'], 0, P.INJECTED_CONTEXT, ""),
    ("unknown-envelope", ["<recommended_plugins>\n- x\n</recommended_plugins>"], 0, P.INJECTED_CONTEXT, ""),
    ("turn-aborted", ["<turn_aborted>\nThe user interrupted.\n</turn_aborted>"], 0, P.INTERRUPT, ""),
    ("subagent", ["<subagent_notification>\n{}\n</subagent_notification>"], 0, P.AGENT_MESSAGE, ""),
    (
        "shell-command",
        [SHELL_COMMAND],
        0,
        P.SHELL_INPUT,
        "ls -la",
    ),
    (
        "compaction",
        ["Another language model started to solve this problem and ..."],
        0,
        P.INJECTED_CONTEXT,
        "",
    ),
    (
        "context-block-spoils-message",
        ["hello", "<environment_context></environment_context>"],
        0,
        P.INJECTED_CONTEXT,
        "",
    ),
    ("a-tag-a-person-wrote", ["<div>not Codex's</div>"], 0, P.TYPED, "<div>not Codex's</div>"),
    (
        "image-placeholder-only",
        ['<image name=[Image #1] path="/repo/a.png">', "</image>", "[Image #1]"],
        1,
        P.IMAGE,
        "",
    ),
    (
        "image-placeholder-and-words",
        ["<image name=[Image #1]>", "</image>", "[Image #1] why?"],
        1,
        P.TYPED,
        "why?",
    ),
    (
        "review-outcome",
        ["<user_action>\n  <context>User initiated a review task.</context>\n  <action>review</action>\n"],
        0,
        P.SLASH_COMMAND,
        "/review",
    ),
    (
        "other-user-action",
        ["<user_action>\n  <action>undo</action>\n</user_action>"],
        0,
        P.INJECTED_CONTEXT,
        "",
    ),
]


@pytest.mark.parametrize(
    ("texts", "images", "origin", "words"),
    [case[1:] for case in CODEX_CASES],
    ids=[case[0] for case in CODEX_CASES],
)
def test_codex_message_origin_and_words(
    texts: list[str], images: int, origin: PromptOrigin, words: str
) -> None:
    classified = classify_codex_message(texts, images=images)

    assert classified.origin is origin
    if origin.is_human:
        assert classified.words == words


@given(st.text(max_size=300), st.integers(min_value=0, max_value=3))
def test_claude_code_classification_is_total_and_its_words_are_normalized(text: str, images: int) -> None:
    classified = classify_claude_code_prompt(text, images=images)

    assert isinstance(classified, ClassifiedPrompt)
    assert classified.words == " ".join(classified.words.split())
    assert classify_claude_code_prompt(text, images=images) == classified  # a pure function


@given(st.lists(st.text(max_size=120), max_size=4), st.integers(min_value=0, max_value=3))
def test_codex_classification_is_total_and_its_words_are_normalized(texts: list[str], images: int) -> None:
    classified = classify_codex_message(texts, images=images)

    assert classified.words == " ".join(classified.words.split())
    assert classify_codex_message(texts, images=images) == classified


@given(st.text(alphabet=st.characters(blacklist_characters="<[#!/C"), min_size=1, max_size=200))
def test_plain_words_are_always_a_typed_prompt(words: str) -> None:
    expected = P.TYPED if words.split() else P.EMPTY
    assert classify_claude_code_prompt(words).origin is expected
    assert classify_codex_message([words]).origin is expected


def test_every_section_of_attached_context_around_the_words_is_removed() -> None:
    text = (
        "<system-reminder>a</system-reminder>\n" * 500 + "ship it" + "<ide_selection>b</ide_selection>" * 500
    )

    assert classify_claude_code_prompt(text) == ClassifiedPrompt(P.TYPED, "ship it")
    assert classify_claude_code_prompt("<system-reminder>unclosed " + text).origin is P.TYPED
