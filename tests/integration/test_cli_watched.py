"""`sessionwatch watched WATCHER`: what a session watches, as lines, JSON or its system-prompt block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli

import sessionwatch
from sessionwatch import Actor

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"


@pytest.fixture
def url(tmp_path: Path) -> str:
    """A store where MANAGER watches CHILD (one notice pending, from 0) and the bare `global` of ops."""
    url = f"sqlite:///{tmp_path / 'state.db'}"
    with sessionwatch.open(url) as watch:
        assert watch.watch(MANAGER, CHILD)
        assert watch.watch(MANAGER, "global", target_agent_id="ops")
        watch.record_goal_changed(CHILD, summary="goal updated", actor=Actor.human())
    return url


def test_watched_prints_one_line_per_cursor_in_target_order(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    outcome = cli(capsys, "watched", MANAGER, "--db", url)

    assert (outcome.code, outcome.err) == (0, "")
    assert outcome.out.splitlines() == [
        f"{CHILD}  agent main  last seen 0  notified 1  material 1  notice pending (changesSince 0)",
        f"{'global':<{len(CHILD)}}  agent ops  last seen 0  notified 0  material 0",
    ]


def test_watched_json_is_the_list_of_cursors_with_their_pending_flag(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    outcome = cli(capsys, "--json", "watched", MANAGER, "--db", url)

    assert (outcome.code, outcome.err) == (0, "")
    printed = json.loads(outcome.out)
    assert all(isinstance(row.pop("updatedAt"), int) for row in printed)
    assert printed == [
        {
            "watcher": MANAGER,
            "target": CHILD,
            "targetAgentId": "main",
            "lastSeen": 0,
            "notified": 1,
            "material": 1,
            "provenance": "explicit",
            "pending": True,
        },
        {
            "watcher": MANAGER,
            "target": "global",
            "targetAgentId": "ops",
            "lastSeen": 0,
            "notified": 0,
            "material": 0,
            "provenance": "explicit",
            "pending": False,
        },
    ]


def test_watched_prompt_prints_the_block_the_facade_renders(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        expected = watch.watch_prompt(MANAGER)
    text = cli(capsys, "watched", MANAGER, "--prompt", "--db", url)
    as_json = cli(capsys, "watched", MANAGER, "--prompt", "--json", "--db", url)

    assert (text.code, text.err) == (0, "")
    assert text.out == expected + "\n"
    assert f'- "{CHILD}": changesSince 0, changed (other actor)' in text.out
    assert json.loads(as_json.out) == {"prompt": expected}


def test_a_watcher_of_nothing_says_so_and_its_prompt_is_empty(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        watch.upsert_session("agent:main:idle")  # a known session that watches nothing
    lines = cli(capsys, "watched", "agent:main:idle", "--db", url)
    prompt = cli(capsys, "watched", "agent:main:idle", "--prompt", "--db", url)
    as_json = cli(capsys, "--json", "watched", "agent:main:idle", "--db", url)

    assert (lines.code, lines.out) == (0, "agent:main:idle watches no session\n")
    assert (prompt.code, prompt.out, prompt.err) == (0, "", "")
    assert json.loads(as_json.out) == []


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("agent:main", "WATCHER: starts with 'agent:' but is not agent:<agentId>:<rest>"),
        (" ", "WATCHER: must not be empty"),
        ("agent:main:\nx", "WATCHER: must not contain control characters"),
    ],
)
def test_a_malformed_watcher_is_one_error_line_naming_watcher(
    capsys: pytest.CaptureFixture[str], url: str, key: str, message: str
) -> None:
    outcome = cli(capsys, "watched", key, "--db", url)

    assert (outcome.code, outcome.out) == (2, "")
    assert outcome.err == f"sessionwatch: error: {message}\n"


def test_watched_help_describes_the_lines_and_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = cli(capsys, "watched", "--help")
    listing = cli(capsys, "--help")

    text = " ".join(outcome.out.split())
    assert (outcome.code, outcome.err) == (0, "")
    assert "whether a notice is pending" in text
    assert "--prompt" in text
    assert "at most 20, within 2,000 characters" in text
    assert "watched" in listing.out


def test_an_ambient_watch_is_marked_as_never_woken(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'group.db'}"
    group = "agent:main:telegram:group:42"
    with sessionwatch.open(url) as watch:
        watch.record_human_message(group, channel="telegram")  # the main session watches it, ambiently

    outcome = cli(capsys, "watched", MANAGER, "--db", url)

    assert (outcome.code, outcome.err) == (0, "")
    pending = "notice pending (changesSince 0)"  # the turn itself is a notice, never woken
    assert outcome.out.splitlines() == [
        f"{group}  agent main  last seen 0  notified 1  material 1  {pending}  ambient (never woken)"
    ]
