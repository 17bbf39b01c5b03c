"""No store call of an `AsyncSessionWatch` runs on the event loop's thread, from `open()` to `aclose()`.

`sessionwatch.aio.open()` is given a `ProbedStore` around the real store (memory, SQLite,
PostgreSQL), which notes the thread of every call on the store and on what it hands out (write
transactions, snapshots). A workload covers opening (the start-up sweep, the cross-process
listener on PostgreSQL), every kind of write, every read, drain and acknowledge, sweep, a forced
and a due prune, audit, upstream passes with a sync and an async provider, wakes, and closing.
None of the noted calls ran on the loop's thread, and every write transaction ran on the writer
thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import cast

import pytest
from probed_store import ProbedStore, probe_opened_stores

import sessionwatch.aio
from sessionwatch import Actor, SignalInput, UpstreamActivity, UpstreamMissing, UpstreamProbe
from sessionwatch.domain.ports import UpstreamProvider
from sessionwatch.testing import FakeClock, RecordingWaker

WATCHER = "agent:main:main"
TARGET = "agent:main:worker"
ADOPTED = "agent:main:adopted"
CATALOG = "claude-code"


class SyncProvider:
    def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> list[UpstreamActivity | UpstreamMissing]:
        return [
            UpstreamActivity(session_key=p.session_key, human_turns=1, next_marker={"offset": 10})
            for p in probes
        ]


class AsyncProvider:
    async def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> list[UpstreamActivity | UpstreamMissing]:
        await asyncio.sleep(0)
        return [
            UpstreamActivity(session_key=p.session_key, human_turns=1, next_marker={"offset": 20})
            for p in probes
        ]


async def workload(url: str, clock: FakeClock, probed: list[ProbedStore]) -> tuple[int, int | None]:
    """Everything the façade can ask of its store; the loop's thread id and the writer's."""
    watch = await sessionwatch.aio.open(url, clock=clock, waker=RecordingWaker())
    writer = watch.writer_thread
    await watch.upsert_session(TARGET, kind="subagent")
    await watch.update_session(TARGET, label="worker")
    assert await watch.watch(WATCHER, TARGET)
    await watch.record(TARGET, kind="goal_changed", actor=Actor.system(), summary="goal set")
    await watch.record_many(
        [SignalInput(session_key=TARGET, kind="goal_changed", actor=Actor.system(), summary="again")]
    )
    await watch.record_human_message(TARGET, channel="telegram")
    await watch.record_goal_changed(TARGET, summary="goal changed")
    await watch.record_spawn(requester_key=WATCHER, child_key="agent:main:subagent:c", child_run_id="r1")
    await watch.record_run_terminal(
        child_key="agent:main:subagent:c", run_id="r1", requester_key=WATCHER, outcome="ok"
    )
    await watch.record_compacted(TARGET, operation_id="op-1")
    await watch.record_adopted(ADOPTED)
    await watch.session_status(TARGET, changes_since=0)
    await watch.status_as_of(TARGET, 2, changes_since=0)
    await watch.sessions_list()
    await watch.registry_entry(TARGET)
    await watch.registry_entries()
    await watch.cursor(WATCHER, TARGET)
    await watch.pending_notices(WATCHER)
    await watch.drain(WATCHER)
    await watch.record(TARGET, kind="goal_changed", actor=Actor.system(), summary="goal reset")
    await watch.acknowledge(WATCHER, [TARGET])
    await watch.link_upstream(
        ADOPTED,
        catalog_id=CATALOG,
        host_id="laptop",
        thread_id="t-1",
        upstream_kind="claude-jsonl",
        upstream_ref="/t-1.jsonl",
        marker={"offset": 0},
    )
    assert await watch.watch(WATCHER, ADOPTED)
    await watch.upstream_link(ADOPTED)
    assert (await watch.upstream_tick({CATALOG: SyncProvider()})).recorded
    assert (await watch.upstream_tick({CATALOG: cast("UpstreamProvider", AsyncProvider())})).recorded
    await watch.sweep()
    await watch.prune(force=True)
    clock.advance(days=2)  # the prune throttle has run out: the next record is followed by a due prune
    await watch.record(TARGET, kind="goal_changed", actor=Actor.system(), summary="goal later")
    await watch.settled()
    await watch.rebuild_read_model()
    assert (await watch.audit(progress=lambda _count: None)).ok
    await watch.unlink_upstream(ADOPTED)
    await watch.unwatch(WATCHER, TARGET)
    await watch.reset_session(TARGET)
    await watch.delete_session(TARGET)
    await watch.aclose()
    assert probed, "open() did not open its store through the probe"
    return threading.get_ident(), writer


def test_no_store_call_runs_on_the_event_loops_thread(
    store_url: str, store_kind: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    probed = probe_opened_stores(monkeypatch)

    loop_thread, writer_thread = asyncio.run(workload(store_url, clock, probed))

    [store] = probed
    assert store.on(loop_thread) == []
    assert writer_thread is not None
    assert all(thread == writer_thread for name, thread in store.calls if name.startswith("write"))
    expected = {"write", "write.append", "write.prune", "write.sweep", "sessions", "close", "last_prune_ms"}
    if store_kind == "postgres":
        expected.add("listen_for_wakes")
    assert expected <= store.names()
    assert store.names_called("write.prune") == 4  # both sweeps', the forced one and the due one
    assert len(store.threads()) > 1  # reads ran beside the writer thread
