"""Tool profiles and the allow/deny pipeline (SPEC-tools §T1, examples 1-3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionwatch.domain.tools.errors import InvalidToolPolicy, ToolError, ToolNotAllowed
from sessionwatch.domain.tools.policy import (
    CATALOG,
    SubagentToolPolicy,
    ToolLayers,
    ToolPolicy,
    ToolPolicySettings,
    check_tool_allowed,
    effective_tools,
    is_leaf_depth,
    profile_tools,
)

MESSAGING = ("sessions_list", "sessions_history", "sessions_send", "session_status")
ORCHESTRATOR = ("sessions_list", "sessions_history", "sessions_spawn", "sessions_yield", "subagents")

# ----------------------------------------------------------------------------- §T12 examples


def test_example_1_messaging_profile_grants_the_four_messaging_tools() -> None:
    assert effective_tools(ToolPolicySettings(profile="messaging")) == MESSAGING


def test_example_1_also_allow_adds_the_orchestration_tools_in_catalog_order() -> None:
    settings = ToolPolicySettings(
        profile="messaging", also_allow=("sessions_spawn", "sessions_yield", "subagents")
    )
    assert effective_tools(settings) == CATALOG


def test_example_2_an_agent_layer_deny_beats_also_allow() -> None:
    settings = ToolPolicySettings(
        profile="coding",
        also_allow=("sessions_send",),
        layers=ToolLayers(agent=ToolPolicy(deny=("sessions_send",))),
    )
    assert effective_tools(settings) == (
        "sessions_list",
        "sessions_history",
        "sessions_spawn",
        "sessions_yield",
        "subagents",
        "session_status",
    )


def test_example_3_a_depth_one_leaf_gets_no_session_tools() -> None:
    assert effective_tools(ToolPolicySettings(profile="coding", max_spawn_depth=1), depth=1) == ()


def test_example_3_a_depth_one_orchestrator_keeps_spawn_list_history_yield_subagents() -> None:
    assert effective_tools(ToolPolicySettings(profile="coding", max_spawn_depth=2), depth=1) == ORCHESTRATOR


def test_example_3_depth_two_of_two_is_a_leaf() -> None:
    assert effective_tools(ToolPolicySettings(profile="coding", max_spawn_depth=2), depth=2) == ()


# ---------------------------------------------------------------------------------- profiles


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ("minimal", ("session_status",)),
        ("messaging", MESSAGING),
        ("coding", CATALOG),
        ("full", CATALOG),
        (None, CATALOG),
        ("", CATALOG),
        ("  Messaging ", MESSAGING),
    ],
)
def test_each_profile_grants_its_documented_tools(profile: str | None, expected: tuple[str, ...]) -> None:
    assert effective_tools(ToolPolicySettings(profile=profile)) == expected


def test_an_unknown_profile_raises_invalid_tool_policy() -> None:
    with pytest.raises(InvalidToolPolicy) as raised:
        profile_tools("admin")
    assert str(raised.value) == "Unknown tools.profile: 'admin' (expected minimal, messaging, coding or full)"
    assert isinstance(raised.value, ToolError)
    assert isinstance(raised.value, ValueError)


def test_effective_tools_refuses_an_unknown_profile() -> None:
    with pytest.raises(InvalidToolPolicy):
        effective_tools(ToolPolicySettings(profile="everything"))


def test_also_allow_ignores_names_outside_the_catalog() -> None:
    settings = ToolPolicySettings(profile="minimal", also_allow=("exec", "browser", "sessions_list"))
    assert effective_tools(settings) == ("sessions_list", "session_status")


# ----------------------------------------------------------------------- matching and layers


def test_names_match_case_insensitively_and_trimmed() -> None:
    settings = ToolPolicySettings(profile="coding", deny=("  SESSIONS_SEND ", "Session_Status"))
    assert effective_tools(settings) == ORCHESTRATOR


def test_a_star_matches_any_run_of_characters() -> None:
    settings = ToolPolicySettings(profile="coding", deny=("sessions_*",))
    assert effective_tools(settings) == ("subagents", "session_status")


def test_a_lone_star_denies_everything() -> None:
    assert effective_tools(ToolPolicySettings(deny=("*",))) == ()


def test_a_star_in_also_allow_adds_every_matching_catalog_tool() -> None:
    settings = ToolPolicySettings(profile="minimal", also_allow=("sessions_s*",))
    assert effective_tools(settings) == ("sessions_send", "sessions_spawn", "session_status")


def test_a_non_empty_global_allow_keeps_only_its_names() -> None:
    settings = ToolPolicySettings(profile="coding", allow=("session_status", "sessions_list"))
    assert effective_tools(settings) == ("sessions_list", "session_status")


def test_an_empty_allow_filters_nothing() -> None:
    settings = ToolPolicySettings(
        profile="messaging", allow=(), layers=ToolLayers(group=ToolPolicy(allow=()))
    )
    assert effective_tools(settings) == MESSAGING


def test_an_allow_never_adds_back_what_the_profile_did_not_grant() -> None:
    settings = ToolPolicySettings(profile="minimal", allow=("sessions_send", "session_status"))
    assert effective_tools(settings) == ("session_status",)


@pytest.mark.parametrize("layer", ["provider", "agent", "group", "sandbox"])
def test_every_layer_can_deny(layer: str) -> None:
    layers = ToolLayers.model_validate({layer: ToolPolicy(deny=("session_status",))})
    assert effective_tools(ToolPolicySettings(profile="messaging", layers=layers)) == MESSAGING[:3]


@pytest.mark.parametrize("layer", ["provider", "agent", "group", "sandbox"])
def test_every_layer_allow_filters(layer: str) -> None:
    layers = ToolLayers.model_validate({layer: ToolPolicy(allow=("sessions_history",))})
    assert effective_tools(ToolPolicySettings(profile="messaging", layers=layers)) == ("sessions_history",)


def test_a_later_layer_allow_cannot_restore_an_earlier_deny() -> None:
    layers = ToolLayers(
        provider=ToolPolicy(deny=("sessions_list",)), sandbox=ToolPolicy(allow=("sessions_list", "subagents"))
    )
    assert effective_tools(ToolPolicySettings(profile="coding", layers=layers)) == ("subagents",)


# ------------------------------------------------------------------------------ sub-agents


@pytest.mark.parametrize(
    ("depth", "max_spawn_depth", "leaf"),
    [(1, 1, True), (1, 2, False), (2, 2, True), (1, 0, True), (1, 2.9, False), (2, 2.9, True), (4, 5, False)],
)
def test_a_leaf_is_at_least_max_one_floor_max_spawn_depth(
    depth: int, max_spawn_depth: float, leaf: bool
) -> None:
    assert is_leaf_depth(depth, max_spawn_depth) is leaf


def test_depth_zero_has_no_subagent_layer() -> None:
    assert effective_tools(ToolPolicySettings(max_spawn_depth=1), depth=0) == CATALOG


def test_subagent_also_allow_lifts_the_base_deny() -> None:
    settings = ToolPolicySettings(
        max_spawn_depth=2, subagent_tools=SubagentToolPolicy(also_allow=("sessions_send",))
    )
    assert effective_tools(settings, depth=1) == (
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "sessions_spawn",
        "sessions_yield",
        "subagents",
    )


def test_subagent_also_allow_lifts_the_leaf_deny_for_its_names() -> None:
    settings = ToolPolicySettings(subagent_tools=SubagentToolPolicy(also_allow=("Sessions_History",)))
    assert effective_tools(settings, depth=1) == ("sessions_history",)


def test_subagent_allow_lifts_the_base_deny_and_is_a_final_filter() -> None:
    settings = ToolPolicySettings(
        max_spawn_depth=3, subagent_tools=SubagentToolPolicy(allow=("session_status", "sessions_list"))
    )
    assert effective_tools(settings, depth=1) == ("sessions_list", "session_status")


def test_subagent_deny_adds_to_the_base_deny() -> None:
    settings = ToolPolicySettings(max_spawn_depth=2, subagent_tools=SubagentToolPolicy(deny=("subagents",)))
    assert effective_tools(settings, depth=1) == ORCHESTRATOR[:4]


def test_subagent_allow_cannot_restore_a_tool_an_earlier_layer_denied() -> None:
    settings = ToolPolicySettings(
        deny=("sessions_send",), subagent_tools=SubagentToolPolicy(also_allow=("sessions_send",))
    )
    assert effective_tools(settings, depth=1) == ()


# -------------------------------------------------------------------------------- refusal


def test_calling_a_tool_outside_the_set_raises_tool_not_allowed() -> None:
    with pytest.raises(ToolNotAllowed) as raised:
        check_tool_allowed("sessions_send", ORCHESTRATOR)
    assert str(raised.value) == "Tool not available: sessions_send"


def _refusal(tool: str, tools: tuple[str, ...]) -> str | None:
    try:
        check_tool_allowed(tool, tools)
    except ToolNotAllowed as refused:
        return str(refused)
    return None


def test_only_tools_outside_the_set_are_refused() -> None:
    assert [_refusal(tool, ORCHESTRATOR) for tool in CATALOG] == [
        None,
        None,
        "Tool not available: sessions_send",
        None,
        None,
        None,
        "Tool not available: session_status",
    ]


# ------------------------------------------------------------------------------ properties

_NAMES = st.sampled_from(
    [
        *CATALOG,
        "SESSIONS_LIST",
        " sessions_send ",
        "sessions_*",
        "*",
        "session*",
        "*_status",
        "exec",
        "",
        "sub*",
    ]
)
_NAME_TUPLES = st.lists(_NAMES, max_size=4).map(tuple)
_POLICIES = st.builds(ToolPolicy, allow=st.none() | _NAME_TUPLES, deny=_NAME_TUPLES)
_SETTINGS = st.builds(
    ToolPolicySettings,
    profile=st.sampled_from([None, "minimal", "messaging", "coding", "full"]),
    also_allow=_NAME_TUPLES,
    allow=st.none() | _NAME_TUPLES,
    deny=_NAME_TUPLES,
    layers=st.builds(ToolLayers, provider=_POLICIES, agent=_POLICIES, group=_POLICIES, sandbox=_POLICIES),
    subagent_tools=st.builds(
        SubagentToolPolicy, allow=st.none() | _NAME_TUPLES, also_allow=_NAME_TUPLES, deny=_NAME_TUPLES
    ),
    max_spawn_depth=st.integers(min_value=0, max_value=6),
)


def _is_catalog_subsequence(tools: tuple[str, ...]) -> bool:
    positions = [CATALOG.index(tool) for tool in tools]
    return positions == sorted(set(positions))


@given(settings=_SETTINGS, depth=st.integers(min_value=0, max_value=6))
def test_effective_tools_is_always_a_subsequence_of_the_catalog(
    settings: ToolPolicySettings, depth: int
) -> None:
    assert _is_catalog_subsequence(effective_tools(settings, depth=depth))


@given(settings=_SETTINGS, depth=st.integers(min_value=0, max_value=6), extra=_NAMES, where=st.integers(0, 6))
def test_adding_a_deny_never_adds_a_tool(
    settings: ToolPolicySettings, depth: int, extra: str, where: int
) -> None:
    before = set(effective_tools(settings, depth=depth))
    layers = settings.layers
    names = ("provider", "agent", "group", "sandbox")
    if where < len(names):
        layer = getattr(layers, names[where])
        layers = layers.model_copy(
            update={names[where]: layer.model_copy(update={"deny": (*layer.deny, extra)})}
        )
        denied = settings.model_copy(update={"layers": layers})
    elif where == len(names):
        denied = settings.model_copy(update={"deny": (*settings.deny, extra)})
    else:
        sub = settings.subagent_tools
        denied = settings.model_copy(
            update={"subagent_tools": sub.model_copy(update={"deny": (*sub.deny, extra)})}
        )
    assert set(effective_tools(denied, depth=depth)) <= before
