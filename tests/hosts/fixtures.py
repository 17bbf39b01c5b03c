"""Small regression fixtures captured from real runs, labelled with the CLI version that wrote them.

`capture` copies what one run wrote into `tests/data/hosts/<cli>-<version>/<scenario>/`: every
transcript or rollout (flat, by file name; sub-agents' under `subagents/`), the hook inputs the
recording hook got (`hooks.jsonl`, with the host's own environment variables), and `expected.json`
(the ground truth and what sessionwatch made of the run). They stay small and machine-free:

- the run's folder becomes `/ROOT` everywhere (and its dashed form, as Claude Code names project
  folders, `-ROOT`), the repository `/REPO`, the Python running the hooks `/PYTHON`, the CLIs'
  cache `/CACHE` and Claude Code's own temporary folder `/TMP/claude`;
- a string longer than `LONG` characters (system prompts, skill listings, tool schemas) keeps its
  first `KEPT` characters and says how many it dropped, unless that changes what the provider
  counts in the file, which `capture` checks, keeping the file whole otherwise;
- no secret goes in: the fake API key is refused.

`replay_path` turns a captured `/ROOT/...` path back into the fixture folder.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from hosts import install
from hosts.claude_host import API_KEY
from hosts.evidence import claude_code_turns, codex_turns
from hosts.scenario import Outcome

DATA = Path(__file__).resolve().parents[1] / "data" / "hosts"
REPO = Path(__file__).resolve().parents[2]
LONG = 1500
KEPT = 300


def folder_for(host: str) -> Path:
    """`tests/data/hosts/<cli>-<version>/` of the host's pinned CLI."""
    pin = install.CLAUDE_CODE if host == "claude-code" else install.CODEX
    return DATA / pin.label


def capture(outcome: Outcome) -> Path:
    """Write the run's fixture folder (replacing an older capture of the same scenario)."""
    target = folder_for(outcome.host) / outcome.scenario
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    count = claude_code_turns if outcome.host == "claude-code" else codex_turns
    replace = _replacements(outcome.root)
    for name in outcome.transcripts:
        source = outcome.transcript_path(name)
        destination = target / ("subagents" if _is_subagent(outcome, name) else "") / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        lines = [replace(line) for line in source.read_text(encoding="utf-8").splitlines()]
        destination.write_text("".join(_shortened(line) + "\n" for line in lines), encoding="utf-8")
        if count([destination]) != count([source]):  # shortening changed a verdict: keep the file whole
            destination.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    hooks = outcome.root / "hooks.jsonl"
    if hooks.exists():
        lines = [
            replace(_flat_transcript_paths(line, outcome))
            for line in hooks.read_text(encoding="utf-8").splitlines()
        ]
        (target / "hooks.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    expected = {
        "truth": outcome.truth,
        "how": outcome.how,
        "hook_recorded": outcome.hook_recorded,
        "provider_counted": outcome.provider_counted,
        "subagent_counted": outcome.subagent_counted,
        "prompt_hooks_fired": outcome.prompt_hooks_fired,
        "events": outcome.events,
    }
    (target / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    for written in target.rglob("*"):
        if written.is_file() and API_KEY in written.read_text(encoding="utf-8"):
            raise ValueError(f"{written} holds the API key")
    return target


def _is_subagent(outcome: Outcome, name: str) -> bool:
    path = outcome.transcript_path(name)
    if outcome.host == "claude-code":
        return "subagents" in path.parts
    from hosts.codex_host import is_subagent_rollout  # noqa: PLC0415 - only the Codex captures need it

    return is_subagent_rollout(path)


def _flat_transcript_paths(line: str, outcome: Outcome) -> str:
    """Point the hook input's transcript paths at the transcript's place in the fixture folder."""
    for name in outcome.transcripts:
        original = str(outcome.transcript_path(name))
        flat = f"/ROOT/{'subagents/' if _is_subagent(outcome, name) else ''}{name}"
        line = line.replace(json.dumps(original)[1:-1], flat)
    return line


def _replacements(root: Path) -> Callable[[str], str]:
    pairs = [
        (str(root), "/ROOT"),
        (str(root).replace("/", "-").replace(".", "-").replace("_", "-"), "-ROOT"),
        (str(REPO), "/REPO"),
        (sys.executable, "/PYTHON"),
        (str(install.cache_root()), "/CACHE"),
        (f"/tmp/claude-{os.getuid()}", "/TMP/claude"),  # noqa: S108 - a path Claude Code writes, replaced
    ]

    def replace(line: str) -> str:
        for old, new in pairs:
            line = line.replace(old, new)
        return line

    return replace


def _shortened(line: str) -> str:
    """The record with its long strings cut (see the module docstring); other lines as they are."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    return json.dumps(_cut(record), ensure_ascii=False, separators=(",", ":"))


def _cut(value: object) -> object:
    if isinstance(value, str) and len(value) > LONG:
        return f"{value[:KEPT]}[... {len(value) - KEPT} characters cut by the capture]"
    if isinstance(value, list):
        return [_cut(item) for item in value]
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    return value


def replay_path(path: str, fixture: Path) -> Path:
    """A captured `/ROOT/...` path inside the fixture folder."""
    return fixture / path.removeprefix("/ROOT/")


def captured(host: str) -> list[Path]:
    """The captured scenario folders of a host, by name."""
    folder = folder_for(host)
    return sorted(path for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []
