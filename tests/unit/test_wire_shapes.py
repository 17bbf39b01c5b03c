"""The JSON a host sees from every read model and report: keys, key order, value types, omissions.

Each case pins `to_json()` on representative values (empty and None fields, datetimes off UTC and
with microseconds, payload filtering). Equality alone would let `1` pass for `True`, a tuple for a
list, an enum member for its text or a reordered object, so the `repr` is compared as well.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from sessionwatch import (
    AuditReport,
    Cursor,
    Notice,
    PruneReport,
    SessionRow,
    SessionsListResult,
    SessionsSpawnResult,
    SessionStatus,
    Signal,
    SignalKind,
    StateChange,
    StateChanges,
    SweepReport,
    TickReport,
    UpstreamLink,
    Violation,
)
from sessionwatch.adapters.history.openclaw import OpenclawReport
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.domain.signals import Payload, to_epoch_ms
from sessionwatch.domain.tools.results import AttachmentReceipt, AttachmentsReceipt, SessionListRow
from sessionwatch.domain.tools.visibility import VisibilityNote

KEY = "agent:main:subagent:child"
AT = datetime(2025, 3, 4, 5, 6, 7, 891_234, tzinfo=UTC)
AT_MS = 1_741_064_767_891
EAST = datetime(2025, 3, 4, 7, 6, 7, 891_999, tzinfo=timezone(timedelta(hours=2)))
BEFORE_EPOCH = datetime(1969, 12, 31, 23, 59, 59, 999_500, tzinfo=UTC)


def pinned(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    assert actual == expected
    assert repr(actual) == repr(expected)


def recorded(payload: Payload | None = None, **fields: Any) -> SignalRecorded:
    base: dict[str, Any] = {
        "sequence": 41,
        "session_key": KEY,
        "agent_id": "main",
        "kind": SignalKind.RUN_FAILED,
        "actor_type": "system",
        "occurred_at_ms": AT_MS,
        "recorded_at_ms": AT_MS + 5,
        "summary": "run failed",
        "payload": payload,
    }
    return SignalRecorded(**(base | fields))


def test_the_times_are_epoch_milliseconds_rounded_down() -> None:
    assert to_epoch_ms(AT) == AT_MS
    assert to_epoch_ms(EAST) == AT_MS
    assert to_epoch_ms(BEFORE_EPOCH) == -1


# ----------------------------------------------------------------------------------- signals


def test_a_signal_puts_its_set_optional_fields_after_the_required_ones() -> None:
    signal = Signal.from_event(
        recorded(
            Payload(turns=2, channel="slack", status="x", outcome="error"),
            session_id="sid-1",
            actor_id="worker",
            run_id="run-9",
            dedupe_key="d-1",
        )
    )
    pinned(
        signal.to_json(),
        {
            "sequence": 41,
            "sessionKey": KEY,
            "agentId": "main",
            "kind": "run_failed",
            "actorType": "system",
            "occurredAt": AT_MS,
            "summary": "run failed",
            "sessionId": "sid-1",
            "actorId": "worker",
            "runId": "run-9",
            "payload": {"turns": 2, "channel": "slack", "status": "x", "outcome": "error"},
            "dedupeKey": "d-1",
        },
    )


@pytest.mark.parametrize("empty", [None, ""])
def test_a_signal_omits_its_empty_optional_fields(empty: str | None) -> None:
    signal = Signal(
        sequence=1,
        session_key=KEY,
        agent_id="main",
        session_id=empty,
        kind=SignalKind.GOAL_CHANGED,
        actor_type="human",
        actor_id=empty,
        run_id=empty,
        occurred_at=EAST,
        summary="",
        payload={} if empty == "" else None,
        dedupe_key=empty,
    )
    pinned(
        signal.to_json(),
        {
            "sequence": 1,
            "sessionKey": KEY,
            "agentId": "main",
            "kind": "goal_changed",
            "actorType": "human",
            "occurredAt": AT_MS,
            "summary": "",
        },
    )


def test_a_signal_keeps_the_text_of_a_payload_value() -> None:
    signal = Signal.from_event(recorded(Payload(channel="7")))
    assert signal.to_json()["payload"] == {"channel": "7"}


# ----------------------------------------------------------------------------- state changes


CHANGE_JSON = {
    "sequence": 41,
    "kind": "run_failed",
    "actorType": "system",
    "occurredAt": AT_MS,
    "summary": "run failed",
}
"""The JSON of `recorded()` as a state change, without its optional fields."""


def test_a_state_change_shows_only_the_public_payload_keys() -> None:
    change = StateChange.from_event(
        recorded(Payload(turns=3, channel="c", status="hidden", outcome="timeout"), actor_id="a", run_id="r")
    )
    pinned(
        change.to_json(),
        CHANGE_JSON
        | {"actorId": "a", "runId": "r", "payload": {"turns": 3, "channel": "c", "outcome": "timeout"}},
    )


def test_a_state_change_drops_a_payload_with_no_public_key() -> None:
    change = StateChange.from_event(recorded(Payload(status="hidden")))
    pinned(change.to_json(), CHANGE_JSON)


def test_a_state_change_omits_empty_optional_fields() -> None:
    change = StateChange(
        sequence=2,
        kind=SignalKind.COMPACTED,
        actor_type="agent",
        occurred_at=BEFORE_EPOCH,
        summary="s",
        actor_id="",
        run_id="",
        payload={},
    )
    pinned(
        change.to_json(),
        {"sequence": 2, "kind": "compacted", "actorType": "agent", "occurredAt": -1, "summary": "s"},
    )


def test_a_session_status_nests_its_changes_only_when_asked_for() -> None:
    pinned(SessionStatus(session_key=KEY, state_version=0).to_json(), {"sessionKey": KEY, "stateVersion": 0})
    empty = StateChanges(events=(), truncated=False, earliest_available_sequence=0, history_gap=False)
    pinned(
        SessionStatus(session_key=KEY, state_version=0, state_changes=empty).to_json(),
        {
            "sessionKey": KEY,
            "stateVersion": 0,
            "stateChanges": {
                "events": [],
                "truncated": False,
                "earliestAvailableSequence": 0,
                "historyGap": False,
            },
        },
    )
    change = StateChange.from_event(recorded(Payload(outcome="cancelled"), actor_id="a"))
    changes = StateChanges(events=(change,), truncated=True, earliest_available_sequence=40, history_gap=True)
    pinned(
        SessionStatus(session_key=KEY, state_version=41, state_changes=changes).to_json(),
        {
            "sessionKey": KEY,
            "stateVersion": 41,
            "stateChanges": {
                "events": [
                    {
                        "sequence": 41,
                        "kind": "run_failed",
                        "actorType": "system",
                        "occurredAt": AT_MS,
                        "summary": "run failed",
                        "actorId": "a",
                        "payload": {"outcome": "cancelled"},
                    }
                ],
                "truncated": True,
                "earliestAvailableSequence": 40,
                "historyGap": True,
            },
        },
    )


def test_a_session_row_omits_the_state_version_only_when_it_is_none() -> None:
    pinned(
        SessionRow(session_key=KEY, agent_id="main", kind="subagent").to_json(),
        {"sessionKey": KEY, "agentId": "main", "kind": "subagent"},
    )
    pinned(
        SessionRow(session_key=KEY, agent_id="main", kind="main", state_version=0).to_json(),
        {"sessionKey": KEY, "agentId": "main", "kind": "main", "stateVersion": 0},
    )


# ---------------------------------------------------------------------------- cursors, notices


def test_a_cursor_shows_every_position_and_its_update_time() -> None:
    cursor = Cursor(
        watcher="agent:main:main",
        target=KEY,
        target_agent_id="main",
        last_seen=1,
        notified=2,
        material=3,
        updated_at=EAST,
    )
    pinned(
        cursor.to_json(),
        {
            "watcher": "agent:main:main",
            "target": KEY,
            "targetAgentId": "main",
            "lastSeen": 1,
            "notified": 2,
            "material": 3,
            "updatedAt": AT_MS,
            "provenance": "explicit",
        },
    )


def test_a_notice_leaves_out_its_watcher() -> None:
    notice = Notice(watcher="agent:main:main", target=KEY, target_agent_id="main", last_seen=4, text="t")
    pinned(
        notice.to_json(),
        {"target": KEY, "targetAgentId": "main", "lastSeen": 4, "text": "t", "provenance": "explicit"},
    )


# ------------------------------------------------------------------------------------ reports


def test_a_skipped_prune_shows_zeros_and_a_null_cutoff() -> None:
    pinned(
        PruneReport(ran=False, at=AT).to_json(),
        {
            "ran": False,
            "at": AT_MS,
            "occurredBefore": None,
            "throughSequence": 0,
            "signalsRemoved": 0,
            "sessionsStamped": 0,
            "cursorsExpired": 0,
            "eventsDeleted": 0,
            "archived": 0,
        },
    )


def full_prune() -> PruneReport:
    return PruneReport(
        ran=True,
        at=AT,
        occurred_before=BEFORE_EPOCH,
        through_sequence=9,
        signals_removed=8,
        sessions_stamped=7,
        cursors_expired=6,
        events_deleted=5,
        archived=4,
    )


FULL_PRUNE_JSON = {
    "ran": True,
    "at": AT_MS,
    "occurredBefore": -1,
    "throughSequence": 9,
    "signalsRemoved": 8,
    "sessionsStamped": 7,
    "cursorsExpired": 6,
    "eventsDeleted": 5,
    "archived": 4,
}


def test_a_prune_that_ran_shows_its_counts() -> None:
    pinned(full_prune().to_json(), FULL_PRUNE_JSON)


def test_a_sweep_shows_its_prune_first() -> None:
    pinned(
        SweepReport(refrozen=0, republished=0, woken=(), skipped_missing_watchers=0).to_json(),
        {"prune": None, "refrozen": 0, "republished": 0, "woken": [], "skippedMissingWatchers": 0},
    )
    sweep = SweepReport(
        refrozen=1, republished=2, woken=("w1", "w2"), skipped_missing_watchers=3, prune=full_prune()
    )
    pinned(
        sweep.to_json(),
        {
            "prune": FULL_PRUNE_JSON,
            "refrozen": 1,
            "republished": 2,
            "woken": ["w1", "w2"],
            "skippedMissingWatchers": 3,
        },
    )


def test_an_upstream_link_shows_its_source_marker_and_times() -> None:
    link = UpstreamLink(
        session_key=KEY,
        agent_id="main",
        catalog_id="cat",
        host_id="host",
        thread_id="th",
        upstream_kind="claude-code",
        upstream_ref={"path": "/t.jsonl", "depth": 2, "tags": ["a", None], "ratio": 0.5},
        marker={"offset": 3, "queued": [1, 2]},
        link_version=2,
        last_scanned_at=None,
        created_at=BEFORE_EPOCH,
        updated_at=EAST,
    )
    expected: dict[str, Any] = {
        "sessionKey": KEY,
        "agentId": "main",
        "catalogId": "cat",
        "hostId": "host",
        "threadId": "th",
        "upstreamKind": "claude-code",
        "upstreamRef": {"path": "/t.jsonl", "depth": 2, "tags": ["a", None], "ratio": 0.5},
        "marker": {"offset": 3, "queued": [1, 2]},
        "linkVersion": 2,
        "lastScannedAt": None,
        "createdAt": -1,
        "updatedAt": AT_MS,
    }
    pinned(link.to_json(), expected)
    scanned = link.model_copy(update={"last_scanned_at": AT, "marker": None, "upstream_ref": "ref"})
    pinned(scanned.to_json(), expected | {"upstreamRef": "ref", "marker": None, "lastScannedAt": AT_MS})


def test_a_tick_names_its_signals_by_sequence_and_session() -> None:
    pinned(
        TickReport().to_json(),
        {
            "probed": 0,
            "recorded": [],
            "advanced": 0,
            "missed": [],
            "missing": [],
            "deferred": [],
            "ambiguous": [],
            "aborted": [],
            "discarded": [],
            "failedLinks": [],
            "failedCatalogs": [],
            "unknownCatalogs": [],
        },
    )
    first = Signal.from_event(recorded())
    second = Signal.from_event(recorded(sequence=42, session_key="agent:main:main"))
    tick = TickReport(
        probed=3,
        recorded=(first, second),
        advanced=2,
        missed=("m",),
        missing=(second,),
        deferred=("d",),
        ambiguous=("a",),
        aborted=("b",),
        discarded=("c",),
        failed_links=("fl",),
        failed_catalogs=("fc",),
        unknown_catalogs=("uc",),
    )
    pinned(
        tick.to_json(),
        {
            "probed": 3,
            "recorded": [
                {"sequence": 41, "sessionKey": KEY},
                {"sequence": 42, "sessionKey": "agent:main:main"},
            ],
            "advanced": 2,
            "missed": ["m"],
            "missing": [{"sequence": 42, "sessionKey": "agent:main:main"}],
            "deferred": ["d"],
            "ambiguous": ["a"],
            "aborted": ["b"],
            "discarded": ["c"],
            "failedLinks": ["fl"],
            "failedCatalogs": ["fc"],
            "unknownCatalogs": ["uc"],
        },
    )


def test_an_audit_lists_its_violations_with_their_sessions() -> None:
    pinned(
        AuditReport(ok=True, violations=(), events_replayed=0, seconds=1).to_json(),
        {"ok": True, "violations": [], "eventsReplayed": 0, "seconds": 1.0},
    )
    report = AuditReport(
        ok=False,
        violations=(
            Violation(kind="head", detail="went down", session_keys=(KEY, "b")),
            Violation(kind="x", detail="y"),
        ),
        events_replayed=12,
        seconds=0.25,
    )
    pinned(
        report.to_json(),
        {
            "ok": False,
            "violations": [
                {"kind": "head", "detail": "went down", "sessionKeys": [KEY, "b"]},
                {"kind": "x", "detail": "y", "sessionKeys": []},
            ],
            "eventsReplayed": 12,
            "seconds": 0.25,
        },
    )


def test_an_openclaw_import_report_lists_what_it_could_not_carry() -> None:
    report = OpenclawReport(
        signals=1,
        sessions=2,
        cursors=3,
        sequence=4,
        unresolved_cursors=("u",),
        self_watch_cursors=("s1", "s2"),
        ambient_cursors=6,
        watcher_store_paths=("/srv/a.json",),
        payload_values_dropped=5,
    )
    pinned(
        report.to_json(),
        {
            "signals": 1,
            "sessions": 2,
            "cursors": 3,
            "sequence": 4,
            "unresolvedCursors": ["u"],
            "ambiguousCursors": [],
            "selfWatchCursors": ["s1", "s2"],
            "ambientCursors": 6,
            "watcherStorePaths": ["/srv/a.json"],
            "payloadKeysDropped": 0,
            "payloadValuesDropped": 5,
        },
    )


# ------------------------------------------------------------------------------- tool results


def test_a_tool_result_omits_every_none_down_to_its_nested_values() -> None:
    row = SessionListRow(key=KEY, agent_id="main", kind="subagent", channel="slack", updated_at=AT_MS)
    result = SessionsListResult(
        count=1,
        sessions=(row,),
        visibility=VisibilityNote(mode="tree", warning="w"),
    )
    pinned(
        result.to_json(),
        {
            "count": 1,
            "sessions": [
                {
                    "key": KEY,
                    "agentId": "main",
                    "kind": "subagent",
                    "channel": "slack",
                    "archived": False,
                    "pinned": False,
                    "updatedAt": AT_MS,
                }
            ],
            "visibility": {"mode": "tree", "restricted": True, "warning": "w"},
        },
    )
    assert result.to_json_text().startswith('{"count":1,"sessions":[{"key":"agent:main:subagent:child",')


def test_a_tool_result_uses_its_explicit_aliases() -> None:
    files = (AttachmentReceipt(name="a.txt", size_bytes=3, sha256="ab"),)
    result = SessionsSpawnResult(
        status="accepted",
        run_id="r",
        attachments=AttachmentsReceipt(count=1, total_bytes=3, files=files, rel_dir="d"),
    )
    pinned(
        result.to_json(),
        {
            "status": "accepted",
            "runId": "r",
            "attachments": {
                "count": 1,
                "totalBytes": 3,
                "files": [{"name": "a.txt", "bytes": 3, "sha256": "ab"}],
                "relDir": "d",
            },
        },
    )


# ------------------------------------------------------------------------ the rules, elsewhere


def test_the_wire_schema_of_a_session_status_names_the_camel_case_keys() -> None:
    schema = SessionStatus.model_json_schema(mode="serialization")
    assert list(schema["properties"]) == ["sessionKey", "stateVersion", "stateChanges"]
    assert schema["required"] == ["sessionKey", "stateVersion"]
    changes = schema["$defs"]["StateChanges"]["properties"]
    assert list(changes) == ["events", "truncated", "earliestAvailableSequence", "historyGap"]
    change = schema["$defs"]["StateChange"]["properties"]
    assert list(change) == [
        "sequence",
        "kind",
        "actorType",
        "occurredAt",
        "summary",
        "actorId",
        "runId",
        "payload",
    ]
    assert change["occurredAt"]["type"] == "integer"


def test_a_python_dump_keeps_every_field_the_wire_leaves_out() -> None:
    notice = Notice(watcher="agent:main:main", target=KEY, target_agent_id="main", last_seen=4, text="t")
    assert notice.model_dump()["watcher"] == "agent:main:main"
    signal = Signal.from_event(recorded())
    assert signal.model_dump()["session_id"] is None
    assert signal.model_dump()["occurred_at"] == AT.replace(microsecond=891_000)
    assert Signal.model_validate(signal.model_dump()) == signal
    row = SessionRow(session_key=KEY, agent_id="main", kind="main")
    assert row.model_dump(mode="json")["state_version"] is None
