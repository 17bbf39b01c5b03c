"""`floor`: the least a record can cost in sessionwatch's design, against the peer (a diagnostic).

Two §15.1 targets are not met: `batch` and `concurrent` at NORMAL (bench/README.md). This script
measures what bounds them. A *floor record* does only what every record of this design must do:

- validate its input (`check_signal`), build its domain event (`decide_records`: a pydantic model),
  encode the event, and build the `Signal` it returns;
- in its write transaction: insert the stored-event row and the signal row (queued, one
  `executemany` per table, as sessionwatch does), raise its session's head, and apply SPEC §6.1 to
  its target's cursors with sessionwatch's own statement; then commit.

It skips the rest of a correct record: reading the session state and the counters, dedupe
lookups, producer watchers, the write cache and its checks, wakes and pruning. A correct record
costs more, so no implementation of this design beats the floor's ratio. The floor's sessions,
sequences and stream versions come from counters in this process; the file is sessionwatch's own
schema, made by `sessionwatch.open`.

Lines (each against the peer in the same run, interleaved, as the workload it bounds):
- `floor-handoff`: 8 threads through `GroupCommit` over transactions that do nothing at all:
  what handing calls between CPython threads costs, before any work.
- `floor-concurrent`: 8 threads, each recording floor records on its own target through
  `GroupCommit` (they share transactions), vs the peer's 8 threads (the `concurrent` workload).
- `floor-batch`: floor records 100 per transaction, vs the peer's one per transaction (`batch`).
- `concurrent`, `batch`: sessionwatch itself, measured in the same rounds, for comparison.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import cast

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/floor.py` finds `bench.*`

from bench.harness import (
    AGENT,
    CONTEXT,
    SUMMARY,
    WATCHER,
    Mode,
    Result,
    Synchronous,
    at_least,
    fresh_dir,
    interleave_many,
    run_script,
    sessionwatch_store,
    throughput_result,
)
from bench.peer import PeerStore
from bench.threads import NAME as CONCURRENT
from bench.threads import THREADS, Worker, block_seconds, peer_record, run_setting, target_key, threads_block
from sessionwatch import Actor, SessionWatch, Signal, SignalInput, SignalKind
from sessionwatch.adapters.app.group_commit import GroupCommit
from sessionwatch.adapters.stores.mapper import encode, session_stream_id
from sessionwatch.adapters.stores.port import SignalStore
from sessionwatch.adapters.stores.sql import rows as sql_rows
from sessionwatch.adapters.stores.sql import sqlite_schema as sql
from sessionwatch.domain import session
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.recording import check_signal
from sessionwatch.domain.session import SignalDraft, SignalRecorded

NAME = "floor"
FLOOR_TARGET = at_least(0.9)
"""`concurrent` at NORMAL: at least 0.9x of the floor's rate (SPEC §15.1)."""
BATCH = 100
KIND = SignalKind.HUMAN_DIRECT_MESSAGE
HUMAN = Actor.human()
_SESSION = "session_key = ? AND agent_id = ?"
_TARGET = "target_key = ? AND target_agent_id = ?"
SET_HEAD = f"UPDATE sw_sessions SET head = ?, stream_version = ? WHERE {_SESSION}"


class FloorWrite:
    """A floor transaction: queued rows, and the newest signal of each session it touched."""

    def __init__(self, store: FloorStore) -> None:
        self.store = store
        self.event_rows: list[tuple[object, ...]] = []
        self.signal_rows: list[tuple[object, ...]] = []
        self.runs: dict[SessionIdentity, tuple[SignalRecorded, SignalRecorded]] = {}

    def record(self, drafts: Sequence[SignalDraft]) -> list[SignalRecorded]:
        """Drafts of one session: sequences, events (one validation), rows."""
        store = self.store
        identity = drafts[0].identity
        commands = []
        for draft in drafts:
            store.sequence += 1
            commands.append(draft.at(store.sequence))
        events = session.decide_records(commands, store.states[identity])
        stream = session_stream_id(identity).hex
        for event in events:
            store.notification_id += 1
            store.versions[identity] += 1
            self.event_rows.append(
                (store.notification_id, stream, store.versions[identity], event.type, encode(event))
            )
            self.signal_rows.append(sql_rows.signal_params(event, store.notification_id))
        first = self.runs[identity][0] if identity in self.runs else events[0]
        self.runs[identity] = (first, events[-1])
        store.last[identity] = events[-1].sequence
        return events

    def flush(self, cursor: sqlite3.Cursor) -> None:
        """The queued rows, then each session's head and one §6.1 statement per session."""
        cursor.executemany(sql.INSERT_EVENT, self.event_rows)
        cursor.executemany(sql.INSERT_SIGNAL, self.signal_rows)
        for identity, (first, last) in self.runs.items():
            cursor.execute(SET_HEAD, (last.sequence, self.store.versions[identity], *identity))
            cursor.execute(
                sql.MATERIAL_UPDATE,
                {
                    "first": first.sequence,
                    "e": last.sequence,
                    "now": last.recorded_at_ms,
                    "key": identity.session_key,
                    "agent": identity.agent_id,
                    "actor": last.actor_id,
                    "ambient_too": 1,  # the floor records human turns, which reach ambient cursors too
                },
            ).fetchall()


class FloorStore:
    """sessionwatch's schema on one SQLite connection, written by floor transactions."""

    def __init__(self, path: Path, synchronous: Synchronous, sessions: Sequence[SessionIdentity]) -> None:
        self.connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self.sequence = self._one("SELECT COALESCE(MAX(sequence), 0) FROM sw_signals")
        self.notification_id = self._one("SELECT COALESCE(MAX(notification_id), 0) FROM stored_events")
        self.versions = {
            identity: self._one(
                "SELECT COALESCE(MAX(originator_version), 0) FROM stored_events WHERE originator_id = ?",
                (session_stream_id(identity).hex,),
            )
            for identity in sessions
        }
        self.states = {identity: session.initial(identity) for identity in sessions}
        self.last: dict[SessionIdentity, int] = {}  # each session's newest recorded sequence

    def check(self) -> None:
        """Every session's head and its watcher's material are its newest signal: all was written."""
        for identity, last in self.last.items():
            head = self._one(f"SELECT head FROM sw_sessions WHERE {_SESSION}", identity)
            material = self._one(f"SELECT material FROM sw_cursors WHERE {_TARGET}", identity)
            assert head == material == last, f"{identity}: head {head}, material {material}, not {last}"

    def _one(self, query: str, params: Sequence[object] = ()) -> int:
        return int(self.connection.execute(query, params).fetchone()[0] or 0)

    @contextmanager
    def write(self) -> Iterator[FloorWrite]:
        """A `BEGIN IMMEDIATE` transaction, its queued rows written and committed at the end."""
        cursor = self.connection.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        tx = FloorWrite(self)
        try:
            yield tx
            tx.flush(cursor)
        except BaseException:
            self.connection.rollback()
            raise
        self.connection.commit()

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


class _NothingStore:
    """Write transactions that do nothing: `GroupCommit`'s hand-off alone."""

    @contextmanager
    def write(self) -> Iterator[None]:
        yield None


def floor_draft(key: str, now: datetime) -> SignalDraft:
    """The checked draft of one §15.1 signal on `key` (what every record of this design validates)."""
    return check_signal(
        session_key=key, agent_id=None, kind=KIND, actor_type="human", actor_id=None, summary=SUMMARY, now=now
    )


def _watch_all(watch: SessionWatch, keys: Sequence[str]) -> None:
    """Each key upserted and watched by `WATCHER` (as the workloads set their targets up)."""
    for key in keys:
        watch.upsert_session(key, spawned_by=WATCHER)
        assert watch.watch(WATCHER, key), "the watcher must be registered"


def floor_set_up(directory: Path, setting: Synchronous, keys: Sequence[str]) -> list[SessionIdentity]:
    """A floor's file: sessionwatch's schema with every key watched (`_watch_all`); their identities."""
    with sessionwatch_store(directory, setting) as watch:
        _watch_all(watch, keys)
    return [SessionIdentity(key, AGENT) for key in keys]


def _peers(directory: Path, setting: Synchronous, keys: Sequence[str], count: int) -> list[PeerStore]:
    """`count` peer connections to one file, each key watched by `WATCHER`."""
    peers = [PeerStore(directory / "peer.db", synchronous=setting) for _ in range(count)]
    for key in keys:
        peers[0].watch(WATCHER, key, AGENT)
    return peers


THREAD_SIDES = ("peer", "floor-handoff", "floor-concurrent", "concurrent")


def thread_rounds(
    mode: Mode, setting: Synchronous, names: Sequence[str] = THREAD_SIDES
) -> dict[str, list[float]]:
    """Interleaved rounds of 8-thread blocks for the named sides (of `THREAD_SIDES`), in that order."""
    seconds = block_seconds(mode)  # as `concurrent`
    keys = [target_key(index) for index in range(THREADS)]
    with (
        fresh_dir("peer") as peer_dir,
        fresh_dir("floor") as floor_dir,
        fresh_dir("sw") as sw_dir,
        sessionwatch_store(sw_dir, setting) as watch,
    ):
        peers = _peers(peer_dir, setting, keys, THREADS)
        store = FloorStore(floor_dir / "sessionwatch.db", setting, floor_set_up(floor_dir, setting, keys))
        _watch_all(watch, keys)
        floor: GroupCommit = GroupCommit(cast("SignalStore", store))
        nothing: GroupCommit = GroupCommit(cast("SignalStore", _NothingStore()))
        last: dict[str, int] = {}

        def floor_worker(key: str) -> Worker:
            def call() -> int:
                draft = floor_draft(key, datetime.now(UTC))
                (event,) = floor.run(lambda tx: cast("FloorWrite", tx).record([draft]))
                return Signal.from_event(event).sequence

            return call

        def sw_worker(key: str) -> Worker:
            def call() -> int:
                sequence = watch.record(key, kind=KIND, actor=HUMAN, summary=SUMMARY).sequence
                last[key] = sequence
                return sequence

            return call

        sides: dict[str, list[Worker]] = {
            "peer": [partial(peer_record, peer, key) for peer, key in zip(peers, keys, strict=True)],
            "floor-handoff": [lambda: nothing.run(lambda _: 1) for _ in keys],
            "floor-concurrent": [floor_worker(key) for key in keys],
            "concurrent": [sw_worker(key) for key in keys],
        }
        chosen = {name: sides[name] for name in names}
        rounds: dict[str, list[float]] = {name: [] for name in chosen}
        for workers in chosen.values():
            threads_block(workers, mode.warmup)
        for _ in range(mode.rounds):
            for name, workers in chosen.items():
                rounds[name].append(threads_block(workers, seconds))
        store.check()
        for key, sequence in last.items():
            assert watch.session_status(key).state_version == sequence, f"{key}: a record was lost"
        store.close()
        for peer in peers:
            peer.close()
    return rounds


def run_threads(mode: Mode, setting: Synchronous) -> list[Result]:
    """`floor-handoff`, `floor-concurrent` and `concurrent` itself against the peer's 8 threads."""
    rounds = thread_rounds(mode, setting)
    extra = {"threads": THREADS, "block_seconds": block_seconds(mode)}
    return [
        throughput_result(
            name, setting, "calls/s", (rounds["peer"], rounds[name]), target=CONTEXT, extra=extra
        )
        for name in THREAD_SIDES
        if name != "peer"
    ]


def run_concurrent(mode: Mode) -> list[Result]:
    """The `concurrent` workload as `run.py` reports it, with its target at each setting.

    At FULL: against the peer's 8 threads, >= 1.5x. At NORMAL the GIL bounds every design, so the
    target is against the floor measured in the same rounds (`concurrent-floor`: the floor's rate
    stands in the peer column, >= 0.9x); the ratio to the peer is shown for context.
    """
    results: list[Result] = []
    for setting in mode.settings:
        if setting == "full":
            results.append(run_setting(mode, setting))
            continue
        rounds = thread_rounds(mode, setting, ("peer", "floor-concurrent", "concurrent"))
        extra = {"threads": THREADS, "block_seconds": block_seconds(mode)}
        results.append(
            throughput_result(
                CONCURRENT,
                setting,
                "signals/s",
                (rounds["peer"], rounds["concurrent"]),
                target=CONTEXT,
                extra=extra,
            )
        )
        results.append(
            throughput_result(
                f"{CONCURRENT}-floor",
                setting,
                "signals/s",
                (rounds["floor-concurrent"], rounds["concurrent"]),
                target=FLOOR_TARGET,
                extra=extra,
            )
        )
    return results


def run_batch(mode: Mode, setting: Synchronous) -> list[Result]:
    """`floor-batch` and `batch` itself: 100 records per transaction vs the peer's one each."""
    key = target_key(0)
    with (
        fresh_dir("peer") as peer_dir,
        fresh_dir("floor") as floor_dir,
        fresh_dir("sw") as sw_dir,
        sessionwatch_store(sw_dir, setting) as watch,
    ):
        (peer,) = _peers(peer_dir, setting, [key], 1)
        store = FloorStore(floor_dir / "sessionwatch.db", setting, floor_set_up(floor_dir, setting, [key]))
        _watch_all(watch, [key])
        inputs = [SignalInput(session_key=key, kind=KIND, actor=HUMAN, summary=SUMMARY)] * BATCH

        def peer_call() -> int:
            for _ in range(BATCH):
                peer_record(peer, key)
            return BATCH

        def floor_call() -> int:
            now = datetime.now(UTC)  # one instant per batch, as `record_many`
            drafts = [floor_draft(key, now) for _ in range(BATCH)]
            with store.write() as tx:
                events = tx.record(drafts)
            return len(Signal.from_events(events))

        peer_rounds, floor_rounds, sw_rounds = interleave_many(
            (peer_call, floor_call, lambda: len(watch.record_many(inputs))), mode
        )
        store.check()
        store.close()
        peer.close()
    extra = {"batch": BATCH}
    return [
        throughput_result(name, setting, "signals/s", (peer_rounds, rounds), target=CONTEXT, extra=extra)
        for name, rounds in (("floor-batch", floor_rounds), ("batch", sw_rounds))
    ]


def run(mode: Mode) -> list[Result]:
    """Every line at every durability setting of the mode."""
    results: list[Result] = []
    for setting in mode.settings:
        results.extend(run_threads(mode, setting))
        results.extend(run_batch(mode, setting))
    return results


def main() -> None:
    """Print the floor's table and write `bench/results/floor.json`."""
    run_script(NAME, __doc__, run)


if __name__ == "__main__":
    main()
