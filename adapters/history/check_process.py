"""A big import's second process: the checks that need the lines before, and the fold, beside the load.

`import_history(..., check_elsewhere=True)` parses and loads each line in the importing process
and hands the same lines, a chunk at a time, to a Python process running this module, which reads
them exactly as an import in one process does (`reading.Reader`: every line check, the checks
against the lines before, the fold). The two halves cost about the same, so on two cores the
import takes about half the time. The store commits only once this process says the whole history
is valid; when it refuses a line, the import raises that refusal, the earliest, as the import in
one process would, and the store writes nothing (ADR-0043).

Each line is parsed and validated once, in the importing process: a recorded signal, nearly
every line of a history, goes over as its validated fields by name (`_signal_item`, ADR-0072),
which this process makes into the same event without parsing or validating it again
(`_signal_from`); any other line goes over as its text and is parsed here. The importing process
hands over only the lines it parsed: when it refuses one, this process has read every line before
it, so a refusal of its own comes from an earlier line, the earliest (ADR-0066).

The pipes carry length-prefixed pickles between this process and the one that started it, and
nothing else: lines one way, one verdict the other (ok with the fold, refused with the line and the
reason, or failed with the error).
"""

from __future__ import annotations

import contextlib
import pickle
import struct
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any, Final, Literal, TypeAlias
from uuid import UUID

from sessionwatch.adapters.history.reading import HistoryError, Parser, Reader, ReadOutcome, read_header
from sessionwatch.domain.events import DomainEvent
from sessionwatch.domain.messages import checked_model
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.domain.signals import NOTIFYING_KINDS, Payload, SignalKind
from sessionwatch.projections.read_model import SignalFreeProjection

CHUNK: Final = 1000
"""Lines a frame carries."""

_SIZE: Final = struct.Struct("!Q")

Verdict: TypeAlias = (
    tuple[Literal["ok"], ReadOutcome]
    | tuple[Literal["refused"], int | None, str]
    | tuple[Literal["failed"], str]
)


SignalItem: TypeAlias = tuple[int, int, dict[str, Any]]
"""A recorded signal's line as it goes over: its stream (as an integer), its version, and its validated
fields by name, the payload as its fields by name."""


def _signal_item(stream: UUID, version: int, event: SignalRecorded) -> SignalItem:
    """What goes over for a recorded signal the importing process parsed and validated.

    The fields as pydantic holds them (`__dict__`, every field in declaration order); the pickle
    writes each field's name once a frame, so a dict costs little more than its values.
    """
    fields = event.__dict__
    payload = event.payload
    if payload is not None:
        fields = {**fields, "payload": payload.__dict__}
    return (stream.int, version, fields)


def _signal_from(item: SignalItem, streams: dict[int, UUID]) -> tuple[UUID, int, SignalRecorded]:
    """The stream, version and event `_signal_item` sent: the event equal to the one validated there.

    Its fields were validated into the types the model declares by the importing process, so the
    model is made of them without validating again (`checked_model`); the fields unpickled here
    are this process's own, so the model takes them as they are.
    """
    number, version, fields = item
    stream = streams.get(number)
    if stream is None:
        stream = streams[number] = UUID(int=number)
    payload = fields["payload"]
    if payload is not None:
        fields["payload"] = checked_model(Payload, payload)
    return stream, version, checked_model(SignalRecorded, fields)


def _write_frame(out: IO[bytes], value: object) -> None:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_SIZE.pack(len(body)))
    out.write(body)
    out.flush()


def _read_frame(source: IO[bytes]) -> object | None:
    """The next frame's value, or None at the end of the stream."""
    size = source.read(_SIZE.size)
    if len(size) < _SIZE.size:
        return None
    (length,) = _SIZE.unpack(size)
    body = source.read(length)
    if len(body) < length:
        return None
    value: object = pickle.loads(body)  # noqa: S301 - frames come from the process that started this one
    return value


# ------------------------------------------------------------------------------ the second process


def _verdict(source: IO[bytes], notifying: frozenset[SignalKind] = NOTIFYING_KINDS) -> Verdict:
    """Read the header and every line the frames carry, as an import in one process reads them."""
    header_lines = _read_frame(source)
    if not isinstance(header_lines, list) or len(header_lines) != 1:
        return ("failed", "the first frame must hold the header line alone")
    try:
        reader = Reader(read_header(1, header_lines[0]), SignalFreeProjection(notifying=notifying))
        number = 1
        streams: dict[int, UUID] = {}
        while chunk := _read_frame(source):
            if not isinstance(chunk, list):
                return ("failed", "a frame must hold a list of lines")
            for item in chunk:
                number += 1
                if type(item) is tuple:
                    reader.read_parsed(number, *_signal_from(item, streams))
                else:
                    reader.read(number, item)
        return ("ok", reader.outcome())
    except HistoryError as exc:
        return ("refused", exc.line, exc.reason)


def main() -> None:
    """Read frames from standard input, write the one verdict to standard output.

    The arguments, when given, are the kinds that notify on the importing store.
    """
    source, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but the verdict goes to the pipe
    try:
        kinds = sys.argv[1:]
        verdict = _verdict(source, frozenset(map(SignalKind, kinds)) if kinds else NOTIFYING_KINDS)
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the importing process
        verdict = ("failed", f"{type(exc).__name__}: {exc}")
    _write_frame(out, verdict)
    while source.read(1 << 16):  # after a refusal, take the lines still coming, so the sender never blocks
        continue


# ------------------------------------------------------------------------------ the importing process


class ElsewhereReader:
    """Parses each line here and has a second process check it against the lines before and fold it.

    `read` and `outcome` answer as `reading.Reader`'s do, refusals included; `close` stops the
    second process if it still runs.
    """

    def __init__(self, header_text: str, notifying: frozenset[SignalKind] = NOTIFYING_KINDS) -> None:
        self._parser = Parser(read_header(1, header_text))
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        kinds = sorted(kind.value for kind in notifying)
        self._process = process = subprocess.Popen(  # noqa: S603 - this interpreter, this module, kind names
            [sys.executable, "-P", "-m", "sessionwatch.adapters.history.check_process", *kinds],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        if process.stdin is None or process.stdout is None:  # never: both are pipes
            process.kill()
            raise RuntimeError("the import's checking process has no pipes")
        self._to_check: IO[bytes] = process.stdin
        self._from_check: IO[bytes] = process.stdout
        self._pending: list[str | SignalItem] = [header_text]
        self._answer: Verdict | None = None
        self._answered = threading.Event()
        self._listener = threading.Thread(target=self._listen, name="sessionwatch-import-check", daemon=True)
        self._listener.start()
        try:
            self._send()
        except BaseException:
            self.close()  # not handed out: nobody else would stop it
            raise

    def _listen(self) -> None:
        value = _read_frame(self._from_check)
        if isinstance(value, tuple) and value and value[0] in {"ok", "refused", "failed"}:
            self._answer = value  # the second process writes only verdicts
        self._answered.set()

    def read(self, number: int, text: str) -> tuple[UUID, int, DomainEvent]:
        """Parse line `number` here and pass it on; `HistoryError` for the earliest refused line."""
        if len(self._pending) >= CHUNK:
            self._send()
        try:
            stream, version, event = self._parser.parse(number, text)
        except HistoryError as here:
            self._finish()  # the second process has every line before this one: its refusal is earlier
            self._raise_refusal()
            raise here from None
        if type(event) is SignalRecorded:
            self._pending.append(_signal_item(stream, version, event))
        else:
            self._pending.append(text)
        return stream, version, event

    def outcome(self) -> ReadOutcome:
        """The fold of the whole history, once the second process read it all; its refusal, if any."""
        self._finish()
        self._raise_refusal()
        answer = self._answer
        if answer is not None and answer[0] == "ok":
            return answer[1]
        detail = answer[1] if answer is not None and answer[0] == "failed" else self._error_text()
        raise RuntimeError(f"the import's checking process failed: {detail}")

    def close(self) -> None:
        """Stop the second process if it still runs and release its pipes."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._listener.join()
        for stream in (self._to_check, self._from_check):
            if not stream.closed:
                stream.close()
        self._stderr.close()

    def raise_refusal(self) -> None:
        """Wait for the second process to read every line read here; raise its refusal, if any."""
        self._finish()
        self._raise_refusal()

    def _raise_refusal(self) -> None:
        answer = self._answer
        if answer is not None and answer[0] == "refused":
            raise HistoryError(answer[2], line=answer[1])

    def _send(self) -> None:
        self._raise_refusal()  # refused already: stop reading here too
        stdin = self._to_check
        try:
            _write_frame(stdin, self._pending)
        except BrokenPipeError:  # the second process stopped: its verdict says why
            self._finish()
            self._raise_refusal()
            raise RuntimeError(f"the import's checking process stopped: {self._error_text()}") from None
        self._pending = []

    def _finish(self) -> None:
        """Send what is pending and the end, then wait for the verdict."""
        stdin = self._to_check
        if not stdin.closed:
            with contextlib.suppress(BrokenPipeError):  # it stopped early: the verdict (or its absence) tells
                if self._pending:
                    _write_frame(stdin, self._pending)
                _write_frame(stdin, [])
            with contextlib.suppress(BrokenPipeError):
                stdin.close()
            self._pending = []
        self._answered.wait()

    def _error_text(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode(errors="replace").strip()
        return tail or f"exit status {self._process.poll()}"


if __name__ == "__main__":
    main()
