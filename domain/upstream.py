"""Upstream links of adopted sessions and the monitor's rules. Pure values and decisions.

An adopted session (from a local Claude Code or Codex transcript, say) has at most one upstream
link: where its upstream lives and a `marker` saying how far it was read. The link is its own
stream per session identity: linked, marker advanced, unlinked. Unlinking keeps a tombstone with
the link version, so a later link gets a higher version and its `upstream_missing` dedupe key
never collides with an earlier one (ADR-0010).

The monitor asks a provider about each watched link once per tick; `judge` turns one answer into
what the shell does: record activity and advance the marker, advance the marker only, count a miss,
record `upstream_missing` and unlink, or defer. Provider I/O, transactions and clocks are the
shell's (`adapters/upstream/monitor.py`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.messages import Command, Event
from sessionwatch.domain.signals import SignalKind
from sessionwatch.domain.text import has_control_character

MISSES_BEFORE_MISSING = 3
"""Consecutive misses of one link version that make the upstream missing."""

OWN_TEXTS_LIMIT = 10
"""How many of the session's own recent user texts a probe carries for self-echo."""


def normalize_text(text: str) -> str:
    """Whitespace-normalized text: runs of whitespace become one space, ends trimmed (self-echo)."""
    return " ".join(text.split())


# ------------------------------------------------------------------------------ provider values


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class UpstreamProbe(_Value):
    """One question to a provider: has this link's upstream changed since `marker`?."""

    session_key: str
    agent_id: str
    catalog_id: str
    host_id: str
    thread_id: str
    upstream_kind: str
    upstream_ref: JsonValue
    marker: JsonValue
    own_recent_user_texts: tuple[str, ...] = ()
    """The session's own recent user texts, whitespace-normalized, newest last, at most 10."""


class UpstreamActivity(_Value):
    """The upstream moved on: `human_turns` human prompts (0: scanned only) up to `next_marker`."""

    session_key: str
    human_turns: int = Field(ge=0)
    next_marker: JsonValue
    occurred_at: object = None  # an aware datetime or epoch ms, clamped as any occurred_at
    dedupe_id: str | None = None


class UpstreamMissing(_Value):
    """The upstream source is gone (a deleted transcript file, say)."""

    session_key: str


UpstreamAnswer: TypeAlias = UpstreamActivity | UpstreamMissing

# -------------------------------------------------------------------------------------- the link


class UpstreamSource(_Value):
    """Where a link points; a link to another source rebases the marker."""

    catalog_id: str
    host_id: str
    thread_id: str
    upstream_kind: str
    upstream_ref: JsonValue

    @property
    def key(self) -> str:
        """A short stable digest of the source, for dedupe keys (`upstream:<key>:<source>:<id>`)."""
        return _digest(self)


class UpstreamLinkState(_Value):
    """A session's upstream link; `active=False` is the tombstone an unlink leaves (ADR-0010)."""

    session_key: str
    agent_id: str
    source: UpstreamSource
    marker: JsonValue
    link_version: int
    active: bool = True
    last_scanned_at_ms: int | None = None
    created_at_ms: int
    updated_at_ms: int

    @property
    def identity(self) -> SessionIdentity:
        """The adopted session."""
        return SessionIdentity(self.session_key, self.agent_id)

    def probe(self, own_recent_user_texts: tuple[str, ...]) -> UpstreamProbe:
        """The provider question for this link."""
        return UpstreamProbe(
            session_key=self.session_key,
            agent_id=self.agent_id,
            **self.source.model_dump(),
            marker=self.marker,
            own_recent_user_texts=own_recent_user_texts,
        )


# ---------------------------------------------------------------------------------- stored events


class _LinkEvent(Event):
    session_key: str
    agent_id: str
    link_version: int
    at_ms: int  # the local clock


class UpstreamLinked(_LinkEvent):
    """The session was linked (or re-linked) to its upstream at `marker`."""

    type: Literal["upstream.linked.v1"] = "upstream.linked.v1"
    source: UpstreamSource
    marker: JsonValue


class UpstreamMarkerAdvanced(_LinkEvent):
    """The monitor read the upstream up to `marker` (after recording any activity before it)."""

    type: Literal["upstream.marker_advanced.v1"] = "upstream.marker_advanced.v1"
    marker: JsonValue


class UpstreamUnlinked(_LinkEvent):
    """The link was removed: by the host, or by the monitor after three misses (`missing`)."""

    type: Literal["upstream.unlinked.v1"] = "upstream.unlinked.v1"
    reason: Literal["unlinked", "missing"]


LinkEvent: TypeAlias = UpstreamLinked | UpstreamMarkerAdvanced | UpstreamUnlinked

# -------------------------------------------------------------------------------------- commands


class LinkUpstream(Command):
    """Link the session to `source`; the same source keeps the current marker (a refresh)."""

    session_key: str
    agent_id: str
    source: UpstreamSource
    marker: JsonValue
    at_ms: int


class AdvanceMarker(Command):
    """Move the marker of link version `link_version` to `marker`."""

    session_key: str
    agent_id: str
    link_version: int
    marker: JsonValue
    at_ms: int


class Unlink(Command):
    """Remove the link (`link_version` None: whatever version is active)."""

    session_key: str
    agent_id: str
    reason: Literal["unlinked", "missing"]
    at_ms: int
    link_version: int | None = None


LinkCommand: TypeAlias = LinkUpstream | AdvanceMarker | Unlink


def evolve(state: UpstreamLinkState | None, event: LinkEvent) -> UpstreamLinkState | None:
    """Apply one link event; never validates, never raises."""
    match event:
        case UpstreamLinked():
            refresh = state is not None and state.active and same_json(state.source, event.source)
            return UpstreamLinkState(
                session_key=event.session_key,
                agent_id=event.agent_id,
                source=event.source,
                marker=event.marker,
                link_version=event.link_version,
                created_at_ms=state.created_at_ms if refresh and state is not None else event.at_ms,
                updated_at_ms=event.at_ms,
                last_scanned_at_ms=state.last_scanned_at_ms if refresh and state is not None else None,
            )
        case UpstreamMarkerAdvanced():
            if state is None:
                return None
            return state.model_copy(
                update={
                    "marker": event.marker,
                    "last_scanned_at_ms": event.at_ms,
                    "updated_at_ms": event.at_ms,
                }
            )
        case UpstreamUnlinked():
            if state is None:
                return None
            return state.model_copy(update={"active": False, "updated_at_ms": event.at_ms})
        case _:
            assert_never(event)


def decide(command: LinkCommand, state: UpstreamLinkState | None) -> list[LinkEvent]:
    """The link's rules; `[]` means nothing to do (a stale or repeated command)."""
    active = state if state is not None and state.active else None
    ids = {"session_key": command.session_key, "agent_id": command.agent_id, "at_ms": command.at_ms}
    match command:
        case LinkUpstream():
            version = (state.link_version if state is not None else 0) + 1
            refresh = active is not None and same_json(active.source, command.source)
            marker = active.marker if refresh and active is not None else command.marker
            return [UpstreamLinked(**ids, link_version=version, source=command.source, marker=marker)]
        case AdvanceMarker():
            if (
                active is None
                or active.link_version != command.link_version
                or same_json(active.marker, command.marker)
            ):
                return []
            return [UpstreamMarkerAdvanced(**ids, link_version=active.link_version, marker=command.marker)]
        case Unlink():
            if active is None or command.link_version not in (None, active.link_version):
                return []
            return [UpstreamUnlinked(**ids, link_version=active.link_version, reason=command.reason)]
        case _:
            assert_never(command)


MAX_DEDUPE_ID = 64
"""A provider's dedupe id longer than this (or not one clean line) is replaced by a digest."""

MAX_DEDUPE_KEY = 512


def _canonical(value: JsonValue | BaseModel) -> str:
    """JSON with sorted keys and no spaces: `true` and `1`, or `1` and `1.0`, stay different."""
    plain = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def same_json(a: JsonValue | BaseModel, b: JsonValue | BaseModel) -> bool:
    """Whether two markers or sources are the same JSON (Python's `True == 1` is not)."""
    return _canonical(a) == _canonical(b)


def _digest(value: JsonValue | BaseModel) -> str:
    """A short stable digest of a JSON value (keys sorted, compact)."""
    return hashlib.sha256(_canonical(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _bounded(dedupe_key: str) -> str:
    """A dedupe key within the stored limit: a key too long keeps its prefix and a digest of the rest."""
    if len(dedupe_key) <= MAX_DEDUPE_KEY:
        return dedupe_key
    prefix = dedupe_key.split(":", 1)[0]
    return f"{prefix}:{_digest(dedupe_key)}"


def activity_dedupe_key(link: UpstreamLinkState, activity: UpstreamActivity) -> str:
    """`upstream:<sessionKey>:<sourceKey>:<dedupeId>`.

    Without a dedupe id, a digest of the next marker stands for it; an id too long or not one clean
    line is replaced by a digest of itself alone, so a retry reading further still dedupes.
    """
    dedupe_id = activity.dedupe_id
    if not dedupe_id:  # no id from the provider: the position it read up to names the activity
        dedupe_id = f"m{_digest(activity.next_marker)}"
    elif len(dedupe_id) > MAX_DEDUPE_ID or has_control_character(dedupe_id):
        dedupe_id = f"d{_digest(dedupe_id)}"
    return _bounded(f"upstream:{link.session_key}:{link.source.key}:{dedupe_id}")


def missing_dedupe_key(link: UpstreamLinkState) -> str:
    """`upstream-missing:<sessionKey>:<sourceKey>:<linkVersion>`: once per link version."""
    return _bounded(f"upstream-missing:{link.session_key}:{link.source.key}:{link.link_version}")


def activity_summary(catalog_id: str) -> str:
    """The summary of upstream human turns."""
    return f"human message via {catalog_id.strip() or 'unknown'}"


def missing_summary(catalog_id: str) -> str:
    """The summary of a vanished upstream."""
    return f"upstream missing via {catalog_id.strip() or 'unknown'}"


def turns_payload(human_turns: int) -> dict[str, JsonValue] | None:
    """`{"turns": n}` for a burst (n > 1), else no payload."""
    return {"turns": human_turns} if human_turns > 1 else None


# ------------------------------------------------------------------------------ judging an answer


class RecordActivity(_Value):
    """Record `human_direct_message` for the turns, then advance the marker (one transaction)."""

    action: Literal["record_activity"] = "record_activity"
    activity: UpstreamActivity


class AdvanceOnly(_Value):
    """Advance the marker only (activity without human turns)."""

    action: Literal["advance"] = "advance"
    activity: UpstreamActivity


class CountMiss(_Value):
    """One more miss; the streak is below three."""

    action: Literal["miss"] = "miss"
    streak: int


class RecordMissing(_Value):
    """The third miss: record `upstream_missing` and unlink (one transaction)."""

    action: Literal["record_missing"] = "record_missing"


class Defer(_Value):
    """A run is active or started during the scan: change nothing, ask again next tick."""

    action: Literal["defer"] = "defer"


class ResetStreak(_Value):
    """The provider had nothing for this link: nothing changes but the missing streak restarts."""

    action: Literal["nothing"] = "nothing"


Verdict: TypeAlias = RecordActivity | AdvanceOnly | CountMiss | RecordMissing | Defer | ResetStreak


def judge(answer: UpstreamAnswer | None, *, streak: int, run_started: bool) -> Verdict:
    """What one answer about one link means.

    `streak` is the link version's consecutive misses before this answer; `run_started` says a run
    of the session is active or started since the scan began. Activity and a missing third strike
    wait for the run; a first or second miss is only counted. Any other answer resets the streak.
    """
    match answer:
        case None:
            return ResetStreak()
        case UpstreamMissing():
            misses = streak + 1
            if misses < MISSES_BEFORE_MISSING:
                return CountMiss(streak=misses)
            return Defer() if run_started else RecordMissing()
        case UpstreamActivity() if run_started:
            return Defer()
        case UpstreamActivity() if answer.human_turns > 0:
            return RecordActivity(activity=answer)
        case UpstreamActivity():
            return AdvanceOnly(activity=answer)
        case _:
            assert_never(answer)


# ------------------------------------------------------------------------- what a verdict writes


class PlannedSignal(_Value):
    """The signal a verdict records, before validation and its sequence."""

    kind: SignalKind
    actor_type: Literal["human", "system"]
    summary: str
    payload: dict[str, JsonValue] | None
    dedupe_key: str
    occurred_at: object = None  # the provider's time, clamped when the signal is checked


class Publication(_Value):
    """One verdict's write: maybe a signal, then the link command (both in one transaction)."""

    signal: PlannedSignal | None
    link_command: AdvanceMarker | Unlink


def publication(
    link: UpstreamLinkState, verdict: RecordActivity | AdvanceOnly | RecordMissing, *, at_ms: int
) -> Publication:
    """What a writing verdict records and how it moves the link."""
    ids = {"session_key": link.session_key, "agent_id": link.agent_id, "at_ms": at_ms}
    catalog = link.source.catalog_id
    if isinstance(verdict, RecordMissing):
        missing = PlannedSignal(
            kind=SignalKind.UPSTREAM_MISSING,
            actor_type="system",
            summary=missing_summary(catalog),
            payload={"channel": catalog},
            dedupe_key=missing_dedupe_key(link),
        )
        return Publication(
            signal=missing, link_command=Unlink(**ids, reason="missing", link_version=link.link_version)
        )
    activity = verdict.activity
    human = None
    if isinstance(verdict, RecordActivity):
        human = PlannedSignal(
            kind=SignalKind.HUMAN_DIRECT_MESSAGE,
            actor_type="human",
            summary=activity_summary(catalog),
            payload=turns_payload(activity.human_turns),
            dedupe_key=activity_dedupe_key(link, activity),
            occurred_at=activity.occurred_at,
        )
    advance = AdvanceMarker(**ids, link_version=link.link_version, marker=activity.next_marker)
    return Publication(signal=human, link_command=advance)
