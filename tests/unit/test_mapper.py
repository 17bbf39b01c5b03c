"""Stored events are a contract: explicit versioned names, orjson bodies, no module paths (ADR-0004)."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from sessionwatch.adapters.stores.mapper import (
    EVENT_TYPES,
    UnknownStoredEvent,
    decode,
    digest_stream_id,
    encode,
    link_stream_id,
    session_stream_id,
    to_stored,
)
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import SessionDeleted, SessionReset, SessionUpserted, SignalRecorded
from sessionwatch.domain.signals import Payload, SignalKind
from sessionwatch.domain.upstream import (
    UpstreamLinked,
    UpstreamMarkerAdvanced,
    UpstreamSource,
    UpstreamUnlinked,
)
from sessionwatch.domain.watch_cursor import WatchRegistered
from sessionwatch.testing import payloads, signal_kinds

SIGNAL = SignalRecorded(
    sequence=7,
    session_key="agent:main:subagent:child",
    agent_id="main",
    kind=SignalKind.RUN_FAILED,
    actor_type="system",
    run_id="run-1",
    occurred_at_ms=1_796_000_000_000,
    recorded_at_ms=1_796_000_000_500,
    summary="child run failed",
    payload=Payload(outcome="timeout"),
    dedupe_key="run-terminal:run-1",
)


def test_every_stored_name_is_explicit_and_versioned() -> None:
    assert set(EVENT_TYPES) == {
        "session.upserted.v1",
        "session.meta_updated.v1",
        "session.signal_recorded.v1",
        "session.reset.v1",
        "session.deleted.v1",
        "cursor.watch_registered.v2",
        "cursor.watch_promoted.v1",
        "cursor.notice_acknowledged.v1",
        "cursor.watch_removed.v1",
        "cursor.notices_swept.v1",
        "store.pruned.v5",
        "upstream.linked.v1",
        "upstream.marker_advanced.v1",
        "upstream.unlinked.v1",
        "digest.creation_noted.v1",
        "digest.drained.v1",
    }
    for name in EVENT_TYPES:
        assert re.fullmatch(r"[a-z_]+\.[a-z_]+\.v\d+", name)


def test_the_stored_topic_is_the_event_name_never_a_module_path() -> None:
    stored = to_stored(session_stream_id(SIGNAL.identity), 3, SIGNAL)
    assert stored.topic == "session.signal_recorded.v1"
    assert "sessionwatch" not in stored.topic
    assert stored.originator_version == 3


def test_a_stored_body_is_compact_json_without_the_type_field() -> None:
    body = orjson.loads(encode(SIGNAL))
    assert "type" not in body
    assert body["sequence"] == 7
    assert body["payload"] == {"turns": None, "channel": None, "status": None, "outcome": "timeout"}


@pytest.mark.parametrize(
    "event",
    [
        SIGNAL,
        SessionUpserted(session_key="global", agent_id="ops", kind="cron", spawned_by="agent:ops:main"),
        SessionReset(session_key="global", agent_id="ops"),
        SessionDeleted(session_key="global", agent_id="ops"),
        UpstreamLinked(
            session_key="agent:main:adopted",
            agent_id="main",
            link_version=2,
            at_ms=1_796_000_000_000,
            source=UpstreamSource(
                catalog_id="claude-code",
                host_id="laptop",
                thread_id="t-1",
                upstream_kind="jsonl",
                upstream_ref={"path": "/home/u/.claude/projects/p/t.jsonl", "tags": [1, None, True]},
            ),
            marker={"offset": 1024},
        ),
        UpstreamMarkerAdvanced(
            session_key="agent:main:adopted", agent_id="main", link_version=2, at_ms=1, marker=None
        ),
        UpstreamUnlinked(
            session_key="agent:main:adopted", agent_id="main", link_version=2, at_ms=2, reason="missing"
        ),
    ],
)
def test_decoding_a_stored_event_gives_back_the_same_event(
    event: SignalRecorded
    | SessionUpserted
    | SessionReset
    | SessionDeleted
    | UpstreamLinked
    | UpstreamMarkerAdvanced
    | UpstreamUnlinked,
) -> None:
    assert decode(event.type, encode(event)) == event


def test_a_stored_body_written_by_version_one_still_decodes() -> None:
    old = (
        b'{"sequence":3,"session_key":"agent:main:x","agent_id":"main","session_id":null,'
        b'"kind":"human_direct_message","actor_type":"human","actor_id":null,"run_id":null,'
        b'"occurred_at_ms":1796000000000,"recorded_at_ms":1796000000000,'
        b'"summary":"human message via telegram","payload":null,"dedupe_key":null,'
        b'"watchers":["agent:main:main"]}'
    )
    event = decode("session.signal_recorded.v1", old)
    assert isinstance(event, SignalRecorded)
    assert event.summary == "human message via telegram"
    assert event.watchers == ("agent:main:main",)


def test_an_unknown_stored_name_is_refused_not_guessed() -> None:
    with pytest.raises(UnknownStoredEvent, match=r"session\.signal_recorded\.v9"):
        decode("session.signal_recorded.v9", b"{}")


def test_stream_ids_are_pinned_and_agent_scoped() -> None:
    main_global = session_stream_id(SessionIdentity("global", "main"))
    ops_global = session_stream_id(SessionIdentity("global", "ops"))
    assert main_global != ops_global
    # Stored streams are found by this id: changing the derivation would orphan them.
    assert str(main_global) == "13223bed-1a46-508e-8bbb-8e131f19affa"


def test_a_version_one_prune_checkpoint_is_upcast_to_the_current_one_without_links_or_meta() -> None:
    # Written by store.pruned.v1 (before upstream links existed): no `links` field at all.
    old = (
        b'{"cutoffs":{"at_ms":10,"occurred_before_ms":5,"through_sequence":2,"cursors_updated_before_ms":5},'
        b'"sessions":[{"session_key":"agent:main:x","agent_id":"main","known":true,"session_id":null,'
        b'"kind":"main","spawned_by":null,"parent_session_key":null,"registered":true,"head":4,'
        b'"pruned_through":2}],'
        b'"cursors":[]}'
    )
    event = decode("store.pruned.v1", old)
    assert isinstance(event, SignalsPruned)
    assert event.type == "store.pruned.v5"
    assert event.links == ()
    assert event.digests == ()
    assert event.sessions[0].head == 4
    assert event.sessions[0].meta is None
    assert event.cutoffs.through_sequence == 2


def test_a_version_two_prune_checkpoint_is_upcast_with_no_session_meta() -> None:
    # Written by store.pruned.v2 (before registry metadata, ADR-0012): sessions carry no `meta`.
    old = (
        b'{"cutoffs":{"at_ms":10,"occurred_before_ms":5,"through_sequence":2,"cursors_updated_before_ms":5},'
        b'"sessions":[{"session_key":"agent:main:x","agent_id":"main","known":true,"session_id":"s1",'
        b'"kind":"main","spawned_by":null,"parent_session_key":null,"registered":true,"head":4,'
        b'"pruned_through":2}],'
        b'"cursors":[],"links":[]}'
    )
    event = decode("store.pruned.v2", old)
    assert isinstance(event, SignalsPruned)
    assert event.type == "store.pruned.v5"
    assert [(s.session_id, s.head, s.meta) for s in event.sessions] == [("s1", 4, None)]


def test_a_version_three_prune_checkpoint_is_upcast_with_every_cursor_explicit() -> None:
    # Written by store.pruned.v3 (before cursor provenance, ADR-0049): cursors carry none.
    old = (
        b'{"cutoffs":{"at_ms":10,"occurred_before_ms":5,"through_sequence":2,"cursors_updated_before_ms":5},'
        b'"sessions":[],"links":[],'
        b'"cursors":[{"watcher":"agent:main:main","target_key":"agent:main:x","target_agent_id":"main",'
        b'"last_seen":1,"notified":3,"material":3,"updated_at_ms":9}]}'
    )
    event = decode("store.pruned.v3", old)
    assert isinstance(event, SignalsPruned)
    assert event.type == "store.pruned.v5"
    assert [(c.watcher, c.notified, c.provenance) for c in event.cursors] == [
        ("agent:main:main", 3, "explicit")
    ]


def test_a_version_one_watch_registration_is_read_as_an_explicit_one() -> None:
    old = (
        b'{"watcher":"agent:main:main","target_key":"agent:main:x","target_agent_id":"main",'
        b'"at_ms":9,"head":4}'
    )
    event = decode("cursor.watch_registered.v1", old)
    assert isinstance(event, WatchRegistered)
    assert (event.type, event.head, event.provenance) == ("cursor.watch_registered.v2", 4, "explicit")
    with pytest.raises(ValidationError):  # the current name needs its provenance: only the old one is upcast
        decode("cursor.watch_registered.v2", old)


def test_a_version_four_prune_checkpoint_is_upcast_with_no_creation_digest() -> None:
    # Written by store.pruned.v4 (before the creation digest, ADR-0047): no `digests` field.
    old = (
        b'{"cutoffs":{"at_ms":10,"occurred_before_ms":5,"through_sequence":2,"cursors_updated_before_ms":5},'
        b'"sessions":[],"cursors":[],"links":[]}'
    )
    event = decode("store.pruned.v4", old)
    assert isinstance(event, SignalsPruned)
    assert (event.type, event.digests) == ("store.pruned.v5", ())


def test_digest_stream_ids_are_their_own() -> None:
    identity = SessionIdentity("agent:main:main", "main")
    assert digest_stream_id(identity) not in {session_stream_id(identity), link_stream_id(identity)}


def test_link_stream_ids_are_pinned_and_differ_from_session_streams() -> None:
    identity = SessionIdentity("agent:main:adopted", "main")
    assert link_stream_id(identity) != session_stream_id(identity)
    # Stored streams are found by this id: changing the derivation would orphan them.
    assert str(link_stream_id(identity)) == "66a34075-0ad3-5581-8e82-72ec9b790ab8"


_TEXT = st.text(max_size=12)
_OPTIONAL_TEXT = st.none() | _TEXT


@st.composite
def _recorded_signals(draw: st.DrawFn) -> SignalRecorded:
    kind = draw(signal_kinds())
    payload = draw(payloads(kind))
    return SignalRecorded(
        sequence=draw(st.integers(1, 2**63 - 1)),
        session_key=draw(_TEXT),
        agent_id=draw(_TEXT),
        session_id=draw(_OPTIONAL_TEXT),
        kind=kind,
        actor_type=draw(st.sampled_from(("human", "agent", "system"))),
        actor_id=draw(_OPTIONAL_TEXT),
        run_id=draw(_OPTIONAL_TEXT),
        occurred_at_ms=draw(st.integers(-(2**62), 2**62)),
        recorded_at_ms=draw(st.integers(-(2**62), 2**62)),
        summary=draw(_TEXT),
        payload=Payload.model_validate(payload) if payload is not None else None,
        dedupe_key=draw(_OPTIONAL_TEXT),
        watchers=tuple(draw(st.lists(_TEXT, max_size=3))),
    )


@given(signal=_recorded_signals())
def test_a_recorded_signal_is_encoded_to_the_bytes_of_its_pydantic_dump(signal: SignalRecorded) -> None:
    # Every record encodes one without pydantic's serializer (ADR-0017): same bytes, byte for byte.
    assert encode(signal) == orjson.dumps(signal.model_dump(mode="json", exclude={"type"}))
    assert decode(signal.type, encode(signal)) == signal
