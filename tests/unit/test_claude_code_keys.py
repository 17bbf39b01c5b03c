"""The Claude Code key scheme, store choice, link rules (across `/clear`), notice budget: pure functions."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessionwatch.domain.keys import is_agent_qualified, is_subagent_key, key_problem, resolve_identity
from sessionwatch.domain.signals import notice_text
from sessionwatch.integrations.claude_code import (
    CONTEXT_LIMIT,
    HookInputError,
    notice_context,
    project_agent_id,
    server_session_key,
    session_key,
    store_url,
    within_limit,
)
from sessionwatch.integrations.claude_code_follow import (
    CLEARING,
    FOLLOWING,
    awaits_continuation,
    follows,
    reads_from_start,
)
from sessionwatch.integrations.claude_code_install import is_our_handler
from sessionwatch.projections.models import Notice, UpstreamLink

SESSION = "5d3c0f6e-2a41-4b8e-9f0d-7c6b5a4e3d21"


def test_a_key_is_the_project_agent_then_claude_code_then_the_session_id() -> None:
    key = session_key("/home/dev/payments-api", SESSION)
    assert key == f"agent:{project_agent_id('/home/dev/payments-api')}:claude-code:{SESSION}"
    assert key_problem(key) is None
    assert is_agent_qualified(key)
    assert not is_subagent_key(key)
    assert resolve_identity(key).agent_id == project_agent_id("/home/dev/payments-api")


def test_the_agent_id_is_the_folder_name_and_a_hash_of_the_whole_path() -> None:
    assert (
        project_agent_id("/home/dev/payments-api")
        == "payments-api-" + project_agent_id("/home/dev/payments-api")[-8:]
    )
    assert project_agent_id("/home/dev/app") != project_agent_id("/srv/checkouts/app")
    assert project_agent_id("/home/dev/app").startswith("app-")
    assert project_agent_id("/home/dev/My Project (old)").startswith("my-project-old-")
    assert project_agent_id("/").startswith("project-")
    assert project_agent_id("/home/dev/" + "x" * 90).startswith("x" * 40 + "-")
    assert project_agent_id("/home/dev/日本").startswith("project-")
    assert project_agent_id(Path("/home/dev/app")) == project_agent_id("/home/dev/app")


@pytest.mark.parametrize("session_id", ["", "  ", "a b", "a\tb", "x\x00", 42, None, "x" * 201])
def test_a_session_id_that_cannot_be_a_key_part_is_refused_naming_it(session_id: object) -> None:
    with pytest.raises(HookInputError, match=r"^session_id: "):
        session_key("/srv/app", session_id)


def test_the_store_is_the_flag_then_the_environment_then_the_project_file() -> None:
    assert store_url("memory://", {"SESSIONWATCH_URL": "x.db", "CLAUDE_PROJECT_DIR": "/p"}) == "memory://"
    assert store_url(None, {"SESSIONWATCH_URL": "x.db", "CLAUDE_PROJECT_DIR": "/p"}) == "x.db"
    assert store_url(None, {"CLAUDE_PROJECT_DIR": "/srv/app"}) == "/srv/app/sessionwatch.db"
    assert store_url(None, {}) is None


def test_the_server_key_comes_from_the_variables_claude_code_sets() -> None:
    environ = {"CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_PROJECT_DIR": "/srv/app"}
    assert server_session_key(environ) == (session_key("/srv/app", SESSION), SESSION)
    with pytest.raises(HookInputError, match=r"^\$CLAUDE_CODE_SESSION_ID: is not set"):
        server_session_key({"CLAUDE_PROJECT_DIR": "/srv/app"})
    with pytest.raises(HookInputError, match=r"^\$CLAUDE_CODE_SESSION_ID: must not contain"):
        server_session_key({"CLAUDE_CODE_SESSION_ID": "a b"})


def _link(
    kind: str, thread: str, *, agent: str = "app-1234abcd", catalog: str = "claude-code"
) -> UpstreamLink:
    at = datetime(2026, 12, 4, tzinfo=UTC)
    return UpstreamLink(
        session_key=f"agent:{agent}:claude-code:{SESSION}",
        agent_id=agent,
        catalog_id=catalog,
        host_id="laptop",
        thread_id=thread,
        upstream_kind=kind,
        upstream_ref=f"/home/dev/.claude/projects/-srv-app/{thread}.jsonl",
        marker={"offset": 0},
        link_version=1,
        last_scanned_at=None,
        created_at=at,
        updated_at=at,
    )


def test_a_link_follows_one_claude_code_session_of_one_project() -> None:
    link = _link(FOLLOWING, SESSION)
    assert follows(link, "app-1234abcd", SESSION)
    assert not follows(link, "app-1234abcd", "another-session")
    assert not follows(link, "other-99999999", SESSION)  # the same id in another project
    assert not follows(_link(FOLLOWING, SESSION, agent="other-99999999"), "app-1234abcd", SESSION)
    assert not follows(_link(FOLLOWING, SESSION, catalog="codex"), "app-1234abcd", SESSION)
    assert not follows(_link(CLEARING, SESSION), "app-1234abcd", SESSION)


def test_a_cleared_link_waits_for_the_session_started_by_the_same_prompt() -> None:
    parked = _link(CLEARING, "prompt-7")
    assert awaits_continuation(parked, "app-1234abcd", "prompt-7")
    assert not awaits_continuation(parked, "app-1234abcd", "prompt-8")
    assert not awaits_continuation(parked, "other-99999999", "prompt-7")
    assert not awaits_continuation(_link(FOLLOWING, "prompt-7"), "app-1234abcd", "prompt-7")


@pytest.mark.parametrize(
    ("source", "from_start"),
    [("startup", True), ("clear", True), ("resume", False), ("compact", False), (None, False), (7, False)],
)
def test_only_a_new_transcript_is_read_from_its_first_byte(source: object, from_start: bool) -> None:
    assert reads_from_start(source) is from_start


def _notice(target: str) -> Notice:
    return Notice(
        watcher="agent:w:main", target=target, target_agent_id="w", last_seen=3, text=notice_text(target, 3)
    )


def test_notices_beyond_the_context_budget_wait_for_the_next_prompt() -> None:
    notices = [_notice(f"agent:w:claude-code:{'s' * 100}{i}") for i in range(200)]
    shown = within_limit(notices)
    assert 0 < len(shown) < len(notices)
    assert shown == notices[: len(shown)]
    assert len(notice_context(shown)) <= CONTEXT_LIMIT
    assert len(notice_context(notices[: len(shown) + 1])) > CONTEXT_LIMIT
    assert within_limit([]) == []
    huge = _notice("agent:w:" + "k" * 500)
    assert within_limit([huge]) == [huge]


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("sessionwatch claude-code hook", True),
        ("sessionwatch claude-code hook --db /srv/s.db", True),
        ("'/opt/my tools/bin/sessionwatch' claude-code hook", True),
        ("C:/tools/sessionwatch.exe claude-code hook", True),
        ("sessionwatch claude-code install", False),
        ("echo sessionwatch claude-code hook", False),
        ("$CLAUDE_PROJECT_DIR/.claude/hooks/check.sh", False),
        ("unbalanced 'quote", False),
    ],
)
def test_a_handler_is_sessionwatchs_when_it_runs_the_hook(command: str, ours: bool) -> None:
    assert is_our_handler({"type": "command", "command": command}) is ours
    assert not is_our_handler({"type": "command"})
    assert not is_our_handler("sessionwatch claude-code hook")
