"""The command line reads agent ids in keys as every other entry point does: normalized.

`agent:Main:worker` is agent `main`'s session whether a command is given `--agent main`,
`--agent Main` or nothing; a key whose agent id is blank is refused naming the key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import cli


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'state.db'}"


def test_a_key_capitalizing_its_agent_is_that_agents_session_for_every_command(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    for agent in ((), ("--agent", "main"), ("--agent", "Main")):
        recorded = cli(
            capsys,
            "record",
            "goal_changed",
            "agent:Main:worker",
            "--summary",
            "goal updated",
            *agent,
            "--db",
            url,
        )
        assert recorded.code == 0, recorded.err
    listed = cli(capsys, "list", "--json", "--db", url)
    assert [(row["sessionKey"], row["agentId"], row["stateVersion"]) for row in json.loads(listed.out)] == [
        ("agent:Main:worker", "main", 3)
    ]
    status = cli(capsys, "status", "agent:Main:worker", "--agent", "main", "--json", "--db", url)
    assert json.loads(status.out)["stateVersion"] == 3


def test_a_key_whose_agent_id_is_blank_is_refused_naming_the_key(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    refused = cli(capsys, "record", "goal_changed", "agent:  :x", "--summary", "goal updated", "--db", url)
    assert refused.code != 0
    assert "KEY: starts with 'agent:' but is not agent:<agentId>:<rest>" in refused.err
    assert "agent:  :x" not in cli(capsys, "list", "--db", url).out  # nothing was recorded
