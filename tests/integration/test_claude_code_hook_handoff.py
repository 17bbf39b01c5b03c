"""The hook's front end: nothing loaded for nothing to do, work handed to the session's server (ADR-0068).

`sessionwatch claude-code hook` decides from the store whether there is anything to do; when there
is, the session's MCP server runs the hook function over a private Unix socket, and when none
answers (no socket, a stale one, a server that closed without answering, a folder others may
enter) the hook runs in its own process. Either way it prints what the hook function prints.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import claude_transcripts as cc
import pytest

import sessionwatch
from sessionwatch import Actor, SignalKind
from sessionwatch.integrations import claude_code, claude_code_front, claude_code_socket
from sessionwatch.integrations.claude_code import session_key

SCRIPT = Path(sys.executable).parent / "sessionwatch"
LEAD = "3f1e0c9a-8b7d-4e21-a6f5-0d9c8b7a6e51"
WORKER = "c2a4e6f8-1b3d-4f5a-9c7e-2d4f6a8b0c13"
HEAVY = (
    "pydantic",
    "eventsourcing",
    "argparse",
    "sessionwatch.adapters.entry.watch",
    "sessionwatch.cli.cli_parser",
    "sessionwatch.cli.cli_text",
    "sessionwatch.cli.cli_claude_code",
    # and of the standard library, what only a hand-over needs (or nothing the hook does):
    "sessionwatch.integrations.claude_code_socket",
    "socket",
    "typing",
)


class Project:
    def __init__(self, root: Path, runtime: Path) -> None:
        self.dir = root / "payments-api"
        self.dir.mkdir()
        self.runtime = runtime  # short: a Unix socket's path has at most 107 bytes
        self.env = {
            **{k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"},
            "CLAUDE_PROJECT_DIR": str(self.dir),
            "XDG_RUNTIME_DIR": str(self.runtime),
        }

    def transcript(self, session_id: str) -> Path:
        return self.dir.parent / "claude-projects" / f"{session_id}.jsonl"

    def hook_input(self, session_id: str, event: str, **fields: object) -> str:
        return json.dumps(
            {
                "session_id": session_id,
                "transcript_path": str(self.transcript(session_id)),
                "cwd": str(self.dir),
                "hook_event_name": event,
                **fields,
            }
        )

    def run(self, stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), "claude-code", "hook"],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            check=True,
            timeout=120,
        )

    def start(self, session_id: str) -> None:
        self.transcript(session_id).parent.mkdir(exist_ok=True)
        self.transcript(session_id).touch()
        assert (
            session_key(self.dir, session_id) in self.run(self.hook_input(session_id, "SessionStart")).stdout
        )
        cc.append(self.transcript(session_id), cc.prompt("hello", promptSource="typed"), cc.assistant("Hi"))
        assert self.run(self.hook_input(session_id, "Stop")).stdout == ""

    def socket(self, session_id: str) -> Path:
        folder = claude_code_socket.socket_folder(self.env)
        return claude_code_socket.socket_path(folder, claude_code.project_agent_id(self.dir), session_id)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with tempfile.TemporaryDirectory(prefix="sw-", dir="/tmp") as runtime:
        yield Project(tmp_path, Path(runtime))


@pytest.fixture
def served(project: Project) -> Iterator[list[str]]:
    """The lead session's server answers its hook (in this process); the inputs it ran."""
    ran: list[str] = []

    def run_hook(stdin: str, db: str | None, environ: Mapping[str, str], log: Callable[[str], None]) -> str:
        ran.append(stdin)
        return claude_code.run_hook(stdin, db=db, environ=environ, log=log)

    listener = claude_code_socket.listen(
        project.env, claude_code.project_agent_id(project.dir), LEAD, run_hook
    )
    assert listener is not None
    try:
        yield ran
    finally:
        listener.close()


def notice_pending(project: Project) -> None:
    lead, worker = session_key(project.dir, LEAD), session_key(project.dir, WORKER)
    with sessionwatch.open(str(project.dir / "sessionwatch.db")) as watch:
        watch.watch(lead, worker)
        watch.record(worker, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="a change")


def context(done: subprocess.CompletedProcess[str]) -> str:
    assert done.stderr == ""
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


def test_the_socket_is_private_and_named_after_the_session(project: Project, served: list[str]) -> None:
    path = project.socket(LEAD)
    assert path.parent == project.runtime / "sessionwatch"
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mode & 0o777 == 0o600
    assert project.socket(WORKER) != path
    assert served == []


def test_a_prompt_with_work_is_done_by_the_sessions_server(project: Project, served: list[str]) -> None:
    for session_id in (LEAD, WORKER):
        project.start(session_id)
    starts = len(served)
    assert starts == 2  # SessionStart always has work: the lead's went to its server
    notice_pending(project)
    prompt = project.hook_input(LEAD, "UserPromptSubmit", prompt="next")
    assert "1 watched session changed" in context(project.run(prompt))
    assert len(served) == starts + 1
    assert project.run(prompt).stdout == ""  # acknowledged: nothing to do, the server is not asked
    assert len(served) == starts + 1


def test_without_a_server_the_hook_does_the_same_work_itself(project: Project) -> None:
    for session_id in (LEAD, WORKER):
        project.start(session_id)
    project.socket(LEAD).parent.mkdir(mode=0o700, exist_ok=True)
    project.socket(LEAD).touch()  # a socket a server that ended left behind
    notice_pending(project)
    prompt = project.hook_input(LEAD, "UserPromptSubmit", prompt="next")
    assert "1 watched session changed" in context(project.run(prompt))
    assert project.run(prompt).stdout == ""


def test_a_folder_others_may_enter_is_never_used(project: Project, served: list[str]) -> None:
    for session_id in (LEAD, WORKER):
        project.start(session_id)
    served.clear()
    (project.runtime / "sessionwatch").chmod(0o755)
    notice_pending(project)
    prompt = project.hook_input(LEAD, "UserPromptSubmit", prompt="next")
    assert "1 watched session changed" in context(project.run(prompt))
    assert served == []  # the hook did it itself
    assert claude_code_socket.listen(project.env, "app-00000000", LEAD, lambda *_: "") is None


def test_a_server_that_closes_without_answering_leaves_the_work_to_the_hook(project: Project) -> None:
    for session_id in (LEAD, WORKER):
        project.start(session_id)
    path = project.socket(LEAD)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def hang_up() -> None:
        connection, _ = server.accept()
        connection.recv(1 << 20)
        connection.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        notice_pending(project)
        prompt = project.hook_input(LEAD, "UserPromptSubmit", prompt="next")
        assert "1 watched session changed" in context(project.run(prompt))
    finally:
        thread.join(timeout=10)
        server.close()


def test_nothing_to_do_loads_only_the_standard_library(project: Project) -> None:
    project.start(LEAD)
    probe = (
        "import sys\n"
        "sys.argv = ['sessionwatch', 'claude-code', 'hook']\n"
        "from sessionwatch.cli.cli import main\n"
        "assert main() == 0\n"
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=project.hook_input(LEAD, "UserPromptSubmit", prompt="next"),
        capture_output=True,
        text=True,
        env=project.env,
        check=True,
        timeout=120,
    )
    assert done.stdout == ""
    assert done.stderr.strip() == "[]"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["claude-code", "hook"], (True, None)),
        (["claude-code", "hook", "--db", "/x.db"], (True, "/x.db")),
        (["claude-code", "hook", "--db=/x.db"], (True, "/x.db")),
        (["claude-code", "hook", "--json"], (False, None)),
        (["claude-code", "install"], (False, None)),
        (["--db", "/x.db", "claude-code", "hook"], (False, None)),
    ],
)
def test_the_front_end_takes_only_the_hooks_own_command_line(
    argv: list[str], expected: tuple[bool, str | None]
) -> None:
    assert claude_code_front.hook_db(argv) == expected
