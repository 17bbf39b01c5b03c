"""Typed refusals of the session tools. Pure values: raising one performs no I/O.

Every `str()` is the exact text a model sees, so the messages carry no field prefix.
"""

from __future__ import annotations


class ToolError(ValueError):
    """Base of every session-tool refusal; `message` is the exact text the tool reports."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidToolInput(ToolError):  # noqa: N818 - public API name
    """A tool parameter is out of its domain, e.g. `limit must be a positive integer` (field `limit`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class ToolForbidden(ToolError):  # noqa: N818 - public API name
    """The visibility or agent-to-agent policy denies the target (`session_status` raises it)."""


class ToolNotAllowed(ToolError):  # noqa: N818 - public API name
    """The caller's effective tool set does not hold the tool (`Tool not available: <name>`)."""


class InvalidToolPolicy(ToolError):  # noqa: N818 - public API name
    """The tool policy configuration cannot be applied, e.g. an unknown `tools.profile`."""
