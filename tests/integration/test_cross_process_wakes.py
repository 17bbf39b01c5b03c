"""Cross-process notices (SPEC §16, ADR-0009): a signal recorded in one process wakes the waker of another.

Process B serves the watcher: it opens the PostgreSQL store with a waker that prints every wake,
and answers commands on stdin. This test is process A: it records signals and kills B's LISTEN
connection with `pg_terminate_backend`. B must be woken for every notice A opens, also across the
reconnect (by the new LISTEN or by the catch-up over the durable pending-notice view), and never
twice for a notice it opened itself.

Wakes must also be prompt: B's wake arrives within `WAKE_DEADLINE` (1 s) of A's record returning,
before and after B's listener connection was killed and re-established. How it is measured: A is
this process, so the start is `time.monotonic()` taken here right after `record()` returned (the
signal is committed, its NOTIFY sent with the commit). The end is `time.monotonic()` taken here
too, by the thread that reads B's stdout, the moment B's `wake` line arrives; B prints and flushes
that line from inside its waker. Both stamps come from one clock in one process (no cross-process
clock comparison), and the end includes B's print and the pipe, so the figure is an upper bound
on when B's waker ran. A wake that B delivers before A's `record()` has returned counts as
on time (its latency is negative).
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from stores import admin, needs_postgres, postgres_url

import sessionwatch
from sessionwatch import Actor, SessionWatch

pytestmark = [pytest.mark.slow, needs_postgres]

WATCHER = "agent:main:coordinator"
SUBAGENT = "agent:main:subagent:helper"
READ_TIMEOUT = 60.0
WAKE_DEADLINE = 1.0
"""Seconds from A's record returning to B's wake line arriving here (module docstring)."""

SERVER = r"""
import sys, threading
import sessionwatch
from sessionwatch import Actor

out = threading.Lock()

def say(*parts):
    with out:
        sys.stdout.write("\t".join(str(p) for p in parts) + "\n")
        sys.stdout.flush()

class PrintingWaker:
    def wake(self, watcher_key, reason):
        say("wake", watcher_key, reason)

with sessionwatch.open(sys.argv[1], waker=PrintingWaker(), sweep_on_open=False) as watch:
    listener = watch.store.listener
    say("ready", listener.backend_pid)
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "listener":
            say("listener", listener.backend_pid, listener.connects)
        elif command == "record":
            signal = watch.record(
                argument, kind="human_direct_message", actor=Actor.human(), summary="human message via b"
            )
            say("recorded", signal.sequence)
        elif command == "quit":
            break
"""


@dataclass
class Server:
    """Process B, seen through its stdout lines (each stamped with `time.monotonic()` on arrival)."""

    child: subprocess.Popen[str]
    lines: queue.Queue[tuple[float, str] | None] = field(default_factory=queue.Queue)
    seen: list[list[str]] = field(default_factory=list)

    def send(self, command: str) -> None:
        assert self.child.stdin is not None
        self.child.stdin.write(command + "\n")
        self.child.stdin.flush()

    def expect(self, *prefix: str) -> list[str]:
        """Wait for the next line that starts with `prefix` (every line is kept in `seen`)."""
        return self.expect_stamped(*prefix)[0]

    def expect_stamped(self, *prefix: str) -> tuple[list[str], float]:
        """`expect`, also returning the `time.monotonic()` at which the line arrived here."""
        deadline = time.monotonic() + READ_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"process B never printed {prefix}; it printed {self.seen}"
            try:
                item = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            assert item is not None, f"process B exited; it printed {self.seen}"
            arrived, line = item
            parts = line.rstrip("\n").split("\t")
            self.seen.append(parts)
            if tuple(parts[: len(prefix)]) == prefix:
                return parts, arrived

    def expect_wake_within_deadline(self, target: str, recorded: float) -> float:
        """Wait for B's wake for `target`; assert it arrived within `WAKE_DEADLINE` of `recorded`.

        `recorded` is `time.monotonic()` right after A's `record()` returned. Waiting itself is
        bounded by `READ_TIMEOUT`, so a late wake fails on its latency, not on a hang.
        """
        _, arrived = self.expect_stamped("wake", WATCHER, f"session-state:{target}")
        latency = arrived - recorded
        assert latency <= WAKE_DEADLINE, (
            f"B's wake for {target} arrived {latency:.3f} s after A's record returned"
            f" (deadline {WAKE_DEADLINE} s)"
        )
        return latency

    def wakes(self, target: str) -> int:
        return sum(1 for parts in self.seen if parts == ["wake", WATCHER, f"session-state:{target}"])


def _pump(stream: object, lines: queue.Queue[tuple[float, str] | None]) -> None:
    assert hasattr(stream, "readline")
    for line in iter(stream.readline, ""):
        lines.put((time.monotonic(), line))  # stamped as it arrives: the end of a wake's latency
    lines.put(None)


@pytest.fixture
def url() -> Iterator[str]:
    with postgres_url("sw_wakes") as opened:
        yield opened


@pytest.fixture
def process_b(url: str) -> Iterator[Server]:
    with subprocess.Popen(
        [sys.executable, "-c", SERVER, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        server = Server(child)
        reader = threading.Thread(target=_pump, args=(child.stdout, server.lines), daemon=True)
        reader.start()
        try:
            yield server
        finally:
            if child.poll() is None:
                server.send("quit")
            try:
                child.wait(timeout=30)
            finally:
                child.kill()
                reader.join(timeout=30)


@pytest.fixture
def process_a(url: str) -> Iterator[SessionWatch]:
    with sessionwatch.open(url) as watch:
        yield watch


def human(watch: SessionWatch, target: str) -> int:
    return watch.record(
        target, kind="human_direct_message", actor=Actor.human(), summary="human message via a"
    ).sequence


def test_a_signal_recorded_in_one_process_wakes_the_waker_of_another(
    process_a: SessionWatch, process_b: Server
) -> None:
    process_b.expect("ready")
    process_a.watch(WATCHER, "agent:main:first")

    human(process_a, "agent:main:first")
    recorded = time.monotonic()

    process_b.expect_wake_within_deadline("agent:main:first", recorded)


def test_a_wake_crosses_processes_after_the_listener_connection_was_killed(
    process_a: SessionWatch, process_b: Server
) -> None:
    _, pid = process_b.expect("ready")
    for target in ("agent:main:before", "agent:main:during", "agent:main:after"):
        process_a.watch(WATCHER, target)
    human(process_a, "agent:main:before")
    process_b.expect_wake_within_deadline("agent:main:before", time.monotonic())

    killed = admin().execute("SELECT pg_terminate_backend(%s, 10000)", (int(pid),)).fetchone()
    assert killed == (True,)
    human(process_a, "agent:main:during")  # while B reconnects: the catch-up or the new LISTEN
    # Measured from A's record returning. If B re-LISTENs before that commit, the new LISTEN
    # delivers the wake and this is the plain measurement; if B reconnects after it, the catch-up
    # delivers the wake, and measuring from the record (earlier than the reconnect) is stricter
    # than measuring from the reconnect: the reconnect (first retry after 25-50 ms, ADR-0009's
    # backoff) and the catch-up must both fit in the deadline.
    process_b.expect_wake_within_deadline("agent:main:during", time.monotonic())

    process_b.send("listener")
    _, new_pid, connects = process_b.expect("listener")
    assert (new_pid != pid, connects) == (True, "2")
    # B has re-established its LISTEN connection (it says so above): a record now must wake B within
    # the deadline through the new connection alone.
    human(process_a, "agent:main:after")
    process_b.expect_wake_within_deadline("agent:main:after", time.monotonic())


def test_a_process_is_not_woken_twice_for_a_notice_it_opened_itself(
    process_a: SessionWatch, process_b: Server
) -> None:
    process_b.expect("ready")
    process_a.watch(WATCHER, "agent:main:local")
    process_a.watch(WATCHER, "agent:main:remote")

    process_b.send("record agent:main:local")
    process_b.expect("recorded")
    human(process_a, "agent:main:remote")
    # One connection delivers NOTIFYs in commit order: a wake of B's own commit would come first.
    process_b.expect("wake", WATCHER, "session-state:agent:main:remote")

    assert process_b.wakes("agent:main:local") == 1


def test_subagent_watchers_are_not_woken_across_processes(process_a: SessionWatch, process_b: Server) -> None:
    process_b.expect("ready")
    process_a.watch(SUBAGENT, "agent:main:quiet")
    process_a.watch(WATCHER, "agent:main:loud")

    human(process_a, "agent:main:quiet")
    human(process_a, "agent:main:loud")

    process_b.expect("wake", WATCHER, "session-state:agent:main:loud")
    assert [parts for parts in process_b.seen if parts[0] == "wake"] == [
        ["wake", WATCHER, "session-state:agent:main:loud"]
    ]
