"""The README's `## Session tools` example runs as written, with the host's ports faked.

The block names the host's ports `host_transcripts`, `host_runtime` and `host_models`; the test
provides them (the fakes of `tests/tools/fakes.py`), runs the block, and checks what it printed and
what reached the runtime.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import readme_python_block
from tools.fakes import FakeModels, FakeRuntime, FakeToolTranscripts

from sessionwatch import SessionTools, SessionWatch

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "## Session tools"
MAX_EXAMPLE_LINES = 20
"""The README promises a short host-wiring example."""


def readme_example() -> str:
    """The one Python block of the section (it ends at the next heading)."""
    return readme_python_block(HEADING)


@pytest.fixture
def ran(capsys: pytest.CaptureFixture[str]) -> Iterator[tuple[dict[str, object], str]]:
    """The example's namespace after it ran, and what it printed."""
    namespace: dict[str, object] = {
        "__name__": "readme_tools_example",
        "host_transcripts": FakeToolTranscripts(),
        "host_runtime": FakeRuntime(),
        "host_models": FakeModels(),
    }
    exec(compile(readme_example(), str(README), "exec"), namespace)  # noqa: S102 - the README's own block
    try:
        yield namespace, capsys.readouterr().out
    finally:
        watch = namespace["watch"]
        assert isinstance(watch, SessionWatch)
        watch.close()


def test_the_example_is_short() -> None:
    assert len([line for line in readme_example().splitlines() if line.strip()]) <= MAX_EXAMPLE_LINES


def test_the_example_lists_the_spawned_child_as_the_model_would_see_it(
    ran: tuple[dict[str, object], str],
) -> None:
    namespace, printed = ran
    assert isinstance(namespace["tools"], SessionTools)
    runtime = namespace["host_runtime"]
    assert isinstance(runtime, FakeRuntime)
    (child_run,) = runtime.child_runs
    child = child_run.child_session_key
    assert re.fullmatch(r"agent:main:subagent:[0-9a-f-]{36}", child)
    assert child_run.message.endswith("\n\n[Subagent Task]: summarise the logs")
    listed = json.loads(printed)
    (row,) = listed["sessions"]
    assert isinstance(row.pop("updatedAt"), int)
    assert row == {
        "key": child,
        "agentId": "main",
        "kind": "other",
        "channel": "unknown",
        "archived": False,
        "pinned": False,
        "parentSessionKey": "agent:main:main",
        "stateVersion": 1,
        "status": "running",
    }
    assert listed["count"] == 1
    assert listed["visibility"]["mode"] == "tree"
    compact = json.dumps(json.loads(printed), separators=(",", ":"), ensure_ascii=False)
    assert printed == compact + "\n"  # compact JSON, one line (SPEC-tools §T0)


def test_the_completion_reaches_the_hosts_announce_pipeline(ran: tuple[dict[str, object], str]) -> None:
    namespace, _ = ran
    runtime = namespace["host_runtime"]
    assert isinstance(runtime, FakeRuntime)
    (request,) = runtime.announce_requests
    assert (request.requester_key, request.run_id, request.outcome, request.status_line) == (
        "agent:main:main",
        "child-run-1",
        "ok",
        "completed successfully",
    )
    assert (request.reply, request.route, request.deliver) == ("3 errors found", None, True)
    watch = namespace["watch"]
    assert isinstance(watch, SessionWatch)
    (run,) = watch.runs()
    assert (run.run_id, run.outcome) == ("child-run-1", "ok")
    status = watch.session_status(run.session_key, changes_since=0)
    assert status.state_changes is not None
    assert [e.kind.value for e in status.state_changes.events] == ["child_spawned", "run_completed"]
