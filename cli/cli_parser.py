"""The `sessionwatch` parser: the global options and the sub-commands, on the standard library alone.

The top-level parser lists every sub-command by its one-line help and makes nothing else: a
sub-command's parser is made and filled (`cli_arguments`: its description, options and handler)
when the command line names it (`command_parser`), so `sessionwatch --help` costs argparse and this
module only, and a command loads only its own part. `full_parser` fills every sub-command (the
reference page and the tests read them all). Building loads no model, no store and no command's
code: each sub-command names its handler in a module that imports what it uses when it runs
(ADR-0067, ADR-0071).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

from sessionwatch.cli.cli_codes import PROG

_FALLBACK_COLUMNS = 80
TYPE_CHECKING = False  # `typing` costs much of `--help`'s own time: type checkers read the block below
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, NoReturn

DB_HELP = (
    "the store: memory:// (in this process only, gone when it ends); sqlite:///relative.db or "
    "sqlite:////absolute/path.db, or a plain file path (a SQLite file); add ?synchronous=full to a "
    "SQLite URL to make every commit durable on power loss; postgresql://USER@HOST:5432/DB "
    "(needs the postgres extra, which brings psycopg). Default: $SESSIONWATCH_URL, else ./sessionwatch.db"
)

EXIT_CODES = (
    "exit codes: 0 success; 1 the answer is no (watch refused; demo read models differ), printed on "
    "stdout; 2 bad usage, bad input or an unusable store, one line on stderr; 3 internal error, one "
    "line on stderr"
)


@functools.cache
def _width() -> int:
    """The help's width as argparse computes it, asked once: the terminal's columns less 2.

    The columns as `shutil.get_terminal_size` gives them ($COLUMNS when a positive integer, else
    standard output's terminal, else 80), without importing `shutil`, which costs more than the
    rest of the top-level help (a test holds the two to one answer).
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or _FALLBACK_COLUMNS  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = _FALLBACK_COLUMNS
    return columns - 2


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage over several lines and exiting.

    An error about one option starts with that option, as every other option error does
    (`--transport: invalid choice: ...`, not `argument --transport: ...`).
    """

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every option it adds (to check its metavar), each asking the
        # terminal's size: asked once here, the width argparse itself computes.
        make: Callable[..., argparse.HelpFormatter] = self.formatter_class  # every formatter takes a width
        return make(prog=self.prog, width=_width())

    def error(self, message: str) -> NoReturn:
        import re  # noqa: PLC0415 - only on the way out

        from sessionwatch.cli.cli_text import CliError  # noqa: PLC0415 - only on the way out

        about_one = re.fullmatch(r"argument ([^\s:]+): (.*)", message, flags=re.DOTALL)
        raise CliError(f"{about_one[1]}: {about_one[2]}" if about_one else message)


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg] # noqa: SLF001 - argparse's own class
    """Sub-commands listed by their one-line help; each one's parser is made when it is chosen.

    `add` lists a sub-command by its name and help (all the top-level help prints, and all a choice
    is checked against); parsing a command line makes the parser of the one it names, as
    `add_parser(name, allow_abbrev=False)` would have, and `cli_arguments.fill` fills it.
    Making a parser costs more than the rest of the top-level help, so the help makes none.
    """

    main: Callable[[list[str]], int]
    """What runs a command line again (`claude-code mcp` does), given to every fill."""

    def add(self, name: str, *, help: str) -> None:
        """A sub-command: listed now; its parser made and filled when chosen."""
        self._name_parser_map[name] = None
        self._choices_actions.append(self._ChoicesPseudoAction(name, (), help))

    def fill(self, name: str) -> None:
        """Make and fill sub-command `name`'s parser (once)."""
        if self._name_parser_map.get(name) is None:
            from sessionwatch.cli import cli_arguments  # noqa: PLC0415 - once a command is chosen

            parser = self._parser_class(prog=f"{self._prog_prefix} {name}", allow_abbrev=False)
            self._name_parser_map[name] = parser
            cli_arguments.fill(name, parser, self.main)

    def fill_every(self) -> None:
        """Make and fill the parser of every sub-command."""
        for name in list(self._name_parser_map):
            self.fill(name)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        if isinstance(values, list) and values:  # argparse checked the name before calling
            self.fill(str(values[0]))
        super().__call__(parser, namespace, values, option_string)


class _Version(argparse._VersionAction):  # noqa: SLF001 - argparse's own class
    """argparse's `--version`, its line read from the installed metadata only when it is asked for."""

    @property
    def version(self) -> str:
        """The line `--version` prints."""
        from sessionwatch.adapters.version import installed_version  # noqa: PLC0415

        return f"{PROG} {installed_version()}"

    @version.setter
    def version(self, given: object) -> None:
        """Ignore the line argparse sets (none was given): the property makes it when asked."""


# ------------------------------------------------------------------------------------ the parser


def add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """`--db`, `--json` and `--notify-terminal-runs`, accepted before and after the subcommand.

    The subcommand copies default to SUPPRESS so they only override what was given before it.
    """
    db_default: object = argparse.SUPPRESS if suppress else None
    json_default: object = argparse.SUPPRESS if suppress else False
    parser.add_argument(
        "--db",
        metavar="URL",
        default=db_default,
        help=DB_HELP,
    )
    parser.add_argument("--json", action="store_true", default=json_default, help="print JSON")
    parser.add_argument(
        "--notify-terminal-runs",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="open the store with run_completed and run_failed notifying watchers, as the host that "
        "writes it does: give it to every command that records, audits or imports such a store",
    )


def global_options() -> list[argparse.ArgumentParser]:
    """The global options as the parent of a host's sub-commands (`claude-code hook`)."""
    parent = _Parser(add_help=False, allow_abbrev=False)
    add_global_options(parent, suppress=True)
    return [parent]


def command_parser(main: Callable[[list[str]], int]) -> argparse.ArgumentParser:
    """The `sessionwatch` parser that fills only the sub-command a command line names.

    `main` runs a command line again (`claude-code mcp` does).
    """
    parser = _Parser(
        prog=PROG,
        description="Session state awareness for multi-agent gateways: a durable signal log per "
        "session, heads (stateVersion) and changesSince reconciliation.",
        allow_abbrev=False,
        epilog=EXIT_CODES,
    )
    add_global_options(parser, suppress=False)
    parser.add_argument("--version", action=_Version)
    parser.register("action", "parsers", _Commands)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    assert isinstance(commands, _Commands)  # noqa: S101 - registered just above
    commands.main = main
    for name, help_line in _COMMANDS:
        commands.add(name, help=help_line)
    return parser


def full_parser(main: Callable[[list[str]], int]) -> argparse.ArgumentParser:
    """The `sessionwatch` parser with every sub-command filled (the reference page, the tests)."""
    parser = command_parser(main)
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers here
        if isinstance(action, _Commands):
            action.fill_every()
    return parser


_COMMANDS: tuple[tuple[str, str], ...] = (
    ("demo", "play a multi-agent story against a real SQLite file"),
    ("status", "a session's stateVersion and, with --since, the changes after it"),
    ("list", "known sessions with their stateVersion"),
    ("record", "record one signal (strict: invalid input is refused, nothing is written)"),
    ("watch", "watch a session from its current head (exit 1: refused)"),
    ("unwatch", "stop watching a session"),
    ("watched", "the sessions WATCHER watches, with its cursor positions"),
    ("notices", "WATCHER's pending notices, without acknowledging them"),
    ("drain", "print WATCHER's pending notices and acknowledge them"),
    ("sweep", "the restart sweep: re-publish every open notice"),
    ("prune", "prune history to the retention window and cap now"),
    ("audit", "replay the history and check every read model and invariant"),
    ("export", "write the whole history as JSON Lines to stdout"),
    ("import", "load an exported history into a new, empty store"),
    ("import-openclaw", "load a reference-gateway state database into a new, empty store"),
    ("claude-code", "Claude Code: the prompt hook, the project install, the MCP server of a session"),
    ("codex", "Codex: the hook, the project install, the MCP server of a project's sessions"),
    ("mcp", "serve one session's tools and notices over MCP (stdio or Streamable HTTP)"),
)
"""Every sub-command in the order the help lists them, with its one-line help.

`cli_arguments.fill` fills its parser.
"""
