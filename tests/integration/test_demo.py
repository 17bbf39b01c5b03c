"""`sessionwatch demo`: the story runs on a real SQLite file, re-runs, restarts and reconciles."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sessionwatch
from sessionwatch import notice_text
from sessionwatch.cli.cli import main

SCRIPT = Path(sys.executable).parent / "sessionwatch"
CLOSING_LINE = "Checks: the read models rebuilt from the stored events are identical to the stored ones;"
AUDIT_LINE = re.compile(r"the audit replayed \d+ events: clean, 0 violations\.")
MANAGER = "agent:main:main"
NOTICE = re.compile(
    r'^ +(Session "(?P<target>[^"]+)" changed \(other actor\)\. .* changesSince (?P<since>\d+)\.)$'
)
SPAWN = re.compile(r"^     the (?P<role>researcher|writer), (?P<child>\S+) \(change #(?P<sequence>\d+)\)$")
SCREEN = 60


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object printed in `text`, each starting at the beginning of a line."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = 0
    while position < len(text):
        if text.startswith("{", position):
            value, position = decoder.raw_decode(text, position)
            assert isinstance(value, dict)
            found.append(value)
            continue
        newline = text.find("\n", position)
        if newline == -1:
            break
        position = newline + 1
    return found


def reconciliations(text: str) -> list[dict[str, Any]]:
    return [obj for obj in json_objects(text) if "stateChanges" in obj]


def children(text: str) -> dict[str, tuple[str, int]]:
    """The spawned children of one text run: role (researcher, writer) -> (key, spawn sequence)."""
    found = {}
    for match in filter(None, map(SPAWN.match, text.splitlines())):
        found[match["role"]] = (match["child"], int(match["sequence"]))
    assert set(found) == {"researcher", "writer"}, text
    return found


def block(text: str, starts: str) -> list[str]:
    """The lines indented under the one step line that starts (after its indent) with `starts`."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.lstrip().startswith(starts)]
    assert len(heads) == 1, (starts, text)
    indent = len(lines[heads[0]]) - len(lines[heads[0]].lstrip())
    found = []
    for line in lines[heads[0] + 1 :]:
        if len(line) - len(line.lstrip()) <= max(indent, 3):
            break
        found.append(line)
    return found


def notice_lines(lines: list[str]) -> list[tuple[str, int]]:
    """(target, changesSince) of every indented notice line, each checked byte for byte."""
    found = []
    for line in lines:
        match = NOTICE.match(line)
        if match:
            assert match[1] == notice_text(match["target"], int(match["since"]))
            found.append((match["target"], int(match["since"])))
    return found


def run_demo(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["demo", *argv])
    captured = capsys.readouterr()
    assert (code, captured.err) == (0, "")
    return captured.out


def run_process(command: list[str], *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    return subprocess.run(
        [*command, *argv], capture_output=True, text=True, cwd=cwd, env=env, check=False, timeout=120
    )


def assert_reconciliation(status: dict[str, Any]) -> None:
    """A §7.1 object with a delta: the head is the last change and no history is missing."""
    assert set(status) == {"sessionKey", "stateVersion", "stateChanges"}
    changes = status["stateChanges"]
    assert set(changes) == {"events", "truncated", "earliestAvailableSequence", "historyGap"}
    assert changes["events"]
    assert status["stateVersion"] == changes["events"][-1]["sequence"]
    assert changes["historyGap"] is False
    assert changes["truncated"] is False


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SESSIONWATCH_URL", raising=False)
    return tmp_path


def test_the_demo_runs_twice_on_its_own_file_and_reconciles_each_time(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    first = run_demo(capsys, "--verbose")
    second = run_demo(capsys, "--verbose")

    for out in (first, second):
        found = reconciliations(out)
        # the researcher and the writer, then the researcher again for the follow-up notice
        assert len(found) == 3
        for status in found:
            assert_reconciliation(status)
        assert CLOSING_LINE in out.splitlines()
        assert any(AUDIT_LINE.fullmatch(line) for line in out.splitlines())
    # the demo's own file is reset: the second run starts from sequence 1 again
    assert [s["stateChanges"]["events"][0]["sequence"] for s in reconciliations(second)] == [
        s["stateChanges"]["events"][0]["sequence"] for s in reconciliations(first)
    ]
    assert (in_tmp / "sessionwatch-demo.db").is_file()
    assert not (in_tmp / "sessionwatch.db").exists()


def test_the_demo_runs_twice_on_the_same_db_file_and_keeps_both_stories(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "kept.db")
    first_out = run_demo(capsys, "--db", db, "--verbose")
    second_out = run_demo(capsys, "--db", db, "--verbose")
    first, second = reconciliations(first_out), reconciliations(second_out)

    for status in (*first, *second):
        assert_reconciliation(status)
    assert {s["sessionKey"] for s in first}.isdisjoint(s["sessionKey"] for s in second)
    assert min(s["stateVersion"] for s in second) > max(s["stateVersion"] for s in first)
    # each run tells the whole story: one notice after the turns, one follow-up, one wake
    for out in (first_out, second_out):
        researcher, spawn = children(out)["researcher"]
        assert notice_lines(block(out, "The manager is woken once")) == [(researcher, spawn)]
        assert block(out, "unread follow-up, publishes it again") == [
            f"     wake {MANAGER} (session-state:{researcher})"
        ]
    with sessionwatch.open(db, sweep_on_open=False) as watch:
        assert watch.pending_notices(MANAGER) == []
        latest = {status["sessionKey"]: status["stateVersion"] for status in (*first, *second)}
        for key, version in latest.items():
            assert watch.session_status(key).state_version == version


def test_three_human_turns_give_the_manager_exactly_one_byte_exact_notice(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    out = run_demo(capsys)
    researcher, spawn = children(out)["researcher"]

    turns = [
        line for line in out.splitlines() if line.startswith("2. A human types into the researcher 3 times")
    ]
    assert len(turns) == 1
    assert len(re.findall(r"#\d+", turns[0])) == 3
    after_turns = block(out, "The manager is woken once and holds exactly 1 notice for it")
    assert after_turns == ["     " + notice_text(researcher, spawn)]
    # byte-stable: the researcher's notice lines are the first notice and the one follow-up, no other
    sinces = {since for target, since in notice_lines(out.splitlines()) if target == researcher}
    assert len(sinces) == 2
    assert min(sinces) == spawn


def test_the_goal_change_notifies_and_the_failed_run_is_log_only(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    out = run_demo(capsys, "--verbose")
    spawned = children(out)
    (researcher, researcher_spawn), (writer, writer_spawn) = spawned["researcher"], spawned["writer"]

    failed = [
        line for line in out.splitlines() if line.startswith("   The writer's run then fails (change #")
    ]
    assert len(failed) == 1
    assert failed[0].endswith("kept in its history, no notice of its own.")
    read = notice_lines(block(out, "6. The manager reads its 2 notices"))
    assert read == [(researcher, researcher_spawn), (writer, writer_spawn)]
    researcher_status, writer_status = reconciliations(out)[:2]
    assert [
        (e["kind"], e["actorType"], e["summary"]) for e in researcher_status["stateChanges"]["events"]
    ] == [("human_direct_message", "human", "human message via telegram")] * 3
    goal, run_failed = writer_status["stateChanges"]["events"]
    assert (goal["kind"], goal["actorType"], goal["summary"]) == ("goal_changed", "human", "goal updated")
    assert (run_failed["kind"], run_failed["payload"]) == ("run_failed", {"outcome": "error"})
    assert run_failed["runId"].startswith("run-writer-")


def test_a_turn_between_reading_and_acknowledging_leaves_exactly_one_follow_up(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    out = run_demo(capsys, "--verbose")
    spawned = children(out)
    (researcher, spawn), _ = spawned["researcher"], spawned["writer"]

    late = re.search(
        r"^7\. A human types into the researcher again \(#(\d+)\) just before the manager marks them read\.$",
        out,
        re.MULTILINE,
    )
    assert late is not None
    assert "   The manager marks the 2 notices read." in out
    caught_up = [line for line in out.splitlines() if line.startswith("   so nothing is lost: ")]
    assert len(caught_up) == 1
    assert "the writer is caught up" in caught_up[0]
    assert caught_up[0].endswith(f", #{late[1]}) wait in one follow-up notice:")
    follow_up = notice_lines(block(out, "so nothing is lost: "))
    assert len(follow_up) == 1
    target, since = follow_up[0]
    assert target == researcher
    assert since > spawn
    final = reconciliations(out)[-1]
    assert final["sessionKey"] == researcher
    sequences = [e["sequence"] for e in final["stateChanges"]["events"]]
    assert min(sequences) > since
    assert sequences[-1] == final["stateVersion"] == int(late[1])


def test_the_restart_sweep_republishes_the_follow_up_and_wakes_the_manager(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    out = run_demo(capsys)
    researcher, _ = children(out)["researcher"]
    lines = out.splitlines()

    follow_up = notice_lines(block(out, "so nothing is lost: "))
    assert len(follow_up) == 1
    assert block(out, "unread follow-up, publishes it again") == [
        f"     wake {MANAGER} (session-state:{researcher})"
    ]
    assert (
        notice_lines(block(out, "The manager drains it (reads it and marks it read in one step)"))
        == follow_up
    )
    drained_again = "   and drains again: nothing left to read."
    restart = next(i for i, line in enumerate(lines) if line.startswith("8. Restart: "))
    assert restart < lines.index(drained_again) < lines.index(CLOSING_LINE)


def test_the_demo_json_mode_prints_only_one_json_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    printed = json.loads(run_demo(capsys, "--json", "--db", db))

    assert printed["store"] == db
    assert printed["manager"] == MANAGER
    assert printed["readModelsIdentical"] is True
    assert printed["audit"]["ok"] is True
    assert printed["audit"]["violations"] == []
    assert printed["gatedTurnRecorded"] is False
    researcher, writer = printed["children"]
    (after_turns,) = printed["noticesAfterTurns"]
    assert after_turns["target"] == researcher
    assert after_turns["text"] == notice_text(researcher, after_turns["lastSeen"])
    assert [n["target"] for n in printed["notices"]] == [researcher, writer]
    assert printed["notices"][0] == after_turns
    assert printed["acknowledged"] == printed["notices"]
    assert [s["sessionKey"] for s in printed["reconciliations"]] == [researcher, writer]
    for notice, status in zip(printed["notices"], printed["reconciliations"], strict=True):
        assert_reconciliation(status)
        assert status["stateChanges"]["events"][0]["sequence"] > notice["lastSeen"]
    (follow_up,) = printed["followUps"]
    assert follow_up["target"] == researcher
    assert follow_up["lastSeen"] > after_turns["lastSeen"]
    assert follow_up["text"] == notice_text(researcher, follow_up["lastSeen"])
    assert printed["sweep"]["republished"] == 1
    assert printed["sweep"]["woken"] == [MANAGER]
    assert printed["sweep"]["skippedMissingWatchers"] == 0
    assert printed["wakes"] == [{"watcher": MANAGER, "reason": f"session-state:{researcher}"}]
    assert printed["drained"] == [follow_up]
    final = printed["followUpReconciliation"]
    assert_reconciliation(final)
    assert final["sessionKey"] == researcher
    assert min(e["sequence"] for e in final["stateChanges"]["events"]) > follow_up["lastSeen"]
    assert printed["pendingAtEnd"] == []
    keys = {row["sessionKey"] for row in printed["sessions"]}
    assert {MANAGER, researcher, writer} <= keys
    with sessionwatch.open(db, sweep_on_open=False) as watch:
        researcher_cursor = watch.cursor(MANAGER, researcher)
        writer_cursor = watch.cursor(MANAGER, writer)
        researcher_head = watch.session_status(researcher).state_version
        writer_head = watch.session_status(writer).state_version
    # every notice was acknowledged: L == N == M; the writer's log-only failed run never moved M
    assert researcher_cursor is not None
    assert writer_cursor is not None
    for cursor in (researcher_cursor, writer_cursor):
        assert cursor.last_seen == cursor.notified == cursor.material
    assert researcher_cursor.material == researcher_head
    goal, failed = printed["reconciliations"][1]["stateChanges"]["events"]
    assert writer_cursor.material == goal["sequence"]
    assert failed["sequence"] == writer_head


def test_the_gated_human_turn_leaves_its_session_at_state_version_zero(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "demo.db")
    printed = json.loads(run_demo(capsys, "--db", db, "--json"))

    unwatched = [row for row in printed["sessions"] if ":telegram:direct:" in row["sessionKey"]]
    assert len(unwatched) == 1
    assert "stateVersion" not in unwatched[0]
    with sessionwatch.open(db) as watch:
        status = watch.session_status(unwatched[0]["sessionKey"], changes_since=0)
        assert status.state_version == 0
        assert status.state_changes is not None
        assert status.state_changes.events == ()


def test_the_demo_never_writes_the_default_store_nor_sessionwatch_url(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONWATCH_URL", f"sqlite:///{in_tmp / 'production.db'}")
    run_demo(capsys)

    assert sorted(p.name for p in in_tmp.iterdir() if p.name.endswith(".db")) == ["sessionwatch-demo.db"]


def test_the_demo_on_a_memory_store_is_refused_with_one_line(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    code = main(["demo", "--db", "memory://"])
    captured = capsys.readouterr()

    assert code == 2
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("sessionwatch: error: --db: the demo restarts its store")
    assert list(in_tmp.iterdir()) == []


def test_the_demo_in_a_missing_directory_is_refused_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(["demo", "--db", str(tmp_path / "missing" / "demo.db")])
    captured = capsys.readouterr()

    assert (code, captured.out) == (2, "")
    assert len(captured.err.splitlines()) == 1
    assert "does not exist" in captured.err


def test_the_demo_runs_twice_as_python_m_sessionwatch(tmp_path: Path) -> None:
    runs = [
        run_process([sys.executable, "-m", "sessionwatch"], "demo", *verbose, cwd=tmp_path)
        for verbose in ([], ["--verbose"])
    ]

    for done in runs:
        assert (done.returncode, done.stderr) == (0, "")
        assert CLOSING_LINE in done.stdout.splitlines()
        assert (
            f"  {shlex.quote(sys.executable)} -m sessionwatch list --db sessionwatch-demo.db" in done.stdout
        )
    found = reconciliations(runs[1].stdout)
    assert len(found) == 3
    for status in found:
        assert_reconciliation(status)


def test_the_installed_console_script_runs_the_demo_in_json_mode_twice_on_one_file(tmp_path: Path) -> None:
    assert SCRIPT.is_file(), f"the console script is not installed next to {sys.executable}"
    runs = [run_process([str(SCRIPT)], "--json", "demo", "--db", "kept.db", cwd=tmp_path) for _ in range(2)]

    for done in runs:
        assert (done.returncode, done.stderr) == (0, "")
        printed = json.loads(done.stdout)
        assert printed["readModelsIdentical"] is True
        for status in printed["reconciliations"]:
            assert_reconciliation(status)
    assert (tmp_path / "kept.db").is_file()


def test_the_manager_lists_its_children_and_reads_a_sanitized_history_through_session_tools(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    out = run_demo(capsys, "--verbose")
    researcher, _ = children(out)["researcher"]
    listed = block(out, "3. Through the session tools the manager lists its children")
    assert listed == ["     researcher  stateVersion 5", "     writer  stateVersion 2"]
    assert "   and reads the researcher's history: 3 messages, read from the host when asked" in out
    history = next(obj for obj in json_objects(out) if "messages" in obj)
    assert history == {
        "sessionKey": researcher,
        "messages": [
            {"role": "user", "content": "Find the three slowest endpoints."},
            {"role": "assistant", "content": "The slowest are /search, /export and /login."},
            {"role": "user", "content": "Pull the next export with token sk-liv…cdef."},
        ],
        "truncated": False,
        "droppedMessages": False,
        "contentTruncated": False,
        "contentRedacted": True,
        "bytes": 216,
    }


def test_the_demo_json_carries_the_session_tools_results(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = json.loads(run_demo(capsys, "--json", "--db", str(tmp_path / "demo.db")))
    researcher, writer = printed["children"]
    rows = printed["tools"]["sessionsList"]["sessions"]
    assert [(row["key"], row["label"], row["kind"], row["parentSessionKey"]) for row in rows] == [
        (researcher, "researcher", "other", MANAGER),
        (writer, "writer", "other", MANAGER),
    ]
    assert printed["tools"]["sessionsList"]["visibility"]["mode"] == "tree"
    history = printed["tools"]["sessionsHistory"]
    assert (history["sessionKey"], history["contentRedacted"], len(history["messages"])) == (
        researcher,
        True,
        3,
    )
    assert "sk-live1234567890abcdef" not in json.dumps(printed)


def test_the_adopted_claude_code_and_codex_sessions_count_only_what_a_person_typed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "demo.db")
    printed = json.loads(run_demo(capsys, "--db", db, "--json"))
    assert printed["upstream"] == {"claudeCode": 2, "codex": 1}
    text = run_demo(capsys, "--db", db)
    assert "     Claude Code: 2 human turns (" in text
    assert "     Codex: 1 human turn (" in text


JARGON = ("SPEC", "§", "re-frozen", "cursor now", "L := N", "(1, 3, 5)", "session_status changesSince")


def test_the_default_story_fits_one_screen_in_plain_words_without_json(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    out = run_demo(capsys)
    lines = out.splitlines()

    assert len(lines) <= SCREEN, len(lines)
    assert json_objects(out) == []
    for word in JARGON:
        assert word not in out, word
    steps = [line.split(".", 1)[0] for line in lines if re.match(r"^\d+\. ", line)]
    assert steps == [str(n) for n in range(1, 11)]
    assert any(AUDIT_LINE.fullmatch(line) for line in lines)


def test_verbose_tells_the_same_story_with_every_steps_full_json(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert in_tmp
    short = run_demo(capsys)
    verbose = run_demo(capsys, "--verbose")

    masked = re.compile(r"[0-9a-f]{8}")  # the run token differs between runs
    remaining = iter(masked.sub("RUN", line) for line in verbose.splitlines())
    for line in short.splitlines():  # every line of the short story, in order, among the verbose lines
        assert masked.sub("RUN", line) in remaining, line
    objects = json_objects(verbose)
    assert len(reconciliations(verbose)) == 3
    assert any("messages" in obj for obj in objects)  # the sanitized history
    assert any("republished" in obj for obj in objects)  # the restart sweep's report
    assert len(verbose.splitlines()) > 2 * len(short.splitlines())


def test_the_suggested_commands_run_as_printed_after_the_console_script_ran_the_demo(tmp_path: Path) -> None:
    assert SCRIPT.is_file(), f"the console script is not installed next to {sys.executable}"
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != SCRIPT.parent.resolve()
    )
    relative = os.path.relpath(SCRIPT, tmp_path)
    done = subprocess.run(
        [relative, "demo"], capture_output=True, text=True, cwd=tmp_path, env=env, check=False, timeout=120
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    suggested = [line.strip() for line in lines[lines.index("Try it:") + 1 :]]
    assert len(suggested) == 3
    for command in suggested:
        assert command.startswith(f"{relative} ")
        ran = subprocess.run(
            ["bash", "-c", command],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            check=False,
            timeout=120,
        )
        assert (ran.returncode, ran.stderr) == (0, ""), command
        assert ran.stdout


def test_the_demo_exits_1_when_the_rebuilt_read_models_differ(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert in_tmp
    monkeypatch.setattr(sessionwatch.SessionWatch, "rebuild_read_model", lambda _self: None)
    code = main(["demo"])
    captured = capsys.readouterr()
    assert (code, captured.err) == (1, "")
    assert "DIFFERENT from the stored ones" in captured.out
