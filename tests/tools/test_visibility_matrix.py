"""SPEC-tools §T2 through the façade: every visibility mode x every relation x every reading tool.

The requester `agent:main:subagent:r` was spawned by `agent:main:main` (its parent), has a sibling
`agent:main:subagent:s`, a child `agent:main:subagent:c` and a grandchild `agent:main:subagent:g`;
`agent:ops:main` belongs to another agent. Each case states the exact outcome of `sessions_list`
(listed or omitted), `sessions_history` and `sessions_send` (the exact JSON) and `session_status`
(the result, or the exact `ToolForbidden`). Then the sandbox clamp, for a sub-agent and for a
top-level requester restricted to what it spawned.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import pytest
from tools.fakes import Env, Ids

from sessionwatch import ToolContext, ToolForbidden

PARENT = "agent:main:main"
REQUESTER = "agent:main:subagent:r"
SIBLING = "agent:main:subagent:s"
CHILD = "agent:main:subagent:c"
GRANDCHILD = "agent:main:subagent:g"
OTHER_AGENT = "agent:ops:main"
UNRELATED = "agent:main:other"

Mode: TypeAlias = Literal["self", "tree", "agent", "all"]
Verdict: TypeAlias = Literal["ok", "self", "tree", "cross_agent", "a2a_disabled"]
Tool: TypeAlias = Literal["sessions_list", "sessions_history", "sessions_send", "session_status"]
TOOLS: tuple[Tool, ...] = ("sessions_list", "sessions_history", "sessions_send", "session_status")

TARGETS = {
    "own": REQUESTER,
    "child": CHILD,
    "grandchild": GRANDCHILD,
    "parent": PARENT,
    "sibling": SIBLING,
    "other agent": OTHER_AGENT,
    "other agent, a2a on": OTHER_AGENT,
}

EXPECTED: dict[tuple[Mode, str], Verdict] = {
    ("self", "own"): "ok",
    ("self", "child"): "self",
    ("self", "grandchild"): "self",
    ("self", "parent"): "self",
    ("self", "sibling"): "self",
    ("self", "other agent"): "cross_agent",
    ("self", "other agent, a2a on"): "cross_agent",
    ("tree", "own"): "ok",
    ("tree", "child"): "ok",
    ("tree", "grandchild"): "ok",
    ("tree", "parent"): "tree",
    ("tree", "sibling"): "tree",
    ("tree", "other agent"): "cross_agent",
    ("tree", "other agent, a2a on"): "cross_agent",
    ("agent", "own"): "ok",
    ("agent", "child"): "ok",
    ("agent", "grandchild"): "ok",
    ("agent", "parent"): "ok",
    ("agent", "sibling"): "ok",
    ("agent", "other agent"): "cross_agent",
    ("agent", "other agent, a2a on"): "cross_agent",
    ("all", "own"): "ok",
    ("all", "child"): "ok",
    ("all", "grandchild"): "ok",
    ("all", "parent"): "ok",
    ("all", "sibling"): "ok",
    ("all", "other agent"): "a2a_disabled",
    ("all", "other agent, a2a on"): "ok",
}
"""The §T2 verdict of each (mode, relation), the same for every action."""

ERRORS: dict[tuple[Verdict, Tool], str] = {
    ("self", "sessions_history"): "Session history visibility is restricted to the current session "
    "(tools.sessions.visibility=self).",
    ("self", "sessions_send"): "Session send visibility is restricted to the current session "
    "(tools.sessions.visibility=self).",
    ("self", "session_status"): "Session status visibility is restricted to the current session "
    "(tools.sessions.visibility=self).",
    ("tree", "sessions_history"): "Session history visibility is restricted to the current session tree "
    "(tools.sessions.visibility=tree).",
    ("tree", "sessions_send"): "Session send visibility is restricted to the current session tree "
    "(tools.sessions.visibility=tree).",
    ("tree", "session_status"): "Session status visibility is restricted to the current session tree "
    "(tools.sessions.visibility=tree).",
    ("cross_agent", "sessions_history"): "Session history visibility is restricted. "
    "Set tools.sessions.visibility=all to allow cross-agent access.",
    ("cross_agent", "sessions_send"): "Session send visibility is restricted. "
    "Set tools.sessions.visibility=all to allow cross-agent access.",
    ("cross_agent", "session_status"): "Session status visibility is restricted. "
    "Set tools.sessions.visibility=all to allow cross-agent access.",
    ("a2a_disabled", "sessions_history"): "Agent-to-agent history is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent access.",
    ("a2a_disabled", "sessions_send"): "Agent-to-agent messaging is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent sends.",
    ("a2a_disabled", "session_status"): "Agent-to-agent status is disabled. "
    "Set tools.agentToAgent.enabled=true to allow cross-agent access.",
}
"""The exact refusal of each verdict by each tool that names its target."""


def family(env: Env) -> None:
    env.register(PARENT)
    env.register(REQUESTER, spawned_by=PARENT, parent_session_key=PARENT)
    env.register(SIBLING, spawned_by=PARENT)
    env.register(CHILD, spawned_by=REQUESTER)
    env.register(GRANDCHILD, spawned_by=CHILD)
    env.register(OTHER_AGENT)
    env.register(UNRELATED)


def outcome(env: Env, tool: Tool, ctx: ToolContext, target: str, **config: object) -> object:
    """What `tool` answers for `target`: listed or not, a result's key, a refusal's JSON or error."""
    tools = env.tools(**config)
    if tool == "sessions_list":
        keys = [row["key"] for row in tools.sessions_list(ctx).to_json()["sessions"]]
        return "listed" if target in keys else "omitted"
    if tool == "sessions_history":
        history = tools.sessions_history(ctx, {"sessionKey": target}).to_json()
        return history.get("sessionKey", history)
    if tool == "sessions_send":
        env.ids = Ids("e1")
        sent = env.tools(**config).sessions_send(
            ctx, {"sessionKey": target, "message": "hi", "timeoutSeconds": 0}
        )
        return sent.to_json() if sent.status != "accepted" else ("accepted", sent.session_key)
    try:
        return tools.session_status(ctx, {"sessionKey": target}).session_key
    except ToolForbidden as refused:
        return ToolForbidden, str(refused)


def expected(tool: Tool, verdict: Verdict, target: str) -> object:
    if tool == "sessions_list":
        return "listed" if verdict == "ok" else "omitted"
    if verdict == "ok":
        return ("accepted", target) if tool == "sessions_send" else target
    error = ERRORS[(verdict, tool)]
    if tool == "sessions_history":
        return {"status": "forbidden", "error": error}
    if tool == "sessions_send":
        return {"runId": "e1", "status": "forbidden", "error": error, "sessionKey": target}
    return ToolForbidden, error


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(("mode", "relation"), list(EXPECTED))
def test_each_mode_relation_and_tool_has_its_exact_outcome(
    mem: Env, tool: Tool, mode: Mode, relation: str
) -> None:
    family(mem)
    target = TARGETS[relation]
    a2a = {"a2a_enabled": True} if relation.endswith("a2a on") else {}
    ctx = ToolContext(session_key=REQUESTER)
    assert outcome(mem, tool, ctx, target, visibility=mode, **a2a) == expected(
        tool, EXPECTED[(mode, relation)], target
    )


def test_the_list_counts_only_what_the_mode_shows(mem: Env) -> None:
    family(mem)
    ctx = ToolContext(session_key=REQUESTER)
    listed = {
        mode: sorted(
            row["key"] for row in mem.tools(visibility=mode).sessions_list(ctx).to_json()["sessions"]
        )
        for mode in ("self", "tree", "agent", "all")
    }
    assert listed == {
        "self": [REQUESTER],
        "tree": [CHILD, GRANDCHILD, REQUESTER],
        "agent": [PARENT, UNRELATED, CHILD, GRANDCHILD, REQUESTER, SIBLING],
        "all": [PARENT, UNRELATED, CHILD, GRANDCHILD, REQUESTER, SIBLING],
    }
    assert mem.tools(visibility="all", a2a_enabled=True).sessions_list(ctx).to_json()["count"] == 7


# --------------------------------------------------------------------------------- sandbox clamp


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    ("relation", "verdict"),
    [("own", "ok"), ("child", "ok"), ("grandchild", "ok"), ("parent", "tree"), ("sibling", "tree")],
)
def test_a_sandboxed_sub_agent_is_clamped_to_tree_under_all(
    mem: Env, tool: Tool, relation: str, verdict: Verdict
) -> None:
    family(mem)
    target = TARGETS[relation]
    ctx = ToolContext(session_key=REQUESTER, sandboxed=True)
    assert outcome(mem, tool, ctx, target, visibility="all") == expected(tool, verdict, target)


@pytest.mark.parametrize("configured", ["self", "tree", "agent", "all"])
def test_the_clamp_is_tree_whatever_the_configured_mode(mem: Env, configured: Mode) -> None:
    family(mem)
    ctx = ToolContext(session_key=REQUESTER, sandboxed=True)
    result = mem.tools(visibility=configured).sessions_list(ctx).to_json()
    assert sorted(row["key"] for row in result["sessions"]) == [CHILD, GRANDCHILD, REQUESTER]
    assert result["visibility"]["mode"] == "tree"


def test_a_registry_sandboxed_session_is_clamped_too(mem: Env) -> None:
    family(mem)
    mem.register(REQUESTER, sandboxed=True)
    result = mem.tools(visibility="all").sessions_history(
        ToolContext(session_key=REQUESTER), {"sessionKey": PARENT}
    )
    assert result.to_json() == {"status": "forbidden", "error": ERRORS[("tree", "sessions_history")]}


def test_lifting_the_clamp_keeps_the_configured_mode(mem: Env) -> None:
    family(mem)
    ctx = ToolContext(session_key=REQUESTER, sandboxed=True)
    tools = mem.tools(visibility="all", sandbox_session_tools_visibility="all")
    assert tools.sessions_history(ctx, {"sessionKey": PARENT}).to_json()["sessionKey"] == PARENT


def test_a_sandboxed_top_level_requester_lists_only_what_it_spawned(mem: Env) -> None:
    family(mem)
    ctx = ToolContext(session_key=PARENT, sandboxed=True)
    result = mem.tools(visibility="all").sessions_list(ctx).to_json()
    assert sorted(row["key"] for row in result["sessions"]) == [CHILD, GRANDCHILD, REQUESTER, SIBLING]
    assert result["count"] == 4
    assert result["visibility"]["warning"].startswith(
        "Session visibility is restricted (effective tools.sessions.visibility=tree: "
        "current session + own spawn subtree (sandbox: spawned sessions only))."
    )


@pytest.mark.parametrize("target", [UNRELATED, OTHER_AGENT])
def test_a_sandboxed_top_level_requester_cannot_name_sessions_outside_its_subtree(
    mem: Env, target: str
) -> None:
    family(mem)
    ctx = ToolContext(session_key=PARENT, sandboxed=True)
    error = f"Session not visible from this sandboxed agent session: {target}"
    tools = mem.tools(visibility="all", a2a_enabled=True)
    assert tools.sessions_history(ctx, {"sessionKey": target}).to_json() == {
        "status": "forbidden",
        "error": error,
    }
    mem.ids = Ids("e1")
    sent = mem.tools(visibility="all", a2a_enabled=True).sessions_send(
        ctx, {"sessionKey": target, "message": "x"}
    )
    assert sent.to_json() == {"runId": "e1", "status": "forbidden", "error": error}
    with pytest.raises(ToolForbidden) as refused:
        tools.session_status(ctx, {"sessionKey": target})
    assert str(refused.value) == error


def test_a_sandboxed_top_level_requester_still_reads_itself_and_its_subtree(mem: Env) -> None:
    family(mem)
    ctx = ToolContext(session_key=PARENT, sandboxed=True)
    tools = mem.tools(visibility="all")
    assert tools.session_status(ctx).session_key == "agent:main:main"
    assert tools.sessions_history(ctx, {"sessionKey": GRANDCHILD}).to_json()["sessionKey"] == GRANDCHILD
