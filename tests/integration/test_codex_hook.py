"""`sessionwatch codex hook` as Codex runs it: a process, a hook input on stdin, exit 0.

The inputs and the rollout are shaped as Codex 0.171 writes them (tests/data/hosts/codex-0.171.0).
The hook follows the session's rollout: a prompt is not in the rollout when `UserPromptSubmit`
runs, so it is recorded by the next hook that reads it (the turn's `Stop`); acts that run no
prompt hook (a `!command`) are recorded by whichever hook runs next. A Claude Code session of the
same project watches the Codex session, and the other way round.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_transcripts import append
from codex_labelled import environment, meta, shell_command, task_started, typed
from codex_transcripts import THREAD_ID
from stores import needs_postgres, postgres_url

import sessionwatch
from sessionwatch import notice_text
from sessionwatch.integrations import claude_code, codex, codex_install

SCRIPT = Path(sys.executable).parent / "sessionwatch"
OTHER = "01a24246-2ecf-7b20-9d35-776d8de63164"
CLAUDE_LEAD = "3f1e0c9a-8b7d-4e21-a6f5-0d9c8b7a6e51"
LOG_PREFIX = "sessionwatch codex hook: "
CODEX_CAP_S = 10
"""How long this test lets a handler run before it kills it as Codex does (Codex: 3 s for `SessionEnd`)."""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=needs_postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'hooks.db'}"
        return
    with postgres_url("sw_codex") as url:
        yield url


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "payments-api"
    folder.mkdir()
    return folder


@pytest.fixture
def rollout(tmp_path: Path) -> Path:
    path = tmp_path / "codex-home" / "sessions" / f"rollout-2026-12-04T18-18-05-{THREAD_ID}.jsonl"
    path.parent.mkdir(parents=True)
    append(path, meta(), task_started(), environment())
    return path


def hook_input(project: Path, rollout: Path, event: str, **fields: object) -> dict[str, object]:
    return {
        "session_id": THREAD_ID,
        "transcript_path": str(rollout),
        "cwd": str(project),
        "hook_event_name": event,
        "model": "gpt-5.4",
        "permission_mode": "bypassPermissions",
        **fields,
    }


def run_hook(
    stdin: dict[str, object] | str, *, db: str | None, cwd: Path
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    argv = [str(SCRIPT), "codex", "hook", *(["--db", db] if db else [])]
    return subprocess.run(
        argv, input=text, capture_output=True, text=True, env=env, check=False, timeout=120, cwd=cwd
    )


def context_of(done: subprocess.CompletedProcess[str], event: str) -> str:
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    output = json.loads(done.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == event
    context = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def assert_silent(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")


def human_turns(store: str, key: str) -> int:
    with sessionwatch.open(store) as watch:
        changes = watch.session_status(key, changes_since=0).state_changes
    assert changes is not None
    return sum(
        int((e.payload or {}).get("turns", 1)) for e in changes.events if e.kind == "human_direct_message"
    )


def test_a_codex_session_is_registered_under_the_projects_agent_and_told_its_key(
    store: str, project: Path, rollout: Path
) -> None:
    key = codex.session_key(project, THREAD_ID)
    assert key == f"agent:{claude_code.project_agent_id(project)}:codex:{THREAD_ID}"

    context = context_of(
        run_hook(hook_input(project, rollout, "SessionStart", source="startup"), db=store, cwd=project),
        "SessionStart",
    )

    assert key in context
    with sessionwatch.open(store) as watch:
        [entry] = watch.registry_entries()
        link = watch.upstream_link(key)
    assert (entry.session_key, entry.session_id) == (key, THREAD_ID)
    assert link is not None
    assert (link.catalog_id, link.upstream_ref) == ("codex", str(rollout))


def test_a_prompt_is_recorded_once_by_the_hook_that_reads_it_in_the_rollout(
    store: str, project: Path, rollout: Path
) -> None:
    key = codex.session_key(project, THREAD_ID)
    lead = claude_code.session_key(project, CLAUDE_LEAD)
    with sessionwatch.open(store) as watch:
        assert watch.watch(lead, key)

    assert_silent(
        run_hook(
            hook_input(
                project, rollout, "UserPromptSubmit", turn_id="t1", prompt="<bug_report>x</bug_report>"
            ),
            db=store,
            cwd=project,
        )
    )
    assert human_turns(store, key) == 0  # Codex writes the prompt after this hook ran
    append(rollout, typed("<bug_report>x</bug_report>"))
    assert_silent(
        run_hook(
            hook_input(project, rollout, "Stop", turn_id="t1", stop_hook_active=False), db=store, cwd=project
        )
    )
    assert_silent(run_hook(hook_input(project, rollout, "SessionEnd", reason="other"), db=store, cwd=project))

    assert human_turns(store, key) == 1
    with sessionwatch.open(store) as watch:
        assert [n.text for n in watch.pending_notices(lead)] == [notice_text(key, 0)]


def test_a_shell_command_that_runs_no_prompt_hook_is_recorded_by_the_next_hook(
    store: str, project: Path, rollout: Path
) -> None:
    key = codex.session_key(project, THREAD_ID)
    with sessionwatch.open(store) as watch:
        assert watch.watch(claude_code.session_key(project, CLAUDE_LEAD), key)
    append(rollout, shell_command("ls -a"))

    assert_silent(run_hook(hook_input(project, rollout, "SessionEnd", reason="other"), db=store, cwd=project))

    assert human_turns(store, key) == 1


def test_a_watching_codex_session_gets_its_notices_at_its_next_prompt_once(
    store: str, project: Path, rollout: Path
) -> None:
    lead = codex.session_key(project, THREAD_ID)
    worker = claude_code.session_key(project, CLAUDE_LEAD)
    with sessionwatch.open(store) as watch:
        watch.upsert_session(worker)
        assert watch.watch(lead, worker)
        watch.record_human_message(worker, channel="claude-code")

    context = context_of(
        run_hook(
            hook_input(project, rollout, "UserPromptSubmit", turn_id="t2", prompt="status?"),
            db=store,
            cwd=project,
        ),
        "UserPromptSubmit",
    )

    assert context.splitlines() == [
        "sessionwatch: 1 watched session changed since this session looked:",
        f"- {notice_text(worker, 0)}",
    ]
    assert_silent(
        run_hook(
            hook_input(project, rollout, "UserPromptSubmit", turn_id="t3", prompt="and now?"),
            db=store,
            cwd=project,
        )
    )


def test_a_sub_agents_or_a_reviews_turn_follows_the_parents_rollout_and_hands_over_nothing(
    store: str, project: Path, rollout: Path, tmp_path: Path
) -> None:
    key = codex.session_key(project, THREAD_ID)
    worker = claude_code.session_key(project, CLAUDE_LEAD)
    review = tmp_path / "codex-home" / "sessions" / f"rollout-2026-12-04T18-17-05-{OTHER}.jsonl"
    append(review, meta({"subagent": "review"}, "subagent", OTHER), typed("Review the current code changes"))
    context_of(
        run_hook(hook_input(project, rollout, "SessionStart", source="startup"), db=store, cwd=project),
        "SessionStart",
    )
    with sessionwatch.open(store) as watch:
        watch.upsert_session(worker)
        assert watch.watch(key, worker)
        assert watch.watch(worker, key)
        watch.record_human_message(worker, channel="claude-code")
    append(rollout, typed("SPAWN a helper"))

    for extra in (
        {"transcript_path": str(review)},
        {"agent_id": OTHER, "agent_type": "default", "transcript_path": str(review)},
    ):
        payload = {
            **hook_input(project, rollout, "UserPromptSubmit", turn_id="t4", prompt="Review it"),
            **extra,
        }
        assert_silent(run_hook(payload, db=store, cwd=project))

    with sessionwatch.open(store) as watch:
        link = watch.upstream_link(key)
        assert [n.target for n in watch.pending_notices(key)] == [
            worker
        ]  # still waiting for the session's own turn
    assert link is not None
    assert link.upstream_ref == str(rollout)  # never relinked to the review's rollout
    assert human_turns(store, key) == 1  # the parent's typed prompt, read by the sub-agent's hook run


def test_a_session_nobody_watched_counts_only_the_turns_after_its_watch(
    store: str, project: Path, rollout: Path
) -> None:
    key = codex.session_key(project, THREAD_ID)
    append(rollout, typed("before anyone watched"))
    assert_silent(run_hook(hook_input(project, rollout, "Stop"), db=store, cwd=project))
    with sessionwatch.open(store) as watch:
        assert watch.watch(claude_code.session_key(project, CLAUDE_LEAD), key)
    append(rollout, typed("after the watch"))

    assert_silent(run_hook(hook_input(project, rollout, "Stop"), db=store, cwd=project))

    assert human_turns(store, key) == 1


def test_without_db_the_store_is_sessionwatch_db_in_the_sessions_working_directory(
    project: Path, rollout: Path
) -> None:
    context_of(
        run_hook(hook_input(project, rollout, "SessionStart", source="startup"), db=None, cwd=project),
        "SessionStart",
    )
    with sessionwatch.open(str(project / "sessionwatch.db")) as watch:
        assert [e.session_key for e in watch.registry_entries()] == [codex.session_key(project, THREAD_ID)]


@pytest.mark.parametrize(
    ("stdin", "words"),
    [
        ("not json", ["hook: HookInputError: stdin: is not JSON"]),
        ({"hook_event_name": "Stop", "cwd": "/srv/app"}, ["Stop:", "session_id: must be a non-empty string"]),
        (
            {"hook_event_name": "Stop", "session_id": THREAD_ID, "cwd": "relative"},
            ["cwd: must be an absolute path"],
        ),
        (
            {"hook_event_name": "Stop", "session_id": "a b", "cwd": "/srv/app"},
            ["session_id: must not contain spaces"],
        ),
    ],
    ids=["not-json", "no-session-id", "relative-cwd", "spaced-session-id"],
)
def test_bad_input_prints_nothing_and_exits_zero_with_one_log_line(
    tmp_path: Path, stdin: dict[str, object] | str, words: list[str]
) -> None:
    done = run_hook(stdin, db=f"sqlite:///{tmp_path / 'x.db'}", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "")
    [line] = done.stderr.splitlines()
    assert line.startswith(LOG_PREFIX)
    assert all(word in line for word in words), line
    assert not (tmp_path / "x.db").exists()


def test_a_store_that_cannot_open_prints_nothing_and_exits_zero(project: Path, rollout: Path) -> None:
    done = run_hook(
        hook_input(project, rollout, "Stop"), db=str(project / "missing" / "dir" / "x.db"), cwd=project
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith(f"{LOG_PREFIX}Stop:")


def test_an_event_the_hook_is_not_installed_for_does_nothing(
    tmp_path: Path, project: Path, rollout: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'x.db'}"
    assert_silent(
        run_hook(hook_input(project, rollout, "PreToolUse", tool_name="exec_command"), db=store, cwd=project)
    )
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("shell", ["/bin/bash", "/bin/sh"])
def test_the_installed_session_end_handler_records_though_the_hook_outlives_codexs_cap(
    store: str, project: Path, rollout: Path, tmp_path: Path, shell: str
) -> None:
    """Run as Codex runs a handler: `bash -c COMMAND` (here also a plain POSIX `sh`, dash on
    Debian) in a process group of its own, the input on its
    stdin, its output read to the end; past the cap the whole group is killed. The hook's program
    here cannot even start before that moment (it waits for `go`), as a Python process on a busy
    machine can take longer than `SessionEnd`'s 3 seconds to start. `SessionEnd` is the only hook
    after the session's last act (a `!command` here, a review's outcome in the TUI)."""
    key = codex.session_key(project, THREAD_ID)
    with sessionwatch.open(store) as watch:
        assert watch.watch(claude_code.session_key(project, CLAUDE_LEAD), key)
    append(rollout, shell_command("ls -a"))
    go = tmp_path / "go"
    program = tmp_path / "bin" / "sessionwatch"
    program.parent.mkdir()
    program.write_text(
        f"#!/bin/sh\nwhile [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done\n"
        f'exec {shlex.quote(str(SCRIPT))} "$@"\n'
    )
    program.chmod(0o755)
    handler = codex_install.hook_handler("SessionEnd", store, program=str(program))
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}

    handler_process = subprocess.Popen(
        [shell, "-c", str(handler["command"])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
        env=env,
        start_new_session=True,
    )
    stdin = json.dumps(hook_input(project, rollout, "SessionEnd", reason="other")).encode()
    try:
        handler_process.communicate(stdin, timeout=CODEX_CAP_S)
    except subprocess.TimeoutExpired:  # Codex's cap: the handler's whole process group goes
        os.killpg(handler_process.pid, signal.SIGKILL)
        handler_process.communicate()
    go.touch()

    deadline = time.monotonic() + 120
    while not _registered(store, key) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert human_turns(store, key) == 1


def _registered(store: str, key: str) -> bool:
    with sessionwatch.open(store) as watch:
        return watch.registry_entry(key) is not None
