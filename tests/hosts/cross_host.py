"""A lead in one host watching a worker in the other: the notice reaches the lead's next model request once.

Both hosts run in one project with sessionwatch installed by their own installers and one store,
each against its own fake model server. The lead starts, the worker starts; the lead watches the
worker (as a person or a host registers a watch); a person types a prompt into the worker; then
the lead's next two prompts. What sessionwatch put in front of the lead's model is read from the
lead's fake server log: in each request, the input that is new since the model's last answer (the
lead's new turn, with what its prompt hook added). The notice's heading must be in the first one,
naming the worker, and in nothing after it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hosts import install
from hosts.claude_host import ClaudeCodeHost
from hosts.codex_host import CodexHost
from hosts.fake_models import FakeAnthropic, FakeResponses, scripted
from hosts.scenario import ScenarioBroken

import sessionwatch
from sessionwatch.integrations import claude_code, codex

HEADING = "changed since this session looked:"
"""The heading of the notices a prompt hook hands over (`notice_context`), and only there."""
TYPED = "fix the refund retries please"
"""What the person types into the worker."""
LEAD_PROMPTS = ("hello, I lead this project", "what is the worker doing?", "thanks, carry on")
_NOTICE_LINE = re.compile(r'^- Session "([^"]+)" changed \(other actor\)', re.MULTILINE)


@dataclass(frozen=True)
class Delivery:
    """What the lead's model got with one prompt: the notice headings, and the sessions their lines name."""

    prompt: str
    headings: int
    notices: tuple[str, ...]


def new_input(body: Mapping[str, Any]) -> list[Any]:
    """The part of a request after the model's last answer: the turn being asked for."""
    messages = body.get("messages")
    if isinstance(messages, list):  # Anthropic Messages
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        return messages[last + 1 :]
    items = body.get("input")
    if not isinstance(items, list):  # OpenAI Responses
        return []
    answers = {"function_call_output", "custom_tool_call_output", "reasoning", "function_call"}
    last = max(
        (i for i, item in enumerate(items) if item.get("role") == "assistant" or item.get("type") in answers),
        default=-1,
    )
    return items[last + 1 :]


def _texts(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    return []


def deliveries(requests: list[dict[str, Any]]) -> list[Delivery]:
    """For each lead prompt, what the first model request carrying it held that was new."""
    found = []
    for prompt in LEAD_PROMPTS:
        bodies = [r["body"] for r in requests if isinstance(r.get("body"), dict)]
        carrying = [b for b in bodies if any(prompt in text for text in _texts(new_input(b)))]
        if not carrying:
            raise ScenarioBroken(f"no model request carried the lead's prompt {prompt!r}")
        texts = _texts(new_input(carrying[0]))
        headings = sum(text.count(HEADING) for text in texts)
        named = tuple(key for text in texts for key in _NOTICE_LINE.findall(text))
        found.append(Delivery(prompt, headings, named))
    return found


def _requests(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _session_id(inputs: list[dict[str, object]]) -> str:
    for entry in inputs:
        hook_input = entry.get("input")
        if isinstance(hook_input, dict) and hook_input.get("hook_event_name") == "SessionStart":
            return str(hook_input["session_id"])
    raise ScenarioBroken(f"no SessionStart among {len(inputs)} hook runs")


def _watch(store: Path, lead: str, worker: str) -> None:
    with sessionwatch.open(str(store)) as watch:
        if not watch.watch(lead, worker):
            raise ScenarioBroken(f"{lead} could not watch {worker}")


def _exec(host: CodexHost, *arguments: str) -> None:
    done = host.exec_run(*arguments)
    if done.returncode != 0 or '"turn.completed"' not in done.stdout:
        raise ScenarioBroken(f"codex exec {arguments} failed: {done.stdout[-600:]} {done.stderr[-600:]}")
    host.wait_for_hooks("SessionEnd", host.events().count("SessionEnd"), timeout=30)


def claude_code_lead_codex_worker(root: Path) -> tuple[list[Delivery], str]:
    """A Claude Code lead (stream-json) watching a Codex worker (`codex exec`)."""
    project, store = root / "project", root / "sessionwatch.db"
    with (
        FakeAnthropic(scripted(), log_file=root / "lead-requests.jsonl") as anthropic,
        FakeResponses(scripted(), log_file=root / "worker-requests.jsonl") as responses,
    ):
        lead = ClaudeCodeHost(
            install.ensure(install.CLAUDE_CODE), root / "lead", anthropic.url, project=project, store=store
        ).prepare()
        worker = CodexHost(
            install.ensure(install.CODEX), root / "worker", responses.url, project=project, store=store
        )
        worker.prepare()
        try:
            with lead.stream() as stream:
                _lead_prompt(stream.send, stream.results, stream.wait, 0)
                lead_key = claude_code.session_key(project, _session_id(lead.hook_inputs()))
                _exec(worker, "warm up")
                worker_key = codex.session_key(project, _session_id(worker.hook_inputs()))
                _watch(store, lead_key, worker_key)
                _exec(worker, "resume", "--last", TYPED)
                for number in (1, 2):
                    _lead_prompt(stream.send, stream.results, stream.wait, number)
        finally:
            lead.clean_up()
            worker.clean_up()
    return deliveries(_requests(root / "lead-requests.jsonl")), worker_key


def codex_lead_claude_code_worker(root: Path) -> tuple[list[Delivery], str]:
    """A Codex lead (`codex exec`, then `resume`) watching a Claude Code worker (stream-json)."""
    project, store = root / "project", root / "sessionwatch.db"
    with (
        FakeResponses(scripted(), log_file=root / "lead-requests.jsonl") as responses,
        FakeAnthropic(scripted(), log_file=root / "worker-requests.jsonl") as anthropic,
    ):
        lead = CodexHost(
            install.ensure(install.CODEX), root / "lead", responses.url, project=project, store=store
        )
        lead.prepare()
        worker = ClaudeCodeHost(
            install.ensure(install.CLAUDE_CODE), root / "worker", anthropic.url, project=project, store=store
        ).prepare()
        try:
            _exec(lead, LEAD_PROMPTS[0])
            lead_key = codex.session_key(project, _session_id(lead.hook_inputs()))
            with worker.stream() as stream:
                stream.send("warm up")
                stream.wait(lambda s: s.results() >= 1, timeout=120, what="the worker's first turn")
                worker_key = claude_code.session_key(project, _session_id(worker.hook_inputs()))
                _watch(store, lead_key, worker_key)
                stream.send(TYPED)
                stream.wait(lambda s: s.results() >= 2, timeout=120, what="the worker's typed turn")
            for prompt in LEAD_PROMPTS[1:]:
                _exec(lead, "resume", "--last", prompt)
        finally:
            lead.clean_up()
            worker.clean_up()
    return deliveries(_requests(root / "lead-requests.jsonl")), worker_key


def _lead_prompt(
    send: Callable[[str], None], results: Callable[[], int], wait: Callable[..., None], number: int
) -> None:
    send(LEAD_PROMPTS[number])
    wait(lambda _stream: results() >= number + 1, timeout=120, what=f"the lead's turn {number + 1}")
