"""The demo's upstream scene: a Claude Code and a Codex session adopted, watched, and read by the monitor.

Shell code only. The transcripts are small files written here in the shapes the two tools write
(`~/.claude/projects/<project>/<session>.jsonl`, `~/.codex/sessions/.../rollout-*.jsonl`), in a
temporary folder that is gone afterwards; only what a person typed becomes a human turn.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider, marker_at_end

Json = dict[str, Any]

_STAMP = "2026-01-01T12:00:00.000Z"


def _claude_user(content: object) -> Json:
    return {"type": "user", "message": {"role": "user", "content": content}, "timestamp": _STAMP}


def _codex_user(text: str) -> Json:
    payload = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return {"timestamp": _STAMP, "type": "response_item", "payload": payload}


_ABSORBED: Json = {
    "type": "queued_command",
    "prompt": "Also fix it.",
    "commandMode": "prompt",
    "origin": {"kind": "human"},
}
"""How Claude Code delivers a prompt typed while a tool ran into the running turn."""

_CLAUDE_BEFORE = [_claude_user("Set up the project.")]
_CLAUDE_AFTER = [
    _claude_user("Why does the login test fail?"),  # typed: counts
    _claude_user("<task-notification>the build finished</task-notification>"),  # the tool's own
    _claude_user("<bash-stdout>3 passed</bash-stdout><bash-stderr></bash-stderr>"),  # a shell echo
    {"type": "queue-operation", "operation": "enqueue", "timestamp": _STAMP, "content": "Also fix it."},
    {"type": "queue-operation", "operation": "remove", "timestamp": _STAMP},
    {"type": "attachment", "attachment": _ABSORBED, "timestamp": _STAMP},  # delivered: counts
]
"""One prompt typed, one typed while the agent was busy (queued, then absorbed into the running turn):
2 human turns, the rest the tool's."""
_CODEX_BEFORE = [_codex_user("<environment_context>cwd: /repo</environment_context>")]
_CODEX_AFTER = [
    _codex_user("<user_instructions>follow AGENTS.md</user_instructions>"),  # injected, not typed
    _codex_user("Add a retry to the upload."),  # typed: counts
]
"""One prompt typed after the context Codex injects itself: 1 human turn."""


def _write(path: Path, records: list[Json]) -> None:
    with path.open("a", encoding="utf-8") as transcript:
        transcript.writelines(json.dumps(record) + "\n" for record in records)


def upstream_step(watch: SessionWatch, say: Callable[[str], None], *, manager: str, run: str) -> Json:
    """Adopt one session of each tool, let a person and the tools write, run one monitor pass."""
    sessions = {
        "claude-code": (f"agent:main:claude-code-{run}", _CLAUDE_BEFORE, _CLAUDE_AFTER),
        "codex": (f"agent:main:codex-{run}", _CODEX_BEFORE, _CODEX_AFTER),
    }
    with tempfile.TemporaryDirectory(prefix="sessionwatch-demo-") as folder:
        for catalog, (key, before, after) in sessions.items():
            path = Path(folder) / f"{catalog}.jsonl"
            _write(path, before)  # history before adoption is never counted
            watch.link_upstream(
                key,
                catalog_id=catalog,
                host_id="local",
                thread_id=run,
                upstream_kind="transcript",
                upstream_ref=str(path),
                marker=marker_at_end(path),
            )
            watch.watch(manager, key)
            _write(path, after)
        providers = {
            "claude-code": JsonlTranscriptProvider.claude_code(),
            "codex": JsonlTranscriptProvider.codex(),
        }
        tick = watch.upstream_tick(providers)
    turns = {signal.session_key: (signal.payload or {}).get("turns", 1) for signal in tick.recorded}
    claude, codex = sessions["claude-code"][0], sessions["codex"][0]
    say("9. Two sessions adopted from coding tools, watched through their transcript files:")
    say(
        f"     Claude Code: {turns.get(claude, 0)} human turns (a typed prompt, and one queued while the "
        "agent was busy; its task notification and shell echo are not a person)"
    )
    drained = watch.drain(manager)
    say(
        f"     Codex: {turns.get(codex, 0)} human turn (the context Codex injects itself is not a person); "
        f"the manager drains the {len(drained)} notices they raised"
    )
    return {"claudeCode": turns.get(claude, 0), "codex": turns.get(codex, 0)}
