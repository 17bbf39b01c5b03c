"""Running the CLI in the test's own process: its exit code and what it printed."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sessionwatch.cli.cli import main


@dataclass(frozen=True)
class Outcome:
    """What one CLI run gave: the exit code, stdout and stderr."""

    code: int
    out: str
    err: str


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    """`sessionwatch ARGV...` through `main`, its output captured."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)
