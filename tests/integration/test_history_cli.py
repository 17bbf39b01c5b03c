"""`sessionwatch export` / `sessionwatch import` (SPEC §14): a history moved between stores by command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from histories import seal, unsealed
from stores import PG_URL, admin, drop_schema, needs_postgres, new_schema, require_postgres, with_query

import sessionwatch
from sessionwatch import Actor, SignalKind
from sessionwatch.adapters.history import check_process
from sessionwatch.cli import cli_commands
from sessionwatch.cli.cli import main
from sessionwatch.testing import FakeClock

WORKER = "agent:main:worker"
MANAGER = "agent:main:main"
RELEASE_0_1_0 = Path(__file__).parent.parent / "data" / "release-0.1.0" / "history.jsonl"


def seed(url: str) -> None:
    with sessionwatch.open(url, clock=FakeClock()) as watch:
        watch.upsert_session(MANAGER)
        watch.record(WORKER, kind="goal_changed", actor=Actor.system(), summary="goal created")
        watch.watch(MANAGER, WORKER)
        watch.record_human_message(WORKER, channel="telegram")


@pytest.fixture(params=["one process", "a second process"])
def checking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Import as a small file does, or as a big one does: checked in a second process."""
    if request.param == "a second process":
        monkeypatch.setattr(cli_commands, "CHECK_ELSEWHERE_FROM", 0)
        started: list[str] = []
        real = check_process.ElsewhereReader.__init__

        def counting(
            reader: check_process.ElsewhereReader, header_text: str, *kinds: frozenset[SignalKind]
        ) -> None:
            started.append(header_text)
            real(reader, header_text, *kinds)

        monkeypatch.setattr(check_process.ElsewhereReader, "__init__", counting)
        yield str(request.param)
        assert len(started) == 1, "the import of a big file is checked in a second process"
    else:
        yield str(request.param)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.usefixtures("checking")
def test_export_then_import_moves_the_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, target = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    seed(source)
    code, exported, _ = run(capsys, "export", "--db", source)
    assert code == 0
    assert json.loads(exported.splitlines()[0])["format"] == "sessionwatch.history"
    history = tmp_path / "history.jsonl"
    history.write_text(exported, encoding="utf-8")
    code, out, _ = run(capsys, "import", str(history), "--db", target, "--json")
    assert code == 0
    assert json.loads(out)["signals"] == 2
    assert run(capsys, "export", "--db", target)[1] == exported
    for db in (source, target):
        assert run(capsys, "notices", MANAGER, "--db", db)[1].count("changesSince") == 1
    assert run(capsys, "audit", "--db", target)[0] == 0


@pytest.mark.usefixtures("checking")
def test_a_bad_history_is_one_line_naming_the_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, target = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    seed(source)
    lines = unsealed(run(capsys, "export", "--db", source)[1].splitlines())
    lines[2] = lines[2].replace('"version":', '"version":"x","was":')
    history = tmp_path / "bad.jsonl"
    history.write_text("".join(seal(lines)), encoding="utf-8")  # a whole file whose line 3 is wrong
    code, out, err = run(capsys, "import", str(history), "--db", target)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("sessionwatch: error: FILE: line 3:")
    # the refused import created nothing: the target is still not a store
    assert not (tmp_path / "b.db").exists()
    code, _, err = run(capsys, "list", "--db", target)
    assert code == 2
    assert "--db: no store at" in err


def test_importing_into_a_store_with_history_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    seed(source)
    history = tmp_path / "history.jsonl"
    history.write_text(run(capsys, "export", "--db", source)[1], encoding="utf-8")
    code, _, err = run(capsys, "import", str(history), "--db", source)
    assert code == 2
    assert "already holds history" in err
    code, _, err = run(capsys, "import", str(tmp_path / "absent.jsonl"), "--db", source)
    assert code == 2
    assert "no such file" in err


# ------------------------------------------------------------------- a cut history is refused


def cut_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    """An export of the seeded store cut as `head -n 2`, `head -n -1` and inside its last line.

    The command line checks the whole file before it opens the store (whichever process would then
    check the lines): a cut file never reaches either.
    """
    source = f"sqlite:///{tmp_path / 'a.db'}"
    seed(source)
    exported = run(capsys, "export", "--db", source)[1]
    lines = exported.splitlines(keepends=True)
    cuts = {"head -n 2": lines[:2], "head -n -1": lines[:-1], "inside a line": [*lines[:-1], lines[-1][:30]]}
    out: dict[str, Path] = {}
    for name, kept in cuts.items():
        path = tmp_path / f"cut-{len(out)}.jsonl"
        path.write_text("".join(kept), encoding="utf-8")
        out[name] = path
    return out


def assert_refused_as_cut(outcome: tuple[int, str, str]) -> None:
    code, out, err = outcome
    assert (code, out) == (2, "")
    assert err.count("\n") == 1, err
    assert err.startswith("sessionwatch: error: "), err
    assert "no trailer: the history ends at line" in err, err


def test_a_cut_history_is_refused_in_one_line_and_leaves_no_sqlite_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, path in cut_exports(tmp_path, capsys).items():
        target = tmp_path / "b.db"
        assert_refused_as_cut(run(capsys, "import", str(path), "--db", f"sqlite:///{target}"))
        left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("b.db"))
        assert left == [], f"{name}: {left} left behind"


def _schema_exists(schema: str) -> bool:
    row = admin().execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    return row is not None and row[0] == 1


@needs_postgres
def test_a_cut_history_is_refused_and_creates_no_postgres_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_postgres()
    schema = new_schema("sw_cut")
    try:
        for path in cut_exports(tmp_path, capsys).values():
            assert_refused_as_cut(run(capsys, "import", str(path), "--db", with_query(PG_URL, schema=schema)))
            assert not _schema_exists(schema)
    finally:
        drop_schema(schema)


@needs_postgres
def test_a_whole_history_moves_into_a_new_postgres_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_postgres()
    source = f"sqlite:///{tmp_path / 'a.db'}"
    seed(source)
    history = tmp_path / "history.jsonl"
    history.write_text(run(capsys, "export", "--db", source)[1], encoding="utf-8")
    schema = new_schema("sw_whole")
    url = with_query(PG_URL, schema=schema)
    try:
        code, _, err = run(capsys, "import", str(history), "--db", url)
        assert (code, err) == (0, "")
        assert run(capsys, "export", "--db", url)[1] == history.read_text(encoding="utf-8")
    finally:
        drop_schema(schema)


@pytest.mark.usefixtures("checking")
def test_a_history_written_by_release_0_1_0_imports_with_one_warning_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = f"sqlite:///{tmp_path / 'b.db'}"
    code, out, err = run(capsys, "import", str(RELEASE_0_1_0), "--db", target)
    assert code == 0
    assert out.startswith("imported 19 stored events")
    assert err.count("\n") == 1, err
    assert err.startswith(
        f"sessionwatch: warning: {RELEASE_0_1_0} is a version 1 history (sessionwatch 0.1.0)"
    )
    assert run(capsys, "audit", "--db", target)[0] == 0
    again = run(capsys, "export", "--db", target)[1].splitlines()
    assert '"trailer":"sessionwatch.history"' in again[-1], "exported again, it gets its trailer"
