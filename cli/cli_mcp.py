"""The `sessionwatch mcp` command: serve one calling session over MCP (the server is in `integrations`).

Shell code only: parse the options, check the session key, the exposure and the extra, hand over to
the server. Without the `mcp` extra the command exits 2 naming the install line. HTTP on a host other
than loopback needs a bearer token (`--token` or `$SESSIONWATCH_MCP_TOKEN`), which is never printed.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Final

from sessionwatch.cli.cli_codes import StoreUse
from sessionwatch.cli.cli_text import EXIT_OK, PROG, CliError
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.keys import resolve_identity
from sessionwatch.integrations.mcp_auth import TOKEN_ENV, ExposureError, check_exposure, check_token

VISIBILITIES: Final = ("self", "tree", "agent", "all")


def fill_mcp(mcp: argparse.ArgumentParser) -> None:
    """Fill `mcp`, the command line's sub-command (the global options are there already)."""
    mcp.description = (
        "An MCP server for one calling session (--session): the tools session_status, "
        "sessions_list, sessions_watch, sessions_unwatch and session_notices, and the resource "
        "sessionwatch://notices/SESSION, whose subscribers hear (notifications/resources/updated) when "
        "a notice opens for the session. Another process's records reach it at once on PostgreSQL, and "
        "within --poll-interval seconds on SQLite. Needs the mcp extra (the official MCP SDK)."
    )
    mcp.set_defaults(handler=mcp_command, store_use=StoreUse.CREATE)
    mcp.add_argument(
        "--session",
        required=True,
        metavar="KEY",
        help="the calling session the server serves, agent:ID:REST (a bare key needs --agent, and is "
        "never notified); registered in the store at its first tool call if it is new",
    )
    mcp.add_argument(
        "--agent", metavar="ID", help="the session's agent id (required for a bare --session key)"
    )
    mcp.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: the client starts this command) or http (Streamable HTTP at http://HOST:PORT/mcp)",
    )
    mcp.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address HTTP listens on (default 127.0.0.1: this machine only); any address other "
        "than loopback needs a bearer token (--token)",
    )
    mcp.add_argument(
        "--token",
        metavar="TOKEN",
        help="the bearer token every HTTP request must carry (Authorization: Bearer TOKEN, else 401); "
        "at least 16 characters; required with a --host other than loopback. Prefer the environment "
        f"variable {TOKEN_ENV}: a command-line argument shows in the process list",
    )
    mcp.add_argument(
        "--port",
        default="8000",
        metavar="N",
        help="the HTTP port (default 8000; 0: any free port, printed on stderr)",
    )
    mcp.add_argument(
        "--poll-interval",
        default="2",
        metavar="SECONDS",
        help="how often to read the session's pending notices, for records no wake announces (another "
        "process on SQLite, a subagent session); default 2, 0 turns it off",
    )
    mcp.add_argument(
        "--visibility",
        choices=VISIBILITIES,
        default="tree",
        help="which sessions the tools show: self, tree (default: the session and its spawn subtree), "
        "agent (every session of its agent) or all",
    )


def _number(text: str, option: str, *, integer: bool) -> float:
    try:
        value = float(int(text)) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise CliError(f"{option}: must be {kind}, not {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise CliError(f"{option}: must be >= 0, not {text!r}")
    return value


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token from `--token`, else the environment (HTTP only), checked against `--host`."""
    if args.transport != "http":
        if args.token is not None:
            raise CliError("--token: only with --transport http (stdio has no network to guard)")
        return None
    from_environment = os.environ.get(TOKEN_ENV) if args.token is None else None
    try:
        token = check_token(
            args.token if args.token is not None else from_environment,
            source="--token" if args.token is not None else f"${TOKEN_ENV}",
        )
        check_exposure(args.host, token)
    except ExposureError as exc:
        raise CliError(str(exc)) from None
    return token


def mcp_command(args: argparse.Namespace) -> int:
    """`mcp --session KEY`: serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    port = int(_number(args.port, "--port", integer=True))
    if port > 65535:  # noqa: PLR2004 - the highest TCP port
        raise CliError(f"--port: must be at most 65535, not {args.port!r}")
    poll = _number(args.poll_interval, "--poll-interval", integer=False)
    token = _token(args)
    try:
        identity = resolve_identity(args.session, args.agent, field="session")
    except InvalidSignal as exc:
        if exc.field == "session":
            raise CliError(f"--session: {exc.reason}") from None
        raise
    try:
        from sessionwatch.integrations import mcp  # noqa: PLC0415 - the extra loads only for this command
    except ImportError as exc:
        from sessionwatch.adapters.extras import install_hint  # noqa: PLC0415 - the error path only

        missing = exc.name or exc
        raise CliError(f"mcp needs the mcp extra ({missing} is missing): {install_hint('mcp')}") from None

    guarded = " (bearer token required)" if token is not None else ""

    def announce(url: str) -> None:
        print(f"{PROG} mcp: serving {identity.session_key} at {url}{guarded}", file=sys.stderr, flush=True)

    mcp.run(
        mcp.ServerOptions(
            url=args.db,
            session=identity.session_key,
            agent_id=identity.agent_id,
            transport=args.transport,
            host=args.host,
            port=port,
            poll_interval=poll,
            visibility=args.visibility,
            announce=announce,
            token=token,
        )
    )
    return EXIT_OK
