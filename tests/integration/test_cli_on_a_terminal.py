"""The long commands run with stderr on a real pseudo-terminal: their output goes where it was sent.

Each command runs as a separate process whose stderr is the slave side of a pty (so `isatty()` is
true and `rich` draws its progress there) and whose stdout is a file. What lands in the file must be
byte for byte what the same command writes with no terminal at all; the progress goes to the
terminal only. This is the path a user takes with `sessionwatch export > history.jsonl`.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from stores import fresh_store_url, needs_postgres

import sessionwatch
from sessionwatch import Actor

WORKER = "agent:main:worker"
MANAGER = "agent:main:main"
SIGNALS = 3_000


@dataclass(frozen=True)
class Run:
    """One command run: its exit code, its stdout (a file's bytes) and what its stderr received."""

    code: int
    out: bytes
    err: bytes


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"SESSIONWATCH_URL", "NO_COLOR", "TERM"}}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "100"}


def run(argv: list[str], folder: Path, *, terminal: bool, both: bool = False) -> Run:
    """`python -m sessionwatch ARGV` with stdout to a file and stderr on a pty (or on a pipe).

    With `both`, stdout is on the pty too (`out` is then empty and `err` holds all the pty showed).
    """
    out_path = folder / f"out-{len(list(folder.glob('out-*')))}.bin"
    command = [sys.executable, "-m", "sessionwatch", *argv]
    with out_path.open("wb") as out:
        if not terminal:
            done = subprocess.run(
                command,
                stdout=out,
                stderr=subprocess.PIPE,
                cwd=folder,
                env=_environment(),
                check=False,
                timeout=300,
            )
            return Run(done.returncode, out_path.read_bytes(), done.stderr)
        master, slave = pty.openpty()
        drawn = bytearray()

        def drain() -> None:  # a full pty would block the command: read it as it writes
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every slave descriptor is closed
                    return
                if not chunk:
                    return
                drawn.extend(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            process = subprocess.Popen(
                command,
                stdout=slave if both else out,
                stderr=slave,
                stdin=subprocess.DEVNULL,
                cwd=folder,
                env=_environment(),
            )
            os.close(slave)
            code = process.wait(timeout=300)
            reader.join(timeout=30)
        finally:
            os.close(master)
    return Run(code, out_path.read_bytes(), bytes(drawn))


def seed(url: str) -> None:
    with sessionwatch.open(url, sweep_on_open=False) as watch:
        watch.watch(MANAGER, WORKER)
        for n in range(SIGNALS):
            watch.record(WORKER, kind="goal_changed", actor=Actor.system(), summary=f"goal {n}")


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgres", marks=needs_postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_store_url(str(request.param), tmp_path) as url:
        seed(url)
        yield url


def test_export_with_stderr_on_a_terminal_writes_the_same_bytes_to_its_output(
    store: str, tmp_path: Path
) -> None:
    plain = run(["export", "--db", store], tmp_path, terminal=False)
    shown = run(["export", "--db", store], tmp_path, terminal=True)

    assert (plain.code, plain.err) == (0, b"")
    assert plain.out.count(b"\n") > SIGNALS  # the header, every stored event, the trailer
    assert shown.code == 0
    assert b"export:" in shown.err, "the progress was drawn on the terminal"
    assert shown.out == plain.out, "the history went to the output, byte for byte, not to the terminal"
    assert b'"format":"sessionwatch.history"' not in shown.err


def test_every_long_command_keeps_its_output_off_the_terminal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)
    history = run(["export", "--db", url], tmp_path, terminal=False).out
    (tmp_path / "history.jsonl").write_bytes(history)
    commands = {
        "audit": (["audit", "--db", url], b"audit: ok"),
        "import": (["import", "history.jsonl", "--db", "copy.db"], b"imported "),
        "prune": (
            ["prune", "--db", url, "--max-signals", "100", "--archive", "pruned.jsonl"],
            b"prune: removed",
        ),
    }
    for name, (argv, first_words) in commands.items():
        shown = run(argv, tmp_path, terminal=True)
        assert shown.code == 0, (name, shown)
        assert f"{name}:".encode() in shown.err, f"{name}: the progress was drawn on the terminal"
        assert shown.out.startswith(first_words), (name, shown.out)
        assert first_words not in shown.err, f"{name}: its answer went to the terminal"


def test_export_onto_the_terminal_itself_draws_no_progress_across_the_history(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    seed(url)
    plain = run(["export", "--db", url], tmp_path, terminal=False)
    shown = run(["export", "--db", url], tmp_path, terminal=True, both=True)
    assert shown.code == 0
    assert shown.err.replace(b"\r\n", b"\n") == plain.out, "the history alone, as the terminal shows lines"
