"""Claude Code's prompt queue: however its lines interleave, each delivered prompt counts once.

A person may type several prompts while the agent is busy; Claude Code writes each one's
`enqueue`, may pull them all back (`popAll`) and take them again, and delivers each as a `user`
record after a `dequeue` or as a `queued_command` attachment after a `remove`, or never (withdrawn,
or still queued when the session ends). A cron prompt goes through the same queue and is delivered
with its labels. The lines of different prompts interleave freely. Whatever the interleaving and
wherever the ticks fall, the provider counts exactly the prompts a person typed that reached the
session, each once.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import claude_transcripts as cc
from claude_transcripts import line
from hypothesis import given
from hypothesis import strategies as st
from transcript_probes import read_while_written

from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider

Record = dict[str, object]
FATES = ("delivered", "absorbed", "absorbed-unlabelled", "withdrawn", "left-queued", "cron")


@dataclass(frozen=True)
class Queued:
    """One prompt through the queue: its words, its fate, and how often it was pulled back first."""

    words: str
    fate: str
    pulled_back: int

    @property
    def reaches_the_session_as_a_persons(self) -> bool:
        return self.fate in {"delivered", "absorbed", "absorbed-unlabelled"}

    def records(self) -> list[Record]:
        """This prompt's lines, in the order Claude Code writes them."""
        lines: list[Record] = []
        for _ in range(self.pulled_back):
            lines += [cc.enqueue(self.words), cc.queue_operation("popAll", content=self.words)]
        if self.fate == "withdrawn":
            return lines
        lines.append(cc.enqueue(self.words))
        match self.fate:
            case "delivered":
                lines += [cc.queue_operation("dequeue"), cc.prompt(self.words, promptSource="typed")]
            case "absorbed" | "absorbed-unlabelled":
                labelled = self.fate == "absorbed"
                lines += [cc.queue_operation("remove"), cc.queued_command(self.words, labelled=labelled)]
            case "cron":
                lines += [
                    cc.queue_operation("dequeue"),
                    cc.scheduled_task_fire(),
                    cc.scheduled_prompt(self.words),
                ]
        return lines


queued_prompts = st.builds(
    Queued,
    words=st.sampled_from(["continue", "fix the build", "and the tests", "check the deploy"]),
    fate=st.sampled_from(FATES),
    pulled_back=st.integers(min_value=0, max_value=2),
)


@st.composite
def interleaved(draw: st.DrawFn) -> tuple[list[Queued], list[Record]]:
    """Some queued prompts and one interleaving of their lines (each prompt's own order kept)."""
    prompts = draw(st.lists(queued_prompts, max_size=6))
    pending = [p.records() for p in prompts]
    merged: list[Record] = []
    while any(pending):
        choices = [i for i, lines in enumerate(pending) if lines]
        chosen = draw(st.sampled_from(choices))
        merged.append(pending[chosen].pop(0))
        if draw(st.booleans()):
            merged.append(draw(st.sampled_from([cc.assistant("busy"), cc.tool_result(), cc.turn_duration()])))
    return prompts, merged


@given(interleaved(), st.lists(st.integers(min_value=0, max_value=20_000), max_size=6))
def test_each_prompt_a_person_queued_counts_once_where_it_reaches_the_session(
    case: tuple[list[Queued], list[Record]], cuts: list[int]
) -> None:
    prompts, records = case
    data = b"".join(line(record) for record in records)

    with tempfile.TemporaryDirectory() as folder:
        reading = read_while_written(
            JsonlTranscriptProvider.claude_code(),
            Path(folder) / "t.jsonl",
            data,
            [cut % (len(data) + 1) for cut in cuts],
        )

    assert reading.turns == sum(1 for p in prompts if p.reaches_the_session_as_a_persons)
