"""The private socket the Claude Code hook hands its work to: the session's MCP server, already warm.

Standard library only. `sessionwatch claude-code mcp` (the server Claude Code keeps running for a
session) listens on a Unix socket named after the session: `cc-<16 hex digits>.sock` in a folder
only the user can open: `$XDG_RUNTIME_DIR/sessionwatch` when that variable is an absolute path,
else `sessionwatch-<uid>` in `$TMPDIR` (when absolute) or `/tmp`. The folder must be the user's,
a real folder, mode 0700 (nobody else may enter it); the socket is made mode 0600; each end checks
the other's user id (`SO_PEERCRED`). A folder that fails a check is never used: the hook then does
its work in its own process, as it does when no server answers.

One request per connection: the hook sends one JSON object (its stdin text, its `--db`, the
environment variables the hook reads) and closes its side; the server runs the very hook function
(`claude_code.run_hook`) and answers one JSON object: what to print, and the log lines.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

FOLDER_NAME = "sessionwatch"
REQUEST_LIMIT = 64 * 1024 * 1024
"""The largest request a server reads (a prompt with pasted images is a few MiB)."""
ANSWER_WAIT_S = 30.0
"""How long the hook waits for the answer of a server that took its request."""
PASSED_VARIABLES = ("CLAUDE_PROJECT_DIR", "SESSIONWATCH_URL")
"""The environment the hook function reads, passed on with each request (nothing else is)."""

_UCRED = struct.Struct("3i")


class Unanswered(Exception):  # noqa: N818 - a state, not a failure: the hook works in-process then
    """No server took the request (none listens, the folder is not private, the peer is not the user)."""


class Answer:
    """What a server answered: the hook's stdout text and its log lines.

    A plain class, not a `NamedTuple`: `typing` would cost the hook more than this whole module.
    """

    __slots__ = ("log", "output")

    def __init__(self, output: str, log: tuple[str, ...]) -> None:
        self.output = output
        self.log = log


def socket_folder(environ: Mapping[str, str]) -> Path:
    """The folder of the sessions' sockets (not checked here: `private_folder` does)."""
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_absolute():
        return Path(runtime) / FOLDER_NAME
    temporary = environ.get("TMPDIR", "")  # not `tempfile`: it costs the hook more than all of this module
    return Path(temporary if Path(temporary).is_absolute() else "/tmp") / f"{FOLDER_NAME}-{os.getuid()}"  # noqa: S108


def socket_path(folder: Path, agent_id: str, session_id: str) -> Path:
    """The socket of the MCP server of Claude Code session `session_id` in project `agent_id`."""
    digest = hashlib.sha256(f"{agent_id}\0{session_id}".encode("utf-8", "surrogatepass")).hexdigest()
    return folder / f"cc-{digest[:16]}.sock"


def private_folder(folder: Path, *, create: bool) -> bool:
    """Whether `folder` is a real folder of this user that nobody else may enter (made so with `create`)."""
    if create:
        with contextlib.suppress(FileExistsError, OSError):
            folder.mkdir(mode=0o700, parents=False)
    try:
        info = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0


def _peer_is_user(connection: socket.socket) -> bool:
    try:
        _pid, uid, _gid = _UCRED.unpack(
            connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        )
    except (AttributeError, OSError):  # no SO_PEERCRED here: the private folder is the guard
        return sys.platform != "linux"
    return bool(uid == os.getuid())


def _read_all(connection: socket.socket, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while chunk := connection.recv(1 << 16):
        size += len(chunk)
        if size > limit:
            raise ValueError(f"request: larger than {limit} bytes")
        parts.append(chunk)
    return b"".join(parts)


# --------------------------------------------------------------------------------------- the hook


def hand_over(
    path: Path, stdin_text: str, *, db: str | None, environ: Mapping[str, str], wait: float = ANSWER_WAIT_S
) -> Answer | None:
    """Have the server at `path` run the hook; its answer (None: it took the request, then failed).

    Raises `Unanswered` when no server took the request, so the caller runs the hook itself.
    """
    if not private_folder(path.parent, create=False):
        raise Unanswered(f"{path.parent} is not a private folder of this user")
    request = {
        "stdin": stdin_text,
        "db": db,
        "environ": {name: environ[name] for name in PASSED_VARIABLES if name in environ},
    }
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            connection.connect(str(path))
        except OSError as exc:  # none listens (no socket, a stale one)
            raise Unanswered(f"{type(exc).__name__}") from None
        if not _peer_is_user(connection):
            raise Unanswered("the socket's server is another user's")
        connection.settimeout(wait)
        try:
            connection.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass"))
            connection.shutdown(socket.SHUT_WR)
        except OSError as exc:  # the server went away before it read the request
            raise Unanswered(f"{type(exc).__name__}") from None
        try:
            raw = _read_all(connection, REQUEST_LIMIT)
        except (OSError, ValueError):
            return None
        if not raw:  # it closed without an answer (it ended under the request): do it here
            raise Unanswered("the server closed without an answer")
        try:
            answer = json.loads(raw)
            return Answer(str(answer["output"]), tuple(str(line) for line in answer["log"]))
        except (ValueError, KeyError, TypeError):
            return None
    finally:
        connection.close()


# ------------------------------------------------------------------------------------- the server


RunHook = Callable[[str, str | None, Mapping[str, str], Callable[[str], None]], str]
"""`(stdin_text, db, environ, log) -> stdout text`: `claude_code.run_hook`."""


class HookListener:
    """The socket a session's MCP server answers hook requests on, each on a thread of its own."""

    def __init__(self, path: Path, run_hook: RunHook) -> None:
        self.path = path
        self._run_hook = run_hook
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket a server that ended without clean-up left behind
        self._server.bind(str(path))
        os.chmod(path, 0o600)  # noqa: PTH101 - the socket file itself, right after bind
        self._inode = path.stat().st_ino
        self._server.listen(8)
        import threading  # noqa: PLC0415 - the server's only: the hook's front end never loads it

        self._thread = threading.Thread(target=self._accept, name="sessionwatch-hook-socket", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._server.accept()
            except OSError:  # closed
                return
            import threading  # noqa: PLC0415

            threading.Thread(
                target=self._answer, args=(connection,), name="sessionwatch-hook", daemon=True
            ).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            if not _peer_is_user(connection):
                return
            try:
                connection.settimeout(ANSWER_WAIT_S)
                request = json.loads(_read_all(connection, REQUEST_LIMIT))
                stdin_text, db, environ = request["stdin"], request["db"], request["environ"]
                if not isinstance(stdin_text, str) or not isinstance(db, str | None):
                    return
                passed = {
                    name: str(environ[name])
                    for name in PASSED_VARIABLES
                    if isinstance(environ, dict) and name in environ
                }
            except (OSError, ValueError, KeyError, TypeError):
                return
            lines: list[str] = []
            output = self._run_hook(stdin_text, db, passed, lines.append)
            with contextlib.suppress(OSError):
                connection.sendall(
                    json.dumps({"output": output, "log": lines}).encode("utf-8", "surrogatepass")
                )

    def close(self) -> None:
        """Stop listening, and remove the socket unless another server replaced it since."""
        self._server.close()
        with contextlib.suppress(OSError):
            if self.path.stat().st_ino == self._inode:
                self.path.unlink()


def listen(
    environ: Mapping[str, str], agent_id: str, session_id: str, run_hook: RunHook
) -> HookListener | None:
    """Answer the hook of session `session_id` of project `agent_id` (None: no private socket)."""
    folder = socket_folder(environ)
    if not private_folder(folder, create=True):
        return None
    try:
        return HookListener(socket_path(folder, agent_id, session_id), run_hook)
    except OSError:
        return None
