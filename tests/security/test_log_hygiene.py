"""Log records and error lines carry metadata only (SPEC §3.3, §15.2).

With every logger at DEBUG (sessionwatch's, and psycopg's and eventsourcing's underneath), no log
record holds a payload value, the host text of a summary or channel, a provider's error text, or
the password of a PostgreSQL URL, whatever fails: invalid input, a broken store, a waker or an
upstream provider that raises, a prune whose archive cannot be written, a server that cannot be
reached. The same holds for the exceptions the API raises and for the CLI's stderr. A producer's
failure is logged once, structured, with the session key and the kind.
"""

from __future__ import annotations

import logging
import socket
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit, urlunsplit

import pytest
from fakes import FailingWaker
from stores import FILE_STORES, needs_postgres, postgres_url

import sessionwatch
from sessionwatch import (
    Actor,
    InvalidStoreUrl,
    Retention,
    SessionWatch,
    SignalKind,
    StoreError,
    UpstreamActivity,
    UpstreamMissing,
    UpstreamProbe,
    UpstreamProvider,
)
from sessionwatch.adapters.stores.memory import MemorySignalStore
from sessionwatch.cli.cli import main
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
ADOPTED = "agent:main:adopted"
SECRET = "s3cr3tPW"  # noqa: S105 - the password these tests must never see printed


@pytest.fixture
def marker() -> str:
    return f"MSG{uuid.uuid4().hex}"


def everything_logged(records: Sequence[logging.LogRecord]) -> str:
    """Each record's message, its arguments and extra fields, and any exception it carries."""
    parts = []
    for record in records:
        parts.append(record.getMessage())
        parts.append(repr(vars(record)))
        if record.exc_info is not None and record.exc_info[1] is not None:
            parts.append("".join(traceback.format_exception(record.exc_info[1])))
    return "\n".join(parts)


def everything_raised(exc: BaseException) -> str:
    """What a host could log of an exception: its text, its repr and the whole chained traceback."""
    return "\n".join([str(exc), repr(exc), "".join(traceback.format_exception(exc))])


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "sessionwatch" and r.levelno >= logging.WARNING]


class BrokenStore(MemorySignalStore):
    """A store whose every write fails (a full disk, a lost server), with a message that names a path."""

    def write(self) -> NoReturn:
        raise StoreError("disk I/O error writing /var/lib/gateway/state.db")


class FailingProvider:
    """An upstream provider that raises, quoting text it read."""

    def __init__(self, text: str) -> None:
        self.text = text

    def check_upstream_activity(
        self, probes: Sequence[UpstreamProbe]
    ) -> Sequence[UpstreamActivity | UpstreamMissing]:
        raise RuntimeError(f"cannot parse a transcript line of {len(probes)} probe(s): {self.text}")


# ------------------------------------------------------------- payload values and host text


def test_no_log_record_carries_a_payload_value_host_text_or_a_providers_error_text(
    store_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, marker: str
) -> None:
    caplog.set_level(logging.DEBUG)
    clock = FakeClock()
    retention = Retention(max_signals=1, archive=str(tmp_path))  # a directory: every prune fails
    with sessionwatch.open(store_url, clock=clock, waker=FailingWaker(), retention=retention) as watch:
        watch.upsert_session(MANAGER)
        assert watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1") is not None
        recorded = [
            watch.record_human_message(CHILD, channel=f"chan {marker}"),
            watch.record_goal_changed(CHILD, summary=f"goal {marker}", actor=Actor.human()),
            watch.record(
                CHILD,
                kind="human_direct_message",
                actor=Actor.human(),
                summary=f"note {marker}",
                payload={"channel": f"pay {marker}", "turns": 2},
            ),
            watch.record(
                CHILD, kind="goal_changed", actor=Actor.human(), summary="x", payload={"status": marker}
            ),
        ]
        refused = [
            watch.record_goal_changed(CHILD, summary=f"{marker}\nsecond line of a message"),
            watch.record_human_message(CHILD, channel=f"{marker}\x00"),
            watch.record_human_message(CHILD, channel="telegram", dedupe_key=f"{marker}\n"),
            watch.record_compacted(CHILD, operation_id=f"op {marker}\r"),
        ]
        watch.link_upstream(
            ADOPTED,
            catalog_id="claude-code",
            host_id="laptop",
            thread_id="thread-1",
            upstream_kind="claude-jsonl",
            upstream_ref="/transcripts/thread-1.jsonl",
            marker={"offset": 0},
        )
        assert watch.watch(MANAGER, ADOPTED)
        providers: dict[str, UpstreamProvider] = {"claude-code": FailingProvider(marker)}
        tick = watch.upstream_tick(providers)
        clock.advance(hours=2)  # the hourly prune is due after the next record, and fails
        after_prune = watch.record_goal_changed(CHILD, summary=f"goal again {marker}", actor=Actor.human())

    assert None not in recorded
    assert after_prune is not None
    assert refused == [None] * len(refused)
    assert tick.recorded == ()
    messages = [r.getMessage() for r in warnings_of(caplog)]
    assert sum("signal not recorded" in m for m in messages) == len(refused)
    assert sum("wake failed" in m for m in messages) >= 1
    assert sum("upstream provider failed" in m for m in messages) == 1
    assert sum("prune failed" in m for m in messages) == 1
    assert marker not in everything_logged(caplog.records)


@contextmanager
def broken_watch() -> Iterator[SessionWatch]:
    with SessionWatch(BrokenStore(), clock=FakeClock()) as watch:
        yield watch


PRODUCERS: list[tuple[str, SignalKind, Callable[[SessionWatch], object]]] = [
    (CHILD, SignalKind.HUMAN_DIRECT_MESSAGE, lambda w: w.record_human_message(CHILD, channel="telegram")),
    (CHILD, SignalKind.GOAL_CHANGED, lambda w: w.record_goal_changed(CHILD, summary="goal updated")),
    (
        CHILD,
        SignalKind.CHILD_SPAWNED,
        lambda w: w.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="r"),
    ),
    (
        CHILD,
        SignalKind.RUN_FAILED,
        lambda w: w.record_run_terminal(
            child_key=CHILD, run_id="r", requester_key=MANAGER, outcome="cancelled"
        ),
    ),
    (
        CHILD,
        SignalKind.RUN_COMPLETED,
        lambda w: w.record_run_terminal(child_key=CHILD, run_id="r", requester_key=MANAGER, outcome="ok"),
    ),
    (CHILD, SignalKind.COMPACTED, lambda w: w.record_compacted(CHILD, operation_id="op-1")),
    ("global", SignalKind.ADOPTED, lambda w: w.record_adopted("global", agent_id="ops")),
]


@pytest.mark.parametrize(
    ("key", "kind", "produce"),
    PRODUCERS,
    ids=[kind.value + str(i) for i, (_, kind, _) in enumerate(PRODUCERS)],
)
def test_a_producer_that_meets_a_failing_store_logs_one_structured_line_with_key_and_kind(
    caplog: pytest.LogCaptureFixture, key: str, kind: SignalKind, produce: Callable[[SessionWatch], object]
) -> None:
    caplog.set_level(logging.DEBUG)
    with broken_watch() as watch:
        result = produce(watch)

    [line] = warnings_of(caplog)
    assert result is None
    assert (
        line.getMessage()
        == f"sessionwatch: signal not recorded (session_key={key!r} kind={kind.value} reason=StoreError)"
    )
    assert (line.session_key, line.signal_kind, line.reason) == (key, kind.value, "StoreError")  # type: ignore[attr-defined]
    assert "/var/lib/gateway" not in everything_logged(caplog.records)


def test_a_producer_given_invalid_input_logs_one_line_naming_the_field_never_its_value(
    watch: SessionWatch, caplog: pytest.LogCaptureFixture, marker: str
) -> None:
    caplog.set_level(logging.DEBUG)

    result = watch.record_goal_changed(CHILD, summary=f"{marker}\nthe rest of a message")

    [line] = warnings_of(caplog)
    assert result is None
    assert line.getMessage() == (
        f"sessionwatch: signal not recorded (session_key={CHILD!r} kind=goal_changed reason=summary)"
    )
    assert (line.session_key, line.signal_kind, line.reason) == (CHILD, "goal_changed", "summary")  # type: ignore[attr-defined]
    assert marker not in everything_logged(caplog.records)


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_a_producer_on_a_closed_store_logs_one_line_and_returns_none(
    watch: SessionWatch, caplog: pytest.LogCaptureFixture, marker: str
) -> None:
    watch.upsert_session(MANAGER)
    watch.store.close()
    caplog.set_level(logging.DEBUG)

    result = watch.record_goal_changed(CHILD, summary=f"goal {marker}")

    [line] = warnings_of(caplog)
    assert result is None
    assert (line.session_key, line.signal_kind) == (CHILD, "goal_changed")  # type: ignore[attr-defined]
    assert line.getMessage().startswith(
        f"sessionwatch: signal not recorded (session_key={CHILD!r} kind=goal_changed"
    )
    assert marker not in everything_logged(caplog.records)


# --------------------------------------------------------------------- PostgreSQL credentials


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def with_password(url: str, password: str, user: str = "postgres") -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{user}:{password}@{host}"))


SPELLINGS = [
    (SECRET, (SECRET,)),
    ("s3cr3t%40PW", ("s3cr3t%40PW", "s3cr3t@PW")),
    ("s3cr3t%2FPW%3A", ("s3cr3t%2FPW%3A", "s3cr3t/PW:")),
    ("pw%00s3cr3t", ("pw%00s3cr3t", "s3cr3t")),
    ("pw%zzs3cr3t", ("pw%zzs3cr3t", "s3cr3t")),
]
"""Passwords as a URL spells them, and every spelling that must never be shown."""


@pytest.mark.parametrize(("password", "spellings"), SPELLINGS)
def test_a_store_that_cannot_be_reached_never_shows_the_password(
    caplog: pytest.LogCaptureFixture, password: str, spellings: tuple[str, ...]
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"postgresql://gateway:{password}@127.0.0.1:{closed_port()}/test?connect_timeout=2"

    with pytest.raises((StoreError, InvalidStoreUrl)) as raised:
        sessionwatch.open(url)

    shown = everything_raised(raised.value) + everything_logged(caplog.records)
    assert "127.0.0.1" in shown or "url:" in shown  # the error says what failed
    for spelling in spellings:
        assert spelling not in shown


@pytest.mark.parametrize(("password", "spellings"), SPELLINGS)
def test_the_command_line_never_prints_the_password_of_an_unreachable_store(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    password: str,
    spellings: tuple[str, ...],
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"postgresql://gateway:{password}@127.0.0.1:{closed_port()}/test?connect_timeout=2"

    code = main(["status", CHILD, "--db", url])
    captured = capsys.readouterr()

    assert (code, captured.out) == (2, "")
    assert captured.err.startswith("sessionwatch: error: ")
    assert captured.err.count("\n") == 1
    for spelling in spellings:
        assert spelling not in captured.err + everything_logged(caplog.records)


@needs_postgres
def test_a_working_store_never_logs_or_raises_its_password(
    caplog: pytest.LogCaptureFixture, marker: str
) -> None:
    caplog.set_level(logging.DEBUG)
    with postgres_url() as plain:
        url = with_password(plain, SECRET)
        waker = FailingWaker()
        with sessionwatch.open(url, waker=waker, clock=FakeClock()) as watch, sessionwatch.open(url) as other:
            watch.upsert_session(MANAGER)
            assert (
                watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1") is not None
            )
            assert other.record_human_message(CHILD, channel=f"chan {marker}") is not None
            assert [n.target for n in watch.drain(MANAGER)] == [CHILD]
            watch.sweep()
        with pytest.raises(StoreError) as refused:
            sessionwatch.open(url.replace("synchronous_commit", "no_such_setting"))

    shown = everything_logged(caplog.records) + everything_raised(refused.value)
    assert "no_such_setting" in shown
    assert SECRET not in shown
    assert marker not in shown
