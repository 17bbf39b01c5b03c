"""The `sessionwatch` command line: dispatch, exit codes, and the last line of defence.

A thin shell over `SessionWatch`: every rule lives in the core. Exit codes (`cli_parser.EXIT_CODES`):
0 success; 1 the command ran and its answer is "no" (a refused `watch`, the demo's rebuilt read
models differing; audit violations); 2 bad usage, bad input or an unusable store; 3 an unexpected
internal error. Every failure (2, 3) prints exactly one line on stderr and nothing on stdout; no
traceback escapes. A "no" answer (1) is an answer, not an error: it is printed on stdout
(`refused: <reason>`).

Importing this module loads nothing but the standard library's smallest parts: a command line in
`ROUTES` runs its function with no parser built (`--version`, the Claude Code hook's front end, and
the SQL twin of `status` and `notices` on a SQLite store, `cli_read`); any other builds the parser
(`cli_parser`, which makes only the sub-command the command line names) and runs the command, which
imports what it uses when it runs (ADR-0067, ADR-0071; tests/architecture/test_cli_imports.py).
"""

from __future__ import annotations

import importlib
import os
import sys

from sessionwatch.cli.cli_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
)

TYPE_CHECKING = False  # `typing` costs more than the rest of a route: type checkers read the block below
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import NoReturn


ROUTES: dict[tuple[str, ...], str] = {
    ("--version",): "sessionwatch.cli.cli:version_command",
    ("claude-code", "hook"): "sessionwatch.cli.cli:claude_code_hook",
    ("status",): "sessionwatch.cli.cli_read:status",
    ("notices",): "sessionwatch.cli.cli_read:notices",
}
"""Command lines run before any parser is built: an argument prefix -> `module:function`.

The function takes the arguments after the prefix and returns the exit code; it runs inside the
same last line of defence as every command (one line on stderr, never a traceback). A command line
that needs nothing argparse gives (the version line, a hook's fast path) costs no parser and no
import but its own module's.
"""

_INPUT_ERRORS = (
    ("sessionwatch.cli.cli_text", "CliError"),
    ("sessionwatch.domain.errors", "InvalidSignal"),
    ("sessionwatch.domain.errors", "InvalidQuery"),
    ("sessionwatch.domain.errors", "UnknownSession"),
    ("sessionwatch.adapters.stores.urls", "InvalidStoreUrl"),
    ("sessionwatch.adapters.stores.port", "StoreError"),
    ("sessionwatch.adapters.history.reading", "HistoryError"),
)
"""The errors of bad input (exit 2, their message as the line), by module: an exception can only be an
instance of a class whose module is loaded, so telling them apart never imports one."""


def _loaded(module: str, name: str) -> type[BaseException] | None:
    found = sys.modules.get(module)
    return None if found is None else getattr(found, name, None)


def _is_input_error(exc: BaseException) -> bool:
    """Bad usage or input: one line on stderr, exit 2."""
    for module, name in _INPUT_ERRORS:
        error = _loaded(module, name)
        if error is not None and isinstance(exc, error):
            return True
    return False


def _fail(message: str) -> None:
    from sessionwatch.cli.cli_text import one_line  # noqa: PLC0415 - only on the way out

    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)


def version_command(rest: Sequence[str]) -> int:  # noqa: ARG001 - argparse ignores what follows --version too
    """`sessionwatch --version`, with no parser built: the line argparse's version action prints."""
    from sessionwatch.adapters.version import installed_version  # noqa: PLC0415

    print(f"{PROG} {installed_version()}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The full `sessionwatch` parser, every sub-command filled (`cli_parser`): the reference page's."""
    from sessionwatch.cli.cli_parser import full_parser  # noqa: PLC0415 - only when one is needed

    return full_parser(main)


def _route(target: str) -> Callable[[Sequence[str]], int]:
    """The function a `ROUTES` entry names, imported now."""
    module, _, name = target.partition(":")
    function: Callable[[Sequence[str]], int] = getattr(importlib.import_module(module), name)
    return function


def _naming(exc: BaseException, args: argparse.Namespace) -> str | None:
    """A bad-input error's line, naming the option or argument that fixes it; None for any other error."""
    from sessionwatch.adapters.stores.urls import InvalidStoreUrl  # noqa: PLC0415
    from sessionwatch.cli.cli_text import (  # noqa: PLC0415 - the parser loaded it
        naming_the_flag,
        naming_the_source,
        naming_the_store,
    )
    from sessionwatch.domain.errors import InvalidQuery, InvalidSignal  # noqa: PLC0415

    if isinstance(exc, (InvalidSignal, InvalidQuery)):
        return naming_the_flag(exc, args)
    if isinstance(exc, InvalidStoreUrl):
        return naming_the_store(str(exc), args)
    history_error = _loaded("sessionwatch.adapters.history.reading", "HistoryError")
    if history_error is not None and isinstance(exc, history_error) and isinstance(exc, Exception):
        return naming_the_source(exc, args)
    return None


def _run(argv: Sequence[str] | None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    for prefix, target in ROUTES.items():
        if tuple(given[: len(prefix)]) == prefix:
            return _route(target)(given[len(prefix) :])
    return run_parsed(given)


def claude_code_hook(rest: Sequence[str]) -> int:
    """`claude-code hook [--db URL]`: the hook's front end (standard library only) before any parser.

    Claude Code runs it before every prompt; any other arguments (`--help`, a typo) go through the
    parser as every command line does.
    """
    from sessionwatch.integrations.claude_code_front import hook_db, run  # noqa: PLC0415

    command = ["claude-code", "hook", *rest]
    is_hook, db = hook_db(command)
    return run(db) if is_hook else run_parsed(command)


def run_parsed(argv: Sequence[str]) -> int:
    """Run a whole command line through the parser, whatever `ROUTES` says (a route's way back).

    A route that finds it has real work to do after all calls this with the whole command line
    (`["claude-code", "hook", *rest]`); it raises what a command raises, for the caller's last line
    of defence (`main`'s, when the route runs under `main`).
    """
    from sessionwatch.cli.cli_parser import command_parser  # noqa: PLC0415 - only when one is needed

    parser = command_parser(main)  # fills only the sub-command the command line names
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:  # --help prints and exits 0 through argparse
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    from sessionwatch.cli.cli_store import StoreGuard  # noqa: PLC0415 - once a command runs
    from sessionwatch.cli.cli_text import CliError  # noqa: PLC0415 - the parser loaded it

    handler: Callable[[argparse.Namespace], int] = args.handler
    guard = StoreGuard()
    try:
        guard = StoreGuard.check(args, args.store_use)
        code = handler(args)
    except BaseException as exc:
        guard.undo()
        message = _naming(exc, args)
        if message is None:
            raise
        raise CliError(message) from None
    if code != EXIT_OK:  # a "no" answer writes nothing either: a file it started goes away
        guard.undo()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script passes it to `sys.exit`).

    Run as the process (`argv` None), an interrupted command exits at once: its stores are closed
    by then, and an MCP client that stops its stdio server with SIGINT sends SIGTERM if the process
    is still there a tenth of a second later, less than the interpreter takes to unload the SDK.
    """
    code = _main(argv)
    if argv is None and code == EXIT_INTERRUPTED:
        exit_at_once(code)
    return code


def exit_at_once(code: int) -> NoReturn:
    """Flush what was printed, then end the process without the interpreter's own clean-up."""
    for stream in (sys.stdout, sys.stderr):
        try:  # not contextlib.suppress: `contextlib` is not loaded on a route's path
            stream.flush()
        except (OSError, ValueError):
            continue  # a closed stream has nothing left to flush
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    try:
        return _run(argv)
    except Exception as exc:  # noqa: BLE001 - bad input first (a StoreError is a RuntimeError), then the rest
        if not _is_input_error(exc):
            return _unexpected(exc)
        _fail(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _fail("interrupted")
        return EXIT_INTERRUPTED


def _unexpected(exc: Exception) -> int:
    """A failure that is not bad input: a closed pipe, a file named on the command line, or a bug."""
    if isinstance(exc, BrokenPipeError):
        # The reader went away (`sessionwatch list | head -1`): say nothing more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    if isinstance(exc, OSError):  # a file named on the command line: missing, a directory, a name too long
        _fail(str(exc))
        return EXIT_USAGE
    # the last line of defence: no traceback reaches the user
    _fail(f"internal error: {type(exc).__name__}: {exc}")
    return EXIT_INTERNAL
