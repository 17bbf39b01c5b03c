"""Export and import of the history as JSON Lines (SPEC §14, §16) between every pair of stores.

A rich history (every signal kind, dedupe, watches with pending, drained and follow-up notices, a
reset of a watcher known only by its cursors, delete, unwatch, a sweep, a compacting prune, upstream
links and a tombstone) is exported from each store and imported into a fresh store of each kind:
every answer must be the same, a second export byte-identical, and the imported store must go on
exactly as the original would (same sequences, versions and dedupe answers).
"""

from __future__ import annotations

import hashlib
import io
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest
from histories import as_version_one
from stores import STORES, fresh_store_url

import sessionwatch
from sessionwatch import (
    Actor,
    InvalidSignal,
    Retention,
    SessionWatch,
    Signal,
    SignalInput,
    SignalKind,
    UnknownSession,
)
from sessionwatch.adapters.history.jsonl import (
    HistoryError,
    ImportReport,
    export_history,
    history_lines,
    import_history,
)
from sessionwatch.adapters.stores.port import HistoryTail, SignalStore, StoreNotEmptyError
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.projections.read_model import ReadModel, fold
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
WORKER = "agent:main:worker"
GONE = "agent:main:gone"
ADOPTED = "agent:main:adopted"
COORDINATOR = "agent:main:coordinator"
SECOND = "agent:ops:coordinator"
WATCHERS = (MANAGER, COORDINATOR, SECOND, "agent:main:observer-1", "agent:main:observer-2", WORKER)
RETENTION = Retention(days=1, max_signals=40)
_EMPTY_HEADER = b'{"format":"sessionwatch.history","sequence":0,"streams":{},"version":2}\n'
_EMPTY_DIGEST = hashlib.sha256(_EMPTY_HEADER).hexdigest()
EMPTY = (
    _EMPTY_HEADER.decode() + f'{{"events":0,"sha256":"{_EMPTY_DIGEST}","trailer":"sessionwatch.history"}}\n'
)
"""An empty store's export: the header and the trailer over it."""


def open_store(url: str, clock: FakeClock) -> SessionWatch:
    """A `SessionWatch` that writes nothing on opening (no sweep), so a fresh store stays empty."""
    return sessionwatch.open(url, clock=clock, retention=RETENTION, sweep_on_open=False)


@pytest.fixture
def source(store_url: str, clock: FakeClock) -> Iterator[SessionWatch]:
    with open_store(store_url, clock) as opened:
        yield opened


def export_text(store: SignalStore) -> str:
    out = io.StringIO()
    export_history(store, out)
    return out.getvalue()


def goal(watch: SessionWatch, key: str, **fields: Any) -> Signal:
    return watch.record(key, kind="goal_changed", actor=Actor.system(), summary="goal updated", **fields)


def link(watch: SessionWatch, key: str, thread: str, offset: int) -> None:
    watch.link_upstream(
        key,
        catalog_id="claude-code",
        host_id="laptop",
        thread_id=thread,
        upstream_kind="claude-jsonl",
        upstream_ref={"path": f"/transcripts/{thread}.jsonl", "inode": 7},
        marker={"offset": offset, "ratio": 0.5},
    )


def a_day(watch: SessionWatch, clock: FakeClock, day: int) -> None:
    """Every kind of stored event, and notices pending, drained, followed up, re-frozen and dropped."""
    observer = f"agent:main:observer-{day}"  # a watcher known only by its cursors (never upserted)
    watch.upsert_session(MANAGER, session_id=f"sess-{day}")
    watch.upsert_session(WORKER, kind="group")
    watch.upsert_session(GONE)
    watch.upsert_session("global", agent_id="ops", kind="cron")
    assert watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id=f"run-{day}") is not None
    for watcher in (COORDINATOR, SECOND, observer):
        assert watch.watch(watcher, WORKER)
    assert watch.watch(COORDINATOR, "global", target_agent_id="ops")
    assert watch.watch(COORDINATOR, GONE)
    assert watch.watch(observer, GONE)
    clock.advance(minutes=5)
    first = watch.record_human_message(WORKER, channel="telegram", dedupe_key="msg-1")
    assert first is not None
    assert watch.record_human_message(WORKER, channel="telegram", dedupe_key="msg-1") == first
    goal(watch, WORKER, payload={"status": "updated"})
    goal(watch, "global", agent_id="ops")
    assert watch.record_run_terminal(
        child_key=CHILD, run_id=f"run-{day}", requester_key=MANAGER, outcome="error"
    )
    assert watch.record_compacted(WORKER, operation_id=f"op-{day}") is not None
    for kind in SignalKind:
        payload: dict[str, object] | None = (
            {"channel": "slack"} if kind == SignalKind.UPSTREAM_MISSING else None
        )
        watch.record(
            GONE, kind=kind, actor=Actor.human("alice"), summary=f"{kind.value} happened", payload=payload
        )
    watch.drain(COORDINATOR)  # drained; the next signal opens a fresh notice
    goal(watch, WORKER, dedupe_key=f"goal-{day}")
    goal(watch, WORKER)  # M moves past the frozen N: the acknowledgement leaves a follow-up
    watch.acknowledge(SECOND, [WORKER])
    link(watch, ADOPTED, "t-1", day)
    assert watch.watch(COORDINATOR, ADOPTED)
    link(watch, WORKER, "t-2", 10)
    assert watch.unlink_upstream(WORKER) is not None  # a tombstone
    watch.reset_session(observer)  # its cursors go; its Session stream keeps the version
    watch.delete_session(GONE)
    assert watch.unwatch(SECOND, WORKER)
    goal(watch, WORKER)
    clock.advance(minutes=10)
    watch.sweep()  # re-freezes open notices (and runs a forced prune)
    watch.record_human_message(WORKER, channel="slack", dedupe_key=f"msg-{day + 1}")
    goal(watch, CHILD)  # a notice for its spawner
    goal(watch, ADOPTED)


def build_history(watch: SessionWatch, clock: FakeClock) -> None:
    """A day of everything, a compacting prune a day and a half later, then another day of everything."""
    a_day(watch, clock, 1)
    clock.advance(hours=30)  # everything so far is older than the one-day window
    stored = watch.store.stored_event_count()
    goal(watch, MANAGER, dedupe_key="fresh-1")  # then the record's hourly prune checkpoints and compacts
    assert watch.store.stored_event_count() < stored
    watch.upsert_session("agent:main:observer-1")  # a stream whose early versions were compacted away
    a_day(watch, clock, 2)
    assert watch.pending_notices(COORDINATOR)
    assert watch.pending_notices(MANAGER)


def identities(watch: SessionWatch) -> list[tuple[str, str]]:
    return [(row.session_key, row.agent_id) for row in watch.sessions_list()]


def observe(watch: SessionWatch) -> dict[str, Any]:
    """Everything a host can read back, as plain data."""
    store = watch.store
    model = store.read_model()
    middle = store.last_sequence() // 2
    statuses = [
        watch.session_status(key, changes_since=since, agent_id=agent_id).to_json()
        for key, agent_id in identities(watch)
        for since in (None, 0, middle)
    ]
    links = {
        f"{identity.session_key}|{identity.agent_id}": watch.upstream_link(
            identity.session_key, agent_id=identity.agent_id
        )
        for identity in sorted({*model.links, *(SessionIdentity(k, a) for k, a in identities(watch))})
    }
    return {
        "sessions": [row.to_json() for row in watch.sessions_list()],
        "statuses": statuses,
        "cursors": [
            watch.cursor(c.watcher, c.target_key, target_agent_id=c.target_agent_id)
            for c in model.all_cursors()
        ],
        "pending": {watcher: watch.pending_notices(watcher) for watcher in WATCHERS},
        "links": links,
        "active_links": store.upstream_links(watched_only=False),
        "watched_links": store.upstream_links(watched_only=True),
        "sequence": store.last_sequence(),
    }


def assert_same_answers(original: SessionWatch, imported: SessionWatch) -> None:
    assert observe(imported) == observe(original)
    assert imported.store.read_model() == original.store.read_model()
    assert imported.store.read_model() == fold(imported.store.replay())


def continue_history(watch: SessionWatch, clock: FakeClock, old_counter: int) -> None:
    """What happens next; the imported store must answer exactly as the original."""
    existing = watch.record_human_message(WORKER, channel="slack", dedupe_key="msg-1")
    assert existing is not None
    assert existing.sequence <= old_counter, "a retained dedupe key returns the existing signal"
    fresh = goal(watch, WORKER, dedupe_key="after-import")
    assert fresh.sequence == old_counter + 1, "new sequences continue above the counter"
    watch.drain(COORDINATOR)
    watch.upsert_session(GONE)  # a deleted session comes back on its old stream
    goal(watch, ADOPTED)
    watch.sweep()
    clock.advance(hours=30)
    stored = watch.store.stored_event_count()
    goal(watch, CHILD)  # and its hourly prune
    assert watch.store.stored_event_count() < stored


# ---------------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("target_kind", STORES)
def test_an_export_imported_into_any_store_answers_everything_alike_and_exports_the_same_bytes(
    source: SessionWatch, clock: FakeClock, target_kind: str, tmp_path: Path
) -> None:
    build_history(source, clock)
    exported = export_text(source.store)
    assert export_text(source.store) == exported, "exporting twice gives the same bytes"
    target_clock = FakeClock(clock.now())
    with fresh_store_url(target_kind, tmp_path, "target.db") as url, open_store(url, target_clock) as target:
        report = import_history(target.store, exported.splitlines(keepends=True))
        model = source.store.read_model()
        assert report == ImportReport(
            events=len(exported.splitlines()) - 2,  # neither the header nor the trailer
            sessions=len(model.sessions),
            signals=sum(len(log) for log in model.signals.values()),
            cursors=len(model.all_cursors()),
            links=len(model.links),
            sequence=source.store.last_sequence(),
            version=2,
        )
        assert_same_answers(source, target)
        assert export_text(target.store) == exported, "export, import, export gives the same bytes"
        checkpoint = [orjson.loads(line) for line in exported.splitlines() if "store.pruned.v5" in line][-1]
        assert target.store.last_prune_ms() == checkpoint["payload"]["cutoffs"]["at_ms"]

        counter = source.store.last_sequence()
        continue_history(source, clock, counter)
        continue_history(target, target_clock, counter)
        assert_same_answers(source, target)
        assert export_text(target.store) == export_text(source.store), "the same future, byte for byte"


def test_every_store_exports_the_same_bytes_for_the_same_history(
    source: SessionWatch, clock: FakeClock
) -> None:
    build_history(source, clock)
    reference_clock = FakeClock()
    with open_store("memory://", reference_clock) as reference:
        build_history(reference, reference_clock)
        assert export_text(source.store) == export_text(reference.store)


def test_the_header_lists_every_stream_version_including_compacted_and_deleted_ones(
    source: SessionWatch, clock: FakeClock
) -> None:
    build_history(source, clock)
    lines = export_text(source.store).splitlines()
    header = orjson.loads(lines[0])
    events = [orjson.loads(line) for line in lines[1:-1]]
    assert list(header) == sorted(header)
    assert (header["format"], header["version"]) == ("sessionwatch.history", 2)
    assert header["sequence"] == source.store.last_sequence()
    assert list(header["streams"]) == sorted(header["streams"])
    newest: dict[str, int] = {}
    for event in events:
        newest[event["stream"]] = max(newest.get(event["stream"], 0), event["version"])
    assert all(header["streams"][stream] >= version for stream, version in newest.items())
    compacted = [s for s, v in header["streams"].items() if v > newest.get(s, 0)]
    assert compacted, "the prune compacted away the newest events of some streams"


def test_export_writes_through_a_callable_and_counts_the_events(
    source: SessionWatch, clock: FakeClock
) -> None:
    build_history(source, clock)
    chunks: list[str] = []
    written = export_history(source.store, chunks.append)
    assert written == source.store.stored_event_count() == len(chunks) - 2
    assert "".join(chunks) == "".join(history_lines(source.store)) == export_text(source.store)
    assert all(chunk.endswith("\n") and chunk.count("\n") == 1 for chunk in chunks)


def test_an_empty_store_exports_a_header_and_a_trailer_only_and_imports_as_empty(
    source: SessionWatch, clock: FakeClock
) -> None:
    exported = export_text(source.store)
    assert exported == EMPTY
    with open_store("memory://", clock) as target:
        assert import_history(target.store, exported.splitlines()) == ImportReport(0, 0, 0, 0, 0, 0, 2)
        assert export_text(target.store) == exported


def test_an_imported_store_dedupes_and_continues_its_sequences(
    source: SessionWatch, clock: FakeClock, tmp_path: Path
) -> None:
    build_history(source, clock)
    before = source.session_status(WORKER, changes_since=0).to_json()
    counter = source.store.last_sequence()
    with fresh_store_url("sqlite", tmp_path, "target.db") as url, open_store(url, clock) as target:
        import_history(target.store, export_text(source.store).splitlines())
        again = target.record_human_message(WORKER, channel="slack", dedupe_key="msg-1")
        assert again is not None
        assert again == source.record_human_message(WORKER, channel="slack", dedupe_key="msg-1")
        assert target.session_status(WORKER, changes_since=0).to_json() == before
        new = goal(target, MANAGER)
        assert new.sequence == counter + 1
        assert target.session_status(MANAGER).state_version == counter + 1
        with pytest.raises(UnknownSession):
            target.session_status(GONE)


def test_a_version_one_checkpoint_line_imports_through_the_upcaster(
    source: SessionWatch, clock: FakeClock
) -> None:
    source.upsert_session(WORKER)
    assert source.watch(COORDINATOR, WORKER)
    goal(source, WORKER)
    clock.advance(hours=30)
    goal(source, WORKER)  # and its hourly prune: a checkpoint without links
    lines = export_text(source.store).splitlines(keepends=True)
    (position,) = [i for i, line in enumerate(lines) if '"type":"store.pruned.v5"' in line]
    checkpoint = orjson.loads(lines[position])
    assert checkpoint["payload"].pop("links") == []
    old = as_version_one(lines)  # old stored names come in histories of the old format
    old[position] = orjson.dumps({**checkpoint, "type": "store.pruned.v1"}).decode() + "\n"
    with open_store("memory://", clock) as target:
        import_history(target.store, old)
        assert target.store.read_model() == source.store.read_model()
        assert export_text(target.store) == "".join(lines), "re-exported under the current name"


# ------------------------------------------------------------------------------------ refusals


def assert_empty(store: SignalStore) -> None:
    assert store.stored_event_count() == 0
    assert store.last_sequence() == 0
    assert store.read_model() == ReadModel()
    assert export_text(store) == EMPTY


def test_import_into_a_store_that_holds_history_is_refused_and_writes_nothing(
    source: SessionWatch, clock: FakeClock
) -> None:
    build_history(source, clock)
    exported = export_text(source.store)
    with pytest.raises(HistoryError, match="already holds history") as refused:
        import_history(source.store, exported.splitlines())
    assert refused.value.line is None
    assert export_text(source.store) == exported


def test_loading_into_a_store_that_holds_history_is_refused_inside_the_transaction(
    source: SessionWatch, clock: FakeClock
) -> None:
    build_history(source, clock)
    exported = export_text(source.store)
    with pytest.raises(StoreNotEmptyError):
        source.store.load_history([], HistoryTail(ReadModel(), 0, {}, None))
    assert export_text(source.store) == exported


def test_a_store_opened_with_its_sweep_is_still_empty_enough_to_import(
    store_url: str, clock: FakeClock
) -> None:
    reference_clock = FakeClock()
    with open_store("memory://", reference_clock) as reference:
        build_history(reference, reference_clock)
        exported = export_text(reference.store)
    with sessionwatch.open(store_url, clock=clock) as target:  # the sweep's prune stamped last_prune_ms
        import_history(target.store, exported.splitlines())
        assert export_text(target.store) == exported


Mutation = Callable[[list[str]], tuple[list[str], int]]
"""A broken copy of an export's lines, and the 1-based line the import must name."""


def _header(lines: list[str], **changes: Any) -> list[str]:
    return [orjson.dumps({**orjson.loads(lines[0]), **changes}).decode(), *lines[1:]]


def _event(lines: list[str], index: int, **changes: Any) -> list[str]:
    out = [*lines]
    out[index] = orjson.dumps({**orjson.loads(lines[index]), **changes}).decode()
    return out


def _payload(lines: list[str], index: int, **changes: Any) -> list[str]:
    return _event(lines, index, payload={**orjson.loads(lines[index])["payload"], **changes})


def _signals(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if '"type":"session.signal_recorded.v1"' in line]


def _version_above_header(lines: list[str]) -> tuple[list[str], int]:
    """The header understates a stream's version: the first event above it is named."""
    index, event = next((i, e) for i, e in enumerate(map(orjson.loads, lines[1:]), 1) if e["version"] > 1)
    streams = {**orjson.loads(lines[0])["streams"], event["stream"]: event["version"] - 1}
    return _header(lines, streams=streams), index + 1


def _sequence_above_counter(lines: list[str]) -> tuple[list[str], int]:
    first = _signals(lines)[0]
    return _header(lines, sequence=orjson.loads(lines[first])["payload"]["sequence"] - 1), first + 1


def _sequence_recorded_twice(lines: list[str]) -> tuple[list[str], int]:
    first, second = _signals(lines)[:2]
    sequence = orjson.loads(lines[first])["payload"]["sequence"]
    return _payload(lines, second, sequence=sequence), second + 1


def _invalid_payload(lines: list[str]) -> tuple[list[str], int]:
    first = _signals(lines)[0]
    return _payload(lines, first, sequence="many"), first + 1


def _two_retained_holders(lines: list[str]) -> tuple[list[str], int]:
    """The last retained signal without a dedupe key takes one a retained signal holds already."""
    holder = next(i for i in _signals(lines) if '"dedupe_key":"msg-1"' in lines[i])
    later = [i for i in _signals(lines) if i > holder and '"dedupe_key":null' in lines[i]][-1]
    return _payload(lines, later, dedupe_key="msg-1"), later + 1


CASES: list[tuple[str, Mutation, str]] = [
    ("bad JSON", lambda ls: ([*ls[:2], "{not json", *ls[3:]], 3), "not JSON"),
    ("not an object", lambda ls: ([*ls[:2], "[1, 2]", *ls[3:]], 3), "expected a JSON object, got list"),
    ("empty line", lambda ls: ([*ls[:3], "", *ls[4:]], 4), "empty line"),
    ("no header", lambda _: ([], 1), "no header"),
    ("wrong format", lambda ls: (_header(ls, format="other"), 1), "not a sessionwatch history"),
    ("wrong version", lambda ls: (_header(ls, version=3), 1), "unsupported history version 3"),
    ("negative counter", lambda ls: (_header(ls, sequence=-1), 1), "sequence must be an integer >= 0"),
    ("header extra key", lambda ls: (_header(ls, extra=1), 1), "unexpected ['extra']"),
    ("header bad stream", lambda ls: (_header(ls, streams={"nope": 1}), 1), "'nope' is not a UUID"),
    (
        "unknown stored type",
        lambda ls: (_event(ls, 2, type="session.exploded.v1"), 3),
        "unknown stored event type 'session.exploded.v1'",
    ),
    ("invalid payload", _invalid_payload, "invalid session.signal_recorded.v1 payload: sequence"),
    ("extra payload field", lambda ls: (_payload(ls, 2, colour="red"), 3), "payload: colour"),
    ("event extra key", lambda ls: (_event(ls, 2, id=1), 3), "unexpected ['id']"),
    ("bad version", lambda ls: (_event(ls, 2, version=0), 3), "version must be an integer >= 1"),
    ("repeated version", lambda ls: ([*ls[:3], ls[2], *ls[3:]], 4), "does not follow version"),
    ("version above the header's", _version_above_header, "above the header's version"),
    (
        "wrong stream",
        lambda ls: (_event(ls, 2, stream=orjson.loads(ls[3])["stream"]), 3),
        "belongs on stream",
    ),
    ("sequence above the counter", _sequence_above_counter, "above the header's sequence counter"),
    ("a sequence recorded twice", _sequence_recorded_twice, "was already recorded on line"),
    ("one dedupe key held twice", _two_retained_holders, "is held by two retained signals"),
]


def reference_lines() -> list[str]:
    """The lines of the rich history's export, built on a memory store."""
    clock = FakeClock()
    with open_store("memory://", clock) as reference:
        build_history(reference, clock)
        return export_text(reference.store).splitlines()


@pytest.mark.parametrize(("mutate", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_malformed_input_is_refused_naming_its_line_and_writes_nothing(
    store_url: str, clock: FakeClock, mutate: Mutation, message: str
) -> None:
    lines = reference_lines()
    broken, line = mutate(lines)
    with open_store(store_url, clock) as target:
        with pytest.raises(HistoryError) as refused:
            import_history(target.store, broken)
        assert refused.value.line == line
        assert str(refused.value).startswith(f"line {line}: ")
        assert message in str(refused.value)
        assert_empty(target.store)
        import_history(target.store, lines)  # nothing half-written stands in the way
        assert export_text(target.store) == "\n".join(lines) + "\n"


def test_a_record_refused_after_import_writes_nothing_either(source: SessionWatch, clock: FakeClock) -> None:
    build_history(source, clock)
    with open_store("memory://", clock) as target:
        import_history(target.store, export_text(source.store).splitlines())
        before = export_text(target.store)
        with pytest.raises(InvalidSignal):
            target.record(WORKER, kind="goal_changed", actor=Actor.system(), summary="two\nlines")
        assert export_text(target.store) == before


# ---------------------------------------------------------------- checked in a second process


def _import_elsewhere(store: SignalStore, lines: list[str]) -> ImportReport:
    return import_history(store, lines, check_elsewhere=True)


def test_an_import_checked_in_a_second_process_loads_what_one_process_loads(
    source: SessionWatch, clock: FakeClock, tmp_path: Path
) -> None:
    build_history(source, clock)
    exported = export_text(source.store)
    with open_store("memory://", clock) as here:
        expected = import_history(here.store, exported.splitlines())
    with open_store(f"sqlite:///{tmp_path / 'target.db'}", FakeClock()) as target:
        assert _import_elsewhere(target.store, exported.splitlines()) == expected
        assert export_text(target.store) == exported


@pytest.mark.parametrize(("mutate", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_second_process_refuses_each_malformed_input_as_one_process_does(
    tmp_path: Path, mutate: Mutation, message: str
) -> None:
    lines = reference_lines()
    broken, line = mutate(lines)
    with open_store(f"sqlite:///{tmp_path / 'target.db'}", FakeClock()) as target:
        with pytest.raises(HistoryError) as refused:
            _import_elsewhere(target.store, broken)
        assert (refused.value.line, message in str(refused.value)) == (line, True), str(refused.value)
        assert str(refused.value).startswith(f"line {line}: ")
        assert_empty(target.store)


def _many_signals(count: int) -> list[str]:
    clock = FakeClock()
    with open_store("memory://", clock) as watch:
        watch.watch(MANAGER, WORKER)
        watch.record_many(
            SignalInput(session_key=WORKER, kind="goal_changed", actor=Actor.system(), summary=f"goal {n}")
            for n in range(count)
        )
        return export_text(watch.store).splitlines()


def test_a_refusal_found_chunks_after_the_first_stops_the_import_and_writes_nothing(tmp_path: Path) -> None:
    lines = _many_signals(3_000)
    late = _signals(lines)[2_500]
    broken = _payload(lines, late, sequence=orjson.loads(lines[late - 1])["payload"]["sequence"])
    with open_store(f"sqlite:///{tmp_path / 'target.db'}", FakeClock()) as target:
        with pytest.raises(HistoryError, match=f"^line {late + 1}: sequence .* was already recorded on line"):
            _import_elsewhere(target.store, broken)
        assert_empty(target.store)
        assert _import_elsewhere(target.store, lines).events == len(lines) - 2  # header, trailer


def test_a_checking_process_that_fails_fails_the_import_with_its_error_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _many_signals(1_500)
    broken_python = tmp_path / "python"
    broken_python.write_text("#!/bin/sh\necho 'checker exploded' >&2\nexit 3\n")
    broken_python.chmod(0o755)
    monkeypatch.setattr("sessionwatch.adapters.history.check_process.sys.executable", str(broken_python))
    with open_store(f"sqlite:///{tmp_path / 'target.db'}", FakeClock()) as target:
        with pytest.raises(RuntimeError, match=r"checking process .*checker exploded"):
            _import_elsewhere(target.store, lines)
        assert_empty(target.store)


# ---------------------------------------------------------------- SQLite's indexes during a load


def _schema_and_integrity(path: Path) -> tuple[list[tuple[str, ...]], str]:
    with closing(sqlite3.connect(path)) as raw:
        schema = raw.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        return schema.fetchall(), raw.execute("PRAGMA integrity_check").fetchone()[0]


def test_a_sqlite_load_builds_back_the_indexes_it_dropped_and_a_refused_one_leaves_them(
    tmp_path: Path,
) -> None:
    """The load drops two signal indexes and builds them back: after a load, with or without deletes
    and prunes among its events, and after a load refused half-way, the schema is a new store's and
    every index holds exactly its table's rows (`integrity_check`)."""
    new = tmp_path / "new.db"
    open_store(f"sqlite:///{new}", FakeClock()).close()
    expected = (_schema_and_integrity(new)[0], "ok")
    clock = FakeClock()
    with open_store("memory://", clock) as rich:
        build_history(rich, clock)  # a delete and a compacting prune among its events
        rich_lines = export_text(rich.store).splitlines()
    plain = _many_signals(3_000)
    late = _signals(plain)[2_500]
    refused = _payload(plain, late, sequence=orjson.loads(plain[late - 1])["payload"]["sequence"])
    for name, lines, elsewhere in [
        ("rich", rich_lines, False),
        ("plain", plain, True),
        ("refused", refused, True),
    ]:
        path = tmp_path / f"{name}.db"
        with open_store(f"sqlite:///{path}", FakeClock()) as target:
            if name == "refused":
                with pytest.raises(HistoryError):
                    import_history(target.store, lines, check_elsewhere=elsewhere)
            else:
                import_history(target.store, lines, check_elsewhere=elsewhere)
                assert export_text(target.store) == "\n".join(lines) + "\n"
        assert _schema_and_integrity(path) == expected, name
