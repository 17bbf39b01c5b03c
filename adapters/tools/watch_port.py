"""`ToolsWatch`: what the session tools need of a façade. A typing protocol only, no behaviour.

`SessionWatch` satisfies it as it is; a host that runs the tools in a worker thread next to an
`AsyncSessionWatch` gives them a blocking view of that façade (the MCP server does).
"""

from __future__ import annotations

from typing import Literal, Protocol

from sessionwatch.adapters.app.reports import RunOutcome, RunRecord
from sessionwatch.domain.ports import Clock
from sessionwatch.projections.models import RegistryEntry, SessionStatus, Signal


class ToolsWatch(Protocol):
    """The registry, run, status and producer calls the seven tools make, with `SessionWatch`'s signatures."""

    @property
    def clock(self) -> Clock:
        """The clock every timestamp comes from."""
        ...

    def registry_entries(self) -> list[RegistryEntry]:
        """Every known session's registry entry."""
        ...

    def registry_entry(self, key: str, *, agent_id: str | None = None) -> RegistryEntry | None:
        """A known session's registry entry, or None."""
        ...

    def update_session(self, key: str, *, agent_id: str | None = None, **fields: object) -> RegistryEntry:
        """Set registry fields of a session."""
        ...

    def delete_session(self, key: str, *, agent_id: str | None = None) -> None:
        """Delete one session identity."""
        ...

    def runs(self) -> list[RunRecord]:
        """The runs this process heard of, newest first."""
        ...

    def run_started(
        self,
        key: str,
        run_id: str,
        *,
        agent_id: str | None = None,
        requester_key: str | None = None,
        label: str | None = None,
        mode: str | None = None,
    ) -> None:
        """A run of the session began."""
        ...

    def run_ended(
        self, key: str, run_id: str, *, agent_id: str | None = None, outcome: RunOutcome | None = None
    ) -> None:
        """A run of the session ended."""
        ...

    def session_status(
        self, key: str, *, changes_since: int | None = None, limit: int = 200, agent_id: str | None = None
    ) -> SessionStatus:
        """The session's head and, with `changes_since`, the delta after it."""
        ...

    def watch(self, watcher_key: str, target_key: str, *, target_agent_id: str | None = None) -> bool:
        """Register an explicit watch at the target's current head."""
        ...

    def record_spawn(
        self, *, requester_key: str, child_key: str, child_run_id: str, agent_id: str | None = None
    ) -> Signal | None:
        """A child was spawned."""
        ...

    def record_run_terminal(
        self,
        *,
        child_key: str,
        run_id: str,
        requester_key: str,
        outcome: Literal["ok", "error", "timeout", "cancelled"],
        agent_id: str | None = None,
    ) -> Signal | None:
        """A child run ended."""
        ...
