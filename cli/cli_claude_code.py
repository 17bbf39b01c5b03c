"""`sessionwatch claude-code hook | install | mcp`: Claude Code's hook, its project set-up, its server.

A thin shell over `sessionwatch.integrations.claude_code` (loaded when a command runs, so the rest of
the command line does not pay for it). `hook` always exits 0 and prints either nothing or one JSON
object: a hook that failed must not block or fail the prompt, so its one error line goes to stderr.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from sessionwatch.cli.cli_codes import StoreUse
from sessionwatch.cli.cli_text import EXIT_OK, CliError, naming_the_store

if TYPE_CHECKING:
    from sessionwatch.integrations.claude_code_socket import HookListener

SESSIONS_OF_THE_PROJECT = "agent"
"""The server's visibility unless `--visibility` is passed on: a project's sessions are one agent,
and no Claude Code session spawned another, so the default (its own spawn tree) would show none."""

Parser = TypeVar("Parser", bound=argparse.ArgumentParser)


def fill_commands(host: Parser, common: list[Parser], run_command_line: Callable[[list[str]], int]) -> None:
    """Fill `claude-code` with its three sub-commands; `mcp` runs `run_command_line(["mcp", ...])`."""
    host.description = (
        "Connect Claude Code sessions to sessionwatch: `install` adds the hook to a "
        "project's .claude/settings.json and the MCP server to its .mcp.json; Claude Code then "
        "runs `hook` at SessionStart, UserPromptSubmit, Stop and SessionEnd, and starts `mcp` for "
        "each session."
    )
    actions = host.add_subparsers(dest="claude_code_command", metavar="COMMAND", required=True)
    _leaf(
        actions,
        common,
        "hook",
        hook_command,
        help="the command hook Claude Code runs (JSON on stdin); always exits 0",
        description="Read one hook input from stdin. Every event reads the session's transcript on "
        "from where the last one stopped and records a human_direct_message for the turns a person "
        "typed there (the transcript provider's rule). SessionStart registers the session under "
        "agent:<project>:claude-code:<session_id> (a /clear continues the key of the session it "
        "ended) and tells it its key; UserPromptSubmit prints the session's pending notices as "
        "additionalContext and acknowledges them. Any failure prints nothing on stdout, one line on "
        "stderr, and exits 0. The store: --db, else $SESSIONWATCH_URL, else sessionwatch.db in "
        "$CLAUDE_PROJECT_DIR.",
    )
    install = _leaf(
        actions,
        common,
        "install",
        install_command,
        help="add the hook and the MCP server to a project (idempotent)",
        description="Add the hook for SessionStart, UserPromptSubmit, Stop and SessionEnd to "
        "DIR/.claude/settings.json and the `sessionwatch` server to DIR/.mcp.json. Running it again "
        "changes nothing (and upgrades an earlier install to these events); the "
        "files' other content is kept byte for byte. A file that is not a JSON object stops the "
        "install before anything is written. Without --db the hook and the server use "
        "$SESSIONWATCH_URL, else sessionwatch.db in the project directory.",
    )
    install.add_argument("--project", metavar="DIR", default=".", help="the project directory (default .)")
    install.add_argument(
        "--program",
        metavar="PATH",
        default="sessionwatch",
        help="the sessionwatch executable the hook and the server run (default: sessionwatch, from PATH)",
    )
    server = _leaf(
        actions,
        common,
        "mcp",
        mcp_command,
        help="run `sessionwatch mcp` for the Claude Code session that started it",
        description="The .mcp.json entry: the session's key from $CLAUDE_CODE_SESSION_ID and "
        "$CLAUDE_PROJECT_DIR (Claude Code sets both for the stdio servers it starts), served by "
        "`sessionwatch mcp --session KEY --transport stdio --visibility agent` (the project's "
        "sessions) with the same store; the session is registered at its first tool call, so a "
        "health check (`claude mcp list`) registers nothing. Options after `--` are passed on to "
        "`sessionwatch mcp`.",
    )
    server.set_defaults(run_command_line=run_command_line)
    server.add_argument(
        "mcp_options", nargs=argparse.REMAINDER, metavar="-- MCP_OPTION", help=argparse.SUPPRESS
    )


def _leaf(
    actions: argparse._SubParsersAction[Parser],
    common: list[Parser],
    name: str,
    handler: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
) -> Parser:
    command = actions.add_parser(name, parents=common, allow_abbrev=False, help=help, description=description)
    command.set_defaults(handler=handler, store_use=StoreUse.OWN)
    return command


def hook_command(args: argparse.Namespace) -> int:
    """`claude-code hook`: one hook input on stdin, at most one JSON object on stdout, exit 0.

    The front end decides whether there is anything to do and who does it (`claude_code_front`).
    """
    from sessionwatch.integrations.claude_code_front import run  # noqa: PLC0415 - loaded when it runs

    run(args.db)
    return EXIT_OK


def install_command(args: argparse.Namespace) -> int:
    """`claude-code install`: the hook and the server into the project's files."""
    from sessionwatch.integrations.claude_code_install import InstallError, describe, install  # noqa: PLC0415

    if args.db is not None:
        _check_lasting_store(args.db)
    project = Path(args.project).absolute()
    if not project.is_dir():
        raise CliError(f"--project: {project} is not a directory")
    if not args.program.strip():
        raise CliError("--program: must name the sessionwatch executable, not be empty")
    try:
        results = install(project, db=args.db, program=args.program)
    except InstallError as exc:
        raise CliError(str(exc)) from None
    for line in describe(results, project):
        print(line)
    return EXIT_OK


def _check_lasting_store(db: str) -> None:
    """Refuse a store the hooks could not share: unparsable, in-memory, or a relative SQLite path."""
    from sessionwatch.adapters.stores.urls import parse_url  # noqa: PLC0415 - the parser needs no URL code

    parsed = parse_url(db)  # a URL that could never open is refused before it is written down
    if parsed.scheme == "memory":
        raise CliError("--db: memory:// ends with each hook's process; name a SQLite file or PostgreSQL")
    if parsed.scheme == "sqlite" and not Path(parsed.path).is_absolute():
        raise CliError(
            f"--db: {db!r} is relative, so it would depend on the directory Claude Code runs each hook "
            "in; give an absolute path, or leave --db out for sessionwatch.db in the project"
        )


def mcp_command(args: argparse.Namespace) -> int:
    """`claude-code mcp`: serve this session with `sessionwatch mcp` (registered at its first tool call)."""
    from sessionwatch.adapters.stores.port import StoreError  # noqa: PLC0415 - loads the models
    from sessionwatch.integrations.claude_code import (  # noqa: PLC0415
        HookInputError,
        served_key,
        server_session_key,
    )

    try:
        url, key = served_key(args.db, os.environ)
        natural, session_id = server_session_key(os.environ)
    except HookInputError as exc:
        raise CliError(str(exc)) from None
    except StoreError as exc:  # the store the session's hook and server share cannot be opened
        raise CliError(naming_the_store(str(exc), args)) from None
    passed = list(args.mcp_options)
    if passed[:1] == ["--"]:
        passed = passed[1:]
    if not any(option.split("=")[0] == "--visibility" for option in passed):
        passed = ["--visibility", SESSIONS_OF_THE_PROJECT, *passed]
    run: Callable[[list[str]], int] = args.run_command_line
    listener = _answer_the_hook(natural, session_id)
    try:
        return run(
            ["mcp", *(["--db", url] if url else []), "--session", key, "--transport", "stdio", *passed]
        )
    finally:
        if listener is not None:
            listener.close()


def _answer_the_hook(natural: str, session_id: str) -> HookListener | None:
    """While the server runs, it answers the session's hook on its private socket (warm, in this process)."""
    from sessionwatch.domain.keys import resolve_identity  # noqa: PLC0415
    from sessionwatch.integrations.claude_code import run_hook  # noqa: PLC0415
    from sessionwatch.integrations.claude_code_socket import listen  # noqa: PLC0415

    def hook(stdin_text: str, db: str | None, environ: Mapping[str, str], log: Callable[[str], None]) -> str:
        return run_hook(stdin_text, db=db, environ=environ, log=log)

    return listen(os.environ, resolve_identity(natural).agent_id, session_id, hook)
