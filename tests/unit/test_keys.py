"""Session keys and identities (SPEC §2, §13.1): parsing, subagent keys, malformed keys, agent ids."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionwatch import InvalidSignal
from sessionwatch.domain.keys import (
    SessionIdentity,
    agent_id_of,
    check_agent_id,
    check_key,
    is_agent_qualified,
    is_subagent_key,
    key_problem,
    normalize_agent_id,
    resolve_identity,
    stored_agent_id,
)

# ------------------------------------------------------------------------- agent-qualified keys


@pytest.mark.parametrize(
    "key",
    [
        "agent:main:main",
        "agent:main:subagent:child",
        "agent:ops:cron:nightly:run",
        "  agent:main:x  ",
        "agent:main::x",
        "agent::main:x",
        "agent:main:x:",
        "Agent:main:x",
        "AGENT:Main:Hook:Webhook:42",
        "agent:my agent:x",
    ],
)
def test_a_key_with_agent_an_id_and_a_rest_is_agent_qualified(key: str) -> None:
    assert is_agent_qualified(key)


@pytest.mark.parametrize(
    "key",
    ["global", "main", "agent:main", "agent::x", "agent:", "agent", "agent:  :x", "user:main:x", ""],
)
def test_a_key_without_agent_id_and_rest_is_not_agent_qualified(key: str) -> None:
    assert not is_agent_qualified(key)


def test_the_agent_id_is_the_second_part_of_an_agent_qualified_key() -> None:
    assert agent_id_of("agent:ops:subagent:child") == "ops"


def test_the_agent_id_is_parsed_after_trimming_the_key() -> None:
    assert agent_id_of("   agent:ops:main  ") == "ops"


def test_empty_parts_are_dropped_before_the_agent_id_is_parsed() -> None:
    assert agent_id_of("agent::ops::main") == "ops"


@pytest.mark.parametrize("key", ["global", "agent:main", "agent::x", "cron:nightly"])
def test_a_key_that_is_not_agent_qualified_has_no_agent_id(key: str) -> None:
    assert agent_id_of(key) is None


# ------------------------------------------------------------------------------ subagent keys


@pytest.mark.parametrize(
    "key",
    [
        "agent:main:subagent:child",
        "agent:main:SubAgent:child",
        "agent:main:SUBAGENT:child:grandchild",
        "agent:main::subagent:child",
    ],
)
def test_a_key_whose_rest_starts_with_subagent_is_a_subagent_key_case_insensitively(key: str) -> None:
    assert is_subagent_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "agent:main:main",
        "agent:main:subagent",
        "agent:main:subagents:child",
        "agent:main:cron:subagent:child",
        "subagent:child",
        "agent:subagent:main",
        "global",
    ],
)
def test_a_key_whose_rest_does_not_start_with_subagent_is_not_a_subagent_key(key: str) -> None:
    assert not is_subagent_key(key)


# ----------------------------------------------------------------------------- malformed keys


@pytest.mark.parametrize(
    "key",
    [
        "",
        "   ",
        "\t",
        "agent:main:x\ny",
        "agent:main:x\x00",
        "glo\rbal",
        "global\x7f",
        "agent:main:\x85x",
        "a" * 513,
        "agent:main",
        "agent::x",
        "agent:",
        "  agent:main  ",
        "agent:  :x",
        "agent:\u3000:x",
        "Agent:main",
    ],
    ids=[
        "empty",
        "blank",
        "tab-only",
        "newline",
        "nul",
        "carriage-return",
        "delete",
        "c1-control",
        "513-chars",
        "agent-without-rest",
        "agent-without-id",
        "agent-prefix-only",
        "agent-without-rest-padded",
        "agent-id-blank",
        "agent-id-ideographic-space",
        "agent-prefix-capitalized-without-rest",
    ],
)
def test_a_malformed_key_is_refused_naming_the_field(key: str) -> None:
    assert key_problem(key) is not None
    with pytest.raises(InvalidSignal) as caught:
        check_key(key)
    assert caught.value.field == "session_key"


def test_a_key_of_exactly_512_characters_is_well_formed() -> None:
    key = "agent:main:" + "x" * (512 - len("agent:main:"))
    assert len(key) == 512
    assert check_key(key) == key


def test_a_key_that_is_not_a_string_is_malformed() -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_key(42)
    assert caught.value.field == "session_key"


def test_the_field_a_malformed_key_is_reported_under_is_the_callers() -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_key("agent:main", "requester_key")
    assert caught.value.field == "requester_key"


@pytest.mark.parametrize("key", ["global", "main", "cron:nightly", "Agents:main", "telegram:12345"])
def test_a_key_not_starting_with_agent_prefix_is_a_well_formed_bare_key(key: str) -> None:
    assert key_problem(key) is None
    assert check_key(key) == key


def test_a_well_formed_key_is_returned_trimmed() -> None:
    assert check_key("  agent:main:x   ") == "agent:main:x"


# --------------------------------------------------------------------------------- identities


def test_the_identity_of_an_agent_qualified_key_carries_the_parsed_agent_id() -> None:
    assert resolve_identity("agent:ops:main") == SessionIdentity("agent:ops:main", "ops")


def test_the_identity_uses_the_trimmed_key() -> None:
    assert resolve_identity("  agent:ops:main  ") == SessionIdentity("agent:ops:main", "ops")


def test_an_explicit_agent_id_that_matches_the_key_is_accepted() -> None:
    assert resolve_identity("agent:ops:main", "ops") == SessionIdentity("agent:ops:main", "ops")


def test_a_bare_key_takes_its_agent_id_from_the_caller() -> None:
    assert resolve_identity("global", "ops") == SessionIdentity("global", "ops")


def test_the_same_bare_key_under_two_agents_gives_two_identities() -> None:
    assert resolve_identity("global", "main") != resolve_identity("global", "ops")


def test_a_bare_key_without_an_explicit_agent_id_is_refused() -> None:
    with pytest.raises(InvalidSignal) as caught:
        resolve_identity("global")
    assert caught.value.field == "agent_id"


def test_an_explicit_agent_id_contradicting_the_key_is_refused() -> None:
    with pytest.raises(InvalidSignal) as caught:
        resolve_identity("agent:main:x", "ops")
    assert caught.value.field == "agent_id"


def test_a_malformed_key_is_refused_before_the_agent_id_is_looked_at() -> None:
    with pytest.raises(InvalidSignal) as caught:
        resolve_identity("agent:main", "main")
    assert caught.value.field == "session_key"


@pytest.mark.parametrize("agent_id", ["", "  ", "ops:x", " ops", "ops ", "o\nps", "o\x00ps", 7])
def test_a_malformed_explicit_agent_id_is_refused(agent_id: object) -> None:
    with pytest.raises(InvalidSignal) as caught:
        check_agent_id(agent_id)
    assert caught.value.field == "agent_id"


def test_a_plain_token_is_a_valid_agent_id() -> None:
    assert check_agent_id("ops-2") == "ops-2"


# ------------------------------------------------------ agent ids, as the reference normalizes them


@pytest.mark.parametrize(
    ("written", "normalized"),
    [
        ("", "main"),
        ("   ", "main"),
        ("MyAgent", "myagent"),
        ("AGENT123", "agent123"),
        ("agent-1", "agent-1"),
        ("agent_2", "agent_2"),
        ("a1-b2_c3", "a1-b2_c3"),
        ("agent@test", "agent-test"),
        ("agent test", "agent-test"),
        ("agent.name", "agent-name"),
        ("-agent-", "agent"),
        ("--test--", "test"),
        ("a" * 100, "a" * 64),
        (" main ", "main"),
        ("Data Analyst", "data-analyst"),
        ("ops-", "ops-"),  # a valid id keeps its trailing dash
        ("ops.-", "ops"),  # an invalid one loses it
        ("_ops", "_ops"),
        ("!!!", "main"),
        ("\ufeffops", "ops"),
        ("étude", "tude"),
    ],
)
def test_an_agent_id_is_normalized_as_the_reference_normalizes_it(written: str, normalized: str) -> None:
    assert normalize_agent_id(written) == normalized


@pytest.mark.parametrize(
    ("key", "identity"),
    [
        ("agent:Main:x", ("agent:Main:x", "main")),
        ("agent:my agent:x", ("agent:my agent:x", "my-agent")),
        ("agent: main :x", ("agent: main :x", "main")),
        ("AGENT:Main:Hook:Webhook:42", ("AGENT:Main:Hook:Webhook:42", "main")),
        ("  agent:OPS:subagent:Child  ", ("agent:OPS:subagent:Child", "ops")),
    ],
)
def test_the_key_is_kept_as_written_and_its_agent_id_is_normalized(
    key: str, identity: tuple[str, str]
) -> None:
    assert resolve_identity(key) == identity


def test_an_explicit_agent_id_is_compared_with_the_keys_after_normalizing_it() -> None:
    assert resolve_identity("agent:main:x", "Main") == SessionIdentity("agent:main:x", "main")
    assert resolve_identity("agent:my agent:x", "my-agent") == SessionIdentity("agent:my agent:x", "my-agent")
    with pytest.raises(InvalidSignal) as caught:
        resolve_identity("agent:Main:x", "ops")
    assert caught.value.field == "agent_id"


def test_a_bare_keys_explicit_agent_id_is_kept_as_given() -> None:
    assert resolve_identity("global", "Main") == SessionIdentity("global", "Main")


def test_the_subagent_rule_reads_a_key_with_any_case_of_its_agent_prefix() -> None:
    assert is_subagent_key("AGENT:Main:subagent:child")
    assert not is_subagent_key("agent:  :subagent:child")


@given(
    st.text(
        st.characters(blacklist_characters=":", blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=80
    )
)
def test_every_agent_id_a_key_yields_is_accepted_as_an_agent_id_argument(written: str) -> None:
    key = f"agent:{written}:x"
    if key_problem(key) is not None:
        return  # a blank id: the key is refused, it yields no agent id
    parsed = agent_id_of(key)
    assert parsed is not None
    assert check_agent_id(parsed) == parsed
    assert normalize_agent_id(parsed) == parsed
    assert resolve_identity("global", parsed) == SessionIdentity("global", parsed)
    assert resolve_identity(key, parsed) == resolve_identity(key)


@pytest.mark.parametrize(
    ("key", "stored", "read"),
    [
        ("agent:Main:x", "Main", "main"),
        ("agent:my agent:x", "my agent", "my-agent"),
        ("agent: main :x", " main ", "main"),
        ("agent:  :x", "  ", "main"),
        ("agent:main:x", "main", "main"),
        ("global", "Main", "Main"),
        ("AGENT:main:x", "Ops", "Ops"),  # bare before: its agent id was given, and stays
    ],
)
def test_an_agent_id_stored_before_normalization_reads_as_the_keys_agent_now(
    key: str, stored: str, read: str
) -> None:
    assert stored_agent_id(key, stored) == read
