"""The real-host suite: the pinned CLIs, the scenario results every test reads, and the results table.

The `hosts` fixture installs the pinned CLIs (once, cached outside the repository) and hands out
the scenario outcomes, which the processes of one test session share through a folder under the
session's base temporary directory (see `hosts.runner.Shared`). Only the scenarios of the selected
tests run. Without node, npm or tmux, or when the npm install fails, the tests skip with the
reason, unless `SESSIONWATCH_REQUIRE_HOSTS=1`, where they fail.

At the end of a run that reached the hosts, the terminal summary prints the results table.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hosts import install
from hosts.claude_scenarios import SCENARIOS as CLAUDE_CODE_SCENARIOS
from hosts.codex_scenarios import SCENARIOS as CODEX_SCENARIOS
from hosts.runner import Shared
from hosts.scenario import Scenario, table

ALL = {scenario.name: scenario for scenario in (*CLAUDE_CODE_SCENARIOS, *CODEX_SCENARIOS)}
SELECTED = pytest.StashKey[list[str]]()
FOLDER = "host-scenarios"


@pytest.hookimpl(trylast=True)  # after -k and -m deselected what they deselect
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember which scenarios the selected tests read, so only those run."""
    names: list[str] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        scenario = callspec.params.get("scenario") if callspec is not None else None
        if isinstance(scenario, Scenario) and scenario.name not in names:
            names.append(scenario.name)
        for marker in item.iter_markers("scenarios"):
            names.extend(name for name in marker.args if name not in names)
    config.stash[SELECTED] = names


def _shared_folder(base: Path) -> Path:
    """The folder every process of this session shares: the xdist workers' common parent."""
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / FOLDER


@pytest.fixture(scope="session")
def hosts(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Shared:
    """The scenario outcomes of this session (the pinned CLIs installed first)."""
    try:
        for pin in install.PINS:
            install.ensure(pin)
    except install.HostUnavailable as exc:
        reason = f"the real hosts cannot run here: {exc}"
        if install.required():
            pytest.fail(f"{reason} ({install.REQUIRE_VARIABLE} is set)")
        pytest.skip(reason)
    names = request.config.stash.get(SELECTED, list(ALL))
    return Shared(_shared_folder(tmp_path_factory.getbasetemp()), [ALL[name] for name in names])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """The results table of the scenarios that ran, per host."""
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None or os.environ.get("PYTEST_XDIST_WORKER") or not config.stash.get(SELECTED, []):
        return
    folder = factory.getbasetemp() / FOLDER
    if not folder.is_dir():
        return
    outcomes = Shared(folder, ALL.values()).finished()
    labels = (
        ("claude-code", f"Claude Code {install.CLAUDE_CODE.version}"),
        ("codex", f"Codex {install.CODEX.version}"),
    )
    for host, label in labels:
        rows = [outcome for outcome in outcomes if outcome.host == host]
        if rows:
            terminalreporter.write_sep("-", f"real hosts: {label}")
            terminalreporter.write_line(table(rows, ALL))
