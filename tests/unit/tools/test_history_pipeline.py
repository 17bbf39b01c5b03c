"""The `sessions_history` pipeline (SPEC-tools §T5 H1-H7, N1-N6, code regions) and §T12 examples 15-26."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping

import pytest

from sessionwatch.domain.tools.assistant_text import (
    apply_rules_once,
    sanitize_assistant_text,
    strip_control_tokens,
    strip_downgraded_scaffolding,
    strip_minimax_tool_calls,
    strip_relevant_memories,
    strip_thinking,
    strip_tool_call_xml,
)
from sessionwatch.domain.tools.code_regions import code_regions
from sessionwatch.domain.tools.errors import InvalidToolInput
from sessionwatch.domain.tools.redaction import DEFAULT_REDACT_PATTERNS, mask_secret, redact_text
from sessionwatch.domain.tools.transcript_pages import (
    HISTORY_MAX_BYTES,
    HISTORY_PLACEHOLDER,
    MAX_TEXT_CHARS,
    SESSIONS_LIST_PLACEHOLDER,
    TRUNCATION_MARKER,
    SanitizedHistory,
    decoded_base64_size,
    history_page,
    history_window,
    json_size,
    sanitize_history,
    smallest_seq,
    without_tool_messages,
)


def history(*messages: Mapping[str, object], include_tools: bool = False) -> SanitizedHistory:
    return sanitize_history(messages, include_tools=include_tools)


def assistant_says(text: str) -> str:
    """What `sessions_history` returns for an assistant message whose content is `text`."""
    content = history({"role": "assistant", "content": text}).messages[0]["content"]
    assert isinstance(content, str)
    return content


def user_says(text: str) -> tuple[str, SanitizedHistory]:
    result = history({"role": "user", "content": text})
    content = result.messages[0]["content"]
    assert isinstance(content, str)
    return content, result


# ------------------------------------------------------------------------------ §T12 examples


def test_example_15_thinking_blocks_go_unless_quoted_as_code() -> None:
    assert assistant_says("<think>secret plan</think>Answer: 42") == "Answer: 42"
    assert assistant_says("Sure. <thinking>still going") == "Sure. "
    assert assistant_says("Use `<think>` tags") == "Use `<think>` tags"


def test_example_16_relevant_memories_block_goes_through_its_closer() -> None:
    assert assistant_says("<relevant-memories>\n- likes tea\n</relevant-memories>\nHello") == "\nHello"


def test_example_17_tool_call_xml_payload_blocks_go_and_prose_tags_stay() -> None:
    assert assistant_says('Done.<tool_call>{"name":"exec"}</tool_call> Next.') == "Done. Next."
    assert assistant_says('Checking <function_calls>\n[{"name":"read"') == "Checking "
    assert assistant_says("Wrap calls in <tool_call> tags.") == "Wrap calls in <tool_call> tags."
    assert assistant_says('A<tool_call>{"q":"</tool_call>"}</tool_call>B') == "AB"


def test_example_18_downgraded_tool_scaffolding_goes() -> None:
    text = '[Tool Call: exec (ID: t1)]\nArguments: {"cmd":"ls"}\nAll files listed.'
    assert assistant_says(text) == "All files listed."
    assert assistant_says("[Historical context: earlier turns omitted]\nHi") == "Hi"


def test_example_19_control_tokens_go_with_a_space_between_words() -> None:
    assert assistant_says("Hello<|assistant|>world <\uff5cend\u2581of\u2581sentence\uff5c>") == "Hello world "


def test_example_20_minimax_invoke_xml_goes() -> None:
    text = 'Let me check.<invoke name="search"><parameter name="q">x</parameter></invoke></minimax:tool_call>'
    assert assistant_says(text) == "Let me check."


def test_example_21_credentials_in_user_text_are_masked() -> None:
    content, result = user_says("Use sk-1234567890abcdef1234 to authenticate")
    assert content == "Use sk-123…1234 to authenticate"
    assert result.content_redacted is True
    assert user_says("export API_KEY=abc123")[0] == "export API_KEY=***"
    assert user_says("run --password hunter2 now")[0] == "run --password *** now"


def test_example_22_long_user_text_keeps_4000_characters_and_the_marker() -> None:
    content, result = user_says("a" * 4500)
    assert content == "a" * 4000 + "\n…(truncated)…"
    assert (result.content_truncated, result.truncated, result.dropped_messages) == (True, True, False)


def test_example_23_oldest_messages_are_dropped_down_to_80_kib() -> None:
    result = history(*({"role": "user", "content": "x" * 4000} for _ in range(25)))
    assert result.messages == tuple({"role": "user", "content": "x" * 4000} for _ in range(20))
    assert result.bytes == 80581
    assert (result.dropped_messages, result.content_truncated) == (True, False)


def test_example_24_a_lone_oversized_message_is_replaced_by_the_placeholder() -> None:
    blocks = [{"type": "text", "text": "y" * 4000} for _ in range(21)]
    result = history({"role": "assistant", "content": blocks})
    assert result.messages == (
        {"role": "assistant", "content": "[sessions_history omitted: message too large]"},
    )
    assert result.bytes == 80
    assert result.dropped_messages is True


def test_example_25_tool_messages_and_heavy_keys() -> None:
    messages = (
        {"role": "user", "content": "hi"},
        {"role": "toolResult", "content": "42"},
        {"role": "assistant", "content": "ok"},
    )
    assert [m["role"] for m in history(*messages).messages] == ["user", "assistant"]
    assert [m["role"] for m in history(*messages, include_tools=True).messages] == [
        "user",
        "toolResult",
        "assistant",
    ]
    with_usage = history({"role": "assistant", "content": "ok", "usage": {"input": 3}})
    assert with_usage.messages == ({"role": "assistant", "content": "ok"},)
    assert with_usage.content_truncated is True
    signed = history(
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "hm", "thinkingSignature": "c2ln"}],
        }
    )
    assert signed.messages == ({"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]},)
    assert signed.content_truncated is True


def test_example_26_offset_pages_count_back_from_the_newest_message() -> None:
    assert list(history_window(10, 3, 0)) == [8, 9, 10]
    first = history_page(total=10, offset=0, oldest_seq=8, rows_read=3)
    assert first.to_json() == {"offset": 0, "nextOffset": 3, "hasMore": True, "totalMessages": 10}
    assert list(history_window(10, 3, 9)) == [1]
    last = history_page(total=10, offset=9, oldest_seq=1, rows_read=1)
    assert last.to_json() == {"offset": 9, "hasMore": False, "totalMessages": 10}
    assert list(history_window(10, 3, None)) == [8, 9, 10]
    with pytest.raises(InvalidToolInput, match=r"^offset must be a non-negative integer$") as raised:
        history_window(10, 3, -1)
    assert raised.value.field == "offset"


# -------------------------------------------------------------------------------- pagination


def test_an_offset_past_the_oldest_message_reads_nothing() -> None:
    assert list(history_window(10, 3, 10)) == []
    assert list(history_window(10, 3, 25)) == []


def test_a_page_without_seqs_advances_by_the_rows_read() -> None:
    page = history_page(total=10, offset=2, oldest_seq=None, rows_read=3)
    assert (page.next_offset, page.has_more) == (5, True)


def test_next_offset_never_goes_back_before_the_requested_offset() -> None:
    # H1/H7 can leave only newer rows: the oldest returned seq then lies above the window start
    page = history_page(total=10, offset=4, oldest_seq=9, rows_read=3)
    assert (page.next_offset, page.has_more) == (4, True)


def test_the_smallest_valid_seq_is_the_oldest_returned_message() -> None:
    messages: list[dict[str, object]] = [
        {"role": "user", "__openclaw": {"seq": 7}},
        {"role": "user", "__openclaw": {"seq": 5}},
        {"role": "user", "__openclaw": {"seq": True}},
        {"role": "user", "__openclaw": {"seq": 0}},
        {"role": "user", "__openclaw": {"seq": "3"}},
        {"role": "user"},
    ]
    assert smallest_seq(messages) == 5
    assert smallest_seq([{"role": "user"}]) is None


# ------------------------------------------------------------------------------ code regions


def test_a_fenced_block_runs_through_its_closing_line() -> None:
    text = "a\n```py\n<think>\n```tail\nb"
    assert code_regions(text) == ((2, 23),)
    assert text[2:23] == "```py\n<think>\n```tail"


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert code_regions("x\n~~~\n<think>") == ((2, 13),)
    assert code_regions("```") == ((0, 3),)


def test_a_fence_closes_only_with_its_own_marker_at_a_line_start() -> None:
    text = "~~~\n```\n ~~~\n~~~\nafter"
    assert code_regions(text) == ((0, 16),)


def test_an_inline_span_closes_at_the_next_run_of_equal_length() -> None:
    text = "a ``x ` y`` b `c`"
    assert code_regions(text) == ((2, 11), (14, 17))


def test_an_unmatched_backtick_run_is_text_and_pairing_goes_on_after_it() -> None:
    assert code_regions("`` a `b` c") == ((5, 8),)


def test_inline_spans_never_cross_a_fenced_block() -> None:
    text = "`a\n```\n`\n```\nb`"
    assert code_regions(text) == ((3, 12),)


def test_no_rule_touches_a_match_starting_in_a_code_region() -> None:
    text = (
        "`<think>x</think>` `<|a|>` `<relevant-memories>` `<tool_call/>` "
        "`[Historical context: h]` `minimax:tool_call <invoke>q</invoke>`"
    )
    assert sanitize_assistant_text(text) == text


def test_a_block_starting_outside_code_goes_with_the_code_inside_it() -> None:
    assert assistant_says("a<think>`code`</think>b") == "ab"


# ------------------------------------------------------------------------------------ N1-N6


def test_n1_needs_the_minimax_marker() -> None:
    text = 'Plain <invoke name="x">y</invoke>'
    assert strip_minimax_tool_calls(text) == text


def test_n1_removes_invoke_blocks_non_greedily_and_the_wrapper_tags_in_any_case() -> None:
    text = "<MINIMAX:TOOL_CALL>a<invoke n=1>b</invoke>c<INVOKE>d</Invoke>e</minimax:tool_call>"
    assert strip_minimax_tool_calls(text) == "ace"


def test_n1_keeps_an_invoke_without_its_closer() -> None:
    assert strip_minimax_tool_calls("minimax:tool_call <invoke x>y") == "minimax:tool_call <invoke x>y"


def test_n2_puts_a_space_only_between_two_non_blank_neighbours() -> None:
    assert (
        strip_control_tokens("<|im_start|>Hi<|im_end|>\nthere<\uff5ctool\u2581sep\uff5c>!") == "Hi\nthere !"
    )


def test_n2_keeps_a_token_quoted_as_code() -> None:
    assert strip_control_tokens("say `<|endoftext|>` then<|x|>") == "say `<|endoftext|>` then"


def test_n2_needs_a_closing_pipe_and_angle() -> None:
    assert strip_control_tokens("a <| b |x> c") == "a <| b |x> c"


def test_n3_allows_spaces_inside_tags_and_underscores_in_the_name() -> None:
    text = "a< Relevant_Memories >m< / relevant_memories >b"
    assert strip_relevant_memories(text) == "ab"


def test_n3_removes_an_unclosed_block_to_the_end_and_stray_closers() -> None:
    assert strip_relevant_memories("a</relevant-memories>b<relevant-memories x=1>c") == "ab"


def test_n4_removes_self_closing_and_stray_closing_tags() -> None:
    assert strip_tool_call_xml("a<tool_call/>b</function_calls>c<FUNCTION_RESPONSE />d") == "abcd"


def test_n4_keeps_prose_tags_with_their_closers() -> None:
    text = "Use <tool_result> and </tool_result> pairs"
    assert strip_tool_call_xml(text) == text


def test_n4_payload_may_follow_blanks_and_one_line_break() -> None:
    assert strip_tool_call_xml("a<tool_calls> \t\n  [1]</tool_calls>b") == "ab"
    assert strip_tool_call_xml("a<tool_calls>\n\n[1]</tool_calls>b") == "a<tool_calls>\n\n[1]</tool_calls>b"


@pytest.mark.parametrize(
    "payload",
    ["<invoke name='a'>", "<parameter>", "<parameters>", "<Argument>", "<arguments>", "<function_call>"],
)
def test_n4_an_xml_payload_opens_a_hidden_block(payload: str) -> None:
    assert strip_tool_call_xml(f"a<tool_call>{payload}x</tool_call>b") == "ab"


def test_n4_a_tool_result_block_also_ends_at_a_tool_call_closer() -> None:
    assert strip_tool_call_xml('a<tool_result>{"ok":1}</tool_call>b') == "ab"


def test_n4_a_hidden_block_without_closer_runs_to_the_end() -> None:
    assert strip_tool_call_xml('keep <function_call>{"name":"x"} </tool_call> gone') == "keep "


def test_n4_a_tag_ends_at_the_first_angle_outside_quotes() -> None:
    assert strip_tool_call_xml('a<tool_call name="x>y">{"q":1}</tool_call>b') == "ab"


def test_n4_a_closer_inside_a_quoted_xml_payload_still_counts() -> None:
    # only a JSON payload protects closers inside its strings
    assert strip_tool_call_xml('a<tool_call><invoke q="</tool_call>">b') == 'a">b'


def test_n4_an_opening_tag_cut_by_another_tag_is_text() -> None:
    assert strip_tool_call_xml("a<tool_call <b>{}") == "a<tool_call <b>{}"


def test_n5_needs_a_scaffolding_marker_before_it_trims() -> None:
    assert strip_downgraded_scaffolding("  plain  ") == "  plain  "
    assert strip_downgraded_scaffolding("  plain [tool call: x]  ") == "plain"


@pytest.mark.parametrize(
    "arguments",
    [
        'Arguments: {"a":{"b":"}"}}',
        "arguments:[1,[2]]",
        'Arguments "q \\" x"',
        "Arguments: ls -la",
        "ARGUMENTS:\n  {}",
    ],
)
def test_n5_a_tool_call_goes_with_its_arguments_and_one_line_break_at_a_line_start(arguments: str) -> None:
    assert strip_downgraded_scaffolding(f"before\n[Tool Call: x]  \n  {arguments}\nnext") == "before\nnext"


def test_n5_an_unbalanced_arguments_value_stays() -> None:
    assert strip_downgraded_scaffolding("A [Tool Call: x]\nArguments: {open") == "A {open"


def test_n5_a_second_line_break_goes_only_at_a_line_start() -> None:
    assert strip_downgraded_scaffolding("a\n[Tool Call: x]\n\nb") == "a\nb"
    assert strip_downgraded_scaffolding("a [Tool Call: x]\n\nb") == "a \nb"


def test_n5_a_tool_result_goes_through_the_next_tool_marker() -> None:
    text = "a\n[Tool Result for ID t1]\nfile1\nfile2\n\n[Tool Result for ID t2]\nx\n\nb"
    assert strip_downgraded_scaffolding(text) == "a"


def test_n5_a_tool_result_keeps_the_line_breaks_before_the_next_marker() -> None:
    text = "a [Tool Result for ID 1] out\n\n[Tool X] z"
    assert strip_downgraded_scaffolding(text) == "a \n\n[Tool X] z"


def test_n5_historical_context_goes_with_one_newline() -> None:
    assert strip_downgraded_scaffolding("a[historical context: x]\n\nb") == "a\nb"


def test_n5_keeps_scaffolding_quoted_as_code() -> None:
    assert strip_downgraded_scaffolding(" `[Tool Call: x]` ") == "`[Tool Call: x]`"


def test_n6_final_tags_go_and_their_content_stays() -> None:
    assert strip_thinking("<final>Answer</ FINAL >") == "Answer"


def test_n6_thinking_family_blocks_go_in_any_case_with_attributes() -> None:
    text = "a<THOUGHT id='1'>x</thought>b<antthinking>y</antthinking>c<Thinking>z</thinking>d"
    assert strip_thinking(text) == "abcd"


def test_n6_self_closing_and_stray_closers_go() -> None:
    assert strip_thinking("a<think/>b</thinking>c<think />d") == "abcd"


def test_n6_any_thinking_closer_ends_the_block() -> None:
    assert strip_thinking("a<think>x</thought>b") == "ab"


def test_n6_needs_a_word_boundary_after_the_name() -> None:
    assert strip_thinking("a<thinker>b") == "a<thinker>b"


def test_the_rules_run_in_order_without_trimming() -> None:
    text = (
        "  <|x|>minimax:tool_call<invoke>i</invoke> <relevant-memories>m</relevant-memories>"
        "<think>t</think>  "
    )
    assert apply_rules_once(text) == sanitize_assistant_text(text) == "  minimax:tool_call   "


# -------------------------------------------------------------------------------------- H1-H3


def test_h1_drops_both_tool_roles() -> None:
    messages = [{"role": "tool"}, {"role": "toolResult"}, {"role": "user"}, {"content": "no role"}]
    assert without_tool_messages(messages) == [{"role": "user"}, {"content": "no role"}]


def test_h2_deletes_heavy_message_keys_and_thinking_block_keys_only() -> None:
    message = {
        "role": "toolResult",
        "details": {"big": 1},
        "cost": 0.1,
        "content": [
            {"type": "thinking", "thinking": "t", "openclawReasoningReplay": {"x": 1}},
            {"type": "text", "text": "t", "thinkingSignature": "kept"},
        ],
    }
    result = history(message, include_tools=True)
    assert result.messages == (
        {
            "role": "toolResult",
            "content": [
                {"type": "thinking", "thinking": "t"},
                {"type": "text", "text": "t", "thinkingSignature": "kept"},
            ],
        },
    )
    assert (result.content_truncated, result.content_redacted, result.dropped_messages) == (
        True,
        False,
        False,
    )


def test_h3_applies_only_to_assistant_text_fields() -> None:
    leak = "<think>x</think>y"
    assistant = history(
        {
            "role": "assistant",
            "text": leak,
            "content": [{"type": "text", "text": leak}, {"type": "thinking", "thinking": leak}, leak],
        }
    )
    assert assistant.messages[0] == {
        "role": "assistant",
        "text": "y",
        "content": [{"type": "text", "text": "y"}, {"type": "thinking", "thinking": leak}, "y"],
    }
    user = history({"role": "user", "content": leak})
    assert user.messages[0] == {"role": "user", "content": leak}


# ---------------------------------------------------------------------------------------- H4


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("export API_KEY=abc123", "export API_KEY=***"),
        ("GITHUB_TOKEN: 'ghtok'", "GITHUB_TOKEN: '***'"),
        ('db_password = "hunter2hunter2hunter2"', 'db_password = "hunter…ter2"'),
        ("CLIENT_SECRET=s3cr3t", "CLIENT_SECRET=***"),
        ("MYSQL_PASSWD=pw", "MYSQL_PASSWD=***"),
        ('{"apiKey": "k-123"}', '{"apiKey": "***"}'),
        ('{"token":"t"}', '{"token":"***"}'),
        ('{"secret":"s"}', '{"secret":"***"}'),
        ('{"password":"p"}', '{"password":"***"}'),
        ('{"passwd":"p"}', '{"passwd":"***"}'),
        ('{"accessToken":"0123456789abcdefghij"}', '{"accessToken":"012345…ghij"}'),
        ('{"refreshToken":"r"}', '{"refreshToken":"***"}'),
        ("--api-key abc", "--api-key ***"),
        ("--api_key abc", "--api_key ***"),
        ("--apikey abc", "--apikey ***"),
        ("--token 'abc'", "--token '***'"),
        ("--secret abc", "--secret ***"),
        ("--password abc", "--password ***"),
        ("--passwd abc", "--passwd ***"),
        ("Authorization: Bearer abc.def", "Authorization: Bearer ***"),
        ("authorization=bearer abcdefghijklmnopqrstuvwxyz", "authorization=bearer abcdef…wxyz"),
        ("use Bearer abcdefghijklmnopqr now", "use Bearer abcdef…opqr now"),
        ("sk-abcdefgh", "***"),
        ("ghp_abcdefghijklmnopqrst", "ghp_ab…qrst"),
        ("github_pat_abcdefghij_klmnopqrst", "github…qrst"),
        ("xoxb-1234567890", "***"),
        ("xoxp-1234567890-abcdefghij", "xoxp-1…ghij"),
        ("xapp-1-abcdefghij", "***"),
        ("gsk_abcdefghij", "***"),
        ("AIzaabcdefghijklmnopqrst", "AIzaab…qrst"),
        ("pplx-abcdefghij", "***"),
        ("npm_abcdefghij", "***"),
        ("123456:abcdefghijklmnopqrst", "123456…qrst"),
    ],
)
def test_h4_masks_each_credential_shape(text: str, masked: str) -> None:
    assert redact_text(text) == (masked, True)


@pytest.mark.parametrize(
    "text",
    [
        "Bearer abcdefghijklmnopq",  # 17 characters: not a bare bearer token
        "sk-abcdefg",  # 7 after the prefix
        "ask-abcdefghij",  # no word boundary before the prefix
        "ghp_abcdefghijklmnopqrs",  # 19 after the prefix
        "12345:abcdefghijklmnopqrst",  # 5 digits
        "KEYRING=value",  # the name must end with the keyword
        "--tokens abc",
        "the password is long",
    ],
)
def test_h4_leaves_text_that_is_not_credential_shaped(text: str) -> None:
    assert redact_text(text) == (text, False)


def test_h4_masks_a_pem_private_key_block_to_its_first_and_last_lines() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\r\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"pem:\n{pem}\nend") == (
        "pem:\n-----BEGIN RSA PRIVATE KEY-----\n…redacted…\n-----END RSA PRIVATE KEY-----\nend",
        True,
    )


def test_h4_masks_a_one_line_pem_block_entirely() -> None:
    assert redact_text("-----BEGIN PRIVATE KEY-----x-----END PRIVATE KEY-----") == ("***", True)


def test_h4_a_pem_header_without_footer_stays() -> None:
    text = "-----BEGIN PRIVATE KEY-----\nMII"
    assert redact_text(text) == (text, False)


def test_h4_masks_the_secret_span_not_an_earlier_copy_of_it() -> None:
    assert redact_text("TOKEN=TOKEN") == ("TOKEN=***", True)


def test_h4_word_boundaries_and_digits_are_ascii() -> None:
    assert redact_text("éAPI_KEY=abc") == ("éAPI_KEY=***", True)
    assert redact_text("١٢٣٤٥٦:abcdefghijklmnopqrst") == ("١٢٣٤٥٦:abcdefghijklmnopqrst", False)


def test_h4_configured_patterns_run_first_and_bad_ones_are_ignored() -> None:
    text = "ticket ZX-1234 and sk-abcdefghijkl"
    assert redact_text(text, ["zx-[0-9]+", "(unclosed", "  "]) == ("ticket *** and ***", True)
    assert redact_text("abc", ["q*"]) == ("abc", False)  # empty matches hide nothing
    assert redact_text("id=(42)", [r"id=\((\d+)\)"]) == ("id=(***)", True)


def test_h4_mask_keeps_six_and_four_characters_from_18_on() -> None:
    assert mask_secret("a" * 17) == "***"
    assert mask_secret("abcdefghijklmnopqr") == "abcdef…opqr"


def test_h4_default_patterns_are_the_sixteen_reference_shapes() -> None:
    assert len(DEFAULT_REDACT_PATTERNS) == 16


def test_h4_redacts_every_role_and_every_text_field() -> None:
    leaky = "API_KEY=abc"
    message = {
        "role": "toolResult",
        "text": leaky,
        "content": [
            {"type": "text", "text": leaky},
            {"type": "thinking", "thinking": leaky},
            {"type": "toolCall", "partialJson": leaky, "arguments": {"k": leaky}},
        ],
    }
    result = history(message, include_tools=True)
    assert result.messages[0] == {
        "role": "toolResult",
        "text": "API_KEY=***",
        "content": [
            {"type": "text", "text": "API_KEY=***"},
            {"type": "thinking", "thinking": "API_KEY=***"},
            {"type": "toolCall", "partialJson": "API_KEY=***", "arguments": {"k": leaky}},
        ],
    }
    assert (result.content_redacted, result.content_truncated) == (True, False)


def test_h4_configured_patterns_reach_the_pipeline() -> None:
    result = sanitize_history(
        [{"role": "user", "content": "case 4711"}], include_tools=False, redact_patterns=["4711"]
    )
    assert result.messages[0]["content"] == "case ***"
    assert result.content_redacted is True


def test_h4_a_redacted_value_equal_to_its_mask_is_no_change() -> None:
    result = history({"role": "user", "content": "API_KEY=***"})
    assert (result.messages[0]["content"], result.content_redacted) == ("API_KEY=***", False)


# ---------------------------------------------------------------------------------------- H5


def test_h5_exactly_4000_characters_stay_whole() -> None:
    content, result = user_says("b" * MAX_TEXT_CHARS)
    assert (content, result.content_truncated) == ("b" * 4000, False)


def test_h5_counts_code_points() -> None:
    content, result = user_says("𝄞" * 4001)
    assert content == "𝄞" * 4000 + TRUNCATION_MARKER
    assert result.content_truncated is True


def test_h5_measures_the_redacted_text() -> None:
    content, result = user_says("x" * 3980 + " sk-abcdefghijklmnopqrstuvwxyz")
    assert content == "x" * 3980 + " sk-abc…wxyz"
    assert (result.content_truncated, result.content_redacted) == (False, True)


def test_h5_truncates_every_text_field() -> None:
    long = "c" * 4001
    cut = "c" * 4000 + TRUNCATION_MARKER
    message = {
        "role": "user",
        "text": long,
        "content": [{"type": "text", "text": long}, {"partialJson": long}],
    }
    assert history(message).messages[0] == {
        "role": "user",
        "text": cut,
        "content": [{"type": "text", "text": cut}, {"partialJson": cut}],
    }


# ---------------------------------------------------------------------------------------- H6


def test_h6_an_image_loses_its_data_and_reports_the_decoded_size() -> None:
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n12345").decode()
    result = history({"role": "user", "content": [{"type": "image", "data": data, "mimeType": "image/png"}]})
    assert result.messages[0]["content"] == [
        {"type": "image", "mimeType": "image/png", "omitted": True, "bytes": 13}
    ]
    assert result.content_truncated is True


def test_h6_an_image_without_data_keeps_its_bytes_and_is_not_truncated() -> None:
    result = history({"role": "user", "content": [{"type": "image", "bytes": 512}, {"type": "image"}]})
    assert result.messages[0]["content"] == [
        {"type": "image", "bytes": 512, "omitted": True},
        {"type": "image", "omitted": True},
    ]
    assert result.content_truncated is False


@pytest.mark.parametrize(
    ("data", "size"), [("", 0), ("QQ==", 1), ("QUI=", 2), ("QUJD", 3), ("QUJD\nREVG", 6)]
)
def test_h6_decoded_size_is_three_quarters_less_padding(data: str, size: int) -> None:
    assert decoded_base64_size(data) == size


# ---------------------------------------------------------------------------------------- H7


def test_h7_an_empty_page_is_two_bytes() -> None:
    result = history()
    assert (result.messages, result.bytes, result.dropped_messages) == ((), 2, False)


def test_h7_size_is_compact_utf8_json() -> None:
    message = {"role": "user", "content": "é ✓"}
    assert json_size(message) == len('{"role":"user","content":"é ✓"}'.encode())
    assert history(message).bytes == 2 + json_size(message)


def test_h7_a_page_of_exactly_80_kib_is_kept_whole_and_one_byte_more_drops_the_oldest() -> None:
    newer = [{"role": "user", "content": "b" * 4000} for _ in range(20)]
    exact = history({"role": "user", "content": "a" * 1310}, *newer)
    assert (exact.bytes, exact.dropped_messages, len(exact.messages)) == (HISTORY_MAX_BYTES, False, 21)
    over = history({"role": "user", "content": "a" * 1311}, *newer)
    assert (over.bytes, over.dropped_messages, over.messages) == (80581, True, tuple(newer))


def test_h7_keeps_the_newest_messages() -> None:
    messages = [{"role": "user", "content": "m" * 4000, "__openclaw": {"seq": n}} for n in range(1, 26)]
    result = history(*messages)
    assert [m["__openclaw"] for m in result.messages] == [{"seq": n} for n in range(6, 26)]
    assert (result.oldest_seq, result.bytes) == (6, 2 + 4 * 4051 + 16 * 4052 + 19)


def test_h7_the_placeholder_carries_the_seq_of_the_message_it_replaces() -> None:
    big = {"role": "user", "content": [{"type": "text", "text": "z" * 4000}] * 25, "__openclaw": {"seq": 41}}
    result = history({"role": "user", "content": "older", "__openclaw": {"seq": 40}}, big)
    assert result.messages == (
        {"role": "assistant", "content": HISTORY_PLACEHOLDER, "__openclaw": {"seq": 41}},
    )
    assert result.bytes == len(json.dumps(result.messages[0], separators=(",", ":"))) + 2
    assert (result.dropped_messages, result.truncated) == (True, True)


def test_h7_sessions_list_rows_use_their_own_placeholder() -> None:
    big = {"role": "assistant", "content": [{"type": "text", "text": "z" * 4000}] * 25}
    result = sanitize_history([big], include_tools=False, placeholder=SESSIONS_LIST_PLACEHOLDER)
    assert result.messages == (
        {"role": "assistant", "content": "[sessions_list omitted: message too large]"},
    )


# ------------------------------------------------------------------------------ the input


def test_the_input_messages_are_never_mutated() -> None:
    message = {
        "role": "assistant",
        "usage": {"input": 1},
        "content": [{"type": "image", "data": "QUJD"}, {"type": "text", "text": "<think>x</think>ok"}],
        "__openclaw": {"seq": 3},
    }
    before = json.loads(json.dumps(message))
    result = history(message)
    assert message == before
    assert result.messages[0]["__openclaw"] is not message["__openclaw"]


def test_tuples_and_non_json_values_become_plain_json() -> None:
    result = history({"role": "user", "content": ("a", "b"), "at": {1: object}})
    assert result.messages[0] == {"role": "user", "content": ["a", "b"], "at": {"1": str(object)}}


# ------------------------------------------------------------------ sanitizing is a fixed point


def test_a_partially_masked_value_is_not_masked_again() -> None:
    once, _ = redact_text("API_KEY=abcdefghijklmnopqrstuvwxyz")
    assert once == "API_KEY=abcdef…wxyz"
    assert redact_text(once) == (once, False)
    assert redact_text("API_KEY=***") == ("API_KEY=***", False)


def test_the_prefix_a_value_pattern_stops_at_before_the_ellipsis_is_part_of_the_mask() -> None:
    once, _ = redact_text("Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz")
    assert once == "Authorization: Bearer sk-abc…wxyz"
    assert redact_text(once) == (once, False)


def test_a_cut_mask_is_still_a_mask() -> None:
    assert redact_text("KEY=**") == ("KEY=**", False)
    assert redact_text("KEY=abcdef…w") == ("KEY=abcdef…w", False)


def test_a_real_secret_next_to_an_ellipsis_is_still_masked() -> None:
    assert redact_text("PASSWORD=hunter2…")[0] == "PASSWORD=***"


def test_a_truncation_never_cuts_an_inline_span_open() -> None:
    text = "`<think>" + "x" * 4000 + "`"
    once = assistant_says(text)
    assert once == "`<think>" + "x" * 3991 + "`" + TRUNCATION_MARKER
    assert assistant_says(once) == once


def test_h5_a_closing_backtick_run_counts_towards_the_4000_characters() -> None:
    opener = "`<think>w</think>"
    messages = [{"role": "assistant", "content": opener + "z" * (4000 - len(opener)) + "`"}]
    once = sanitize_history(messages, include_tools=False)
    content = once.messages[0]["content"]
    assert isinstance(content, str)
    assert len(content) <= MAX_TEXT_CHARS + len(TRUNCATION_MARKER)
    assert content == opener + "z" * (3999 - len(opener)) + "`" + TRUNCATION_MARKER
    assert once.content_truncated is True
    twice = sanitize_history(once.messages, include_tools=False)
    assert (twice.messages, twice.bytes) == (once.messages, once.bytes)


def test_a_truncation_never_splits_a_mask_or_leaves_a_name_before_the_marker() -> None:
    for text in ("y" * 3995 + " KEY=abcdefghijklmnopqrstuvwxyz", "y" * 3996 + " KEY=***xyz"):
        content, result = user_says(text)
        assert content.endswith(" KEY" + TRUNCATION_MARKER)
        assert result.content_truncated is True
        assert user_says(content)[0] == content


def test_a_string_h5_already_cut_stays_as_it_is() -> None:
    cut = "q" * 3999 + TRUNCATION_MARKER
    content, result = user_says(cut)
    assert (content, result.content_truncated) == (cut, True)


def test_a_mask_that_swallows_a_backtick_uncovers_tags_in_the_same_call() -> None:
    once = assistant_says("API_KEY=`abc <think>x</think> `")
    assert once == "API_KEY=***  `"
    assert assistant_says(once) == once


def test_removing_an_inner_control_token_joins_an_outer_one_that_goes_too() -> None:
    assert sanitize_assistant_text("<|a<|b|>|>") == ""


def test_removing_a_stray_closer_that_moves_a_fence_to_a_line_start_is_followed_up() -> None:
    once = sanitize_assistant_text("</think>```\n```\n<think>")
    assert once == "```\n```\n"
    assert sanitize_assistant_text(once) == once


def test_scaffolding_a_later_rule_uncovers_goes_too() -> None:
    assert sanitize_assistant_text("[Tool<think>x</think> Call: x]\nok") == "ok"


def test_a_tool_call_tag_a_removal_assembles_hides_its_payload() -> None:
    assert sanitize_assistant_text('<tool_<think></think>call>{"cmd":"rm"}</tool_call>') == ""


def test_the_n5_trim_sees_what_n6_removes() -> None:
    assert sanitize_assistant_text("</think> `[Tool Call: x]` ") == "`[Tool Call: x]`"


def test_a_secret_is_masked_before_a_removal_can_glue_a_word_onto_it() -> None:
    assert assistant_says("a[Tool Call: x] sk-1234567890abcdefghij") == "ask-123…ghij"


def test_a_secret_a_removal_assembles_is_masked() -> None:
    content = assistant_says("API_<think>x</think>KEY=hunter2")
    assert content == "API_KEY=***"


def test_redaction_repeats_when_a_mask_gives_a_later_pattern_its_word_boundary() -> None:
    once, changed = redact_text("npm_0000000000pplx-0000000000")
    assert (once, changed) == ("npm_00…***", True)
    assert redact_text(once) == (once, False)


def test_a_cut_is_never_left_where_a_configured_pattern_masks_the_marker() -> None:
    result = sanitize_history(
        [{"role": "user", "content": "a" * 5000}], include_tools=False, redact_patterns=["truncated"]
    )
    assert (result.messages[0]["content"], result.content_truncated) == ("", True)
    again = sanitize_history(result.messages, include_tools=False, redact_patterns=["truncated"])
    assert again.messages == result.messages
