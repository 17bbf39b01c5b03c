"""The `sessionwatch` parser: every command, its options and its help, on the standard library alone.

Building it loads no model, no store and no command's code: each sub-command names its handler in
a module that imports what it uses when it runs (ADR-0067), so `--help` costs the parser only.
"""

from __future__ import annotations

import argparse
import functools
import re
import shutil
from collections.abc import Callable
from typing import NoReturn

from sessionwatch.adapters.version import installed_version
from sessionwatch.cli import cli_claude_code, cli_codex
from sessionwatch.cli import cli_commands as run
from sessionwatch.cli.cli_codes import DEMO_PATH, StoreUse
from sessionwatch.cli.cli_mcp import mcp_commands
from sessionwatch.cli.cli_text import PROG, CliError
from sessionwatch.domain.kinds import SignalKind

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
        about_one = re.fullmatch(r"argument ([^\s:]+): (.*)", message, flags=re.DOTALL)
        raise CliError(f"{about_one[1]}: {about_one[2]}" if about_one else message)


# ------------------------------------------------------------------------------------ the parser


def _global_options(*, suppress: bool) -> _Parser:
    """`--db`, `--json` and `--notify-terminal-runs`, accepted before and after the subcommand.

    The subcommand copies default to SUPPRESS so they only override what was given before it.
    """
    parent = _Parser(add_help=False, allow_abbrev=False)
    db_default: object = argparse.SUPPRESS if suppress else None
    json_default: object = argparse.SUPPRESS if suppress else False
    parent.add_argument(
        "--db",
        metavar="URL",
        default=db_default,
        help=DB_HELP,
    )
    parent.add_argument("--json", action="store_true", default=json_default, help="print JSON")
    parent.add_argument(
        "--notify-terminal-runs",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="open the store with run_completed and run_failed notifying watchers, as the host that "
        "writes it does: give it to every command that records, audits or imports such a store",
    )
    return parent


def full_parser(main: Callable[[list[str]], int]) -> argparse.ArgumentParser:
    """The full `sessionwatch` parser; `main` runs a command line again (`claude-code mcp` does)."""
    parser = _Parser(
        prog=PROG,
        description="Session state awareness for multi-agent gateways: a durable signal log per "
        "session, heads (stateVersion) and changesSince reconciliation.",
        parents=[_global_options(suppress=False)],
        allow_abbrev=False,
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {installed_version()}")
    common = [_global_options(suppress=True)]
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = _command(
        commands,
        common,
        "demo",
        run.demo_command,
        help="play a multi-agent story against a real SQLite file",
        description="Play a manager / two children / human story against a real SQLite file, restart "
        "it, and reconcile. Without --db the story runs on ./"
        f"{DEMO_PATH}, which is deleted and recreated on every run (never your ./sessionwatch.db "
        "nor $SESSIONWATCH_URL). With --db URL it runs on that SQLite store and keeps it; every run "
        "uses fresh child session keys, so re-running on the same file always works.",
        store=StoreUse.DEMO,
    )
    demo.add_argument(
        "--verbose", action="store_true", help="also print every step's full JSON (reconciliations, history)"
    )

    status = _command(
        commands,
        common,
        "status",
        run.status_command,
        help="a session's stateVersion and, with --since, the changes after it",
        description="A session's head (stateVersion) and, with --since N, every change after sequence "
        "N: what a watcher reads to reconcile after a notice.",
    )
    status.add_argument("key", metavar="KEY", help="session key, e.g. agent:main:subagent:child")
    status.add_argument("--since", metavar="N", help="changesSince: an integer >= 0")
    status.add_argument("--agent", metavar="ID", help="agent id (required for bare keys such as global)")
    status.add_argument(
        "--limit", metavar="N", default="200", help="page size: at least 1; more than 200 is read as 200"
    )
    status.add_argument(
        "--as-of",
        metavar="SEQUENCE",
        help="the status right after this sequence (at most the store's highest sequence), from the "
        "event store, and from --archive before the session's prune watermark",
    )
    status.add_argument("--archive", metavar="PATH", help="the prune archive (JSON Lines), for --as-of")

    listing = _command(
        commands,
        common,
        "list",
        run.list_command,
        help="known sessions with their stateVersion",
        description="Every known session with its agent, kind and stateVersion (shown once above 0). The "
        "kind is the one the session tools and the MCP server list: the kind the host registered, else "
        "derived from the key (main, group, cron, hook, node, other; a sub-agent is other).",
    )
    listing.add_argument("--agent", metavar="ID", help="only this agent's sessions")

    record = _command(
        commands,
        common,
        "record",
        run.record_command,
        help="record one signal (strict: invalid input is refused, nothing is written)",
        description="Record one signal exactly as given: no gate (it is recorded even when nobody "
        "watches the session) and no actor filter. Invalid input is refused and nothing is written.",
        store=StoreUse.CREATE,
    )
    record.add_argument("kind", metavar="KIND", help=", ".join(k.value for k in SignalKind))
    record.add_argument("key", metavar="KEY", help="session key")
    record.add_argument("--summary", required=True, metavar="S", help="one short line, never message text")
    record.add_argument(
        "--actor",
        default="human",
        metavar="ACTOR",
        help="human, system or agent:KEY, KEY being the acting session's key "
        "(agent:agent:main:main); default human",
    )
    record.add_argument("--payload", metavar="JSON", help='metadata JSON object, e.g. {"outcome": "error"}')
    record.add_argument(
        "--dedupe-key",
        metavar="K",
        help="global dedupe key: when a retained signal already has it, nothing is recorded and the "
        "answer says duplicate and names that signal (exit 0: a retry is harmless)",
    )
    record.add_argument("--agent", metavar="ID", help="agent id (required for bare keys)")
    record.add_argument("--run-id", metavar="R", help="run id")
    record.add_argument(
        "--watcher",
        dest="watchers",
        action="append",
        metavar="KEY",
        help="producer watcher (repeatable): a notifying signal also reaches this session, creating "
        "its cursor at changesSince 0 if it has none; keys that are not agent-qualified are never "
        "notified",
    )
    _watching_commands(commands, common)
    _history_commands(commands, common)
    cli_claude_code.add_commands(commands, common, main)
    cli_codex.add_commands(commands, common)
    mcp_commands(commands, common)
    return parser


def _command(
    commands: argparse._SubParsersAction[_Parser],
    common: list[_Parser],
    name: str,
    handler: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
    epilog: str | None = None,
    store: StoreUse = StoreUse.READ,
) -> _Parser:
    """One sub-command with the global options, no abbreviations, and the handler that runs it.

    `store` says whether it reads an existing store only or may start a new one.
    """
    command = commands.add_parser(
        name, parents=common, allow_abbrev=False, help=help, description=description, epilog=epilog
    )
    command.set_defaults(handler=handler, store_use=store)
    return command


def _target_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("watcher", metavar="WATCHER", help="the watching session, agent:<id>:<rest>")
    command.add_argument("target", metavar="TARGET", help="the watched session's key")
    command.add_argument("--agent", metavar="ID", help="the target's agent id (required for bare targets)")


def _watching_commands(commands: argparse._SubParsersAction[_Parser], common: list[_Parser]) -> None:
    """`watch`, `unwatch`, `watched`, `notices`, `drain` and `sweep`."""
    watch = _command(
        commands,
        common,
        "watch",
        run.watch_command,
        help="watch a session from its current head (exit 1: refused)",
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
    _target_arguments(watch)
    watch.add_argument(
        "--ambient",
        action="store_true",
        help="an ambient watch: its notices are queued for the next drain and never wake WATCHER",
    )

    unwatch = _command(
        commands,
        common,
        "unwatch",
        run.unwatch_command,
        help="stop watching a session",
        description="Remove WATCHER's cursor on TARGET, with its pending notice. Exit 0 "
        "whether or not there was one to remove: the output says which. A WATCHER that is not "
        "agent-qualified holds no cursor ever: bad input (exit 2).",
    )
    _target_arguments(unwatch)

    watched = _command(
        commands,
        common,
        "watched",
        run.watched_command,
        help="the sessions WATCHER watches, with its cursor positions",
        description="One line per session WATCHER watches, in target order: the target, its agent, "
        "the cursor's last seen, notified and material sequences, and whether a notice is pending "
        "(with --json, a list of cursor objects with a pending flag; 'watches no session' when there "
        "are none). With --prompt, the bounded block a host puts in WATCHER's system prompt instead: "
        "the sessions it watches (at most 20, within 2,000 characters), that its session tools can read "
        "them, and how to reconcile; nothing when it watches none. Reading moves no cursor." + WATCHER_RULE,
    )
    watched.add_argument("watcher", metavar="WATCHER", help="the watching session, agent:<id>:<rest>")
    watched.add_argument(
        "--prompt", action="store_true", help="print the system-prompt block instead of the cursors"
    )

    notices = _command(
        commands,
        common,
        "notices",
        run.notices_command,
        help="WATCHER's pending notices, without acknowledging them",
        description="One notice line per changed target, nothing when none is pending "
        "(with --json, a list of objects: target, targetAgentId, lastSeen, text). Reading never "
        "acknowledges: use drain for that." + WATCHER_RULE,
    )
    notices.add_argument("watcher", metavar="WATCHER", help="the watching session")

    drain = _command(
        commands,
        common,
        "drain",
        run.drain_command,
        help="print WATCHER's pending notices and acknowledge them",
        description="Print the pending notices like `notices`, and acknowledge each: the watcher "
        "has now seen what its notice announced, not more, so a change that arrived after the notice "
        "was written leaves exactly one follow-up notice for the next drain." + WATCHER_RULE,
    )
    drain.add_argument("watcher", metavar="WATCHER", help="the watching session")

    _command(
        commands,
        common,
        "sweep",
        run.sweep_command,
        help="the restart sweep: re-publish every open notice",
        description="The restart sweep that opening a store runs: every watch with changes its "
        "watcher has not seen yet gets its notice published again, covering every change so far. "
        "Prints the report and one 'wake WATCHER (REASON)' line per wake request (this command has "
        "no host heartbeat to deliver them; subagent watchers are never woken). Cursors whose "
        "watcher session is unknown (never registered, or deleted) are skipped.",
    )

    prune = _command(
        commands,
        common,
        "prune",
        run.prune_command,
        help="prune history to the retention window and cap now",
        description="Prune now, whatever the hourly throttle: signals older than --days, "
        "then all but the newest --max-signals globally; each affected session's prune watermark is "
        "stamped (heads never go down); cursors idle for --days expire; the event store drops what a "
        "replay no longer needs. --archive appends every pruned signal to a JSON Lines file first, and "
        "creates it (empty) when nothing was pruned, so the next command can always read it.",
    )
    prune.add_argument("--days", default="30", help="the age window in days (default 30)")
    prune.add_argument("--max-signals", default="50000", help="the global cap (default 50000)")
    prune.add_argument("--archive", default=None, metavar="PATH", help="JSON Lines file for pruned signals")


def _history_commands(commands: argparse._SubParsersAction[_Parser], common: list[_Parser]) -> None:
    _command(
        commands,
        common,
        "audit",
        run.audit_command,
        help="replay the history and check every read model and invariant",
        description="Replay the whole event store (from the newest prune checkpoint), rebuild every "
        "read model, diff it with the stored one and check the invariants: heads "
        "monotonic and at least every retained sequence, watermarks not above heads, L <= N <= M, "
        "no pending notice for a self-caused or log-only signal, no message text. Exits 1 listing "
        "every violation, grouped by kind with the session keys involved. Shows progress on stderr "
        "when it is a terminal (with the cli extra, which brings rich).",
    )

    _command(
        commands,
        common,
        "export",
        run.export_command,
        help="write the whole history as JSON Lines to stdout",
        description="The event history as JSON Lines (a header, then one stored event per line with "
        "its stream, version, stored name and payload, then a trailer with the event count and the "
        "sha256 digest of every byte before it), for archives and for moving between stores: "
        "`sessionwatch export --db A > history.jsonl`, then `sessionwatch import history.jsonl --db B`. "
        "Progress goes to stderr only when it is a terminal; the output is the same bytes either way.",
    )

    load = _command(
        commands,
        common,
        "import",
        run.import_command,
        help="load an exported history into a new, empty store",
        description="Load a history written by `export` into the store named by --db, which must be "
        "empty. The file's trailer is checked before the store is opened: a file without it (cut), "
        "or whose event count or digest differs (changed), is refused and creates nothing. Every "
        "line is checked too; on any problem nothing is written and the error names the line. A "
        "file of sessionwatch 0.1.0 (version 1, no trailer) imports with a warning.",
        store=StoreUse.CREATE,
    )
    load.add_argument("file", metavar="FILE", help="the JSON Lines file `export` wrote")

    openclaw = _command(
        commands,
        common,
        "import-openclaw",
        run.import_openclaw_command,
        help="load a reference-gateway state database into a new, empty store",
        description="Read a reference-gateway state database (session_state_events, "
        "session_state_heads, session_watch_cursors) into the store named by --db, "
        "preserving sequences, heads, prune watermarks and cursor positions, then audit it with "
        "`sessionwatch audit`. Cursors whose bare target key matches no head, or several, are "
        "reported and skipped.",
        store=StoreUse.CREATE,
    )
    openclaw.add_argument("path", metavar="PATH", help="the reference gateway's SQLite state file")
