"""Runs scenarios against the real CLIs, several at once, each exactly once per test session.

A run gets its own folder, fake model server and host home. `run` drives the scenario and reads
the evidence; a broken run (a CLI that would not start, a step that timed out) becomes an outcome
with `error` set, never a count.

`Shared` lets the pytest-xdist workers of one session split the scenarios between them: a worker
claims a scenario by creating `<name>.claim` exclusively, runs it, and publishes `<name>.json`
atomically; any test waits for the result file. Each process runs its claims on a few threads, the
longest scenarios first, because most of a run is waiting (a tool's `sleep`, a cron minute).
"""

from __future__ import annotations

import math
import os
import threading
import time
import traceback
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hosts import install
from hosts.claude_host import ClaudeCodeHost
from hosts.codex_host import CodexHost
from hosts.evidence import claude_code_turns, codex_turns, read_store
from hosts.fake_models import FakeAnthropic, FakeModelServer, FakeResponses, scripted
from hosts.scenario import Outcome, Scenario, ScenarioBroken

PARALLEL_VARIABLE = "SESSIONWATCH_HOSTS_PARALLEL"
RESULT_TIMEOUT_S = 900


def parallel_runs() -> int:
    """Scenarios one process runs at once: the variable, else about four over all xdist workers."""
    configured = os.environ.get(PARALLEL_VARIABLE, "").strip()
    if configured:
        return max(1, int(configured))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    total = max(4, 2 * (os.cpu_count() or 2))
    return max(1, math.ceil(total / workers))


def run(scenario: Scenario, folder: Path) -> Outcome:
    """Drive one scenario against its real CLI and read what sessionwatch made of it."""
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    server: FakeModelServer
    if scenario.host == "claude-code":
        server = FakeAnthropic(scripted(scenario.triggers), log_file=folder / "requests.jsonl")
    else:
        server = FakeResponses(scripted(scenario.triggers), log_file=folder / "requests.jsonl")
    error = None
    left: list[str] = []
    with server:
        host: ClaudeCodeHost | CodexHost
        if scenario.host == "claude-code":
            command = install.ensure(install.CLAUDE_CODE)
            host = ClaudeCodeHost(command, folder, server.url, sessionwatch=scenario.sessionwatch)
        else:
            host = CodexHost(
                install.ensure(install.CODEX), folder, server.url, sessionwatch=scenario.sessionwatch
            )
        host.prepare()
        try:
            scenario.drive(host)
        except Exception as exc:  # noqa: BLE001 - a broken run is reported, never counted
            error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"
        finally:
            left = host.clean_up()
    outcome = _outcome(scenario, host, folder, time.monotonic() - started, error)
    outcome.left_running = [_short(line, folder) for line in left]
    (folder / "outcome.json").write_text(outcome.to_json(), encoding="utf-8")
    return outcome


def _outcome(
    scenario: Scenario, host: ClaudeCodeHost | CodexHost, folder: Path, seconds: float, error: str | None
) -> Outcome:
    events = host.events()
    store = read_store(host.store) if scenario.sessionwatch else None
    if isinstance(host, ClaudeCodeHost):
        main, sub = host.transcripts(), host.subagent_transcripts()
        transcripts, subagents = claude_code_turns(main), claude_code_turns(sub)
    else:
        main, sub = host.rollouts(), host.subagent_rollouts()
        transcripts, subagents = codex_turns(main), codex_turns(sub)
    hook = None if store is None else store.human_turns
    sessions = {} if store is None else store.sessions
    return Outcome(
        scenario=scenario.name,
        host=scenario.host,
        how=scenario.how,
        truth=scenario.truth,
        hook_recorded=hook,
        provider_counted=sum(transcripts.values()),
        subagent_counted=sum(subagents.values()),
        prompt_hooks_fired=events.count("UserPromptSubmit"),
        events=events,
        sessions=sessions,
        transcripts=transcripts | subagents,
        folder=str(folder),
        seconds=round(seconds, 1),
        error=error,
    )


def _short(command: str, folder: Path) -> str:
    """A left-over process's command line, the run's folder written as `/ROOT`."""
    return command.replace(str(folder), "/ROOT")[:200]


def run_all(scenarios: Sequence[Scenario], base: Path, *, workers: int | None = None) -> list[Outcome]:
    """Run every scenario (the longest first, several at once); outcomes in the scenarios' order."""
    ordered = sorted(scenarios, key=lambda s: -s.seconds)
    with ThreadPoolExecutor(max_workers=workers or parallel_runs()) as pool:
        futures = {s.name: pool.submit(run, s, base / s.name) for s in ordered}
        return [futures[s.name].result() for s in scenarios]


class Shared:
    """Scenario results shared by every process of one test session, through a folder."""

    def __init__(self, folder: Path, scenarios: Iterable[Scenario]) -> None:
        self.folder = folder
        self.scenarios = {s.name: s for s in scenarios}
        self._started = False
        self._lock = threading.Lock()
        folder.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        """Begin running the unclaimed scenarios on background threads (once per process)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        ordered = sorted(self.scenarios.values(), key=lambda s: -s.seconds)
        pool = ThreadPoolExecutor(max_workers=parallel_runs(), thread_name_prefix="host-scenario")
        for scenario in ordered:
            pool.submit(self._run_if_unclaimed, scenario)
        pool.shutdown(wait=False)

    def _run_if_unclaimed(self, scenario: Scenario) -> None:
        try:
            descriptor = os.open(self.folder / f"{scenario.name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return  # another process runs it
        os.close(descriptor)
        try:
            outcome = run(scenario, self.folder / scenario.name)
        except Exception as exc:  # noqa: BLE001 - published as a broken run for the waiting test
            outcome = Outcome(
                scenario.name,
                scenario.host,
                scenario.how,
                scenario.truth,
                None,
                0,
                0,
                0,
                [],
                {},
                {},
                "",
                0,
                f"{type(exc).__name__}: {exc}",
            )
        partial = self.folder / f".{scenario.name}.json.partial"
        partial.write_text(outcome.to_json(), encoding="utf-8")
        partial.replace(self.folder / f"{scenario.name}.json")

    def outcome(self, name: str, *, timeout: float = RESULT_TIMEOUT_S) -> Outcome:
        """The scenario's outcome, waiting for whichever process runs it. Raises `ScenarioBroken`."""
        self.start()
        result = self.folder / f"{name}.json"
        deadline = time.monotonic() + timeout
        while not result.exists():
            if time.monotonic() > deadline:
                raise ScenarioBroken(f"{name}: no result after {timeout:.0f}s")
            time.sleep(0.5)
        outcome = Outcome.from_json(result.read_text(encoding="utf-8"))
        if outcome.error:
            raise ScenarioBroken(f"{name}: the run broke: {outcome.error}")
        return outcome

    def finished(self) -> list[Outcome]:
        """The outcomes published so far, in scenario order."""
        done = []
        for name in self.scenarios:
            result = self.folder / f"{name}.json"
            if result.exists():
                done.append(Outcome.from_json(result.read_text(encoding="utf-8")))
        return done
