"""The test kit for embedders (SPEC §16): the README's example runs as a test, and the kit is an extra.

The example is the one Python block under the README's `### Test kit for embedders` heading. It
is executed as written, then its `TestCase` runs on a small budget (as a host's pytest would run
it) and its machine is driven by hand through a restart of the host's own store.
"""

from __future__ import annotations

import subprocess
import sys
import unittest
from pathlib import Path

import pytest
from helpers import readme_python_block
from hypothesis import settings

import sessionwatch
from sessionwatch import Actor, Clock, SessionWatch, SignalKind, Waker
from sessionwatch.adapters.extras import install_hint
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.testing import SessionWatchMachine

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "### Test kit for embedders"
MAX_EXAMPLE_LINES = 15
"""The README promises a short example (about ten lines of code)."""
BUDGET = settings(max_examples=5, stateful_step_count=10, deadline=None)

WATCHER = ("agent:main:main", "main")
TARGET = ("global", "main")


def readme_example() -> str:
    """The Python block of the test-kit section (the section ends at the next heading)."""
    return readme_python_block(HEADING)


def run_example() -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "readme_testkit_example"}
    code = compile(readme_example(), str(README), "exec")
    exec(code, namespace)  # noqa: S102 - the README's own code block is what this test runs
    return namespace


def host_machine(namespace: dict[str, object]) -> type[SessionWatchMachine]:
    """The one `SessionWatchMachine` subclass the example defines."""
    machines = [
        value
        for value in namespace.values()
        if isinstance(value, type)
        and issubclass(value, SessionWatchMachine)
        and value is not SessionWatchMachine
    ]
    assert len(machines) == 1, f"the example defines {len(machines)} machines, not one"
    return machines[0]


def test_the_example_is_a_short_host_machine_with_a_collected_test_case() -> None:
    code_lines = [line for line in readme_example().splitlines() if line.strip()]
    assert len(code_lines) <= MAX_EXAMPLE_LINES
    namespace = run_example()
    machine = host_machine(namespace)
    assert "open_watch" in vars(machine), "the host machine opens its own store"
    cases = {
        name: value
        for name, value in namespace.items()
        if isinstance(value, type) and issubclass(value, unittest.TestCase)
    }
    assert cases == {"TestMyHost": machine.TestCase}, "one TestCase, named for pytest to collect it"


def test_the_example_test_case_runs_green() -> None:
    namespace = run_example()
    settings(BUDGET)(host_machine(namespace))  # what `TestMyHost.settings = ...` does in a host
    test_case = namespace["TestMyHost"]
    assert isinstance(test_case, type)
    assert issubclass(test_case, unittest.TestCase)
    result = unittest.TestResult()
    test_case("runTest").run(result)
    assert result.testsRun == 1
    assert result.wasSuccessful(), [text for _, text in (*result.errors, *result.failures)]


def test_the_example_restart_reopens_the_hosts_own_store_with_its_history() -> None:
    machine = host_machine(run_example())()
    try:
        machine.upsert(WATCHER)
        machine.watch_target(WATCHER[0], TARGET, explicit_agent=True, ambient=False)
        machine.record(TARGET, SignalKind.HUMAN_DIRECT_MESSAGE, Actor.human(), [])
        before = machine.watch
        assert not isinstance(before.store, MemorySignalStore)
        machine.restart()  # checks the sweep's wake of the still-pending notice
        assert machine.watch is not before
        machine.cursors_match_the_model()
        machine.one_notice_per_stale_pair_with_the_exact_text()
        machine.heads_match_the_model()
    finally:
        machine.teardown()


class ForgetfulMachine(SessionWatchMachine):
    """A host mistake: every open makes a new store, so a restart loses the history."""

    def __init__(self) -> None:
        self.opened = 0
        super().__init__()

    def open_watch(self, clock: Clock, waker: Waker) -> SessionWatch:
        self.opened += 1
        url = f"sqlite:///{self.tmp_path / f'store-{self.opened}.db'}"
        return sessionwatch.open(url, clock=clock, waker=waker)


def test_a_restart_that_loses_the_store_says_how_to_fix_the_machine() -> None:
    machine = ForgetfulMachine()
    try:
        machine.upsert(WATCHER)
        with pytest.raises(AssertionError, match="reopen_on_restart = False"):
            machine.restart()
    finally:
        machine.teardown()


class SweepingMachine(ForgetfulMachine):
    """The same store, declared as one that does not outlive `close()`: a restart only sweeps."""

    reopen_on_restart = False


def test_a_machine_without_reopening_sweeps_the_open_watch_on_restart() -> None:
    machine = SweepingMachine()
    try:
        machine.upsert(WATCHER)
        machine.watch_target(WATCHER[0], TARGET, explicit_agent=True, ambient=False)
        machine.record(TARGET, SignalKind.GOAL_CHANGED, Actor.system(), [])
        before = machine.watch
        machine.restart()
        assert machine.watch is before
        assert machine.opened == 1
    finally:
        machine.teardown()


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_importing_sessionwatch_does_not_import_hypothesis() -> None:
    result = _python(
        "import sys, sessionwatch\n"
        "sessionwatch.open('memory://').close()\n"
        "print(sorted(m for m in ('hypothesis', 'sessionwatch.testing') if m in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_kit_without_hypothesis_says_which_extra_to_install() -> None:
    result = _python(
        "import sys\n"
        "sys.modules['hypothesis'] = None  # not installed\n"
        "try:\n"
        "    import sessionwatch.testing\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert result.returncode == 0, result.stderr
    assert f"the testing extra: {install_hint('testing')}" in result.stdout
    assert "pip install 'hypothesis>=" in result.stdout
