"""`sessionwatch claude-code hook` as Claude Code runs it: a process, a hook input on stdin, exit 0.

The inputs are shaped as Claude Code 2.1 sends them (the common fields with `transcript_path`, then
`source` for SessionStart, `prompt` / `prompt_id` for UserPromptSubmit, `reason` for SessionEnd),
and the transcripts they name are written here as Claude Code writes them, a line at a time, after
the prompt hook ran. The store is the default SQLite and, with a server, PostgreSQL. A second
Claude Code session watches the first: its next prompt carries the notice as `additionalContext`,
acknowledged, so the prompt after that carries nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import claude_transcripts as cc
import pytest
from stores import needs_postgres, postgres_url

import sessionwatch
from sessionwatch import notice_text
from sessionwatch.cli import cli, cli_claude_code
from sessionwatch.integrations.claude_code import session_key
from sessionwatch.integrations.claude_code_follow import CATALOG, FOLLOWING

SCRIPT = Path(sys.executable).parent / "sessionwatch"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "claude_code"
LEAD = "3f1e0c9a-8b7d-4e21-a6f5-0d9c8b7a6e51"
WORKER = "c2a4e6f8-1b3d-4f5a-9c7e-2d4f6a8b0c13"
LOG_PREFIX = "sessionwatch claude-code hook: "

FROM_ANOTHER_SESSION = (
    '<cross-session-message from="planner">The schema change is merged, go ahead.</cross-session-message>'
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'hooks.db'}"
        return
    with postgres_url("sw_claude") as url:
        yield url


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "payments-api"
    folder.mkdir()
    return folder


def transcript_of(project: Path, session_id: str) -> Path:
    """Where Claude Code writes the session's transcript (a folder of its own, beside the project)."""
    return project.parent / "claude-projects" / f"{session_id}.jsonl"


def hook_input(project: Path, session_id: str, event: str, **fields: object) -> dict[str, object]:
    return {
        "session_id": session_id,
        "transcript_path": str(transcript_of(project, session_id)),
        "cwd": str(project / "src"),
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


def started(project: Path, session_id: str, source: str = "startup", **fields: object) -> dict[str, object]:
    return hook_input(project, session_id, "SessionStart", source=source, model="claude-sonnet-4-5", **fields)


def prompted(project: Path, session_id: str, prompt: str, prompt_id: str | None = None) -> dict[str, object]:
    return hook_input(
        project, session_id, "UserPromptSubmit", prompt=prompt, prompt_id=prompt_id or str(uuid.uuid4())
    )


def stopped(project: Path, session_id: str) -> dict[str, object]:
    return hook_input(project, session_id, "Stop", stop_hook_active=False, background_tasks=[])


def ended(
    project: Path, session_id: str, reason: str = "prompt_input_exit", **fields: object
) -> dict[str, object]:
    return hook_input(project, session_id, "SessionEnd", reason=reason, **fields)


def written(project: Path, session_id: str, *records: dict[str, object]) -> None:
    """Claude Code writes these records to the session's transcript."""
    path = transcript_of(project, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    cc.append(path, *records)


def typed(text: str) -> dict[str, object]:
    """A prompt typed into the TUI, as 2.1.197 writes it."""
    return cc.prompt(text, promptSource="typed", origin={"kind": "human"}, promptId=str(uuid.uuid4()))


def human_turns(store: str, key: str) -> int:
    """The human turns recorded for the session (a burst is one signal with its count)."""
    with sessionwatch.open(store) as watch:
        delta = watch.session_status(key, changes_since=0).state_changes
    assert delta is not None
    return sum(
        int((e.payload or {}).get("turns", 1)) for e in delta.events if e.kind.value == "human_direct_message"
    )


def run_hook(
    stdin: dict[str, object] | str, *, db: str | None, project: Path | None, session_id: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"SESSIONWATCH_URL", "CLAUDE_PROJECT_DIR"}}
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    if session_id is not None:
        env["CLAUDE_CODE_SESSION_ID"] = session_id
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    argv = [str(SCRIPT), "claude-code", "hook", *(["--db", db] if db else [])]
    return subprocess.run(
        argv, input=text, capture_output=True, text=True, env=env, check=False, timeout=120, cwd=project
    )


def context_of(done: subprocess.CompletedProcess[str], event: str) -> str:
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    output = json.loads(done.stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert output["hookSpecificOutput"]["hookEventName"] == event
    context = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def assert_silent(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr == ""


def assert_failed_quietly(done: subprocess.CompletedProcess[str], *words: str) -> str:
    assert done.returncode == 0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(LOG_PREFIX)
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0]
    return lines[0]


def test_a_watching_session_learns_at_its_next_prompt_that_the_worker_got_a_typed_prompt(
    store: str, project: Path
) -> None:
    lead, worker = session_key(project, LEAD), session_key(project, WORKER)
    assert lead != worker
    assert lead.startswith("agent:payments-api-")
    assert lead.endswith(f":claude-code:{LEAD}")

    for session_id, key in ((LEAD, lead), (WORKER, worker)):
        context = context_of(
            run_hook(started(project, session_id), db=store, project=project), "SessionStart"
        )
        assert key in context
    with sessionwatch.open(store) as watch:
        entries = {entry.session_key: entry for entry in watch.registry_entries()}
        assert entries[lead].session_id == LEAD
        assert entries[worker].session_id == WORKER
        link = watch.upstream_link(worker)
        assert link is not None
        assert (link.catalog_id, link.upstream_kind, link.thread_id) == (CATALOG, FOLLOWING, WORKER)
        assert link.upstream_ref == str(transcript_of(project, WORKER))
        assert watch.watch(lead, worker)
        watched_from = watch.session_status(worker).state_version

    # The prompt hook runs before Claude Code writes the prompt: it records nothing itself.
    assert_silent(
        run_hook(prompted(project, WORKER, "Retry the refund call twice"), db=store, project=project)
    )
    assert human_turns(store, worker) == 0
    written(
        project,
        WORKER,
        typed("Retry the refund call twice"),
        cc.assistant("Retrying"),
        cc.task_notification(),
        cc.prompt(FROM_ANOTHER_SESSION),
        cc.assistant("Done"),
    )
    assert_silent(run_hook(stopped(project, WORKER), db=store, project=project))
    assert_silent(run_hook(stopped(project, WORKER), db=store, project=project))  # read once, recorded once

    with sessionwatch.open(store) as watch:
        delta = watch.session_status(worker, changes_since=0).state_changes
        assert delta is not None
        assert [(e.kind.value, e.actor_type, e.summary) for e in delta.events] == [
            ("adopted", "system", "session adopted"),
            ("human_direct_message", "human", "human message via claude-code"),
        ]
        turns = [
            signal
            for log in watch.store.read_model().signals.values()
            for signal in log
            if signal.kind.value == "human_direct_message"
        ]
        assert [signal.session_id for signal in turns] == [WORKER]  # the turn names its session
        assert [n.target for n in watch.pending_notices(lead)] == [worker]

    context = context_of(
        run_hook(prompted(project, LEAD, "What is the worker doing?"), db=store, project=project),
        "UserPromptSubmit",
    )
    assert context.splitlines() == [
        "sessionwatch: 1 watched session changed since this session looked:",
        f"- {notice_text(worker, watched_from)}",
    ]
    with sessionwatch.open(store) as watch:
        assert watch.pending_notices(lead) == []
        cursor = watch.cursor(lead, worker)
        assert cursor is not None
        assert cursor.last_seen == watch.session_status(worker).state_version
    assert_silent(run_hook(prompted(project, LEAD, "Thanks, carry on"), db=store, project=project))

    resumed = context_of(
        run_hook(started(project, LEAD, "resume"), db=store, project=project), "SessionStart"
    )
    with sessionwatch.open(store) as watch:
        prompt = watch.watch_prompt(lead)
    assert prompt.startswith("Sessions you watch (1).")
    assert resumed.endswith(f"\n\n{prompt}")  # a resumed or compacted session is told what it watches
    assert f'"{worker}"' in resumed


def test_what_fires_no_prompt_hook_is_recorded_at_the_next_event(store: str, project: Path) -> None:
    worker = session_key(project, WORKER)
    context_of(run_hook(started(project, WORKER), db=store, project=project), "SessionStart")
    with sessionwatch.open(store) as watch:
        assert watch.watch(session_key(project, LEAD), worker)

    written(project, WORKER, cc.bash_input("ls -a"), cc.bash_output(".\n.."))  # `!` shell mode: Stop only
    assert_silent(run_hook(stopped(project, WORKER), db=store, project=project))
    assert human_turns(store, worker) == 1
    written(
        project,
        WORKER,
        typed("SLEEPY first prompt"),
        cc.enqueue("typed while the tool runs"),
        cc.tool_result(),
        cc.queue_operation("remove"),
        cc.queued_command("typed while the tool runs"),  # absorbed: no prompt hook of its own
    )
    assert_silent(run_hook(stopped(project, WORKER), db=store, project=project))
    assert human_turns(store, worker) == 3
    written(project, WORKER, cc.local_command("context"), cc.local_command_output("Context Usage"))
    assert_silent(run_hook(ended(project, WORKER), db=store, project=project))  # /context: SessionEnd only
    assert human_turns(store, worker) == 4


def test_a_cron_prompt_reaches_the_prompt_hook_but_is_not_a_human_turn(store: str, project: Path) -> None:
    worker = session_key(project, WORKER)
    context_of(run_hook(started(project, WORKER), db=store, project=project), "SessionStart")
    with sessionwatch.open(store) as watch:
        assert watch.watch(session_key(project, LEAD), worker)
    written(
        project,
        WORKER,
        cc.enqueue("check the deploy status"),
        cc.queue_operation("dequeue"),
        cc.scheduled_task_fire(),
    )
    assert_silent(run_hook(prompted(project, WORKER, "check the deploy status"), db=store, project=project))
    written(project, WORKER, cc.scheduled_prompt("check the deploy status"), cc.assistant("Deployed"))
    assert_silent(run_hook(stopped(project, WORKER), db=store, project=project))

    assert human_turns(store, worker) == 0


def test_clear_continues_the_session_under_its_key_and_its_watchers_keep_it(
    store: str, project: Path
) -> None:
    cleared = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    lead, worker = session_key(project, LEAD), session_key(project, WORKER)
    context_of(run_hook(started(project, WORKER), db=store, project=project), "SessionStart")
    with sessionwatch.open(store) as watch:
        assert watch.watch(lead, worker)
    written(project, WORKER, typed("before clear"), cc.assistant("ok"))

    clear_prompt = str(uuid.uuid4())
    assert_silent(
        run_hook(ended(project, WORKER, "clear", prompt_id=clear_prompt), db=store, project=project)
    )
    context = context_of(
        run_hook(started(project, cleared, "clear", prompt_id=clear_prompt), db=store, project=project),
        "SessionStart",
    )
    assert worker in context  # the session is told the key it had: the one its watchers know
    assert cleared not in context
    with sessionwatch.open(store) as watch:
        watch.acknowledge(lead, [worker])
    written(project, cleared, cc.command_caveat(), cc.slash_command("clear"), cc.local_command_output(""))
    assert_silent(run_hook(prompted(project, cleared, "after clear"), db=store, project=project))
    written(project, cleared, typed("after clear"), cc.assistant("ok"))
    assert_silent(run_hook(stopped(project, cleared), db=store, project=project))

    with sessionwatch.open(store) as watch:
        assert [entry.session_key for entry in watch.registry_entries()] == [worker]
        entry = watch.registry_entry(worker)
        assert entry is not None
        assert entry.session_id == cleared
        link = watch.upstream_link(worker)
        assert link is not None
        assert (link.thread_id, link.upstream_ref) == (cleared, str(transcript_of(project, cleared)))
        assert [n.target for n in watch.pending_notices(lead)] == [worker]
    assert human_turns(store, worker) == 3  # before clear, /clear, after clear


def test_clear_without_the_session_it_ended_starts_a_new_session(store: str, project: Path) -> None:
    cleared = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    context_of(run_hook(started(project, WORKER), db=store, project=project), "SessionStart")
    context = context_of(
        run_hook(started(project, cleared, "clear", prompt_id=str(uuid.uuid4())), db=store, project=project),
        "SessionStart",
    )
    assert session_key(project, cleared) in context
    with sessionwatch.open(store) as watch:
        assert len(watch.registry_entries()) == 2


def test_a_resumed_conversation_counts_only_what_comes_after_the_hook_met_it(
    store: str, project: Path
) -> None:
    worker = session_key(project, WORKER)
    written(project, WORKER, typed("from before sessionwatch was installed"), cc.assistant("ok"))
    context_of(run_hook(started(project, WORKER, "resume"), db=store, project=project), "SessionStart")
    with sessionwatch.open(store) as watch:
        assert watch.watch(session_key(project, LEAD), worker)
    written(project, WORKER, typed("a new prompt"), cc.assistant("ok"))
    assert_silent(run_hook(ended(project, WORKER), db=store, project=project))

    assert human_turns(store, worker) == 1


def test_a_session_that_never_started_is_left_alone(tmp_path: Path, project: Path) -> None:
    store = tmp_path / "phantom.db"
    # `claude mcp list` ends a session that never started: no store is created for it ...
    assert_silent(run_hook(ended(project, WORKER, "other"), db=str(store), project=project))
    assert_silent(run_hook(stopped(project, WORKER), db=str(store), project=project))
    assert not store.exists()
    # ... and an existing store keeps its sessions as they were.
    context_of(run_hook(started(project, LEAD), db=str(store), project=project), "SessionStart")
    assert_silent(run_hook(ended(project, WORKER, "other"), db=str(store), project=project))
    with sessionwatch.open(str(store)) as watch:
        assert [entry.session_key for entry in watch.registry_entries()] == [session_key(project, LEAD)]


def test_the_session_key_comes_from_the_project_directory_else_from_cwd(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'keys.db'}"
    payload = hook_input(tmp_path, LEAD, "SessionStart", source="resume")
    payload["cwd"] = str(tmp_path)
    context = context_of(run_hook(payload, db=store, project=None), "SessionStart")
    assert session_key(tmp_path, LEAD) in context


def test_without_db_the_store_is_sessionwatch_db_in_the_project_directory(project: Path) -> None:
    context_of(run_hook(started(project, LEAD), db=None, project=project), "SessionStart")
    with sessionwatch.open(str(project / "sessionwatch.db")) as watch:
        assert [entry.session_key for entry in watch.registry_entries()] == [session_key(project, LEAD)]


def test_a_prompt_before_any_session_start_registers_the_session(tmp_path: Path, project: Path) -> None:
    store = f"sqlite:///{tmp_path / 'late.db'}"
    assert_silent(run_hook(prompted(project, WORKER, "hello"), db=store, project=project))
    with sessionwatch.open(store) as watch:
        entry = watch.registry_entry(session_key(project, WORKER))
        assert entry is not None
        assert entry.session_id == WORKER


def test_events_the_hook_is_not_for_do_nothing(tmp_path: Path, project: Path) -> None:
    store = f"sqlite:///{tmp_path / 'other.db'}"
    tool = hook_input(project, LEAD, "PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert_silent(run_hook(tool, db=store, project=project))
    assert not (tmp_path / "other.db").exists()


@pytest.mark.parametrize(
    ("stdin", "words"),
    [
        pytest.param("{not json", ("stdin", "not JSON"), id="bad-json"),
        pytest.param("", ("stdin", "not JSON"), id="empty-stdin"),
        pytest.param("[1, 2]", ("stdin", "JSON object"), id="not-an-object"),
        pytest.param(
            {"hook_event_name": "UserPromptSubmit", "prompt": "hi", "cwd": "/srv/x"},
            ("session_id",),
            id="no-session-id",
        ),
        pytest.param(
            {"session_id": LEAD, "prompt": "hi", "cwd": "/srv/x"}, ("hook_event_name",), id="no-event"
        ),
        pytest.param(
            {"session_id": LEAD, "hook_event_name": "Stop", "cwd": "/srv/x", "transcript_path": "t.jsonl"},
            ("Stop", "transcript_path", "absolute"),
            id="relative-transcript",
        ),
        pytest.param(
            {"session_id": "two words", "hook_event_name": "SessionStart", "cwd": "/srv/x"},
            ("session_id", "spaces"),
            id="bad-session-id",
        ),
    ],
)
def test_bad_input_prints_nothing_exits_0_and_logs_one_line(
    tmp_path: Path, stdin: dict[str, object] | str, words: tuple[str, ...]
) -> None:
    store = f"sqlite:///{tmp_path / 'untouched.db'}"
    assert_failed_quietly(run_hook(stdin, db=store, project=None), *words)
    assert not (tmp_path / "untouched.db").exists()


def test_without_a_project_directory_or_cwd_the_hook_fails_quietly(tmp_path: Path) -> None:
    payload: dict[str, object] = {"session_id": LEAD, "hook_event_name": "SessionStart", "source": "startup"}
    assert_failed_quietly(run_hook(payload, db=f"sqlite:///{tmp_path / 'x.db'}", project=None), "cwd")


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"])
def test_a_broken_store_prints_nothing_exits_0_and_is_left_as_it_was(
    tmp_path: Path, project: Path, event: str
) -> None:
    broken = tmp_path / "notes.db"
    broken.write_bytes(b"these are my notes, not a database\n" * 40)
    before = broken.read_bytes()
    payload = {
        "SessionStart": started(project, LEAD),
        "UserPromptSubmit": prompted(project, LEAD, "hello"),
        "Stop": stopped(project, LEAD),
        "SessionEnd": ended(project, LEAD),
    }[event]
    assert_failed_quietly(run_hook(payload, db=str(broken), project=project), event)
    assert broken.read_bytes() == before


def test_an_unreachable_postgres_store_prints_nothing_and_exits_0(project: Path) -> None:
    url = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"
    assert_failed_quietly(
        run_hook(prompted(project, LEAD, "hello"), db=url, project=project), "UserPromptSubmit"
    )


def test_the_example_replays_two_sessions_one_watching_the_other() -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"SESSIONWATCH_URL", "CLAUDE_PROJECT_DIR"}}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "replay.py")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    lead, worker = (
        session_key(EXAMPLE, "0b6c5b2e-1f0a-4c61-9d55-5d0c2e8a7f10"),
        session_key(EXAMPLE, "7d3f9a40-52be-4e0f-8c1a-3b9e6f20d4c7"),
    )
    assert lead in lines[1]
    assert worker in lines[2]
    assert "   recorded: [('human_direct_message', 'human message via claude-code')]" in lines
    assert f"- {notice_text(worker, 2)}" in lines  # watched after both sessions were adopted (1, 2)
    assert lines[-1] == "5. the prompt after that carries nothing: None"
    assert not (EXAMPLE / "sessionwatch.db").exists()


# ------------------------------------------------------------------------ the MCP server's entry


def test_the_mcp_entry_refuses_outside_claude_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    code = cli.main(["claude-code", "mcp", "--db", "memory://"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert "CLAUDE_CODE_SESSION_ID" in captured.err
    assert len(captured.err.splitlines()) == 1


def test_the_mcp_entry_serves_the_sessions_key_and_registers_nothing(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:
        served.append(argv)
        return 0

    store = f"sqlite:///{tmp_path / 'served.db'}"
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", LEAD)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    parser = cli.build_parser()
    args = parser.parse_args(["claude-code", "mcp", "--db", store, "--", "--visibility", "agent"])
    args.run_command_line = fake_main
    assert cli_claude_code.mcp_command(args) == 0
    key = session_key(project, LEAD)
    assert served == [
        ["mcp", "--db", store, "--session", key, "--transport", "stdio", "--visibility", "agent"]
    ]
    assert not (tmp_path / "served.db").exists()  # a health check (`claude mcp list`) leaves no session


def test_a_server_started_after_clear_serves_the_key_the_session_continues(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cleared = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    store = f"sqlite:///{tmp_path / 'served.db'}"
    context_of(run_hook(started(project, WORKER), db=store, project=project), "SessionStart")
    clear_prompt = str(uuid.uuid4())
    assert_silent(
        run_hook(ended(project, WORKER, "clear", prompt_id=clear_prompt), db=store, project=project)
    )
    context_of(
        run_hook(started(project, cleared, "clear", prompt_id=clear_prompt), db=store, project=project),
        "SessionStart",
    )
    served: list[list[str]] = []
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", cleared)  # the server reconnected after /clear
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    args = cli.build_parser().parse_args(["claude-code", "mcp", "--db", store])

    def fake_main(argv: list[str]) -> int:
        served.append(argv)
        return 0

    args.run_command_line = fake_main
    assert cli_claude_code.mcp_command(args) == 0
    assert served[0][served[0].index("--session") + 1] == session_key(project, WORKER)


def test_a_starting_session_is_told_another_watches_it_only_when_one_does(store: str, project: Path) -> None:
    lead, worker = session_key(project, LEAD), session_key(project, WORKER)
    alone = context_of(run_hook(started(project, WORKER), db=store, project=project), "SessionStart")
    with sessionwatch.open(store) as watch:
        assert watch.watch(lead, worker)
    watched = context_of(run_hook(started(project, WORKER), db=store, project=project), "SessionStart")

    assert worker in alone
    assert "Another session watches" not in alone  # nobody does: the session is not told otherwise
    assert "No other session watches this one" in alone
    assert "one can watch it by that key" in alone
    assert worker in watched
    assert "Another session watches this one by that key" in watched
