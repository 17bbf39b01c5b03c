"""The runs a process was told about: which are active, who asked for them and how they ended.

Runs are the host's; sessionwatch only hears `run_started` and `run_ended`, in this process, never
in the store (ADR-0010): a crash leaves no run behind that would block an upstream link forever.
`ActiveRuns` is what the upstream monitor skips; the ledger is what `subagents` and
`session_status` read: active runs, and runs ended within the last day.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Final

from sessionwatch.adapters.app.reports import RunOutcome, RunRecord
from sessionwatch.domain.keys import SessionIdentity

KEEP_ENDED_MS: Final = 24 * 60 * 60 * 1000
"""How long an ended run stays listed."""


class RunLedger:
    """Every active run and the runs ended within `KEEP_ENDED_MS`, by run id (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, RunRecord] = {}

    def start(
        self,
        identity: SessionIdentity,
        run_id: str,
        *,
        at_ms: int,
        requester_key: str | None = None,
        label: str | None = None,
        mode: str | None = None,
    ) -> RunRecord:
        """A run began (a run id seen again starts over: the host reused it)."""
        record = RunRecord(
            run_id=run_id,
            session_key=identity.session_key,
            agent_id=identity.agent_id,
            requester_key=requester_key,
            label=label,
            mode=mode,
            started_at_ms=at_ms,
        )
        with self._lock:
            self._forget_before(at_ms - KEEP_ENDED_MS)
            self._runs[run_id] = record
        return record

    def end(self, run_id: str, *, at_ms: int, outcome: RunOutcome | None) -> RunRecord | None:
        """A run ended; an unknown or already ended run changes nothing (None)."""
        with self._lock:
            record = self._runs.get(run_id)
            if record is None or record.ended_at_ms is not None:
                return None
            ended = record.model_copy(update={"ended_at_ms": at_ms, "outcome": outcome})
            self._runs[run_id] = ended
            return ended

    def get(self, run_id: str) -> RunRecord | None:
        """One run, or None."""
        with self._lock:
            return self._runs.get(run_id)

    def records(self, *, now_ms: int) -> list[RunRecord]:
        """Active runs and runs ended within `KEEP_ENDED_MS` of `now_ms`, newest start first."""
        with self._lock:
            self._forget_before(now_ms - KEEP_ENDED_MS)
            found = list(self._runs.values())
        return sorted(found, key=lambda r: (r.started_at_ms, r.run_id), reverse=True)

    def _forget_before(self, cutoff_ms: int) -> None:
        gone = [i for i, r in self._runs.items() if r.ended_at_ms is not None and r.ended_at_ms < cutoff_ms]
        for run_id in gone:
            del self._runs[run_id]


class ActiveRuns:
    """The runs this process has started and not ended, per session (thread-safe).

    Every start also bumps the session's generation, so a run that started *and ended* during a
    scan is still seen as "a run started during the scan".
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[SessionIdentity, set[str]] = {}
        self._generation: Counter[SessionIdentity] = Counter()

    def start(self, identity: SessionIdentity, run_id: str) -> None:
        """A run of the session began."""
        with self._lock:
            self._runs.setdefault(identity, set()).add(run_id)
            self._generation[identity] += 1

    def end(self, identity: SessionIdentity, run_id: str) -> None:
        """A run of the session ended (an unknown run id changes nothing)."""
        with self._lock:
            runs = self._runs.get(identity)
            if runs is not None:
                runs.discard(run_id)
                if not runs:
                    del self._runs[identity]

    def active(self, identity: SessionIdentity) -> bool:
        """Whether a run of the session is in flight."""
        with self._lock:
            return identity in self._runs

    def generation(self, identity: SessionIdentity) -> int:
        """How many runs of the session have started so far."""
        with self._lock:
            return self._generation[identity]

    def started_since(self, identity: SessionIdentity, generation: int) -> bool:
        """Whether a run is active now or started after `generation` was read."""
        with self._lock:
            return identity in self._runs or self._generation[identity] != generation
