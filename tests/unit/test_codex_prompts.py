"""Codex's labels decide who wrote a rollout record: the origin and the words of each shape."""

from __future__ import annotations

import pytest
from codex_labelled import (
    COMPACT_TURN,
    TURN,
    agents_md_and_environment,
    compacted,
    goal,
    message,
    meta,
    pasted_image,
    review_outcome,
    shell_command,
    subagent_notification,
    task_started,
    turn_aborted,
    typed,
    verified_answer,
)
from hypothesis import given
from hypothesis import strategies as st

from sessionwatch.domain.codex_prompts import (
    CodexBlock,
    classify_codex_labelled,
    classify_codex_record,
    codex_rollout_is_subagent,
)
from sessionwatch.domain.prompt_origin import ClassifiedPrompt
from sessionwatch.domain.prompt_origin import PromptOrigin as P

CASES = [
    ("typed-tag", typed("<bug_report>fails</bug_report>"), P.TYPED, "<bug_report>fails</bug_report>"),
    ("image-only", pasted_image(), P.IMAGE, ""),
    ("image-and-words", pasted_image(words="[Image #1] what is this"), P.TYPED, "what is this"),
    ("shell", shell_command("git log -1"), P.SHELL_INPUT, "git log -1"),
    ("goal", goal("ship the notes"), P.SLASH_COMMAND, "/goal ship the notes"),
    ("review", review_outcome(), P.SLASH_COMMAND, "/review"),
    ("manual-compact", compacted(turn=COMPACT_TURN, attributed=TURN), P.SLASH_COMMAND, "/compact"),
    ("answer", verified_answer("Blue"), P.TYPED, "Blue"),
    ("context", agents_md_and_environment(), P.INJECTED_CONTEXT, ""),
    ("interrupt", turn_aborted(), P.INTERRUPT, ""),
    ("agent", subagent_notification(), P.AGENT_MESSAGE, ""),
]


@pytest.mark.parametrize(("record", "origin", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_records_origin_and_words(record: dict[str, object], origin: P, words: str) -> None:
    classified = classify_codex_record(record)

    assert classified is not None
    assert classified.origin is origin
    if origin.is_human:
        assert classified.words == words


@pytest.mark.parametrize(
    "record",
    [
        task_started(),
        compacted(turn=TURN, attributed=TURN),
        meta(),
        message([("user.text", "user", "x")], role="developer"),
    ],
    ids=["task-started", "automatic-compaction", "session-meta", "developer-message"],
)
def test_records_that_are_no_message_of_a_person_are_none(record: dict[str, object]) -> None:
    assert classify_codex_record(record) is None


def test_a_compaction_without_resume_metadata_is_not_counted() -> None:
    record = compacted(turn=COMPACT_TURN, attributed=TURN)
    payload = record["payload"]
    assert isinstance(payload, dict)
    del payload["resume_metadata"]
    assert classify_codex_record(record) is None


@pytest.mark.parametrize(
    ("source", "thread_source", "subagent"),
    [
        ("cli", "user", False),
        ("exec", "user", False),
        ({"subagent": "review"}, "subagent", True),
        ("cli", "subagent", True),
    ],
)
def test_a_sub_agent_rollout_is_told_by_its_session_meta(
    source: object, thread_source: str, subagent: bool
) -> None:
    assert codex_rollout_is_subagent(meta(source, thread_source)) is subagent
    assert codex_rollout_is_subagent(typed("x")) is False
    assert codex_rollout_is_subagent(None) is False


_KINDS = st.sampled_from(
    ["user.text", "user.image", "user.goal", "shell.user_command", "unknown", "x.y", None]
)
_PROVENANCES = st.sampled_from(["user", "harness", "tool", None])


@given(
    st.lists(
        st.builds(CodexBlock, st.one_of(st.none(), st.text(max_size=60)), _KINDS, _PROVENANCES), max_size=5
    )
)
def test_the_labelled_rule_is_total_and_its_words_are_normalized(blocks: list[CodexBlock]) -> None:
    classified = classify_codex_labelled(blocks)

    if classified is not None:
        assert isinstance(classified, ClassifiedPrompt)
        assert classified.words == " ".join(classified.words.split())
    assert classify_codex_labelled(blocks) == classified
