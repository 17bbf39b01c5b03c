"""The suites' strategies: the test kit's (`sessionwatch.testing`, SPEC §16), and operation sequences.

Sessions, kinds, actors, payloads and `SignalInput`s come from the packaged kit, so hosts and this
suite draw from the same pools; the operations below drive the signal-log properties.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from hypothesis import strategies as st

from sessionwatch import SignalInput
from sessionwatch.testing import (
    SESSION_KINDS,
    SessionRef,
    agent_qualified_keys,
    owner_of,
    session_refs,
    signal_inputs,
    weighted,
)

__all__ = [
    "Advance",
    "Delete",
    "Operation",
    "Record",
    "RecordMany",
    "Reset",
    "SessionRef",
    "Upsert",
    "operation_lists",
    "operations",
    "owner_of",
    "session_refs",
    "signal_inputs",
]

# ------------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class Record:
    """`watch.record(...)` with the input's fields."""

    item: SignalInput


@dataclass(frozen=True)
class RecordMany:
    """`watch.record_many(items)`; with `poison_at`, that item is made invalid so nothing is written."""

    items: tuple[SignalInput, ...]
    poison_at: int | None = None


@dataclass(frozen=True)
class Upsert:
    """`watch.upsert_session(...)`."""

    ref: SessionRef
    kind: str
    session_id: str | None
    spawned_by: str | None
    parent_session_key: str | None


@dataclass(frozen=True)
class Reset:
    """`watch.reset_session(...)`."""

    ref: SessionRef


@dataclass(frozen=True)
class Delete:
    """`watch.delete_session(...)`."""

    ref: SessionRef


@dataclass(frozen=True)
class Advance:
    """Move the fake clock forward."""

    minutes: int


Operation: TypeAlias = Record | RecordMany | Upsert | Reset | Delete | Advance


_SIGNAL_INPUTS = signal_inputs()
_SESSION_REFS = session_refs()
_AGENT_QUALIFIED_KEYS = agent_qualified_keys()
_BATCHES = st.lists(_SIGNAL_INPUTS, min_size=1, max_size=6)


@st.composite
def _record_many(draw: st.DrawFn) -> RecordMany:
    items = tuple(draw(_BATCHES))
    poisoned = draw(st.integers(0, 5)) == 0  # one batch in six carries an invalid item
    poison = draw(st.integers(0, len(items) - 1)) if poisoned else None
    return RecordMany(items=items, poison_at=poison)


_UPSERTS = st.builds(
    Upsert,
    ref=_SESSION_REFS,
    kind=st.sampled_from(SESSION_KINDS),
    session_id=st.none() | st.sampled_from(("sess-a", "sess-b")),
    spawned_by=st.none() | _AGENT_QUALIFIED_KEYS,
    parent_session_key=st.none() | _AGENT_QUALIFIED_KEYS,
)
_OPERATIONS: st.SearchStrategy[Operation] = weighted(
    (4, st.builds(Record, _SIGNAL_INPUTS)),
    (2, _record_many()),
    (1, _UPSERTS),
    (1, st.builds(Reset, _SESSION_REFS)),
    (1, st.builds(Delete, _SESSION_REFS)),
    (1, st.builds(Advance, st.integers(1, 36 * 60))),
)


def operations() -> st.SearchStrategy[Operation]:
    """One step of a session's life; records dominate so that logs grow."""
    return _OPERATIONS


def operation_lists(max_size: int = 25) -> st.SearchStrategy[list[Operation]]:
    """A session history: a list of operations."""
    return st.lists(_OPERATIONS, min_size=min(4, max_size), max_size=max_size)
