"""`sessionwatch codex hook | install | mcp`: Codex's hook, its project set-up, its MCP server.

A thin shell over `sessionwatch.integrations.codex` (loaded when a command runs). `hook` always
exits 0 and prints either nothing or one JSON object: a hook that failed must not block or fail a
turn, so its one error line goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sessionwatch.cli.cli_codes import StoreUse
from sessionwatch.cli.cli_mcp import VISIBILITIES
from sessionwatch.cli.cli_text import EXIT_OK, PROG, CliError, one_line

HOOK_LOG_PREFIX = f"{PROG} codex hook"

Parser = TypeVar("Parser", bound=argparse.ArgumentParser)


def fill_commands(host: Parser, common: list[Parser]) -> None:
    """Fill `codex` with its three sub-commands."""
    host.description = (
        "Connect Codex sessions to sessionwatch: `install` adds the hook to a project's "
        ".codex/hooks.json, the MCP server to its .codex/config.toml and the hooks' trust to Codex's own "
        "config.toml; Codex then runs `hook` at its lifecycle events and starts `mcp` for its sessions."
    )
    actions = host.add_subparsers(dest="codex_command", metavar="COMMAND", required=True)
    _leaf(
        actions,
        common,
        "hook",
        hook_command,
        help="the command hook Codex runs (JSON on stdin); always exits 0",
        description="Read one hook input from stdin. Every event follows the session's rollout and "
        "records what a person did there (typed prompts, images, shell commands, slash commands, "
        "answers to the agent's questions) as human_direct_message, once; SessionStart registers the "
        "session under agent:<project>:codex:<session_id> and tells it its key; UserPromptSubmit prints "
        "the session's pending notices as additionalContext and acknowledges them. Any failure prints "
        "nothing on stdout, one line on stderr, and exits 0. The store: --db, else $SESSIONWATCH_URL, "
        "else sessionwatch.db in the session's working directory.",
    )
    install = _leaf(
        actions,
        common,
        "install",
        install_command,
        help="add the hook and the MCP server to a project, trusted (idempotent)",
        description="Add the hook for SessionStart, UserPromptSubmit, Stop, PostCompact and SessionEnd "
        "to DIR/.codex/hooks.json, the `sessionwatch` server to DIR/.codex/config.toml, and the hooks' "
        "trust (the hashes Codex records when a person trusts them) to config.toml in the Codex home. "
        "Running it again changes nothing; the files' other content is kept byte for byte. A file that "
        "is not JSON or TOML stops the install before anything is written. Codex reads DIR/.codex/ "
        "only once the project is trusted.",
    )
    install.add_argument("--project", metavar="DIR", default=".", help="the project directory (default .)")
    install.add_argument(
        "--codex-home",
        metavar="DIR",
        help="Codex's home, whose config.toml records the trust (default: $CODEX_HOME, else ~/.codex)",
    )
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
        help="serve the session tools to the Codex sessions of the project it starts in",
        description="The config.toml server: each tool call is served as the Codex session its _meta "
        "names (agent:<project>:codex:<session id>, registered on its first call; the project is the "
        "working directory Codex starts the server in). Needs the mcp extra.",
    )
    server.set_defaults(store_use=StoreUse.CREATE)  # a store the server may start, checked before it serves
    server.add_argument(
        "--visibility",
        choices=VISIBILITIES,
        default="agent",
        help="which sessions the tools show (default agent: every session of the project)",
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
    """`codex hook`: one hook input on stdin, at most one JSON object on stdout, exit 0."""
    from sessionwatch.integrations.codex import run_hook  # noqa: PLC0415 - loaded when it runs

    def log(message: str) -> None:
        try:
            print(f"{HOOK_LOG_PREFIX}: {one_line(message)}", file=sys.stderr, flush=True)
        except OSError:  # no stderr to log to: the turn goes on all the same
            return

    try:
        stdin_text = sys.stdin.buffer.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log(f"stdin: cannot be read as UTF-8 ({type(exc).__name__}); nothing was added to the session")
        return EXIT_OK
    output = run_hook(stdin_text, db=args.db, environ=os.environ, log=log)
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except OSError as exc:
        log(f"stdout: cannot be written ({type(exc).__name__})")
    return EXIT_OK


def install_command(args: argparse.Namespace) -> int:
    """`codex install`: the hook, the server and their trust into the files Codex reads."""
    from sessionwatch.integrations.claude_code_install import InstallError  # noqa: PLC0415
    from sessionwatch.integrations.codex_install import (  # noqa: PLC0415 - loaded when it runs
        codex_home,
        describe,
        install,
        project_trusted,
    )

    if args.db is not None:
        _check_lasting_store(args.db)
    project = Path(args.project).absolute()
    if not project.is_dir():
        raise CliError(f"--project: {project} is not a directory")
    if not args.program.strip():
        raise CliError("--program: must name the sessionwatch executable, not be empty")
    home = Path(args.codex_home).absolute() if args.codex_home else codex_home(os.environ)
    if home.exists() and not home.is_dir():
        raise CliError(f"--codex-home: {home} is not a directory")
    try:
        results = install(project, home=home, db=args.db, program=args.program)
    except InstallError as exc:
        raise CliError(str(exc)) from None
    for line in describe(results, project, home, trusted=project_trusted(project, home)):
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
            f"--db: {db!r} is relative, so it would depend on the directory Codex runs each hook in; give "
            "an absolute path, or leave --db out for sessionwatch.db in the project"
        )


def mcp_command(args: argparse.Namespace) -> int:
    """`codex mcp`: serve the project's Codex sessions over stdio until Codex closes it."""
    try:
        from sessionwatch.integrations import codex_mcp  # noqa: PLC0415 - the extra loads only for this command
    except ImportError as exc:
        from sessionwatch.adapters.extras import install_hint  # noqa: PLC0415 - the error path only

        missing = exc.name or exc
        raise CliError(
            f"codex mcp needs the mcp extra ({missing} is missing): {install_hint('mcp')}"
        ) from None
    options = codex_mcp.CodexServerOptions(
        db=args.db, project=Path.cwd(), environ=dict(os.environ), visibility=args.visibility
    )
    codex_mcp.run(options)
    return EXIT_OK
