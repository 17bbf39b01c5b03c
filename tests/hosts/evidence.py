"""What sessionwatch made of a real run: the turns its hook recorded, the turns its provider counts.

Both are read after the host exited. The hook's side is the store the installed hook wrote (every
session in it, the turns of every `human_direct_message`: one signal may stand for a burst); the
provider's side is `JsonlTranscriptProvider` run over each transcript the host wrote, tick by tick
from the start as the monitor would, until it has nothing more to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

import sessionwatch
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider
from sessionwatch.domain.upstream import UpstreamActivity, UpstreamProbe

HUMAN = "human_direct_message"


@dataclass(frozen=True)
class StoreReading:
    """The sessions a store holds and the human turns recorded for each."""

    sessions: dict[str, int]

    @property
    def human_turns(self) -> int:
        """Human turns recorded, over every session."""
        return sum(self.sessions.values())


def read_store(path: Path) -> StoreReading:
    """Every session of a SQLite store and its `human_direct_message` count (empty when no file)."""
    if not path.exists():
        return StoreReading({})
    counts: dict[str, int] = {}
    with sessionwatch.open(str(path), sweep_on_open=False, cross_process_wakes=False) as watch:
        for row in watch.sessions_list():
            status = watch.session_status(row.session_key, changes_since=0, limit=1000)
            changes = status.state_changes.events if status.state_changes is not None else ()
            counts[row.session_key] = sum(turns(change.payload) for change in changes if change.kind == HUMAN)
    return StoreReading(counts)


def turns(payload: object) -> int:
    """The human turns one `human_direct_message` stands for: its `turns` when a burst, else one."""
    count = payload.get("turns") if isinstance(payload, dict) else None
    return count if isinstance(count, int) else 1


def provider_turns(provider: JsonlTranscriptProvider, path: Path) -> int:
    """The human turns the provider counts in one transcript, read from the start to its end."""
    marker: JsonValue = None
    turns = 0
    for _ in range(path.stat().st_size + 2):  # each answering tick consumes at least one byte
        answers = provider.check_upstream_activity([_probe(path, marker)])
        if not answers:
            return turns
        answer = answers[0]
        if not isinstance(answer, UpstreamActivity):
            return turns  # the file vanished
        turns += answer.human_turns
        marker = answer.next_marker
    raise AssertionError(f"the provider never reached the end of {path}")


def _probe(path: Path, marker: JsonValue) -> UpstreamProbe:
    return UpstreamProbe(
        session_key="agent:hosts:transcript",
        agent_id="hosts",
        catalog_id="hosts",
        host_id="hosts",
        thread_id="hosts",
        upstream_kind="transcript",
        upstream_ref=str(path),
        marker=marker,
        own_recent_user_texts=(),
    )


def claude_code_turns(paths: list[Path]) -> dict[str, int]:
    """What the Claude Code provider counts, per transcript (named by file name)."""
    provider = JsonlTranscriptProvider.claude_code()
    return {path.name: provider_turns(provider, path) for path in paths}


def codex_turns(paths: list[Path]) -> dict[str, int]:
    """What the Codex provider counts, per rollout (named by file name)."""
    provider = JsonlTranscriptProvider.codex()
    return {path.name: provider_turns(provider, path) for path in paths}
