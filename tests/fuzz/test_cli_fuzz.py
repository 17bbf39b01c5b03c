"""Fuzzing the command line (SPEC §13.1, §14, §15.2): every sub-command, random and hostile arguments.

Whatever the arguments, `sessionwatch` exits 0, 1 or 2 (3 is an internal error: a bug), never
prints a traceback, and a failure (2) is exactly one non-empty line on stderr with nothing on stdout
and nothing written: the store's whole state (tests/snapshots.py) is the same before and after, and
a failure or a "no" answer (1) leaves the store's folder holding exactly the files it held (no
`-wal` or `-shm` beside the store, no file the command started).
Most runs are in-process through `main(argv)`; a few are real processes, for what only a process
has: argv bytes that are not UTF-8, and the console script's own exit status.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import Outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_gateway import REFERENCE_SCHEMA
from snapshots import StoreState, store_state
from strategies import (
    ANY_TEXT,
    PRINTABLE,
    hostile_agent_id_texts,
    hostile_id_texts,
    hostile_key_texts,
    hostile_kind_texts,
    hostile_summary_texts,
    oversize_text,
)

import sessionwatch
from sessionwatch import Actor, SignalKind
from sessionwatch.cli.cli import build_parser, main

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
OPS = "agent:ops:main"
SCRIPT = Path(sys.executable).parent / "sessionwatch"
SUBCOMMANDS = (
    "demo",
    "status",
    "list",
    "record",
    "watch",
    "unwatch",
    "watched",
    "notices",
    "drain",
    "sweep",
    "prune",
    "audit",
    "export",
    "import",
    "import-openclaw",
    "claude-code",
    "codex",
    "mcp",
)

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
"""Examples per test: the file stays within its ~40 s budget."""


def state_at(url: str) -> StoreState:
    """The store's whole state, read without sweeping."""
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        return store_state(watch)


def seed(url: str) -> None:
    """A spawn edge with a pending notice, a goal, a failed run, an explicit watch on a bare key."""
    with sessionwatch.open(url) as watch:
        watch.upsert_session(MANAGER)
        watch.upsert_session(OPS)
        watch.upsert_session("global", agent_id="ops")
        assert watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="run-1") is not None
        assert watch.record_human_message(CHILD, channel="telegram") is not None
        assert watch.record_goal_changed(CHILD, summary="goal updated", actor=Actor.human()) is not None
        assert watch.record_run_terminal(
            child_key=CHILD, run_id="run-1", requester_key=MANAGER, outcome="error"
        )
        assert watch.watch(OPS, "global", target_agent_id="ops")


class Cli:
    """`main(argv)` in-process on a seeded SQLite store, checked after every run."""

    def __init__(self, capsys: pytest.CaptureFixture[str], url: str) -> None:
        self.capsys = capsys
        self.url = url
        self.folder = Path(url.removeprefix("sqlite:///")).parent

    def run(self, *argv: str) -> Outcome:
        code = main(list(argv))
        captured = self.capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    def well_formed(self, *argv: str) -> Outcome:
        """Run; the exit status is 0, 1 or 2, and a failure is one line and writes nothing."""
        before = state_at(self.url)
        held = files_in(self.folder)
        outcome = self.run(*argv)
        assert outcome.code in (0, 1, 2), outcome
        assert "Traceback" not in outcome.err
        if outcome.code != 0:
            assert files_in(self.folder) == held, (argv, outcome)
        if outcome.code == 2:
            assert_one_error_line(outcome)
            assert state_at(self.url) == before
        else:
            assert outcome.err == ""
        return outcome

    def refused(self, *argv: str) -> Outcome:
        """Run; it must fail (2) with one line on stderr, having written nothing."""
        outcome = self.well_formed(*argv)
        assert outcome.code == 2, outcome
        return outcome


def files_in(folder: Path) -> list[str]:
    """The files a command could leave behind (Hypothesis keeps its own database apart)."""
    return sorted(path.name for path in folder.iterdir() if not path.name.startswith(".hypothesis"))


def assert_one_error_line(outcome: Outcome) -> None:
    assert outcome.out == ""
    lines = outcome.err.splitlines()
    assert len(lines) == 1, outcome.err
    assert outcome.err == lines[0] + "\n"
    assert lines[0].startswith("sessionwatch: error: ")
    assert lines[0].removeprefix("sessionwatch: error: ").strip()
    assert lines[0].isprintable()


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A seeded SQLite store; relative paths a command writes land in `tmp_path`."""
    monkeypatch.delenv("SESSIONWATCH_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    store = f"sqlite:///{tmp_path / 'state.db'}"
    seed(store)
    return store


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], url: str) -> Cli:
    return Cli(capsys, url)


def test_the_fuzzers_cover_every_subcommand() -> None:
    parser = build_parser()
    [commands] = [a for a in parser._actions if a.dest == "command"]
    assert commands.choices is not None
    assert tuple(commands.choices) == SUBCOMMANDS


# ------------------------------------------------------------------------ random argument lists

HOSTILE_TEXT = st.one_of(
    ANY_TEXT.filter(lambda text: "\x00" not in text),
    hostile_key_texts(),
    st.sampled_from(("-", "--", "-1", "--=", "=", "'", '"', "\\", "%s", "$1", "{}", "[]", "null", "nan")),
)
"""Anything an argv may hold; only the hostile keys hold a NUL, which only in-process runs can pass."""
TOKENS = st.one_of(
    # the demo writes a whole story; the server serves until its client goes (its own tests run it)
    st.sampled_from([c for c in SUBCOMMANDS if c not in ("demo", "mcp")]),
    st.sampled_from(
        (
            "--json",
            "--since",
            "--agent",
            "--limit",
            "--as-of",
            "--summary",
            "--actor",
            "--payload",
            "--dedupe-key",
            "--run-id",
            "--watcher",
            "--days",
            "--max-signals",
            "--help",
            "--unknown",
        )
    ),
    st.sampled_from((MANAGER, CHILD, OPS, "global", "ops", "0", "1", "-1", "200", "1e3", "human", "system")),
    st.sampled_from([kind.value for kind in SignalKind]),
    HOSTILE_TEXT,
)


def test_random_argument_lists_exit_0_1_or_2_with_one_error_line_and_write_nothing_on_error(cli: Cli) -> None:
    @FUZZ
    @given(st.lists(TOKENS, max_size=8))
    def well_formed(tokens: list[str]) -> None:
        cli.well_formed(*tokens, "--db", cli.url)

    well_formed()


# ------------------------------------------------------------------- one hostile argument each

NOT_INTEGERS = st.one_of(
    st.text(max_size=6).filter(lambda text: not parses_as_int(text)),
    st.sampled_from(("1.5", "1e3", "0x10", "nan", "", " ", "--1", "1 2", "½")),
)
NEGATIVE = st.integers(max_value=-1).map(str)


def parses_as_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


BAD_ACTORS = st.one_of(
    st.text(max_size=10).filter(
        lambda text: text not in ("human", "system") and not text.startswith("agent:")
    ),
    st.sampled_from(("agent:", "agent: ", "Human", "SYSTEM")),
    hostile_key_texts().filter(lambda key: bool(key.strip())).map(lambda key: f"agent:{key}"),
)
BAD_PAYLOADS = st.one_of(
    st.sampled_from(
        (
            "",
            "{",
            "[]",
            "null",
            '"text"',
            "1",
            '{"outcome": NaN}',
            '{"turns": Infinity}',
            '{"turns": 0}',
            '{"turns": 1.5}',
            '{"turns": true}',
            '{"turns": 9223372036854775808}',
            '{"turns": ' + "9" * 5000 + "}",
            "[" * 100_000,
            '{"text": "hello"}',
            '{"channel": "a\\nb"}',
            '{"channel": "\\ud800"}',
            '{"channel": ""}',
        )
    ),
    oversize_text(4096).map(lambda text: json.dumps({"channel": text})),
    st.text(max_size=20).filter(lambda text: not is_json_object(text)),
)


def is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


@st.composite
def hostile_record_argv(draw: st.DrawFn) -> list[str]:
    """`record` with exactly one hostile argument (the kind, key, summary or an option)."""
    argument = draw(
        st.sampled_from(
            ("kind", "key", "summary", "actor", "payload", "dedupe", "agent", "run", "watcher", "agent_kind")
        )
    )
    kind, key, options = "human_direct_message", CHILD, {"--summary": "human message via telegram"}
    if argument == "kind":
        kind = draw(hostile_kind_texts())
    elif argument == "key":
        key = draw(hostile_key_texts())
    elif argument == "summary":
        options["--summary"] = draw(hostile_summary_texts())
    elif argument == "actor":
        options["--actor"] = draw(BAD_ACTORS)
    elif argument == "payload":
        options["--payload"] = draw(BAD_PAYLOADS)
    elif argument in ("dedupe", "run"):
        options["--dedupe-key" if argument == "dedupe" else "--run-id"] = draw(hostile_id_texts())
    elif argument == "agent":
        options["--agent"] = draw(hostile_agent_id_texts())
    elif argument == "watcher":
        options["--watcher"] = draw(hostile_key_texts())
    else:  # a bare key without its agent
        key = draw(st.sampled_from(("global", "cron:nightly", "subagent:x")))
    # `--opt=VALUE` and `--` keep a value that starts with `-` from reading as an option.
    return ["record", *(f"{name}={value}" for name, value in options.items()), "--", kind, key]


def test_record_with_one_hostile_argument_is_refused_in_one_line_and_writes_nothing(cli: Cli) -> None:
    @FUZZ
    @given(hostile_record_argv(), st.booleans())
    def refused(argv: list[str], as_json: bool) -> None:
        json_flag = ["--json"] if as_json else []
        cli.refused("--db", cli.url, *json_flag, *argv)

    refused()


UNKNOWN_OPTIONS = st.text(PRINTABLE, min_size=1, max_size=8).filter(lambda name: name != "db")
"""Option names no sub-command knows (or knows without a value, like `--json=x`)."""


@st.composite
def hostile_query_argv(draw: st.DrawFn) -> list[str]:
    """`status`, `list`, `watch`, `unwatch`, `watched`, `notices` or `drain` with one hostile argument."""
    key = draw(hostile_key_texts())
    agent = draw(hostile_agent_id_texts())
    cases = [
        ["status", f"--since={draw(NOT_INTEGERS | NEGATIVE)}", "--", CHILD],
        ["status", f"--limit={draw(NOT_INTEGERS)}", "--", CHILD],
        ["status", f"--as-of={draw(NOT_INTEGERS | NEGATIVE)}", "--", CHILD],
        ["status", "--", key],
        ["status", f"--agent={agent}", "--", "global"],
        ["status", "--", "global"],
        ["status", "--", "agent:main:never-seen"],
        ["status", "--archive=pruned.jsonl", "--", CHILD],
        ["watch", "--", key, CHILD],
        ["watch", "--", MANAGER, key],
        ["watch", f"--agent={agent}", "--", MANAGER, "global"],
        ["unwatch", "--", key, CHILD],
        ["unwatch", "--", MANAGER, key],
        ["unwatch", f"--agent={agent}", "--", OPS, "global"],
        ["watched", "--", key],
        ["watched", "--prompt", "--", key],
        ["notices", "--", key],
        ["drain", "--", key],
        [draw(st.sampled_from(("list", "sweep", "audit", "export"))), "--", draw(HOSTILE_TEXT)],
        [draw(st.sampled_from(SUBCOMMANDS)), f"--{draw(UNKNOWN_OPTIONS)}=x"],
    ]
    return draw(st.sampled_from(cases))


def test_queries_and_watches_with_one_hostile_argument_are_refused_in_one_line_and_write_nothing(
    cli: Cli,
) -> None:
    @FUZZ
    @given(hostile_query_argv(), st.booleans())
    def refused(argv: list[str], as_json: bool) -> None:
        cli.refused("--json", "--db", cli.url, *argv) if as_json else cli.refused("--db", cli.url, *argv)

    refused()


@pytest.mark.parametrize(
    ("watcher", "target"),
    [("global", CHILD), ("cron:nightly", CHILD), (CHILD, CHILD), (" agent:ops:main ", OPS)],
)
def test_a_watch_refused_by_the_core_answers_no_on_stdout_and_writes_nothing(
    cli: Cli, watcher: str, target: str
) -> None:
    outcome = cli.well_formed("watch", "--db", cli.url, "--", watcher, target)

    assert outcome.code == 1
    assert outcome.out.startswith("refused: ")
    assert outcome.out.count("\n") == 1


BAD_DAYS = st.one_of(
    st.sampled_from(("0", "-1", "nan", "inf", "-inf", "1e309", "36501", "", "abc", "1,5")),
    st.floats(max_value=0).map(str),
    st.floats(min_value=36_500.001, allow_infinity=False).map(str),
)
BAD_MAX_SIGNALS = st.one_of(NOT_INTEGERS, st.integers(max_value=0).map(str))


@st.composite
def hostile_prune_argv(draw: st.DrawFn, tmp_path: Path) -> list[str]:
    """`prune` with a bad window, cap or archive (the archive fails only once something is pruned)."""
    archive = draw(
        st.sampled_from(
            (
                str(tmp_path),  # a directory
                str(tmp_path / "missing" / "pruned.jsonl"),
                "pruned\x00.jsonl",
                str(tmp_path / ("a" * 300)),  # a name too long
            )
        )
    )
    return draw(
        st.sampled_from(
            (
                ["prune", f"--days={draw(BAD_DAYS)}"],
                ["prune", f"--max-signals={draw(BAD_MAX_SIGNALS)}"],
                ["prune", "--max-signals=1", f"--archive={archive}"],
            )
        )
    )


def test_prune_with_a_bad_window_cap_or_archive_is_refused_in_one_line_and_writes_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    @FUZZ
    @given(hostile_prune_argv(tmp_path))
    def refused(argv: list[str]) -> None:
        cli.refused("--db", cli.url, *argv)

    refused()
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("state.db")] == []


HOSTILE_URLS = st.one_of(
    st.sampled_from(
        (
            "",
            "   ",
            "ftp://host/x",
            "sqlite://host/x.db",
            "sqlite:///",
            "sqlite:///x.db?synchronous=sometimes",
            "sqlite:///x.db?journal=off",
            "postgresql://[::1",
            "postgresql://u:pw@127.0.0.1:1/db?connect_timeout=1",
            "postgresql://h/db?schema=Bad-Name",
            "postgresql://h/db?schema=x;drop",
            "postgresql://h/db?lock_timeout=-1",
            "postgresql://h/db?connect_timeout=abc",
            "postgresql://u:pw%00x@127.0.0.1:1/db",
            "postgresql://127.0.0.1:1/db?foo=bar",
        )
    ),
    st.text(PRINTABLE, min_size=1, max_size=12)
    .filter(lambda scheme: scheme.lower() not in ("memory", "postgresql", "postgres"))
    .map(lambda scheme: f"{scheme}://x"),
)
"""Store URLs no command can use; `postgresql://` ones fail before or at connecting (a closed port)."""


def test_every_subcommand_refuses_an_unusable_store_url_in_one_line(cli: Cli, tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a database\x00\xff" * 100)

    @FUZZ
    @given(
        st.sampled_from([c for c in SUBCOMMANDS if c not in ("import", "import-openclaw")]),
        HOSTILE_URLS | st.sampled_from((str(tmp_path), str(tmp_path / "missing" / "s.db"), str(junk))),
    )
    def refused(command: str, store: str) -> None:
        arguments = {
            "status": [CHILD],
            "record": ["goal_changed", CHILD, "--summary", "goal updated"],
            "watch": [MANAGER, CHILD],
            "unwatch": [MANAGER, CHILD],
            "watched": [MANAGER],
            "notices": [MANAGER],
            "drain": [MANAGER],
        }.get(command, [])
        cli.refused(command, *arguments, "--db", store)

    refused()
    assert junk.read_bytes() == b"not a database\x00\xff" * 100


def test_the_memory_store_is_usable_from_the_command_line_but_keeps_nothing(cli: Cli) -> None:
    outcome = cli.well_formed(
        "record", "goal_changed", CHILD, "--summary", "goal updated", "--db", "memory://"
    )
    assert outcome.code == 0
    assert cli.well_formed("demo", "--db", "memory://").code == 2


# ----------------------------------------------------------------------- the history importers


def export_of(cli: Cli) -> str:
    outcome = cli.run("export", "--db", cli.url)
    assert outcome.code == 0
    return outcome.out


@st.composite
def hostile_histories(draw: st.DrawFn, valid: str) -> bytes:
    """Export files gone wrong: cut, edited, not JSON, not UTF-8, or not text at all."""
    lines = valid.splitlines()
    at = draw(st.integers(0, len(lines) - 1))
    junk_line = draw(st.text(min_size=1, max_size=30).filter(lambda text: bool(text.strip())))
    edits = [
        b"",
        "\n".join([*lines[:at], junk_line, *lines[at + 1 :]]).encode("utf-8", "surrogatepass"),
        "\n".join([*lines[:at], lines[at][: len(lines[at]) // 2], *lines[at + 1 :]]).encode(),
        "\n".join([*lines[:at], "", *lines[at:]]).encode(),  # an empty line inside
        "\n".join([*lines, lines[-1]]).encode(),  # an event twice
        valid.encode().replace(b'"version":', b'"version":-', 1),
        valid.encode().replace(b"agent:main:subagent:child", b"agent:main"),
        draw(st.binary(max_size=200)),
        b"\xef\xbb\xbf" + valid.encode(),
        b"\xff\xfe" + valid.encode(),
        b"[" * 100_000,
    ]
    return draw(st.sampled_from(edits))


def test_import_of_a_broken_history_is_refused_in_one_line_and_leaves_the_new_store_empty(
    cli: Cli, tmp_path: Path
) -> None:
    valid = export_of(cli)
    source = tmp_path / "history.jsonl"

    names = itertools.count()

    @FUZZ
    @given(hostile_histories(valid))
    def refused(content: bytes) -> None:
        source.write_bytes(content)
        target = f"sqlite:///{tmp_path / f'imported-{next(names)}.db'}"
        outcome = cli.run("import", str(source), "--db", target)
        assert "Traceback" not in outcome.err
        if content.strip():
            assert outcome.code == 2, outcome
            assert_one_error_line(outcome)
        else:  # an empty file is an empty history
            assert outcome.code in (0, 2), outcome
        with sessionwatch.open(target, sweep_on_open=False) as imported:
            assert (imported.store.last_sequence(), imported.store.stored_event_count()) == (0, 0)

    refused()


def test_import_into_a_store_with_history_is_refused_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "history.jsonl"
    source.write_text(export_of(cli), encoding="utf-8")

    cli.refused("import", str(source), "--db", cli.url)
    for path in (str(tmp_path), str(tmp_path / "missing.jsonl"), "history\x00.jsonl", "a" * 300):
        cli.refused("import", path, "--db", f"sqlite:///{tmp_path / 'new.db'}")


ROW = (
    1,
    None,
    CHILD,
    None,
    "main",
    "goal_changed",
    "system",
    None,
    None,
    1_796_040_000_000,
    "goal created",
    None,
)
COLUMNS: tuple[str, ...] = ("sequence", "dedupe_key", "session_key", "session_id", "agent_id", "kind")
COLUMNS += ("actor_type", "actor_id", "run_id", "occurred_at", "summary", "payload_json")


def build_reference(path: Path, row: tuple[object, ...]) -> None:
    with sqlite3.connect(path) as raw:
        raw.executescript(REFERENCE_SCHEMA)
        raw.execute(f"INSERT INTO session_state_events VALUES ({','.join('?' * len(row))})", row)
        raw.execute("INSERT INTO session_state_heads VALUES (?,?,?,?,?)", (CHILD, "main", 1, 0, 0))
    raw.close()


UTF8_TEXT = st.text(st.characters(codec="utf-8"), max_size=8)
REFUSED_VALUES: st.SearchStrategy[tuple[str, object]] = st.one_of(
    st.tuples(st.just("kind"), UTF8_TEXT.filter(lambda text: text not in {k.value for k in SignalKind})),
    st.tuples(st.just("actor_type"), UTF8_TEXT.filter(lambda text: text not in ("human", "agent", "system"))),
    st.tuples(
        st.just("occurred_at"),
        st.one_of(
            UTF8_TEXT.map(lambda text: f"x{text}"),  # never a number SQLite would convert
            st.floats(allow_nan=False).filter(lambda number: not number.is_integer()),
            st.binary(max_size=8).map(lambda data: b"\xff" + data),
        ),
    ),
    st.tuples(st.just("summary"), st.binary(min_size=1, max_size=8).filter(lambda data: not is_utf8(data))),
)
"""Row values the importer refuses today: not a kind, an actor type, a time, or text."""


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_import_openclaw_of_a_broken_reference_is_refused_in_one_line_and_leaves_the_store_empty(
    cli: Cli, tmp_path: Path
) -> None:
    names = itertools.count()

    @FUZZ
    @given(REFUSED_VALUES)
    def refused(change: tuple[str, object]) -> None:
        column, value = change
        name = next(names)
        row: list[object] = list(ROW)
        row[COLUMNS.index(column)] = value
        reference = tmp_path / f"{name}.reference.db"
        build_reference(reference, tuple(row))
        target = f"sqlite:///{tmp_path / f'{name}.db'}"
        outcome = cli.run("import-openclaw", str(reference), "--db", target)
        assert outcome.code == 2, outcome
        assert_one_error_line(outcome)
        with sessionwatch.open(target, sweep_on_open=False) as imported:
            assert (imported.store.last_sequence(), imported.store.stored_event_count()) == (0, 0)

    refused()
    for path in (tmp_path, tmp_path / "missing.db", "ref\x00.db", "a" * 300):
        cli.refused("import-openclaw", str(path), "--db", f"sqlite:///{tmp_path / 'new.db'}")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    cli.refused("import-openclaw", str(junk), "--db", f"sqlite:///{tmp_path / 'new.db'}")


# --------------------------------------------------------------------------- real processes


def run_process(*argv: str | bytes, cwd: Path) -> Outcome:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONWATCH_URL"}
    done = subprocess.run([SCRIPT, *argv], capture_output=True, cwd=cwd, env=env, check=False, timeout=60)
    return Outcome(
        done.returncode,
        done.stdout.decode("utf-8", "backslashreplace"),
        done.stderr.decode("utf-8", "backslashreplace"),
    )


@pytest.fixture
def processes(tmp_path: Path) -> Path:
    assert SCRIPT.is_file(), f"the console script is not installed next to {sys.executable}"
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        [b"status", b"agent:main:\xff\xfe", b"--db", b"{db}"],
        [b"record", b"goal_changed", b"agent:main:x", b"--summary", b"goal \xc3\x28", b"--db", b"{db}"],
        [
            b"record",
            b"goal_changed",
            b"agent:main:x",
            b"--summary=s",
            b"--payload=" + b"[" * 100_000,
            b"--db",
            b"{db}",
        ],
        [b"watch", b"agent:main:\xed\xa0\x80", CHILD.encode(), b"--db", b"{db}"],
        [b"prune", b"--days", b"\xff", b"--db", b"{db}"],
        [b"\xff"],
        [],
    ],
)
def test_a_real_process_given_hostile_bytes_exits_2_with_one_line_and_writes_nothing(
    processes: Path, argv: list[bytes]
) -> None:
    db = processes / "state.db"
    url = f"sqlite:///{db}"
    seed(url)
    before = state_at(url)

    outcome = run_process(*(a.replace(b"{db}", str(db).encode()) for a in argv), cwd=processes)

    assert outcome.code == 2, outcome
    assert "Traceback" not in outcome.err
    assert_one_error_line(outcome)
    assert state_at(url) == before


def test_a_real_process_reads_and_writes_text_that_is_not_ascii(processes: Path) -> None:
    db = processes / "state.db"
    seed(f"sqlite:///{db}")

    recorded = run_process(
        "record",
        "goal_changed",
        "agent:main:Канал",
        "--summary",
        "目標 更新",
        "--json",
        "--db",
        str(db),
        cwd=processes,
    )
    status = run_process(
        "status", "agent:main:Канал", "--since", "0", "--json", "--db", str(db), cwd=processes
    )

    assert (recorded.code, recorded.err) == (0, "")
    assert json.loads(recorded.out)["summary"] == "目標 更新"
    assert (status.code, status.err) == (0, "")
    assert [e["summary"] for e in json.loads(status.out)["stateChanges"]["events"]] == ["目標 更新"]


# ------------------------------------------------------- large integers and imports (typed refusals)


@pytest.mark.parametrize(
    "argv",
    [["status", CHILD, "--since", str(2**63)], ["prune", "--max-signals", str(2**63)]],
)
def test_integers_beyond_the_sql_range_are_never_an_internal_error(cli: Cli, argv: list[str]) -> None:
    outcome = cli.well_formed(*argv, "--db", cli.url)
    assert outcome.code in (0, 2)


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("summary", "first line\nsecond line of a message"),
        ("summary", "x" * 5000),
        ("session_key", "agent:main:child\x00"),
        ("agent_id", "main:x"),
        ("dedupe_key", "dedupe\x1b[2J"),
        ("sequence", 2**63 - 1),
    ],
)
def test_import_openclaw_refuses_rows_the_strict_api_refuses(
    cli: Cli, tmp_path: Path, column: str, value: object
) -> None:
    row: list[object] = list(ROW)
    row[COLUMNS.index(column)] = value
    build_reference(tmp_path / "reference.db", tuple(row))
    target = f"sqlite:///{tmp_path / 'imported.db'}"

    outcome = cli.run("import-openclaw", str(tmp_path / "reference.db"), "--db", target)

    assert outcome.code == 2, outcome
    assert_one_error_line(outcome)


@pytest.mark.parametrize(
    "payload", ['{"status": "' + "x" * 5000 + '"}', '{"status": 3}', '{"status": "two\\nlines"}']
)
def test_import_openclaw_drops_a_payload_value_the_strict_api_refuses_and_keeps_the_row(
    cli: Cli, tmp_path: Path, payload: str
) -> None:
    row: list[object] = list(ROW)
    row[COLUMNS.index("payload_json")] = payload
    build_reference(tmp_path / "reference.db", tuple(row))
    target = f"sqlite:///{tmp_path / 'imported.db'}"

    outcome = cli.run("import-openclaw", str(tmp_path / "reference.db"), "--db", target, "--json")

    assert outcome.code == 0, outcome
    report = json.loads(outcome.out)
    assert (report["signals"], report["payloadValuesDropped"]) == (1, 1)


@pytest.mark.parametrize("summary", ["goal\\nupdated: the text of a message", "x" * 5000])
def test_import_refuses_a_history_whose_signals_the_strict_api_refuses(
    cli: Cli, tmp_path: Path, summary: str
) -> None:
    source = tmp_path / "history.jsonl"
    source.write_text(export_of(cli).replace("goal updated", summary), encoding="utf-8")

    outcome = cli.run("import", str(source), "--db", f"sqlite:///{tmp_path / 'imported.db'}")

    assert outcome.code == 2, outcome
    assert_one_error_line(outcome)
