"""`ToolsConfig`, `ToolContext` and the result models (SPEC-tools §T0, §T11): pure values."""

from __future__ import annotations

import pytest

from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools import (
    A2APlan,
    SessionsHistoryResult,
    SessionsSendResult,
    ToolContext,
    ToolsConfig,
    effective_tools,
)
from sessionwatch.domain.tools.config import AttachmentSettings
from sessionwatch.domain.tools.policy import SubagentToolPolicy, ToolLayers, ToolPolicy
from sessionwatch.domain.tools.results import SendDelivery, SessionListRow

# ---------------------------------------------------------------------------------- ToolsConfig


def test_the_defaults_are_the_gateways() -> None:
    config = ToolsConfig()
    assert (config.visibility, config.sandbox_session_tools_visibility, config.a2a_enabled) == (
        "tree",
        "spawned",
        False,
    )
    assert (config.max_ping_pong_turns, config.main_key, config.session_scope) == (5, "main", "per-sender")
    assert (config.max_spawn_depth, config.max_children_per_agent, config.default_run_timeout_seconds) == (
        1,
        5,
        0,
    )
    assert (config.default_spawn_context, config.agent_ids, config.redact_patterns) == ("fork", ("main",), ())
    assert config.attachments == AttachmentSettings(
        enabled=False,
        max_files=50,
        max_file_bytes=1_048_576,
        max_total_bytes=5_242_880,
        retain_on_session_keep=False,
    )


@pytest.mark.parametrize(
    ("field", "raw", "value"),
    [
        ("visibility", " ALL ", "all"),
        ("visibility", "channel", "tree"),
        ("visibility", None, "tree"),
        ("sandbox_session_tools_visibility", "All", "all"),
        ("sandbox_session_tools_visibility", "anything", "spawned"),
        ("max_ping_pong_turns", 99, 20),
        ("max_ping_pong_turns", -3, 0),
        ("max_ping_pong_turns", 2.7, 2),
        ("max_ping_pong_turns", "x", 5),
        ("max_spawn_depth", 0, 1),
        ("max_spawn_depth", 9, 5),
        ("max_spawn_depth", 2.9, 2),
        ("max_children_per_agent", 50, 20),
        ("max_children_per_agent", "many", 5),
        ("session_scope", "GLOBAL", "global"),
        ("default_spawn_context", "Isolated", "isolated"),
        ("default_spawn_context", "other", "fork"),
    ],
)
def test_values_are_normalized_like_the_gateway(field: str, raw: object, value: object) -> None:
    assert getattr(ToolsConfig.model_validate({field: raw}), field) == value


def test_per_agent_allow_lists_accept_a_mapping() -> None:
    config = ToolsConfig(allow_agents=("qa",), agent_allow_agents={"main": ["ops", 3]})
    assert config.agent_allow_agents == (("main", ("ops",)),)
    assert (config.allow_agents_for("main"), config.allow_agents_for("ops")) == (("ops",), ("qa",))


def test_the_config_is_a_tool_policy_source() -> None:
    config = ToolsConfig(profile="messaging", also_allow=("subagents",))
    assert effective_tools(config) == (
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "subagents",
        "session_status",
    )


def test_from_openclaw_reads_the_gateway_keys() -> None:
    config = ToolsConfig.from_openclaw(
        {
            "tools": {
                "profile": "coding",
                "alsoAllow": ["sessions_send"],
                "allow": ["sessions_*"],
                "deny": ["subagents"],
                "byProvider": {"anthropic": {"deny": ["sessions_yield"]}},
                "sandbox": {"tools": {"allow": ["session_status"]}},
                "subagents": {"tools": {"alsoAllow": ["sessions_send"], "deny": ["sessions_list"]}},
                "sessions": {"visibility": "all"},
                "agentToAgent": {"enabled": True, "allow": ["main", "ops*"]},
                "sessions_spawn": {
                    "attachments": {"enabled": True, "maxFiles": 3, "retainOnSessionKeep": True}
                },
            },
            "session": {
                "mainKey": "home",
                "scope": "global",
                "agentToAgent": {"maxPingPongTurns": 30},
                "threadBindings": {"defaultSpawnContext": "isolated"},
            },
            "agents": {
                "defaults": {
                    "sandbox": {"sessionToolsVisibility": "all", "mode": "off"},
                    "subagents": {
                        "maxSpawnDepth": 3,
                        "maxChildrenPerAgent": 8,
                        "allowAgents": ["research"],
                        "runTimeoutSeconds": 90.5,
                        "requireAgentId": True,
                    },
                },
                "list": [
                    {
                        "id": "main",
                        "tools": {"deny": ["sessions_spawn"]},
                        "subagents": {"allowAgents": ["*"]},
                    },
                    {"id": "ops", "sandbox": {"mode": "all"}},
                    {"name": "no id, ignored"},
                ],
            },
            "logging": {"redactPatterns": ["ZEBRA-\\d+"]},
        },
        agent_id="main",
        provider="anthropic",
    )
    assert config == ToolsConfig(
        profile="coding",
        also_allow=("sessions_send",),
        allow=("sessions_*",),
        deny=("subagents",),
        layers=ToolLayers(
            provider=ToolPolicy(deny=("sessions_yield",)),
            agent=ToolPolicy(deny=("sessions_spawn",)),
            sandbox=ToolPolicy(allow=("session_status",)),
        ),
        subagent_tools=SubagentToolPolicy(also_allow=("sessions_send",), deny=("sessions_list",)),
        visibility="all",
        sandbox_session_tools_visibility="all",
        a2a_enabled=True,
        a2a_allow=("main", "ops*"),
        max_ping_pong_turns=20,
        main_key="home",
        session_scope="global",
        agent_ids=("main", "ops"),
        max_spawn_depth=3,
        max_children_per_agent=8,
        allow_agents=("research",),
        agent_allow_agents=(("main", ("*",)),),
        sandboxed_agents=("ops",),
        require_agent_id=True,
        default_run_timeout_seconds=90,
        default_spawn_context="isolated",
        attachments=AttachmentSettings(enabled=True, max_files=3, retain_on_session_keep=True),
        redact_patterns=("ZEBRA-\\d+",),
    )


def test_from_openclaw_of_nothing_is_the_defaults() -> None:
    assert ToolsConfig.from_openclaw({}) == ToolsConfig()
    assert ToolsConfig.from_openclaw({"tools": "oops", "agents": {"list": "oops"}}) == ToolsConfig()


def test_a_default_sandbox_mode_sandboxes_the_default_agent() -> None:
    config = ToolsConfig.from_openclaw({"agents": {"defaults": {"sandbox": {"mode": "non-main"}}}})
    assert config.sandboxed_agents == ("main",)


# ----------------------------------------------------------------------------------- ToolContext


@pytest.mark.parametrize(
    ("ctx", "agent"),
    [
        (ToolContext(session_key="agent:ops:main"), "ops"),
        (ToolContext(session_key="global", agent_id="ops"), "ops"),
        (ToolContext(session_key="global"), "main"),
        (ToolContext(), "main"),
    ],
)
def test_the_requester_agent(ctx: ToolContext, agent: str) -> None:
    assert ctx.requester_agent_id == agent


# --------------------------------------------------------------------------------------- results


def test_results_are_camel_case_without_unset_fields() -> None:
    row = SessionListRow(
        key="agent:main:main", agent_id="main", kind="main", channel="unknown", state_version=None
    )
    assert row.to_json() == {
        "key": "agent:main:main",
        "agentId": "main",
        "kind": "main",
        "channel": "unknown",
        "archived": False,
        "pinned": False,
    }


def test_the_history_size_is_shown_as_bytes_and_messages_keep_their_keys() -> None:
    result = SessionsHistoryResult(
        session_key="main",
        messages=({"role": "user", "content": "é", "__openclaw": {"seq": 1}, "stopReason": None},),
        truncated=False,
        dropped_messages=False,
        content_truncated=False,
        content_redacted=False,
        size_bytes=70,
    )
    assert result.to_json() == {
        "sessionKey": "main",
        "messages": [{"role": "user", "content": "é", "__openclaw": {"seq": 1}, "stopReason": None}],
        "truncated": False,
        "droppedMessages": False,
        "contentTruncated": False,
        "contentRedacted": False,
        "bytes": 70,
    }
    assert result.to_json_text().startswith('{"sessionKey":"main","messages":[{"role":"user","content":"é",')


def test_the_a2a_plan_stays_out_of_the_json() -> None:
    plan = A2APlan(
        run_id="r1",
        requester_key="agent:main:main",
        requester_agent_id="main",
        requester_channel=None,
        target_key="agent:main:w",
        target_agent_id="main",
        display_key="agent:main:w",
        message="go",
        round_one_reply=None,
        announce_timeout_seconds=30,
        max_ping_pong_turns=5,
    )
    result = SessionsSendResult(
        run_id="r1",
        status="accepted",
        session_key="agent:main:w",
        delivery=SendDelivery(status="pending"),
        plan=plan,
    )
    assert result.to_json() == {
        "runId": "r1",
        "status": "accepted",
        "sessionKey": "agent:main:w",
        "delivery": {"status": "pending", "mode": "announce"},
    }
    assert result.plan == plan


def test_routes_show_their_set_parts() -> None:
    assert Route(channel="slack", thread_id="9").to_json() == {"channel": "slack", "threadId": "9"}
