"""A scenario with a known ground truth, and what one real run of it showed.

A `Scenario` names what a person does in a host (its `drive` step, run against the real CLI), how
many human turns that is (`truth`: what a person typed, whatever the host does with it), and, where
sessionwatch is known to get it wrong today, why (`hook_wrong`, `provider_wrong`): the tests mark
exactly those rows as expected failures. It also pins what the host itself does: how many times it
runs the prompt hook (`prompt_hooks`), which the hook design depends on.

An `Outcome` is the JSON-able result of one run: the hook's and the provider's counts, the hook
events the host fired, the sessions the store holds, and where the run's files are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from hosts.fake_models import ToolCall

Host = Literal["claude-code", "codex"]


class ScenarioBroken(Exception):  # noqa: N818 - names the condition
    """The run itself failed (the CLI did not start, a step timed out): not a verdict on sessionwatch."""


@dataclass(frozen=True)
class Scenario:
    """What a person does, in which host and how, and the human turns that makes."""

    name: str
    host: Host
    how: str
    truth: int
    drive: Callable[[Any], None]
    prompt_hooks: int
    """How many `UserPromptSubmit` inputs the real CLI sends its hooks in this scenario."""
    triggers: Mapping[str, ToolCall] = field(default_factory=dict)
    hook_wrong: str | None = None
    provider_wrong: str | None = None
    subagent_wrong: str | None = None
    """Why the provider counts something in a sub-agent's (or review's) own transcript."""
    sessionwatch: bool = True
    """Install sessionwatch's hook and MCP server in the project (with a lead watching the session)."""
    store_sessions: int | None = None
    """Claude Code only: how many sessions the store should hold afterwards (None: not checked)."""
    store_wrong: str | None = None
    seconds: float = 20
    """A rough run time, so the longest scenarios start first."""
    shape: str = ""
    """The shape of the issue's list this scenario covers, in a few words."""


@dataclass
class Outcome:
    """What one run of a scenario showed."""

    scenario: str
    host: str
    how: str
    truth: int
    hook_recorded: int | None
    provider_counted: int
    subagent_counted: int
    prompt_hooks_fired: int
    events: list[str]
    sessions: dict[str, int]
    transcripts: dict[str, int]
    folder: str
    seconds: float
    error: str | None = None
    left_running: list[str] = field(default_factory=list)
    """Processes of the run still alive once the host exited (ended by the harness)."""

    def to_json(self) -> str:
        """The outcome as one JSON document."""
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> Outcome:
        """An outcome written by `to_json`."""
        return cls(**json.loads(text))

    @property
    def root(self) -> Path:
        """The run's folder (hook inputs, transcripts, the store)."""
        return Path(self.folder)

    def hook_inputs(self) -> list[dict[str, Any]]:
        """Every hook input the recording hook got, in order."""
        path = self.root / "hooks.jsonl"
        if not path.exists():
            return []
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [entry["input"] for entry in entries if isinstance(entry.get("input"), dict)]

    def hook_environments(self) -> list[dict[str, str]]:
        """The host's own environment variables each hook run saw, in order."""
        path = self.root / "hooks.jsonl"
        if not path.exists():
            return []
        return [
            json.loads(line)["env"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
        ]

    def transcript_path(self, name: str) -> Path:
        """The transcript (or rollout) of the run with this file name."""
        found = sorted(self.root.rglob(name))
        if len(found) != 1:
            raise ScenarioBroken(f"{self.scenario}: {len(found)} files named {name}")
        return found[0]

    def records(self, name: str) -> list[dict[str, Any]]:
        """The JSON records of one transcript (or rollout) of the run, by file name."""
        text = self.transcript_path(name).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def requests(self) -> list[dict[str, Any]]:
        """Every request the fake model server logged."""
        path = self.root / "requests.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table(outcomes: list[Outcome], scenarios: Mapping[str, Scenario]) -> str:
    """The results as a Markdown table: scenario, how it ran, truth, hook recorded, provider counted."""
    head = (
        "| scenario | how it ran | ground truth | hook recorded | provider counted "
        "| sub-agent transcripts counted | prompt hook fired | known wrong |"
    )
    rule = "|---|---|---|---|---|---|---|---|"
    rows = [head, rule]
    for outcome in outcomes:
        scenario = scenarios.get(outcome.scenario)
        wrong = []
        if scenario is not None and scenario.hook_wrong:
            wrong.append("hook")
        if scenario is not None and scenario.provider_wrong:
            wrong.append("provider")
        if scenario is not None and scenario.subagent_wrong:
            wrong.append("sub-agent")
        if scenario is not None and scenario.store_wrong:
            wrong.append("store")
        hook = "n/a" if outcome.hook_recorded is None else str(outcome.hook_recorded)
        if outcome.error:
            hook = provider = "error"
            wrong = [outcome.error.splitlines()[0][:60]]
        else:
            provider = str(outcome.provider_counted)
        rows.append(
            f"| {outcome.scenario} | {outcome.how} | {outcome.truth} | {hook} | {provider} | "
            f"{outcome.subagent_counted} | {outcome.prompt_hooks_fired} | {', '.join(wrong) or '-'} |"
        )
    return "\n".join(rows)
