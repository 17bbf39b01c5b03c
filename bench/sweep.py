"""`sweep`: the restart sweep over 10,000 pending cursors (`M > L`), forced prune and wakes included.

The store: 100 coordinator sessions (`agent:main:coord-00` ... `-99`, upserted, so they exist, and
not subagent keys, so each is woken) each watching the same 100 subagent workers
(`agent:main:subagent:worker-000` ... `-099`) through `watch()`: 10,000 registered cursors, a
gateway restarting with every coordinator owing a reconciliation on every worker. (100 x 100 rather
than 10,000 watchers on one target: the sweep then resolves 100 watchers' existence, and the wake
reasons name 100 targets, as after a real restart.)

Before every timed sweep, untimed: the settable clock moves on 1 s and one human signal is recorded
on every target (sessionwatch: one `record_many` of 100; peer: 100 records), so every cursor has
`M > N > L` again and the sweep really re-freezes (`N := M`) and re-stamps each of them. Every sweep
is checked: `refrozen == republished == 10,000`, no watcher skipped, 10,000 wakes through a waker
that only counts, 100 distinct watchers woken, and its forced prune ran (SPEC §6.5). Nothing is old
enough or over the cap to be pruned: the prune's own cost is what it does on a store within its
retention (sessionwatch: compacting the event store behind a checkpoint event, ADR-0008).

Context: the peer's equivalent: one transaction with the distinct watchers of open cursors (to leave
out missing ones) and one `UPDATE ... SET notified = material, updated_at = now WHERE material >
last_seen RETURNING watcher, target, last seen` (the notices), the watchers to wake, each once (the
peer calls no waker), then its forced prune (SPEC §8, one transaction).

Each side is timed once per round (settled first), after one warm-up sweep each; the figure is the
median seconds over the rounds. Target (SPEC §15.1): sessionwatch's median <= 1 s. Ratio: sw time /
peer time (context).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/sweep.py` finds `bench.*`

from bench.harness import (
    AGENT,
    SUMMARY,
    CountingWaker,
    ManualClock,
    Mode,
    Result,
    fresh_dir,
    run_script,
    sessionwatch_store,
    sw_at_most,
    time_result,
    timed_once,
)
from bench.peer import PeerStore
from sessionwatch import Actor, SessionWatch, SignalInput, SignalKind, SweepReport

NAME = "sweep"
WATCHERS = 100
TARGETS = 100
CURSORS = WATCHERS * TARGETS
TARGET = sw_at_most(1.0, "s")
KIND = SignalKind.HUMAN_DIRECT_MESSAGE


def watcher_key(index: int) -> str:
    """The `index`-th coordinator (agent-qualified, not a subagent: it is woken)."""
    return f"agent:{AGENT}:coord-{index:02d}"


def target_key(index: int) -> str:
    """The `index`-th watched worker."""
    return f"agent:{AGENT}:subagent:worker-{index:03d}"


WATCHER_KEYS = [watcher_key(i) for i in range(WATCHERS)]
TARGET_KEYS = [target_key(j) for j in range(TARGETS)]


@dataclass
class SwSweep:
    """sessionwatch with 10,000 registered cursors, and what its sweeps did."""

    watch: SessionWatch
    clock: ManualClock
    waker: CountingWaker
    inputs: list[SignalInput]
    last: SweepReport | None = None

    @classmethod
    def build(cls, watch: SessionWatch, clock: ManualClock, waker: CountingWaker) -> SwSweep:
        """Upsert every watcher and target, register every (watcher, target) watch."""
        for key in (*WATCHER_KEYS, *TARGET_KEYS):
            watch.upsert_session(key)
        for watcher in WATCHER_KEYS:
            for target in TARGET_KEYS:
                assert watch.watch(watcher, target), "the watch must be registered"
        human = Actor.human()
        inputs = [SignalInput(session_key=t, kind=KIND, actor=human, summary=SUMMARY) for t in TARGET_KEYS]
        return cls(watch, clock, waker, inputs)

    def prepare(self) -> None:
        """Untimed: move the clock on, and one new signal on every target (`M` moves past `N`)."""
        self.clock.advance(1.0)
        self.watch.record_many(self.inputs)
        self.clock.advance(1.0)

    def sweep(self) -> None:
        """One sweep, checked: every cursor re-frozen, re-published and its watcher woken."""
        before = self.waker.count
        report = self.watch.sweep()
        assert report.republished == CURSORS, report
        assert report.refrozen == CURSORS, report
        assert report.skipped_missing_watchers == 0, report
        assert len(report.woken) == WATCHERS, report
        assert self.waker.count - before == CURSORS, "every re-published notice wakes its watcher"
        assert report.prune is not None, "the sweep must run its forced prune"
        assert report.prune.ran, "the sweep must run its forced prune"
        self.last = report


@dataclass
class PeerSweep:
    """The peer with the same 10,000 cursor rows."""

    peer: PeerStore
    existing: frozenset[str]

    @classmethod
    def build(cls, peer: PeerStore) -> PeerSweep:
        """Register every (watcher, target) cursor at its target's head."""
        peer.watch_many(((w, t) for w in WATCHER_KEYS for t in TARGET_KEYS), AGENT)
        return cls(peer, frozenset(WATCHER_KEYS))

    def prepare(self) -> None:
        """Untimed: one new signal on every target."""
        for target in TARGET_KEYS:
            self.peer.record(target, agent_id=AGENT, kind=KIND.value, actor_type="human", summary=SUMMARY)

    def sweep(self) -> None:
        """One sweep and its forced prune, checked like sessionwatch's."""
        swept = self.peer.sweep(self.existing.__contains__)
        self.peer.prune()
        assert len(swept.notices) == CURSORS, len(swept.notices)
        assert len(swept.woken) == WATCHERS, len(swept.woken)


def run(mode: Mode) -> list[Result]:
    """One line: median seconds of a sweep over 10,000 open cursors (NORMAL)."""
    clock, waker = ManualClock(), CountingWaker()
    with fresh_dir("peer") as peer_dir, fresh_dir("sw") as sw_dir:
        peer = PeerStore(peer_dir / "peer.db")
        with sessionwatch_store(sw_dir, "normal", clock=clock, waker=waker) as watch:
            sw_side = SwSweep.build(watch, clock, waker)
            sides: tuple[PeerSweep | SwSweep, ...] = (PeerSweep.build(peer), sw_side)
            for side in sides:  # warm-up: one full sweep each
                side.prepare()
                side.sweep()
            rounds: tuple[list[float], list[float]] = ([], [])
            for _ in range(mode.rounds):
                for figures, side in zip(rounds, sides, strict=True):
                    side.prepare()
                    figures.append(timed_once(side.sweep))
            wakes = waker.count
            last = sw_side.last
        peer.close()
    extra = {
        "watchers": WATCHERS,
        "targets": TARGETS,
        "cursors": CURSORS,
        "sw_wakes_total": wakes,
        "sw_last_report": {**last.to_json(), "woken": len(last.woken)} if last is not None else None,
    }
    return [time_result(NAME, "normal", "s", rounds, target=TARGET, extra=extra)]


def main() -> None:
    """Print this workload's table and write `bench/results/sweep.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
