"""The `sessionwatch` command line (SPEC §14): argument parsing, output formatting, exit codes.

A thin shell over `SessionWatch`: every rule lives in the core. Exit codes: 0 success, 1 reserved
for audit violations, 2 bad usage, bad input or an unusable store, 3 an unexpected internal error.
Every failure prints exactly one line on stderr and nothing on stdout; no traceback escapes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from sessionwatch.adapters.demo import DEMO_PATH, run_demo
from sessionwatch.adapters.store import StoreError
from sessionwatch.adapters.urls import InvalidStoreUrl, parse_url
from sessionwatch.adapters.watch import SessionWatch, open_watch
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal, UnknownSession
from sessionwatch.domain.signals import Actor, SignalKind
from sessionwatch.projections.models import SessionRow, SessionStatus, Signal

PROG = "sessionwatch"
EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a closed pipe

_INPUT_ERRORS = (InvalidSignal, InvalidQuery, UnknownSession, InvalidStoreUrl, StoreError)


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
    )
    common = [_global_options(suppress=True)]
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser(
        "demo",
        parents=common,
        allow_abbrev=False,
        help="play a multi-agent story against a real SQLite file",
        description="Play a manager / two children / human story against a real SQLite file, restart "
        "it, and reconcile. Without --db the story runs on ./"
        f"{DEMO_PATH}, which is deleted and recreated on every run (never your ./sessionwatch.db "
        "nor $SESSIONWATCH_URL). With --db URL it runs on that SQLite store and keeps it; every run "
        "uses fresh child session keys, so re-running on the same file always works.",
    )
    demo.set_defaults(handler=_demo)

    status = commands.add_parser(
        "status",
        parents=common,
        allow_abbrev=False,
        help="a session's stateVersion and, with --since, the changes after it",
        description="session_status (SPEC §7.1): the head and, with --since N, the typed delta.",
    )
    status.add_argument("key", metavar="KEY", help="session key, e.g. agent:main:subagent:child")
    status.add_argument("--since", metavar="N", help="changesSince: an integer >= 0")
    status.add_argument("--agent", metavar="ID", help="agent id (required for bare keys such as global)")
    status.add_argument("--limit", metavar="N", default="200", help="page size, clamped into [1, 200]")
    status.set_defaults(handler=_status)

    listing = commands.add_parser(
        "list",
        parents=common,
        allow_abbrev=False,
        help="known sessions with their stateVersion",
        description="sessions_list (SPEC §7.2).",
    )
    listing.add_argument("--agent", metavar="ID", help="only this agent's sessions")
    listing.set_defaults(handler=_list)

    record = commands.add_parser(
        "record",
        parents=common,
        allow_abbrev=False,
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
    record.set_defaults(handler=_record)
    return parser


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
    if not isinstance(value, dict):
        raise CliError("--payload: must be a JSON object")
    return value


def parse_integer(text: str, field: str) -> int:
    """A decimal integer; the range is the core's to check (`changes_since >= 0`, limit clamping)."""
    try:
        return int(text)
    except ValueError:
        raise InvalidQuery(field, f"must be an integer, not {text!r}") from None


def _open_existing(db: str | None) -> SessionWatch:
    """Open a store for reading without creating it: a missing SQLite file is an error."""
    parsed = parse_url(db)
    if parsed.scheme == "sqlite" and not Path(parsed.path).exists():
        raise CliError(f"no store at {parsed.path} (nothing recorded yet, or a wrong --db)")
    return open_watch(db, sweep_on_open=False)


# --------------------------------------------------------------------------------------- commands


def _status(args: argparse.Namespace) -> int:
    since = None if args.since is None else parse_integer(args.since, "changes_since")
    limit = parse_integer(args.limit, "limit")
    with _open_existing(args.db) as watch:
        status = watch.session_status(args.key, changes_since=since, limit=limit, agent_id=args.agent)
    if args.json:
        _print_json(status.to_json())
    else:
        print(format_status(status))
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
        )
    if args.json:
        _print_json(signal.to_json())
    else:
        print(format_signal(signal))
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    report = run_demo(args.db, sys.stdout, as_json=args.json)
    return EXIT_OK if report.read_models_identical else 1


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
    except KeyboardInterrupt:
        _fail("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback reaches the user
        _fail(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
