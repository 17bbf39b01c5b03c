"""`*` wildcard patterns: what they match, and a worst case bounded by pattern x name length.

The tool allow/deny lists and the agent-to-agent allow list share this matcher. Its semantics are
pinned against two references: a table over every (pattern prefix, name prefix) pair, which defines
them, and the regular expression the matcher replaced, on ordinary names. Its cost is counted in
steps, never timed.
"""

from __future__ import annotations

import itertools
import operator
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionwatch.domain.tools.policy import ToolPolicySettings, effective_tools
from sessionwatch.domain.tools.visibility import A2APolicy
from sessionwatch.domain.tools.wildcard import WildcardPattern, matches_any, parse_patterns, step_bound

LONG_S = "\u017f"
"""The long s, which case-folds to `s`."""
ISSUE_PATTERN = "*a*b*c*d*e*"
ISSUE_KEY = "a" * 200 + "b" * 200 + "c" * 200 + "d" * 200


def reference(pattern: str, name: str) -> bool:
    """The definition: `*` absorbs any run, other code points compare by case folding, all of `name`."""
    text = pattern.strip()
    if not text:
        return False
    key = [c.casefold() for c in name]
    row = [True] + [False] * len(key)  # row[j]: the pattern prefix so far matches key[:j]
    for c in text:
        if c == "*":
            row = list(itertools.accumulate(row, operator.or_))
        else:
            folded = c.casefold()
            row = [False] + [row[j] and key[j] == folded for j in range(len(key))]
    return row[-1]


def old_regex(pattern: str, name: str) -> bool:
    """What the tools matched with before: one regular expression per pattern, `.*` per star."""
    text = pattern.strip()
    if not text:
        return False
    compiled = re.compile(".*".join(re.escape(part) for part in text.split("*")), re.IGNORECASE)
    return compiled.fullmatch(name) is not None


def steps_of(pattern: str, name: str) -> int:
    parsed = WildcardPattern.parse(pattern)
    assert parsed is not None
    return parsed.match_steps(name)[1]


# ------------------------------------------------------------------------------- examples


@pytest.mark.parametrize(
    ("pattern", "name", "expected"),
    [
        ("sessions_*", "sessions_list", True),
        ("sessions_*", "session_status", False),
        ("*_status", "session_status", True),
        ("  SESSIONS_SEND ", "sessions_send", True),
        ("Session_Status", "SESSION_STATUS", True),
        ("m*n", "mAIN", True),
        ("a**b", "ab", True),
        ("*", "", True),
        ("*", "any\nthing", True),
        ("a*", "b", False),
        ("ab", "abc", False),
        ("abc", "ab", False),
        ("ops-*", "ops", False),
        (LONG_S + "*", "Sessions", True),
        ("stra*ße", "STRAẞE", True),
        ("straße", "strasse", False),
    ],
)
def test_a_pattern_matches_the_whole_name_case_insensitively(pattern: str, name: str, expected: bool) -> None:
    assert WildcardPattern.parse(pattern) is not None
    assert matches_any(name, (pattern,)) is expected


def test_a_blank_pattern_matches_nothing_not_even_a_blank_name() -> None:
    assert WildcardPattern.parse("   ") is None
    assert parse_patterns(["", "  ", "x*"]) == (WildcardPattern.parse("x*"),)
    assert matches_any("", ("", " ")) is False


def test_a_pattern_keeps_its_trimmed_source() -> None:
    parsed = WildcardPattern.parse("  Ops-* ")
    assert parsed is not None
    assert parsed.source == "Ops-*"


def test_the_issue_pattern_answers_in_steps_linear_in_the_key() -> None:
    parsed = WildcardPattern.parse(ISSUE_PATTERN)
    assert parsed is not None
    assert parsed.match_steps(ISSUE_KEY) == (False, 805)
    assert parsed.matches(ISSUE_KEY + "e") is True
    assert steps_of(ISSUE_PATTERN, ISSUE_KEY) <= 2 * (len(ISSUE_PATTERN) + len(ISSUE_KEY))


def test_the_quadratic_worst_case_stays_under_the_bound() -> None:
    # every start the star tries matches 30 `a`s before the `b` fails: about 30 steps per code point
    pattern, name = "*" + "a" * 30 + "b", "a" * 800
    steps = steps_of(pattern, name)
    assert steps > 20 * len(name)
    assert steps <= step_bound(len(pattern), len(name)) <= 2 * (len(pattern) + 1) * (len(name) + 1)


def test_agent_to_agent_allow_patterns_use_the_bounded_matcher() -> None:
    policy = A2APolicy(enabled=True, allow=(ISSUE_PATTERN, "main"))
    assert policy.matches(ISSUE_KEY) is False
    assert policy.matches(ISSUE_KEY + "E") is True
    assert policy.allows("main", ISSUE_KEY) is False


def test_tool_deny_patterns_use_the_same_matcher() -> None:
    settings = ToolPolicySettings(profile="coding", deny=("*S*S*I*O*N*S*_*", LONG_S + "ub*"))
    assert effective_tools(settings) == ("session_status",)


# ----------------------------------------------------------------------------- properties

_ALPHABET = "aAbB*sS" + LONG_S + "ßẞ\n:-"
"""Case pairs, a code point folding to another (long s), one folding to two (ß), a line break."""

_ORDINARY_NAME = st.text("abcdeABCDE019_-:.é", max_size=12)
_ORDINARY_PATTERN = st.text("abcdeABCDE019_-:.é* ", max_size=10)


@given(pattern=st.text(_ALPHABET, max_size=8), name=st.text(_ALPHABET.replace("*", ""), max_size=10))
def test_the_matcher_agrees_with_the_definition(pattern: str, name: str) -> None:
    assert matches_any(name, (pattern,)) is reference(pattern, name)


@given(pattern=_ORDINARY_PATTERN, name=_ORDINARY_NAME)
def test_the_matcher_agrees_with_the_regular_expression_it_replaced_on_ordinary_names(
    pattern: str, name: str
) -> None:
    assert matches_any(name, (pattern,)) is old_regex(pattern, name)


@given(pattern=st.text("ab*", max_size=8), name=st.text("ab*", max_size=10))
def test_a_star_in_the_name_is_an_ordinary_code_point(pattern: str, name: str) -> None:
    assert matches_any(name, (pattern,)) is reference(pattern, name)


def _runs(letters: str, *, max_runs: int, max_length: int) -> st.SearchStrategy[str]:
    run = st.tuples(st.sampled_from(letters), st.integers(min_value=1, max_value=max_length))
    return st.lists(run, max_size=max_runs).map(lambda runs: "".join(c * n for c, n in runs))


_ADVERSARIAL_PATTERNS = st.lists(_runs("abcde", max_runs=2, max_length=6), min_size=1, max_size=8).map(
    lambda segments: "*" + "*".join(segments) + "*"
) | st.builds(
    lambda run, tail: "*" + run + tail, _runs("a", max_runs=1, max_length=40), st.sampled_from("be")
)
_ADVERSARIAL_NAMES = _runs("abcd", max_runs=6, max_length=250)


@given(pattern=_ADVERSARIAL_PATTERNS, name=_ADVERSARIAL_NAMES)
def test_the_matcher_takes_at_most_twice_pattern_times_name_steps(pattern: str, name: str) -> None:
    parsed = WildcardPattern.parse(pattern)
    assert parsed is not None
    matched, steps = parsed.match_steps(name)
    assert steps <= 2 * (len(pattern) + 1) * (len(name) + 1)
    assert steps <= step_bound(len(pattern), len(name))
    assert matched is reference(pattern, name)


@given(pattern=st.text(_ALPHABET, max_size=12), name=st.text(_ALPHABET, max_size=40))
def test_the_step_bound_holds_for_any_pattern_and_name(pattern: str, name: str) -> None:
    parsed = WildcardPattern.parse(pattern)
    if parsed is None:
        assert matches_any(name, (pattern,)) is False
        return
    assert parsed.match_steps(name)[1] <= step_bound(len(parsed.source), len(name))
