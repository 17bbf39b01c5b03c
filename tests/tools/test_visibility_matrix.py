"""SPEC-tools §T2 through the façade: every visibility mode x every relation x every reading tool.

The requester `agent:main:subagent:r` was spawned by `agent:main:main` (its parent), has a sibling
`agent:main:subagent:s`, a child `agent:main:subagent:c` and a grandchild `agent:main:subagent:g`;
`agent:ops:main` belongs to another agent. Each case states the exact outcome of `sessions_list`
(listed or omitted), `sessions_history` and `sessions_send` (the exact JSON) and `session_status`
(the result, or the exact `ToolForbidden`). Then the sandbox clamp, for a sub-agent and for a
top-level requester restricted to what it spawned. Last, on every store, what every tool's refusals
and errors may name: only what the caller passed and what it may see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

import pytest
from tools.fakes import Env, Ids

from sessionwatch import ToolContext, ToolError, ToolForbidden, UnknownSession
from sessionwatch.domain.tools.results import ToolResult

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


# ------------------------------------------------------------------- what refusals disclose
#
# A refusal or an error may name what the caller passed and what it may see, nothing else: not the
# key an id, `main` or an `agentId` resolved to (a label's thread only when the caller may message
# it), nor the id or label of a session outside its visibility. Every tool runs over every
# viewpoint (mode, sandbox clamp, requester) and every reference the world offers, on every store.

THREAD = "agent:main:discord:channel:9:thread:77"
OTHER_THREAD = "agent:ops:slack:channel:C1:thread:5"
WORDS = {
    PARENT: "parent",
    REQUESTER: "requester",
    SIBLING: "sibling",
    CHILD: "child",
    GRANDCHILD: "grandchild",
    OTHER_AGENT: "ops",
    UNRELATED: "unrelated",
    THREAD: "thread",
    OTHER_THREAD: "ops-thread",
}
"""Every session of the world, and the word its session id and label are made of."""


def session_id_of(key: str) -> str:
    return f"sid-{WORDS[key]}-0f3a"


def label_of(key: str) -> str:
    return f"<{WORDS[key]} label>"


def names_of(key: str) -> tuple[str, str, str]:
    """What names a session: its key, its session id, its label."""
    return key, session_id_of(key), label_of(key)


REFERENCES: tuple[str, ...] = (
    *WORDS,
    *map(session_id_of, WORDS),
    "main",
    "current",
    "openclaw-tui",
    "unrelated",
    "agent:main:nope",
    "agent:ops:nope",
    "sid-nobody-0f3a",
)
"""Every `sessionKey` a caller may pass: each key and session id, the aliases, bare and unknown keys."""


def world(env: Env) -> None:
    """The family, two thread sessions, a session id and a label each, and a run per spawned child."""
    family(env)
    for key in WORDS:
        env.register(key, session_id=session_id_of(key), label=label_of(key))
    env.watch.run_started(CHILD, "run-child", requester_key=REQUESTER, label=label_of(CHILD))
    env.watch.run_started(SIBLING, "run-sibling", requester_key=PARENT, label=label_of(SIBLING))


@dataclass(frozen=True)
class Viewpoint:
    """A caller, its configuration, and the sessions it may see."""

    ctx: ToolContext
    config: Mapping[str, object]
    visible: frozenset[str]


REQUESTER_TREE = frozenset({REQUESTER, CHILD, GRANDCHILD})
PARENT_TREE = frozenset({PARENT, REQUESTER, SIBLING, CHILD, GRANDCHILD})
AGENT_MAIN = frozenset({PARENT, REQUESTER, SIBLING, CHILD, GRANDCHILD, UNRELATED, THREAD})
AGENTS = {"agent_ids": ("main", "ops")}
VIEWPOINTS = {
    "self": Viewpoint(ToolContext(session_key=REQUESTER), {"visibility": "self"}, frozenset({REQUESTER})),
    "tree": Viewpoint(ToolContext(session_key=REQUESTER), {"visibility": "tree"}, REQUESTER_TREE),
    "agent": Viewpoint(ToolContext(session_key=REQUESTER), {"visibility": "agent"}, AGENT_MAIN),
    "all, a2a off": Viewpoint(ToolContext(session_key=REQUESTER), {"visibility": "all"}, AGENT_MAIN),
    "all, a2a on": Viewpoint(
        ToolContext(session_key=REQUESTER),
        {"visibility": "all", "a2a_enabled": True},
        AGENT_MAIN | {OTHER_AGENT, OTHER_THREAD},
    ),
    "all, a2a only for ma*": Viewpoint(
        ToolContext(session_key=REQUESTER),
        {"visibility": "all", "a2a_enabled": True, "a2a_allow": ("ma*",)},
        AGENT_MAIN,
    ),
    "sandboxed sub-agent under all": Viewpoint(
        ToolContext(session_key=REQUESTER, sandboxed=True), {"visibility": "all"}, REQUESTER_TREE
    ),
    "sandboxed top level under all": Viewpoint(
        ToolContext(session_key=PARENT, sandboxed=True),
        {"visibility": "all", "a2a_enabled": True},
        PARENT_TREE,
    ),
    "top level under tree": Viewpoint(ToolContext(session_key=PARENT), {"visibility": "tree"}, PARENT_TREE),
}


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


Call: TypeAlias = Callable[[Mapping[str, object]], ToolResult]


def answer(call: Call, params: Mapping[str, object]) -> tuple[bool, list[str]]:
    """Whether the tool refused (an error or forbidden status, or a raised refusal), and its texts."""
    try:
        result = call(params)
    except (ToolError, UnknownSession) as refusal:
        return True, [str(refusal), *_strings(vars(refusal))]
    shown = result.to_json()
    return shown.get("status") in {"error", "forbidden"}, list(_strings(shown))


def disclosures(viewpoint: Viewpoint, call: Call, inputs: Iterable[Mapping[str, object]]) -> list[object]:
    """Each (input, name) where a refusal names a session outside the caller's visibility that the
    caller did not name itself; asserts that at least one input was refused."""
    leaks: list[object] = []
    refused = 0
    hidden = [name for key in WORDS if key not in viewpoint.visible for name in names_of(key)]
    for params in inputs:
        was_refused, texts = answer(call, params)
        if not was_refused:
            continue
        refused += 1
        passed = list(_strings(params))
        leaks += [
            (dict(params), name)
            for name in hidden
            if not any(name in value for value in passed) and any(name in text for text in texts)
        ]
    assert refused > 0
    return leaks


@pytest.fixture(params=list(VIEWPOINTS))
def viewpoint(request: pytest.FixtureRequest) -> Viewpoint:
    return VIEWPOINTS[str(request.param)]


def test_no_session_name_is_part_of_another() -> None:
    names = [name for key in WORDS for name in names_of(key)]
    assert [(a, b) for a in names for b in names if a != b and a in b] == []


def test_sessions_list_errors_and_rows_name_nothing_hidden(env: Env, viewpoint: Viewpoint) -> None:
    world(env)
    tools = env.tools(**AGENTS, **viewpoint.config)
    inputs: list[Mapping[str, object]] = [
        {},
        {"search": "sid-"},
        {"label": label_of(OTHER_AGENT)},
        {"agentId": "ops"},
        {"kinds": ["group", "other"]},
        {"limit": 0},
        {"activeMinutes": -1},
        {"messageLimit": -1},
        {"agentId": "x" * 65},
    ]
    assert disclosures(viewpoint, lambda p: tools.sessions_list(viewpoint.ctx, p), inputs) == []
    listed = {row["key"] for row in tools.sessions_list(viewpoint.ctx).to_json()["sessions"]}
    assert listed <= viewpoint.visible


def test_sessions_history_refusals_name_nothing_hidden(env: Env, viewpoint: Viewpoint) -> None:
    world(env)
    tools = env.tools(**AGENTS, **viewpoint.config)
    inputs: list[Mapping[str, object]] = [
        *({"sessionKey": ref} for ref in REFERENCES),
        *({"sessionKey": ref, "limit": 0} for ref in REFERENCES[:3]),
        {"sessionKey": THREAD, "offset": -1},
    ]
    assert disclosures(viewpoint, lambda p: tools.sessions_history(viewpoint.ctx, p), inputs) == []


def test_sessions_send_refusals_name_nothing_hidden(env: Env, viewpoint: Viewpoint) -> None:
    world(env)
    tools = env.tools(**AGENTS, **viewpoint.config)
    inputs: list[Mapping[str, object]] = [
        *({"sessionKey": ref, "message": "hi", "timeoutSeconds": 0} for ref in REFERENCES),
        *({"sessionKey": ref, "message": "hi", "timeoutSeconds": 5} for ref in REFERENCES),
        *({"label": label_of(key), "message": "hi", "timeoutSeconds": 0} for key in WORDS),
        *({"label": label_of(key), "agentId": "ops", "message": "hi"} for key in WORDS),
        {"agentId": "ops", "message": "hi", "timeoutSeconds": 0},
        {"agentId": "main", "message": "hi"},
        {"agentId": "ghost", "message": "hi"},
        {"label": "<nobody label>", "message": "hi"},
        {"sessionKey": THREAD, "message": " "},
        {"sessionKey": THREAD, "message": "hi", "timeoutSeconds": -1},
        {"message": "hi"},
    ]
    assert disclosures(viewpoint, lambda p: tools.sessions_send(viewpoint.ctx, p), inputs) == []


def test_session_status_refusals_name_nothing_hidden(env: Env, viewpoint: Viewpoint) -> None:
    world(env)
    tools = env.tools(**AGENTS, **viewpoint.config)
    inputs: list[Mapping[str, object]] = [
        {},
        *({"sessionKey": ref} for ref in REFERENCES),
        {"sessionKey": "main", "agentId": "ops"},
        {"sessionKey": "main", "agentId": "ghost"},
        {"sessionKey": "current", "changesSince": -1},
    ]
    assert disclosures(viewpoint, lambda p: tools.session_status(viewpoint.ctx, p), inputs) == []


def test_sessions_spawn_refusals_name_nothing_hidden(env: Env, viewpoint: Viewpoint) -> None:
    world(env)
    tools = env.tools(**AGENTS, **viewpoint.config)
    inputs: list[Mapping[str, object]] = [
        {"task": "t"},
        {"task": "t", "label": label_of(SIBLING)},
        {"task": "t", "agentId": "ops"},
        {"task": "t", "agentId": "Not An Id"},
        {"task": "t", "mode": "session"},
        {"task": "t", "sandbox": "require"},
        {"task": "t", "context": "fork", "runtime": "acp"},
        {"task": "t", "to": SIBLING},
        {"task": " "},
    ]
    assert disclosures(viewpoint, lambda p: tools.sessions_spawn(viewpoint.ctx, p), inputs) == []


def test_sessions_yield_refusals_name_nothing_hidden(env: Env, viewpoint: Viewpoint) -> None:
    world(env)
    tools = env.tools(**AGENTS, **viewpoint.config)
    env.runtime.yield_supported = False
    inputs = [{}, {"message": label_of(SIBLING)}]
    assert disclosures(viewpoint, lambda p: tools.sessions_yield(viewpoint.ctx, p), inputs) == []
    assert disclosures(viewpoint, lambda p: tools.sessions_yield(ToolContext(), p), inputs) == []


def test_subagents_refusals_name_nothing_hidden_and_list_only_the_callers_children(
    env: Env, viewpoint: Viewpoint
) -> None:
    world(env)
    tools = env.tools(**AGENTS, **viewpoint.config)
    inputs: list[Mapping[str, object]] = [{}, {"recentMinutes": 5}, {"action": "kill"}, {"action": SIBLING}]
    assert disclosures(viewpoint, lambda p: tools.subagents(viewpoint.ctx, p), inputs) == []
    children = {run["sessionKey"] for run in tools.subagents(viewpoint.ctx).to_json()["active"]}
    assert children == ({CHILD} if viewpoint.ctx.session_key == REQUESTER else {SIBLING})


# ----------------------------------------------------------------- what the refusals echo


def send_refusal(env: Env, params: dict[str, object], **config: object) -> dict[str, object]:
    world(env)
    env.ids = Ids("e1")
    return env.tools(**AGENTS, **config).sessions_send(ToolContext(session_key=REQUESTER), params).to_json()


def test_a_send_to_a_hidden_session_id_echoes_the_id_not_its_key(env: Env) -> None:
    sid = session_id_of(OTHER_AGENT)
    assert send_refusal(env, {"sessionKey": sid, "message": "hi"}, visibility="agent") == {
        "runId": "e1",
        "status": "forbidden",
        "error": ERRORS[("cross_agent", "sessions_send")],
        "sessionKey": sid,
    }


def test_a_thread_session_outside_the_visibility_mode_is_refused_for_visibility_not_as_a_thread(
    env: Env,
) -> None:
    sid = session_id_of(OTHER_THREAD)
    assert send_refusal(env, {"sessionKey": sid, "message": "hi"}, visibility="agent") == {
        "runId": "e1",
        "status": "forbidden",
        "error": ERRORS[("cross_agent", "sessions_send")],
        "sessionKey": sid,
    }


def test_a_thread_session_the_agent_to_agent_policy_refuses_is_refused_as_a_thread_echoing_the_id(
    env: Env,
) -> None:
    sid = session_id_of(OTHER_THREAD)
    assert send_refusal(env, {"sessionKey": sid, "message": "hi"}, visibility="all") == {
        "runId": "e1",
        "status": "error",
        "error": "sessions_send cannot target a thread session for inter-agent coordination. "
        "Use the parent channel session key instead.",
        "sessionKey": sid,
    }


def test_a_visible_thread_session_named_by_id_is_refused_echoing_the_id(env: Env) -> None:
    sid = session_id_of(THREAD)
    assert send_refusal(env, {"sessionKey": sid, "message": "hi"}, visibility="agent") == {
        "runId": "e1",
        "status": "error",
        "error": "sessions_send cannot target a thread session for inter-agent coordination. "
        "Use the parent channel session key instead.",
        "sessionKey": sid,
    }


def test_a_waited_send_to_current_echoes_current(env: Env) -> None:
    assert send_refusal(env, {"sessionKey": "current", "message": "hi"}) == {
        "runId": "e1",
        "status": "error",
        "error": "sessions_send cannot target the calling session; use your own reply instead",
        "sessionKey": "current",
    }


def test_main_from_a_sub_agent_under_tree_echoes_main(env: Env) -> None:
    assert send_refusal(env, {"sessionKey": "main", "message": "hi"}, visibility="tree") == {
        "runId": "e1",
        "status": "forbidden",
        "error": ERRORS[("tree", "sessions_send")],
        "sessionKey": "main",
    }


@pytest.mark.parametrize("params", [{"label": label_of(SIBLING)}, {"agentId": "ops"}])
def test_a_target_named_by_label_or_agent_id_is_refused_without_a_session_key(
    env: Env, params: dict[str, object]
) -> None:
    assert send_refusal(env, {**params, "message": "hi"}, visibility="tree") == {
        "runId": "e1",
        "status": "forbidden",
        "error": ERRORS[("tree" if "label" in params else "cross_agent", "sessions_send")],
    }
