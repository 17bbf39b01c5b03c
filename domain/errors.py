"""Typed errors the domain raises for input a caller must correct."""

from __future__ import annotations


class InvalidSignal(ValueError):  # noqa: N818 - the name is part of the public API
    """A signal, key or watch request is malformed; nothing was written.

    `field` names the offending input and `reason` says what is wrong with it.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class InvalidQuery(ValueError):  # noqa: N818 - public API name
    """A query argument is out of its domain, such as a negative `changes_since`."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class UnknownSession(LookupError):  # noqa: N818 - public API name
    """The session identity was never upserted nor signalled, or it was deleted."""

    def __init__(self, key: str) -> None:
        super().__init__(f"Unknown sessionKey: {key}")
        self.key = key

    def __str__(self) -> str:
        return f"Unknown sessionKey: {self.key}"
