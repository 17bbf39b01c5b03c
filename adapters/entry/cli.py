"""The `sessionwatch` command line (SPEC §14): argument parsing, output formatting, exit codes.

A thin shell over `SessionWatch`: every rule lives in the core. Exit codes (`EXIT_CODES`): 0 success;
1 the command ran and its answer is "no" (a refused `watch`, the demo's rebuilt read models
differing; audit violations); 2 bad usage, bad input or an unusable store; 3 an unexpected internal
error. Every failure (2, 3) prints exactly one line on stderr and nothing on stdout; no traceback
escapes. A "no" answer (1) is an answer, not an error: it is printed on stdout (`refused: <reason>`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from pydantic import ValidationError

from sessionwatch.adapters.app.clock import SystemClock
from sessionwatch.adapters.entry.demo import DEMO_PATH, run_demo
from sessionwatch.adapters.entry.watch import SessionWatch, open_watch
from sessionwatch.adapters.history.jsonl import HistoryError, export_history, import_history
from sessionwatch.adapters.history.openclaw import import_openclaw
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.adapters.stores.urls import InvalidStoreUrl, parse_url
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.keys import SessionIdentity, resolve_identity
from sessionwatch.domain.ports import Waker
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.signals import Actor, SignalKind, to_epoch_ms
from sessionwatch.domain.watch_cursor import can_watch
from sessionwatch.projections.audit import VIOLATION_KINDS
from sessionwatch.projections.models import (
    AuditReport,
    Cursor,
    Notice,
    PruneReport,
    SessionRow,
    SessionStatus,
    Signal,
    SweepReport,
)

PROG = "sessionwatch"
EXIT_OK = 0
EXIT_NO = 1  # the command ran and answered "no": a refused watch, differing read models
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a closed pipe

_INPUT_ERRORS = (InvalidSignal, InvalidQuery, UnknownSession, InvalidStoreUrl, StoreError, HistoryError)

EXIT_CODES = (
    "exit codes: 0 success; 1 the answer is no (watch refused; demo read models differ), printed on "
    "stdout; 2 bad usage, bad input or an unusable store, one line on stderr; 3 internal error, one "
    "line on stderr"
)


class CliError(Exception):
    """Bad usage or input found by the command line itself; the message is the whole line."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage over several lines and exiting."""

    def error(self, message: str) -> NoReturn:
        raise CliError(message)


def one_line(message: str) -> str:
    """The message as one printable line: control and unencodable characters are escaped."""
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in message).strip()
    return text or "unknown error"


def _fail(message: str) -> None:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)


def _print_json(value: object) -> None:
    print(json.dumps(value, indent=2))


# ------------------------------------------------------------------------------------ the parser


def _global_options(*, suppress: bool) -> _Parser:
    """`--db` and `--json`, accepted before and after the subcommand (SPEC §13.1).

    The subcommand copies default to SUPPRESS so they only override what was given before it.
    """
    parent = _Parser(add_help=False, allow_abbrev=False)
    db_default: object = argparse.SUPPRESS if suppress else None
    json_default: object = argparse.SUPPRESS if suppress else False
    parent.add_argument(
        "--db",
        metavar="URL",
        default=db_default,
        help="store URL: sqlite:///PATH, a plain file path, or memory:// "
        "(default: $SESSIONWATCH_URL, else ./sessionwatch.db)",
    )
    parent.add_argument("--json", action="store_true", default=json_default, help="print JSON")
    return parent


def build_parser() -> argparse.ArgumentParser:
    """The full `sessionwatch` parser."""
    parser = _Parser(
        prog=PROG,
        description="Session state awareness for multi-agent gateways: a durable signal log per "
        "session, heads (stateVersion) and changesSince reconciliation.",
        parents=[_global_options(suppress=False)],
        allow_abbrev=False,
        epilog=EXIT_CODES,
    )
    common = [_global_options(suppress=True)]
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _command(
        commands,
        common,
        "demo",
        _demo,
        help="play a multi-agent story against a real SQLite file",
        description="Play a manager / two children / human story against a real SQLite file, restart "
        "it, and reconcile. Without --db the story runs on ./"
        f"{DEMO_PATH}, which is deleted and recreated on every run (never your ./sessionwatch.db "
        "nor $SESSIONWATCH_URL). With --db URL it runs on that SQLite store and keeps it; every run "
        "uses fresh child session keys, so re-running on the same file always works.",
    )

    status = _command(
        commands,
        common,
        "status",
        _status,
        help="a session's stateVersion and, with --since, the changes after it",
        description="session_status (SPEC §7.1): the head and, with --since N, the typed delta.",
    )
    status.add_argument("key", metavar="KEY", help="session key, e.g. agent:main:subagent:child")
    status.add_argument("--since", metavar="N", help="changesSince: an integer >= 0")
    status.add_argument("--agent", metavar="ID", help="agent id (required for bare keys such as global)")
    status.add_argument("--limit", metavar="N", default="200", help="page size, clamped into [1, 200]")
    status.add_argument(
        "--as-of",
        metavar="SEQUENCE",
        help="the status right after this sequence, from the event store (and --archive before the "
        "session's prune watermark)",
    )
    status.add_argument("--archive", metavar="PATH", help="the prune archive (JSON Lines), for --as-of")

    listing = _command(
        commands,
        common,
        "list",
        _list,
        help="known sessions with their stateVersion",
        description="sessions_list (SPEC §7.2).",
    )
    listing.add_argument("--agent", metavar="ID", help="only this agent's sessions")

    record = _command(
        commands,
        common,
        "record",
        _record,
        help="record one signal (strict: invalid input is refused, nothing is written)",
        description="The strict record of SPEC §13: no gate and no actor filter.",
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
    record.add_argument("--dedupe-key", metavar="K", help="global dedupe key")
    record.add_argument("--agent", metavar="ID", help="agent id (required for bare keys)")
    record.add_argument("--run-id", metavar="R", help="run id")
    record.add_argument(
        "--watcher",
        dest="watchers",
        action="append",
        metavar="KEY",
        help="producer watcher (repeatable): a notifying signal also reaches this session, creating "
        "its cursor at changesSince 0 if it has none; keys that are not agent-qualified are never "
        "notified (SPEC §4, §5.1)",
    )
    _watching_commands(commands, common)
    _history_commands(commands, common)
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
) -> _Parser:
    """One sub-command with the global options, no abbreviations, and the handler that runs it."""
    command = commands.add_parser(
        name, parents=common, allow_abbrev=False, help=help, description=description, epilog=epilog
    )
    command.set_defaults(handler=handler)
    return command


def _target_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("watcher", metavar="WATCHER", help="the watching session, agent:<id>:<rest>")
    command.add_argument("target", metavar="TARGET", help="the watched session's key")
    command.add_argument("--agent", metavar="ID", help="the target's agent id (required for bare targets)")


def _watching_commands(commands: argparse._SubParsersAction[_Parser], common: list[_Parser]) -> None:
    """`watch`, `unwatch`, `notices`, `drain` and `sweep` (SPEC §5, §6)."""
    watch = _command(
        commands,
        common,
        "watch",
        _watch,
        help="watch a session from its current head (exit 1: refused)",
        description="Register WATCHER's cursor on TARGET at the target's current head (SPEC §5.2): "
        "history before it never produces a notice. Watching an already watched target succeeds and "
        "leaves the cursor (and any pending notice) untouched. The answer is printed on stdout: "
        "'watching: ...' (exit 0), or 'refused: <reason>' (exit 1, nothing written) when WATCHER is "
        "not agent-qualified (such sessions are never notified, SPEC §5.3) or is TARGET itself. "
        "Malformed keys, or a bare TARGET without --agent, are bad input (exit 2).",
        epilog=EXIT_CODES,
    )
    _target_arguments(watch)

    unwatch = _command(
        commands,
        common,
        "unwatch",
        _unwatch,
        help="stop watching a session",
        description="Remove WATCHER's cursor on TARGET, with its pending notice (SPEC §5.4). Exit 0 "
        "whether or not there was one to remove: the output says which.",
    )
    _target_arguments(unwatch)

    notices = _command(
        commands,
        common,
        "notices",
        _notices,
        help="WATCHER's pending notices, without acknowledging them",
        description="One notice line (SPEC §6.2) per stale target, nothing when none is pending "
        "(with --json, a list of objects: target, targetAgentId, lastSeen, text). Reading never "
        "acknowledges: use drain for that.",
    )
    notices.add_argument("watcher", metavar="WATCHER", help="the watching session")

    drain = _command(
        commands,
        common,
        "drain",
        _drain,
        help="print WATCHER's pending notices and acknowledge them",
        description="Print the pending notices like `notices`, and acknowledge each (SPEC §6.3): "
        "L := N, never to the head, so a change that arrived after the notice was frozen leaves "
        "exactly one follow-up notice for the next drain.",
    )
    drain.add_argument("watcher", metavar="WATCHER", help="the watching session")

    _command(
        commands,
        common,
        "sweep",
        _sweep,
        help="the restart sweep: re-publish every open notice",
        description="The restart sweep (SPEC §6.5) that opening a store runs: every open cursor "
        "(M > L) of a known watcher session is re-frozen (N := M) and its notice re-published. "
        "Prints the report and one 'wake WATCHER (REASON)' line per wake request (this command has "
        "no host heartbeat to deliver them; subagent watchers are never woken). Cursors whose "
        "watcher session is unknown (never registered, or deleted) are skipped.",
    )

    prune = _command(
        commands,
        common,
        "prune",
        _prune,
        help="prune history to the retention window and cap now",
        description="Prune (SPEC §8) now, whatever the hourly throttle: signals older than --days, "
        "then all but the newest --max-signals globally; each affected session's prune watermark is "
        "stamped (heads never go down); cursors idle for --days expire; the event store drops what a "
        "replay no longer needs. --archive appends every pruned signal to a JSON Lines file first.",
    )
    prune.add_argument("--days", default="30", help="the age window in days (default 30)")
    prune.add_argument("--max-signals", default="50000", help="the global cap (default 50000)")
    prune.add_argument("--archive", default=None, metavar="PATH", help="JSON Lines file for pruned signals")


def _history_commands(commands: argparse._SubParsersAction[_Parser], common: list[_Parser]) -> None:
    _command(
        commands,
        common,
        "audit",
        _audit,
        help="replay the history and check every read model and invariant",
        description="Replay the whole event store (from the newest prune checkpoint), rebuild every "
        "read model, diff it with the stored one and check the invariants of SPEC §14: heads "
        "monotonic and at least every retained sequence, watermarks not above heads, L <= N <= M, "
        "no pending notice for a self-caused or log-only signal, no message text. Exits 1 listing "
        "every violation, grouped by kind with the session keys involved. Shows progress on a "
        "terminal once it takes longer than a second.",
    )

    _command(
        commands,
        common,
        "export",
        _export,
        help="write the whole history as JSON Lines to stdout",
        description="The event history as JSON Lines (a header, then one stored event per line with "
        "its stream, version, stored name and payload), for archives and for moving between stores: "
        "`sessionwatch export --db A > history.jsonl`, then `sessionwatch import history.jsonl --db B`.",
    )

    load = _command(
        commands,
        common,
        "import",
        _import,
        help="load an exported history into a new, empty store",
        description="Load a history written by `export` into the store named by --db, which must be "
        "empty. Every line is checked first; on any problem nothing is written and the error names "
        "the line.",
    )
    load.add_argument("file", metavar="FILE", help="the JSON Lines file `export` wrote")

    openclaw = _command(
        commands,
        common,
        "import-openclaw",
        _import_openclaw,
        help="load a reference-gateway state database into a new, empty store",
        description="Read a reference-gateway state database (session_state_events, "
        "session_state_heads, session_watch_cursors; SPEC Appendix A) into the store named by --db, "
        "preserving sequences, heads, prune watermarks and cursor positions, then audit it with "
        "`sessionwatch audit`. Cursors whose bare target key matches no head, or several, are "
        "reported and skipped.",
    )
    openclaw.add_argument("path", metavar="PATH", help="the reference gateway's SQLite state file")


# ---------------------------------------------------------------------------------- input parsing


def parse_actor(text: str) -> Actor:
    """`human`, `system` or `agent:KEY`."""
    if text == "human":
        return Actor.human()
    if text == "system":
        return Actor.system()
    if text.startswith("agent:") and text.removeprefix("agent:").strip():
        return Actor.agent(text.removeprefix("agent:"))
    raise CliError(f"--actor: must be human, system or agent:KEY, not {text!r}")


def _reject_constant(name: str) -> NoReturn:
    raise CliError(f"--payload: {name} is not valid JSON")


def parse_payload(text: str | None) -> dict[str, object] | None:
    """A strict JSON object (no NaN or Infinity)."""
    if text is None:
        return None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CliError(f"--payload: not valid JSON ({exc.msg} at position {exc.pos})") from None
    except ValueError:  # an integer of more digits than Python converts
        raise CliError("--payload: a number in it is too long") from None
    except RecursionError:
        raise CliError("--payload: nested too deeply") from None
    if not isinstance(value, dict):
        raise CliError("--payload: must be a JSON object")
    return value


def parse_integer(text: str, field: str) -> int:
    """A decimal integer; the range is the core's to check (`changes_since >= 0`, limit clamping)."""
    try:
        return int(text)
    except ValueError:
        raise InvalidQuery(field, f"must be an integer, not {text!r}") from None


def parse_path(text: str, option: str) -> str:
    """A file path the command reads or appends to; a NUL byte cannot be in one."""
    if "\x00" in text:
        raise CliError(f"{option}: a path cannot contain a NUL character")
    return text


def _open_existing(
    db: str | None, *, waker: Waker | None = None, retention: Retention | None = None
) -> SessionWatch:
    """Open an existing store without creating it (a missing SQLite file is an error), unswept."""
    parsed = parse_url(db)
    if parsed.scheme == "sqlite" and not Path(parsed.path).exists():
        raise CliError(f"no store at {parsed.path} (nothing recorded yet, or a wrong --db)")
    # A command prints the wakes of its own writes only, never those of other processes.
    return open_watch(db, waker=waker, sweep_on_open=False, retention=retention, cross_process_wakes=False)


class WakeRequests:
    """A `Waker` that keeps the wake requests so the command can print them."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def wake(self, watcher_key: str, reason: str) -> None:
        """Keep one request."""
        self.requests.append((watcher_key, reason))


# --------------------------------------------------------------------------------------- commands


def _status(args: argparse.Namespace) -> int:
    since = None if args.since is None else parse_integer(args.since, "changes_since")
    limit = parse_integer(args.limit, "limit")
    if args.archive is not None and args.as_of is None:
        raise CliError("--archive: only with --as-of")
    archive = None if args.archive is None else parse_path(args.archive, "--archive")
    with _open_existing(args.db) as watch:
        if args.as_of is None:
            status = watch.session_status(args.key, changes_since=since, limit=limit, agent_id=args.agent)
        else:
            as_of = parse_integer(args.as_of, "as_of")
            # A file that is not a prune archive is an InvalidQuery naming `archive`.
            status = watch.status_as_of(
                args.key, as_of, changes_since=since, limit=limit, agent_id=args.agent, archive=archive
            )
    if args.json:
        _print_json(status.to_json())
    else:
        print(format_status(status))
    return EXIT_OK


class Progress:
    """`audit` progress on a terminal's stderr, once the work has taken more than a second."""

    def __init__(self, label: str, *, delay: float = 1.0) -> None:
        self._label = label
        self._started = time.monotonic()
        self._delay = delay
        self._shown = False
        self._enabled = sys.stderr.isatty()

    def __call__(self, done: int) -> None:
        """Show how many events are done (rewriting the same terminal line)."""
        if self._enabled and time.monotonic() - self._started >= self._delay:
            sys.stderr.write(f"\r{self._label}: {done:,} events replayed")
            sys.stderr.flush()
            self._shown = True

    def close(self) -> None:
        """End the progress line, if one was shown."""
        if self._shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _audit(args: argparse.Namespace) -> int:
    progress = Progress("audit")
    with _open_existing(args.db) as watch:
        try:
            report = watch.audit(progress=progress)
        finally:
            progress.close()
    if args.json:
        _print_json(report.to_json())
    else:
        print(format_audit(report))
    return EXIT_OK if report.ok else EXIT_NO


def _export(args: argparse.Namespace) -> int:
    with _open_existing(args.db) as watch:
        export_history(watch.store, sys.stdout.write)
    return EXIT_OK


def _import(args: argparse.Namespace) -> int:
    source = Path(args.file)
    if not source.is_file():
        raise CliError(f"FILE: no such file: {source}")
    try:
        with (
            open_watch(args.db, sweep_on_open=False, cross_process_wakes=False) as watch,
            source.open(encoding="utf-8") as lines,
        ):
            report = import_history(watch.store, lines)
    except UnicodeDecodeError:  # found while checking the lines, before anything is written
        raise CliError(f"FILE: {source} is not UTF-8 text") from None
    if args.json:
        _print_json(dataclasses.asdict(report))
    else:
        print(
            f"imported {report.events} stored events: {report.sessions} sessions, {report.signals} signals, "
            f"{report.cursors} cursors, {report.links} upstream links; sequence counter at {report.sequence}"
        )
    return EXIT_OK


def _import_openclaw(args: argparse.Namespace) -> int:
    with open_watch(args.db, sweep_on_open=False, cross_process_wakes=False) as watch:
        report = import_openclaw(watch.store, args.path, now_ms=to_epoch_ms(SystemClock().now()))
    if args.json:
        _print_json(report.to_json())
    else:
        skipped = [*report.unresolved_cursors, *report.ambiguous_cursors, *report.self_watch_cursors]
        print(
            f"imported {report.signals} signals, {report.sessions} sessions, {report.cursors} cursors; "
            f"sequence counter at {report.sequence}; {report.payload_keys_dropped} payload keys and "
            f"{report.payload_values_dropped} refused payload values dropped"
        )
        for line in report.unresolved_cursors:
            print(f"skipped cursor (no head for its target): {line}")
        for line in report.ambiguous_cursors:
            print(f"skipped cursor (several agents own its target): {line}")
        for line in report.self_watch_cursors:
            print(f"skipped cursor (a session watching itself): {line}")
        if not skipped:
            print("every cursor carried over; run `sessionwatch audit` on the result")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    with _open_existing(args.db) as watch:
        rows = watch.sessions_list(agent_id=args.agent)
    if args.json:
        _print_json([row.to_json() for row in rows])
    else:
        print(format_rows(rows))
    return EXIT_OK


def _record(args: argparse.Namespace) -> int:
    actor = parse_actor(args.actor)
    payload = parse_payload(args.payload)
    with open_watch(args.db, sweep_on_open=False) as watch:
        signal = watch.record(
            args.key,
            kind=args.kind,
            actor=actor,
            summary=args.summary,
            payload=payload,
            run_id=args.run_id,
            dedupe_key=args.dedupe_key,
            agent_id=args.agent,
            watchers=tuple(args.watchers or ()),
        )
    if args.json:
        _print_json(signal.to_json())
    else:
        print(format_signal(signal))
    return EXIT_OK


def _target(args: argparse.Namespace) -> SessionIdentity:
    """The target identity: its agent from an agent-qualified key, else from --agent (bad input)."""
    return resolve_identity(args.target, args.agent, "target_key")


def _refusal(watcher: str, target: SessionIdentity) -> str:
    """Why `SessionWatch.watch` said no, for the one `refused:` line (the core decided)."""
    if not can_watch(watcher):
        return (
            f"{watcher.strip()} is not an agent-qualified key (agent:<id>:<rest>); "
            "such sessions are never notified"
        )
    return f"{target.session_key} cannot watch itself"


def _watch(args: argparse.Namespace) -> int:
    target = _target(args)
    with open_watch(args.db, sweep_on_open=False) as watch:
        before = watch.cursor(args.watcher, target.session_key, target_agent_id=target.agent_id)
        watched = watch.watch(args.watcher, target.session_key, target_agent_id=target.agent_id)
        cursor = watch.cursor(args.watcher, target.session_key, target_agent_id=target.agent_id)
    ids = {"watcher": args.watcher.strip(), "target": target.session_key, "targetAgentId": target.agent_id}
    if not watched:
        reason = _refusal(args.watcher, target)
        if args.json:
            _print_json({"watched": False, **ids, "reason": reason})
        else:
            print(f"refused: {reason}")
        return EXIT_NO
    if cursor is None:
        raise RuntimeError("watch: the watch was registered but its cursor cannot be read back")
    if args.json:
        _print_json({"watched": True, "alreadyWatching": before is not None, **cursor.to_json()})
    else:
        print(format_watching(cursor, already=before is not None))
    return EXIT_OK


def _unwatch(args: argparse.Namespace) -> int:
    target = _target(args)
    with _open_existing(args.db) as watch:
        removed = watch.unwatch(args.watcher, target.session_key, target_agent_id=target.agent_id)
    watcher = args.watcher.strip()
    if args.json:
        _print_json(
            {
                "removed": removed,
                "watcher": watcher,
                "target": target.session_key,
                "targetAgentId": target.agent_id,
            }
        )
    elif removed:
        print(f"unwatched: {watcher} no longer watches {target.session_key} (agent {target.agent_id})")
    else:
        print(f"not watching: {watcher} had no cursor on {target.session_key} (agent {target.agent_id})")
    return EXIT_OK


def _print_notices(notices: Sequence[Notice], *, as_json: bool) -> None:
    """One §6.2 line per notice (nothing for none), or the JSON list."""
    if as_json:
        _print_json([notice.to_json() for notice in notices])
        return
    for notice in notices:
        print(notice.text)


def _notices(args: argparse.Namespace) -> int:
    with _open_existing(args.db) as watch:
        notices = watch.pending_notices(args.watcher)
    _print_notices(notices, as_json=args.json)
    return EXIT_OK


def _drain(args: argparse.Namespace) -> int:
    with _open_existing(args.db) as watch:
        notices = watch.drain(args.watcher)
    _print_notices(notices, as_json=args.json)
    return EXIT_OK


def _sweep(args: argparse.Namespace) -> int:
    wakes = WakeRequests()
    with _open_existing(args.db, waker=wakes) as watch:
        report = watch.sweep()
    if args.json:
        _print_json(report.to_json())
    else:
        print(format_sweep(report))
        for watcher, reason in wakes.requests:
            print(f"wake {watcher} ({reason})")
    return EXIT_OK


def _prune(args: argparse.Namespace) -> int:
    try:
        policy = Retention(
            days=float(args.days),
            max_signals=parse_integer(args.max_signals, "max_signals"),
            archive=None if args.archive is None else parse_path(args.archive, "--archive"),
        )
    except (ValueError, ValidationError) as exc:
        raise CliError(f"retention: {_first_error(exc)}") from None
    with _open_existing(args.db, retention=policy) as watch:
        report = watch.prune(force=True)
    if args.json:
        _print_json(report.to_json())
    else:
        print(format_prune(report))
    return EXIT_OK


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc)


def _demo(args: argparse.Namespace) -> int:
    report = run_demo(args.db, sys.stdout, as_json=args.json)
    return EXIT_OK if report.ok else EXIT_NO


# ------------------------------------------------------------------------------------- formatting


def _actor_text(actor_type: str, actor_id: str | None) -> str:
    return f"{actor_type} {actor_id}" if actor_id else actor_type


def format_signal(signal: Signal) -> str:
    """One line: sequence, kind, session, actor, summary."""
    payload = f" {json.dumps(signal.payload, sort_keys=True)}" if signal.payload else ""
    return (
        f"recorded #{signal.sequence} {signal.kind.value} on {signal.session_key} "
        f"(agent {signal.agent_id}) by {_actor_text(signal.actor_type, signal.actor_id)}: "
        f"{signal.summary}{payload}"
    )


def format_status(status: SessionStatus) -> str:
    """The head, then one line per change when a delta was asked for."""
    lines = [f"{status.session_key}  stateVersion {status.state_version}"]
    changes = status.state_changes
    if changes is None:
        return lines[0]
    count = len(changes.events)
    lines.append(
        f"{count} change{'s' if count != 1 else ''} "
        f"(earliest available sequence {changes.earliest_available_sequence})"
    )
    for event in changes.events:
        payload = f" {json.dumps(event.payload, sort_keys=True)}" if event.payload else ""
        run = f" run {event.run_id}" if event.run_id else ""
        when = event.occurred_at.isoformat(timespec="seconds")
        lines.append(
            f"  #{event.sequence}  {when}  {event.kind.value}  "
            f"{_actor_text(event.actor_type, event.actor_id)}{run}: {event.summary}{payload}"
        )
    if changes.truncated:
        last = changes.events[-1].sequence
        lines.append(f"truncated: more changes exist; continue with --since {last}")
    if changes.history_gap:
        lines.append("history gap: changes before the retained history were pruned; refresh the whole state")
    return "\n".join(lines)


def format_watching(cursor: Cursor, *, already: bool) -> str:
    """The `watch` answer: who watches what, from which sequence, and whether a notice is pending."""
    line = (
        f"watching: {cursor.watcher} {'already watches' if already else 'watches'} {cursor.target} "
        f"(agent {cursor.target_agent_id}), last seen {cursor.last_seen}"
    )
    if already:
        line += ", cursor untouched"
    if cursor.notified > cursor.last_seen:
        line += f", a notice is pending (changesSince {cursor.last_seen})"
    return line


def format_prune(report: PruneReport) -> str:
    """One line: what the prune removed, stamped, expired, compacted and archived."""
    return (
        f"prune: removed {report.signals_removed} signal{'s' if report.signals_removed != 1 else ''}"
        f" (older than {report.occurred_before.isoformat() if report.occurred_before else '-'}"
        f" or at or below #{report.through_sequence}), stamped {report.sessions_stamped} watermark"
        f"{'s' if report.sessions_stamped != 1 else ''}, expired {report.cursors_expired} cursor"
        f"{'s' if report.cursors_expired != 1 else ''}, deleted {report.events_deleted} stored event"
        f"{'s' if report.events_deleted != 1 else ''}, archived {report.archived}"
    )


def format_sweep(report: SweepReport) -> str:
    """One line: notices re-published and re-frozen, watchers woken, cursors skipped."""
    woken = ", ".join(report.woken) or "nobody"
    return (
        f"sweep: re-published {report.republished} notice{'s' if report.republished != 1 else ''} "
        f"({report.refrozen} re-frozen), woke {woken}, skipped {report.skipped_missing_watchers} "
        "(watcher session unknown)"
    )


def format_audit(report: AuditReport) -> str:
    """The verdict, then each violation kind with its count, the sessions involved and the details."""
    rate = report.events_replayed / report.seconds if report.seconds > 0 else 0.0
    head = (
        f"audit: {'ok' if report.ok else 'FAILED'}: {report.events_replayed:,} events replayed in "
        f"{report.seconds:.2f} s ({rate:,.0f} events/s), {len(report.violations)} violation"
        f"{'s' if len(report.violations) != 1 else ''}"
    )
    lines = [head]
    for kind, found in report.by_kind().items():
        keys = sorted({key for v in found for key in v.session_keys})
        lines.append(f"{kind} ({len(found)}): {VIOLATION_KINDS.get(kind, kind)}; sessions: {', '.join(keys)}")
        lines.extend(f"  - {v.detail}" for v in found)
    return "\n".join(lines)


def format_rows(rows: Sequence[SessionRow]) -> str:
    """One line per session; `stateVersion` only when the head is above 0 (SPEC §7.2)."""
    if not rows:
        return "no sessions"
    width = max(len(row.session_key) for row in rows)
    lines = []
    for row in rows:
        version = f"  stateVersion {row.state_version}" if row.state_version is not None else ""
        lines.append(f"{row.session_key:<{width}}  agent {row.agent_id}  kind {row.kind}{version}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- main


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help prints and exits 0 through argparse
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script passes it to `sys.exit`)."""
    try:
        return _run(argv)
    except (CliError, *_INPUT_ERRORS) as exc:
        _fail(str(exc))
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`sessionwatch list | head -1`): say nothing more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # a file named on the command line: missing, a directory, a name too long
        _fail(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _fail("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback reaches the user
        _fail(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
