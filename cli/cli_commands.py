"""The `sessionwatch` sub-commands: each reads its arguments, calls `SessionWatch`, prints its answer.

A thin shell: every rule lives in the core. A reading command opens an existing store (the
command line checks the file first, `cli_store`) and a command prints only the wakes of its own writes.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sessionwatch.cli.cli_progress import counted, progress
from sessionwatch.cli.cli_text import (
    EXIT_NO,
    EXIT_OK,
    PROG,
    CliError,
    check_record,
    format_audit,
    format_duplicate,
    format_prune,
    format_rows,
    format_signal,
    format_status,
    format_sweep,
    format_watched,
    format_watching,
    naming_the_option,
    parse_actor,
    parse_file_to_read,
    parse_file_to_write,
    parse_integer,
    parse_number,
    parse_payload,
    print_json,
)
from sessionwatch.domain.errors import InvalidQuery, UnknownSession
from sessionwatch.domain.keys import SessionIdentity, check_agent_id, check_key, resolve_identity

if TYPE_CHECKING:  # each command imports what it runs when it runs (ADR-0067)
    from sessionwatch.adapters.entry.watch import SessionWatch
    from sessionwatch.domain.ports import Waker
    from sessionwatch.domain.retention import Retention
    from sessionwatch.projections.models import Notice


def _open_existing(
    args: argparse.Namespace, *, waker: Waker | None = None, retention: Retention | None = None
) -> SessionWatch:
    """Open an existing store, unswept (the command line checked first that it is one: `StoreGuard`)."""
    from sessionwatch.adapters.entry.watch_open import open_watch  # noqa: PLC0415

    # A command prints the wakes of its own writes only, never those of other processes.
    return open_watch(
        args.db,
        waker=waker,
        sweep_on_open=False,
        retention=retention,
        cross_process_wakes=False,
        notify_terminal_runs=args.notify_terminal_runs,
    )


class WakeRequests:
    """A `Waker` that keeps the wake requests so the command can print them."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def wake(self, watcher_key: str, reason: str) -> None:
        """Keep one request."""
        self.requests.append((watcher_key, reason))


# --------------------------------------------------------------------------------------- commands


def status_command(args: argparse.Namespace) -> int:
    """`status KEY`: the head, and with `--since` the delta (with `--as-of`, as it was then)."""
    since = None if args.since is None else parse_integer(args.since, "changes_since")
    limit = parse_integer(args.limit, "limit", minimum=1)
    if args.archive is not None and args.as_of is None:
        raise CliError("--archive: only with --as-of")
    archive = None if args.archive is None else parse_file_to_read(args.archive, "--archive")
    as_of = None if args.as_of is None else parse_integer(args.as_of, "as_of")
    with _open_existing(args) as watch:
        if as_of is None:
            status = watch.session_status(args.key, changes_since=since, limit=limit, agent_id=args.agent)
        else:
            # A file that is not a prune archive is an InvalidQuery naming `archive`.
            status = watch.status_as_of(
                args.key, as_of, changes_since=since, limit=limit, agent_id=args.agent, archive=archive
            )
    if args.json:
        print_json(status.to_json())
    else:
        print(format_status(status))
    return EXIT_OK


def audit_command(args: argparse.Namespace) -> int:
    """`audit`: replay the event store and diff the read models (exit 1 on any violation)."""
    with _open_existing(args) as watch, progress("audit", "events replayed") as count:
        report = watch.audit(progress=count)
    if args.json:
        print_json(report.to_json())
    else:
        print(format_audit(report))
    return EXIT_OK if report.ok else EXIT_NO


def export_command(args: argparse.Namespace) -> int:
    """`export`: the history as JSON Lines on stdout, the same bytes whether a terminal shows progress."""
    from sessionwatch.adapters.history.jsonl import export_history  # noqa: PLC0415

    out = sys.stdout  # looked up once, before any display starts
    with _open_existing(args) as watch, progress("export", "events written", output=out) as count:
        export_history(watch.store, out, progress=count)
    return EXIT_OK


CHECK_ELSEWHERE_FROM = 8 << 20
"""From this many bytes on, `import` checks the lines in a second process (about 16,000 events):
below it, starting one costs more than it saves."""


def _open_to_import(args: argparse.Namespace) -> SessionWatch:
    """The target store of an import, opened as it is: no sweep writes to it, no wake is heard."""
    from sessionwatch.adapters.entry.watch_open import open_watch  # noqa: PLC0415

    return open_watch(
        args.db,
        notify_terminal_runs=args.notify_terminal_runs,
        sweep_on_open=False,
        cross_process_wakes=False,
    )


def import_command(args: argparse.Namespace) -> int:
    """`import FILE`: load an exported history into a new, empty store.

    The file is checked whole against its trailer before the store is opened, so a cut or changed
    file creates no store; the import then checks every line (and the trailer again) as it loads.
    """
    from sessionwatch.adapters.history.jsonl import check_history, import_history  # noqa: PLC0415
    from sessionwatch.domain.signals import notifying_kinds  # noqa: PLC0415

    source = Path(args.file)
    if not source.is_file():
        raise CliError(f"FILE: no such file: {source}")
    try:
        with source.open(encoding="utf-8") as lines:
            check_history(lines)
        with (
            _open_to_import(args) as watch,
            source.open(encoding="utf-8") as lines,
            progress("import", "lines read") as count,
        ):
            big = source.stat().st_size >= CHECK_ELSEWHERE_FROM
            notifying = notifying_kinds(terminal_runs=args.notify_terminal_runs)
            report = import_history(
                watch.store, counted(lines, count), check_elsewhere=big, notifying=notifying
            )
    except UnicodeDecodeError:  # found while checking the lines, before anything is written
        raise CliError(f"FILE: {source} is not UTF-8 text") from None
    if args.json:
        import dataclasses  # noqa: PLC0415 - loaded by the import, as it runs

        print_json(dataclasses.asdict(report))
    else:
        print(
            f"imported {report.events} stored events: {report.sessions} sessions, {report.signals} signals, "
            f"{report.cursors} cursors, {report.links} upstream links; sequence counter at {report.sequence}"
        )
    if report.version == 1:
        print(
            f"{PROG}: warning: {source} is a version 1 history (sessionwatch 0.1.0), which has no trailer:"
            " a cut at a line boundary cannot be told in it; export the new store again to get one",
            file=sys.stderr,
        )
    return EXIT_OK


def import_openclaw_command(args: argparse.Namespace) -> int:
    """`import-openclaw PATH`: carry a reference gateway's state database into the store."""
    from sessionwatch.adapters.app.clock import SystemClock  # noqa: PLC0415
    from sessionwatch.adapters.history.openclaw import import_openclaw  # noqa: PLC0415
    from sessionwatch.domain.signals import to_epoch_ms  # noqa: PLC0415

    if not Path(args.path).is_file():  # found before the target store is opened: nothing is created
        raise CliError(f"PATH: no reference database at {args.path}")
    with (
        _open_to_import(args) as watch,
        progress("import-openclaw") as _,
    ):
        report = import_openclaw(watch.store, args.path, now_ms=to_epoch_ms(SystemClock().now()))
    if args.json:
        print_json(report.to_json())
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
        if report.ambient_cursors:
            print(f"{report.ambient_cursors} ambient cursors kept ambient (their notices never wake)")
        for path in report.watcher_store_paths:
            print(f"ignored watcher store path (one store holds every cursor here): {path}")
        if not skipped:
            print("every cursor carried over; run `sessionwatch audit` on the result")
    return EXIT_OK


def list_command(args: argparse.Namespace) -> int:
    """`list`: the known sessions, with their heads."""
    from sessionwatch.domain.tools.session_keys import listed_kind  # noqa: PLC0415

    agent = None if args.agent is None else check_agent_id(args.agent)
    with _open_existing(args) as watch:
        stored = watch.sessions_list(agent_id=agent)
    # the kind the session tools list it with (the MCP server's sessions_list), not the stored default
    rows = [row.model_copy(update={"kind": listed_kind(row.session_key, row.kind)}) for row in stored]
    if args.json:
        print_json([row.to_json() for row in rows])
    else:
        print(format_rows(rows))
    return EXIT_OK


def record_command(args: argparse.Namespace) -> int:
    """`record KIND KEY`: one signal through the strict API."""
    from sessionwatch.adapters.entry.watch_open import open_watch  # noqa: PLC0415

    actor = parse_actor(args.actor)
    payload = parse_payload(args.payload)
    check_record(args, actor, payload)
    with open_watch(args.db, notify_terminal_runs=args.notify_terminal_runs, sweep_on_open=False) as watch:
        counter = watch.store.last_sequence()
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
    # A duplicate dedupe key answers with the retained signal: it has no fresh sequence (every write
    # takes one above the counter), or it is not the signal asked for (another writer's, meanwhile).
    duplicate = args.dedupe_key is not None and (signal.sequence <= counter or signal.summary != args.summary)
    if args.json:
        print_json({"duplicate": True, **signal.to_json()} if duplicate else signal.to_json())
    elif duplicate:
        print(format_duplicate(signal, args.dedupe_key, args.summary))
    else:
        print(format_signal(signal))
    return EXIT_OK


def _target(args: argparse.Namespace) -> SessionIdentity:
    """The target identity: its agent from an agent-qualified key, else from --agent (bad input)."""
    return resolve_identity(args.target, args.agent, "target_key")


def _refusal(watcher: str, target: SessionIdentity) -> str:
    """Why `SessionWatch.watch` said no, for the one `refused:` line (the core decided)."""
    from sessionwatch.domain.watch_cursor import why_never_notified  # noqa: PLC0415

    return why_never_notified(watcher) or f"{target.session_key} cannot watch itself"


def _watcher(args: argparse.Namespace) -> str:
    """WATCHER, when it is a key that can hold cursors; else bad input naming WATCHER (store unopened)."""
    from sessionwatch.domain.watch_cursor import why_never_notified  # noqa: PLC0415

    watcher = check_key(args.watcher, "watcher_key")
    reason = why_never_notified(watcher)
    if reason is not None:
        raise InvalidQuery("watcher_key", reason)
    return watcher


def _known(watch: SessionWatch, watcher: str) -> None:
    """A watcher with no session and no cursor is unknown, as `status` says of a key it does not know."""
    if watch.registry_entry(watcher) is None and not watch.watched_by(watcher):
        raise UnknownSession(watcher)


def watch_command(args: argparse.Namespace) -> int:
    """`watch WATCHER TARGET`: register a watch at the head (exit 1, nothing written, when refused)."""
    from sessionwatch.adapters.entry.watch_open import open_watch  # noqa: PLC0415

    check_key(args.watcher, "watcher_key")
    target = _target(args)
    with open_watch(args.db, notify_terminal_runs=args.notify_terminal_runs, sweep_on_open=False) as watch:
        before = watch.cursor(args.watcher, target.session_key, target_agent_id=target.agent_id)
        watched = watch.watch(
            args.watcher, target.session_key, target_agent_id=target.agent_id, ambient=args.ambient
        )
        cursor = watch.cursor(args.watcher, target.session_key, target_agent_id=target.agent_id)
    ids = {"watcher": args.watcher.strip(), "target": target.session_key, "targetAgentId": target.agent_id}
    if not watched:
        reason = _refusal(args.watcher, target)
        if args.json:
            print_json({"watched": False, **ids, "reason": reason})
        else:
            print(f"refused: {reason}")
        return EXIT_NO
    if cursor is None:
        raise RuntimeError("watch: the watch was registered but its cursor cannot be read back")
    if args.json:
        print_json({"watched": True, "alreadyWatching": before is not None, **cursor.to_json()})
    else:
        print(format_watching(cursor, before=before))
    return EXIT_OK


def unwatch_command(args: argparse.Namespace) -> int:
    """`unwatch WATCHER TARGET`: remove a watch."""
    watcher = _watcher(args)
    target = _target(args)
    with _open_existing(args) as watch:
        removed = watch.unwatch(watcher, target.session_key, target_agent_id=target.agent_id)
    if args.json:
        print_json(
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


def watched_command(args: argparse.Namespace) -> int:
    """`watched WATCHER`: the watcher's cursors, or with `--prompt` its system-prompt block."""
    watcher = _watcher(args)
    with _open_existing(args) as watch:
        cursors = watch.watched_by(watcher)
        if not cursors:
            _known(watch, watcher)
        prompt = watch.watch_prompt(watcher) if args.prompt else None
    if prompt is not None:
        if args.json:
            print_json({"prompt": prompt})
        elif prompt:
            print(prompt)
    elif args.json:
        print_json([{**cursor.to_json(), "pending": cursor.pending} for cursor in cursors])
    else:
        print(format_watched(watcher, cursors))
    return EXIT_OK


def _print_notices(notices: Sequence[Notice], *, as_json: bool) -> None:
    """One notice line per notice (nothing for none), or the JSON list."""
    if as_json:
        print_json([notice.to_json() for notice in notices])
        return
    for notice in notices:
        print(notice.text)


def notices_command(args: argparse.Namespace) -> int:
    """`notices WATCHER`: the pending notices, nothing acknowledged."""
    watcher = _watcher(args)
    with _open_existing(args) as watch:
        notices = watch.pending_notices(watcher)
        if not notices:
            _known(watch, watcher)
    _print_notices(notices, as_json=args.json)
    return EXIT_OK


def drain_command(args: argparse.Namespace) -> int:
    """`drain WATCHER`: the pending notices, acknowledged."""
    watcher = _watcher(args)
    with _open_existing(args) as watch:
        notices = watch.drain(watcher)
        if not notices:  # nothing was pending, so nothing was written
            _known(watch, watcher)
    _print_notices(notices, as_json=args.json)
    return EXIT_OK


def sweep_command(args: argparse.Namespace) -> int:
    """`sweep`: the restart sweep, and the wakes it asked for."""
    wakes = WakeRequests()
    with _open_existing(args, waker=wakes) as watch:
        report = watch.sweep()
    if args.json:
        print_json(report.to_json())
    else:
        print(format_sweep(report))
        for watcher, reason in wakes.requests:
            print(f"wake {watcher} ({reason})")
    return EXIT_OK


def prune_command(args: argparse.Namespace) -> int:
    """`prune`: prune to the retention given by the options."""
    from pydantic import ValidationError  # noqa: PLC0415

    from sessionwatch.domain.retention import Retention  # noqa: PLC0415

    days = parse_number(args.days, "--days")
    max_signals = parse_integer(args.max_signals, "max_signals")
    archive = None if args.archive is None else parse_file_to_write(args.archive, "--archive")
    try:
        policy = Retention(days=days, max_signals=max_signals, archive=archive)
    except ValidationError as exc:
        raise CliError(naming_the_option(exc, args)) from None
    with _open_existing(args, retention=policy) as watch, progress("prune") as _:
        report = watch.prune(force=True)
    if policy.archive is not None:
        _touch(policy.archive)
    if args.json:
        print_json(report.to_json())
    else:
        print(format_prune(report))
    return EXIT_OK


def _touch(path: str | Path) -> None:
    """Create the archive a prune was given, empty when nothing was pruned: the next command reads it."""
    os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))


def _this_command() -> str:
    """How to run `sessionwatch` again from here, as this process was run (so it pastes as printed).

    After `make demo` that is `.venv/bin/sessionwatch`: the console script is not on PATH.
    """
    import shlex  # noqa: PLC0415 - the demo alone prints it
    import shutil  # noqa: PLC0415

    script = sys.argv[0] if sys.argv else ""
    if Path(script).name == "sessionwatch":
        found = shutil.which("sessionwatch")
        if found is not None and Path(found).resolve() == Path(script).resolve():
            return "sessionwatch"
        return shlex.quote(script)
    return f"{shlex.quote(sys.executable)} -m sessionwatch"


def demo_command(args: argparse.Namespace) -> int:
    """`demo`: the multi-agent story on a SQLite file (exit 1 when its closing checks fail)."""
    from sessionwatch.cli.demo import run_demo  # noqa: PLC0415

    report = run_demo(args.db, sys.stdout, as_json=args.json, verbose=args.verbose, command=_this_command())
    return EXIT_OK if report.ok else EXIT_NO
