"""The creation digest: one bounded, durable notice per main session listing the sessions created.

With `notify_on_create`, recording a `created` signal also notes the created key on its agent's
main session's Digest stream (`digest.creation_noted.v1`); draining or acknowledging the digest
stores `digest.drained.v1`. Both are explicit stored events decided when they happen, so a replay
needs no setting to rebuild the digest exactly. The fold keeps the newest entries whose text fits
in `DIGEST_LIMIT` characters (the oldest go first) and lists a key once, at its newest creation.
Pure: decide and evolve, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.messages import Event

DIGEST_LIMIT: Final = 8192
"""The most characters a digest notice's text holds, its header included."""
DIGEST_HEADER: Final = "Recent session creations (bounded summary; older entries may be omitted):"
"""The first line of every digest notice."""
DIGEST_NOTICE: Final = "session_creations"
"""What a digest notice's `digest` field says (a cursor notice has none)."""


class CreationNoted(Event):
    """A session's creation was noted on a main session's digest (`sequence`: its `created` signal)."""

    type: Literal["digest.creation_noted.v1"] = "digest.creation_noted.v1"
    session_key: str
    agent_id: str
    created_key: str
    sequence: int


class DigestDrained(Event):
    """The main session read its digest through `through`: entries up to that sequence are done."""

    type: Literal["digest.drained.v1"] = "digest.drained.v1"
    session_key: str
    agent_id: str
    through: int


DigestEvent: TypeAlias = CreationNoted | DigestDrained


class DigestEntry(BaseModel):
    """One line of a digest: the created key and the sequence of its `created` signal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sequence: int
    key: str


class DigestState(BaseModel):
    """A main session's pending digest: its entries, oldest first (never empty while it exists)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_key: str
    agent_id: str
    entries: tuple[DigestEntry, ...]

    @property
    def identity(self) -> SessionIdentity:
        """The main session the digest is for."""
        return SessionIdentity(self.session_key, self.agent_id)

    @property
    def newest(self) -> int:
        """The sequence of the newest creation listed."""
        return max(entry.sequence for entry in self.entries)

    @property
    def text(self) -> str:
        """The notice text: the header, then one created key per line."""
        return digest_text(entry.key for entry in self.entries)


def digest_text(keys: Iterable[str]) -> str:
    """The header and one line per key, in the order given."""
    return "\n".join((DIGEST_HEADER, *keys))


def bounded(entries: tuple[DigestEntry, ...]) -> tuple[DigestEntry, ...]:
    """The newest entries whose text fits in `DIGEST_LIMIT` characters (the oldest dropped first)."""
    size = len(DIGEST_HEADER) + sum(1 + len(entry.key) for entry in entries)
    start = 0
    while size > DIGEST_LIMIT and start < len(entries):
        size -= 1 + len(entries[start].key)
        start += 1
    return entries[start:]


def note_creation(
    state: DigestState | None, main: SessionIdentity, created_key: str, sequence: int
) -> list[DigestEvent]:
    """Note a creation on `main`'s digest; nothing for the main session itself or a noted sequence."""
    if created_key == main.session_key:
        return []
    if state is not None and any(entry.sequence >= sequence for entry in state.entries):
        return []  # sequences only rise: this creation (or a later one) is already noted
    return [
        CreationNoted(
            session_key=main.session_key, agent_id=main.agent_id, created_key=created_key, sequence=sequence
        )
    ]


def drain(state: DigestState | None, through: int | None = None) -> list[DigestEvent]:
    """Drain the digest through `through` (None: everything listed); nothing when nothing is listed."""
    if state is None:
        return []
    upto = state.newest if through is None else through
    if not any(entry.sequence <= upto for entry in state.entries):
        return []
    return [DigestDrained(session_key=state.session_key, agent_id=state.agent_id, through=upto)]


def evolve(state: DigestState | None, event: DigestEvent) -> DigestState | None:
    """Apply one event; None once nothing is listed. Never validates, never raises."""
    entries = state.entries if state is not None else ()
    match event:
        case CreationNoted():
            kept = tuple(entry for entry in entries if entry.key != event.created_key)
            entries = bounded((*kept, DigestEntry(sequence=event.sequence, key=event.created_key)))
        case DigestDrained():
            entries = tuple(entry for entry in entries if entry.sequence > event.through)
        case _:
            assert_never(event)
    if not entries:
        return None
    return DigestState(session_key=event.session_key, agent_id=event.agent_id, entries=entries)
