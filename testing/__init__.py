"""The test kit for embedders: Hypothesis strategies, fakes of the ports and the notice machine.

Modules by role: `strategies`, `fakes` (the core's ports), `tool_fakes` (the session tools'
ports), `model` (the oracle) and `machine`. Needs the `testing`
extra (which brings Hypothesis); `import sessionwatch` never imports this package.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401 - imported only to say which extra is missing
except ImportError as exc:  # the extra is optional: say how to get it
    from sessionwatch.adapters.extras import install_hint

    raise ImportError(
        f"sessionwatch.testing needs Hypothesis, the testing extra: {install_hint('testing')}", name=exc.name
    ) from exc

from sessionwatch.testing.fakes import START, FakeClock, FakeTranscripts, RecordingWaker
from sessionwatch.testing.machine import SessionWatchMachine
from sessionwatch.testing.model import NoticeModel
from sessionwatch.testing.strategies import (
    AGENT_IDS,
    BARE_KEYS,
    CHANNELS,
    DEDUPE_KEYS,
    FIXED_SUMMARIES,
    HOT_REFS,
    RUN_IDS,
    SESSION_KINDS,
    SUBAGENT_KEYS,
    OccurredAt,
    SessionRef,
    actors,
    agent_ids,
    agent_qualified_keys,
    agent_qualified_refs,
    bare_keys,
    bare_refs,
    channels,
    dedupe_keys,
    occurred_ats,
    owner_of,
    payloads,
    run_ids,
    session_refs,
    signal_inputs,
    signal_kinds,
    subagent_keys,
    summaries,
    weighted,
)
from sessionwatch.testing.tool_fakes import (
    FakeModels,
    FakeRuntime,
    FakeToolTranscripts,
    Message,
    ReadCall,
    StepCall,
    with_seqs,
)

__all__ = [
    "AGENT_IDS",
    "BARE_KEYS",
    "CHANNELS",
    "DEDUPE_KEYS",
    "FIXED_SUMMARIES",
    "HOT_REFS",
    "RUN_IDS",
    "SESSION_KINDS",
    "START",
    "SUBAGENT_KEYS",
    "FakeClock",
    "FakeModels",
    "FakeRuntime",
    "FakeToolTranscripts",
    "FakeTranscripts",
    "Message",
    "NoticeModel",
    "OccurredAt",
    "ReadCall",
    "RecordingWaker",
    "SessionRef",
    "SessionWatchMachine",
    "StepCall",
    "actors",
    "agent_ids",
    "agent_qualified_keys",
    "agent_qualified_refs",
    "bare_keys",
    "bare_refs",
    "channels",
    "dedupe_keys",
    "occurred_ats",
    "owner_of",
    "payloads",
    "run_ids",
    "session_refs",
    "signal_inputs",
    "signal_kinds",
    "subagent_keys",
    "summaries",
    "weighted",
    "with_seqs",
]
