"""The `sessionwatch` command line end to end: in-process through `main`, and as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import Outcome, cli

import sessionwatch
from sessionwatch import Actor, SessionWatch, notice_text
from sessionwatch.projections.read_model import ReadModel

CHILD = "agent:main:subagent:child"
MANAGER = "agent:main:main"
SCRIPT = Path(sys.executable).parent / "sessionwatch"


def run_process(command: list[str], *argv: str, cwd: Path) -> Outcome:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    done = subprocess.run(
        [*command, *argv], capture_output=True, text=True, cwd=cwd, env=env, check=False, timeout=120
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


def assert_one_line_error(outcome: Outcome) -> str:
    assert outcome.code == 2
    assert outcome.out == ""
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("sessionwatch: error: ")
    assert lines[0].removeprefix("sessionwatch: error: ").strip()
    assert "Traceback" not in outcome.err
    return lines[0]


def snapshot(url: str) -> tuple[ReadModel, int]:
    """Everything a command could have written: every read model and the event count (never swept)."""
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        return watch.store.read_model(), sum(1 for _ in watch.store.replay())


def cursor_of(url: str, watcher: str, target: str, agent: str | None = None) -> tuple[int, int, int] | None:
    """The cursor's (L, N, M), read without sweeping."""
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        cursor = watch.cursor(watcher, target, target_agent_id=agent)
    return None if cursor is None else (cursor.last_seen, cursor.notified, cursor.material)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'state.db'}"


@pytest.fixture
def seeded(url: str) -> dict[str, int]:
    """A spawn, a human turn, a goal change and a failed run on CHILD; an unsignalled session.

    MANAGER spawned CHILD, so its cursor is (spawn, human, goal): one notice, changesSince spawn.
    """
    with sessionwatch.open(url) as watch:
        spawn = watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1")
        human = watch.record_human_message(CHILD, channel="telegram")
        goal = watch.record_goal_changed(CHILD, summary="goal updated", actor=Actor.human())
        failed = watch.record_run_terminal(
            child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="error"
        )
        watch.upsert_session(MANAGER)
        watch.upsert_session("global", agent_id="ops")
        assert spawn is not None
        assert human is not None
        assert goal is not None
        assert failed is not None
        return {
            "spawn": spawn.sequence,
            "human": human.sequence,
            "goal": goal.sequence,
            "failed": failed.sequence,
        }


def open_url(url: str) -> SessionWatch:
    return sessionwatch.open(url)


# ------------------------------------------------------------------------------------------- record


def test_record_prints_one_text_line_and_stores_the_signal(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    outcome = cli(capsys, "record", "goal_changed", MANAGER, "--summary", "goal created", "--db", url)

    assert outcome.code == 0
    assert outcome.err == ""
    assert outcome.out == f"recorded #1 goal_changed on {MANAGER} (agent main) by human: goal created\n"
    with open_url(url) as watch:
        assert watch.session_status(MANAGER).state_version == 1


def test_record_json_prints_the_recorded_signal_in_camel_case(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    outcome = cli(
        capsys,
        "--json",
        "record",
        "run_failed",
        CHILD,
        "--summary",
        "child run failed",
        "--actor",
        "system",
        "--payload",
        '{"outcome": "timeout"}',
        "--dedupe-key",
        "run-terminal:r7",
        "--run-id",
        "r7",
        "--db",
        url,
    )

    assert outcome.code == 0
    printed = json.loads(outcome.out)
    assert isinstance(printed.pop("occurredAt"), int)
    assert printed == {
        "sequence": 1,
        "sessionKey": CHILD,
        "agentId": "main",
        "kind": "run_failed",
        "actorType": "system",
        "summary": "child run failed",
        "runId": "r7",
        "payload": {"outcome": "timeout"},
        "dedupeKey": "run-terminal:r7",
    }


@pytest.mark.parametrize(
    ("option", "actor_type", "actor_id"),
    [
        ("human", "human", None),
        ("system", "system", None),
        (f"agent:{MANAGER}", "agent", MANAGER),
    ],
)
def test_record_actor_option_names_a_human_the_system_or_an_agent_session(
    capsys: pytest.CaptureFixture[str], url: str, option: str, actor_type: str, actor_id: str | None
) -> None:
    outcome = cli(
        capsys, "record", "goal_changed", CHILD, "--summary", "goal updated", "--actor", option, "--db", url
    )

    assert outcome.code == 0
    with open_url(url) as watch:
        change = watch.session_status(CHILD, changes_since=0).state_changes
        assert change is not None
        assert (change.events[0].actor_type, change.events[0].actor_id) == (actor_type, actor_id)


def test_record_without_actor_records_a_human(capsys: pytest.CaptureFixture[str], url: str) -> None:
    outcome = cli(capsys, "--json", "record", "goal_changed", CHILD, "--summary", "goal set", "--db", url)

    assert json.loads(outcome.out)["actorType"] == "human"


def test_record_with_a_known_dedupe_key_returns_the_existing_signal_and_keeps_the_head(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    argv = ["--json", "record", "compacted", CHILD, "--summary", "session compacted", "--db", url]
    first = cli(capsys, *argv, "--dedupe-key", "compacted:op-1")
    cli(capsys, "record", "goal_changed", MANAGER, "--summary", "goal updated", "--db", url)
    again = cli(capsys, *argv, "--dedupe-key", "compacted:op-1")

    assert json.loads(again.out) == {"duplicate": True, **json.loads(first.out)}
    with open_url(url) as watch:
        assert watch.session_status(CHILD).state_version == json.loads(first.out)["sequence"]


def test_record_on_a_bare_key_takes_its_agent_from_the_agent_option(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    outcome = cli(
        capsys,
        "--json",
        "record",
        "adopted",
        "global",
        "--summary",
        "session adopted",
        "--agent",
        "ops",
        "--db",
        url,
    )

    assert outcome.code == 0
    assert json.loads(outcome.out)["agentId"] == "ops"
    with open_url(url) as watch:
        assert watch.session_status("global", agent_id="ops").state_version == 1


# ------------------------------------------------------------------------------------------- status


def test_status_text_shows_the_head_and_one_line_per_change_after_since(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    outcome = cli(capsys, "status", CHILD, "--since", str(seeded["spawn"]), "--db", url)

    assert outcome.code == 0
    lines = outcome.out.splitlines()
    assert lines[0] == f"{CHILD}  stateVersion {seeded['failed']}"
    assert lines[1] == f"3 changes (earliest available sequence {seeded['spawn']})"
    assert [line.split()[0] for line in lines[2:]] == [
        f"#{seeded['human']}",
        f"#{seeded['goal']}",
        f"#{seeded['failed']}",
    ]
    assert "human_direct_message  human: human message via telegram" in lines[2]
    assert 'run_failed  system run run-1: child run failed {"outcome": "error"}' in lines[4]


def test_status_json_is_the_reconciliation_object_of_section_7_1(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    outcome = cli(capsys, "status", CHILD, "--json", "--since", str(seeded["human"]), "--db", url)

    printed = json.loads(outcome.out)
    assert printed["sessionKey"] == CHILD
    assert printed["stateVersion"] == seeded["failed"]
    changes = printed["stateChanges"]
    assert [e["sequence"] for e in changes["events"]] == [seeded["goal"], seeded["failed"]]
    assert changes["events"][1]["payload"] == {"outcome": "error"}
    assert changes["events"][1]["runId"] == "run-1"
    assert all(isinstance(e["occurredAt"], int) for e in changes["events"])
    assert changes["truncated"] is False
    assert changes["earliestAvailableSequence"] == seeded["spawn"]
    assert changes["historyGap"] is False
    with open_url(url) as watch:
        assert printed == watch.session_status(CHILD, changes_since=seeded["human"]).to_json()


def test_status_without_since_prints_only_the_head(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    text = cli(capsys, "status", CHILD, "--db", url)
    printed = cli(capsys, "status", CHILD, "--db", url, "--json")

    assert text.out == f"{CHILD}  stateVersion {seeded['failed']}\n"
    assert json.loads(printed.out) == {"sessionKey": CHILD, "stateVersion": seeded["failed"]}


def test_status_limit_pages_the_delta_and_says_it_was_truncated(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    printed = cli(capsys, "--json", "status", CHILD, "--since", "0", "--limit", "2", "--db", url)
    text = cli(capsys, "status", CHILD, "--since", "0", "--limit", "2", "--db", url)

    changes = json.loads(printed.out)["stateChanges"]
    assert [e["sequence"] for e in changes["events"]] == [seeded["spawn"], seeded["human"]]
    assert changes["truncated"] is True
    assert (
        text.out.splitlines()[-1] == f"truncated: more changes exist; continue with --since {seeded['human']}"
    )


def test_status_of_a_session_known_but_never_signalled_is_state_version_zero(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    outcome = cli(capsys, "--json", "status", "global", "--agent", "ops", "--since", "0", "--db", url)

    assert json.loads(outcome.out) == {
        "sessionKey": "global",
        "stateVersion": 0,
        "stateChanges": {
            "events": [],
            "truncated": False,
            "earliestAvailableSequence": 0,
            "historyGap": False,
        },
    }


# --------------------------------------------------------------------------------------------- list


def test_list_prints_every_session_and_a_state_version_only_above_zero(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    text = cli(capsys, "list", "--db", url)
    printed = cli(capsys, "list", "--db", url, "--json")

    assert json.loads(printed.out) == [  # the kinds the session tools list them with
        {"sessionKey": MANAGER, "agentId": "main", "kind": "main"},
        {"sessionKey": CHILD, "agentId": "main", "kind": "other", "stateVersion": seeded["failed"]},
        {"sessionKey": "global", "agentId": "ops", "kind": "other"},
    ]
    lines = text.out.splitlines()
    assert len(lines) == 3
    assert "stateVersion" not in lines[0]
    assert lines[1].split() == [
        CHILD,
        "agent",
        "main",
        "kind",
        "other",
        "stateVersion",
        str(seeded["failed"]),
    ]
    assert lines[2].split()[:3] == ["global", "agent", "ops"]


def test_list_agent_option_keeps_only_that_agents_sessions(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    outcome = cli(capsys, "--json", "list", "--agent", "ops", "--db", url)

    assert json.loads(outcome.out) == [{"sessionKey": "global", "agentId": "ops", "kind": "other"}]


def test_list_of_an_empty_store_says_so(capsys: pytest.CaptureFixture[str], url: str) -> None:
    with open_url(url):
        pass
    text = cli(capsys, "list", "--db", url)
    printed = cli(capsys, "list", "--json", "--db", url)

    assert (text.code, text.out) == (0, "no sessions\n")
    assert json.loads(printed.out) == []


# ----------------------------------------------------------------------------- notices and drain

IDLE = "agent:main:idle"


def test_notices_prints_the_one_pending_notice_line_and_acknowledges_nothing(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    before = snapshot(url)
    first = cli(capsys, "notices", MANAGER, "--db", url)
    again = cli(capsys, "notices", MANAGER, "--db", url)

    # two material changes (the human turn and the goal) since the spawn: still one line
    assert (first.code, first.err) == (0, "")
    assert first.out == notice_text(CHILD, seeded["spawn"]) + "\n"
    assert again.out == first.out
    assert snapshot(url) == before
    assert cursor_of(url, MANAGER, CHILD) == (seeded["spawn"], seeded["human"], seeded["goal"])


def test_notices_json_is_a_list_of_notice_objects(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    outcome = cli(capsys, "--json", "notices", MANAGER, "--db", url)

    assert outcome.code == 0
    assert json.loads(outcome.out) == [
        {
            "target": CHILD,
            "targetAgentId": "main",
            "lastSeen": seeded["spawn"],
            "text": notice_text(CHILD, seeded["spawn"]),
            "provenance": "explicit",
        }
    ]


@pytest.mark.parametrize("command", ["notices", "drain"])
def test_no_pending_notice_prints_nothing_and_json_prints_an_empty_list(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int], command: str
) -> None:
    assert seeded
    with open_url(url) as watch:
        watch.upsert_session(IDLE)  # a known session with nothing pending
    before = snapshot(url)
    text = cli(capsys, command, IDLE, "--db", url)
    printed = cli(capsys, command, IDLE, "--db", url, "--json")

    assert (text.code, text.out, text.err) == (0, "", "")
    assert (printed.code, json.loads(printed.out), printed.err) == (0, [], "")
    assert snapshot(url) == before


def test_drain_acknowledges_and_leaves_exactly_one_follow_up_then_nothing(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    first = cli(capsys, "drain", MANAGER, "--db", url)
    after_first = cursor_of(url, MANAGER, CHILD)
    second = cli(capsys, "drain", MANAGER, "--db", url)
    third = cli(capsys, "drain", MANAGER, "--db", url)

    # SPEC §6.6: the notice was frozen at the human turn; the goal came after it: one follow-up
    assert first.out == notice_text(CHILD, seeded["spawn"]) + "\n"
    assert after_first == (seeded["human"], seeded["goal"], seeded["goal"])
    assert second.out == notice_text(CHILD, seeded["human"]) + "\n"
    assert (third.code, third.out, third.err) == (0, "", "")
    assert cursor_of(url, MANAGER, CHILD) == (seeded["goal"], seeded["goal"], seeded["goal"])
    assert cli(capsys, "notices", MANAGER, "--db", url).out == ""


def test_drain_json_prints_the_notices_it_acknowledged(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    pending = cli(capsys, "notices", MANAGER, "--json", "--db", url)
    drained = cli(capsys, "drain", MANAGER, "--json", "--db", url)

    assert json.loads(drained.out) == json.loads(pending.out)
    assert json.loads(drained.out)[0]["lastSeen"] == seeded["spawn"]
    assert cursor_of(url, MANAGER, CHILD) == (seeded["human"], seeded["goal"], seeded["goal"])


def test_a_watch_a_change_and_a_drain_through_the_command_line_alone(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    cli(capsys, "record", "goal_changed", CHILD, "--summary", "goal created", "--db", url)
    watched = cli(capsys, "watch", MANAGER, CHILD, "--db", url)
    quiet = cli(capsys, "notices", MANAGER, "--db", url)
    cli(
        capsys,
        "record",
        "human_direct_message",
        CHILD,
        "--summary",
        "human message via telegram",
        "--db",
        url,
    )
    pending = cli(capsys, "notices", MANAGER, "--db", url)
    drained = cli(capsys, "drain", MANAGER, "--db", url)
    after = cli(capsys, "drain", MANAGER, "--db", url)

    # history before the registration (the goal, #1) never produces a notice
    assert (watched.code, watched.err) == (0, "")
    assert watched.out == f"watching: {MANAGER} watches {CHILD} (agent main), last seen 1\n"
    assert quiet.out == ""
    assert pending.out == drained.out == notice_text(CHILD, 1) + "\n"
    assert after.out == ""
    assert cursor_of(url, MANAGER, CHILD) == (2, 2, 2)


# ------------------------------------------------------------------------------------ watch, unwatch


def test_watch_json_shows_the_new_cursor_at_the_target_head(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    outcome = cli(capsys, "--json", "watch", IDLE, CHILD, "--db", url)

    assert (outcome.code, outcome.err) == (0, "")
    printed = json.loads(outcome.out)
    assert isinstance(printed.pop("updatedAt"), int)
    head = seeded["failed"]
    assert printed == {
        "watched": True,
        "alreadyWatching": False,
        "watcher": IDLE,
        "target": CHILD,
        "targetAgentId": "main",
        "lastSeen": head,
        "notified": head,
        "material": head,
        "provenance": "explicit",
    }


def test_watch_of_a_target_never_seen_starts_at_zero_and_creates_the_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "fresh.db")
    outcome = cli(capsys, "watch", MANAGER, CHILD, "--db", db)

    assert outcome.out == f"watching: {MANAGER} watches {CHILD} (agent main), last seen 0\n"
    assert cursor_of(db, MANAGER, CHILD) == (0, 0, 0)


def test_watching_again_leaves_the_cursor_and_its_pending_notice_untouched(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    before = snapshot(url)
    text = cli(capsys, "watch", MANAGER, CHILD, "--db", url)
    printed = cli(capsys, "watch", MANAGER, CHILD, "--db", url, "--json")

    assert text.code == printed.code == 0
    assert text.out == (
        f"watching: {MANAGER} already watches {CHILD} (agent main), last seen {seeded['spawn']}, "
        f"cursor untouched, a notice is pending (changesSince {seeded['spawn']})\n"
    )
    assert json.loads(printed.out)["alreadyWatching"] is True
    assert snapshot(url) == before
    assert cli(capsys, "notices", MANAGER, "--db", url).out == notice_text(CHILD, seeded["spawn"]) + "\n"


def test_an_ambient_watch_is_said_so_and_watching_it_again_promotes_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "ambient.db")
    ambient = cli(capsys, "watch", MANAGER, CHILD, "--ambient", "--db", db)
    again = cli(capsys, "watch", MANAGER, CHILD, "--ambient", "--db", db, "--json")
    promoted = cli(capsys, "watch", MANAGER, CHILD, "--db", db)

    assert (
        ambient.out
        == f"watching: {MANAGER} watches {CHILD} (agent main), last seen 0, ambient (never woken)\n"
    )
    assert (json.loads(again.out)["alreadyWatching"], json.loads(again.out)["provenance"]) == (
        True,
        "ambient",
    )
    assert promoted.out == (
        f"watching: {MANAGER} already watches {CHILD} (agent main), last seen 0, "
        "promoted to an explicit watch, its positions kept\n"
    )
    with sessionwatch.open(db, sweep_on_open=False) as watch:
        cursor = watch.cursor(MANAGER, CHILD)
        assert cursor is not None
        assert cursor.provenance == "explicit"


def test_watch_of_a_bare_target_is_scoped_to_the_agent_option(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    watched = cli(capsys, "watch", MANAGER, "global", "--agent", "ops", "--db", url)
    other = ["record", "goal_changed", "global", "--agent", "main", "--summary", "goal set", "--db", url]
    cli(capsys, *other)
    unreached = cli(capsys, "notices", MANAGER, "--db", url, "--json")
    cli(capsys, "record", "goal_changed", "global", "--agent", "ops", "--summary", "goal set", "--db", url)
    reached = cli(capsys, "notices", MANAGER, "--db", url, "--json")

    assert watched.out == f"watching: {MANAGER} watches global (agent ops), last seen 0\n"
    assert [n["target"] for n in json.loads(unreached.out)] == [CHILD]
    by_target = {(n["target"], n["targetAgentId"]): n["lastSeen"] for n in json.loads(reached.out)}
    assert by_target == {(CHILD, "main"): seeded["spawn"], ("global", "ops"): 0}


REFUSALS = {
    "self": (CHILD, f"{CHILD} cannot watch itself"),
    "bare-watcher": (
        "global",
        "global is not an agent-qualified key (agent:<id>:<rest>); such sessions are never notified",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_refused_watch_answers_on_stdout_exits_1_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int], case: str
) -> None:
    watcher, reason = REFUSALS[case]
    target = CHILD
    assert seeded
    before = snapshot(url)
    text = cli(capsys, "watch", watcher, target, "--db", url)
    printed = cli(capsys, "watch", watcher, target, "--json", "--db", url)

    assert (text.code, text.out, text.err) == (1, f"refused: {reason}\n", "")
    assert (printed.code, printed.err) == (1, "")
    assert json.loads(printed.out) == {
        "watched": False,
        "watcher": watcher,
        "target": target,
        "targetAgentId": "main",
        "reason": reason,
    }
    assert snapshot(url) == before


def test_unwatch_removes_the_cursor_and_its_pending_notice(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    removed = cli(capsys, "unwatch", MANAGER, CHILD, "--db", url)
    notices = cli(capsys, "notices", MANAGER, "--db", url)
    again = cli(capsys, "unwatch", MANAGER, CHILD, "--db", url)
    printed = cli(capsys, "--json", "unwatch", MANAGER, CHILD, "--db", url)

    assert (removed.code, removed.err) == (0, "")
    assert removed.out == f"unwatched: {MANAGER} no longer watches {CHILD} (agent main)\n"
    assert notices.out == ""
    assert cursor_of(url, MANAGER, CHILD) is None
    assert (again.code, again.out) == (0, f"not watching: {MANAGER} had no cursor on {CHILD} (agent main)\n")
    assert json.loads(printed.out) == {
        "removed": False,
        "watcher": MANAGER,
        "target": CHILD,
        "targetAgentId": "main",
    }


def test_unwatch_json_says_a_cursor_was_removed(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    printed = cli(capsys, "unwatch", IDLE, MANAGER, "--db", url)
    removed = cli(capsys, "unwatch", MANAGER, CHILD, "--json", "--db", url)

    assert printed.out == f"not watching: {IDLE} had no cursor on {MANAGER} (agent main)\n"
    assert json.loads(removed.out)["removed"] is True


# ---------------------------------------------------------------------------------- record --watcher


def test_record_watcher_options_notify_each_producer_watcher_from_zero(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    boss, lead = "agent:main:boss", "agent:main:lead"
    recorded = cli(
        capsys, "--json", "record", "goal_changed", CHILD, "--summary", "goal updated",
        "--watcher", boss, "--watcher", lead, "--watcher", "global", "--db", url,
    )  # fmt: skip

    sequence = json.loads(recorded.out)["sequence"]
    for watcher in (boss, lead):
        assert cli(capsys, "notices", watcher, "--db", url).out == notice_text(CHILD, 0) + "\n"
        assert cursor_of(url, watcher, CHILD) == (0, sequence, sequence)
    # a key that is not agent-qualified is accepted as a producer watcher, and never notified
    assert cursor_of(url, "global", CHILD) is None
    never = cli(capsys, "notices", "global", "--db", url)
    assert (never.code, never.out) == (2, "")
    assert "WATCHER: global is not an agent-qualified key" in never.err


def test_record_watcher_is_not_notified_of_its_own_action(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    boss = "agent:main:boss"
    cli(
        capsys, "record", "goal_changed", CHILD, "--summary", "goal updated", "--actor", f"agent:{boss}",
        "--watcher", boss, "--db", url,
    )  # fmt: skip

    assert cursor_of(url, boss, CHILD) is None  # no cursor, no notice: the store knows nothing of boss
    unknown = cli(capsys, "notices", boss, "--db", url)
    assert (unknown.code, unknown.out, unknown.err) == (
        2,
        "",
        f"sessionwatch: error: Unknown sessionKey: {boss}\n",
    )


def test_record_watcher_on_a_log_only_kind_creates_no_cursor(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    boss = "agent:main:boss"
    outcome = cli(
        capsys, "record", "compacted", CHILD, "--summary", "session compacted", "--actor", "system",
        "--watcher", boss, "--db", url,
    )  # fmt: skip

    assert outcome.code == 0
    assert cursor_of(url, boss, CHILD) is None


# --------------------------------------------------------------------------------------------- sweep


def test_sweep_refreezes_the_open_notice_and_prints_the_wake_request(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    first = cli(capsys, "sweep", "--db", url)
    refrozen = cursor_of(url, MANAGER, CHILD)
    second = cli(capsys, "sweep", "--db", url)
    notices = cli(capsys, "notices", MANAGER, "--db", url)

    assert (first.code, first.err) == (0, "")
    assert first.out.splitlines() == [
        f"sweep: re-published 1 notice (1 re-frozen), woke {MANAGER}, skipped 0 (watcher session unknown)",
        f"wake {MANAGER} (session-state:{CHILD})",
    ]
    assert refrozen == (seeded["spawn"], seeded["goal"], seeded["goal"])
    assert second.out.splitlines()[0].startswith("sweep: re-published 1 notice (")
    assert cursor_of(url, MANAGER, CHILD) == refrozen
    # the sweep re-publishes the same notice: L is untouched
    assert notices.out == notice_text(CHILD, seeded["spawn"]) + "\n"


def test_sweep_json_is_the_sweep_report(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    outcome = cli(capsys, "sweep", "--json", "--db", url)

    report = json.loads(outcome.out)
    prune = report.pop("prune")
    assert report == {
        "refrozen": 1,
        "republished": 1,
        "woken": [MANAGER],
        "skippedMissingWatchers": 0,
    }
    assert prune["ran"] is True  # the sweep's forced prune (SPEC §6.5)
    assert prune["signalsRemoved"] == 0


def test_sweep_never_reopens_an_acknowledged_cursor(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    cli(capsys, "sweep", "--db", url)
    cli(capsys, "drain", MANAGER, "--db", url)
    outcome = cli(capsys, "sweep", "--db", url)

    assert (
        outcome.out
        == "sweep: re-published 0 notices (0 re-frozen), woke nobody, skipped 0 (watcher session unknown)\n"
    )
    assert cursor_of(url, MANAGER, CHILD) == (seeded["goal"], seeded["goal"], seeded["goal"])


def test_sweep_skips_unknown_watchers_and_never_wakes_a_subagent(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    helper, ghost = "agent:main:subagent:helper", "agent:main:ghost"
    with sessionwatch.open(url) as watch:
        watch.upsert_session(helper)
    for watcher in (helper, ghost):
        cli(capsys, "watch", watcher, CHILD, "--db", url)
    cli(
        capsys,
        "record",
        "human_direct_message",
        CHILD,
        "--summary",
        "human message via telegram",
        "--db",
        url,
    )
    outcome = cli(capsys, "--json", "sweep", "--db", url)

    assert seeded
    printed = json.loads(outcome.out)
    # re-published: the manager's notice and the subagent's; woken: only the manager (SPEC §6.4)
    assert (printed["republished"], printed["woken"], printed["skippedMissingWatchers"]) == (2, [MANAGER], 1)
    assert printed["refrozen"] >= 1  # the manager's N moved up to M


# ---------------------------------------------------------------------------------- global options


@pytest.mark.parametrize(
    "argv",
    [
        ["--db", "{url}", "--json", "status", CHILD],
        ["--json", "status", CHILD, "--db", "{url}"],
        ["status", "--db", "{url}", CHILD, "--json"],
        ["--db", "{other}", "status", CHILD, "--db", "{url}", "--json"],
    ],
)
def test_db_and_json_are_accepted_before_and_after_the_subcommand(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path, seeded: dict[str, int], argv: list[str]
) -> None:
    other = f"sqlite:///{tmp_path / 'missing.db'}"
    outcome = cli(capsys, *(a.format(url=url, other=other) for a in argv))

    assert outcome.code == 0
    assert json.loads(outcome.out)["stateVersion"] == seeded["failed"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--db", "{url}", "--json", "notices", MANAGER],
        ["notices", MANAGER, "--json", "--db", "{url}"],
        ["--json", "drain", "--db", "{url}", MANAGER],
        ["--db", "{other}", "drain", MANAGER, "--db", "{url}", "--json"],
        ["--db", "{url}", "watch", IDLE, CHILD, "--json"],
        ["watch", "--json", IDLE, CHILD, "--db", "{url}"],
        ["--json", "--db", "{url}", "unwatch", MANAGER, CHILD],
        ["unwatch", MANAGER, CHILD, "--db", "{url}", "--json"],
        ["--db", "{url}", "sweep", "--json"],
        ["--json", "sweep", "--db", "{url}"],
        ["--db", "{url}", "record", "goal_changed", CHILD, "--summary", "s", "--watcher", IDLE, "--json"],
    ],
)
def test_db_and_json_are_accepted_before_and_after_the_watching_commands(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path, seeded: dict[str, int], argv: list[str]
) -> None:
    other = f"sqlite:///{tmp_path / 'missing.db'}"
    outcome = cli(capsys, *(a.format(url=url, other=other) for a in argv))

    assert (outcome.code, outcome.err) == (0, "")
    assert json.loads(outcome.out) is not None
    assert seeded
    assert not (tmp_path / "missing.db").exists()


def test_a_plain_path_names_a_sqlite_file(
    capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path, seeded: dict[str, int]
) -> None:
    outcome = cli(capsys, "--json", "status", CHILD, "--db", str(tmp_path / "state.db"))

    assert url.endswith("state.db")
    assert json.loads(outcome.out)["stateVersion"] == seeded["failed"]


def test_without_db_the_store_is_sessionwatch_url(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONWATCH_URL", url)
    outcome = cli(capsys, "--json", "status", CHILD)

    assert json.loads(outcome.out)["stateVersion"] == seeded["failed"]


def test_without_db_nor_environment_the_store_is_sessionwatch_db_in_the_working_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SESSIONWATCH_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    cli(capsys, "record", "goal_changed", MANAGER, "--summary", "goal created")
    outcome = cli(capsys, "--json", "status", MANAGER)

    assert json.loads(outcome.out)["stateVersion"] == 1
    assert (tmp_path / "sessionwatch.db").is_file()


def test_help_prints_usage_on_stdout_and_succeeds(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = cli(capsys, "--help")
    record = cli(capsys, "record", "--help")

    assert outcome.code == 0
    assert outcome.out.startswith("usage: sessionwatch")
    assert "status" in outcome.out
    for command in ("watch", "unwatch", "notices", "drain", "sweep"):
        assert command in outcome.out
    assert "exit codes: 0 success; 1 the answer is no" in " ".join(outcome.out.split())
    assert record.code == 0
    assert "--dedupe-key" in record.out
    assert "--watcher" in record.out
    assert outcome.err == record.err == ""


def test_watch_help_documents_the_refusal_and_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = cli(capsys, "watch", "--help")

    text = " ".join(outcome.out.split())
    assert (outcome.code, outcome.err) == (0, "")
    assert "'refused: <reason>' (exit 1, nothing written)" in text
    assert "--agent ID" in text


# ------------------------------------------------------------------------------------------- errors

BAD_INPUT = [
    pytest.param([], "the following arguments are required: COMMAND", id="no-command"),
    pytest.param(["bogus"], "invalid choice: 'bogus'", id="unknown-command"),
    pytest.param(["record"], "the following arguments are required: KIND, KEY, --summary", id="record-bare"),
    pytest.param(["record", "goal_changed", CHILD], "--summary", id="no-summary"),
    pytest.param(["record", "nope", CHILD, "--summary", "s"], "KIND: unknown kind 'nope'", id="kind"),
    pytest.param(["record", "goal_changed", "agent:main", "--summary", "s"], "KEY: ", id="malformed-key"),
    pytest.param(
        ["record", "goal_changed", "global", "--summary", "s"],
        "explicit agent id: pass --agent ID",
        id="bare-key",
    ),
    pytest.param(["record", "goal_changed", "agent:main:\nx", "--summary", "s"], "KEY: ", id="newline-key"),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "a\nb"], "--summary: must be a single line", id="lines"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "x" * 201], "--summary: must be at most", id="long"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", " "], "--summary: must not be empty", id="blank"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", "{"], "--payload: ", id="json"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", "[1]"], "JSON object", id="list"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", '{"status": NaN}'], "NaN", id="nan"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", '{"text": "hello"}'],
        "--payload: keys ['text'] are not allowed",
        id="payload-key",
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--payload", json.dumps({"status": "x" * 5000})],
        "--payload: must be at most 4096 bytes",
        id="payload-size",
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--actor", "robot"], "--actor: ", id="actor"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--actor", "agent:"], "--actor: ", id="agent"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--actor", "agent:agent:main"],
        "--actor: ",
        id="agent-key",
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--run-id", ""], "--run-id: ", id="run-id"
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--sumary", "t"], "unrecognized", id="flag"
    ),
    pytest.param(["status", CHILD, "--since", "-1"], "--since: must be >= 0", id="since-negative"),
    pytest.param(["status", CHILD, "--since", "x"], "--since: must be an integer", id="since-text"),
    pytest.param(["status", CHILD, "--since", "1.5"], "--since: must be an integer", id="since-float"),
    pytest.param(["status", CHILD, "--limit", "many"], "--limit: must be an integer", id="limit"),
    pytest.param(["status", "agent:main:nobody"], "Unknown sessionKey: agent:main:nobody", id="unknown"),
    pytest.param(
        ["--json", "status", "agent:main:nobody", "--since", "0"], "Unknown sessionKey", id="unknown-json"
    ),
    pytest.param(
        ["status", "global"], "a bare key ('global') needs an explicit agent id: pass --agent ID", id="bare"
    ),
    pytest.param(["status", "global", "--agent", "main"], "Unknown sessionKey: global", id="other-agent"),
    pytest.param(["status", CHILD, "--agent", "ops"], "--agent: ", id="contradicting-agent"),
    pytest.param(["status"], "the following arguments are required: KEY", id="status-bare"),
    pytest.param(["list", "extra"], "unrecognized arguments: extra", id="list-extra"),
    pytest.param(["demo", "--db", "memory://"], "needs a SQLite file", id="demo-memory"),
    pytest.param(["watch"], "the following arguments are required: WATCHER, TARGET", id="watch-bare"),
    pytest.param(["watch", MANAGER], "the following arguments are required: TARGET", id="watch-no-target"),
    pytest.param(
        ["watch", MANAGER, "global"],
        "a bare key ('global') needs an explicit agent id: pass --agent ID",
        id="watch-bare-target",
    ),
    pytest.param(["watch", MANAGER, CHILD, "--agent", "ops"], "--agent: 'ops' contradicts", id="watch-agent"),
    pytest.param(["watch", "agent:main", CHILD], "WATCHER: ", id="watch-malformed-watcher"),
    pytest.param(["watch", MANAGER, "agent::x"], "TARGET: ", id="watch-malformed-target"),
    pytest.param(["watch", MANAGER, "agent:main:\x00"], "TARGET: ", id="watch-nul"),
    pytest.param(["unwatch", MANAGER, "global"], "pass --agent ID", id="unwatch-bare-target"),
    pytest.param(["unwatch", "agent:main:\nx", CHILD], "WATCHER: ", id="unwatch-newline"),
    pytest.param(["unwatch", MANAGER], "the following arguments are required: TARGET", id="unwatch-bare"),
    pytest.param(["notices"], "the following arguments are required: WATCHER", id="notices-bare"),
    pytest.param(["notices", "agent:main"], "WATCHER: ", id="notices-malformed"),
    pytest.param(["notices", MANAGER, CHILD], "unrecognized arguments", id="notices-extra"),
    pytest.param(["drain", "agent::x"], "WATCHER: ", id="drain-malformed"),
    pytest.param(["drain", " "], "WATCHER: must not be empty", id="drain-blank"),
    pytest.param(["drain"], "the following arguments are required: WATCHER", id="drain-bare"),
    pytest.param(["sweep", "extra"], "unrecognized arguments: extra", id="sweep-extra"),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--watcher", "agent:main"],
        "--watcher: ",
        id="record-watcher",
    ),
    pytest.param(
        ["record", "goal_changed", CHILD, "--summary", "s", "--watcher"],
        "expected one argument",
        id="watcher-bare",
    ),
]


@pytest.mark.parametrize(("argv", "message"), BAD_INPUT)
def test_bad_input_prints_one_error_line_nothing_on_stdout_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int], argv: list[str], message: str
) -> None:
    before = snapshot(url)
    db = [] if "--db" in argv else ["--db", url]
    outcome = cli(capsys, *argv, *db)

    line = assert_one_line_error(outcome)
    assert message in line
    assert seeded
    assert snapshot(url) == before


def test_a_control_character_in_the_input_is_escaped_in_the_error_line(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    outcome = cli(capsys, "list", "ghost\x1b\nline", "--db", url)

    line = assert_one_line_error(outcome)
    assert line == "sessionwatch: error: unrecognized arguments: ghost\\x1b\\nline"


def test_a_unicode_line_separator_in_the_input_is_escaped_in_the_error_line(
    capsys: pytest.CaptureFixture[str], url: str, seeded: dict[str, int]
) -> None:
    assert seeded
    outcome = cli(capsys, "list", "ghost\u2028line\u0085end", "--db", url)

    line = assert_one_line_error(outcome)
    assert line == "sessionwatch: error: unrecognized arguments: ghost\\u2028line\\x85end"


@pytest.mark.parametrize(
    ("db", "message"),
    [
        ("postgresql://user@127.0.0.1/db?schema=Bad-Name", "--db: schema must be a lowercase identifier"),
        ("postgres://user@127.0.0.1/db?lock_timeout=0", "--db: lock_timeout must be a positive number"),
        ("ftp://host/x", "--db: unknown scheme 'ftp'"),
        ("sqlite://host/x.db", "--db: sqlite URLs have no host"),
        ("sqlite:///x.db?synchronous=sometimes", "--db: synchronous must be normal or full"),
        ("", "--db: must be a non-empty string"),
    ],
)
def test_an_unusable_store_url_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    outcome = cli(capsys, "record", "goal_changed", CHILD, "--summary", "s", "--db", db)

    assert message in assert_one_line_error(outcome)
    assert list(tmp_path.iterdir()) == []


def test_a_store_in_a_missing_directory_is_one_error_line_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    outcome = cli(
        capsys, "record", "goal_changed", CHILD, "--summary", "s", "--db", str(tmp_path / "no" / "x.db")
    )

    assert "does not exist" in assert_one_line_error(outcome)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["status", CHILD],
        ["list"],
        ["--json", "status", CHILD, "--since", "0"],
        ["notices", MANAGER],
        ["drain", MANAGER],
        ["--json", "drain", MANAGER],
        ["unwatch", MANAGER, CHILD],
        ["sweep"],
    ],
)
def test_reading_a_missing_store_is_an_error_and_does_not_create_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    outcome = cli(capsys, *argv, "--db", str(tmp_path / "missing.db"))

    assert "no store at" in assert_one_line_error(outcome)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------- real processes


@pytest.fixture(params=["python-m", "console-script"])
def launcher(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "python-m":
        return [sys.executable, "-m", "sessionwatch"]
    assert SCRIPT.is_file(), f"the console script is not installed next to {sys.executable}"
    return [str(SCRIPT)]


def test_a_process_records_and_another_reconciles_through_the_same_file(
    launcher: list[str], tmp_path: Path
) -> None:
    recorded = run_process(
        launcher, "--db", "state.db", "record", "human_direct_message", CHILD, "--summary",
        "human message via telegram", "--payload", '{"channel": "telegram"}', "--json", cwd=tmp_path,
    )  # fmt: skip
    status = run_process(
        launcher, "status", CHILD, "--since", "0", "--json", "--db", "state.db", cwd=tmp_path
    )
    listing = run_process(launcher, "list", "--db", "state.db", cwd=tmp_path)

    assert (recorded.code, recorded.err) == (0, "")
    sequence = json.loads(recorded.out)["sequence"]
    assert (status.code, status.err) == (0, "")
    printed = json.loads(status.out)
    assert printed["stateVersion"] == sequence
    assert printed["stateChanges"]["events"][0]["payload"] == {"channel": "telegram"}
    assert listing.out.split() == [CHILD, "agent", "main", "kind", "other", "stateVersion", str(sequence)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["status", CHILD, "--since", "-1", "--db", "state.db"], "--since: must be >= 0"),
        (["record", "goal_changed", CHILD, "--db", "state.db"], "--summary"),
        (
            ["record", "goal_changed", CHILD, "--summary", "s", "--payload", "{", "--db", "state.db"],
            "--payload",
        ),
        (["status", "agent:main:nobody", "--db", "state.db"], "Unknown sessionKey: agent:main:nobody"),
        (["--db", "nope://x", "list"], "--db: unknown scheme 'nope'"),
    ],
)
def test_a_failing_process_prints_one_line_no_traceback_and_exits_2(
    launcher: list[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    with sessionwatch.open(str(tmp_path / "state.db")) as watch:
        watch.record(CHILD, kind="goal_changed", actor=Actor.system(), summary="goal created")
    before = snapshot(str(tmp_path / "state.db"))

    outcome = run_process(launcher, *argv, cwd=tmp_path)

    assert message in assert_one_line_error(outcome)
    assert snapshot(str(tmp_path / "state.db")) == before


def test_processes_watch_record_and_drain_through_the_same_file(launcher: list[str], tmp_path: Path) -> None:
    def run(*argv: str) -> Outcome:
        done = run_process(launcher, *argv, "--db", "state.db", cwd=tmp_path)
        assert (done.code, done.err) == (0, "")
        return done

    run("watch", MANAGER, CHILD)
    run("record", "human_direct_message", CHILD, "--summary", "human message via telegram")
    run("record", "goal_changed", CHILD, "--summary", "goal updated")
    pending = run("notices", MANAGER)
    drained = run("drain", MANAGER, "--json")
    follow_up = run("drain", MANAGER)
    empty = run("drain", MANAGER)
    refused = run_process(launcher, "watch", CHILD, CHILD, "--db", "state.db", cwd=tmp_path)

    assert pending.out == notice_text(CHILD, 0) + "\n"
    assert [n["lastSeen"] for n in json.loads(drained.out)] == [0]
    assert follow_up.out == notice_text(CHILD, 1) + "\n"
    assert empty.out == ""
    assert (refused.code, refused.out, refused.err) == (1, f"refused: {CHILD} cannot watch itself\n", "")
