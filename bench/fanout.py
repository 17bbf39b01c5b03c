"""`fan-out`: one `human_direct_message` by a human on a target with N registered watchers (N = 1,000).

Both sides register N agent-qualified watchers on one target (`agent:main:coord-0000`, ...; not
subagent keys, so sessionwatch wakes every one of them): sessionwatch through `watch()`, the peer
as cursor rows at the target's head. Each timed call records one signal; in steady state every
signal moves every cursor (§6.1: `N := e` only while `N == L`, i.e. on the first signal; `M := e`
always), so nothing needs draining. sessionwatch runs with a waker that only counts: its wakes
(one per watcher per signal, after the commit) are part of the measured cost. The peer has no
wakes: its `UPDATE ... RETURNING` hands the (watcher, last seen) rows back and stops there.

N = 100 and N = 1,000 run side by side, interleaved in each round (peer 100, sw 100, peer 1,000,
sw 1,000), each on its own pair of fresh stores, at NORMAL. Every call is timed; a round's figure
is the median microseconds per signal. Lines (SPEC §15.1):

- `fan-out`: N = 1,000, ratio sw time / peer time, target <= 2x;
- `fan-out-100`: N = 100, the same ratio, for context;
- `fan-scale`: time(1,000) / time(100) of each side (medians of the rounds), target <= 12x on
  sessionwatch's.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/fanout.py` finds `bench.*`

from bench.harness import (
    AGENT,
    CONTEXT,
    SUMMARY,
    TARGET,
    CountingWaker,
    Mode,
    Result,
    at_most_times_peer,
    fresh_dir,
    interleave_many,
    latency_block,
    run_script,
    sessionwatch_store,
    sw_at_most,
    time_result,
)
from bench.peer import PeerStore
from sessionwatch import Actor, SessionWatch, SignalKind

NAME = "fan-out"
SIZES = (100, 1_000)
RATIO_TARGET = at_most_times_peer(2.0)
SCALE_TARGET = sw_at_most(12.0, "x")
KIND = SignalKind.HUMAN_DIRECT_MESSAGE


def watcher_key(index: int) -> str:
    """The `index`-th watcher: an agent-qualified key that is not a subagent key (so it is woken)."""
    return f"agent:{AGENT}:coord-{index:04d}"


@dataclass(frozen=True)
class Side:
    """One store with N watchers on `TARGET`, and the call that records one signal on it."""

    call: Callable[[], int]
    check: Callable[[], None]


def peer_side(peer: PeerStore, watchers: int) -> Side:
    """The peer with `watchers` cursor rows on the target."""
    for index in range(watchers):
        peer.watch(watcher_key(index), TARGET, AGENT)

    def call() -> int:
        peer.record(TARGET, agent_id=AGENT, kind=KIND.value, actor_type="human", summary=SUMMARY)
        return 1

    def check() -> None:
        recorded = peer.record(TARGET, agent_id=AGENT, kind=KIND.value, actor_type="human", summary=SUMMARY)
        assert len(recorded.notices) == watchers, "every peer cursor must move"

    return Side(call, check)


def sw_side(watch: SessionWatch, waker: CountingWaker, watchers: int) -> Side:
    """The sessionwatch side: `watchers` registered watchers on the target and a counting waker."""
    watch.upsert_session(TARGET)
    for index in range(watchers):
        assert watch.watch(watcher_key(index), TARGET), "the watch must be registered"
    human = Actor.human()

    def call() -> int:
        watch.record(TARGET, kind=KIND, actor=human, summary=SUMMARY)
        return 1

    def check() -> None:
        before = waker.count
        signal = watch.record(TARGET, kind=KIND, actor=human, summary=SUMMARY)
        assert waker.count - before == watchers, "every watcher must be woken"
        for index in (0, watchers - 1):
            cursor = watch.cursor(watcher_key(index), TARGET)
            assert cursor is not None, "every watcher must hold a cursor"
            assert cursor.material == signal.sequence, "every cursor must move"
            assert cursor.notified > cursor.last_seen, "every watcher must have a pending notice"

    return Side(call, check)


@contextmanager
def sides() -> Iterator[dict[tuple[str, int], tuple[Side, CountingWaker | None]]]:
    """Fresh stores (NORMAL) for every (side, N), set up and checked; closed on exit."""
    with ExitStack() as stack:
        out: dict[tuple[str, int], tuple[Side, CountingWaker | None]] = {}
        for watchers in SIZES:
            peer = PeerStore(stack.enter_context(fresh_dir(f"peer-{watchers}")) / "peer.db")
            stack.callback(peer.close)
            out["peer", watchers] = (peer_side(peer, watchers), None)
            waker = CountingWaker()
            watch = stack.enter_context(
                sessionwatch_store(stack.enter_context(fresh_dir(f"sw-{watchers}")), "normal", waker=waker)
            )
            out["sw", watchers] = (sw_side(watch, waker, watchers), waker)
        for side, _ in out.values():
            side.check()
        yield out


def run(mode: Mode) -> list[Result]:
    """Three lines: N = 1,000 (the target), N = 100 (context) and time(1,000) / time(100)."""
    with sides() as built:
        order = [(who, n) for n in SIZES for who in ("peer", "sw")]
        figures = interleave_many([built[key][0].call for key in order], mode, latency_block)
        rounds = dict(zip(order, figures, strict=True))
        wakes = {
            n: waker.count for (who, n), (_, waker) in built.items() if who == "sw" and waker is not None
        }
    small, large = SIZES
    results = [
        time_result(
            NAME,
            "normal",
            "us",
            (rounds["peer", large], rounds["sw", large]),
            target=RATIO_TARGET,
            extra={
                "watchers": large,
                "sw_wakes_total": wakes[large],
                "sw_wakes_per_signal": large,
                "peer_wakes": 0,
            },
        ),
        time_result(
            f"{NAME}-{small}",
            "normal",
            "us",
            (rounds["peer", small], rounds["sw", small]),
            target=CONTEXT,
            extra={
                "watchers": small,
                "sw_wakes_total": wakes[small],
                "sw_wakes_per_signal": small,
                "peer_wakes": 0,
            },
        ),
    ]
    scale = {
        who: statistics.median(rounds[who, large]) / statistics.median(rounds[who, small])
        for who in ("peer", "sw")
    }
    per_round = {
        who: [b / a for a, b in zip(rounds[who, small], rounds[who, large], strict=True)]
        for who in ("peer", "sw")
    }
    results.append(
        Result(
            workload="fan-scale",
            setting="normal",
            unit="x",
            peer_median=scale["peer"],
            sw_median=scale["sw"],
            ratio=scale["sw"],
            target=SCALE_TARGET,
            met=SCALE_TARGET.met(scale["sw"], scale["sw"]),
            peer_rounds=per_round["peer"],
            sw_rounds=per_round["sw"],
            extra={
                "sizes": list(SIZES),
                "figure": "median time(1,000) / median time(100); rounds: per round",
            },
        )
    )
    return results


def main() -> None:
    """Print this workload's table and write `bench/results/fan-out.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
