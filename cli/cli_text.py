"""What the `sessionwatch` command line reads and prints: its input checks, output lines, exit codes.

Shell code only: the parsers turn an option's text into a value (or a `CliError` naming the
option), the formatters turn a result into the lines a person reads.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

# The exit codes and the program's name, named here as ever: their home imports nothing (the dispatcher's).
from sessionwatch.cli.cli_codes import EXIT_BROKEN_PIPE as EXIT_BROKEN_PIPE  # noqa: PLC0414
from sessionwatch.cli.cli_codes import EXIT_INTERNAL as EXIT_INTERNAL  # noqa: PLC0414
from sessionwatch.cli.cli_codes import EXIT_INTERRUPTED as EXIT_INTERRUPTED  # noqa: PLC0414
from sessionwatch.cli.cli_codes import EXIT_NO as EXIT_NO  # noqa: PLC0414
from sessionwatch.cli.cli_codes import EXIT_OK as EXIT_OK  # noqa: PLC0414
from sessionwatch.cli.cli_codes import EXIT_USAGE as EXIT_USAGE  # noqa: PLC0414
from sessionwatch.cli.cli_codes import PROG as PROG  # noqa: PLC0414
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal
from sessionwatch.domain.text import one_line as one_line  # noqa: PLC0414 - kept where the commands import it

if TYPE_CHECKING:  # the models load with the command that uses them, not with the parser
    from pydantic import ValidationError

    from sessionwatch.adapters.app.reports import AuditReport, PruneReport, SweepReport
    from sessionwatch.domain.signals import Actor
    from sessionwatch.projections.models import Cursor, SessionRow, SessionStatus, Signal


class CliError(Exception):
    """Bad usage or input found by the command line itself; the message is the whole line."""


_FIELD_FLAGS = {
    # the core's field name -> (the parsed argument that sets it, how the user writes it)
    "agent_id": ("agent", "--agent"),
    "changes_since": ("since", "--since"),
    "limit": ("limit", "--limit"),
    "as_of": ("as_of", "--as-of"),
    "archive": ("archive", "--archive"),
    "summary": ("summary", "--summary"),
    "payload": ("payload", "--payload"),
    "actor": ("actor", "--actor"),
    "actor_id": ("actor", "--actor"),
    "run_id": ("run_id", "--run-id"),
    "dedupe_key": ("dedupe_key", "--dedupe-key"),
    "watchers": ("watchers", "--watcher"),
    "max_signals": ("max_signals", "--max-signals"),
    "days": ("days", "--days"),
    "kind": ("kind", "KIND"),
    "session_key": ("key", "KEY"),
    "target_key": ("target", "TARGET"),
    "watcher_key": ("watcher", "WATCHER"),
}


def flag_of(field: str, args: argparse.Namespace) -> str | None:
    """The option or argument of this command that sets the core's `field`, if it has one."""
    head = field.split(".", 1)[0].split("[", 1)[0]
    found = _FIELD_FLAGS.get(head)
    if found is None or not hasattr(args, found[0]):
        return None
    return found[1]


def naming_the_flag(exc: InvalidSignal | InvalidQuery, args: argparse.Namespace) -> str:
    """The core's `field: reason` message, with the field replaced by the flag that fixes it.

    A bare key is fixed by `--agent` (or by writing the key agent-qualified), and the line says so.
    """
    flag = flag_of(exc.field, args)
    if flag is None:
        return str(exc)
    if flag == "--agent" and "bare key" in exc.reason:
        return f"{exc.reason}: pass --agent ID, or write the key as agent:ID:KEY"
    return f"{flag}: {exc.reason}"


def naming_the_store(message: str, args: argparse.Namespace) -> str:
    """A store URL problem (`url: reason`), naming where the URL came from: `--db` or the environment."""
    from sessionwatch.adapters.stores.urls import ENV_URL  # noqa: PLC0415 - the parser needs no URL code

    from_environment = getattr(args, "db", None) is None and os.environ.get(ENV_URL)
    source = f"${ENV_URL} (or --db)" if from_environment else "--db"
    return f"{source}: {message.removeprefix('url: ')}"


def print_json(value: object) -> None:
    """Print a JSON value, indented."""
    print(json_text(value))


def json_text(value: object) -> str:
    """A JSON value as the command line prints it, indented."""
    import json  # noqa: PLC0415 - the parser needs none

    return json.dumps(value, indent=2)


# ---------------------------------------------------------------------------------- input parsing


def parse_actor(text: str) -> Actor:
    """`human`, `system` or `agent:KEY`."""
    from sessionwatch.domain.signals import Actor  # noqa: PLC0415 - loads the models

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
    import json  # noqa: PLC0415 - the parser needs none

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


def parse_integer(text: str, field: str, *, minimum: int | None = None) -> int:
    """A decimal integer, at least `minimum` when given; other ranges are the core's to check."""
    try:
        value = int(text)
    except ValueError:
        raise InvalidQuery(field, f"must be an integer, not {text!r}") from None
    if minimum is not None and value < minimum:
        raise InvalidQuery(field, f"must be at least {minimum}, not {text!r}")
    return value


def parse_number(text: str, option: str) -> float:
    """A decimal number; its range is the core's to check."""
    try:
        return float(text)
    except ValueError:
        raise CliError(f"{option}: must be a number, not {text!r}") from None


def parse_path(text: str, option: str) -> str:
    """A file path the command reads or appends to; a NUL byte cannot be in one."""
    if "\x00" in text:
        raise CliError(f"{option}: a path cannot contain a NUL character")
    return text


def parse_file_to_read(text: str, option: str) -> str:
    """The path of an existing file, checked before any store is opened."""
    path = Path(parse_path(text, option))
    try:
        if path.is_dir():
            raise CliError(f"{option}: {text} is a directory, not a file")
        if not path.is_file():
            raise CliError(f"{option}: no such file: {text}")
    except OSError as exc:  # a name too long, for one
        raise CliError(f"{option}: cannot use {text}: {exc.strerror or exc}") from None
    return text


def parse_file_to_write(text: str, option: str) -> str:
    """The path of a file the command appends to, or creates in an existing directory.

    Checked before any store is opened, so nothing is pruned or created for a file that cannot be.
    """
    path = Path(parse_path(text, option))
    try:
        if path.is_dir():
            raise CliError(f"{option}: {text} is a directory, not a file")
        if not path.exists():
            if not path.absolute().parent.is_dir():
                raise CliError(f"{option}: the directory {path.parent} does not exist")
            writable = os.access(path.absolute().parent, os.W_OK | os.X_OK)
        else:
            writable = os.access(path, os.W_OK)
    except OSError as exc:  # a name too long, for one
        raise CliError(f"{option}: cannot use {text}: {exc.strerror or exc}") from None
    if not writable:
        raise CliError(f"{option}: {text} cannot be written (permission denied)")
    return text


def check_record(args: argparse.Namespace, actor: Actor, payload: dict[str, object] | None) -> None:
    """Every field `record` was given, checked as the core checks it, before any store is opened."""
    from sessionwatch.adapters.app.clock import SystemClock  # noqa: PLC0415 - loads the models
    from sessionwatch.domain.recording import check_signal  # noqa: PLC0415

    check_signal(
        session_key=args.key,
        agent_id=args.agent,
        kind=args.kind,
        actor_type=actor.actor_type,
        actor_id=actor.actor_id,
        summary=args.summary,
        payload=payload,
        run_id=args.run_id,
        dedupe_key=args.dedupe_key,
        watchers=tuple(args.watchers or ()),
        now=SystemClock().now(),
    )


def naming_the_option(exc: ValidationError, args: argparse.Namespace) -> str:
    """A settings model's first error (`Retention`), naming the option that sets the field and its value."""
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    reason = error["msg"][:1].lower() + error["msg"][1:]
    flag = flag_of(field, args)
    if flag is None:
        return f"{field}: {reason}"
    given = getattr(args, _FIELD_FLAGS[field.split(".", 1)[0]][0])
    return f"{flag}: {reason}, not {given!r}"


_READ_BY = {"import": "FILE", "import-openclaw": "PATH"}
"""The argument naming the file each importer reads."""


def naming_the_source(exc: Exception, args: argparse.Namespace) -> str:
    """An import refused: for a store that already holds history, `--db`; else the file it read."""
    from sessionwatch.adapters.stores.port import StoreNotEmptyError  # noqa: PLC0415 - loads the models

    message = str(exc)
    if isinstance(exc.__cause__, StoreNotEmptyError):
        return naming_the_store(message, args)
    argument = _READ_BY.get(getattr(args, "command", ""))
    if argument is None or message.startswith(f"{argument}:"):
        return message
    return f"{argument}: {message}"


# ------------------------------------------------------------------------------------- formatting


def _actor_text(actor_type: str, actor_id: str | None) -> str:
    return f"{actor_type} {actor_id}" if actor_id else actor_type


def format_signal(signal: Signal) -> str:
    """One line: sequence, kind, session, actor, summary."""
    import json  # noqa: PLC0415 - the parser needs none

    payload = f" {json.dumps(signal.payload, sort_keys=True)}" if signal.payload else ""
    return (
        f"recorded #{signal.sequence} {signal.kind.value} on {signal.session_key} "
        f"(agent {signal.agent_id}) by {_actor_text(signal.actor_type, signal.actor_id)}: "
        f"{signal.summary}{payload}"
    )


def format_duplicate(signal: Signal, dedupe_key: str, summary: str) -> str:
    """One line: nothing recorded, the dedupe key's retained signal answered (`summary` was not kept)."""
    answered = format_signal(signal).removeprefix("recorded ")
    dropped = "" if summary == signal.summary else f" ({summary!r} not kept)"
    return f"duplicate dedupe key {dedupe_key!r}: nothing recorded{dropped}; it answers {answered}"


def format_status(status: SessionStatus) -> str:
    """The head, then one line per change when a delta was asked for."""
    import json  # noqa: PLC0415 - the parser needs none

    lines = [status_line(status.session_key, status.state_version)]
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


def status_line(session_key: str, state_version: int) -> str:
    """A session's head as `status` prints it."""
    return f"{session_key}  stateVersion {state_version}"


def format_watching(cursor: Cursor, *, before: Cursor | None) -> str:
    """The `watch` answer: who watches what, from which sequence, ambient or promoted, a pending notice."""
    already = before is not None
    line = (
        f"watching: {cursor.watcher} {'already watches' if already else 'watches'} {cursor.target} "
        f"(agent {cursor.target_agent_id}), last seen {cursor.last_seen}"
    )
    if cursor.provenance == "ambient":
        line += ", ambient (never woken)"
    if before is not None and before.provenance != cursor.provenance:
        line += ", promoted to an explicit watch, its positions kept"
    elif already:
        line += ", cursor untouched"
    if cursor.notified > cursor.last_seen:
        line += f", a notice is pending (changesSince {cursor.last_seen})"
    return line


def format_watched(watcher: str, cursors: Sequence[Cursor]) -> str:
    """One line per watched session, in target order: its agent, `L`, `N`, `M`, a pending notice, ambient."""
    if not cursors:
        return f"{watcher} watches no session"
    width = max(len(cursor.target) for cursor in cursors)
    lines = []
    for cursor in cursors:
        pending = f"  notice pending (changesSince {cursor.last_seen})" if cursor.pending else ""
        ambient = "  ambient (never woken)" if cursor.provenance == "ambient" else ""
        lines.append(
            f"{cursor.target:<{width}}  agent {cursor.target_agent_id}  last seen {cursor.last_seen}  "
            f"notified {cursor.notified}  material {cursor.material}{pending}{ambient}"
        )
    return "\n".join(lines)


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
    from sessionwatch.projections.audit import VIOLATION_KINDS  # noqa: PLC0415 - loads the models

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
    """One line per session; `stateVersion` only when the head is above 0 (nothing recorded yet)."""
    if not rows:
        return "no sessions"
    width = max(len(row.session_key) for row in rows)
    lines = []
    for row in rows:
        version = f"  stateVersion {row.state_version}" if row.state_version is not None else ""
        lines.append(f"{row.session_key:<{width}}  agent {row.agent_id}  kind {row.kind}{version}")
    return "\n".join(lines)
