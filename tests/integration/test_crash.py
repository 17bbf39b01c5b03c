"""Crash safety (SPEC §3.3, §15.2): a SIGKILL during a recording loop loses no returned signal.

A child process records in a tight loop against a SQLite file and prints every sequence right after
`record` / `record_many` returned it. The parent kills it mid-flight, reopens the file and checks
that every printed signal is there, that heads and read models are consistent, and that the counter
never goes back.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from auditing import assert_audit_clean

import sessionwatch
from sessionwatch import Actor, SessionWatch, StateChange

pytestmark = pytest.mark.slow

SESSIONS = (("agent:main:crash-a", None), ("agent:ops:subagent:crash-b", None), ("global", "main"))
"""(key, agent id) of the sessions the child records on: agent-qualified, subagent and bare."""

ENOUGH = 200
"""How many returned sequences the parent waits for before it kills the child."""

ROUNDS = 3
"""Record, kill, reopen: each round's child starts on the file the previous kill left."""

ROUND_STRIDE = 1_000_000
"""Each round's loop indexes (and so dedupe keys `crash:<index>`) start at a multiple of this."""

READ_TIMEOUT = 120.0
EXIT_TIMEOUT = 30.0

CHILD = """
import sys
import sessionwatch
from sessionwatch import Actor, SignalInput

SESSIONS = {sessions!r}
url, mode, index = sys.argv[1], sys.argv[2], int(sys.argv[3])
watch = sessionwatch.open(url)
out = sys.stdout
while True:
    if mode == "record":
        key, agent = SESSIONS[index % len(SESSIONS)]
        signal = watch.record(
            key,
            kind="human_direct_message",
            actor=Actor.human(),
            summary="human message via telegram",
            payload={{"channel": "telegram"}},
            dedupe_key=f"crash:{{index}}",
            agent_id=agent,
        )
        out.write(f"{{signal.sequence}}\\t{{index}}\\n")
        out.flush()
        index += 1
    else:
        batch = []
        for offset in range(7):
            key, agent = SESSIONS[(index + offset) % len(SESSIONS)]
            batch.append(
                SignalInput(
                    session_key=key,
                    kind="goal_changed",
                    actor=Actor.system(),
                    summary="goal updated",
                    dedupe_key=f"crash:{{index + offset}}",
                    agent_id=agent,
                )
            )
        signals = watch.record_many(batch)
        out.write("".join(f"{{s.sequence}}\\t{{index + n}}\\n" for n, s in enumerate(signals)))
        out.flush()
        index += len(batch)
"""


@dataclass(frozen=True)
class Returned:
    """One line the child printed: a sequence `record` returned, and the loop index it recorded."""

    sequence: int
    index: int

    @property
    def session(self) -> tuple[str, str | None]:
        return SESSIONS[self.index % len(SESSIONS)]


def _pump(stream: object, lines: queue.Queue[str | None]) -> None:
    """Forward the child's complete lines; None marks the end of its output."""
    assert hasattr(stream, "readline")
    for line in iter(stream.readline, ""):
        lines.put(line)
    lines.put(None)


def _complete(line: str) -> Returned | None:
    if not line.endswith("\n"):
        return None  # cut off by the kill: the child had not finished printing it
    sequence, index = line.split("\t")
    return Returned(int(sequence), int(index))


def run_and_kill(script: Path, url: str, mode: str, start: int) -> list[Returned]:
    """Run the child from loop index `start` until it printed `ENOUGH` sequences, SIGKILL it,
    and return everything it printed."""
    errors = script.with_name(f"child-{mode}-{start}.stderr")
    with errors.open("w", encoding="utf-8") as stderr:  # a file: a chatty child can never block on it
        child = subprocess.Popen(
            [sys.executable, str(script), url, mode, str(start)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=script.parent,
        )
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(child.stdout, lines), daemon=True)
    reader.start()
    printed: list[Returned] = []
    try:
        deadline = time.monotonic() + READ_TIMEOUT
        while len(printed) < ENOUGH:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"the child printed only {len(printed)} sequences in {READ_TIMEOUT} s"
            line = lines.get(timeout=remaining)
            assert line is not None, f"the child exited early: {errors.read_text(encoding='utf-8')}"
            returned = _complete(line)
            assert returned is not None
            printed.append(returned)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=EXIT_TIMEOUT) == -signal.SIGKILL
        reader.join(timeout=EXIT_TIMEOUT)
        assert not reader.is_alive(), "the child's output did not end after the kill"
        while (line := lines.get_nowait()) is not None:
            if (returned := _complete(line)) is not None:
                printed.append(returned)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=EXIT_TIMEOUT)
        if child.stdout is not None:
            child.stdout.close()
    return printed


def every_change(watch: SessionWatch, key: str, agent_id: str | None) -> list[StateChange]:
    """The session's whole retained log, page after page."""
    changes: list[StateChange] = []
    since = 0
    while True:
        page = watch.session_status(key, changes_since=since, agent_id=agent_id).state_changes
        assert page is not None
        assert all(change.sequence > since for change in page.events), "a page starts after its cursor"
        changes.extend(page.events)
        if not page.truncated:
            return changes
        since = page.events[-1].sequence


def check_store(url: str, printed: list[Returned]) -> int:
    """Reopen the file after a kill and check it against what the children printed; its top sequence."""
    with sessionwatch.open(url) as watch:
        stored = {key: every_change(watch, key, agent) for key, agent in SESSIONS}
        for returned in printed:
            key, _ = returned.session
            assert returned.sequence in {c.sequence for c in stored[key]}, f"{returned} was lost"
        for key, agent in SESSIONS:
            changes = stored[key]
            assert [c.sequence for c in changes] == sorted({c.sequence for c in changes})
            head = watch.session_status(key, agent_id=agent).state_version
            assert head == max(c.sequence for c in changes), f"the head of {key} is its newest signal"
        all_stored = [c.sequence for changes in stored.values() for c in changes]
        assert len(all_stored) == len(set(all_stored)), "no sequence is stored twice"
        assert_audit_clean(watch)
        return max(all_stored)


@pytest.mark.parametrize("mode", ["record", "record_many"])
def test_a_killed_recorder_loses_no_returned_signal_and_leaves_the_store_consistent(
    tmp_path: Path, mode: str
) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(sessions=SESSIONS), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    printed: list[Returned] = []
    top = 0

    for round_number in range(ROUNDS):
        # Fresh dedupe keys each round: the kill may land after a commit but before the print, and
        # re-recording that key would rightly return the stored signal (SPEC §3.2), not a new one.
        start = round_number * ROUND_STRIDE
        this_round = run_and_kill(script, url, mode, start)

        assert len(this_round) >= ENOUGH
        assert this_round[0].sequence > top, "a restarted recorder continues above every stored sequence"
        printed += this_round
        sequences = [r.sequence for r in printed]
        assert sequences == sorted(set(sequences)), "returned sequences rise strictly and never repeat"
        top = check_store(url, printed)

    with sessionwatch.open(url) as watch:
        first = printed[0]
        first_key, first_agent = first.session
        again = watch.record(
            first_key,
            kind="human_direct_message",
            actor=Actor.human(),
            summary="human message via telegram",
            dedupe_key=f"crash:{first.index}",
            agent_id=first_agent,
        )
        assert again.sequence == first.sequence, "a dedupe key survives the crashes"
        after = watch.record(
            "agent:main:after-crash", kind="compacted", actor=Actor.system(), summary="session compacted"
        )
        assert after.sequence > top, "the counter never goes back after a crash"
        assert_audit_clean(watch)
