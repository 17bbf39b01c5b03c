"""The fixtures captured from real runs (tests/data/hosts/): what sessionwatch makes of them, offline.

They need no CLI, so they run everywhere. The provider reads the captured transcripts; for Claude
Code, the captured hook inputs go through `sessionwatch claude-code hook`'s handler in this process
against a fresh store whose lead watches the session from its start, as in the real run, each
against its transcript as it was when the hook ran (the lines it held then); for Codex,
`sessionwatch codex hook`'s handler on the captured rollouts, which are whole from the first hook
on, so it is the rule the hook follows them with that is checked, not when it reads them. Each must
give the ground truth, except where the scenario names why sessionwatch is wrong today (expected
failures). That the capture still matches its own run is checked too, so a fixture cannot drift.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet
from hosts.claude_host import LEAD
from hosts.claude_scenarios import SCENARIOS as CLAUDE_CODE
from hosts.codex_scenarios import SCENARIOS as CODEX
from hosts.evidence import claude_code_turns, codex_turns, read_store
from hosts.fixtures import captured, replay_path
from hosts.scenario import Scenario

import sessionwatch
from sessionwatch.integrations import codex
from sessionwatch.integrations.claude_code import EVENTS, handle_hook, project_dir, session_key

SCENARIOS = {scenario.name: scenario for scenario in (*CLAUDE_CODE, *CODEX)}


def _params(host: str, reason_of: str) -> list[ParameterSet]:
    chosen: list[ParameterSet] = []
    for folder in captured(host):
        scenario = SCENARIOS[folder.name]
        reason = getattr(scenario, reason_of)
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if reason else []
        chosen.append(pytest.param(folder, scenario, id=folder.name, marks=marks))
    return chosen


def _has_subagents(param: ParameterSet) -> bool:
    folder = param.values[0]
    return isinstance(folder, Path) and (folder / "subagents").is_dir()


def _with_sessionwatch(param: ParameterSet) -> bool:
    scenario = param.values[1]
    return isinstance(scenario, Scenario) and scenario.sessionwatch


def _expected(folder: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return loaded


def _main_transcripts(folder: Path) -> list[Path]:
    return sorted(path for path in folder.glob("*.jsonl") if path.name != "hooks.jsonl")


def _subagent_transcripts(folder: Path) -> list[Path]:
    return sorted((folder / "subagents").glob("*.jsonl"))


def test_every_scenario_of_both_hosts_was_captured() -> None:
    names = {folder.name for host in ("claude-code", "codex") for folder in captured(host)}
    assert names == set(SCENARIOS)


@pytest.mark.parametrize(("folder", "scenario"), _params("claude-code", "provider_wrong"))
def test_claude_code_provider_counts_the_captured_transcripts_right(folder: Path, scenario: Scenario) -> None:
    counted = sum(claude_code_turns(_main_transcripts(folder)).values())
    assert counted == _expected(folder)["provider_counted"], "the capture no longer matches its run"
    assert counted == scenario.truth


@pytest.mark.parametrize(("folder", "scenario"), _params("codex", "provider_wrong"))
def test_codex_provider_counts_the_captured_rollouts_right(folder: Path, scenario: Scenario) -> None:
    counted = sum(codex_turns(_main_transcripts(folder)).values())
    assert counted == _expected(folder)["provider_counted"], "the capture no longer matches its run"
    assert counted == scenario.truth


@pytest.mark.parametrize(
    ("folder", "scenario"),
    [p for p in _params("codex", "subagent_wrong") if _has_subagents(p)],
)
def test_codex_provider_counts_nothing_in_captured_sub_agent_rollouts(
    folder: Path, scenario: Scenario
) -> None:
    rollouts = _subagent_transcripts(folder)
    assert rollouts, f"{scenario.name}: no sub-agent rollout was captured"
    counted = sum(codex_turns(rollouts).values())
    assert counted == _expected(folder)["subagent_counted"], "the capture no longer matches its run"
    assert counted == 0


@pytest.mark.parametrize(
    ("folder", "scenario"),
    [p for p in _params("claude-code", "hook_wrong") if _with_sessionwatch(p)],
)
def test_claude_code_hook_records_the_captured_hook_inputs_right(
    folder: Path, scenario: Scenario, tmp_path: Path
) -> None:
    store = tmp_path / "replay.db"
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    for line in (folder / "hooks.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        hook_input, environ = entry["input"], _environ(entry["env"], folder)
        if not isinstance(hook_input, dict) or hook_input.get("hook_event_name") not in EVENTS:
            continue
        hook_input = {**hook_input, "cwd": str(replay_path(str(hook_input["cwd"]), folder))}
        named = hook_input.get("transcript_path")
        if isinstance(named, str):
            replayed = transcripts / Path(named).name
            whole = hook_input["hook_event_name"] == "SessionEnd"  # the hook waits for the last lines
            _as_the_hook_saw_it(folder / Path(named).name, replayed, None if whole else entry)
            hook_input["transcript_path"] = str(replayed)
        if hook_input["hook_event_name"] == "SessionStart" and hook_input.get("source") == "startup":
            key = session_key(project_dir(hook_input, environ), hook_input["session_id"])
            with sessionwatch.open(str(store), sweep_on_open=False, cross_process_wakes=False) as watch:
                watch.watch(LEAD, key)
        handle_hook(hook_input, db=str(store), environ=environ, settle=0)
    recorded = read_store(store).human_turns
    assert recorded == _expected(folder)["hook_recorded"], "the capture no longer matches its run"
    assert recorded == scenario.truth


def _as_the_hook_saw_it(captured: Path, replayed: Path, entry: dict[str, object] | None) -> None:
    """The transcript as the hook read it: its first `transcript_lines` lines (none: no file yet).

    Without an entry (a `SessionEnd`, whose hook waits for Claude Code's last lines) or a count (an
    older capture), the whole transcript.
    """
    if not captured.exists():
        return
    lines = captured.read_bytes().splitlines(keepends=True)
    count = len(lines) if entry is None else entry.get("transcript_lines", len(lines))
    if isinstance(count, int):
        replayed.write_bytes(b"".join(lines[:count]))


def _environ(captured_environ: dict[str, str], folder: Path) -> dict[str, str]:
    """The hook's environment with the captured project folder inside the fixture folder."""
    return {
        name: str(replay_path(value, folder)) if value.startswith("/ROOT/") else value
        for name, value in captured_environ.items()
    }


@pytest.mark.parametrize(
    ("folder", "scenario"),
    [p for p in _params("codex", "hook_wrong") if _with_sessionwatch(p)],
)
def test_codex_hook_records_the_captured_hook_inputs_right(
    folder: Path, scenario: Scenario, tmp_path: Path
) -> None:
    store = str(tmp_path / "replay.db")
    for line in (folder / "hooks.jsonl").read_text(encoding="utf-8").splitlines():
        hook_input = json.loads(line)["input"]
        if not isinstance(hook_input, dict) or hook_input.get("hook_event_name") not in codex.EVENTS:
            continue
        hook_input = {
            **hook_input,
            "cwd": str(replay_path(str(hook_input["cwd"]), folder)),
            "transcript_path": str(replay_path(str(hook_input["transcript_path"]), folder)),
        }
        key = codex.session_key(codex.project_dir(hook_input), hook_input["session_id"])
        with sessionwatch.open(store, sweep_on_open=False, cross_process_wakes=False) as watch:
            watch.watch(LEAD, key)  # the lead watches each session from its first hook, as in the run
        codex.handle_hook(hook_input, db=store, environ={})
    recorded = read_store(Path(store)).human_turns
    assert recorded == _expected(folder)["hook_recorded"], "the capture no longer matches its run"
    assert recorded == scenario.truth
