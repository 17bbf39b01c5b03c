"""The whole history as JSON Lines: `export` for archives, `import` to move between stores.

The format, version 2: UTF-8 JSON Lines, one compact JSON object per line, each line ending in a newline.

- Line 1, the header, keys sorted:
  `{"format": "sessionwatch.history", "sequence": S, "streams": {"<stream uuid>": V, ...}, "version": 2}`.
  `sequence` is the store's counter, the highest sequence ever allocated (ADR-0006). `streams`
  holds the newest version of every stream the store knows, sorted by id, including versions whose
  events a prune compacted away or whose session was deleted (ADR-0008), so an imported store
  never reuses a (stream, version).
- Then one line per stored event, in notification (commit) order:
  `{"stream": "<uuid>", "version": V, "type": "<stored name>", "payload": {...}}`, where `type`
  is the stored name (ADR-0004, e.g. `session.signal_recorded.v1`) and `payload` the stored body.
- Last, the trailer, keys sorted: `{"events": N, "sha256": "<hex>", "trailer": "sessionwatch.history"}`:
  the number of event lines and the sha256 digest of every byte before the trailer (`trailer`,
  ADR-0050). Version 1 (sessionwatch 0.1.0) is the same without the trailer.

Exporting a store twice gives the same bytes, and so does exporting a store imported from a
version 2 export (into any kind of store), unless an upcaster rewrote an old stored name on the way in.

An import goes only into an empty store, and writes all of it or nothing: it reads the lines once,
as they come, validating each before the store writes it, decodes the events (upcasting old names),
folds them (the reference semantics, `projections.read_model`, without the signal logs the store
keeps itself), checks the trailer against the lines once they are all read, and has the store
bulk-load events, signals, read models, counter and stream versions in one transaction, in bounded
chunks (ADR-0035), which commits only when every check passed. A history without its trailer, or
whose trailer disagrees with its lines, was cut or changed and is refused whole; a version 1
history is taken as it is (`ImportReport.version` tells). Pure apart from the store it is handed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import ExitStack, closing
from dataclasses import dataclass
from typing import IO
from uuid import UUID

import orjson

from sessionwatch.adapters.history.reading import (
    HISTORY_FORMAT,
    HISTORY_VERSION,
    Header,
    HistoryError,
    Reader,
    ReadOutcome,
    Reads,
    read_header,
)
from sessionwatch.adapters.history.trailer import Digest, event_lines
from sessionwatch.adapters.stores.port import HistoryTail, SignalStore, StoreNotEmptyError
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.signals import NOTIFYING_KINDS, SignalKind
from sessionwatch.projections.read_model import ReadModel, SignalFreeProjection

__all__ = [
    "HISTORY_FORMAT",
    "HISTORY_VERSION",
    "HistoryError",
    "ImportReport",
    "check_history",
    "export_history",
    "history_lines",
    "import_history",
]


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import loaded: stored events, and the read-model rows their fold gave.

    `version` is the history's format version: 1 has no trailer, so a cut at a line boundary could
    not be told (the command line warns).
    """

    events: int
    sessions: int
    signals: int
    cursors: int
    links: int
    sequence: int
    version: int


# ------------------------------------------------------------------------------------------ export


def _line(value: object, digest: Digest, *, sort_keys: bool = False) -> str:
    line = orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0) + b"\n"
    digest.add(line)
    return line.decode()


def history_lines(store: SignalStore) -> Generator[str, None, None]:
    """The store's history as lines of the format above, from one consistent snapshot, read lazily.

    The snapshot (a read transaction on the SQL stores) stays open until the iterator is exhausted
    or closed. The trailer comes last, once every event line went by.
    """
    digest = Digest()
    with store.stored_history() as history:
        streams = {str(stream): version for stream, version in history.stream_versions.items()}
        header = {
            "format": HISTORY_FORMAT,
            "version": HISTORY_VERSION,
            "sequence": history.sequence,
            "streams": streams,
        }
        yield _line(header, digest, sort_keys=True)
        for _, stream, version, topic, state in history.events:
            event = {"stream": str(stream), "version": version, "type": topic, "payload": orjson.loads(state)}
            yield _line(event, digest)
    yield digest.trailer(digest.lines - 1).decode()


def export_history(
    store: SignalStore,
    out: IO[str] | Callable[[str], object],
    *,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write the store's history to `out` (a text file or a `write`-like callable); return the event count.

    The events are read a page at a time, so memory does not grow with the history; the header
    comes first and the trailer last. `progress(n)` is called every 1,000 events written, and at the end.
    """
    write = out if callable(out) else out.write
    written = -2  # neither the header nor the trailer is an event
    with closing(history_lines(store)) as lines:
        for line in lines:
            write(line)
            written += 1
            if progress is not None and written > 0 and written % 1000 == 0:
                progress(written)
    if progress is not None:
        progress(max(written, 0))
    return max(written, 0)


def check_history(lines: Iterable[str]) -> Header:
    """The header of a whole history: `HistoryError` when it has no trailer or its trailer disagrees.

    Only the header and the trailer are read as such: a history is checked whole this way before a
    store is opened for it (the command line does, so a cut file creates nothing); `import_history`
    checks the lines themselves, and the trailer again.
    """
    numbered = enumerate(lines, 1)
    first = next(numbered, None)
    if first is None:
        raise HistoryError("no header: the input is empty", line=1)
    header = read_header(*first)
    if header.version != 1:
        deque(event_lines(header, first[1], numbered), maxlen=0)  # read to the trailer, which checks them
    return header


def _checked_elsewhere(header_text: str, stack: ExitStack, notifying: frozenset[SignalKind]) -> Reads:
    """A reader that has a second process check the lines, stopped when `stack` closes."""
    from sessionwatch.adapters.history.check_process import ElsewhereReader  # noqa: PLC0415 - big imports only

    return stack.enter_context(closing(ElsewhereReader(header_text, notifying)))


def import_history(
    store: SignalStore,
    lines: Iterable[str],
    *,
    progress: Callable[[int], None] | None = None,
    check_elsewhere: bool = False,
    notifying: frozenset[SignalKind] = NOTIFYING_KINDS,
) -> ImportReport:
    """Load a history into an empty `store`: all of it, in one transaction, or nothing.

    The lines are read once, as they come, and written in bounded chunks, so memory does not grow
    with the history (only by a few bytes a signal, and with the retained dedupe keys).
    `progress(n)` is called every 1,000 events read, and at the end. With `check_elsewhere`, a
    second Python process checks each line against the lines before and folds them while this one
    loads them: the same checks, the same refusals, about half the time on two cores for a big
    history (it costs a process start, so the CLI uses it for big files only). `notifying` is the
    store's set of kinds that notify (`signals.notifying_kinds`), which the fold of the cursors follows.

    Raises `HistoryError` naming the line and the problem (bad JSON, a wrong header, an unknown
    stored name, an invalid payload, a version that does not rise or is above the header's, a
    sequence above the header's counter, a missing trailer or one whose count or digest differs
    from the lines, a line after the trailer), or when the store already holds history.
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
    header = read_header(*first)
    stack = ExitStack()
    reader = (
        _checked_elsewhere(first[1], stack, notifying)
        if check_elsewhere
        else Reader(header, SignalFreeProjection(notifying=notifying))
    )
    read = 0

    def events() -> Iterator[tuple[UUID, int, DomainEvent]]:
        nonlocal read
        for number, text in event_lines(header, first[1], numbered):
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
        version=header.version,
    )
