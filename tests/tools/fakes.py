"""The session tools' test environment: a store, the kit's fakes of the host's ports, and ids.

The port fakes ship in the kit (`sessionwatch.testing`); this adds deterministic ids and `Env`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sessionwatch import SessionTools, SessionWatch, ToolContext, ToolsConfig
from sessionwatch.testing import (
    FakeClock,
    FakeModels,
    FakeRuntime,
    FakeToolTranscripts,
    Message,
    ReadCall,
    StepCall,
    with_seqs,
)

__all__ = [
    "CTX",
    "MAIN",
    "Env",
    "FakeModels",
    "FakeRuntime",
    "FakeToolTranscripts",
    "Ids",
    "Message",
    "ReadCall",
    "StepCall",
    "with_seqs",
]


class Ids:
    """Deterministic ids for `SessionTools(ids=...)`: the given ones in order, then `id-<n>`."""

    def __init__(self, *given: str) -> None:
        self._given = deque(given)
        self._count = 0

    def __call__(self) -> str:
        if self._given:
            return self._given.popleft()
        self._count += 1
        return f"id-{self._count}"


# ------------------------------------------------------------------------- the environment

MAIN = "agent:main:main"
CTX = ToolContext(session_key=MAIN, channel="telegram")


@dataclass
class Env:
    """A store and the host's ports, faked; `tools()` builds a façade over them."""

    watch: SessionWatch
    clock: FakeClock
    transcripts: FakeToolTranscripts = field(default_factory=FakeToolTranscripts)
    runtime: FakeRuntime = field(default_factory=FakeRuntime)
    models: FakeModels = field(default_factory=FakeModels)
    ids: Ids = field(default_factory=Ids)

    def tools(self, **config: object) -> SessionTools:
        """The façade with `ToolsConfig(visibility="agent", **config)` (the §T12 default)."""
        settings = ToolsConfig.model_validate({"visibility": "agent", **config})
        return SessionTools(
            self.watch,
            transcripts=self.transcripts,
            runtime=self.runtime,
            models=self.models,
            config=settings,
            ids=self.ids,
            clock=self.clock,
        )

    def register(self, key: str, **fields: object) -> None:
        """Register a session with registry fields (`agent_id` for a bare key)."""
        agent_id = fields.pop("agent_id", None)
        assert agent_id is None or isinstance(agent_id, str)
        self.watch.update_session(key, agent_id=agent_id, **fields)
