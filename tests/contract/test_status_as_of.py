"""`status_as_of` and `sessionwatch status KEY --as-of N` (issue 7): a session's status at a past sequence.

The story records on two sessions and keeps what `session_status` answered after every sequence;
asking as of that sequence later, from the event store (and the prune archive once history is
pruned), must give the same answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stores import FILE_STORES

import sessionwatch
from sessionwatch import Actor, InvalidQuery, SessionWatch, UnknownSession
from sessionwatch.cli.cli import main
from sessionwatch.testing import FakeClock

WORKER = "agent:main:worker"
OTHER = "agent:main:other"

Answers = dict[int, dict[str, Any]]
"""Global sequence -> the worker's status (with changesSince 0) right after it."""


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    return tmp_path / "pruned.jsonl"


@pytest.fixture
def watch(store_url: str, archive: Path) -> Iterator[SessionWatch]:
    retention = sessionwatch.Retention(max_signals=4, archive=str(archive))
    with sessionwatch.open(store_url, clock=FakeClock(), retention=retention) as opened:
        yield opened


def play(watch: SessionWatch, rounds: int = 4) -> Answers:
    answers: Answers = {}
    for n in range(rounds):
        for key in (WORKER, OTHER):  # the worker first: it is known from the first sequence on
            signal = watch.record(key, kind="goal_changed", actor=Actor.system(), summary=f"goal {n}")
            answers[signal.sequence] = watch.session_status(WORKER, changes_since=0).to_json()
    return answers


def test_every_past_status_in_the_retained_window_is_given_back(watch: SessionWatch) -> None:
    answers = play(watch, rounds=2)  # 4 signals: within the cap, nothing pruned
    for sequence, then in answers.items():
        assert watch.status_as_of(WORKER, sequence, changes_since=0).to_json() == then
    latest = max(answers)
    assert watch.status_as_of(WORKER, latest).to_json() == watch.session_status(WORKER).to_json()
    assert watch.status_as_of(WORKER, 0).state_version == 0


def test_changes_since_and_limit_apply_as_of_that_sequence(watch: SessionWatch) -> None:
    play(watch, rounds=2)
    status = watch.status_as_of(WORKER, 3, changes_since=0, limit=1)
    assert status.state_version == 3
    assert status.state_changes is not None
    assert [e.sequence for e in status.state_changes.events] == [1]
    assert status.state_changes.truncated is True


def test_before_the_watermark_the_archive_gives_the_pruned_history_back(
    watch: SessionWatch, archive: Path
) -> None:
    answers = play(watch)  # 8 signals, cap 4
    watch.prune(force=True)
    assert watch.session_status(WORKER, changes_since=0).to_json()["stateChanges"]["historyGap"] is True
    first = min(answers)
    with pytest.raises(InvalidQuery) as refused:
        watch.status_as_of(WORKER, first, changes_since=0)
    assert refused.value.field == "as_of"
    for sequence, then in answers.items():
        assert watch.status_as_of(WORKER, sequence, changes_since=0, archive=archive).to_json() == then


def test_after_the_watermark_the_gap_is_reported_as_now(watch: SessionWatch) -> None:
    play(watch)
    watch.prune(force=True)
    now = watch.session_status(WORKER, changes_since=0).to_json()
    assert watch.status_as_of(WORKER, watch.store.last_sequence(), changes_since=0).to_json() == now


def test_a_sequence_past_the_store_counter_is_refused_naming_the_highest_sequence(
    watch: SessionWatch,
) -> None:
    play(watch, rounds=1)
    highest = watch.store.last_sequence()
    assert watch.status_as_of(WORKER, highest).state_version == watch.session_status(WORKER).state_version
    with pytest.raises(InvalidQuery) as refused:
        watch.status_as_of(WORKER, highest + 1)
    assert refused.value.field == "as_of"
    assert f"highest sequence {highest}" in refused.value.reason


def test_an_archive_without_the_sessions_pruned_history_is_refused(
    watch: SessionWatch, tmp_path: Path
) -> None:
    play(watch)
    watch.prune(force=True)
    empty = tmp_path / "other.jsonl"
    empty.write_text("")
    with pytest.raises(InvalidQuery) as refused:
        watch.status_as_of(WORKER, 1, archive=empty)
    assert refused.value.field == "archive"


def test_bad_arguments_are_typed_errors(watch: SessionWatch) -> None:
    play(watch, rounds=1)
    with pytest.raises(UnknownSession):
        watch.status_as_of("agent:main:nobody", 1)
    for bad in (-1, True, "3"):
        with pytest.raises(InvalidQuery) as raised:
            watch.status_as_of(WORKER, bad)  # type: ignore[arg-type]
        assert raised.value.field == "as_of"


@pytest.mark.parametrize("store_kind", FILE_STORES)
def test_the_status_command_answers_as_of_a_sequence(
    watch: SessionWatch, store_url: str, archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = play(watch)
    watch.prune(force=True)
    first = min(answers)
    argv = ["status", WORKER, "--db", store_url, "--since", "0", "--json", "--as-of", str(first)]
    assert main([*argv, "--archive", str(archive)]) == 0
    assert json.loads(capsys.readouterr().out) == answers[first]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("sessionwatch: error: --as-of: history up to sequence")
    assert main(["status", WORKER, "--db", store_url, "--archive", str(archive)]) == 2
    assert "--archive: only with --as-of" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content",
    [b"not json\n", b"[1, 2]\n", b'{"type": "session.signal_recorded.v9", "data": {}}\n', b"\xff\xfe\n"],
    ids=["not-json", "not-an-object", "unknown-name", "not-utf8"],
)
def test_a_file_that_is_not_an_archive_is_refused_naming_it(
    watch: SessionWatch, tmp_path: Path, content: bytes
) -> None:
    play(watch, rounds=1)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    with pytest.raises(InvalidQuery) as refused:
        watch.status_as_of(WORKER, 1, archive=bad)
    assert refused.value.field == "archive"
    with pytest.raises(InvalidQuery) as missing:
        watch.status_as_of(WORKER, 1, archive=tmp_path / "missing.jsonl")
    assert missing.value.field == "archive"
