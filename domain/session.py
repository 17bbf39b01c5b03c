"""The Session stream: one per session identity (key, agent id). Pure decide/evolve.

Invariant: the head (`stateVersion`) never goes down while the session exists, and every recorded
sequence of the stream is above the head it found. Deletion forgets the identity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, NamedTuple, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict, field_validator

from sessionwatch.domain.keys import SessionIdentity, is_agent_qualified
from sessionwatch.domain.messages import Command, Event, checked_model
from sessionwatch.domain.registry import EMPTY_META, META_FIELDS, SessionMeta
from sessionwatch.domain.signals import ActorType, Payload, SignalKind

DEFAULT_KIND = "main"

# ---------------------------------------------------------------------------------------- events


class SessionUpserted(Event):
    """The registry entry of a session was created or changed."""

    type: Literal["session.upserted.v1"] = "session.upserted.v1"
    session_key: str
    agent_id: str
    session_id: str | None = None
    kind: str = DEFAULT_KIND
    spawned_by: str | None = None
    parent_session_key: str | None = None


class SignalDraft(BaseModel):
    """The fields of one signal before the shell allocates its sequence.

    `recording.check_signal` is the one place that validates them, field by field, and the only
    place that makes a draft: it builds the model without validating again, and the
    `SignalRecorded` a draft becomes is built from its fields the same way. A property test holds
    both equal to what pydantic's validation of the same fields gives.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_key: str
    agent_id: str
    session_id: str | None = None
    kind: SignalKind
    actor_type: ActorType
    actor_id: str | None = None
    run_id: str | None = None
    occurred_at_ms: int
    recorded_at_ms: int  # the local clock: heads, cursors and pruning use it, never occurred_at
    summary: str
    payload: Payload | None = None
    dedupe_key: str | None = None
    watchers: tuple[str, ...] = ()  # producer watchers; registered holders are implied

    @property
    def identity(self) -> SessionIdentity:
        """The session identity the signal belongs to."""
        return SessionIdentity(self.session_key, self.agent_id)

    def at(self, sequence: int) -> RecordSignal:
        """The command recording this draft at `sequence`."""
        return RecordSignal(self, sequence)


class SignalRecorded(SignalDraft, Event):
    """A signal was appended to the session's log at a global `sequence`."""

    type: Literal["session.signal_recorded.v1"] = "session.signal_recorded.v1"
    sequence: int


_SIGNAL_RECORDED: Final = "session.signal_recorded.v1"


class SessionReset(Event):
    """The session was reset: the cursors it holds as watcher go; its history stays."""

    type: Literal["session.reset.v1"] = "session.reset.v1"
    session_key: str
    agent_id: str


class SessionDeleted(Event):
    """The identity was deleted with its signals and head."""

    type: Literal["session.deleted.v1"] = "session.deleted.v1"
    session_key: str
    agent_id: str


class SessionMetaUpdated(Event):
    """Registry metadata of the session changed.

    `changed` names the fields this update set, in `META_FIELDS` order; `meta` holds their new
    values (its other fields are at their defaults and mean nothing).
    """

    type: Literal["session.meta_updated.v1"] = "session.meta_updated.v1"
    session_key: str
    agent_id: str
    changed: tuple[str, ...]
    meta: SessionMeta

    @field_validator("changed")
    @classmethod
    def _known_fields(cls, changed: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(changed) - set(META_FIELDS))
        if unknown:
            raise ValueError(f"not registry fields: {', '.join(unknown)}")
        return changed


SessionEvent: TypeAlias = (
    SessionUpserted | SignalRecorded | SessionReset | SessionDeleted | SessionMetaUpdated
)

# -------------------------------------------------------------------------------------- commands


class UpsertSession(Command):
    """Create the session, or change the registry fields given.

    None keeps a field's current value; a new session's kind defaults to `main`.
    """

    session_key: str
    agent_id: str
    session_id: str | None = None
    kind: str | None = None
    spawned_by: str | None = None
    parent_session_key: str | None = None


class RecordSignal(NamedTuple):
    """Append one validated signal at the `sequence` the shell allocated.

    A named tuple, not a pydantic model: its draft was validated field by field, so validating
    the command, or the event it becomes, would only slow every record (ADR-0017).
    """

    draft: SignalDraft
    sequence: int

    @property
    def identity(self) -> SessionIdentity:
        """The session identity the signal belongs to."""
        return self.draft.identity

    def event_fields(self) -> dict[str, object]:
        """The fields of the `SignalRecorded` this command records."""
        fields = dict(self.draft.__dict__)
        fields["sequence"] = self.sequence
        return fields

    def event(self) -> SignalRecorded:
        """The `SignalRecorded` this command records, built from its draft's checked fields."""
        fields = dict(self.draft.__dict__)
        fields["type"] = _SIGNAL_RECORDED  # after the draft's fields, as `SignalRecorded` declares them
        fields["sequence"] = self.sequence
        return checked_model(SignalRecorded, fields)


class ResetSession(Command):
    """Reset the session (a new incarnation begins); `holds_cursors` says it watches something."""

    session_key: str
    agent_id: str
    holds_cursors: bool = False


class DeleteSession(Command):
    """Forget the identity, its signals and its head; `has_cursors` says a cursor involves it."""

    session_key: str
    agent_id: str
    has_cursors: bool = False


class UpdateSessionMeta(Command):
    """Set the registry fields named in `given` to their values in `meta`; the others keep theirs."""

    session_key: str
    agent_id: str
    given: tuple[str, ...]
    meta: SessionMeta


SessionCommand: TypeAlias = UpsertSession | RecordSignal | ResetSession | DeleteSession | UpdateSessionMeta

# ----------------------------------------------------------------------------------------- state


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    """What the stream knows about one identity; `head` is the state version.

    A plain frozen dataclass, not a pydantic model: every recorded signal evolves one, and a replay
    evolves one per stored signal (`dataclasses.replace` costs a fraction of `model_copy`). Pydantic
    still validates it where it is stored, inside a prune checkpoint (ADR-0011).
    """

    session_key: str
    agent_id: str
    known: bool = False
    session_id: str | None = None
    kind: str = DEFAULT_KIND
    spawned_by: str | None = None
    parent_session_key: str | None = None
    registered: bool = False  # upserted and not deleted: the sweep's "watcher exists"
    head: int = 0
    pruned_through: int = 0  # the prune watermark
    meta: SessionMeta | None = None  # the registry metadata; None until first set

    @property
    def identity(self) -> SessionIdentity:
        """The identity this state belongs to."""
        return SessionIdentity(self.session_key, self.agent_id)


def initial(identity: SessionIdentity) -> SessionState:
    """The state of an identity nothing was recorded for."""
    return SessionState(session_key=identity.session_key, agent_id=identity.agent_id)


def evolve(state: SessionState, event: SessionEvent) -> SessionState:
    """Apply one event; never validates, never raises."""
    match event:
        case SessionUpserted():
            return replace(
                state,
                known=True,
                registered=True,
                session_id=event.session_id,
                kind=event.kind,
                spawned_by=event.spawned_by,
                parent_session_key=event.parent_session_key,
            )
        case SignalRecorded():  # the hot path of every record and replay: spelled out, no `replace`
            return SessionState(
                session_key=state.session_key,
                agent_id=state.agent_id,
                known=True,
                session_id=event.session_id or state.session_id,
                kind=state.kind,
                spawned_by=state.spawned_by,
                parent_session_key=state.parent_session_key,
                registered=state.registered,
                head=max(state.head, event.sequence),
                pruned_through=state.pruned_through,
                meta=state.meta,
            )
        case SessionMetaUpdated():
            update = {name: getattr(event.meta, name) for name in event.changed}
            return replace(state, meta=(state.meta or EMPTY_META).model_copy(update=update))
        case SessionReset():
            return state
        case SessionDeleted():
            return initial(state.identity)
        case _:
            assert_never(event)


def with_head(state: SessionState, head: int) -> SessionState:
    """`state` at `head`: what signals that only raise the head leave (spelled out: no `replace`)."""
    if head == state.head:
        return state
    return SessionState(
        session_key=state.session_key,
        agent_id=state.agent_id,
        known=state.known,
        session_id=state.session_id,
        kind=state.kind,
        spawned_by=state.spawned_by,
        parent_session_key=state.parent_session_key,
        registered=state.registered,
        head=head,
        pruned_through=state.pruned_through,
        meta=state.meta,
    )


def raises_head_only(state: SessionState, event: SignalRecorded) -> bool:
    """Whether `evolve(state, event)` is `state` with `head = max(head, event.sequence)`, nothing else.

    True for every signal of a known session that names no other session id: a fold of many
    signals may then raise the head alone and build the new state once, at the end (ADR-0011).
    """
    return state.known and (event.session_id or state.session_id) == state.session_id


def decide(command: SessionCommand, state: SessionState) -> list[SessionEvent]:
    """The stream's rules; `[]` means nothing to do, so a retried command is free."""
    match command:
        case UpsertSession():
            wanted = {
                "session_id": command.session_id or state.session_id,
                "kind": command.kind or (state.kind if state.known else DEFAULT_KIND),
                "spawned_by": command.spawned_by or state.spawned_by,
                "parent_session_key": command.parent_session_key or state.parent_session_key,
            }
            current = {name: getattr(state, name) for name in wanted}
            if state.registered and wanted == current:
                return []
            return [SessionUpserted(session_key=state.session_key, agent_id=state.agent_id, **wanted)]
        case RecordSignal():
            if command.sequence <= state.head:  # already applied: sequences only rise
                return []
            return [command.event()]
        case ResetSession():
            if not state.known and not command.holds_cursors:
                return []
            return [SessionReset(session_key=state.session_key, agent_id=state.agent_id)]
        case UpdateSessionMeta():
            return _decide_meta(command, state)
        case DeleteSession():  # a watcher known only by its cursors still loses them
            if not state.known and not command.has_cursors:
                return []
            return [SessionDeleted(session_key=state.session_key, agent_id=state.agent_id)]
        case _:
            assert_never(command)


def decide_records(commands: Sequence[RecordSignal], state: SessionState) -> list[SignalRecorded]:
    """`decide` of each command on the state the commands before it left.

    Recording a signal only raises the head, and `decide` only compares a sequence with the head,
    so the fold needs the head alone (a property holds it equal to `decide` and `evolve` in turn).
    """
    head = state.head
    accepted = []
    for command in commands:
        if command.sequence > head:
            accepted.append(command.event())
            head = command.sequence
    return accepted


def _decide_meta(command: UpdateSessionMeta, state: SessionState) -> list[SessionEvent]:
    """Metadata belongs to a known session (the shell registers it first); only changes are stored."""
    before = state.meta or EMPTY_META
    changed = tuple(
        name
        for name in META_FIELDS
        if name in command.given and getattr(command.meta, name) != getattr(before, name)
    )
    if not state.known or not changed:
        return []
    return [
        SessionMetaUpdated(
            session_key=state.session_key, agent_id=state.agent_id, changed=changed, meta=command.meta
        )
    ]


def spawn_edge(state: SessionState) -> str | None:
    """The session's spawn edge: `spawned_by`, else `parent_session_key` (any key, bare ones too)."""
    return state.spawned_by or state.parent_session_key


def spawn_edge_watcher(state: SessionState) -> str | None:
    """The session's implicit watcher: its spawn edge, if agent-qualified (only those hold cursors)."""
    candidate = spawn_edge(state)
    return candidate if candidate and is_agent_qualified(candidate) else None


def human_message_is_gated(state: SessionState, *, has_registered_watchers: bool) -> bool:
    """A human turn writes nothing unless the session has a spawn edge or a registered watcher.

    Any spawn edge opens the gate, a bare one (`global`) too: such a session keeps its log and
    `changesSince` although its bare parent can hold no cursor and so gets no notice.
    """
    return spawn_edge(state) is None and not has_registered_watchers


def records_human_turn(actor_type: ActorType, state: SessionState, *, watched: Callable[[], bool]) -> bool:
    """Whether a turn into the session is recorded as `human_direct_message`.

    Only a human's turn is (an agent's or the system's never), and only into a session someone
    watches: through a spawn edge, or a registered cursor (`watched()`, asked only when needed).
    """
    return actor_type == "human" and not human_message_is_gated(
        state, has_registered_watchers=spawn_edge(state) is None and watched()
    )


def with_spawn_edge_watcher(draft: SignalDraft, state: SessionState) -> SignalDraft:
    """The draft with the session's spawn-edge watcher among its producer watchers (a producer passes it)."""
    edge = spawn_edge_watcher(state)
    if edge is None or edge in draft.watchers:
        return draft
    return draft.model_copy(update={"watchers": (*draft.watchers, edge)})
