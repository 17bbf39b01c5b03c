"""The demo host's ports: a canned transcript store, a runtime where nothing runs, one model.

Shell code only, in memory: what a real host gives `SessionTools`, reduced to what the demo shows.
"""

from __future__ import annotations

from sessionwatch.domain.registry import Route
from sessionwatch.domain.tools.ports import (
    AnnounceRequest,
    ChildRunRequest,
    Dispatch,
    DispatchRequest,
    InputProvenance,
    RunWait,
    TitleFields,
    TranscriptPage,
    Usage,
)


def run_id_of(child: str) -> str:
    """The child's run id, unique per demo run because the child key carries the run token."""
    return "run-" + child.rsplit(":", 1)[-1]


_RESEARCH_TRANSCRIPT: tuple[dict[str, object], ...] = (
    {"role": "user", "content": "Find the three slowest endpoints."},
    {
        "role": "assistant",
        "content": "<think>check the APM export first</think>The slowest are /search, /export and /login.",
    },
    {"role": "toolResult", "content": "apm.csv: 1200 rows"},
    {"role": "user", "content": "Pull the next export with token sk-live1234567890abcdef."},
)
"""What the demo host's transcript store holds for the researcher (message text stays on the host)."""


class DemoTranscripts:
    """The demo host's transcript store: the researcher's canned transcript, nothing else."""

    def __init__(self, researcher: str) -> None:
        self._researcher = researcher

    def _messages(self, key: str) -> tuple[dict[str, object], ...]:
        return _RESEARCH_TRANSCRIPT if key == self._researcher else ()

    def recent_user_texts(self, session_key: str, agent_id: str, limit: int) -> list[str]:
        """The session's own user texts, newest last."""
        del agent_id
        texts = [str(m["content"]) for m in self._messages(session_key) if m["role"] == "user"]
        return texts[-limit:]

    def read_messages(
        self, key: str, agent_id: str, *, limit: int, offset: int | None, merged_imports: bool
    ) -> TranscriptPage:
        """The newest `limit` messages before `offset`."""
        del agent_id, merged_imports
        messages = self._messages(key)
        end = len(messages) - (offset or 0)
        return TranscriptPage(
            messages=messages[max(0, end - limit) : max(0, end)], total_messages=len(messages)
        )

    def title_fields(self, key: str, agent_id: str) -> TitleFields:
        """The first user message and the last message of the session."""
        del agent_id
        messages = self._messages(key)
        users = [str(m["content"]) for m in messages if m["role"] == "user"]
        return TitleFields(
            first_user_message=users[0] if users else None,
            last_message_preview=str(messages[-1]["content"]) if messages else None,
        )

    def latest_usage(self, key: str, agent_id: str) -> Usage | None:
        """No usage counters in the demo."""
        del key, agent_id
        return None


class DemoRuntime:
    """The demo host's runtime: nothing runs; dispatches queue, waits time out, yields are refused."""

    def __init__(self) -> None:
        self.requests: list[object] = []

    def dispatch(self, request: DispatchRequest) -> Dispatch:
        """Queue the message."""
        self.requests.append(request)
        return Dispatch(run_id=f"demo-run-{len(self.requests)}", session_key=request.session_key)

    def wait(self, run_id: str, timeout_seconds: float) -> RunWait:
        """Nothing finishes in the demo."""
        del run_id, timeout_seconds
        return RunWait(status="timeout", terminal=False)

    def run_agent_step(  # noqa: PLR0917 - the positional port signature
        self,
        key: str,
        agent_id: str,
        message: str,
        extra_system_prompt: str,
        timeout_seconds: float,
        provenance: InputProvenance,
    ) -> str | None:
        """No agent answers in the demo."""
        del key, agent_id, message, extra_system_prompt, timeout_seconds, provenance
        return None

    def announce(self, route: Route, text: str) -> None:
        """Keep the delivery."""
        self.requests.append((route, text))

    def start_child_run(self, request: ChildRunRequest) -> str:
        """Keep the request; the run id is the child's."""
        self.requests.append(request)
        return run_id_of(request.child_session_key)

    def request_announce(self, request: AnnounceRequest) -> None:
        """Keep the request."""
        self.requests.append(request)

    def yield_turn(self, key: str, message: str) -> bool:
        """The demo has no turns to end."""
        del key, message
        return False


class DemoModels:
    """The demo host's model catalog: one model."""

    def resolve(self, raw: str, agent_id: str) -> str | None:
        """Only the one model resolves."""
        del agent_id
        return "demo/model" if raw.strip() == "demo/model" else None

    def is_allowed(self, ref: str, agent_id: str) -> bool:
        """The one model is allowed."""
        del agent_id
        return ref == "demo/model"

    def default_for(self, agent_id: str) -> str:
        """The one model."""
        del agent_id
        return "demo/model"
