"""SPEC-tools §T12: one test per acceptance example, through the `SessionTools` façade.

Fresh fakes; requester `agent:main:main`; `visibility="agent"` unless stated. Examples that write or
read the registry run on every store (memory, SQLite, PostgreSQL) through the `env` fixture.
"""

from __future__ import annotations

import pytest
from tools.fakes import CTX, MAIN, Env, Ids, with_seqs

from sessionwatch import (
    Actor,
    InvalidToolInput,
    RunWait,
    SessionTools,
    TitleFields,
    ToolContext,
    ToolNotAllowed,
    UnknownSession,
)
from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.policy import CATALOG, ToolLayers, ToolPolicy

WORKER = "agent:main:worker"
TREE_ERROR = (
    "Session history visibility is restricted to the current session tree (tools.sessions.visibility=tree)."
)
THREAD_ERROR = (
    "sessions_send cannot target a thread session for inter-agent coordination. "
    "Use the parent channel session key instead."
)
NO_REPLY_MESSAGE = "No visible reply or pending announcement. Continue or retry if needed."
SPAWN_NOTE = (
    "auto-announces on completion, do not poll/sleep. The response will be sent back as an user message."
)


def goal(env: Env, key: str, times: int = 1) -> int:
    """Record `times` goal changes on `key`; the head afterwards."""
    head = 0
    for _ in range(times):
        head = env.watch.record(
            key, kind="goal_changed", actor=Actor.system(), summary="goal updated"
        ).sequence
    return head


def history(env: Env, messages: list[dict[str, object]], **params: object) -> dict[str, object]:
    """`sessions_history` of a worker session holding `messages`."""
    env.register(WORKER)
    env.transcripts.put(WORKER, messages)
    return env.tools().sessions_history(CTX, {"sessionKey": WORKER, **params}).to_json()


def assistant_text(env: Env, text: str) -> object:
    """The content `sessions_history` returns for one assistant message `text`."""
    result = history(env, [{"role": "assistant", "content": text}])
    messages = result["messages"]
    assert isinstance(messages, list)
    return messages[0]["content"]


# ---------------------------------------------------------------------------------- §T1 policy


def test_example_01_messaging_profile_and_also_allow(env: Env) -> None:
    assert env.tools(profile="messaging").effective_tools(CTX) == (
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "session_status",
    )
    tools = env.tools(profile="messaging", also_allow=("sessions_spawn", "sessions_yield", "subagents"))
    assert tools.effective_tools(CTX) == CATALOG


def test_example_02_agent_layer_deny_beats_also_allow(env: Env) -> None:
    tools = env.tools(
        profile="coding",
        also_allow=("sessions_send",),
        layers=ToolLayers(agent=ToolPolicy(deny=("sessions_send",))),
    )
    assert "sessions_send" not in tools.effective_tools(CTX)
    with pytest.raises(ToolNotAllowed, match=r"^Tool not available: sessions_send$"):
        tools.call(CTX, "sessions_send", {"sessionKey": WORKER, "message": "hi"})


def test_example_03_depth_limits_of_sub_agent_tools(env: Env) -> None:
    child = ToolContext(session_key="agent:main:subagent:p")
    assert env.tools(profile="coding", max_spawn_depth=1).effective_tools(child) == ()
    assert env.tools(profile="coding", max_spawn_depth=2).effective_tools(child) == (
        "sessions_list",
        "sessions_history",
        "sessions_spawn",
        "sessions_yield",
        "subagents",
    )
    env.register("agent:main:subagent:q", spawn_depth=2)
    grandchild = ToolContext(session_key="agent:main:subagent:q")
    assert env.tools(profile="coding", max_spawn_depth=2).effective_tools(grandchild) == ()


# ------------------------------------------------------------------------------ §T2 visibility


def test_example_04_tree_reaches_the_grandchild_never_the_parent(env: Env) -> None:
    env.register(MAIN)
    env.register("agent:main:subagent:a", spawned_by=MAIN)
    env.register("agent:main:subagent:b", spawned_by="agent:main:subagent:a")
    tools = env.tools(visibility="tree")
    read = tools.sessions_history(CTX, {"sessionKey": "agent:main:subagent:b"}).to_json()
    assert read["sessionKey"] == "agent:main:subagent:b"
    as_child = ToolContext(session_key="agent:main:subagent:a")
    assert tools.sessions_history(as_child, {"sessionKey": MAIN}).to_json() == {
        "status": "forbidden",
        "error": TREE_ERROR,
    }


def test_example_05_tree_forbids_an_unspawned_group(env: Env) -> None:
    env.register("agent:main:telegram:group:42")
    result = env.tools(visibility="tree").sessions_history(
        CTX, {"sessionKey": "agent:main:telegram:group:42"}
    )
    assert result.to_json() == {"status": "forbidden", "error": TREE_ERROR}


def test_example_06_self_forbids_a_send_to_another_session(env: Env) -> None:
    env.ids = Ids("e1")
    env.register("agent:main:work")
    result = env.tools(visibility="self").sessions_send(
        CTX, {"sessionKey": "agent:main:work", "message": "hi"}
    )
    assert result.to_json() == {
        "runId": "e1",
        "status": "forbidden",
        "error": "Session send visibility is restricted to the current session "
        "(tools.sessions.visibility=self).",
        "sessionKey": "agent:main:work",
    }
    assert env.runtime.dispatches == []


def test_example_07_agent_refuses_cross_agent_history(env: Env) -> None:
    env.register("agent:ops:main")
    result = env.tools().sessions_history(CTX, {"sessionKey": "agent:ops:main"})
    assert result.to_json() == {
        "status": "forbidden",
        "error": "Session history visibility is restricted. "
        "Set tools.sessions.visibility=all to allow cross-agent access.",
    }


def test_example_08_all_needs_agent_to_agent_for_a_cross_agent_send(env: Env) -> None:
    env.register("agent:ops:main")
    params = {"sessionKey": "agent:ops:main", "message": "hi", "timeoutSeconds": 0}
    disabled = env.tools(visibility="all").sessions_send(CTX, params).to_json()
    assert (disabled["status"], disabled["error"]) == (
        "forbidden",
        (
            "Agent-to-agent messaging is disabled. "
            "Set tools.agentToAgent.enabled=true to allow cross-agent sends."
        ),
    )
    denied = env.tools(visibility="all", a2a_enabled=True, a2a_allow=("main",)).sessions_send(CTX, params)
    assert (denied.status, denied.error) == (
        "forbidden",
        "Agent-to-agent messaging denied by tools.agentToAgent.allow.",
    )
    assert env.runtime.dispatches == []
    allowed = env.tools(visibility="all", a2a_enabled=True, a2a_allow=("main", "ops")).sessions_send(
        CTX, params
    )
    assert allowed.status == "accepted"
    assert [d.session_key for d in env.runtime.dispatches] == ["agent:ops:main"]


def test_example_09_a_sandboxed_requester_is_clamped_to_its_spawned_tree(env: Env) -> None:
    env.register(MAIN)
    sandboxed = ToolContext(session_key=MAIN, sandboxed=True)
    clamped = env.tools(visibility="all").sessions_list(sandboxed).to_json()
    assert clamped["visibility"] == {
        "mode": "tree",
        "restricted": True,
        "warning": "Session visibility is restricted (effective tools.sessions.visibility=tree: "
        "current session + own spawn subtree (sandbox: spawned sessions only)). "
        "Sessions outside that scope are omitted from results and count.",
    }
    lifted = env.tools(visibility="all", sandbox_session_tools_visibility="all").sessions_list(sandboxed)
    assert "visibility" not in lifted.to_json()


# ----------------------------------------------------------------------------- §T4 sessions_list


def test_example_10_state_version_only_when_the_head_is_positive(env: Env) -> None:
    assert goal(env, MAIN, times=7) == 7
    env.register("agent:main:subagent:c", spawned_by=MAIN)
    rows = {row["key"]: row for row in env.tools().sessions_list(CTX).to_json()["sessions"]}
    assert rows[MAIN]["stateVersion"] == 7
    assert "stateVersion" not in rows["agent:main:subagent:c"]
    for row in rows.values():
        assert (row["archived"], row["pinned"]) == (False, False)


def test_example_11_message_limit_is_capped_and_limit_must_be_an_integer(env: Env) -> None:
    env.register(MAIN)
    env.tools().sessions_list(CTX, {"messageLimit": 50})
    assert [(r.key, r.limit, r.offset, r.merged_imports) for r in env.transcripts.reads] == [
        (MAIN, 20, None, True)
    ]
    with pytest.raises(InvalidToolInput, match=r"^limit must be a positive integer$") as raised:
        env.tools().sessions_list(CTX, {"limit": 1.5})
    assert raised.value.field == "limit"


def test_example_12_kinds_are_normalized_and_unknown_ones_ignored(env: Env) -> None:
    for key in (MAIN, "agent:main:cron:daily", "agent:main:telegram:group:1"):
        env.register(key)
    tools = env.tools()
    cron = tools.sessions_list(CTX, {"kinds": ["CRON", "bogus"]}).to_json()
    assert [(row["key"], row["kind"]) for row in cron["sessions"]] == [("agent:main:cron:daily", "cron")]
    everything = tools.sessions_list(CTX, {"kinds": ["bogus"]}).to_json()
    assert everything["count"] == 3


def test_example_13_archived_sessions_are_listed_only_on_request(env: Env) -> None:
    env.register(MAIN)
    env.register("agent:main:old", archived=True)
    tools = env.tools()
    assert [row["key"] for row in tools.sessions_list(CTX, {}).to_json()["sessions"]] == [MAIN]
    archived = tools.sessions_list(CTX, {"archived": True}).to_json()["sessions"]
    assert [(row["key"], row["archived"]) for row in archived] == [("agent:main:old", True)]


def test_example_14_derived_title_reads_only_visible_sessions(env: Env) -> None:
    env.register(MAIN, session_id="s-main")
    env.register("agent:main:other", session_id="s-other")
    env.transcripts.titles[(MAIN, "main")] = TitleFields(first_user_message="  Plan   the Q3 launch  ")
    rows = env.tools().sessions_list(CTX, {"includeDerivedTitles": True}).to_json()["sessions"]
    assert {row["key"]: row["derivedTitle"] for row in rows}[MAIN] == "Plan the Q3 launch"
    env.transcripts.title_calls.clear()
    env.tools(visibility="self").sessions_list(CTX, {"includeDerivedTitles": True})
    assert env.transcripts.title_calls == [(MAIN, "main")]


# -------------------------------------------------------------------------- §T5 sessions_history


def test_example_15_thinking_blocks_are_removed_outside_code(env: Env) -> None:
    assert assistant_text(env, "<think>secret plan</think>Answer: 42") == "Answer: 42"
    assert assistant_text(env, "Sure. <thinking>still going") == "Sure. "
    assert assistant_text(env, "Use `<think>` tags") == "Use `<think>` tags"


def test_example_16_relevant_memories_are_removed(env: Env) -> None:
    assert assistant_text(env, "<relevant-memories>\n- likes tea\n</relevant-memories>\nHello") == "\nHello"


def test_example_17_tool_call_xml_is_removed_prose_tags_stay(env: Env) -> None:
    assert assistant_text(env, 'Done.<tool_call>{"name":"exec"}</tool_call> Next.') == "Done. Next."
    assert assistant_text(env, 'Checking <function_calls>\n[{"name":"read"') == "Checking "
    assert assistant_text(env, "Wrap calls in <tool_call> tags.") == "Wrap calls in <tool_call> tags."
    assert assistant_text(env, 'A<tool_call>{"q":"</tool_call>"}</tool_call>B') == "AB"


def test_example_18_downgraded_scaffolding_is_removed(env: Env) -> None:
    text = '[Tool Call: exec (ID: t1)]\nArguments: {"cmd":"ls"}\nAll files listed.'
    assert assistant_text(env, text) == "All files listed."
    assert assistant_text(env, "[Historical context: earlier turns omitted]\nHi") == "Hi"


def test_example_19_control_tokens_are_removed(env: Env) -> None:
    text = "Hello<|assistant|>world <｜end▁of▁sentence｜>"  # noqa: RUF001 - full-width bars are the point
    assert assistant_text(env, text) == "Hello world "


def test_example_20_minimax_tool_calls_are_removed(env: Env) -> None:
    text = 'Let me check.<invoke name="search"><parameter name="q">x</parameter></invoke></minimax:tool_call>'
    assert assistant_text(env, text) == "Let me check."


def test_example_21_credentials_are_redacted_in_every_role(env: Env) -> None:
    result = history(
        env,
        [
            {"role": "user", "content": "Use sk-1234567890abcdef1234 to authenticate"},
            {"role": "user", "content": "export API_KEY=abc123"},
            {"role": "user", "content": "run --password hunter2 now"},
        ],
    )
    assert result["messages"] == [
        {"role": "user", "content": "Use sk-123…1234 to authenticate"},
        {"role": "user", "content": "export API_KEY=***"},
        {"role": "user", "content": "run --password *** now"},
    ]
    assert result["contentRedacted"] is True


def test_example_22_a_long_text_is_truncated(env: Env) -> None:
    result = history(env, [{"role": "user", "content": "a" * 4500}])
    assert result["messages"] == [{"role": "user", "content": "a" * 4000 + "\n…(truncated)…"}]
    assert (result["contentTruncated"], result["truncated"], result["droppedMessages"]) == (True, True, False)


def test_example_23_the_oldest_messages_are_dropped_to_80_kib(env: Env) -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": "x" * 4000} for _ in range(25)]
    result = history(env, messages)
    assert result["messages"] == messages[-20:]
    assert (result["bytes"], result["droppedMessages"], result["contentTruncated"]) == (80581, True, False)


def test_example_24_a_lone_oversized_message_becomes_the_placeholder(env: Env) -> None:
    blocks = [{"type": "text", "text": "y" * 4000} for _ in range(21)]
    result = history(env, [{"role": "assistant", "content": blocks}])
    assert result["messages"] == [
        {"role": "assistant", "content": "[sessions_history omitted: message too large]"}
    ]
    assert (result["bytes"], result["droppedMessages"]) == (80, True)


def test_example_25_tool_messages_and_heavy_keys(env: Env) -> None:
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "hi"},
        {"role": "toolResult", "content": "ls output"},
        {"role": "assistant", "content": "done"},
    ]
    assert len(history(env, messages)["messages"]) == 2  # type: ignore[arg-type]
    assert len(history(env, messages, includeTools=True)["messages"]) == 3  # type: ignore[arg-type]
    usage = history(env, [{"role": "assistant", "content": "ok", "usage": {"input": 3}}])
    assert (usage["messages"], usage["contentTruncated"]) == ([{"role": "assistant", "content": "ok"}], True)
    signed = history(
        env,
        [
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "hm", "thinkingSignature": "s"}],
            }
        ],
    )
    assert signed["messages"] == [{"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]}]
    assert signed["contentTruncated"] is True


def test_example_26_offset_pages_carry_pagination(env: Env) -> None:
    env.register(WORKER)
    env.transcripts.put(WORKER, with_seqs({"role": "user", "content": f"m{n}"} for n in range(1, 11)))
    tools = env.tools()
    first = tools.sessions_history(CTX, {"sessionKey": WORKER, "limit": 3, "offset": 0}).to_json()
    assert [m["__openclaw"]["seq"] for m in first["messages"]] == [8, 9, 10]
    assert {k: first[k] for k in ("offset", "nextOffset", "hasMore", "totalMessages")} == {
        "offset": 0,
        "nextOffset": 3,
        "hasMore": True,
        "totalMessages": 10,
    }
    last = tools.sessions_history(CTX, {"sessionKey": WORKER, "limit": 3, "offset": 9}).to_json()
    assert [m["__openclaw"]["seq"] for m in last["messages"]] == [1]
    assert (last["hasMore"], "nextOffset" in last) == (False, False)
    newest = tools.sessions_history(CTX, {"sessionKey": WORKER, "limit": 3}).to_json()
    assert not {"offset", "nextOffset", "hasMore", "totalMessages"} & set(newest)
    assert env.transcripts.reads[-1].merged_imports is True
    assert [r.merged_imports for r in env.transcripts.reads[:2]] == [False, False]
    with pytest.raises(InvalidToolInput, match=r"^offset must be a non-negative integer$"):
        tools.sessions_history(CTX, {"sessionKey": WORKER, "offset": -1})


# ----------------------------------------------------------------------------- §T6 sessions_send


def test_example_27_a_thread_session_is_not_a_send_target(env: Env) -> None:
    key = "agent:main:discord:channel:9:thread:77"
    env.ids = Ids("e1")
    env.register(key)
    assert env.tools().sessions_send(CTX, {"sessionKey": key, "message": "go"}).to_json() == {
        "runId": "e1",
        "status": "error",
        "error": THREAD_ERROR,
        "sessionKey": key,
    }


def test_example_28_fire_and_forget_is_accepted_at_once(env: Env) -> None:
    env.register("agent:main:subagent:w")
    env.runtime.run_ids.append("r1")
    result = env.tools().sessions_send(
        CTX, {"sessionKey": "agent:main:subagent:w", "message": "go", "timeoutSeconds": 0}
    )
    assert result.to_json() == {
        "runId": "r1",
        "status": "accepted",
        "sessionKey": "agent:main:subagent:w",
        "targetDisposition": "queued",
        "delivery": {"status": "pending", "mode": "announce"},
    }
    assert env.runtime.wait_calls == []


def test_example_29_the_dispatched_text_is_marked_inter_session(env: Env) -> None:
    env.register(WORKER)
    env.tools().sessions_send(CTX, {"sessionKey": WORKER, "message": "go", "timeoutSeconds": 0})
    (sent,) = env.runtime.dispatches
    assert sent.message.startswith(
        "[Inter-session message] sourceSession=agent:main:main sourceChannel=telegram "
        "sourceTool=sessions_send isUser=false\nThis content was routed by OpenClaw"
    )
    assert sent.message.endswith("\ngo")
    assert sent.provenance.to_json() == {
        "kind": "inter_session",
        "sourceSessionKey": MAIN,
        "sourceChannel": "telegram",
        "sourceTool": "sessions_send",
    }


def test_example_30_waited_sends(env: Env) -> None:
    env.register(MAIN)
    env.register(WORKER)
    tools = env.tools()
    env.runtime.run_ids.extend(["r1", "r2", "r3"])
    env.runtime.script_wait("r1", RunWait(status="ok", reply_text="done"))
    env.runtime.script_wait("r2", RunWait(status="ok", reply_text=" NO_REPLY "))
    env.runtime.script_wait("r3", RunWait(status="error"))
    ok = tools.sessions_send(CTX, {"sessionKey": WORKER, "message": "go"}).to_json()
    assert (ok["status"], ok["reply"]) == ("ok", "done")
    assert tools.sessions_send(CTX, {"sessionKey": WORKER, "message": "go"}).to_json() == {
        "runId": "r2",
        "status": "no_reply",
        "sessionKey": WORKER,
        "message": NO_REPLY_MESSAGE,
    }
    failed = tools.sessions_send(CTX, {"sessionKey": WORKER, "message": "go"}).to_json()
    assert (failed["error"], failed["sentBeforeError"]) == ("agent error", True)
    to_self = tools.sessions_send(CTX, {"sessionKey": MAIN, "message": "go"}).to_json()
    assert to_self["error"] == "sessions_send cannot target the calling session; use your own reply instead"


@pytest.mark.parametrize(("configured", "turns"), [(99, 20), (-3, 0), (2.7, 2), ("x", 5)])
def test_example_31_max_ping_pong_turns_is_floored_and_clamped(
    env: Env, configured: object, turns: int
) -> None:
    env.register(WORKER)
    result = env.tools(max_ping_pong_turns=configured).sessions_send(
        CTX, {"sessionKey": WORKER, "message": "go", "timeoutSeconds": 0}
    )
    assert result.plan is not None
    assert result.plan.max_ping_pong_turns == turns


def test_example_32_reply_skip_ends_the_ping_pong_and_announce_skip_stays_silent(env: Env) -> None:
    env.register(MAIN)
    env.register(WORKER, delivery_context=Route(channel="telegram", to="chat:1"))
    env.runtime.run_ids.append("r1")
    env.runtime.script_wait("r1", RunWait(status="ok", reply_text="first answer"))
    tools = env.tools()
    sent = tools.sessions_send(CTX, {"sessionKey": WORKER, "message": "go"})
    assert sent.plan is not None
    env.runtime.step_replies.extend(["REPLY_SKIP", "ANNOUNCE_SKIP"])
    report = tools.run_a2a(sent.plan)
    assert [(step.key, step.message) for step in env.runtime.steps] == [
        (MAIN, "first answer"),
        (WORKER, "Agent-to-agent announce step."),
    ]
    assert "Turn 1 of 5." in env.runtime.steps[0].extra_system_prompt
    assert (report.turns, report.stopped_by, report.announced) == (1, "reply_skip", False)
    assert env.runtime.announcements == []


def test_example_33_watch_registers_after_dispatch_at_the_head(env: Env) -> None:
    env.register(MAIN)
    env.register(WORKER)
    assert goal(env, WORKER, times=4) == 4
    tools = env.tools()
    watched = tools.sessions_send(
        CTX, {"sessionKey": WORKER, "message": "go", "timeoutSeconds": 0, "watch": True}
    )
    assert watched.to_json()["watched"] is True
    cursor = env.watch.cursor(MAIN, WORKER)
    assert cursor is not None
    assert (cursor.last_seen, cursor.notified, cursor.material) == (4, 4, 4)
    to_self = tools.sessions_send(
        CTX, {"sessionKey": MAIN, "message": "go", "timeoutSeconds": 0, "watch": True}
    )
    assert to_self.to_json()["watched"] is False
    env.runtime.dispatch_failure = "gateway down"
    failed = tools.sessions_send(CTX, {"sessionKey": WORKER, "message": "go", "watch": True}).to_json()
    assert (failed["status"], failed["error"], "watched" in failed) == ("error", "gateway down", False)


# ---------------------------------------------------------------------------- §T7 session_status


def test_example_34_model_default_clears_the_override(env: Env) -> None:
    env.register(MAIN, model_override="anthropic/x")
    tools = env.tools()
    cleared = tools.session_status(CTX, {"model": "Default"})
    assert cleared.changed_model is True
    assert cleared.to_json()["model"] == {"active": "openai/gpt", "default": "openai/gpt"}
    entry = env.watch.registry_entry(MAIN)
    assert entry is not None
    assert entry.model_override is None
    assert tools.session_status(CTX, {"model": "Default"}).changed_model is False


def test_example_35_references_and_changes_since(env: Env) -> None:
    env.register(MAIN)
    goal(env, MAIN, times=2)
    tools = env.tools()
    assert tools.session_status(CTX, {"sessionKey": "openclaw-tui"}).session_key == MAIN
    with pytest.raises(UnknownSession) as raised:
        tools.session_status(CTX, {"sessionKey": "agent:main:nope"})
    assert str(raised.value) == "Unknown sessionKey: agent:main:nope"
    status = tools.session_status(CTX, {"changesSince": 0}).to_json()
    core = env.watch.session_status(MAIN, changes_since=0).to_json()
    assert status["stateChanges"] == core["stateChanges"]
    assert status["stateVersion"] == core["stateVersion"] == 2


# ---------------------------------------------------------------------------- §T8 sessions_spawn


def test_example_36_spawn_is_accepted_and_seeds_the_parent_cursor(env: Env) -> None:
    env.register(MAIN)
    env.ids = Ids("u1")
    env.runtime.child_run_ids.append("r9")
    result = env.tools().sessions_spawn(CTX, {"task": "t"})
    assert result.to_json() == {
        "status": "accepted",
        "childSessionKey": "agent:main:subagent:u1",
        "runId": "r9",
        "mode": "run",
        "note": SPAWN_NOTE,
    }
    status = env.watch.session_status("agent:main:subagent:u1", changes_since=0)
    assert status.state_changes is not None
    (spawned,) = status.state_changes.events
    assert (spawned.kind, spawned.run_id, spawned.actor_id) == ("child_spawned", "r9", MAIN)
    cursor = env.watch.cursor(MAIN, "agent:main:subagent:u1")
    assert cursor is not None
    s = spawned.sequence
    assert (cursor.last_seen, cursor.notified, cursor.material) == (s, s, s)


def test_example_37_no_spawn_at_the_maximum_depth(env: Env) -> None:
    child = ToolContext(session_key="agent:main:subagent:p")
    result = env.tools(max_spawn_depth=1).sessions_spawn(child, {"task": "t"})
    assert result.to_json() == {
        "status": "forbidden",
        "error": "sessions_spawn is not allowed at this depth (current depth: 1, max: 1)",
    }
    assert env.runtime.child_runs == []


def test_example_38_spawn_parameter_errors(env: Env) -> None:
    env.register(MAIN, session_id="s-main")
    tools = env.tools()
    with pytest.raises(
        InvalidToolInput, match=r'^context="fork" is only supported for runtime="subagent"\.$'
    ):
        tools.sessions_spawn(CTX, {"task": "t", "runtime": "acp", "context": "fork"})
    assert tools.sessions_spawn(CTX, {"task": "t", "mode": "session"}).to_json() == {
        "status": "error",
        "error": 'mode="session" requires thread=true so the subagent can stay bound to a thread.',
    }
    with pytest.raises(InvalidToolInput) as raised:
        tools.sessions_spawn(CTX, {"task": "t", "channel": "x"})
    assert str(raised.value) == (
        'sessions_spawn does not support "channel". Use "message" or "sessions_send" for channel delivery.'
    )
    assert env.runtime.child_runs == []


def test_example_39_thread_spawns_fork_in_session_mode(env: Env) -> None:
    env.register(MAIN, session_id="s-main")
    forked = env.tools().sessions_spawn(CTX, {"task": "t", "thread": True})
    assert (forked.status, forked.mode, env.runtime.child_runs[-1].context) == ("accepted", "session", "fork")
    isolated = env.tools(default_spawn_context="isolated").sessions_spawn(CTX, {"task": "t", "thread": True})
    assert (isolated.status, env.runtime.child_runs[-1].context) == ("accepted", "isolated")


def test_example_40_the_first_message_carries_depth_and_task(env: Env) -> None:
    env.register(MAIN)
    env.tools(max_spawn_depth=2).sessions_spawn(CTX, {"task": "sum files"})
    assert env.runtime.child_runs[-1].message == (
        "[Subagent Context] You are running as a subagent (depth 1/2). Results auto-announce to your "
        "requester; do not busy-poll for status.\n\n[Subagent Task]: sum files"
    )


# ------------------------------------------------------------------------ §T9 yield, subagents


def test_example_41_yield_asks_the_runtime(env: Env) -> None:
    tools: SessionTools = env.tools()
    env.runtime.yield_supported = False
    assert tools.sessions_yield(CTX).to_json() == {
        "status": "error",
        "error": "Yield not supported in this context",
    }
    env.runtime.yield_supported = True
    assert tools.sessions_yield(CTX).to_json() == {"status": "yielded", "message": "Turn yielded."}
    assert env.runtime.yields == [(MAIN, "Turn yielded."), (MAIN, "Turn yielded.")]


def test_example_42_subagents_lists_active_and_recent_runs(env: Env) -> None:
    env.register(MAIN)
    env.runtime.child_run_ids.extend(["r-old", "r-new"])
    tools = env.tools()
    tools.sessions_spawn(CTX, {"task": "first", "label": "old"})
    tools.complete_child_run("r-old", "ok", reply="done")
    env.clock.advance(minutes=10)
    tools.sessions_spawn(CTX, {"task": "second", "label": "new"})
    listed = tools.subagents(CTX).to_json()
    assert (listed["total"], len(listed["active"]), len(listed["recent"])) == (2, 1, 1)
    assert listed["text"] == "new: running\nold: done"
    narrow = tools.subagents(CTX, {"recentMinutes": 5}).to_json()
    assert (narrow["total"], [run["runId"] for run in narrow["active"]], narrow["recent"]) == (
        1,
        ["r-new"],
        [],
    )
