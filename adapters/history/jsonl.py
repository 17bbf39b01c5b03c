"""The whole history as JSON Lines: `export` for archives, `import` to move between stores.

The format, version 1: UTF-8 JSON Lines, one compact JSON object per line, each line ending in a newline.

- Line 1, the header, keys sorted:
  `{"format": "sessionwatch.history", "sequence": S, "streams": {"<stream uuid>": V, ...}, "version": 1}`.
  `sequence` is the store's counter, the highest sequence ever allocated (ADR-0006). `streams`
  holds the newest version of every stream the store knows, sorted by id, including versions whose
  events a prune compacted away or whose session was deleted (ADR-0008), so an imported store
  never reuses a (stream, version).
- Then one line per stored event, in notification (commit) order:
  `{"stream": "<uuid>", "version": V, "type": "<stored name>", "payload": {...}}`, where `type`
  is the stored name (ADR-0004, e.g. `session.signal_recorded.v1`) and `payload` the stored body.

Exporting a store twice gives the same bytes, and so does exporting a store imported from an export
(into any kind of store), unless an upcaster rewrote an old stored name on the way in.

An import goes only into an empty store, and writes all of it or nothing: it reads the lines once,
as they come, validating each before the store writes it, decodes the events (upcasting old names),
folds them (the reference semantics, `projections.read_model`, without the signal logs the store
keeps itself), and has the store bulk-load events, signals, read models, counter and stream
versions in one transaction, in bounded chunks (ADR-0035). Pure apart from the store it is handed.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from typing import IO, Any, Final, Protocol, assert_never
from uuid import UUID

import orjson
from pydantic import ValidationError

from sessionwatch.adapters.stores.mapper import (
    STORE_STREAM_ID,
    UnknownStoredEvent,
    cursor_stream_id,
    decode_body,
    link_stream_id,
    session_stream_id,
)
from sessionwatch.adapters.stores.port import HistoryTail, SignalStore, StoreNotEmptyError
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.keys import SessionIdentity
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
from sessionwatch.domain.watch_cursor import NoticeAcknowledged, NoticesSwept, WatchRegistered, WatchRemoved
from sessionwatch.projections.read_model import ReadModel, SignalFreeProjection

HISTORY_FORMAT: Final = "sessionwatch.history"
HISTORY_VERSION: Final = 1
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


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import loaded: stored events, and the read-model rows their fold gave."""

    events: int
    sessions: int
    signals: int
    cursors: int
    links: int
    sequence: int


# ------------------------------------------------------------------------------------------ export


def _line(value: object, *, sort_keys: bool = False) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode() + "\n"


def history_lines(store: SignalStore) -> Generator[str, None, None]:
    """The store's history as lines of the format above, from one consistent snapshot, read lazily.

    The snapshot (a read transaction on the SQL stores) stays open until the iterator is exhausted
    or closed.
    """
    with store.stored_history() as history:
        streams = {str(stream): version for stream, version in history.stream_versions.items()}
        header = {
            "format": HISTORY_FORMAT,
            "version": HISTORY_VERSION,
            "sequence": history.sequence,
            "streams": streams,
        }
        yield _line(header, sort_keys=True)
        for _, stream, version, topic, state in history.events:
            event = {"stream": str(stream), "version": version, "type": topic, "payload": orjson.loads(state)}
            yield _line(event)


def export_history(
    store: SignalStore,
    out: IO[str] | Callable[[str], object],
    *,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write the store's history to `out` (a text file or a `write`-like callable); return the event count.

    The events are read a page at a time, so memory does not grow with the history. `progress(n)`
    is called every 1,000 events written, and at the end.
    """
    write = out if callable(out) else out.write
    written = -1  # the header is not an event
    with closing(history_lines(store)) as lines:
        for line in lines:
            write(line)
            written += 1
            if progress is not None and written and written % 1000 == 0:
                progress(written)
    if progress is not None:
        progress(max(written, 0))
    return max(written, 0)


# ------------------------------------------------------------------------------------------ import


def _expected_stream(event: DomainEvent) -> UUID:
    """The stream every store writes `event` on (the ids are derived, ADR-0004)."""
    match event:
        case SessionUpserted() | SignalRecorded() | SessionReset() | SessionDeleted() | SessionMetaUpdated():
            return session_stream_id(SessionIdentity(event.session_key, event.agent_id))
        case WatchRegistered() | NoticeAcknowledged() | WatchRemoved():
            return cursor_stream_id(event.key)
        case UpstreamLinked() | UpstreamMarkerAdvanced() | UpstreamUnlinked():
            return link_stream_id(SessionIdentity(event.session_key, event.agent_id))
        case NoticesSwept() | SignalsPruned():
            return STORE_STREAM_ID
        case _:
            assert_never(event)


def _highest_sequence(event: DomainEvent) -> int:
    """The highest global sequence an event names (0 when it names none)."""
    match event:
        case SignalRecorded():
            return event.sequence
        case WatchRegistered():
            return event.head
        case NoticeAcknowledged():
            return max(event.last_seen, event.notified)
        case SignalsPruned():
            return max(
                event.cutoffs.through_sequence,
                *(max(s.head, s.pruned_through) for s in event.sessions),
                *(c.material for c in event.cursors),
                0,
            )
        case (
            SessionUpserted()
            | SessionMetaUpdated()
            | SessionReset()
            | SessionDeleted()
            | WatchRemoved()
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
    if not text.strip():
        raise HistoryError("empty line", line=number)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
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
class _Header:
    sequence: int
    streams: dict[UUID, int]


def _header(number: int, text: str) -> _Header:
    value = _json_object(number, text)
    if value.get("format") != HISTORY_FORMAT:
        raise HistoryError(
            f"not a sessionwatch history: the header's format must be {HISTORY_FORMAT!r},"
            f" not {value.get('format')!r}",
            line=number,
        )
    if value.get("version") != HISTORY_VERSION or isinstance(value.get("version"), bool):
        raise HistoryError(
            f"unsupported history version {value.get('version')!r}: this sessionwatch reads version"
            f" {HISTORY_VERSION}",
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
    return _Header(sequence, streams)


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


class _Reads(Protocol):
    """Reads an import's lines in order: `_Reader` here, or one that has a second process check them."""

    def read(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]: ...

    def outcome(self) -> ReadOutcome: ...

    def raise_refusal(self) -> None:
        """Raise the `HistoryError` of the earliest line refused, if the lines read so far hold one."""


@dataclass
class _Parser:
    """Turns one event line into its stream, version and decoded event: the checks of the line alone."""

    header: _Header
    stream_ids: dict[str, UUID] = field(default_factory=dict)  # each stream's text as the lines spell it

    def parse(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]:
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
class _Reader:
    """Validates event lines one at a time against the header and the lines before, and folds them.

    It keeps what the checks need and the fold without signal logs; the signals themselves go on
    to the store as they come.
    """

    header: _Header
    projection: SignalFreeProjection = field(default_factory=SignalFreeProjection)
    versions: dict[UUID, int] = field(default_factory=dict)  # the last version seen per stream
    signals: _Signals = field(default_factory=_Signals)
    dedupe: dict[str, _Held] = field(default_factory=dict)  # every retained dedupe key
    checkpoint_ms: int | None = None  # when the last prune in the history ran
    events: int = 0
    parser: _Parser = field(init=False)

    def __post_init__(self) -> None:
        self.parser = _Parser(self.header)

    def read(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]:
        stream, version, event = self.parser.parse(number, text)
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
        if stream != expected:
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


def _check_model(model: ReadModel, header: _Header) -> None:
    """The fold must be loadable: a version for every row's stream."""
    streams = header.streams
    for identity in sorted(model.sessions):
        if streams.get(session_stream_id(identity), 0) < 1:
            raise HistoryError(
                f"the header lists no version for the stream of session {identity.session_key!r}"
                f" (agent {identity.agent_id!r})",
                line=1,
            )
    for identity in sorted(model.links):
        if streams.get(link_stream_id(identity), 0) < 1:
            raise HistoryError(
                f"the header lists no version for the upstream link stream of {identity.session_key!r}"
                f" (agent {identity.agent_id!r})",
                line=1,
            )


def _checked_elsewhere(header_text: str, stack: ExitStack) -> _Reads:
    """A reader that has a second process check the lines, stopped when `stack` closes."""
    from sessionwatch.adapters.history.check_process import ElsewhereReader  # noqa: PLC0415 - big imports only

    return stack.enter_context(closing(ElsewhereReader(header_text)))


def import_history(
    store: SignalStore,
    lines: Iterable[str],
    *,
    progress: Callable[[int], None] | None = None,
    check_elsewhere: bool = False,
) -> ImportReport:
    """Load a history into an empty `store`: all of it, in one transaction, or nothing.

    The lines are read once, as they come, and written in bounded chunks, so memory does not grow
    with the history (only by a few bytes a signal, and with the retained dedupe keys).
    `progress(n)` is called every 1,000 events read, and at the end. With `check_elsewhere`, a
    second Python process checks each line against the lines before and folds them while this one
    loads them: the same checks, the same refusals, about half the time on two cores for a big
    history (it costs a process start, so the CLI uses it for big files only).

    Raises `HistoryError` naming the line and the problem (bad JSON, a wrong header, an unknown
    stored name, an invalid payload, a version that does not rise or is above the header's, a
    sequence above the header's counter), or when the store already holds history.
    """
    if store.last_sequence() or store.stored_event_count():
        raise HistoryError(
            f"the store already holds history (sequence counter at {store.last_sequence()},"
            f" {store.stored_event_count()} stored events); import into a new, empty store"
        )
    numbered = enumerate(lines, 1)
    first = next(numbered, None)
    if first is None:
        raise HistoryError("no header: the input is empty", line=1)
    header = _header(*first)
    stack = ExitStack()
    reader = _checked_elsewhere(first[1], stack) if check_elsewhere else _Reader(header)
    read = 0

    def events() -> Iterator[tuple[UUID, int, DomainEvent]]:
        nonlocal read
        for number, text in numbered:
            yield reader.read(number, text)
            read += 1
            if progress is not None and read % 1000 == 0:
                progress(read)

    outcome = ReadOutcome(ReadModel(), None, 0)

    def tail() -> HistoryTail:
        nonlocal outcome
        outcome = reader.outcome()
        return HistoryTail(outcome.model, header.sequence, header.streams, outcome.checkpoint_ms)

    with stack:
        try:
            retained = store.load_history(events(), tail)
        except StoreNotEmptyError as exc:
            raise HistoryError(str(exc)) from exc
        except Exception:
            reader.raise_refusal()  # the store's own constraints can fire before the checks report
            raise
    if progress is not None:
        progress(read)
    model = outcome.model
    return ImportReport(
        events=outcome.events,
        sessions=len(model.sessions),
        signals=retained,
        cursors=len(model.all_cursors()),
        links=len(model.links),
        sequence=header.sequence,
    )
