"""`sessions_list`, `sessions_history`, `session_status` beyond the §T12 examples (SPEC-tools §T3-§T7).

Filters, order and enrichment of the list; references, limits and pagination of the history; and the
whole `session_status` card: model, usage backfill, runtime, tasks, route and `statusText`.
"""

from __future__ import annotations

import pytest
from tools.fakes import CTX, MAIN, Env, with_seqs

from sessionwatch import InvalidToolInput, TitleFields, ToolContext, ToolForbidden, UnknownSession, Usage
from sessionwatch.domain.registry import Route

MINUTE = 60_000


def keys(
    env: Env, params: dict[str, object] | None = None, ctx: ToolContext = CTX, **config: object
) -> list[str]:
    return [row["key"] for row in env.tools(**config).sessions_list(ctx, params).to_json()["sessions"]]


def now_ms(env: Env) -> int:
    return int(env.clock.now().timestamp() * 1000)


# ------------------------------------------------------------------------------- sessions_list


def test_rows_are_newest_first_then_by_key_and_cut_to_the_limit(env: Env) -> None:
    now = now_ms(env)
    env.register("agent:main:b", updated_at=now - 5 * MINUTE)
    env.register("agent:main:a", updated_at=now - 5 * MINUTE)
    env.register("agent:main:c", updated_at=now)
    env.register("agent:main:old")
    assert keys(env) == ["agent:main:c", "agent:main:a", "agent:main:b", "agent:main:old"]
    assert keys(env, {"limit": 2}) == ["agent:main:c", "agent:main:a"]
    assert keys(env, {"activeMinutes": 1}) == ["agent:main:c"]
    assert keys(env, {"activeMinutes": 5}) == ["agent:main:c", "agent:main:a", "agent:main:b"]


def test_label_agent_and_search_filters(env: Env) -> None:
    env.register("agent:main:a", label="alpha", display_name="Release Train")
    env.register("agent:main:b", label="beta", subject="Q3 Planning", session_id="sess-77")
    env.register("agent:ops:c", label="alpha")
    tools = env.tools(visibility="all", a2a_enabled=True)
    assert keys(env, {"label": "alpha"}, visibility="all", a2a_enabled=True) == [
        "agent:main:a",
        "agent:ops:c",
    ]
    assert keys(env, {"label": "alpha", "agentId": "ops"}, visibility="all", a2a_enabled=True) == [
        "agent:ops:c"
    ]
    for search, found in (
        ("TRAIN", "agent:main:a"),
        ("planning", "agent:main:b"),
        ("SESS-7", "agent:main:b"),
    ):
        assert [row.key for row in tools.sessions_list(CTX, {"search": search}).sessions] == [found]
    with pytest.raises(InvalidToolInput, match=r"^agentId must be 1-64 characters$"):
        tools.sessions_list(CTX, {"agentId": "x" * 65})


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"limit": 0}, "limit must be a positive integer"),
        ({"limit": "many"}, "limit must be a positive integer"),
        ({"activeMinutes": 0}, "activeMinutes must be a positive integer"),
        ({"activeMinutes": 2.5}, "activeMinutes must be a positive integer"),
        ({"messageLimit": -1}, "messageLimit must be a non-negative integer"),
    ],
)
def test_numeric_filters_are_checked(env: Env, params: dict[str, object], error: str) -> None:
    with pytest.raises(InvalidToolInput) as raised:
        env.tools().sessions_list(CTX, params)
    assert str(raised.value) == error


def test_unknown_and_global_sessions_are_not_listed_outside_global_scope(env: Env) -> None:
    env.register(MAIN)
    env.register("unknown", agent_id="main")
    env.register("global", agent_id="main")
    assert keys(env) == [MAIN]
    assert keys(env, main_key="main", session_scope="global") == [MAIN, "main"]  # `global` is shown as main


def test_a_row_carries_the_registry_facts(env: Env) -> None:
    env.register(
        "agent:main:telegram:group:42",
        session_id="s-42",
        label="ops room",
        display_name="Ops",
        model="openai/gpt",
        context_tokens=200_000,
        total_tokens=1234,
        pinned=True,
        aborted_last_run=True,
        parent_session_key=MAIN,
        updated_at=now_ms(env),
    )
    env.register("agent:main:subagent:kid", spawned_by="agent:main:telegram:group:42")
    env.watch.run_started("agent:main:telegram:group:42", "r1")
    rows = {row["key"]: row for row in env.tools().sessions_list(CTX).to_json()["sessions"]}
    assert rows["agent:main:telegram:group:42"] == {
        "key": "agent:main:telegram:group:42",
        "sessionId": "s-42",
        "agentId": "main",
        "kind": "group",
        "channel": "telegram",
        "archived": False,
        "pinned": True,
        "label": "ops room",
        "displayName": "Ops",
        "parentSessionKey": MAIN,
        "updatedAt": now_ms(env),
        "model": "openai/gpt",
        "contextTokens": 200_000,
        "totalTokens": 1234,
        "status": "running",
        "abortedLastRun": True,
        "childSessions": ["agent:main:subagent:kid"],
    }
    assert rows["agent:main:subagent:kid"]["parentSessionKey"] == "agent:main:telegram:group:42"


@pytest.mark.parametrize(
    ("outcome", "status"),
    [("ok", "done"), ("error", "failed"), ("timeout", "timeout"), ("cancelled", "killed")],
)
def test_the_row_status_is_the_latest_runs(env: Env, outcome: str, status: str) -> None:
    env.register(MAIN)
    env.watch.run_started(MAIN, "r1")
    env.watch.run_ended(MAIN, "r1", outcome=outcome)  # type: ignore[arg-type]
    (row,) = env.tools().sessions_list(CTX).to_json()["sessions"]
    assert row["status"] == status


@pytest.mark.parametrize(
    ("fields", "titles", "expected"),
    [
        ({"display_name": "Shown"}, TitleFields(first_user_message="ignored"), "Shown"),
        ({"label": "tagged"}, TitleFields(), "tagged"),
        ({"subject": "Topic"}, TitleFields(), "Topic"),
        (
            {},
            TitleFields(first_user_message="please " + "review " * 12),
            "please review review review review review review review…",
        ),
        ({"updated_at": 1_796_040_000_000}, TitleFields(), "abcdef12 (2026-11-30)"),
        ({}, TitleFields(), "abcdef12"),
    ],
)
def test_the_derived_title_cascade(
    env: Env, fields: dict[str, object], titles: TitleFields, expected: str
) -> None:
    env.register(MAIN, session_id="abcdef1234567890", **fields)
    env.transcripts.titles[(MAIN, "main")] = titles
    (row,) = env.tools().sessions_list(CTX, {"includeDerivedTitles": True}).to_json()["sessions"]
    assert row["derivedTitle"] == expected


def test_titles_are_read_only_for_rows_with_a_session_id(env: Env) -> None:
    env.register(MAIN, session_id="s-main")
    env.register("agent:main:no-id")
    env.transcripts.titles[(MAIN, "main")] = TitleFields(last_message_preview="see you")
    rows = {
        r["key"]: r
        for r in env.tools().sessions_list(CTX, {"includeLastMessage": True}).to_json()["sessions"]
    }
    assert rows[MAIN]["lastMessagePreview"] == "see you"
    assert "lastMessagePreview" not in rows["agent:main:no-id"]
    assert env.transcripts.title_calls == [(MAIN, "main")]


def test_only_the_first_100_rows_are_enriched(mem: Env) -> None:
    now = now_ms(mem)
    for n in range(105):
        mem.register(f"agent:main:s{n:03d}", session_id=f"id-{n}", updated_at=now - n)
    rows = mem.tools().sessions_list(CTX, {"limit": 200, "includeDerivedTitles": True}).to_json()["sessions"]
    assert len(rows) == 105
    assert ["derivedTitle" in row for row in rows] == [True] * 100 + [False] * 5
    assert len(mem.transcripts.title_calls) == 100


def test_listed_messages_are_sanitized_without_tools(env: Env) -> None:
    env.register(MAIN)
    env.transcripts.put(
        MAIN,
        [
            {"role": "user", "content": "token sk-abcdefghijklmnopqrstu"},
            {"role": "toolResult", "content": "raw"},
            {"role": "assistant", "content": "<think>x</think>ok"},
        ],
    )
    (row,) = env.tools().sessions_list(CTX, {"messageLimit": 3}).to_json()["sessions"]
    assert row["messages"] == [
        {"role": "user", "content": "token sk-abc…rstu"},
        {"role": "assistant", "content": "ok"},
    ]


def test_an_oversized_listed_message_gets_the_list_placeholder(env: Env) -> None:
    env.register(MAIN)
    env.transcripts.put(MAIN, [{"role": "user", "content": [{"type": "text", "text": "z" * 4000}] * 21}])
    (row,) = env.tools().sessions_list(CTX, {"messageLimit": 1}).to_json()["sessions"]
    assert row["messages"] == [{"role": "assistant", "content": "[sessions_list omitted: message too large]"}]


# ---------------------------------------------------------------------------- sessions_history


def test_history_limits(env: Env) -> None:
    env.register(MAIN)
    env.transcripts.put(MAIN, with_seqs({"role": "user", "content": str(n)} for n in range(5)))
    tools = env.tools()
    assert tools.sessions_history(CTX, {"sessionKey": "current"}).to_json()["sessionKey"] == MAIN
    tools.sessions_history(CTX, {"sessionKey": MAIN, "limit": 5000})
    assert [read.limit for read in env.transcripts.reads] == [200, 1000]
    with pytest.raises(InvalidToolInput, match=r"^limit must be a positive integer$"):
        tools.sessions_history(CTX, {"sessionKey": MAIN, "limit": 0})
    with pytest.raises(InvalidToolInput, match=r"^sessionKey is required$"):
        tools.sessions_history(CTX, {})


def test_history_references(env: Env) -> None:
    env.register("agent:main:worker", session_id="0a1b2c3d")
    tools = env.tools()
    assert (
        tools.sessions_history(CTX, {"sessionKey": "0a1b2c3d"}).to_json()["sessionKey"] == "agent:main:worker"
    )
    assert tools.sessions_history(CTX, {"sessionKey": "main"}).to_json() == {
        "status": "error",
        "error": "Unknown sessionKey: main",
    }
    assert tools.sessions_history(CTX, {"sessionKey": "9z9z9z"}).to_json() == {
        "status": "error",
        "error": "Session not found: 9z9z9z (use the full sessionKey from sessions_list)",
    }
    env.register(MAIN)
    assert tools.sessions_history(CTX, {"sessionKey": "main"}).to_json()["sessionKey"] == MAIN
    assert tools.sessions_history(CTX, {"sessionKey": "worker"}).to_json() == {
        "status": "error",
        "error": "Session not found: worker (use the full sessionKey from sessions_list)",
    }


def test_a_page_without_seqs_pages_by_rows_read(env: Env) -> None:
    env.register(MAIN)
    env.transcripts.put(MAIN, [{"role": "user", "content": str(n)} for n in range(10)])
    page = env.tools().sessions_history(CTX, {"sessionKey": MAIN, "limit": 4, "offset": 2}).to_json()
    assert [m["content"] for m in page["messages"]] == ["4", "5", "6", "7"]
    assert {k: page[k] for k in ("offset", "nextOffset", "hasMore", "totalMessages")} == {
        "offset": 2,
        "nextOffset": 6,
        "hasMore": True,
        "totalMessages": 10,
    }


def test_image_data_is_omitted_with_its_size(env: Env) -> None:
    env.register(MAIN)
    env.transcripts.put(
        MAIN, [{"role": "user", "content": [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}]}]
    )
    result = env.tools().sessions_history(CTX, {"sessionKey": MAIN}).to_json()
    assert result["messages"] == [
        {"role": "user", "content": [{"type": "image", "mimeType": "image/png", "omitted": True, "bytes": 5}]}
    ]
    assert result["contentTruncated"] is True


def test_configured_redaction_patterns_apply_first(env: Env) -> None:
    env.register(MAIN)
    env.transcripts.put(MAIN, [{"role": "user", "content": "project ZEBRA-4471 is secret"}])
    result = env.tools(redact_patterns=(r"ZEBRA-\d+",)).sessions_history(CTX, {"sessionKey": MAIN}).to_json()
    assert result["messages"] == [{"role": "user", "content": "project *** is secret"}]


# ------------------------------------------------------------------------------ session_status


def test_status_reference_errors(env: Env) -> None:
    tools = env.tools()
    with pytest.raises(UnknownSession) as unknown_id:
        tools.session_status(CTX, {"sessionKey": "a1b2c3"})
    assert str(unknown_id.value) == "Unknown sessionId: a1b2c3"
    with pytest.raises(UnknownSession) as unknown_current:
        tools.session_status(CTX)
    assert str(unknown_current.value) == "Unknown sessionKey: agent:main:main"
    env.register("agent:ops:main")
    with pytest.raises(ToolForbidden) as refused:
        tools.session_status(CTX, {"sessionKey": "agent:ops:main"})
    assert str(refused.value) == (
        "Session status visibility is restricted. "
        "Set tools.sessions.visibility=all to allow cross-agent access."
    )
    with pytest.raises(InvalidToolInput, match=r"^changesSince must be a non-negative integer$"):
        tools.session_status(CTX, {"changesSince": -1})


def test_a_bare_key_takes_the_given_agent(env: Env) -> None:
    env.register("global", agent_id="ops")
    tools = env.tools(visibility="all", a2a_enabled=True, session_scope="global")
    status = tools.session_status(CTX, {"sessionKey": "global", "agentId": "ops"})
    assert (status.session_key, status.agent_id, status.kind) == ("main", "ops", "main")


def test_model_changes(env: Env) -> None:
    env.register(MAIN)
    tools = env.tools()
    with pytest.raises(InvalidToolInput, match=r'^Unrecognized model "gpt-9"\.$'):
        tools.session_status(CTX, {"model": "gpt-9"})
    env.models.allowed = frozenset({"openai/gpt"})
    with pytest.raises(InvalidToolInput, match=r'^Model "anthropic/claude-opus" is not allowed\.$'):
        tools.session_status(CTX, {"model": "opus"})
    env.models.allowed = frozenset({"openai/gpt", "anthropic/claude-opus"})
    opus = tools.session_status(CTX, {"model": "opus"})
    assert (opus.changed_model, opus.to_json()["model"]) == (
        True,
        {"active": "anthropic/claude-opus", "default": "openai/gpt", "override": "anthropic/claude-opus"},
    )
    assert tools.session_status(CTX, {"model": "anthropic/claude-opus"}).changed_model is False
    to_default = tools.session_status(CTX, {"model": "openai/gpt"})
    assert (to_default.changed_model, to_default.model.override) == (True, None)
    assert tools.session_status(CTX, {"model": "  "}).changed_model is False


def test_usage_is_backfilled_from_the_transcript(env: Env) -> None:
    env.register(MAIN, total_tokens=900, input_tokens=100)
    env.transcripts.usage[(MAIN, "main")] = Usage(
        input_tokens=1, output_tokens=50, total_tokens=2, cache_read=7
    )
    assert env.tools().session_status(CTX).to_json()["usage"] == {
        "inputTokens": 100,
        "outputTokens": 50,
        "totalTokens": 900,
        "cacheRead": 7,
    }


def test_the_full_status_card(env: Env) -> None:
    key = "agent:main:discord:channel:9"
    env.register(
        key,
        session_id="s-9",
        model="openai/gpt",
        thinking_level="high",
        input_tokens=1,
        output_tokens=2,
        total_tokens=3,
        context_tokens=4,
        cache_read=5,
        cache_write=6,
        created_at=1_796_036_400_000,
        updated_at=1_796_040_000_000,
        delivery_context=Route(channel="discord", to="channel:9"),
        sandboxed=True,
    )
    env.register("agent:main:subagent:k", spawned_by=key)
    env.watch.run_started(key, "run-a")
    env.watch.run_started("agent:main:subagent:k", "run-k", requester_key=key, label="kid")
    active = Route(channel="discord", to="channel:9", thread_id="5")
    ctx = ToolContext(session_key=key, active_route=active)
    status = env.tools().session_status(ctx, {"changesSince": 0}).to_json()
    now = now_ms(env)
    text = status.pop("statusText")
    assert status == {
        "ok": True,
        "sessionKey": key,
        "agentId": "main",
        "sessionId": "s-9",
        "kind": "group",
        "changedModel": False,
        "model": {"active": "openai/gpt", "default": "openai/gpt"},
        "thinkingLevel": "high",
        "usage": {
            "inputTokens": 1,
            "outputTokens": 2,
            "totalTokens": 3,
            "contextTokens": 4,
            "cacheRead": 5,
            "cacheWrite": 6,
        },
        "time": {"now": now, "createdAt": 1_796_036_400_000, "updatedAt": 1_796_040_000_000},
        "runtime": {"state": "running", "activeRunIds": ["run-a"], "sandboxed": True},
        "tasks": [
            {
                "runId": "run-k",
                "sessionKey": "agent:main:subagent:k",
                "label": "kid",
                "status": "running",
                "startedAt": now,
            }
        ],
        "route": {
            "origin": {"provider": "discord"},
            "active": {"channel": "discord", "to": "channel:9", "threadId": "5"},
            "deliveryContext": {"channel": "discord", "to": "channel:9"},
        },
        "stateVersion": 0,
        "stateChanges": {
            "events": [],
            "truncated": False,
            "earliestAvailableSequence": 0,
            "historyGap": False,
        },
    }
    assert env.transcripts.usage_calls == []
    assert text == (
        "Session: agent:main:discord:channel:9\n"
        "Agent: main\n"
        "Session ID: s-9\n"
        "Kind: group\n"
        "Model: openai/gpt\n"
        "Default model: openai/gpt\n"
        "Thinking: high\n"
        "Input tokens: 1\n"
        "Output tokens: 2\n"
        "Total tokens: 3\n"
        "Context tokens: 4\n"
        "Cache read: 5\n"
        "Cache write: 6\n"
        "Now: 2026-11-30T12:00:00Z\n"
        "Created: 2026-11-30T11:00:00Z\n"
        "Updated: 2026-11-30T12:00:00Z\n"
        "Runtime: running\n"
        "Active runs: run-a\n"
        "Sandboxed: yes\n"
        "Tasks: 1\n"
        "State version: 0\n"
        "State changes: 0 events\n"
        "Route context\n"
        "```json\n"
        "{\n"
        '  "origin": {\n'
        '    "provider": "discord"\n'
        "  },\n"
        '  "active": {\n'
        '    "channel": "discord",\n'
        '    "to": "channel:9",\n'
        '    "threadId": "5"\n'
        "  },\n"
        '  "deliveryContext": {\n'
        '    "channel": "discord",\n'
        '    "to": "channel:9"\n'
        "  }\n"
        "}\n"
        "```"
    )


def test_the_active_route_is_shown_only_on_the_callers_own_session(env: Env) -> None:
    env.register(MAIN, origin=Route(channel="telegram", to="chat:1"))
    env.register("agent:main:worker")
    ctx = ToolContext(session_key=MAIN, active_route=Route(channel="telegram", to="chat:1"))
    tools = env.tools()
    assert tools.session_status(ctx).to_json()["route"] == {
        "origin": {"channel": "telegram", "to": "chat:1"},
        "active": {"channel": "telegram", "to": "chat:1"},
    }
    assert "route" not in tools.session_status(ctx, {"sessionKey": "agent:main:worker"}).to_json()
