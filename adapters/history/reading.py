"""Reading a history to import: each line checked alone, then against the lines before, and folded.

`Parser` holds the checks of a line alone (JSON, keys, stream id, version, stored name, body);
`Reader` adds the strict field checks of a signal, the checks against the lines before (stream
versions, sequences, dedupe keys, the header) and the fold without signal logs. An import reads
with a `Reader` in its own process, or parses with a `Parser` while a second process reads with a
`Reader` (`check_process`, ADR-0043). Pure: nothing here touches a store.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, assert_never
from uuid import UUID

import orjson
from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from sessionwatch.adapters.stores.mapper import (
    STORE_STREAM_ID,
    UnknownStoredEvent,
    cursor_stream_id,
    decode_body,
    digest_stream_id,
    link_stream_id,
    session_stream_id,
    with_current_agent_ids,
)
from sessionwatch.domain.digest import CreationNoted, DigestDrained
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity, stored_agent_id, written_agent_id
from sessionwatch.domain.recording import check_recorded
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import (
    SessionDeleted,
    SessionMetaUpdated,
    SessionReset,
    SessionUpserted,
    SignalRecorded,
)
from sessionwatch.domain.upstream import UpstreamLinked, UpstreamMarkerAdvanced, UpstreamUnlinked
from sessionwatch.domain.watch_cursor import (
    NoticeAcknowledged,
    NoticesSwept,
    WatchPromoted,
    WatchRegistered,
    WatchRemoved,
)
from sessionwatch.projections.read_model import ReadModel, SignalFreeProjection

HISTORY_FORMAT: Final = "sessionwatch.history"
HISTORY_VERSION: Final = 2
"""The version export writes: 2 ends with a trailer (`trailer`); 1, sessionwatch 0.1.0's, has none."""
READ_VERSIONS: Final = frozenset({1, HISTORY_VERSION})
_HEADER_KEYS: Final = frozenset({"format", "version", "sequence", "streams"})
_EVENT_KEYS: Final = frozenset({"stream", "version", "type", "payload"})


class HistoryError(ValueError):
    """An import was refused: the input is not a valid history, or the store is not empty.

    `line` is the 1-based line the problem is on (None when it is not one line's). Nothing was written.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line
        self.reason = message
        """The problem, without the line."""


def _expected_stream(event: DomainEvent) -> UUID:
    """The stream every store writes `event` on (the ids are derived, ADR-0004)."""
    match event:
        case SessionUpserted() | SignalRecorded() | SessionReset() | SessionDeleted() | SessionMetaUpdated():
            return session_stream_id(SessionIdentity(event.session_key, event.agent_id))
        case WatchRegistered() | WatchPromoted() | NoticeAcknowledged() | WatchRemoved():
            return cursor_stream_id(event.key)
        case UpstreamLinked() | UpstreamMarkerAdvanced() | UpstreamUnlinked():
            return link_stream_id(SessionIdentity(event.session_key, event.agent_id))
        case NoticesSwept() | SignalsPruned():
            return STORE_STREAM_ID
        case CreationNoted() | DigestDrained():
            return digest_stream_id(SessionIdentity(event.session_key, event.agent_id))
        case _:
            assert_never(event)


def _stream_as_written(event: DomainEvent) -> UUID | None:
    """The stream an older store wrote `event` on, if not the one its session's identity names now.

    Before agent ids were normalized, a store named a session by the agent id its key writes
    (`agent:Main:x` under `Main`), which reads as another now (ADR-0055); else None.
    """
    match event:
        case WatchRegistered() | WatchPromoted() | NoticeAcknowledged() | WatchRemoved():
            written = written_agent_id(event.target_key)
            if written is None or written == event.target_agent_id:
                return None
            if stored_agent_id(event.target_key, written) != event.target_agent_id:
                return None
            return cursor_stream_id(event.key._replace(target_agent_id=written))
        case NoticesSwept() | SignalsPruned():
            return None
        case _:
            written = written_agent_id(event.session_key)
            if (
                written is None
                or written == event.agent_id
                or stored_agent_id(event.session_key, written) != event.agent_id
            ):
                return None
            return _expected_stream(event.model_copy(update={"agent_id": written}))


def _highest_sequence(event: DomainEvent) -> int:
    """The highest global sequence an event names (0 when it names none)."""
    match event:
        case SignalRecorded():
            return event.sequence
        case WatchRegistered():
            return event.head
        case NoticeAcknowledged():
            return max(event.last_seen, event.notified)
        case CreationNoted():
            return event.sequence
        case DigestDrained():
            return event.through
        case SignalsPruned():
            return max(
                event.cutoffs.through_sequence,
                *(max(s.head, s.pruned_through) for s in event.sessions),
                *(c.material for c in event.cursors),
                *(d.newest for d in event.digests),
                0,
            )
        case (
            SessionUpserted()
            | SessionMetaUpdated()
            | SessionReset()
            | SessionDeleted()
            | WatchRemoved()
            | WatchPromoted()
            | NoticesSwept()
            | UpstreamLinked()
            | UpstreamMarkerAdvanced()
            | UpstreamUnlinked()
        ):
            return 0
        case _:
            assert_never(event)


def _is_count(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _json_object(number: int, text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if not text.strip():  # only a line that is not JSON can be blank: asked only then
            raise HistoryError("empty line", line=number) from None
        raise HistoryError(f"not JSON: {exc}", line=number) from exc
    if not isinstance(value, dict):
        raise HistoryError(f"expected a JSON object, got {type(value).__name__}", line=number)
    return value


def _keys(number: int, value: dict[str, Any], expected: frozenset[str], what: str) -> None:
    if value.keys() != expected:
        missing = sorted(expected - set(value))
        extra = sorted(set(value) - expected)
        detail = "; ".join(
            part
            for part in (f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else "")
            if part
        )
        raise HistoryError(f"{what} keys must be {sorted(expected)}: {detail}", line=number)


def _uuid(number: int, text: object, what: str) -> UUID:
    if not isinstance(text, str):
        raise HistoryError(f"{what} must be a UUID string, not {text!r}", line=number)
    try:
        return UUID(text)
    except ValueError as exc:
        raise HistoryError(f"{what} {text!r} is not a UUID", line=number) from exc


def _validation_summary(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "payload"
    more = exc.error_count() - 1
    return f"{where}: {first['msg']}" + (f" (and {more} more)" if more else "")


@dataclass
class Header:
    """A history's first line: the sequence counter, every stream's newest version, the format version."""

    sequence: int
    streams: dict[UUID, int]
    version: int = HISTORY_VERSION


def read_header(number: int, text: str) -> Header:
    """The header on line `number`, or `HistoryError` naming what is wrong with it."""
    value = _json_object(number, text)
    if value.get("format") != HISTORY_FORMAT:
        raise HistoryError(
            f"not a sessionwatch history: the header's format must be {HISTORY_FORMAT!r},"
            f" not {value.get('format')!r}",
            line=number,
        )
    format_version = value.get("version")
    if format_version not in READ_VERSIONS or isinstance(format_version, bool):
        raise HistoryError(
            f"unsupported history version {format_version!r}: this sessionwatch reads versions"
            f" {', '.join(map(str, sorted(READ_VERSIONS)))}",
            line=number,
        )
    _keys(number, value, _HEADER_KEYS, "header")
    sequence = value["sequence"]
    if not _is_count(sequence, 0):
        raise HistoryError(f"the header's sequence must be an integer >= 0, not {sequence!r}", line=number)
    raw = value["streams"]
    if not isinstance(raw, dict):
        raise HistoryError("the header's streams must be an object of stream id -> version", line=number)
    streams: dict[UUID, int] = {}
    for key, version in raw.items():
        stream = _uuid(number, key, "header stream id")
        if not _is_count(version, 1):
            raise HistoryError(f"stream {key}: version must be an integer >= 1, not {version!r}", line=number)
        streams[stream] = max(streams.get(stream, 0), version)
    return Header(sequence, streams, format_version)


class _Signals:
    """The sequences seen so far, each with its line: compact arrays, as signals mostly come in order."""

    def __init__(self) -> None:
        self._sequences = array("q")  # ascending: every signal above all before it
        self._lines = array("q")
        self._others: dict[int, int] = {}  # the few that came below an earlier one

    def line_of(self, sequence: int) -> int | None:
        """The line `sequence` was recorded on, or None."""
        if self._sequences and sequence > self._sequences[-1]:
            return None
        at = bisect.bisect_left(self._sequences, sequence)
        if at < len(self._sequences) and self._sequences[at] == sequence:
            return self._lines[at]
        return self._others.get(sequence)

    def add(self, sequence: int, line: int) -> None:
        """Remember a sequence not seen before."""
        if not self._sequences or sequence > self._sequences[-1]:
            self._sequences.append(sequence)
            self._lines.append(line)
        else:
            self._others[sequence] = line


@dataclass(frozen=True, slots=True)
class _Held:
    """A retained signal's dedupe key: who holds it, and what a prune needs to decide on it."""

    sequence: int
    occurred_at_ms: int
    identity: SessionIdentity


@dataclass(frozen=True, slots=True)
class ReadOutcome:
    """What a whole history read adds up to: the fold without signal logs, the last prune, the events."""

    model: ReadModel
    checkpoint_ms: int | None
    events: int


class Reads(Protocol):
    """Reads an import's lines in order: `Reader` here, or one that has a second process check them."""

    def read(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]:
        """Line `number`'s stream, version and event; `HistoryError` for the earliest refused line."""
        ...

    def outcome(self) -> ReadOutcome:
        """What the whole history adds up to, once every line was read."""
        ...

    def raise_refusal(self) -> None:
        """Raise the `HistoryError` of the earliest line refused, if the lines read so far hold one."""


class _SignalLine(BaseModel):
    """A recorded signal's event line, the commonest: parsed and validated in one call (`Parser.parse`).

    The same checks as `Parser._parse` and `decode_body` make, for a line that passes them: exactly
    these keys, the stream a string, the version an integer (not a bool, a float or a string), the
    stored name this one, the payload a valid `SignalRecorded` body.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    stream: StrictStr
    version: StrictInt
    type: Literal["session.signal_recorded.v1"]
    payload: SignalRecorded


_SIGNAL_LINE: Final = _SignalLine.__pydantic_validator__
_JSON_INT_LOW: Final = -(2**63)
_JSON_INT_HIGH: Final = 2**64
"""The integers `orjson` parses: a line with any other is left to `Parser._parse`, which refuses it."""


@dataclass
class Parser:
    """Turns one event line into its stream, version and decoded event: the checks of the line alone."""

    header: Header
    stream_ids: dict[str, UUID] = field(default_factory=dict)  # each stream's text as the lines spell it

    def parse(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]:
        """Line `number`'s stream, version and decoded event, or `HistoryError` naming the problem."""
        try:
            line = _SIGNAL_LINE.validate_json(text)
        except ValidationError:
            pass  # not a signal's line, or not a valid one: the checks one by one say which
        else:
            parsed = self._signal_line(line)
            if parsed is not None:
                return parsed
        return self._parse(number, text)

    def _signal_line(self, line: _SignalLine) -> tuple[UUID, int, DomainEvent] | None:
        """A signal's line validated in one call, as `_parse` reads it; None to leave it to `_parse`.

        `_parse` reads it when its stream is one not seen yet (so the stream's id is checked there),
        its version is below 1, or an integer is one that `orjson` does not parse (outside 64 bits).
        """
        stream = self.stream_ids.get(line.stream)
        event = line.payload
        if (
            stream is None
            or line.version < 1
            or not _JSON_INT_LOW <= event.sequence < _JSON_INT_HIGH
            or not _JSON_INT_LOW <= event.occurred_at_ms < _JSON_INT_HIGH
            or not _JSON_INT_LOW <= event.recorded_at_ms < _JSON_INT_HIGH
            or not _JSON_INT_LOW <= line.version < _JSON_INT_HIGH
        ):
            return None
        return stream, line.version, with_current_agent_ids(event)

    def _parse(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]:
        """`parse` one check after the other, each refusal naming what is wrong."""
        value = _json_object(number, text)
        _keys(number, value, _EVENT_KEYS, "event")
        text = value["stream"]
        stream = self.stream_ids.get(text) if isinstance(text, str) else None
        if stream is None:
            stream = _uuid(number, text, "stream")
            if stream in self.header.streams:  # at most one entry per stream the header lists
                self.stream_ids[text] = stream
        version, topic, payload = value["version"], value["type"], value["payload"]
        if not _is_count(version, 1):
            raise HistoryError(f"version must be an integer >= 1, not {version!r}", line=number)
        if not isinstance(topic, str):
            raise HistoryError(f"type must be a stored event name, not {topic!r}", line=number)
        if not isinstance(payload, dict):
            raise HistoryError(f"payload must be a JSON object, not {type(payload).__name__}", line=number)
        try:
            event = decode_body(topic, payload)
        except UnknownStoredEvent as exc:
            raise HistoryError(str(exc), line=number) from exc
        except ValidationError as exc:
            raise HistoryError(f"invalid {topic} payload: {_validation_summary(exc)}", line=number) from exc
        return stream, version, event


@dataclass
class Reader:
    """Validates event lines one at a time against the header and the lines before, and folds them.

    It keeps what the checks need and the fold without signal logs; the signals themselves go on
    to the store as they come.
    """

    header: Header
    projection: SignalFreeProjection = field(default_factory=SignalFreeProjection)
    versions: dict[UUID, int] = field(default_factory=dict)  # the last version seen per stream
    signals: _Signals = field(default_factory=_Signals)
    dedupe: dict[str, _Held] = field(default_factory=dict)  # every retained dedupe key
    checkpoint_ms: int | None = None  # when the last prune in the history ran
    events: int = 0
    parser: Parser = field(init=False)

    def __post_init__(self) -> None:
        self.parser = Parser(self.header)

    def read(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]:
        """Line `number` parsed, checked against the lines before and folded; `HistoryError` if refused."""
        stream, version, event = self.parser.parse(number, text)
        return self.read_parsed(number, stream, version, event)

    def read_parsed(
        self, number: int, stream: UUID, version: int, event: DomainEvent
    ) -> tuple[UUID, int, DomainEvent]:
        """`read` of a line a `Parser` already parsed (here, or in the process that hands it over)."""
        if isinstance(event, SignalRecorded):
            try:
                check_recorded(event)  # what the strict API refuses does not enter by the back door
            except InvalidSignal as exc:
                raise HistoryError(f"invalid {event.type} payload: {exc}", line=number) from None
        self._place(number, stream, version, event)
        self._retain(number, event)
        self.projection.apply(event)
        self.events += 1
        return stream, version, event

    def raise_refusal(self) -> None:
        """Nothing to raise: a line read here is refused as it is read."""

    def outcome(self) -> ReadOutcome:
        """What the lines read add up to, once all are read; `HistoryError` if it is not loadable."""
        model = self.projection.build()
        _check_model(model, self.header)
        return ReadOutcome(model, self.checkpoint_ms, self.events)

    def _place(self, number: int, stream: UUID, version: int, event: DomainEvent) -> None:
        expected = _expected_stream(event)
        if stream != expected and stream != _stream_as_written(event):
            raise HistoryError(
                f"a {event.type} event belongs on stream {expected}, not {stream}", line=number
            )
        previous = self.versions.get(stream, 0)
        if version <= previous:
            raise HistoryError(
                f"stream {stream}: version {version} does not follow version {previous}", line=number
            )
        newest = self.header.streams.get(stream, 0)
        if version > newest:
            raise HistoryError(
                f"stream {stream}: version {version} is above the header's version {newest} for it",
                line=number,
            )
        self.versions[stream] = version
        highest = _highest_sequence(event)
        if highest > self.header.sequence:
            raise HistoryError(
                f"sequence {highest} is above the header's sequence counter {self.header.sequence}",
                line=number,
            )
        if isinstance(event, SignalRecorded):
            earlier = self.signals.line_of(event.sequence)
            if earlier is not None:
                raise HistoryError(
                    f"sequence {event.sequence} was already recorded on line {earlier}", line=number
                )
            self.signals.add(event.sequence, number)

    def _retain(self, number: int, event: DomainEvent) -> None:
        """Keep the retained dedupe keys as the fold does: one retained signal per key."""
        match event:
            case SignalRecorded(dedupe_key=str() as key):
                held = self.dedupe.get(key)
                if held is not None:
                    raise HistoryError(
                        f"dedupe key {key!r} is held by two retained signals, {held.sequence}"
                        f" and {event.sequence}",
                        line=number,
                    )
                self.dedupe[key] = _Held(event.sequence, event.occurred_at_ms, event.identity)
            case SessionDeleted():
                gone = SessionIdentity(event.session_key, event.agent_id)
                self.dedupe = {k: h for k, h in self.dedupe.items() if h.identity != gone}
            case SignalsPruned(cutoffs=cutoffs):
                self.checkpoint_ms = cutoffs.at_ms
                self.dedupe = {
                    k: h
                    for k, h in self.dedupe.items()
                    if not (
                        h.occurred_at_ms < cutoffs.occurred_before_ms
                        or h.sequence <= cutoffs.through_sequence
                    )
                }
            # any other event leaves the dedupe keys and the checkpoint as they are


def _check_model(model: ReadModel, header: Header) -> None:
    """The fold must be loadable: a version for every row's stream."""
    rows = [(i, session_stream_id, "the stream of session") for i in sorted(model.sessions)]
    rows += [(i, link_stream_id, "the upstream link stream of") for i in sorted(model.links)]
    for identity, stream_of, what in rows:
        streams = [stream_of(identity)]
        written = written_agent_id(identity.session_key)
        if written is not None and stored_agent_id(identity.session_key, written) == identity.agent_id:
            streams.append(stream_of(identity._replace(agent_id=written)))  # as an older store named it
        if all(header.streams.get(stream, 0) < 1 for stream in streams):
            raise HistoryError(
                f"the header lists no version for {what} {identity.session_key!r}"
                f" (agent {identity.agent_id!r})",
                line=1,
            )
