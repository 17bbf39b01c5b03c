"""Fakes of the session tools' ports (SPEC-tools §T11): small scripted classes that record their calls."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sessionwatch import SessionTools, SessionWatch, ToolContext, ToolsConfig
from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.ports import (
    AnnounceRequest,
    ChildRunRequest,
    Dispatch,
    DispatchRequest,
    InputProvenance,
    RuntimeFailure,
    RunWait,
    TitleFields,
    TranscriptPage,
    Usage,
)
from sessionwatch.domain.tools.transcript_pages import history_window, message_seq
from sessionwatch.testing import FakeClock

Message = dict[str, object]


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


@dataclass(frozen=True)
class ReadCall:
    """One `read_messages` call."""

    key: str
    agent_id: str
    limit: int
    offset: int | None
    merged_imports: bool


def with_seqs(messages: Iterable[Message]) -> list[Message]:
    """The messages with `__openclaw.seq` 1..T, oldest first (as a transcript stores them)."""
    return [{**message, "__openclaw": {"seq": index}} for index, message in enumerate(messages, start=1)]


class FakeToolTranscripts:
    """The host's transcript store behind the session tools' port: messages per session, read back."""

    def __init__(self) -> None:
        self.messages: dict[tuple[str, str], list[Message]] = {}
        self.titles: dict[tuple[str, str], TitleFields] = {}
        self.usage: dict[tuple[str, str], Usage] = {}
        self.reads: list[ReadCall] = []
        self.title_calls: list[tuple[str, str]] = []
        self.usage_calls: list[tuple[str, str]] = []

    def put(self, key: str, messages: Iterable[Message], *, agent_id: str = "main") -> None:
        """Store a session's transcript, oldest first."""
        self.messages[(key, agent_id)] = list(messages)

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> Sequence[str]:
        texts = [
            str(m["content"])
            for m in self.messages.get((session_key, agent_id), [])
            if m.get("role") == "user" and isinstance(m.get("content"), str)
        ]
        return texts[-limit:]

    def read_messages(
        self, key: str, agent_id: str, *, limit: int, offset: int | None, merged_imports: bool
    ) -> TranscriptPage:
        self.reads.append(ReadCall(key, agent_id, limit, offset, merged_imports))
        stored = self.messages.get((key, agent_id), [])
        total = len(stored)
        if stored and all(message_seq(m) is not None for m in stored):
            wanted = set(history_window(total, limit, offset))
            page = [m for m in stored if message_seq(m) in wanted]
        else:
            last = total - (offset or 0)
            page = stored[max(0, last - limit) : max(0, last)]
        return TranscriptPage(messages=tuple(page), total_messages=total)

    def title_fields(self, key: str, agent_id: str) -> TitleFields:
        self.title_calls.append((key, agent_id))
        return self.titles.get((key, agent_id), TitleFields())

    def latest_usage(self, key: str, agent_id: str) -> Usage | None:
        self.usage_calls.append((key, agent_id))
        return self.usage.get((key, agent_id))


@dataclass(frozen=True)
class StepCall:
    """One `run_agent_step` call."""

    key: str
    agent_id: str
    message: str
    extra_system_prompt: str
    timeout_seconds: float
    provenance: InputProvenance


@dataclass
class FakeRuntime:
    """The host's runtime, scripted: run ids, waits and step replies are queued by the test."""

    run_ids: deque[str] = field(default_factory=deque)
    disposition: str = "queued"
    accepting_key: str | None = None
    dispatch_failure: str | None = None
    waits: dict[str, deque[RunWait]] = field(default_factory=dict)
    wait_failure: str | None = None
    step_replies: deque[str | None] = field(default_factory=deque)
    child_run_ids: deque[str] = field(default_factory=deque)
    start_failure: str | None = None
    yield_supported: bool = True
    dispatches: list[DispatchRequest] = field(default_factory=list)
    wait_calls: list[tuple[str, float]] = field(default_factory=list)
    steps: list[StepCall] = field(default_factory=list)
    announcements: list[tuple[Route, str]] = field(default_factory=list)
    child_runs: list[ChildRunRequest] = field(default_factory=list)
    announce_requests: list[AnnounceRequest] = field(default_factory=list)
    yields: list[tuple[str, str]] = field(default_factory=list)

    def script_wait(self, run_id: str, *results: RunWait) -> None:
        """Queue what `wait(run_id, ...)` answers, in order."""
        self.waits.setdefault(run_id, deque()).extend(results)

    def dispatch(self, request: DispatchRequest) -> Dispatch:
        self.dispatches.append(request)
        if self.dispatch_failure is not None:
            raise RuntimeFailure(self.dispatch_failure)
        run_id = self.run_ids.popleft() if self.run_ids else f"run-{len(self.dispatches)}"
        return Dispatch(
            run_id=run_id,
            session_key=self.accepting_key or request.session_key,
            disposition="steered" if self.disposition == "steered" else "queued",
        )

    def wait(self, run_id: str, timeout_seconds: float) -> RunWait:
        self.wait_calls.append((run_id, timeout_seconds))
        if self.wait_failure is not None:
            raise RuntimeFailure(self.wait_failure)
        queued = self.waits.get(run_id)
        if queued:
            return queued.popleft()
        return RunWait(status="timeout", terminal=False)

    def run_agent_step(  # noqa: PLR0917 - the port's positional signature
        self,
        key: str,
        agent_id: str,
        message: str,
        extra_system_prompt: str,
        timeout_seconds: float,
        provenance: InputProvenance,
    ) -> str | None:
        self.steps.append(StepCall(key, agent_id, message, extra_system_prompt, timeout_seconds, provenance))
        return self.step_replies.popleft() if self.step_replies else None

    def announce(self, route: Route, text: str) -> None:
        self.announcements.append((route, text))

    def start_child_run(self, request: ChildRunRequest) -> str:
        self.child_runs.append(request)
        if self.start_failure is not None:
            raise RuntimeFailure(self.start_failure)
        return self.child_run_ids.popleft() if self.child_run_ids else f"child-run-{len(self.child_runs)}"

    def request_announce(self, request: AnnounceRequest) -> None:
        self.announce_requests.append(request)

    def yield_turn(self, key: str, message: str) -> bool:
        self.yields.append((key, message))
        return self.yield_supported


@dataclass
class FakeModels:
    """The host's model catalog: aliases resolve to references; some references are allowed."""

    aliases: Mapping[str, str] = field(
        default_factory=lambda: {
            "opus": "anthropic/claude-opus",
            "anthropic/x": "anthropic/x",
            "openai/gpt": "openai/gpt",
            "anthropic/claude-opus": "anthropic/claude-opus",
        }
    )
    allowed: frozenset[str] = frozenset({"anthropic/x", "anthropic/claude-opus", "openai/gpt"})
    default: str = "openai/gpt"

    def resolve(self, raw: str, agent_id: str) -> str | None:  # noqa: ARG002 - one catalog for all agents
        return self.aliases.get(raw.strip().lower())

    def is_allowed(self, ref: str, agent_id: str) -> bool:  # noqa: ARG002 - one catalog for all agents
        return ref in self.allowed

    def default_for(self, agent_id: str) -> str:  # noqa: ARG002 - one catalog for all agents
        return self.default


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
