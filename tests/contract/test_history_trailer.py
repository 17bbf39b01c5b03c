"""A history is whole or refused: the trailer (event count and digest) guards an export against cuts.

A history cut at a line boundary reads as a valid shorter history (here: the acknowledgement of a
notice is dropped, so the notice would come back as pending). Its trailer says how many event lines
came before it and the sha256 of their bytes, so an import refuses a history without its trailer,
with a trailer that disagrees with the lines, or with lines after it, writing nothing into any
store, whether one process checks the lines or a second one does. A version 1 history (sessionwatch
0.1.0) has no trailer and still imports.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator

import orjson
import pytest
from histories import as_version_one, seal, unsealed

import sessionwatch
from sessionwatch import Actor, SessionWatch
from sessionwatch.adapters.history.jsonl import HistoryError, check_history, export_history, import_history
from sessionwatch.adapters.stores.port import SignalStore
from sessionwatch.projections.read_model import ReadModel
from sessionwatch.testing import FakeClock

MANAGER = "agent:main:main"
WORKER = "agent:main:worker"


def export_text(store: SignalStore) -> str:
    out = io.StringIO()
    export_history(store, out)
    return out.getvalue()


def exported_lines() -> list[str]:
    """A history whose last event is the acknowledgement of the manager's one notice."""
    with sessionwatch.open("memory://", clock=FakeClock(), sweep_on_open=False) as watch:
        watch.watch(MANAGER, WORKER)
        for n in range(3):
            watch.record(WORKER, kind="goal_changed", actor=Actor.system(), summary=f"goal {n}")
            assert [n.target for n in watch.drain(MANAGER)] == [WORKER]
        assert watch.pending_notices(MANAGER) == []
        return export_text(watch.store).splitlines(keepends=True)


@pytest.fixture
def target(store_url: str) -> Iterator[SessionWatch]:
    with sessionwatch.open(store_url, clock=FakeClock(), sweep_on_open=False) as opened:
        yield opened


@pytest.fixture(params=[False, True], ids=["one process", "a second process"])
def elsewhere(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def refused(watch: SessionWatch, lines: list[str], *, elsewhere: bool) -> HistoryError:
    """The import's refusal; the store is as empty as before."""
    with pytest.raises(HistoryError) as caught:
        import_history(watch.store, lines, check_elsewhere=elsewhere)
    assert watch.store.stored_event_count() == 0
    assert watch.store.last_sequence() == 0
    assert watch.store.read_model() == ReadModel()
    return caught.value


def test_the_trailer_counts_the_event_lines_and_digests_every_byte_before_it() -> None:
    lines = exported_lines()
    trailer = orjson.loads(lines[-1])
    before = "".join(lines[:-1]).encode()
    assert trailer == {
        "events": len(lines) - 2,
        "sha256": hashlib.sha256(before).hexdigest(),
        "trailer": "sessionwatch.history",
    }
    assert list(trailer) == sorted(trailer)
    assert orjson.loads(lines[0])["version"] == 2


def test_a_cut_at_a_line_boundary_leaves_a_notice_pending_that_was_acknowledged() -> None:
    """Why the trailer is needed: a cut history is otherwise a valid, different one."""
    cut = unsealed(exported_lines())[:-1]  # the acknowledgement gone
    with sessionwatch.open("memory://", clock=FakeClock(), sweep_on_open=False) as watch:
        import_history(watch.store, as_version_one(seal(cut)))
        assert [n.target for n in watch.pending_notices(MANAGER)] == [WORKER]


@pytest.mark.parametrize("keep", [0, 1, 2, -2, -1], ids=["nothing", "header", "head -n 2", "more", "all but"])
def test_a_history_cut_at_a_line_boundary_is_refused_and_writes_nothing(
    target: SessionWatch, elsewhere: bool, keep: int
) -> None:
    lines = exported_lines()
    cut = lines[:keep] if keep > 0 else lines[: len(lines) + keep] if keep < 0 else []
    error = refused(target, cut, elsewhere=elsewhere)
    expected = "no header" if not cut else "no trailer"
    assert expected in str(error)
    assert "\n" not in str(error)
    import_history(target.store, lines, check_elsewhere=elsewhere)  # nothing stands in the way
    assert export_text(target.store) == "".join(lines)


def test_a_history_cut_inside_a_line_is_refused(target: SessionWatch, elsewhere: bool) -> None:
    lines = exported_lines()
    cut = [*lines[:3], lines[3][:40]]
    assert "no trailer" in str(refused(target, cut, elsewhere=elsewhere))


def test_a_trailer_that_miscounts_the_events_is_refused(target: SessionWatch, elsewhere: bool) -> None:
    lines = exported_lines()
    trailer = orjson.loads(lines[-1])
    wrong = orjson.dumps({**trailer, "events": trailer["events"] - 1}, option=orjson.OPT_SORT_KEYS).decode()
    error = refused(target, [*lines[:-1], wrong], elsewhere=elsewhere)
    assert str(error).startswith(f"line {len(lines)}: the trailer counts {trailer['events'] - 1} events")


def test_a_history_changed_after_export_is_refused_by_its_digest(
    target: SessionWatch, elsewhere: bool
) -> None:
    lines = exported_lines()
    (index,) = [i for i, line in enumerate(lines) if '"summary":"goal 1"' in line]
    changed = [*lines]
    changed[index] = lines[index].replace('"summary":"goal 1"', '"summary":"goal 7"')
    error = refused(target, changed, elsewhere=elsewhere)
    assert str(error).startswith(f"line {len(lines)}: the trailer's sha256 digest differs")


def test_a_resealed_history_is_checked_line_by_line_as_ever(target: SessionWatch, elsewhere: bool) -> None:
    lines = unsealed(exported_lines())
    broken = seal([*lines[:2], "{not json", *lines[3:]])
    error = refused(target, broken, elsewhere=elsewhere)
    assert str(error).startswith("line 3: not JSON")


@pytest.mark.parametrize("extra", ["event", "trailer", "blank"])
def test_lines_after_the_trailer_are_refused(target: SessionWatch, elsewhere: bool, extra: str) -> None:
    lines = exported_lines()
    after = {"event": lines[1], "trailer": lines[-1], "blank": "\n"}[extra]
    error = refused(target, [*lines, after], elsewhere=elsewhere)
    assert (
        str(error)
        == f"line {len(lines)}: a trailer must be the history's last line, and lines follow this one"
    )


@pytest.mark.parametrize(
    "trailer",
    [
        '{"events":1,"sha256":"abc","trailer":"sessionwatch.history"}',
        '{"events":-1,"sha256":"' + "0" * 64 + '","trailer":"sessionwatch.history"}',
        '{"events":1,"trailer":"sessionwatch.history"}',
    ],
)
def test_a_malformed_trailer_is_refused_naming_its_shape(target: SessionWatch, trailer: str) -> None:
    lines = exported_lines()
    error = refused(target, [*lines[:-1], trailer], elsewhere=False)
    assert str(error).startswith(f"line {len(lines)}: the trailer must be {{")


def test_a_version_one_history_has_no_trailer_and_imports_as_it_is(
    target: SessionWatch, elsewhere: bool
) -> None:
    lines = exported_lines()
    report = import_history(target.store, as_version_one(lines), check_elsewhere=elsewhere)
    assert report.version == 1
    assert report.events == len(lines) - 2
    assert export_text(target.store) == "".join(lines), "exported again: version 2, with its trailer"


def test_a_version_one_history_with_a_trailer_is_refused(target: SessionWatch) -> None:
    lines = exported_lines()
    old = [*as_version_one(lines), lines[-1]]
    error = refused(target, old, elsewhere=False)
    assert str(error) == f"line {len(lines)}: a trailer in a version 1 history, which has none"


def test_lines_read_with_or_without_their_newlines_check_the_same() -> None:
    lines = exported_lines()
    for given in (
        lines,
        [line.rstrip("\n") for line in lines],
        [line.replace("\n", "\r\n") for line in lines],
    ):
        assert check_history(given).version == 2


def test_checking_a_whole_history_reads_its_header_and_refuses_a_cut_one() -> None:
    lines = exported_lines()
    assert check_history(lines).sequence == 3
    assert check_history(as_version_one(lines)).version == 1
    with pytest.raises(HistoryError, match="no trailer"):
        check_history(lines[:2])
    with pytest.raises(HistoryError, match="no header"):
        check_history([])
    with pytest.raises(HistoryError, match=f"^line {len(lines)}: a trailer must be the history's last line"):
        check_history([*lines, lines[1]])
