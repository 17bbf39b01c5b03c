"""What each `sessionwatch` sub-command takes: its description, options, handler and store use.

The parser (`cli_parser`) lists the sub-commands by their one-line help; it calls `fill` to fill a
sub-command's parser when a command line names it, and every one for the reference page. Standard
library only; each handler lives in a module that imports what it uses when it runs (ADR-0067,
ADR-0071).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from sessionwatch.cli.cli_codes import DEMO_PATH, StoreUse
from sessionwatch.cli.cli_parser import EXIT_CODES, add_global_options, global_options

WATCHER_RULE = (
    " A WATCHER that is not agent-qualified can never be notified, and one the store knows nothing "
    "of (no session, no cursor) is an unknown session, as status says of an unknown KEY: both are "
    "bad input (exit 2)."
)


DESCRIPTIONS: dict[str, str] = {
    "demo": "Play a manager / two children / human story against a real SQLite file, restart "
    "it, and reconcile. Without --db the story runs on ./"
    f"{DEMO_PATH}, which is deleted and recreated on every run (never your ./sessionwatch.db "
    "nor $SESSIONWATCH_URL). With --db URL it runs on that SQLite store and keeps it; every run "
    "uses fresh child session keys, so re-running on the same file always works.",
    "status": "A session's head (stateVersion) and, with --since N, every change after sequence "
    "N: what a watcher reads to reconcile after a notice.",
    "list": "Every known session with its agent, kind and stateVersion (shown once above 0). The "
    "kind is the one the session tools and the MCP server list: the kind the host registered, else "
    "derived from the key (main, group, cron, hook, node, other; a sub-agent is other).",
    "record": "Record one signal exactly as given: no gate (it is recorded even when nobody "
    "watches the session) and no actor filter. Invalid input is refused and nothing is written.",
    "watch": "Register WATCHER's cursor on TARGET at the target's current head: "
    "history before it never produces a notice. Watching an already watched target succeeds and "
    "leaves the cursor (and any pending notice) untouched. The answer is printed on stdout: "
    "'watching: ...' (exit 0), or 'refused: <reason>' (exit 1, nothing written) when WATCHER is "
    "not agent-qualified (such sessions are never notified) or is TARGET itself. "
    "With --ambient the watch is ambient: its notices are queued, never woken; watching it again "
    "without --ambient promotes it to an explicit watch, keeping its positions. "
    "Malformed keys, or a bare TARGET without --agent, are bad input (exit 2).",
    "unwatch": "Remove WATCHER's cursor on TARGET, with its pending notice. Exit 0 "
    "whether or not there was one to remove: the output says which. A WATCHER that is not "
    "agent-qualified holds no cursor ever: bad input (exit 2).",
    "watched": "One line per session WATCHER watches, in target order: the target, its agent, "
    "the cursor's last seen, notified and material sequences, and whether a notice is pending "
    "(with --json, a list of cursor objects with a pending flag; 'watches no session' when there "
    "are none). With --prompt, the bounded block a host puts in WATCHER's system prompt instead: "
    "the sessions it watches (at most 20, within 2,000 characters), that its session tools can read "
    "them, and how to reconcile; nothing when it watches none. Reading moves no cursor." + WATCHER_RULE,
    "notices": "One notice line per changed target, nothing when none is pending "
    "(with --json, a list of objects: target, targetAgentId, lastSeen, text). Reading never "
    "acknowledges: use drain for that." + WATCHER_RULE,
    "drain": "Print the pending notices like `notices`, and acknowledge each: the watcher "
    "has now seen what its notice announced, not more, so a change that arrived after the notice "
    "was written leaves exactly one follow-up notice for the next drain." + WATCHER_RULE,
    "sweep": "The restart sweep that opening a store runs: every watch with changes its "
    "watcher has not seen yet gets its notice published again, covering every change so far. "
    "Prints the report and one 'wake WATCHER (REASON)' line per wake request (this command has "
    "no host heartbeat to deliver them; subagent watchers are never woken). Cursors whose "
    "watcher session is unknown (never registered, or deleted) are skipped.",
    "prune": "Prune now, whatever the hourly throttle: signals older than --days, "
    "then all but the newest --max-signals globally; each affected session's prune watermark is "
    "stamped (heads never go down); cursors idle for --days expire; the event store drops what a "
    "replay no longer needs. --archive appends every pruned signal to a JSON Lines file first, and "
    "creates it (empty) when nothing was pruned, so the next command can always read it.",
    "audit": "Replay the whole event store (from the newest prune checkpoint), rebuild every "
    "read model, diff it with the stored one and check the invariants: heads "
    "monotonic and at least every retained sequence, watermarks not above heads, L <= N <= M, "
    "no pending notice for a self-caused or log-only signal, no message text. Exits 1 listing "
    "every violation, grouped by kind with the session keys involved. Shows progress on stderr "
    "when it is a terminal (with the cli extra, which brings rich).",
    "export": "The event history as JSON Lines (a header, then one stored event per line with "
    "its stream, version, stored name and payload, then a trailer with the event count and the "
    "sha256 digest of every byte before it), for archives and for moving between stores: "
    "`sessionwatch export --db A > history.jsonl`, then `sessionwatch import history.jsonl --db B`. "
    "Progress goes to stderr only when it is a terminal; the output is the same bytes either way.",
    "import": "Load a history written by `export` into the store named by --db, which must be "
    "empty. The file's trailer is checked before the store is opened: a file without it (cut), "
    "or whose event count or digest differs (changed), is refused and creates nothing. Every "
    "line is checked too; on any problem nothing is written and the error names the line. A "
    "file of sessionwatch 0.1.0 (version 1, no trailer) imports with a warning.",
    "import-openclaw": "Read a reference-gateway state database (session_state_events, "
    "session_state_heads, session_watch_cursors) into the store named by --db, "
    "preserving sequences, heads, prune watermarks and cursor positions, then audit it with "
    "`sessionwatch audit`. Cursors whose bare target key matches no head, or several, are "
    "reported and skipped.",
}
"""Each sub-command's description, the first paragraph of its help."""
STORES: dict[str, StoreUse] = {
    "demo": StoreUse.DEMO,
    "record": StoreUse.CREATE,
    "watch": StoreUse.CREATE,
    "import": StoreUse.CREATE,
    "import-openclaw": StoreUse.CREATE,
}
"""The sub-commands that may start a store (`StoreUse`); every other one reads an existing store only."""
EPILOGS: dict[str, str] = {"watch": EXIT_CODES}


def _target_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("watcher", metavar="WATCHER", help="the watching session, agent:<id>:<rest>")
    command.add_argument("target", metavar="TARGET", help="the watched session's key")
    command.add_argument("--agent", metavar="ID", help="the target's agent id (required for bare targets)")


def _demo_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--verbose", action="store_true", help="also print every step's full JSON (reconciliations, history)"
    )


def _status_options(command: argparse.ArgumentParser) -> None:
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


def _list_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--agent", metavar="ID", help="only this agent's sessions")


def _record_options(command: argparse.ArgumentParser) -> None:
    from sessionwatch.domain.kinds import SignalKind  # noqa: PLC0415 - its help lists the kinds

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


def _watch_options(command: argparse.ArgumentParser) -> None:
    _target_arguments(command)
    command.add_argument(
        "--ambient",
        action="store_true",
        help="an ambient watch: its notices are queued for the next drain and never wake WATCHER",
    )


def _unwatch_options(command: argparse.ArgumentParser) -> None:
    _target_arguments(command)


def _watched_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("watcher", metavar="WATCHER", help="the watching session, agent:<id>:<rest>")
    command.add_argument(
        "--prompt", action="store_true", help="print the system-prompt block instead of the cursors"
    )


def _notices_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("watcher", metavar="WATCHER", help="the watching session")


def _drain_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("watcher", metavar="WATCHER", help="the watching session")


def _prune_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--days", default="30", help="the age window in days (default 30)")
    command.add_argument("--max-signals", default="50000", help="the global cap (default 50000)")
    command.add_argument("--archive", default=None, metavar="PATH", help="JSON Lines file for pruned signals")


def _import_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("file", metavar="FILE", help="the JSON Lines file `export` wrote")


def _import_openclaw_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("path", metavar="PATH", help="the reference gateway's SQLite state file")


OPTIONS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "demo": _demo_options,
    "status": _status_options,
    "list": _list_options,
    "record": _record_options,
    "watch": _watch_options,
    "unwatch": _unwatch_options,
    "watched": _watched_options,
    "notices": _notices_options,
    "drain": _drain_options,
    "prune": _prune_options,
    "import": _import_options,
    "import-openclaw": _import_openclaw_options,
}
"""The options and arguments of each sub-command that has any besides the global ones."""


def _claude_code(command: argparse.ArgumentParser, main: Callable[[list[str]], int]) -> None:
    from sessionwatch.cli.cli_claude_code import fill_commands  # noqa: PLC0415 - once it is chosen

    fill_commands(command, global_options(), main)


def _codex(command: argparse.ArgumentParser, main: object) -> None:  # noqa: ARG001 - `claude-code`'s need
    from sessionwatch.cli.cli_codex import fill_commands  # noqa: PLC0415 - once it is chosen

    fill_commands(command, global_options())


def _mcp(command: argparse.ArgumentParser, main: object) -> None:  # noqa: ARG001
    from sessionwatch.cli.cli_mcp import fill_mcp  # noqa: PLC0415 - once it is chosen

    add_global_options(command, suppress=True)
    fill_mcp(command)


HOSTS: dict[str, Callable[[argparse.ArgumentParser, Callable[[list[str]], int]], None]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "mcp": _mcp,
}
"""The sub-commands whose own module fills them (the hosts' sub-commands, the MCP server)."""


def fill(name: str, command: argparse.ArgumentParser, main: Callable[[list[str]], int]) -> None:
    """Fill sub-command `name`'s parser: its description, the global options, its own, and its handler.

    The handler is `cli_commands.<name>_command` (`-` read as `_`); `main` runs a command line again
    (`claude-code mcp` does).
    """
    host = HOSTS.get(name)
    if host is not None:
        host(command, main)
        return
    from sessionwatch.cli import cli_commands  # noqa: PLC0415 - once a command is chosen

    command.description = DESCRIPTIONS[name]
    command.epilog = EPILOGS.get(name)
    add_global_options(command, suppress=True)
    handler = getattr(cli_commands, f"{name.replace('-', '_')}_command")
    command.set_defaults(handler=handler, store_use=STORES.get(name, StoreUse.READ))
    options = OPTIONS.get(name)
    if options is not None:
        options(command)
