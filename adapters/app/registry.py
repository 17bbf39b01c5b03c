"""Registry and run use cases: sessions registered, reset, deleted and described; runs begun and ended.

A reset drops the cursors the session holds as watcher and keeps its history; a deletion forgets
the identity, its signals, its head and every cursor it holds or is the target of. Runs live in
this process only: the upstream monitor skips sessions with an active one, `subagents` lists them.
"""

from __future__ import annotations

from typing import Final, cast, get_args

from sessionwatch.adapters.app.checks import check_meta, query_identity
from sessionwatch.adapters.app.core import Core, Done, Work, done
from sessionwatch.adapters.app.reports import RunOutcome, RunRecord
from sessionwatch.adapters.stores.port import WriteTransaction
from sessionwatch.domain import session, watch_cursor
from sessionwatch.domain.errors import InvalidSignal
from sessionwatch.domain.keys import SessionIdentity, check_key, resolve_identity
from sessionwatch.domain.registry import META_FIELDS
from sessionwatch.domain.session import (
    DeleteSession,
    ResetSession,
    SessionCommand,
    SessionState,
    UpdateSessionMeta,
    UpsertSession,
)
from sessionwatch.domain.signals import check_optional_text, check_text
from sessionwatch.domain.watch_cursor import CursorState
from sessionwatch.projections.models import RegistryEntry, SessionEntry

UPSERT_FIELDS: Final = ("session_id", "kind", "spawned_by", "parent_session_key")
"""The registry fields `session.upserted.v1` sets; `update_session` passes them to the upsert."""

_RUN_OUTCOMES: Final = get_args(RunOutcome)
_MAX_KIND_LENGTH: Final = 64


def apply(tx: WriteTransaction, identity: SessionIdentity, command: SessionCommand) -> None:
    """Decide a Session command on the identity's state in `tx` and append what it decided."""
    events = session.decide(command, tx.session(identity))
    if events:
        tx.append(identity, events)


def upsert_command(
    identity: SessionIdentity,
    *,
    session_id: object = None,
    spawned_by: object = None,
    parent_session_key: object = None,
    kind: object = None,
) -> UpsertSession:
    """The checked `UpsertSession` for these fields (None keeps a value)."""
    return UpsertSession(
        session_key=identity.session_key,
        agent_id=identity.agent_id,
        session_id=check_optional_text(session_id, "session_id"),
        kind=check_text(kind, "kind", max_length=_MAX_KIND_LENGTH) if kind is not None else None,
        spawned_by=check_key(spawned_by, "spawned_by") if spawned_by is not None else None,
        parent_session_key=(
            check_key(parent_session_key, "parent_session_key") if parent_session_key is not None else None
        ),
    )


def upsert_session(
    core: Core, key: object, *, agent_id: object = None, **fields: object
) -> Work[SessionState, SessionEntry]:
    """Register a session or update its registry fields; None keeps a field's value."""
    del core  # the upsert needs no clock: registration carries no time
    identity = resolve_identity(key, agent_id)
    command = upsert_command(identity, **fields)

    def run(tx: WriteTransaction) -> SessionState:
        apply(tx, identity, command)
        return tx.session(identity)

    return Work(run, lambda state: Done(SessionEntry.from_state(state)))


def _held_by(tx: WriteTransaction, identity: SessionIdentity) -> list[CursorState]:
    """The cursors an identity holds as watcher (only an agent-qualified key can hold any)."""
    if watch_cursor.watcher_identity(identity.session_key) != identity:
        return []
    return tx.cursors_of(identity.session_key, pending_only=False)


def reset_session(core: Core, key: object, *, agent_id: object = None) -> Work[None, None]:
    """Reset a session: the cursors it holds as watcher and its creation digest go, its history stays."""
    del core
    identity = resolve_identity(key, agent_id)

    def run(tx: WriteTransaction) -> None:
        holds = bool(_held_by(tx, identity)) or tx.digest(identity) is not None  # its digest goes too
        apply(tx, identity, ResetSession(**_fields(identity), holds_cursors=holds))

    return Work(run, done)


def delete_session(core: Core, key: object, *, agent_id: object = None) -> Work[None, None]:
    """Delete one identity: its signals, its head and every cursor it holds or is the target of."""
    del core
    identity = resolve_identity(key, agent_id)

    def run(tx: WriteTransaction) -> None:
        involved = bool(_held_by(tx, identity)) or tx.has_cursor_on(identity)
        involved = involved or tx.digest(identity) is not None  # its creation digest goes too
        apply(tx, identity, DeleteSession(**_fields(identity), has_cursors=involved))

    return Work(run, done)


def update_session(
    core: Core, key: object, *, agent_id: object = None, **fields: object
) -> Work[SessionState, RegistryEntry]:
    """Set registry fields, registering the session first if it is unknown.

    The upsert fields as `upsert_session` sets them (None keeps a value), every other one
    (`META_FIELDS`) through one `session.meta_updated.v1` naming only the fields whose value
    changed (None clears one). A field outside the registry, or a bad value, is an `InvalidSignal`.
    """
    del core
    identity = resolve_identity(key, agent_id)
    unknown = sorted(set(fields) - set(META_FIELDS) - set(UPSERT_FIELDS))
    if unknown:
        raise InvalidSignal(unknown[0], "is not a session registry field")
    upsert = upsert_command(identity, **{n: v for n, v in fields.items() if n in UPSERT_FIELDS})
    given = {name: value for name, value in fields.items() if name in META_FIELDS}
    update = UpdateSessionMeta(**_fields(identity), given=tuple(given), meta=check_meta(given))

    def run(tx: WriteTransaction) -> SessionState:
        apply(tx, identity, upsert)
        apply(tx, identity, update)
        return tx.session(identity)

    return Work(run, lambda state: Done(RegistryEntry.from_state(state)))


def registry_entry(core: Core, key: object, *, agent_id: object = None) -> RegistryEntry | None:
    """A known session's registry entry, or None."""
    state = core.store.session(query_identity(key, agent_id))
    return RegistryEntry.from_state(state) if state is not None else None


def registry_entries(core: Core) -> list[RegistryEntry]:
    """Every known session's registry entry, ordered by key and agent id."""
    return [RegistryEntry.from_state(state) for state in core.store.sessions()]


def run_started(
    core: Core,
    key: object,
    run_id: object,
    *,
    agent_id: object = None,
    requester_key: object = None,
    label: object = None,
    mode: object = None,
) -> None:
    """A run of the session began: the upstream monitor leaves its link alone until it ends."""
    core.check_open()
    identity = resolve_identity(key, agent_id)
    run = check_text(run_id, "run_id")
    requester = check_key(requester_key, "requester_key") if requester_key is not None else None
    core.active_runs.start(identity, run)
    core.run_ledger.start(
        identity,
        run,
        at_ms=core.now_ms(),
        requester_key=requester,
        label=check_optional_text(label, "label"),
        mode=check_optional_text(mode, "mode"),
    )


def run_ended(
    core: Core, key: object, run_id: object, *, agent_id: object = None, outcome: object = None
) -> None:
    """A run of the session ended (an unknown run id changes nothing); `outcome` None when unknown."""
    core.check_open()
    run = check_text(run_id, "run_id")
    if outcome is not None and outcome not in _RUN_OUTCOMES:
        raise InvalidSignal("outcome", f"must be one of {', '.join(_RUN_OUTCOMES)}")
    checked = cast("RunOutcome | None", outcome)
    core.active_runs.end(resolve_identity(key, agent_id), run)
    core.run_ledger.end(run, at_ms=core.now_ms(), outcome=checked)


def runs(core: Core) -> list[RunRecord]:
    """The runs this process heard of: active ones and those ended within a day, newest first."""
    core.check_open()
    return core.run_ledger.records(now_ms=core.now_ms())


def _fields(identity: SessionIdentity) -> dict[str, str]:
    return {"session_key": identity.session_key, "agent_id": identity.agent_id}
