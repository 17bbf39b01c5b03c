"""`sessions_spawn`, child-run completion and `subagents` (SPEC-tools §T8, §T9, core §4, §5.1).

Runtime and context validity and defaults, depth and children limits, agent and sandbox rules,
attachments, the child's first message and registry entry, `child_spawned` with the cursor it
seeds, and where a completion is announced.
"""

from __future__ import annotations

import base64
import hashlib

import pytest
from tools.fakes import CTX, MAIN, Env, Ids

from sessionwatch import InvalidToolInput, SessionsSpawnResult, ToolContext
from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.config import AttachmentSettings

SPAWN_NOTE_RUN = (
    "auto-announces on completion, do not poll/sleep. The response will be sent back as an user message."
)
SPAWN_NOTE_SESSION = "thread-bound session stays active after this task; continue in-thread for follow-ups."
FORK_NEEDS_TRANSCRIPT = 'context="fork" requires requester session metadata with an existing transcript file.'


@pytest.fixture
def parent(env: Env) -> Env:
    env.register(MAIN, session_id="s-main")
    return env


def spawn(
    env: Env, params: dict[str, object], ctx: ToolContext = CTX, **config: object
) -> SessionsSpawnResult:
    return env.tools(**config).sessions_spawn(ctx, params)


# ------------------------------------------------------------------------- runtime and context


@pytest.mark.parametrize(
    ("given", "runtime"), [(None, "subagent"), ("acp", "acp"), (" ACP ", "acp"), ("x", "subagent")]
)
def test_the_runtime_is_acp_or_else_subagent(parent: Env, given: object, runtime: str) -> None:
    params: dict[str, object] = {"task": "t"} if given is None else {"task": "t", "runtime": given}
    assert spawn(parent, params).status == "accepted"
    assert parent.runtime.child_runs[-1].runtime == runtime


@pytest.mark.parametrize(
    ("params", "context"),
    [
        ({}, "isolated"),
        ({"context": "fork"}, "fork"),
        ({"context": "FORK"}, "fork"),
        ({"context": "isolated", "thread": True}, "isolated"),
        ({"context": "sideways"}, "isolated"),
        ({"thread": True}, "fork"),
        ({"thread": True, "runtime": "acp"}, "isolated"),
    ],
)
def test_the_context_is_given_else_the_thread_default_else_isolated(
    parent: Env, params: dict[str, object], context: str
) -> None:
    assert spawn(parent, {"task": "t", **params}).status == "accepted"
    assert parent.runtime.child_runs[-1].context == context


def test_the_configured_thread_default_applies_to_native_thread_spawns(parent: Env) -> None:
    spawn(parent, {"task": "t", "thread": True}, default_spawn_context="isolated")
    assert parent.runtime.child_runs[-1].context == "isolated"


def test_fork_needs_the_requesters_session_id(env: Env) -> None:
    env.register(MAIN)
    assert spawn(env, {"task": "t", "context": "fork"}).to_json() == {
        "status": "error",
        "error": FORK_NEEDS_TRANSCRIPT,
    }
    assert spawn(env, {"task": "t", "thread": True}).to_json() == {
        "status": "error",
        "error": FORK_NEEDS_TRANSCRIPT,
    }
    assert env.runtime.child_runs == []


def test_fork_with_acp_raises(parent: Env) -> None:
    with pytest.raises(
        InvalidToolInput, match=r'^context="fork" is only supported for runtime="subagent"\.$'
    ):
        spawn(parent, {"task": "t", "runtime": "acp", "context": "fork"})


@pytest.mark.parametrize(
    "key", ["target", "transport", "channel", "to", "threadId", "thread_id", "replyTo", "reply_to"]
)
def test_channel_delivery_parameters_raise_naming_the_key(parent: Env, key: str) -> None:
    with pytest.raises(InvalidToolInput) as raised:
        spawn(parent, {"task": "t", key: "x"})
    assert str(raised.value) == (
        f'sessions_spawn does not support "{key}". Use "message" or "sessions_send" for channel delivery.'
    )
    assert raised.value.field == key
    assert parent.runtime.child_runs == []


def test_a_label_the_registry_cannot_hold_is_invalid_input(parent: Env) -> None:
    parent.ids = Ids("u1")
    with pytest.raises(InvalidToolInput) as raised:
        spawn(parent, {"task": "t", "label": "x" * 600})
    assert (raised.value.field, str(raised.value).startswith("label: ")) == ("label", True)
    assert parent.watch.registry_entry("agent:main:subagent:u1") is None
    assert parent.runtime.child_runs == []


def test_a_task_is_required(parent: Env) -> None:
    with pytest.raises(InvalidToolInput, match=r"^task is required$"):
        spawn(parent, {"task": "  "})


def test_session_mode_needs_a_thread_and_keeps_the_child(parent: Env) -> None:
    refused = spawn(parent, {"task": "t", "mode": "session"}).to_json()
    assert refused == {
        "status": "error",
        "error": 'mode="session" requires thread=true so the subagent can stay bound to a thread.',
    }
    bound = spawn(parent, {"task": "t", "mode": "session", "thread": True, "cleanup": "delete"})
    assert (bound.mode, bound.note) == ("session", SPAWN_NOTE_SESSION)
    assert parent.runtime.child_runs[-1].cleanup == "keep"
    ran = spawn(parent, {"task": "t", "cleanup": "delete"})
    assert (ran.mode, ran.note, parent.runtime.child_runs[-1].cleanup) == ("run", SPAWN_NOTE_RUN, "delete")


@pytest.mark.parametrize(
    ("params", "seconds"),
    [
        ({}, 0),
        ({"runTimeoutSeconds": 12.7}, 12),
        ({"timeoutSeconds": 40}, 40),
        ({"runTimeoutSeconds": -5}, 0),
    ],
)
def test_the_run_timeout_is_floored_with_an_alias_and_a_default(
    parent: Env, params: dict[str, object], seconds: int
) -> None:
    spawn(parent, {"task": "t", **params})
    assert parent.runtime.child_runs[-1].run_timeout_seconds == seconds


def test_the_configured_run_timeout_is_the_default(parent: Env) -> None:
    spawn(parent, {"task": "t"}, default_run_timeout_seconds=600)
    assert parent.runtime.child_runs[-1].run_timeout_seconds == 600


# --------------------------------------------------------------------------------------- depth


def test_a_top_level_session_spawns_a_leaf_at_depth_one(parent: Env) -> None:
    parent.ids = Ids("u1")
    spawn(parent, {"task": "t", "label": "worker", "thinking": "high"})
    entry = parent.watch.registry_entry("agent:main:subagent:u1")
    assert entry is not None
    assert (entry.spawned_by, entry.parent_session_key, entry.spawn_depth, entry.subagent_role) == (
        MAIN,
        MAIN,
        1,
        "leaf",
    )
    assert (entry.label, entry.thinking_level, entry.sandboxed) == ("worker", "high", False)


def test_an_orchestrator_spawns_below_the_maximum(parent: Env) -> None:
    parent.ids = Ids("u1", "u2")
    spawn(parent, {"task": "t"}, max_spawn_depth=3)
    child = ToolContext(session_key="agent:main:subagent:u1")
    assert spawn(parent, {"task": "t"}, child, max_spawn_depth=3).status == "accepted"
    grandchild = parent.watch.registry_entry("agent:main:subagent:u2")
    assert grandchild is not None
    assert (grandchild.spawn_depth, grandchild.subagent_role, grandchild.spawned_by) == (
        2,
        "orchestrator",
        "agent:main:subagent:u1",
    )
    assert parent.runtime.child_runs[-1].message.startswith(
        "[Subagent Context] You are running as a subagent (depth 2/3)."
    )


@pytest.mark.parametrize(("depth", "maximum"), [(1, 1), (2, 2), (5, 5), (3, 2)])
def test_no_spawn_at_or_past_the_maximum_depth(env: Env, depth: int, maximum: int) -> None:
    env.register("agent:main:subagent:deep", spawn_depth=depth)
    result = spawn(
        env, {"task": "t"}, ToolContext(session_key="agent:main:subagent:deep"), max_spawn_depth=maximum
    )
    assert result.to_json() == {
        "status": "forbidden",
        "error": f"sessions_spawn is not allowed at this depth (current depth: {depth}, max: {maximum})",
    }


def test_the_maximum_depth_is_clamped_to_five(env: Env) -> None:
    env.register("agent:main:subagent:deep", spawn_depth=5)
    result = spawn(env, {"task": "t"}, ToolContext(session_key="agent:main:subagent:deep"), max_spawn_depth=9)
    assert result.error == "sessions_spawn is not allowed at this depth (current depth: 5, max: 5)"


def test_active_children_are_limited(parent: Env) -> None:
    for _ in range(2):
        assert spawn(parent, {"task": "t"}, max_children_per_agent=2).status == "accepted"
    assert spawn(parent, {"task": "t"}, max_children_per_agent=2).to_json() == {
        "status": "forbidden",
        "error": "sessions_spawn has reached max active children for this session (2/2)",
    }
    parent.tools().complete_child_run("child-run-1", "ok")
    assert spawn(parent, {"task": "t"}, max_children_per_agent=2).status == "accepted"


# ------------------------------------------------------------------------------ agents, sandbox


@pytest.mark.parametrize("agent", ["Bad Agent", "-lead", "a" * 65, "x:y"])
def test_an_agent_id_must_be_well_formed(parent: Env, agent: str) -> None:
    assert spawn(parent, {"task": "t", "agentId": agent}).to_json() == {
        "status": "error",
        "error": f'Invalid agentId "{agent}". Agent IDs must match [a-z0-9][a-z0-9_-]{{0,63}}.',
    }


def test_another_agent_must_be_allowed(parent: Env) -> None:
    assert spawn(parent, {"task": "t", "agentId": "ops"}).to_json() == {
        "status": "forbidden",
        "error": "agentId is not allowed for sessions_spawn (allowed: none)",
    }
    assert spawn(parent, {"task": "t", "agentId": "ops"}, allow_agents=("research", "qa")).error == (
        "agentId is not allowed for sessions_spawn (allowed: research, qa)"
    )
    parent.ids = Ids("u1", "u2")
    allowed = spawn(parent, {"task": "t", "agentId": "ops"}, agent_allow_agents={"main": ("ops",)})
    assert allowed.child_session_key == "agent:ops:subagent:u1"
    assert spawn(parent, {"task": "t", "agentId": "OPS"}, allow_agents=("*",)).child_session_key == (
        "agent:ops:subagent:u2"
    )
    assert parent.runtime.child_runs[-1].agent_id == "ops"


def test_the_own_agent_is_always_allowed(parent: Env) -> None:
    assert spawn(parent, {"task": "t", "agentId": "main"}).status == "accepted"


def test_require_agent_id(parent: Env) -> None:
    assert spawn(parent, {"task": "t"}, require_agent_id=True).to_json() == {
        "status": "error",
        "error": "sessions_spawn requires agentId",
    }
    assert spawn(parent, {"task": "t", "agentId": "main"}, require_agent_id=True).status == "accepted"


def test_a_sandboxed_requester_cannot_spawn_unsandboxed(parent: Env) -> None:
    sandboxed = ToolContext(session_key=MAIN, sandboxed=True)
    refused = spawn(parent, {"task": "t", "agentId": "ops"}, sandboxed, allow_agents=("ops",))
    assert refused.to_json() == {
        "status": "forbidden",
        "error": "Sandboxed sessions cannot spawn unsandboxed subagents. "
        "Set a sandboxed target agent or use the same agent runtime.",
    }
    parent.ids = Ids("u1")
    same = spawn(parent, {"task": "t"}, sandboxed)
    assert same.status == "accepted"
    entry = parent.watch.registry_entry("agent:main:subagent:u1")
    assert entry is not None
    assert entry.sandboxed is True
    assert parent.runtime.child_runs[-1].sandboxed is True
    other = spawn(
        parent, {"task": "t", "agentId": "ops"}, sandboxed, allow_agents=("ops",), sandboxed_agents=("ops",)
    )
    assert other.status == "accepted"


def test_sandbox_require_needs_a_sandboxed_target(parent: Env) -> None:
    assert spawn(parent, {"task": "t", "sandbox": "require"}).to_json() == {
        "status": "forbidden",
        "error": 'sessions_spawn sandbox="require" needs a sandboxed target runtime. '
        'Pick a sandboxed agentId or use sandbox="inherit".',
    }
    assert spawn(parent, {"task": "t", "sandbox": "require"}, sandboxed_agents=("main",)).status == "accepted"


# -------------------------------------------------------------------------------- attachments


def test_attachments_are_off_by_default_and_refused_for_acp(parent: Env) -> None:
    files = [{"name": "a.txt", "content": "hi"}]
    assert spawn(parent, {"task": "t", "attachments": files}).to_json() == {
        "status": "error",
        "error": "attachments are disabled",
    }
    assert spawn(parent, {"task": "t", "runtime": "acp", "attachments": files}).to_json() == {
        "status": "error",
        "error": "attachments are currently unsupported for runtime=acp; "
        "use runtime=subagent or remove attachments",
    }


def test_attachments_are_decoded_measured_and_handed_to_the_runtime(parent: Env) -> None:
    parent.ids = Ids("u1", "dir1")
    binary = bytes(range(10))
    result = spawn(
        parent,
        {
            "task": "t",
            "attachments": [
                {"name": "notes.md", "content": "héllo"},
                {"name": "blob.bin", "content": base64.b64encode(binary).decode(), "encoding": "base64"},
            ],
            "attachAs": {"mountPath": "/mnt/in"},
        },
        attachments=AttachmentSettings(enabled=True),
    )
    assert result.to_json()["attachments"] == {
        "count": 2,
        "totalBytes": 16,
        "files": [
            {"name": "notes.md", "bytes": 6, "sha256": hashlib.sha256("héllo".encode()).hexdigest()},
            {"name": "blob.bin", "bytes": 10, "sha256": hashlib.sha256(binary).hexdigest()},
        ],
        "relDir": ".openclaw/attachments/dir1",
    }
    request = parent.runtime.child_runs[-1]
    assert [(f.name, f.content) for f in request.attachments] == [
        ("notes.md", "héllo".encode()),
        ("blob.bin", binary),
    ]
    assert (request.attachments_dir, request.mount_path) == (".openclaw/attachments/dir1", "/mnt/in")


@pytest.mark.parametrize(
    ("files", "settings", "error"),
    [
        ([{"name": "a", "content": "x"}] * 3, {"max_files": 2}, "attachments exceed maxFiles (3 > 2)"),
        (
            [{"name": "big", "content": "x" * 11}],
            {"max_file_bytes": 10},
            'attachment "big" exceeds maxFileBytes (11 > 10)',
        ),
        (
            [{"name": "a", "content": "x" * 6}, {"name": "b", "content": "x" * 6}],
            {"max_total_bytes": 10},
            "attachments exceed maxTotalBytes (12 > 10)",
        ),
        (
            [{"name": "../etc/passwd", "content": "x"}],
            {},
            'attachment name "../etc/passwd" is invalid: use a plain file name',
        ),
        (
            [{"name": "b64", "content": "abc", "encoding": "base64"}],
            {},
            'attachment "b64" is not valid base64',
        ),
        (
            [{"name": "b64", "content": "ab!=", "encoding": "base64"}],
            {},
            'attachment "b64" is not valid base64',
        ),
        (
            [{"name": "huge", "content": "A" * 40, "encoding": "base64"}],
            {"max_file_bytes": 20},
            'attachment "huge" exceeds maxFileBytes (30 > 20)',
        ),
        (
            [{"name": "a", "content": "x", "encoding": "hex"}],
            {},
            'attachment "a" has an unsupported encoding (use utf8 or base64)',
        ),
        (
            [{"name": "a", "content": "x"}, {"name": "a", "content": "y"}],
            {},
            'attachment name "a" is used twice',
        ),
    ],
)
def test_attachment_limits_are_named(
    parent: Env, files: list[dict[str, object]], settings: dict[str, int], error: str
) -> None:
    result = spawn(
        parent, {"task": "t", "attachments": files}, attachments=AttachmentSettings(enabled=True, **settings)
    )
    assert result.to_json() == {"status": "error", "error": error}
    assert parent.runtime.child_runs == []


# ----------------------------------------------------------------------- model and first message


def test_a_resolved_model_is_the_childs_override(parent: Env) -> None:
    parent.ids = Ids("u1")
    result = spawn(parent, {"task": "t", "model": "opus"})
    assert (result.model_applied, result.warning) == (True, None)
    entry = parent.watch.registry_entry("agent:main:subagent:u1")
    assert entry is not None
    assert entry.model_override == "anthropic/claude-opus"
    assert parent.runtime.child_runs[-1].model == "anthropic/claude-opus"


@pytest.mark.parametrize(
    ("model", "warning"),
    [
        ("mystery", 'Unrecognized model "mystery"; the subagent uses its default model.'),
        ("anthropic/x", 'Model "anthropic/x" is not allowed; the subagent uses its default model.'),
    ],
)
def test_an_unusable_model_is_skipped_with_a_warning(parent: Env, model: str, warning: str) -> None:
    parent.models.allowed = frozenset({"openai/gpt"})
    result = spawn(parent, {"task": "t", "model": model})
    assert (result.status, result.to_json()["modelApplied"], result.warning) == ("accepted", False, warning)
    assert parent.runtime.child_runs[-1].model is None


def test_the_first_message_of_a_session_mode_child(parent: Env) -> None:
    spawn(parent, {"task": "watch the build", "thread": True}, max_spawn_depth=2)
    assert parent.runtime.child_runs[-1].message == (
        "[Subagent Context] You are running as a subagent (depth 1/2). Results auto-announce to your "
        "requester; do not busy-poll for status.\n\n[Subagent Context] This subagent session is persistent "
        "and remains available for thread follow-up messages.\n\n[Subagent Task]: watch the build"
    )


# ---------------------------------------------------------------- recording: signal, cursor, run


def test_the_spawn_records_child_spawned_seeds_the_cursor_and_starts_the_run(parent: Env) -> None:
    parent.ids = Ids("u1")
    parent.runtime.child_run_ids.append("r9")
    parent.watch.record_human_message(MAIN, channel="telegram")
    spawn(parent, {"task": "t", "label": "scout"})
    child = "agent:main:subagent:u1"
    changes = parent.watch.session_status(child, changes_since=0).state_changes
    assert changes is not None
    (signal,) = changes.events
    assert (signal.kind, signal.actor_type, signal.actor_id, signal.run_id) == (
        "child_spawned",
        "agent",
        MAIN,
        "r9",
    )
    cursor = parent.watch.cursor(MAIN, child)
    assert cursor is not None
    assert (cursor.last_seen, cursor.notified, cursor.material) == (signal.sequence,) * 3
    (run,) = parent.watch.runs()
    assert (run.run_id, run.session_key, run.requester_key, run.label, run.mode, run.ended_at_ms) == (
        "r9",
        child,
        MAIN,
        "scout",
        "run",
        None,
    )


def test_a_failed_start_deletes_the_provisional_child(parent: Env) -> None:
    parent.ids = Ids("u1")
    parent.runtime.start_failure = "no capacity"
    assert spawn(parent, {"task": "t"}).to_json() == {
        "status": "error",
        "error": "no capacity",
        "childSessionKey": "agent:main:subagent:u1",
    }
    assert parent.watch.registry_entry("agent:main:subagent:u1") is None
    assert parent.watch.cursor(MAIN, "agent:main:subagent:u1") is None
    assert parent.watch.runs() == []


def test_no_spawn_without_a_session_context(parent: Env) -> None:
    assert spawn(parent, {"task": "t"}, ToolContext()).to_json() == {
        "status": "error",
        "error": "No session context",
    }


# ---------------------------------------------------------------------------------- completion


def test_a_completion_records_the_signal_ends_the_run_and_announces_to_the_origin(parent: Env) -> None:
    parent.ids = Ids("u1")
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools()
    origin = Route(channel="telegram", to="chat:1", account_id="bot")
    tools.sessions_spawn(ToolContext(session_key=MAIN, origin=origin), {"task": "t", "label": "scout"})
    parent.clock.advance(seconds=42)
    request = tools.complete_child_run("r9", "ok", reply="all done")
    assert request is not None
    assert parent.runtime.announce_requests == [request]
    assert (request.requester_key, request.child_session_key, request.label, request.reply) == (
        MAIN,
        "agent:main:subagent:u1",
        "scout",
        "all done",
    )
    assert (request.status_line, request.route, request.deliver) == ("completed successfully", origin, True)
    changes = parent.watch.session_status("agent:main:subagent:u1", changes_since=0).state_changes
    assert changes is not None
    assert [e.kind for e in changes.events] == ["child_spawned", "run_completed"]
    (run,) = parent.watch.runs()
    assert (run.outcome, run.ended_at_ms is not None) == ("ok", True)
    assert parent.watch.pending_notices(MAIN) == []


@pytest.mark.parametrize(
    ("outcome", "line"), [("error", "failed"), ("timeout", "timed out"), ("cancelled", "unknown")]
)
def test_failed_runs_are_announced_with_their_status_line(parent: Env, outcome: str, line: str) -> None:
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools()
    tools.sessions_spawn(CTX, {"task": "t"})
    request = tools.complete_child_run("r9", outcome)  # type: ignore[arg-type]
    assert request is not None
    assert request.status_line == line
    child = parent.runtime.child_runs[-1].child_session_key
    changes = parent.watch.session_status(child, changes_since=0).state_changes
    assert changes is not None
    assert changes.events[-1].payload == {"outcome": outcome}


@pytest.mark.parametrize("reply", ["ANNOUNCE_SKIP", " NO_REPLY "])
def test_a_silent_completion_is_not_announced(parent: Env, reply: str) -> None:
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools()
    tools.sessions_spawn(CTX, {"task": "t"})
    assert tools.complete_child_run("r9", "ok", reply=reply) is None
    assert parent.runtime.announce_requests == []
    assert parent.watch.runs()[0].outcome == "ok"


def test_a_bound_thread_is_announced_first(parent: Env) -> None:
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools()
    thread = Route(channel="discord", to="channel:9", thread_id="77")
    ctx = ToolContext(session_key=MAIN, active_route=thread, origin=Route(channel="telegram", to="chat:1"))
    tools.sessions_spawn(ctx, {"task": "t", "thread": True})
    request = tools.complete_child_run("r9", "ok")
    assert request is not None
    assert request.route == thread


def test_the_stored_origin_is_filled_from_the_last_route_on_the_same_channel(parent: Env) -> None:
    parent.register(
        MAIN,
        origin=Route(channel="telegram"),
        last_channel="telegram",
        last_to="chat:5",
        last_account_id="bot",
    )
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools()
    tools.sessions_spawn(CTX, {"task": "t"})
    request = tools.complete_child_run("r9", "ok")
    assert request is not None
    assert request.route == Route(channel="telegram", to="chat:5", account_id="bot")


def test_the_origin_is_not_filled_from_another_channel(parent: Env) -> None:
    parent.register(MAIN, origin=Route(channel="telegram"), last_channel="slack", last_to="C1")
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools()
    tools.sessions_spawn(CTX, {"task": "t"})
    request = tools.complete_child_run("r9", "ok")
    assert request is not None
    assert request.route == Route(channel="telegram")


def test_a_sub_agent_requester_gets_an_internal_injection(parent: Env) -> None:
    parent.register("agent:main:subagent:lead", spawned_by=MAIN, spawn_depth=1)
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools(max_spawn_depth=2)
    lead = ToolContext(session_key="agent:main:subagent:lead", origin=Route(channel="telegram", to="chat:1"))
    assert tools.sessions_spawn(lead, {"task": "t"}).status == "accepted"
    request = tools.complete_child_run("r9", "ok")
    assert request is not None
    assert (request.requester_key, request.route, request.deliver) == (
        "agent:main:subagent:lead",
        None,
        False,
    )


def test_a_completion_is_taken_once(parent: Env) -> None:
    parent.runtime.child_run_ids.append("r9")
    tools = parent.tools()
    tools.sessions_spawn(CTX, {"task": "t"})
    assert tools.complete_child_run("r9", "ok") is not None
    assert tools.complete_child_run("r9", "error") is None
    assert len(parent.runtime.announce_requests) == 1


def test_completion_errors(parent: Env) -> None:
    tools = parent.tools()
    with pytest.raises(InvalidToolInput, match=r"^Unknown runId: nope$"):
        tools.complete_child_run("nope", "ok")
    with pytest.raises(InvalidToolInput, match=r"^outcome must be ok, error, timeout or cancelled$"):
        tools.complete_child_run("nope", "fine")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------- subagents


def test_subagents_lists_runs_with_their_statuses(parent: Env) -> None:
    parent.runtime.child_run_ids.extend(["r1", "r2", "r3", "r4"])
    tools = parent.tools(max_children_per_agent=10)
    for label in ("one", "two", "three"):
        tools.sessions_spawn(CTX, {"task": "t", "label": label})
    tools.sessions_spawn(CTX, {"task": "t"})
    parent.clock.advance(seconds=3)
    tools.complete_child_run("r1", "error")
    tools.complete_child_run("r2", "cancelled")
    tools.complete_child_run("r3", "timeout")
    listed = tools.subagents(CTX, {"action": "list"}).to_json()
    unlabelled = parent.runtime.child_runs[3].child_session_key
    assert (listed["status"], listed["action"], listed["total"]) == ("ok", "list", 4)
    assert (listed["requesterSessionKey"], listed["callerSessionKey"], listed["callerIsSubagent"]) == (
        MAIN,
        MAIN,
        False,
    )
    assert [(r["runId"], r["status"]) for r in listed["active"]] == [("r4", "running")]
    assert "endedAt" not in listed["active"][0]
    assert [(r["runId"], r["status"], r["runtimeMs"]) for r in listed["recent"]] == [
        ("r3", "timeout", 3000),
        ("r2", "killed", 3000),
        ("r1", "failed", 3000),
    ]
    assert listed["text"] == f"{unlabelled}: running\nthree: timeout\ntwo: killed\none: failed"


def test_subagents_without_children_or_context(parent: Env) -> None:
    tools = parent.tools()
    assert tools.subagents(CTX).to_json()["text"] == "No active or recent subagents."
    assert tools.subagents(ToolContext()).to_json() == {"status": "error", "error": "No session context"}
    with pytest.raises(InvalidToolInput, match=r"^Unknown action: kill$"):
        tools.subagents(CTX, {"action": "kill"})


def test_recent_minutes_is_clamped_to_a_day(parent: Env) -> None:
    parent.runtime.child_run_ids.append("r1")
    tools = parent.tools()
    tools.sessions_spawn(CTX, {"task": "t"})
    tools.complete_child_run("r1", "ok")
    parent.clock.advance(hours=23)
    assert tools.subagents(CTX, {"recentMinutes": 5000}).to_json()["total"] == 1
    assert tools.subagents(CTX).to_json()["total"] == 0
