"""The signal kinds, alone: a plain enum the command line can name without loading the models."""

from __future__ import annotations

from enum import StrEnum


class SignalKind(StrEnum):
    """The kinds a signal can have; the values are the stored names."""

    HUMAN_DIRECT_MESSAGE = "human_direct_message"
    UPSTREAM_MISSING = "upstream_missing"
    GOAL_CHANGED = "goal_changed"
    CHILD_SPAWNED = "child_spawned"
    RUN_COMPLETED = "run_completed"
    RUN_FAILED = "run_failed"
    COMPACTED = "compacted"
    ADOPTED = "adopted"
    CREATED = "created"
