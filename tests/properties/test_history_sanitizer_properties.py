"""Properties of the `sessions_history` sanitizer (SPEC-tools §T5 H1-H7, N1-N6; issue 10).

Sanitizing twice equals sanitizing once for any input: N1-N6 repeat until the text stops changing,
H4 runs before and after them (alternating with them until both settle), H4 leaves its own masks
alone, and H5 only cuts where the truncated text is itself settled (see the `history`,
`assistant_text` and `redaction` module docstrings). So the idempotence properties draw arbitrary
Unicode text as well as constructs (tags, fences, loose backticks, credentials, masks, control
tokens) glued to random text with no separators, short and around the 4000-character cut.

Credentials are embedded between blanks, so that the input really holds one: a word glued onto a
token (`ask-…`) is not credential-shaped in the input either. The sanitizer masks it before any
assistant-text removal can glue a word onto it.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sessionwatch.domain.tools.assistant_text import sanitize_assistant_text
from sessionwatch.domain.tools.code_regions import code_regions
from sessionwatch.domain.tools.redaction import redact_text
from sessionwatch.domain.tools.transcript_pages import (
    HISTORY_MAX_BYTES,
    HISTORY_PLACEHOLDER,
    MAX_TEXT_CHARS,
    TRUNCATION_MARKER,
    SanitizedHistory,
    json_size,
    sanitize_history,
)

CONTROL_TOKEN = re.compile("<[|\uff5c][^|\uff5c]*[|\uff5c]>")
TEXT_FIELDS = ("text", "thinking", "partialJson")

# ------------------------------------------------------------------------------- strategies

WORDS = ("alpha", "beta", "x1", "Done.", '"q"', "naïve", "日本")
CONSTRUCTS = (
    "<think>w</think>",
    '<thinking a="1">w</thinking>',
    "<final>w</final>",
    "<think/>",
    "</thought>",
    "<antthinking>w",
    "<|assistant|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "<relevant-memories>\n- m\n</relevant-memories>",
    "<relevant_memories>m",
    "</relevant-memories>",
    '<tool_call>{"name":"exec"}</tool_call>',
    "<tool_call/>",
    "</tool_call>",
    "Wrap <tool_call> tags </tool_call>",
    '<function_calls>\n[{"name":"read"}]</function_calls>',
    '<tool_result>{"ok":1}</tool_call>',
    '<function_calls>\n<invoke n="1">',
    '[Tool Call: exec (ID: t1)]\nArguments: {"cmd":"ls"}',
    "[Tool Call: read]",
    "[Tool Result for ID t1]\nfile list",
    "[Historical context: h]\n",
    'minimax:tool_call <invoke name="s">q</invoke>',
    "</minimax:tool_call>",
)
INLINE_CODE = ("`<think>w</think>`", "`<|assistant|>`", "``<tool_call>{}``", "`<relevant-memories>`")
FENCED_CODE = (
    "\n\n```\n<think>w</think> <|x|> <tool_call>{}\n```\n",
    "\n\n~~~\n<final> <relevant-memories>\n~~~\n",
)
SHORT_CREDENTIALS = ("API_KEY=abc123", "--password hunter2", '{"token":"t0k"}', "sk-abcdefgh1")
"""Credentials whose secrets are under 18 characters: H4 masks them as `***`."""
LONG_CREDENTIALS = (
    "API_KEY=abcdefghijklmnopqrstuvwxyz",
    "Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz",
    "Bearer abcdefghijklmnopqrstuvwxyz0123",
    "ghp_abcdefghijklmnopqrstuvwxyz",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----",
    "123456789:abcdefghijklmnopqrstuvwxyz",
)
"""Credentials whose secrets H4 masks as `first6…last4` (or a PEM block's outer lines)."""
MASKS = ("KEY=***", "KEY=**", "KEY=abcdef…wxyz", "KEY=abcdef…", "…", "***", "`", "``", "\n", "\n```\n")
"""Masks, parts of masks, loose backticks and fences: what re-pairs or re-matches between passes."""


def _sentence(pieces: tuple[str, ...], max_size: int = 10) -> st.SearchStrategy[str]:
    """Whole pieces joined by blanks, between a leading and a trailing word (so no trim can reach them)."""
    return st.lists(st.sampled_from(pieces), max_size=max_size).map(
        lambda parts: "x " + " ".join(parts) + " y"
    )


ALL_PIECES = WORDS + CONSTRUCTS + INLINE_CODE + FENCED_CODE + SHORT_CREDENTIALS + LONG_CREDENTIALS + MASKS

well_formed = _sentence(ALL_PIECES)
"""Constructs between blanks."""

glued = st.lists(st.one_of(st.text(max_size=6), st.sampled_from(ALL_PIECES)), max_size=12).map("".join)
"""Constructs and random text glued together: removals re-pair code, assemble tags and split masks."""

long_glued = st.tuples(
    glued, st.integers(min_value=3950, max_value=4050), st.sampled_from("z `<"), glued
).map(lambda parts: parts[0] + parts[2] * (parts[1] - len(parts[0])) + parts[3])
"""Glued constructs on both sides of the 4000-character cut."""


def _block(text: str) -> st.SearchStrategy[dict[str, object]]:
    return st.sampled_from(
        [
            {"type": "text", "text": text},
            {"type": "thinking", "thinking": text, "thinkingSignature": "c2ln"},
            {"type": "toolCall", "partialJson": text, "arguments": {"q": text}},
            {"type": "image", "data": "QUJDRA==", "mimeType": "image/png"},
            {"type": "image", "bytes": 7},
        ]
    )


def _messages(texts: st.SearchStrategy[str]) -> st.SearchStrategy[list[dict[str, object]]]:
    content: st.SearchStrategy[object] = st.one_of(texts, st.lists(texts.flatmap(_block), max_size=3))
    message: st.SearchStrategy[dict[str, object]] = st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "toolResult", "tool", "system"]), "content": content},
        optional={
            "text": texts,
            "usage": st.just({"input": 1}),
            "details": st.just({"exitCode": 0}),
            "__openclaw": st.integers(min_value=1, max_value=99).map(lambda seq: {"seq": seq}),
        },
    )
    return st.lists(message, max_size=6)


random_messages = _messages(st.text(max_size=40))
big_messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "toolResult"]),
            "content": st.tuples(
                st.text(min_size=1, max_size=8), st.integers(min_value=0, max_value=900)
            ).map(lambda repeated: repeated[0] * repeated[1]),
        }
    ),
    max_size=40,
)
"""Up to 40 messages of up to 7200 characters: pages often pass 80 KiB."""


VALUE = r"[A-Za-z0-9._/+=-]{4,30}"
"""Secret values: at least 4 characters, none a blank, quote, backslash, `*` or `…`, so a secret can
only show up in the output if H4 missed it (the test assumes it is not part of the surroundings)."""


def _token(prefix: str, body: str) -> st.SearchStrategy[tuple[str, str]]:
    """`(credential, secret)` for a token shape `prefix` + `body`, ending on a word character."""
    return st.from_regex(f"{body}[A-Za-z0-9]", fullmatch=True).map(
        lambda tail: (prefix + tail, prefix + tail)
    )


def _assignment() -> st.SearchStrategy[tuple[str, str]]:
    name = st.tuples(
        st.from_regex(r"[A-Za-z0-9_]{0,6}", fullmatch=True),
        st.sampled_from(["KEY", "token", "Secret", "PASSWORD", "passwd"]),
    ).map("".join)
    value = st.from_regex(VALUE, fullmatch=True)
    return st.tuples(name, st.sampled_from(["=", ": ", " = "]), st.sampled_from(["", '"', "'"]), value).map(
        lambda parts: (f"{parts[0]}{parts[1]}{parts[2]}{parts[3]}{parts[2]}", parts[3])
    )


def _field(
    template: str, names: tuple[str, ...], value_pattern: str = VALUE
) -> st.SearchStrategy[tuple[str, str]]:
    return st.tuples(st.sampled_from(names), st.from_regex(value_pattern, fullmatch=True)).map(
        lambda parts: (template.format(name=parts[0], value=parts[1]), parts[1])
    )


def _pem() -> st.SearchStrategy[tuple[str, str]]:
    body = st.lists(st.from_regex(r"[A-Za-z0-9+/]{8,40}", fullmatch=True), min_size=1, max_size=4).map(
        "\n".join
    )
    return st.tuples(st.sampled_from(["", "RSA ", "EC ", "OPENSSH "]), body).map(
        lambda parts: (
            f"-----BEGIN {parts[0]}PRIVATE KEY-----\n{parts[1]}\n-----END {parts[0]}PRIVATE KEY-----",
            parts[1],
        )
    )


credentials = st.one_of(
    _assignment(),
    _field(
        '"{name}": "{value}"',
        ("apiKey", "token", "secret", "password", "passwd", "accessToken", "refreshToken"),
    ),
    _field(
        "{name} {value}",
        ("--api-key", "--api_key", "--apikey", "--token", "--secret", "--password", "--passwd"),
    ),
    _field("Authorization: {name} {value}", ("Bearer", "bearer"), r"[A-Za-z0-9._+=-]{3,30}[A-Za-z0-9]"),
    _field("{name} {value}", ("Bearer",), r"[A-Za-z0-9._+=-]{17,40}[A-Za-z0-9]"),
    _pem(),
    _token("sk-", r"[A-Za-z0-9_-]{7,30}"),
    _token("ghp_", r"[A-Za-z0-9]{19,30}"),
    _token("github_pat_", r"[A-Za-z0-9_]{19,30}"),
    st.sampled_from("baprs").flatmap(lambda kind: _token(f"xox{kind}-", r"[A-Za-z0-9-]{9,30}")),
    _token("xapp-", r"[A-Za-z0-9-]{9,30}"),
    _token("gsk_", r"[A-Za-z0-9_-]{9,30}"),
    _token("AIza", r"[0-9A-Za-z_-]{19,30}"),
    _token("pplx-", r"[A-Za-z0-9_-]{9,30}"),
    _token("npm_", r"[A-Za-z0-9]{9,30}"),
    st.from_regex(r"[0-9]{6,12}", fullmatch=True).flatmap(
        lambda digits: _token(digits + ":", r"[A-Za-z0-9_-]{19,30}")
    ),
)
"""`(credential, secret)` for every shape SPEC-tools §T5 H4 lists; the secret is what must disappear."""

separated_credentials = st.lists(
    st.one_of(st.sampled_from(WORDS), credentials.map(lambda pair: pair[0])), max_size=8
).map(" ".join)


# ------------------------------------------------------------------------------ any input


def _text_fields(message: Mapping[str, object]) -> list[str]:
    """The strings H4 and H5 apply to: string content, block text fields, bare content strings, `text`."""
    found = [value for key in ("content", "text") if isinstance(value := message.get(key), str)]
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            found.append(block)
        elif isinstance(block, Mapping):
            found.extend(value for key in TEXT_FIELDS if isinstance(value := block.get(key), str))
    return found


@given(st.text())
def test_any_text_sanitizes_without_raising_and_never_grows(text: str) -> None:
    assert len(sanitize_assistant_text(text)) <= len(text)


@given(
    st.lists(st.one_of(st.text(max_size=8), st.sampled_from(CONSTRUCTS + INLINE_CODE + FENCED_CODE))).map(
        "".join
    )
)
def test_any_mix_of_constructs_sanitizes_without_raising_and_never_grows(text: str) -> None:
    assert len(sanitize_assistant_text(text)) <= len(text)


@given(st.text())
def test_any_text_redacts_without_raising_and_reports_exactly_whether_it_changed(text: str) -> None:
    redacted, changed = redact_text(text)
    assert changed == (redacted != text)


@given(st.text(alphabet=st.sampled_from("`~\n ab")))
def test_code_regions_are_sorted_disjoint_and_start_at_a_fence_or_backtick(text: str) -> None:
    regions = code_regions(text)
    assert all(0 <= start < end <= len(text) for start, end in regions)
    assert all(first[1] <= second[0] for first, second in itertools.pairwise(regions))
    for start, end in regions:
        fenced = text.startswith(("```", "~~~"), start) and (start == 0 or text[start - 1] == "\n")
        assert fenced or (text[start] == "`" and text[end - 1] == "`")


@given(random_messages, st.booleans())
def test_any_messages_sanitize_into_fresh_json_with_exact_flags(
    messages: list[dict[str, object]], tools: bool
) -> None:
    before = json.dumps(messages, sort_keys=True)
    result = sanitize_history(messages, include_tools=tools)
    assert json.dumps(messages, sort_keys=True) == before
    assert result.bytes == json_size(list(result.messages))
    assert result.truncated == (result.content_truncated or result.dropped_messages)
    assert all("usage" not in message and "details" not in message for message in result.messages)
    blocks = [block for m in result.messages if isinstance(c := m.get("content"), list) for block in c]
    assert all("data" not in block for block in blocks if isinstance(block, dict))
    if not tools:
        assert all(message.get("role") not in {"toolResult", "tool"} for message in result.messages)


# ------------------------------------------------------------------------------------- sizes


@given(big_messages)
def test_no_string_passes_4000_characters_and_no_page_passes_80_kib(
    messages: list[dict[str, object]],
) -> None:
    result = sanitize_history(messages, include_tools=True)
    assert all(
        len(text) <= MAX_TEXT_CHARS + len(TRUNCATION_MARKER)
        for message in result.messages
        for text in _text_fields(message)
    )
    assert result.bytes == json_size(list(result.messages)) <= HISTORY_MAX_BYTES
    singles = [sanitize_history([message], include_tools=True).messages[0] for message in messages]
    kept = len(result.messages)
    assert result.messages == tuple(singles[len(singles) - kept :])
    assert result.dropped_messages == (kept < len(messages))
    if result.dropped_messages:  # one more message would have passed 80 KiB
        assert json_size(singles[len(singles) - kept - 1 :]) > HISTORY_MAX_BYTES


@given(st.integers(min_value=1, max_value=40), st.integers(min_value=0, max_value=10**6))
def test_a_lone_oversized_message_becomes_the_placeholder_with_its_seq(blocks: int, seq: int) -> None:
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "q" * 4000}] * blocks,
        "__openclaw": {"seq": seq},
    }
    result = sanitize_history([message], include_tools=False)
    if json_size([message]) <= HISTORY_MAX_BYTES:
        assert (result.messages, result.dropped_messages) == ((message,), False)
    else:
        placeholder = {"role": "assistant", "content": HISTORY_PLACEHOLDER}
        assert result.messages == ((placeholder | {"__openclaw": {"seq": seq}}) if seq else placeholder,)
        assert (result.dropped_messages, result.bytes) == (True, json_size(list(result.messages)))


# -------------------------------------------------------------------------------- idempotence


@given(st.one_of(st.text(), glued, well_formed))
def test_sanitizing_assistant_text_twice_equals_once(text: str) -> None:
    once = sanitize_assistant_text(text)
    assert sanitize_assistant_text(once) == once


@given(st.one_of(st.text(), glued, well_formed, separated_credentials))
def test_redacting_twice_equals_once(text: str) -> None:
    once, _ = redact_text(text)
    assert redact_text(once) == (once, False)


def _again(result: SanitizedHistory, *, tools: bool) -> SanitizedHistory:
    return sanitize_history(result.messages, include_tools=tools)


def _assert_settled(once: SanitizedHistory, twice: SanitizedHistory) -> None:
    assert twice.messages == once.messages
    assert twice.bytes == once.bytes
    assert (twice.content_redacted, twice.dropped_messages) == (False, False)
    long = any(len(text) > MAX_TEXT_CHARS for m in once.messages for text in _text_fields(m))
    assert twice.content_truncated == long


@given(st.one_of(random_messages, _messages(glued), _messages(well_formed)), st.booleans())
def test_sanitizing_history_twice_equals_once(messages: list[dict[str, object]], tools: bool) -> None:
    once = sanitize_history(messages, include_tools=tools)
    _assert_settled(once, _again(once, tools=tools))


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(st.sampled_from(["assistant", "user"]), long_glued).map(
            lambda pair: {"role": pair[0], "content": pair[1]}
        ),
        min_size=1,
        max_size=2,
    )
)
def test_sanitizing_long_history_twice_equals_once(messages: list[dict[str, object]]) -> None:
    once = sanitize_history(messages, include_tools=False)
    _assert_settled(once, _again(once, tools=False))
    assert all(
        len(text) <= MAX_TEXT_CHARS + len(TRUNCATION_MARKER)
        for m in once.messages
        for text in _text_fields(m)
    )


# -------------------------------------------------------------------------------- leaks


@given(
    credentials,
    st.text(max_size=30),
    st.text(max_size=30),
    st.sampled_from(["user", "assistant", "toolResult"]),
)
def test_no_embedded_credential_survives(
    credential: tuple[str, str], before: str, after: str, role: str
) -> None:
    token, secret = credential
    head, _, tail = token.rpartition(secret)  # the secret is the credential's last part
    assume(all(secret not in surrounding for surrounding in (before, after, f"{head} {tail}")))
    text = f"{before} {token}\n{after}"
    assert secret not in redact_text(text)[0]
    result = sanitize_history(
        [{"role": role, "content": [{"type": "text", "text": text}]}], include_tools=True
    )
    assert [secret in value for value in _text_fields(result.messages[0])] == [False]
    assert result.content_redacted  # H4 runs before H3, so it masks the credential before any removal


@given(credentials, glued, glued)
def test_no_credential_between_constructs_survives_assistant_sanitizing(
    credential: tuple[str, str], before: str, after: str
) -> None:
    token, secret = credential
    head, _, tail = token.rpartition(secret)
    assume(all(secret not in surrounding for surrounding in (before, after, f"{head} {tail}")))
    text = f"{before} {token}\n{after}"
    result = sanitize_history([{"role": "assistant", "content": text}], include_tools=False)
    assert secret not in str(result.messages[0]["content"])


token_bodies = st.text(alphabet=st.characters(blacklist_characters="|\uff5c`"), max_size=12)
tokens = st.tuples(st.sampled_from("|\uff5c"), token_bodies, st.sampled_from("|\uff5c")).map(
    lambda parts: f"<{parts[0]}{parts[1]}{parts[2]}>"
)
pipe_free_text = st.text(alphabet=st.characters(blacklist_characters="|\uff5c"), max_size=20)


@given(
    st.one_of(
        st.lists(st.one_of(pipe_free_text, tokens), max_size=8).map("".join),
        st.lists(st.one_of(st.text(max_size=6), tokens, st.sampled_from(ALL_PIECES)), max_size=10).map(
            "".join
        ),
    )
)
def test_no_control_token_survives_outside_code(text: str) -> None:
    for sanitized in (
        sanitize_assistant_text(text),
        str(
            sanitize_history([{"role": "assistant", "content": text}], include_tools=False).messages[0][
                "content"
            ]
        ),
    ):
        regions = code_regions(sanitized)
        assert all(
            any(start <= token.start() < end for start, end in regions)
            for token in CONTROL_TOKEN.finditer(sanitized)
        )
