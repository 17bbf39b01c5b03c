"""Visibility, agent-to-agent policy and the access check (SPEC-tools §T2, examples 4-9)."""

from __future__ import annotations

from typing import get_args

import pytest

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.tools.visibility import (
    ALLOWED,
    A2APolicy,
    Access,
    AccessAction,
    EffectiveVisibility,
    VisibilityMode,
    VisibilityNote,
    check_access,
    effective_visibility,
    normalize_visibility,
    subtree_of,
    visibility_note,
    visible_in_list,
)

MAIN = "agent:main:main"
PREFIX: dict[AccessAction, str] = {
    "list": "Session list",
    "history": "Session history",
    "send": "Session send",
    "status": "Session status",
}
A2A_DISABLED: dict[AccessAction, str] = {
    "list": "Agent-to-agent listing is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent visibility.",
    "history": "Agent-to-agent history is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent access.",
    "send": "Agent-to-agent messaging is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent sends.",
    "status": "Agent-to-agent status is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent access.",
}
NO_SUBTREE: frozenset[str] = frozenset()


def denied(error: str) -> Access:
    return Access(allowed=False, error=error)


def refused_agent_to_agent(error: str) -> Access:
    """A refusal by the agent-to-agent policy (rules 4 and 5), marked as such."""
    return Access(allowed=False, error=error, agent_to_agent=True)


# ----------------------------------------------------------------------------- §T12 examples


def test_example_4_tree_lets_main_read_its_grandchild() -> None:
    subtree = subtree_of(
        MAIN, [("agent:main:subagent:a", MAIN), ("agent:main:subagent:b", "agent:main:subagent:a")]
    )
    assert check_access("history", MAIN, "agent:main:subagent:b", "tree", A2APolicy(), subtree) == ALLOWED


def test_example_4_tree_forbids_a_child_reading_its_parent() -> None:
    edges = [("agent:main:subagent:a", MAIN), ("agent:main:subagent:b", "agent:main:subagent:a")]
    requester = "agent:main:subagent:a"
    access = check_access("history", requester, MAIN, "tree", A2APolicy(), subtree_of(requester, edges))
    assert access == denied(
        "Session history visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree)."
    )


def test_example_5_tree_forbids_history_of_an_unspawned_group_session() -> None:
    access = check_access("history", MAIN, "agent:main:telegram:group:42", "tree", A2APolicy(), NO_SUBTREE)
    assert access.model_dump() == {
        "allowed": False,
        "error": "Session history visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree).",
        "agent_to_agent": False,
    }


def test_example_6_self_forbids_sending_to_another_session() -> None:
    access = check_access("send", MAIN, "agent:main:work", "self", A2APolicy(), NO_SUBTREE)
    assert access.error == (
        "Session send visibility is restricted to the current session (tools.sessions.visibility=self)."
    )


def test_example_7_agent_forbids_cross_agent_history() -> None:
    access = check_access("history", MAIN, "agent:ops:main", "agent", A2APolicy(), NO_SUBTREE)
    assert access.error == (
        "Session history visibility is restricted. "
        "Set tools.sessions.visibility=all to allow cross-agent access."
    )


def test_example_8_all_with_a2a_disabled_refuses_cross_agent_sends() -> None:
    access = check_access("send", MAIN, "agent:ops:main", "all", A2APolicy(), NO_SUBTREE)
    assert access == refused_agent_to_agent(
        "Agent-to-agent messaging is disabled. "
        "Set tools.agentToAgent.enabled=true to allow cross-agent sends."
    )


def test_example_8_all_with_an_allow_list_missing_the_target_refuses() -> None:
    access = check_access(
        "send", MAIN, "agent:ops:main", "all", A2APolicy(enabled=True, allow=("main",)), NO_SUBTREE
    )
    assert access == refused_agent_to_agent("Agent-to-agent messaging denied by tools.agentToAgent.allow.")


def test_example_8_all_with_both_agents_allowed_passes() -> None:
    a2a = A2APolicy(enabled=True, allow=("main", "ops"))
    assert check_access("send", MAIN, "agent:ops:main", "all", a2a, NO_SUBTREE) == ALLOWED


def test_example_9_a_sandboxed_main_session_is_clamped_to_tree_restricted_to_spawned() -> None:
    effective = effective_visibility("all", sandboxed=True, is_subagent=False)
    assert effective == EffectiveVisibility(mode="tree", restricted_to_spawned=True)
    note = visibility_note(effective)
    assert note is not None
    assert note.model_dump() == {
        "mode": "tree",
        "restricted": True,
        "warning": "Session visibility is restricted (effective tools.sessions.visibility=tree: "
        "current session + own spawn subtree (sandbox: spawned sessions only)). "
        "Sessions outside that scope are omitted from results and count.",
    }


def test_example_9_sandbox_visibility_all_lifts_the_clamp_and_the_note() -> None:
    effective = effective_visibility(
        "all", sandboxed=True, sandbox_session_tools_visibility="all", is_subagent=False
    )
    assert effective == EffectiveVisibility(mode="all", restricted_to_spawned=False)
    assert visibility_note(effective) is None


# --------------------------------------------------------------------- the table (Done-when 3)
#
# Requester `agent:main:subagent:me`, spawned by `agent:main:main` (its parent), which also spawned
# the sibling; the requester spawned the child, which spawned the grandchild. Every cell states the
# documented result: None = allowed, "self"/"tree"/"cross"/"a2a_off" = that refusal text.

ME = "agent:main:subagent:me"
RELATIONS = {
    "own": ME,
    "child": "agent:main:subagent:kid",
    "grandchild": "agent:main:subagent:grandkid",
    "parent": MAIN,
    "sibling": "agent:main:subagent:sib",
    "other_agent_a2a_off": "agent:ops:main",
    "other_agent_a2a_on": "agent:ops:main",
}
EDGES = [
    (ME, MAIN),
    ("agent:main:subagent:sib", MAIN),
    ("agent:main:subagent:kid", ME),
    ("agent:main:subagent:grandkid", "agent:main:subagent:kid"),
]
EXPECTED: dict[str, dict[VisibilityMode, str | None]] = {
    "own": {"self": None, "tree": None, "agent": None, "all": None},
    "child": {"self": "self", "tree": None, "agent": None, "all": None},
    "grandchild": {"self": "self", "tree": None, "agent": None, "all": None},
    "parent": {"self": "self", "tree": "tree", "agent": None, "all": None},
    "sibling": {"self": "self", "tree": "tree", "agent": None, "all": None},
    "other_agent_a2a_off": {"self": "cross", "tree": "cross", "agent": "cross", "all": "a2a_off"},
    "other_agent_a2a_on": {"self": "cross", "tree": "cross", "agent": "cross", "all": None},
}


def expected_access(outcome: str | None, action: AccessAction) -> Access:
    texts = {
        "self": f"{PREFIX[action]} visibility is restricted to the current session "
        "(tools.sessions.visibility=self).",
        "tree": f"{PREFIX[action]} visibility is restricted to the current session tree "
        "(tools.sessions.visibility=tree).",
        "cross": f"{PREFIX[action]} visibility is restricted. "
        "Set tools.sessions.visibility=all to allow cross-agent access.",
        "a2a_off": A2A_DISABLED[action],
    }
    if outcome is None:
        return ALLOWED
    return refused_agent_to_agent(texts[outcome]) if outcome == "a2a_off" else denied(texts[outcome])


CELLS = [
    pytest.param(mode, relation, action, id=f"{mode}-{relation}-{action}")
    for mode in get_args(VisibilityMode)
    for relation in RELATIONS
    for action in get_args(AccessAction)
]


@pytest.mark.parametrize(("mode", "relation", "action"), CELLS)
def test_access_table_mode_by_relation_by_action(
    mode: VisibilityMode, relation: str, action: AccessAction
) -> None:
    a2a = A2APolicy(enabled=relation == "other_agent_a2a_on")
    access = check_access(action, ME, RELATIONS[relation], mode, a2a, subtree_of(ME, EDGES))
    assert access == expected_access(EXPECTED[relation][mode], action)


def test_the_table_covers_four_modes_seven_relations_four_actions() -> None:
    assert len(CELLS) == 4 * 7 * 4


@pytest.mark.parametrize("configured", ["self", "tree", "agent", "all", None, "bogus"])
@pytest.mark.parametrize("is_subagent", [False, True])
def test_sandbox_clamp_forces_tree_whatever_the_config(configured: object, is_subagent: bool) -> None:
    effective = effective_visibility(configured, sandboxed=True, is_subagent=is_subagent)
    assert effective == EffectiveVisibility(mode="tree", restricted_to_spawned=not is_subagent)


@pytest.mark.parametrize("action", get_args(AccessAction))
def test_a_clamped_sandbox_reads_its_own_child_but_not_its_parent(action: AccessAction) -> None:
    effective = effective_visibility("all", sandboxed=True, is_subagent=True)
    subtree = subtree_of(ME, EDGES)
    assert (
        check_access(action, ME, "agent:main:subagent:grandkid", effective, A2APolicy(), subtree) == ALLOWED
    )
    assert check_access(action, ME, MAIN, effective, A2APolicy(), subtree) == expected_access("tree", action)


def test_a_clamped_sandbox_cannot_reach_another_agent_even_with_a2a_on() -> None:
    effective = effective_visibility("all", sandboxed=True, is_subagent=False)
    access = check_access("send", MAIN, "agent:ops:main", effective, A2APolicy(enabled=True), NO_SUBTREE)
    assert access == expected_access("cross", "send")


# -------------------------------------------------------------------- effective visibility


@pytest.mark.parametrize(
    ("raw", "mode"),
    [
        ("self", "self"),
        ("tree", "tree"),
        ("agent", "agent"),
        ("all", "all"),
        (" ALL ", "all"),
        (None, "tree"),
        ("", "tree"),
        ("channel", "tree"),
        (3, "tree"),
    ],
)
def test_visibility_is_normalized_and_defaults_to_tree(raw: object, mode: VisibilityMode) -> None:
    assert normalize_visibility(raw) == mode


@pytest.mark.parametrize("mode", ["self", "agent", "all"])
def test_an_unsandboxed_requester_keeps_its_configured_visibility(mode: VisibilityMode) -> None:
    assert effective_visibility(mode, sandboxed=False, is_subagent=False) == EffectiveVisibility(mode=mode)


@pytest.mark.parametrize("clamp", ["spawned", None, "bogus", ""])
def test_anything_but_all_keeps_the_sandbox_clamp(clamp: object) -> None:
    effective = effective_visibility(
        "agent", sandboxed=True, sandbox_session_tools_visibility=clamp, is_subagent=True
    )
    assert effective == EffectiveVisibility(mode="tree")


def test_sandbox_all_keeps_self_as_configured() -> None:
    effective = effective_visibility(
        "self", sandboxed=True, sandbox_session_tools_visibility=" All ", is_subagent=False
    )
    assert effective == EffectiveVisibility(mode="self")


# ------------------------------------------------------------------------------- list note


@pytest.mark.parametrize(
    ("effective", "scope"),
    [
        (EffectiveVisibility(mode="self"), "current session only"),
        (EffectiveVisibility(mode="tree"), "current session + own spawn subtree"),
        (EffectiveVisibility(mode="agent"), "all sessions of this agent"),
        (
            EffectiveVisibility(mode="tree", restricted_to_spawned=True),
            "current session + own spawn subtree (sandbox: spawned sessions only)",
        ),
    ],
)
def test_the_list_note_names_the_effective_scope(effective: EffectiveVisibility, scope: str) -> None:
    assert visibility_note(effective) == VisibilityNote(
        mode=effective.mode,
        warning=f"Session visibility is restricted (effective tools.sessions.visibility={effective.mode}: "
        f"{scope}). Sessions outside that scope are omitted from results and count.",
    )


def test_all_has_no_list_note() -> None:
    assert visibility_note(EffectiveVisibility(mode="all")) is None


def test_a_list_restricted_to_spawned_shows_only_the_subtree_not_the_requester() -> None:
    effective = EffectiveVisibility(mode="tree", restricted_to_spawned=True)
    subtree = subtree_of(MAIN, [("agent:main:subagent:a", MAIN)])
    shown = [
        key
        for key in (MAIN, "agent:main:subagent:a", "agent:main:work")
        if visible_in_list(MAIN, key, effective, A2APolicy(), subtree)
    ]
    assert shown == ["agent:main:subagent:a"]


def test_an_unrestricted_list_uses_the_list_access_check() -> None:
    effective = EffectiveVisibility(mode="tree")
    subtree = subtree_of(MAIN, [("agent:main:subagent:a", MAIN)])
    shown = [
        key
        for key in (MAIN, "agent:main:subagent:a", "agent:main:work", "agent:ops:main")
        if visible_in_list(MAIN, key, effective, A2APolicy(enabled=True), subtree)
    ]
    assert shown == [MAIN, "agent:main:subagent:a"]


# ----------------------------------------------------------------------- access rule order


def test_a_cross_agent_child_in_the_subtree_is_visible_under_tree_without_a2a() -> None:
    subtree = subtree_of(MAIN, [("agent:ops:subagent:x", MAIN)])
    assert check_access("history", MAIN, "agent:ops:subagent:x", "tree", A2APolicy(), subtree) == ALLOWED


def test_a_cross_agent_child_is_not_visible_under_agent() -> None:
    subtree = subtree_of(MAIN, [("agent:ops:subagent:x", MAIN)])
    access = check_access("history", MAIN, "agent:ops:subagent:x", "agent", A2APolicy(), subtree)
    assert access == expected_access("cross", "history")


def test_a_child_under_self_is_refused_with_the_self_text() -> None:
    subtree = subtree_of(MAIN, [("agent:main:subagent:a", MAIN)])
    access = check_access("status", MAIN, "agent:main:subagent:a", "self", A2APolicy(), subtree)
    assert access == expected_access("self", "status")


@pytest.mark.parametrize("action", get_args(AccessAction))
def test_a_refused_pair_names_the_action(action: AccessAction) -> None:
    nouns = {"list": "listing", "history": "history", "send": "messaging", "status": "status"}
    access = check_access(
        action, MAIN, "agent:ops:main", "all", A2APolicy(enabled=True, allow=("ma*",)), NO_SUBTREE
    )
    assert access == refused_agent_to_agent(
        f"Agent-to-agent {nouns[action]} denied by tools.agentToAgent.allow."
    )


def test_bare_keys_are_compared_as_identities() -> None:
    mine = SessionIdentity("global", "main")
    theirs = SessionIdentity("global", "ops")
    assert (
        check_access("status", mine, SessionIdentity("global", "main"), "self", A2APolicy(), NO_SUBTREE)
        == ALLOWED
    )
    assert check_access("status", mine, theirs, "agent", A2APolicy(), NO_SUBTREE) == expected_access(
        "cross", "status"
    )
    assert check_access("status", mine, "agent:main:work", "agent", A2APolicy(), NO_SUBTREE) == ALLOWED


# ------------------------------------------------------------------------------ A2A policy


def test_a2a_is_disabled_with_an_empty_allow_by_default() -> None:
    assert A2APolicy() == A2APolicy(enabled=False, allow=())


def test_an_empty_allow_admits_any_agent() -> None:
    assert A2APolicy(enabled=True).allows("main", "ops") is True


def test_a_disabled_policy_still_passes_the_same_agent() -> None:
    assert A2APolicy(enabled=False).allows("main", "main") is True
    assert A2APolicy(enabled=False).allows("main", "ops") is False


def test_exact_ids_match_case_sensitively() -> None:
    policy = A2APolicy(enabled=True, allow=("Main", "ops"))
    assert policy.matches("Main") is True
    assert policy.matches("main") is False
    assert policy.allows("main", "ops") is False


def test_star_patterns_match_case_insensitively() -> None:
    policy = A2APolicy(enabled=True, allow=("OPS-*", "  ", "m*n"))
    assert [policy.matches(agent) for agent in ("ops-east", "Ops-West", "main", "mAIN", "ops", "")] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]


def test_a_lone_star_admits_every_agent() -> None:
    assert A2APolicy(enabled=True, allow=("*",)).allows("main", "anything") is True


def test_a_pair_needs_both_ids_to_match() -> None:
    policy = A2APolicy(enabled=True, allow=("main", "ops"))
    assert (policy.allows("main", "ops"), policy.allows("main", "dev"), policy.allows("dev", "ops")) == (
        True,
        False,
        False,
    )


# -------------------------------------------------------------------------------- subtree


def test_the_subtree_is_transitive_and_excludes_the_requester() -> None:
    edges = [
        ("a", "root"),
        ("b", "a"),
        ("c", "b"),
        ("x", "other"),
        ("root", "grandparent"),
    ]
    assert subtree_of("root", edges) == frozenset({"a", "b", "c"})


def test_the_subtree_follows_spawned_by_and_parent_session_key_edges() -> None:
    edges = [("a", "root"), ("a", None), ("b", None), ("b", "a"), ("c", "elsewhere"), ("c", "b")]
    assert subtree_of("root", edges) == frozenset({"a", "b", "c"})


def test_a_spawn_cycle_terminates_and_never_contains_the_requester() -> None:
    edges = [("a", "root"), ("root", "a"), ("b", "b")]
    assert subtree_of("root", edges) == frozenset({"a"})
