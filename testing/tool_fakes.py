"""Stand-ins for the session tools' host ports: a transcript store, a scripted runtime, a model catalog.

Small classes that record their calls, for tests and for trying `SessionTools` out. They satisfy
the tools' `Transcripts`, `Runtime` and `Models` protocols structurally; nothing here talks to a model.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

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

Message = dict[str, object]


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
        """The session's user texts (string contents only), newest `limit`, oldest first."""
        texts = [
            str(m["content"])
            for m in self.messages.get((session_key, agent_id), [])
            if m.get("role") == "user" and isinstance(m.get("content"), str)
        ]
        return texts[-limit:]

    def read_messages(
        self, key: str, agent_id: str, *, limit: int, offset: int | None, merged_imports: bool
    ) -> TranscriptPage:
        """A page of the stored transcript, as the host's store would page it."""
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
        """The stored title fields, empty when none were put."""
        self.title_calls.append((key, agent_id))
        return self.titles.get((key, agent_id), TitleFields())

    def latest_usage(self, key: str, agent_id: str) -> Usage | None:
        """The stored latest usage, or None."""
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
        """Accept the message: a queued run id (else `run-<n>`) on `accepting_key` or the target."""
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
        """The next scripted answer for `run_id`, else a non-terminal timeout."""
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
        """Record the step and answer the next scripted reply (None when none is left)."""
        self.steps.append(StepCall(key, agent_id, message, extra_system_prompt, timeout_seconds, provenance))
        return self.step_replies.popleft() if self.step_replies else None

    def announce(self, route: Route, text: str) -> None:
        """Record the announcement."""
        self.announcements.append((route, text))

    def start_child_run(self, request: ChildRunRequest) -> str:
        """Record the child run and return the next queued id (else `child-run-<n>`)."""
        self.child_runs.append(request)
        if self.start_failure is not None:
            raise RuntimeFailure(self.start_failure)
        return self.child_run_ids.popleft() if self.child_run_ids else f"child-run-{len(self.child_runs)}"

    def request_announce(self, request: AnnounceRequest) -> None:
        """Record the announce request."""
        self.announce_requests.append(request)

    def yield_turn(self, key: str, message: str) -> bool:
        """Record the yield; True when yielding is supported."""
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
    allowed: frozenset[str] = field(
        default_factory=lambda: frozenset({"anthropic/x", "anthropic/claude-opus", "openai/gpt"})
    )
    default: str = "openai/gpt"

    def resolve(self, raw: str, agent_id: str) -> str | None:  # noqa: ARG002 - one catalog for all agents
        """The reference an alias names, or None."""
        return self.aliases.get(raw.strip().lower())

    def is_allowed(self, ref: str, agent_id: str) -> bool:  # noqa: ARG002 - one catalog for all agents
        """Whether the reference is allowed."""
        return ref in self.allowed

    def default_for(self, agent_id: str) -> str:  # noqa: ARG002 - one catalog for all agents
        """The default model reference."""
        return self.default
