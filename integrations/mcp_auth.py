"""Who may reach `sessionwatch mcp` over HTTP: loopback by default, the network only with a bearer token.

Shell code, stdlib only (the command line checks its options with it before the `mcp` extra loads):
the exposure rule, the token's own checks, and an ASGI gate that answers 401 to a request without
`Authorization: Bearer <token>`. The token is compared in constant time and never printed or logged.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final, TypeAlias

TOKEN_ENV: Final = "SESSIONWATCH_MCP_TOKEN"  # noqa: S105 - the variable's name, not a secret
"""The environment variable that gives the bearer token when `--token` does not."""

MIN_TOKEN_LENGTH: Final = 16
_TOKEN_SHAPE: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750's `b64token`: what may follow `Bearer ` in an Authorization header."""

Scope: TypeAlias = MutableMapping[str, Any]
Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
App: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]


class ExposureError(ValueError):
    """An HTTP setting that would serve the tools unprotected, or a token that cannot protect them.

    `option` names the command-line option that fixes it (`--host`, `--token`).
    """

    def __init__(self, option: str, reason: str) -> None:
        super().__init__(f"{option}: {reason}")
        self.option = option
        self.reason = reason


def is_loopback(host: str) -> bool:
    """Whether `host` only reaches this machine: `localhost` or a loopback address (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:  # a host name other than localhost may resolve anywhere
        return False


def check_token(token: str | None, *, source: str = "--token") -> str | None:
    """The token as given, when it can protect the server; `ExposureError` naming `source` otherwise.

    The message never quotes the token.
    """
    if token is None:
        return None
    if len(token) < MIN_TOKEN_LENGTH:
        raise ExposureError(source, f"the bearer token must be at least {MIN_TOKEN_LENGTH} characters")
    if _TOKEN_SHAPE.fullmatch(token) is None:
        raise ExposureError(
            source, "the bearer token may hold only letters, digits and - . _ ~ + / (then = padding)"
        )
    return token


def check_exposure(host: str, token: str | None) -> None:
    """Refuse a non-loopback `host` without a bearer token: anyone on the network could call the tools."""
    if token is None and not is_loopback(host):
        raise ExposureError(
            "--host",
            f"{host} is not a loopback address: serving the session tools to the network needs a bearer "
            f"token (--token, or the environment variable {TOKEN_ENV}); or keep the default 127.0.0.1",
        )


class BearerGate:
    """An ASGI app in front of another: an HTTP request without the bearer token gets 401.

    Pure ASGI (no buffering middleware), so the Streamable HTTP responses stream through unchanged.
    The header's scheme is case-insensitive; the token is compared as SHA-256 digests with
    `hmac.compare_digest`, so neither its content nor its length shows in the timing.
    """

    def __init__(self, app: App, token: str) -> None:
        self._app = app
        import hashlib  # noqa: PLC0415 - a served token alone needs it, not the parser that names the option

        self._expected = hashlib.sha256(token.encode()).digest()

    def __repr__(self) -> str:
        return f"BearerGate({self._app!r})"  # never the token, nor its digest

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request with the token (and the lifespan) on; answer any other with 401."""
        if scope["type"] == "http" and not self._authorized(scope):
            await _unauthorized(send)
            return
        if scope["type"] == "websocket" and not self._authorized(scope):
            await send({"type": "websocket.close", "code": 1008})  # policy violation: no upgrade
            return
        await self._app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        given = next((value for name, value in scope.get("headers", ()) if name == b"authorization"), b"")
        scheme, _, credentials = given.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        import hashlib  # noqa: PLC0415 - loaded by the first check, already
        import hmac  # noqa: PLC0415

        return hmac.compare_digest(hashlib.sha256(credentials.strip()).digest(), self._expected)


async def _unauthorized(send: Send) -> None:
    body = b'{"error":"unauthorized","error_description":"missing or wrong bearer token"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="sessionwatch", error="invalid_token"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
