"""Progress on stderr for the long commands: drawn with `rich` when stderr is a terminal, else nothing.

Shell code only. `rich` comes with the `cli` extra and is imported only when a terminal will show
the display, so the command line works (without progress) when it is not installed, and pipes,
files and tests see a clean stderr. The display never takes over stdout or stderr: what a command
writes goes where it was sent (`export > file` fills the file). A command hands the `Count` it gets
(`progress(done)`, the shape `audit(progress=...)` takes) to whatever does the long work, which
calls it once per thousand items, not per item.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO

Count = Callable[[int], None]
"""Told how many items are done so far (a running total, never a delta)."""

_EVERY = 1_000
"""`counted` reports once per this many items: the display redraws a few times a second anyway."""


def _nothing(done: int) -> None:
    del done


def showing() -> bool:
    """True when progress would be drawn: stderr is a terminal and `rich` is installed."""
    if not sys.stderr.isatty():
        return False
    try:
        import rich  # noqa: F401, PLC0415 - the optional `cli` extra, imported only for a terminal
    except ImportError:
        return False
    return True


@contextmanager
def progress(label: str, unit: str | None = None, *, output: TextIO | None = None) -> Iterator[Count]:
    """A progress line `label: N unit` with a spinner and the elapsed time, gone when the block ends.

    Without `unit` the line shows that the work goes on (`label: working`), with no count. `output`
    is where the command writes while the line is shown: when that is a terminal too, nothing is
    drawn (the output itself shows the progress, and a display would be drawn across it).
    """
    if not showing() or (output is not None and output.isatty()):
        yield _nothing
        return
    from rich.console import Console  # noqa: PLC0415 - optional, see `showing`
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    console = Console(file=sys.stderr, force_terminal=True)  # `showing` found the terminal already
    done = TextColumn("working" if unit is None else "{task.completed:,.0f} " + unit)
    columns = (SpinnerColumn(), TextColumn(f"{label}:"), done, TimeElapsedColumn())
    # No redirection: rich would otherwise route every write to sys.stdout through the display.
    with Progress(
        *columns, console=console, transient=True, redirect_stdout=False, redirect_stderr=False
    ) as display:
        task = display.add_task(label, total=None)

        def count(done: int) -> None:
            display.update(task, completed=done)

        yield count


def counted(items: Iterable[str], count: Count) -> Iterator[str]:
    """`items` unchanged, telling `count` how many went by (every thousand, and at the end)."""
    done = 0
    for item in items:
        yield item
        done += 1
        if done % _EVERY == 0:
            count(done)
    count(done)
