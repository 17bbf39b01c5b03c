"""The `sessionwatch` parser: every command, its options and its help, on the standard library alone.

The top-level parser lists every sub-command by its one-line help and builds nothing else: a
sub-command's options, description and handler are added when the command line names it
(`command_parser`), so `sessionwatch --help` costs argparse and this module only, and a command
loads only its own part. `full_parser` builds every sub-command (the reference page and the tests
read them all). Building loads no model, no store and no command's code: each sub-command names its
handler in a module that imports what it uses when it runs (ADR-0067, ADR-0071).
"""

from __future__ import annotations

import argparse
import functools

from sessionwatch.adapters.version import installed_version
from sessionwatch.cli.cli_codes import DEMO_PATH, PROG, StoreUse

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
WATCHER_RULE = (
    " A WATCHER that is not agent-qualified can never be notified, and one the store knows nothing "
    "of (no session, no cursor) is an unknown session, as status says of an unknown KEY: both are "
    "bad input (exit 2)."
)


@functools.cache
def _width() -> int:
    """The help's width as argparse computes it (the terminal's, or $COLUMNS, less 2), asked once."""
    import shutil  # noqa: PLC0415 - only once a help or an error is formatted

    return shutil.get_terminal_size().columns - 2


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
    """Sub-commands listed by their one-line help; each one's options are added when it is chosen.

    `add` makes a sub-command's parser with its name and help only (all the top-level help prints)
    and keeps the function that adds the rest; parsing a command line fills the one it names.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._fills: dict[str, Callable[[_Parser], None]] = {}

    def add(self, name: str, fill: Callable[[_Parser], None], *, help: str) -> None:
        """A sub-command: listed now, its options, description and handler added by `fill` when chosen."""
        self._fills[name] = fill
        self.add_parser(name, allow_abbrev=False, help=help)

    def fill(self, name: str) -> None:
        """Add the rest of sub-command `name` (once)."""
        fill = self._fills.pop(name, None)
        if fill is not None:
            fill(self.choices[name])

    def fill_every(self) -> None:
        """Add the rest of every sub-command."""
        for name in list(self._fills):
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


# ------------------------------------------------------------------------------------ the parser


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
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


def _global_options() -> list[argparse.ArgumentParser]:
    """The global options as the parent of a host's sub-commands (`claude-code hook`)."""
    parent = _Parser(add_help=False, allow_abbrev=False)
    _add_global_options(parent, suppress=True)
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
    _add_global_options(parser, suppress=False)
    parser.add_argument("--version", action="version", version=f"{PROG} {installed_version()}")
    parser.register("action", "parsers", _Commands)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    assert isinstance(commands, _Commands)  # noqa: S101 - registered just above
    for name, help_line, fill in _COMMANDS:
        commands.add(name, functools.partial(fill, main=main), help=help_line)
    return parser


def full_parser(main: Callable[[list[str]], int]) -> argparse.ArgumentParser:
    """The `sessionwatch` parser with every sub-command filled (the reference page, the tests)."""
    parser = command_parser(main)
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers here
        if isinstance(action, _Commands):
            action.fill_every()
    return parser


def _command(
    command: _Parser,
    handler: str,
    *,
    description: str,
    epilog: str | None = None,
    store: StoreUse = StoreUse.READ,
) -> None:
    """Fill one sub-command: its description, the global options, and the handler that runs it.

    `handler` names a function of `cli_commands`; `store` says whether the command reads an existing
    store only or may start a new one.
    """
    from sessionwatch.cli import cli_commands  # noqa: PLC0415 - once a command is chosen

    command.description = description
    command.epilog = epilog
    _add_global_options(command, suppress=True)
    command.set_defaults(handler=getattr(cli_commands, handler), store_use=store)


def _demo(command: _Parser, *, main: object) -> None:  # noqa: ARG001 - every fill is given `main`
    _command(
        command,
        "demo_command",
        description="Play a manager / two children / human story against a real SQLite file, restart "
        "it, and reconcile. Without --db the story runs on ./"
        f"{DEMO_PATH}, which is deleted and recreated on every run (never your ./sessionwatch.db "
        "nor $SESSIONWATCH_URL). With --db URL it runs on that SQLite store and keeps it; every run "
        "uses fresh child session keys, so re-running on the same file always works.",
        store=StoreUse.DEMO,
    )
    command.add_argument(
        "--verbose", action="store_true", help="also print every step's full JSON (reconciliations, history)"
    )


def _status(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "status_command",
        description="A session's head (stateVersion) and, with --since N, every change after sequence "
        "N: what a watcher reads to reconcile after a notice.",
    )
    command.add_argument("key", metavar="KEY", help="session key, e.g. agent:main:subagent:child")
    command.add_argument("--since", metavar="N", help="changesSince: an integer >= 0")
    command.add_argument("--agent", metavar="ID", help="agent id (required for bare keys such as global)")
    command.add_argument(
        "--limit", metavar="N", default="200", help="page size: at least 1; more than 200 is read as 200"
    )
    command.add_argument(
        "--as-of",
        metavar="SEQUENCE",
        help="the status right after this sequence (at most the store's highest sequence), from the "
        "event store, and from --archive before the session's prune watermark",
    )
    command.add_argument("--archive", metavar="PATH", help="the prune archive (JSON Lines), for --as-of")


def _list(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "list_command",
        description="Every known session with its agent, kind and stateVersion (shown once above 0). The "
        "kind is the one the session tools and the MCP server list: the kind the host registered, else "
        "derived from the key (main, group, cron, hook, node, other; a sub-agent is other).",
    )
    command.add_argument("--agent", metavar="ID", help="only this agent's sessions")


def _record(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    from sessionwatch.domain.kinds import SignalKind  # noqa: PLC0415 - its help lists the kinds

    _command(
        command,
        "record_command",
        description="Record one signal exactly as given: no gate (it is recorded even when nobody "
        "watches the session) and no actor filter. Invalid input is refused and nothing is written.",
        store=StoreUse.CREATE,
    )
    command.add_argument("kind", metavar="KIND", help=", ".join(k.value for k in SignalKind))
    command.add_argument("key", metavar="KEY", help="session key")
    command.add_argument("--summary", required=True, metavar="S", help="one short line, never message text")
    command.add_argument(
        "--actor",
        default="human",
        metavar="ACTOR",
        help="human, system or agent:KEY, KEY being the acting session's key "
        "(agent:agent:main:main); default human",
    )
    command.add_argument("--payload", metavar="JSON", help='metadata JSON object, e.g. {"outcome": "error"}')
    command.add_argument(
        "--dedupe-key",
        metavar="K",
        help="global dedupe key: when a retained signal already has it, nothing is recorded and the "
        "answer says duplicate and names that signal (exit 0: a retry is harmless)",
    )
    command.add_argument("--agent", metavar="ID", help="agent id (required for bare keys)")
    command.add_argument("--run-id", metavar="R", help="run id")
    command.add_argument(
        "--watcher",
        dest="watchers",
        action="append",
        metavar="KEY",
        help="producer watcher (repeatable): a notifying signal also reaches this session, creating "
        "its cursor at changesSince 0 if it has none; keys that are not agent-qualified are never "
        "notified",
    )


def _target_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("watcher", metavar="WATCHER", help="the watching session, agent:<id>:<rest>")
    command.add_argument("target", metavar="TARGET", help="the watched session's key")
    command.add_argument("--agent", metavar="ID", help="the target's agent id (required for bare targets)")


def _watch(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "watch_command",
        description="Register WATCHER's cursor on TARGET at the target's current head: "
        "history before it never produces a notice. Watching an already watched target succeeds and "
        "leaves the cursor (and any pending notice) untouched. The answer is printed on stdout: "
        "'watching: ...' (exit 0), or 'refused: <reason>' (exit 1, nothing written) when WATCHER is "
        "not agent-qualified (such sessions are never notified) or is TARGET itself. "
        "With --ambient the watch is ambient: its notices are queued, never woken; watching it again "
        "without --ambient promotes it to an explicit watch, keeping its positions. "
        "Malformed keys, or a bare TARGET without --agent, are bad input (exit 2).",
        epilog=EXIT_CODES,
        store=StoreUse.CREATE,
    )
    _target_arguments(command)
    command.add_argument(
        "--ambient",
        action="store_true",
        help="an ambient watch: its notices are queued for the next drain and never wake WATCHER",
    )


def _unwatch(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "unwatch_command",
        description="Remove WATCHER's cursor on TARGET, with its pending notice. Exit 0 "
        "whether or not there was one to remove: the output says which. A WATCHER that is not "
        "agent-qualified holds no cursor ever: bad input (exit 2).",
    )
    _target_arguments(command)


def _watched(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "watched_command",
        description="One line per session WATCHER watches, in target order: the target, its agent, "
        "the cursor's last seen, notified and material sequences, and whether a notice is pending "
        "(with --json, a list of cursor objects with a pending flag; 'watches no session' when there "
        "are none). With --prompt, the bounded block a host puts in WATCHER's system prompt instead: "
        "the sessions it watches (at most 20, within 2,000 characters), that its session tools can read "
        "them, and how to reconcile; nothing when it watches none. Reading moves no cursor." + WATCHER_RULE,
    )
    command.add_argument("watcher", metavar="WATCHER", help="the watching session, agent:<id>:<rest>")
    command.add_argument(
        "--prompt", action="store_true", help="print the system-prompt block instead of the cursors"
    )


def _notices(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "notices_command",
        description="One notice line per changed target, nothing when none is pending "
        "(with --json, a list of objects: target, targetAgentId, lastSeen, text). Reading never "
        "acknowledges: use drain for that." + WATCHER_RULE,
    )
    command.add_argument("watcher", metavar="WATCHER", help="the watching session")


def _drain(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "drain_command",
        description="Print the pending notices like `notices`, and acknowledge each: the watcher "
        "has now seen what its notice announced, not more, so a change that arrived after the notice "
        "was written leaves exactly one follow-up notice for the next drain." + WATCHER_RULE,
    )
    command.add_argument("watcher", metavar="WATCHER", help="the watching session")


def _sweep(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "sweep_command",
        description="The restart sweep that opening a store runs: every watch with changes its "
        "watcher has not seen yet gets its notice published again, covering every change so far. "
        "Prints the report and one 'wake WATCHER (REASON)' line per wake request (this command has "
        "no host heartbeat to deliver them; subagent watchers are never woken). Cursors whose "
        "watcher session is unknown (never registered, or deleted) are skipped.",
    )


def _prune(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "prune_command",
        description="Prune now, whatever the hourly throttle: signals older than --days, "
        "then all but the newest --max-signals globally; each affected session's prune watermark is "
        "stamped (heads never go down); cursors idle for --days expire; the event store drops what a "
        "replay no longer needs. --archive appends every pruned signal to a JSON Lines file first, and "
        "creates it (empty) when nothing was pruned, so the next command can always read it.",
    )
    command.add_argument("--days", default="30", help="the age window in days (default 30)")
    command.add_argument("--max-signals", default="50000", help="the global cap (default 50000)")
    command.add_argument("--archive", default=None, metavar="PATH", help="JSON Lines file for pruned signals")


def _audit(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "audit_command",
        description="Replay the whole event store (from the newest prune checkpoint), rebuild every "
        "read model, diff it with the stored one and check the invariants: heads "
        "monotonic and at least every retained sequence, watermarks not above heads, L <= N <= M, "
        "no pending notice for a self-caused or log-only signal, no message text. Exits 1 listing "
        "every violation, grouped by kind with the session keys involved. Shows progress on stderr "
        "when it is a terminal (with the cli extra, which brings rich).",
    )


def _export(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "export_command",
        description="The event history as JSON Lines (a header, then one stored event per line with "
        "its stream, version, stored name and payload, then a trailer with the event count and the "
        "sha256 digest of every byte before it), for archives and for moving between stores: "
        "`sessionwatch export --db A > history.jsonl`, then `sessionwatch import history.jsonl --db B`. "
        "Progress goes to stderr only when it is a terminal; the output is the same bytes either way.",
    )


def _import(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "import_command",
        description="Load a history written by `export` into the store named by --db, which must be "
        "empty. The file's trailer is checked before the store is opened: a file without it (cut), "
        "or whose event count or digest differs (changed), is refused and creates nothing. Every "
        "line is checked too; on any problem nothing is written and the error names the line. A "
        "file of sessionwatch 0.1.0 (version 1, no trailer) imports with a warning.",
        store=StoreUse.CREATE,
    )
    command.add_argument("file", metavar="FILE", help="the JSON Lines file `export` wrote")


def _import_openclaw(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    _command(
        command,
        "import_openclaw_command",
        description="Read a reference-gateway state database (session_state_events, "
        "session_state_heads, session_watch_cursors) into the store named by --db, "
        "preserving sequences, heads, prune watermarks and cursor positions, then audit it with "
        "`sessionwatch audit`. Cursors whose bare target key matches no head, or several, are "
        "reported and skipped.",
        store=StoreUse.CREATE,
    )
    command.add_argument("path", metavar="PATH", help="the reference gateway's SQLite state file")


def _claude_code(command: _Parser, *, main: Callable[[list[str]], int]) -> None:
    from sessionwatch.cli.cli_claude_code import fill_commands  # noqa: PLC0415 - once it is chosen

    fill_commands(command, _global_options(), main)


def _codex(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    from sessionwatch.cli.cli_codex import fill_commands  # noqa: PLC0415 - once it is chosen

    fill_commands(command, _global_options())


def _mcp(command: _Parser, *, main: object) -> None:  # noqa: ARG001
    from sessionwatch.cli.cli_mcp import fill_mcp  # noqa: PLC0415 - once it is chosen

    _add_global_options(command, suppress=True)
    fill_mcp(command)


_COMMANDS: tuple[tuple[str, str, Callable[..., None]], ...] = (
    ("demo", "play a multi-agent story against a real SQLite file", _demo),
    ("status", "a session's stateVersion and, with --since, the changes after it", _status),
    ("list", "known sessions with their stateVersion", _list),
    ("record", "record one signal (strict: invalid input is refused, nothing is written)", _record),
    ("watch", "watch a session from its current head (exit 1: refused)", _watch),
    ("unwatch", "stop watching a session", _unwatch),
    ("watched", "the sessions WATCHER watches, with its cursor positions", _watched),
    ("notices", "WATCHER's pending notices, without acknowledging them", _notices),
    ("drain", "print WATCHER's pending notices and acknowledge them", _drain),
    ("sweep", "the restart sweep: re-publish every open notice", _sweep),
    ("prune", "prune history to the retention window and cap now", _prune),
    ("audit", "replay the history and check every read model and invariant", _audit),
    ("export", "write the whole history as JSON Lines to stdout", _export),
    ("import", "load an exported history into a new, empty store", _import),
    ("import-openclaw", "load a reference-gateway state database into a new, empty store", _import_openclaw),
    (
        "claude-code",
        "Claude Code: the prompt hook, the project install, the MCP server of a session",
        _claude_code,
    ),
    ("codex", "Codex: the hook, the project install, the MCP server of a project's sessions", _codex),
    ("mcp", "serve one session's tools and notices over MCP (stdio or Streamable HTTP)", _mcp),
)
"""Every sub-command in the order the help lists them: its name, its one-line help, and its fill."""
