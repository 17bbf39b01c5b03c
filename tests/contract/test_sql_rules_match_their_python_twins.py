"""The SQL forms of the notice and retention rules leave exactly the rows their Python twins leave.

SQLite and PostgreSQL run the material update, the sweep's re-freeze, the drops on reset and
delete, the prune and the reconcile page's payload filter as set-based SQL; the memory store and
every replay run the pure functions in `domain/` and `projections/`. Each test loads generated
tables (a few watchers, targets and agents; cursor positions inside `L <= N <= M` and outside it,
update times at the prune's cut-offs, heads, watermarks, signals with payloads) into a store through
its own bulk loader, runs one rule through the store's write transaction, runs the same input
through the Python twin, and compares every table and count. One store per kind is shared by all
examples and emptied between them, so the whole file runs in seconds.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stores import FILE_STORES, reset_schema, reused_postgres_url

from sessionwatch.adapters.stores.archive import JsonlArchive, archived_signals
from sessionwatch.adapters.stores.mapper import session_stream_id
from sessionwatch.adapters.stores.port import HistoryTail, PruneCounts, SignalStore, SweepCounts
from sessionwatch.adapters.stores.postgres import PostgresSignalStore
from sessionwatch.adapters.stores.sqlite import SqliteSignalStore
from sessionwatch.adapters.stores.urls import parse_url
from sessionwatch.domain.digest import DigestEntry, DigestState
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import DAY_MS, Retention, SignalsPruned
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionEvent,
    SessionReset,
    SessionState,
    SignalRecorded,
)
from sessionwatch.domain.signals import (
    MAX_TURNS,
    NOTIFYING_KINDS,
    ActorType,
    Payload,
    SignalKind,
    notifying_kinds,
)
from sessionwatch.domain.upstream import UpstreamLinkState, UpstreamSource
from sessionwatch.domain.watch_cursor import (
    CursorState,
    MaterialSignalSeen,
    NoticesSwept,
    watcher_identity,
)
from sessionwatch.projections.models import SessionStatus, StateChange
from sessionwatch.projections.read_model import ReadModel, evolve_read_model, implied_facts, plan_sweep
from sessionwatch.projections.retention import plan_prune, prune
from sessionwatch.projections.status import build_status, page_after

# ------------------------------------------------------------------------------------------ pools

WATCHERS = ("agent:main:coordinator", "agent:main:worker", "agent:ops:coordinator")
TARGETS = (
    SessionIdentity("agent:main:worker", "main"),
    SessionIdentity("agent:main:worker", "ops"),  # the same key under another agent: another target
    SessionIdentity("agent:main:subagent:child", "main"),
    SessionIdentity("global", "main"),
    SessionIdentity("agent:ops:coordinator", "ops"),
)
IDENTITIES = tuple(
    sorted(
        {
            *TARGETS,
            *(identity for w in WATCHERS if (identity := watcher_identity(w)) is not None),
            SessionIdentity("agent:main:coordinator", "ops"),  # a watcher's key, not its identity
        }
    )
)
TWINNED = TARGETS[:2]
"""The key held under two agents: drawn more often, as every rule must keep the two apart."""
ACTOR_IDS = (None, *WATCHERS, "agent:main:main", "global")
PAIRS = tuple((w, t) for w in WATCHERS for t in TARGETS if watcher_identity(w) != t)  # no self-watch

NOW_MS = 40 * DAY_MS
RETENTION_DAYS = 1
CUT_MS = NOW_MS - RETENTION_DAYS * DAY_MS  # the age cut-off of signals and cursors alike
INSTANTS = (CUT_MS - 1, CUT_MS, CUT_MS + 1, NOW_MS)
"""Update and display times: either side of the prune's cut-offs, and the sweep's instants."""

AT_INSTANTS = st.sampled_from(INSTANTS)
NO_WATCHERS: st.SearchStrategy[tuple[str, ...]] = st.just(())
POSITIONS = st.integers(0, 6)
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=8
).filter(str.strip)
PAYLOADS = st.one_of(
    st.none(),
    st.builds(
        Payload,
        turns=st.none() | st.sampled_from((1, 7, MAX_TURNS)),
        channel=st.none() | st.sampled_from(("telegram", ' "web" ', "Канал\\")) | TEXT,
        status=st.none() | TEXT,
        outcome=st.none() | st.sampled_from(("error", "timeout", "cancelled")),
    ),
    st.builds(Payload, status=TEXT),  # nothing public: the page shows no payload at all
)
PRODUCER_WATCHERS = st.lists(
    st.sampled_from((*WATCHERS, "global", "agent:main:subagent:child")), unique=True, max_size=2
).map(tuple)
DEDUPE_KEYS = ("compacted:op-1", "compacted:op-2", "run-terminal:run-3")

# --------------------------------------------------------------------------------------- the world


@st.composite
def sessions(draw: st.DrawFn) -> dict[SessionIdentity, SessionState]:
    """Rows of `sw_sessions`: most identities known, some upserted (the sweep's "watcher exists")."""
    rows: dict[SessionIdentity, SessionState] = {}
    for identity in IDENTITIES:
        if draw(st.integers(0, 3)) < 3:
            rows[identity] = SessionState(
                session_key=identity.session_key,
                agent_id=identity.agent_id,
                known=True,
                session_id=draw(st.sampled_from((None, "s-1"))),
                registered=draw(st.integers(0, 2)) < 2,
                head=draw(POSITIONS),
                pruned_through=draw(POSITIONS),
            )
    return rows


@st.composite
def cursors(draw: st.DrawFn) -> dict[SessionIdentity, dict[str, CursorState]]:
    """Rows of `sw_cursors`: most keep `L <= N <= M`, the rest test the rules beyond it."""
    by_target: dict[SessionIdentity, dict[str, CursorState]] = {}
    for watcher, target in draw(st.lists(st.sampled_from(PAIRS), unique=True, max_size=8)):
        positions = draw(st.lists(POSITIONS, min_size=3, max_size=3))
        if draw(st.integers(0, 3)):
            positions.sort()
        last_seen, notified, material = positions
        tie = draw(st.integers(0, 5))  # the ties the rules compare for; 3 to 5 keep the drawn positions
        if tie == 0:
            notified = last_seen  # no notice open
        elif tie == 1:
            notified = material  # frozen at M
        elif tie == 2:
            notified = material = last_seen  # acknowledged, nothing since
        by_target.setdefault(target, {})[watcher] = CursorState(
            watcher=watcher,
            target_key=target.session_key,
            target_agent_id=target.agent_id,
            last_seen=last_seen,
            notified=notified,
            material=material,
            updated_at_ms=draw(AT_INSTANTS),
            provenance=draw(st.sampled_from(("explicit", "ambient"))),  # ambient: queue-only, no run's end
        )
    return by_target


@st.composite
def signal(
    draw: st.DrawFn,
    sequence: int,
    identity: SessionIdentity,
    *,
    occurred: st.SearchStrategy[int] = AT_INSTANTS,
    watchers: st.SearchStrategy[tuple[str, ...]] = NO_WATCHERS,
    dedupe_key: str | None = None,
) -> SignalRecorded:
    """One stored signal of any kind, by any actor."""
    actor_type: ActorType = draw(st.sampled_from(("agent", "agent", "human", "system")))
    return SignalRecorded(
        sequence=sequence,
        session_key=identity.session_key,
        agent_id=identity.agent_id,
        session_id=draw(st.sampled_from((None, None, "s-1", "s-2"))),
        kind=draw(st.sampled_from(list(SignalKind))),
        actor_type=actor_type,
        actor_id=draw(st.sampled_from(ACTOR_IDS)),
        run_id=draw(st.sampled_from((None, "run-1"))),
        occurred_at_ms=draw(occurred),
        recorded_at_ms=draw(AT_INSTANTS),
        summary=draw(st.sampled_from(("goal updated", 'say "hi" \\ 👋'))),
        payload=draw(PAYLOADS),
        dedupe_key=dedupe_key,
        watchers=draw(watchers),
    )


@st.composite
def signal_logs(
    draw: st.DrawFn, occurred: st.SearchStrategy[int] = AT_INSTANTS
) -> dict[SessionIdentity, tuple[SignalRecorded, ...]]:
    """Rows of `sw_signals`: unique sequences, dedupe keys unique where set."""
    sequences = draw(st.lists(st.integers(1, 12), unique=True, max_size=8))
    keys = iter(draw(st.permutations(DEDUPE_KEYS)))
    logs: dict[SessionIdentity, list[SignalRecorded]] = {}
    for sequence in sorted(sequences):
        identity = draw(st.sampled_from((*IDENTITIES, *TWINNED)))
        dedupe_key = next(keys, None) if draw(st.integers(0, 3)) == 0 else None
        logs.setdefault(identity, []).append(
            draw(signal(sequence, identity, occurred=occurred, dedupe_key=dedupe_key))
        )
    return {identity: tuple(log) for identity, log in logs.items()}


def _link(identity: SessionIdentity) -> UpstreamLinkState:
    source = UpstreamSource(
        catalog_id="codex", host_id="host", thread_id=f"thread-{identity.session_key}", upstream_kind="file",
        upstream_ref={"path": "t.jsonl"},
    )  # fmt: skip
    return UpstreamLinkState(
        session_key=identity.session_key,
        agent_id=identity.agent_id,
        source=source,
        marker={"offset": 3},
        link_version=1,
        created_at_ms=CUT_MS,
        updated_at_ms=CUT_MS,
    )


@st.composite
def worlds(
    draw: st.DrawFn,
    *,
    with_signals: bool = True,
    occurred: st.SearchStrategy[int] = AT_INSTANTS,
) -> ReadModel:
    """Whole read models: sessions, signals (optional), cursors, a few upstream links and digests."""
    logs = draw(signal_logs(occurred)) if with_signals else {}
    dedupe = {
        s.dedupe_key: (identity, s.sequence) for identity, log in logs.items() for s in log if s.dedupe_key
    }
    linked = draw(st.lists(st.sampled_from(IDENTITIES), unique=True, max_size=2))
    links = {identity: _link(identity) for identity in linked}
    noted = draw(st.lists(st.sampled_from(IDENTITIES), unique=True, max_size=2))
    digests = {identity: _digest(identity) for identity in noted}
    return ReadModel(draw(sessions()), logs, dedupe, draw(cursors()), links, digests)


def _digest(identity: SessionIdentity) -> DigestState:
    entries = (
        DigestEntry(sequence=2, key="agent:main:subagent:child"),
        DigestEntry(sequence=5, key="global"),
    )
    return DigestState(session_key=identity.session_key, agent_id=identity.agent_id, entries=entries)


def top_position(world: ReadModel) -> int:
    """The highest sequence anywhere in the tables: a signal above it is fresh, as every recorded one."""
    positions = [
        p for by in world.cursors.values() for c in by.values() for p in (c.last_seen, c.notified, c.material)
    ]
    heads = [s.head for s in world.sessions.values()]
    sequences = [s.sequence for log in world.signals.values() for s in log]
    return max((*positions, *heads, *sequences, 0))


# ------------------------------------------------------------------------------------- the stores


@dataclass
class Tables:
    """One store of a SQL kind, shared by every example, and how to empty it between them."""

    store: SignalStore
    empty: Callable[[], None]
    scratch: Path

    def load(self, world: ReadModel) -> None:
        """Empty the store, then bulk-load `world`'s rows (each signal with its stored event)."""
        self.empty()
        events: list[tuple[UUID, int, DomainEvent]] = [
            (session_stream_id(identity), version, s)
            for identity, log in world.signals.items()
            for version, s in enumerate(log, 1)
        ]
        self.store.load_history(events, HistoryTail(world, top_position(world), {}, None))
        assert self.store.read_model() == world  # the generated rows are what the tables hold

    def stored(self) -> list[DomainEvent]:
        """Every stored event, in commit order."""
        return list(self.store.replay())


# A commit, an archive's fsync: on tmpfs they cost nothing; durability is not what this file tests.
_TMPFS = Path("/dev/shm")  # noqa: S108 - only a parent: TemporaryDirectory makes a private 0700 dir in it
SCRATCH = _TMPFS if _TMPFS.is_dir() else None
_SQLITE_TABLES = (
    "stored_events",
    "sw_streams",
    "sw_sessions",
    "sw_signals",
    "sw_cursors",
    "sw_upstream_links",
    "sw_digests",
)


def _sqlite_emptier(connection: sqlite3.Connection) -> Callable[[], None]:
    """Empty a SQLite store back to a new one's state, through a connection of the test's own."""

    def empty() -> None:
        connection.execute("BEGIN IMMEDIATE")
        for table in _SQLITE_TABLES:
            connection.execute(f"DELETE FROM {table}")
        connection.execute("DELETE FROM sqlite_sequence")
        connection.execute("DELETE FROM sw_meta WHERE name NOT IN ('sequence', 'schema_version')")
        connection.execute("UPDATE sw_meta SET value = 0 WHERE name = 'sequence'")
        connection.execute("COMMIT")

    return empty


@pytest.fixture(scope="module", params=FILE_STORES)
def tables(request: pytest.FixtureRequest) -> Iterator[Tables]:
    with tempfile.TemporaryDirectory(dir=SCRATCH) as directory:
        yield from _tables(request.param, Path(directory))


def _tables(kind: str, scratch: Path) -> Iterator[Tables]:
    if kind == "sqlite":
        path = scratch / "state.db"
        store = SqliteSignalStore(path)
        try:
            with closing(sqlite3.connect(path, isolation_level=None)) as own:
                yield Tables(store, _sqlite_emptier(own), scratch)
        finally:
            store.close()
        return
    with reused_postgres_url() as url:
        postgres = parse_url(url).postgres
        assert postgres is not None
        pg_store = PostgresSignalStore(postgres)
        try:
            yield Tables(pg_store, lambda: reset_schema(pg_store.schema), scratch)
        finally:
            pg_store.close()


# ------------------------------------------------------------------------------- the Python twins


def python_append(
    world: ReadModel, events: Sequence[SessionEvent], notifying: frozenset[SignalKind] = NOTIFYING_KINDS
) -> tuple[ReadModel, list[MaterialSignalSeen]]:
    """`react`/`derive`/`evolve` through the projection: the model after `events`, and the notices opened."""
    opened: list[MaterialSignalSeen] = []
    for event in events:
        opened.extend(
            f
            for f in implied_facts(world, event, notifying)
            if isinstance(f, MaterialSignalSeen) and f.notified == f.sequence
        )
        world = evolve_read_model(world, event, notifying)
    return world, opened


def python_status(
    world: ReadModel, identity: SessionIdentity, changes_since: int | None, limit: int
) -> SessionStatus | None:
    """The reconcile page from the log: `page_after`, `StateChange.from_event`, `build_status`."""
    state = world.sessions.get(identity)
    if state is None:
        return None
    if changes_since is None:
        return build_status(state, None)
    log = world.signals.get(identity, ())
    page, truncated = page_after(log, changes_since, limit)
    first = log[0].sequence if log else None
    changes = [StateChange.from_event(s) for s in page]
    return build_status(state, changes_since, changes, truncated=truncated, first_retained=first)


def _by_watcher(opened: Sequence[MaterialSignalSeen]) -> list[MaterialSignalSeen]:
    return sorted(opened, key=lambda f: (f.sequence, f.key))  # who is woken, not in which order


# -------------------------------------------------------------------------------- material update


@st.composite
def appended(
    draw: st.DrawFn, world: ReadModel, common: Sequence[SignalKind] = (SignalKind.GOAL_CHANGED,)
) -> list[SignalRecorded]:
    """Signals as the store appends them: fresh ones above every position, in rising sequence.

    Runs by one actor on one target come out often (the store applies such a run as one statement),
    mostly of the `common` kinds. A single signal may instead be a redelivery at or below a
    cursor's material, with producer watchers or without; a producer may name the target's holders.
    """
    watched = sorted(world.cursors)
    on_watched = bool(watched) and draw(st.integers(0, 3)) < 3
    target = draw(st.sampled_from(watched if on_watched else TARGETS))
    holders = sorted(world.cursors.get(target, {}))
    by_holder = bool(holders) and draw(st.integers(0, 2)) < 2  # a holder's own signal notifies it not
    actor: str | None = draw(st.sampled_from(holders if by_holder else ACTOR_IDS))
    highest = max((c.material for c in world.cursors.get(target, {}).values()), default=0)
    named = (
        st.lists(st.sampled_from(holders), unique=True, min_size=1, max_size=2).map(tuple)
        if holders
        else NO_WATCHERS
    )
    watchers = NO_WATCHERS | PRODUCER_WATCHERS | named  # a producer may name a holder, an ambient one too
    if highest and draw(st.booleans()):
        sequence: int = draw(st.integers(1, highest))
        redelivered = draw(signal(sequence, target, watchers=watchers))
        kind = redelivered.kind if draw(st.integers(0, 3)) == 0 else SignalKind.HUMAN_DIRECT_MESSAGE
        return [redelivered.model_copy(update={"kind": kind, "actor_id": actor})]
    batch: list[SignalRecorded] = []
    sequence = top_position(world)
    for _ in range(draw(st.integers(1, 4))):
        sequence += draw(st.integers(1, 2))
        on = target if draw(st.integers(0, 3)) < 3 else draw(st.sampled_from(TARGETS))
        drawn = draw(
            signal(sequence, on, watchers=watchers if on == target else NO_WATCHERS | PRODUCER_WATCHERS)
        )
        kind = drawn.kind if draw(st.integers(0, 3)) == 3 else draw(st.sampled_from(common))
        actor_id = actor if draw(st.integers(0, 3)) < 3 else drawn.actor_id
        batch.append(drawn.model_copy(update={"kind": kind, "actor_id": actor_id}))
    return batch


@settings(max_examples=100)
@given(data=st.data(), world=worlds(with_signals=False))
def test_material_update_and_seeding_match_react_derive_evolve(
    tables: Tables, data: st.DataObject, world: ReadModel
) -> None:
    signals = data.draw(appended(world))
    tables.load(world)
    with tables.store.write() as tx:
        opened = tx.append_signals(signals)
    expected, expected_opened = python_append(world, signals)
    assert tables.store.read_model() == expected
    assert _by_watcher(opened) == _by_watcher(expected_opened)


TERMINAL_RUNS = (SignalKind.RUN_COMPLETED, SignalKind.RUN_FAILED)


@settings(max_examples=100)
@given(data=st.data(), world=worlds(with_signals=False))
def test_material_update_with_terminal_runs_notifying_matches_react_derive_evolve(
    tables: Tables, data: st.DataObject, world: ReadModel
) -> None:
    """The same rule on a store opened with `notify_terminal_runs=True`: a run's end is material too."""
    signals = data.draw(appended(world, common=(SignalKind.GOAL_CHANGED, *TERMINAL_RUNS)))
    notifying = notifying_kinds(terminal_runs=True)
    tables.load(world)
    tables.store.set_notifying_kinds(notifying)
    try:
        with tables.store.write() as tx:
            opened = tx.append_signals(signals)
    finally:
        tables.store.set_notifying_kinds(NOTIFYING_KINDS)  # the store is shared by every example
    expected, expected_opened = python_append(world, signals, notifying)
    assert tables.store.read_model() == expected
    assert _by_watcher(opened) == _by_watcher(expected_opened)


# ------------------------------------------------------------------------------ restart sweep


@settings(max_examples=100)
@given(data=st.data(), world=worlds(with_signals=False))
def test_sweep_refreeze_matches_resume_and_derive(
    tables: Tables, data: st.DataObject, world: ReadModel
) -> None:
    stamps = sorted({c.updated_at_ms for by in world.cursors.values() for c in by.values()})
    at_ms: int = data.draw(AT_INSTANTS)
    at_a_stamp: bool = data.draw(st.integers(0, 2)) < 2
    if stamps and at_a_stamp:  # the instant some cursors were stamped at
        at_ms = data.draw(st.sampled_from(stamps))
    tables.load(world)
    with tables.store.write() as tx:
        counts = tx.sweep(at_ms)
    plan = plan_sweep(world, at_ms)
    woken = tuple(c.key for c in plan.republished if not c.ambient)
    assert counts == SweepCounts(tuple(c.key for c in plan.republished), len(plan.facts), plan.skipped, woken)
    expected = evolve_read_model(world, NoticesSwept(at_ms=at_ms)) if plan.facts else world
    assert tables.store.read_model() == expected
    swept = [e for e in tables.stored() if isinstance(e, NoticesSwept)]
    assert swept == ([NoticesSwept(at_ms=at_ms)] if plan.facts else [])


# ------------------------------------------------------------------------------- reset and delete


CLEAN_UPS = st.lists(
    st.builds(
        lambda identity, event_type: event_type(session_key=identity.session_key, agent_id=identity.agent_id),
        st.sampled_from((*IDENTITIES, *TWINNED)),
        st.sampled_from((SessionReset, SessionDeleted)),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=60)
@given(world=worlds(), events=CLEAN_UPS)
def test_reset_and_delete_drop_the_cursors_react_drops_and_the_digest_the_projection_drops(
    tables: Tables, world: ReadModel, events: list[SessionReset | SessionDeleted]
) -> None:
    tables.load(world)
    with tables.store.write() as tx:
        opened = [f for e in events for f in tx.append(SessionIdentity(e.session_key, e.agent_id), [e])]
    expected, expected_opened = python_append(world, events)
    assert tables.store.read_model() == expected
    assert opened == expected_opened == []


# ---------------------------------------------------------------------------------------- prune


@settings(max_examples=60)
@given(world=worlds(), max_signals=st.integers(1, 6))
def test_prune_removes_stamps_and_expires_as_plan_prune_and_prune(
    tables: Tables, world: ReadModel, max_signals: int
) -> None:
    policy = Retention(days=RETENTION_DAYS, max_signals=max_signals)
    archive = tables.scratch / "pruned.jsonl"
    archive.unlink(missing_ok=True)
    tables.load(world)
    with tables.store.write() as tx:
        counts = tx.prune(NOW_MS, policy, JsonlArchive(archive))
    outcome = prune(world, plan_prune(world, NOW_MS, policy))
    assert counts == PruneCounts(
        cutoffs=outcome.event.cutoffs,
        signals_removed=len(outcome.removed),
        sessions_stamped=len(outcome.stamped),
        cursors_expired=len(outcome.expired),
        events_deleted=counts.events_deleted,  # the event store's compaction, not a read-model rule
        archived=len(outcome.removed),
    )
    assert tables.store.read_model() == outcome.model
    assert (list(archived_signals(archive)) if archive.exists() else []) == list(outcome.removed)
    checkpoints = [e for e in tables.stored() if isinstance(e, SignalsPruned)]
    changed = bool(outcome.removed or outcome.expired)
    assert checkpoints == ([outcome.event] if changed else [])


# --------------------------------------------------------------------------- reconcile page payload

DISPLAY_TIMES = st.one_of(
    AT_INSTANTS,
    st.integers(-DAY_MS, 20_000_000_000),  # read back as ISO text below 2e10 ms, as epoch ms above it
    st.integers(20_000_000_001, 4_102_444_800_000),
)
SINCE = st.sampled_from((None, 0, 0, 1)) | st.integers(0, 13)
QueryArgs: TypeAlias = tuple[int | None, int]


@settings(max_examples=60)
@given(
    world=worlds(occurred=DISPLAY_TIMES),
    queries=st.lists(st.tuples(SINCE, st.integers(1, 4)), min_size=len(IDENTITIES), max_size=len(IDENTITIES)),
)
def test_reconcile_page_shows_the_payload_state_change_shows(
    tables: Tables, world: ReadModel, queries: list[QueryArgs]
) -> None:
    tables.load(world)
    for identity, (changes_since, limit) in zip(IDENTITIES, queries, strict=True):
        shown = tables.store.status(identity, changes_since, limit)
        assert shown == python_status(world, identity, changes_since, limit), identity
