"""Watching and notice use cases: register and remove watches, read, drain and acknowledge notices.

Also what a session watches: its cursors (`watched_by`) and the bounded block a host puts in its
system prompt (`watch_prompt`, rendered by `domain.watch_prompt`).

A watch starts at the target's head and never clobbers an existing cursor. Acknowledging sets
`L := N` and leaves exactly one follow-up notice where more arrived (`M > N`), whose watcher is
woken after the commit. Reading notices or cursors never acknowledges anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sessionwatch.adapters.app.checks import query_cursor_key, query_identity, query_key
from sessionwatch.adapters.app.core import Core, Done, Work, done, wakes_of
from sessionwatch.adapters.app.digests import acknowledged_digest, drain_digest_in, pending_digest
from sessionwatch.adapters.stores.port import WriteTransaction
from sessionwatch.domain import watch_cursor
from sessionwatch.domain.errors import InvalidQuery, InvalidSignal
from sessionwatch.domain.keys import check_key, resolve_identity
from sessionwatch.domain.watch_cursor import (
    AMBIENT,
    EXPLICIT,
    AcknowledgeNotice,
    CursorKey,
    CursorState,
    Provenance,
    RegisterWatch,
    RemoveWatch,
)
from sessionwatch.domain.watch_prompt import watch_prompt_text
from sessionwatch.projections.models import Cursor, Notice


def key_fields(key: CursorKey) -> dict[str, str]:
    """A cursor key as the fields of a cursor command."""
    return {"watcher": key.watcher, "target_key": key.target_key, "target_agent_id": key.target_agent_id}


def watch(
    core: Core,
    watcher_key: object,
    target_key: object,
    *,
    target_agent_id: object = None,
    ambient: object = False,
) -> Work[list[CursorState], bool] | bool:
    """Register a watch at the target's current head: explicit, or ambient (queue-only notices).

    False, writing nothing, for a watcher that is not agent-qualified, a bare target without its
    agent id, or a self-watch; else the work registering it (True). An existing cursor keeps its
    positions: an explicit watch promotes an ambient one (whose pending notice then wakes its
    watcher), an ambient watch never downgrades an explicit one.
    """
    if not isinstance(ambient, bool):
        raise InvalidQuery("ambient", "must be True or False")
    watcher = check_key(watcher_key, "watcher_key")
    check_key(target_key, "target_key")
    if not watch_cursor.can_watch(watcher):
        return False
    try:
        target = resolve_identity(target_key, target_agent_id, "target_key")
    except InvalidSignal:
        return False
    if watch_cursor.watcher_identity(watcher) == target:
        return False
    key = CursorKey(watcher, target.session_key, target.agent_id)

    provenance: Provenance = AMBIENT if ambient else EXPLICIT

    def run(tx: WriteTransaction) -> list[CursorState]:
        promoted = register_in(tx, key, provenance, core.now_ms())
        return [promoted] if promoted is not None and promoted.pending else []

    return Work(run, lambda pending: Done(value=True, wakes=wakes_of(pending)))


def register_in(
    tx: WriteTransaction, key: CursorKey, provenance: Provenance, at_ms: int
) -> CursorState | None:
    """Register the watch inside `tx` at the target's head; the cursor when one was promoted, else None."""
    current = tx.cursor(key)
    head = tx.session(key.target).head
    command = RegisterWatch(**key_fields(key), at_ms=at_ms, head=head, provenance=provenance)
    events = watch_cursor.decide(command, current)
    if not events:
        return None
    tx.append_cursor(key, events, before=current)
    return watch_cursor.evolve(current, events[0]) if current is not None else None


def unwatch(
    core: Core, watcher_key: object, target_key: object, *, target_agent_id: object = None
) -> Work[bool, bool]:
    """Stop watching; True when a cursor was removed."""
    key = query_cursor_key(watcher_key, target_key, target_agent_id)

    def run(tx: WriteTransaction) -> bool:
        current = tx.cursor(key)
        events = watch_cursor.decide(RemoveWatch(**key_fields(key), at_ms=core.now_ms()), current)
        if events:
            tx.append_cursor(key, events, before=current)
        return bool(events)

    return Work(run, done)


def cursor(
    core: Core, watcher_key: object, target_key: object, *, target_agent_id: object = None
) -> Cursor | None:
    """The watcher's cursor on the target, or None."""
    state = core.store.cursor(query_cursor_key(watcher_key, target_key, target_agent_id))
    return Cursor.from_state(state) if state is not None else None


def watched_by(core: Core, watcher_key: object) -> list[Cursor]:
    """Every cursor of the watcher (pending or not), ordered by target key then agent id."""
    return [Cursor.from_state(c) for c in _cursors_by_target(core, watcher_key)]


def is_watched(core: Core, key: object, *, agent_id: object = None) -> bool:
    """Whether any session watches the identity (holds a cursor on it), ambient watches included."""
    return core.store.has_cursor_on(query_identity(key, agent_id))


def watch_prompt(core: Core, watcher_key: object) -> str:
    """The bounded system-prompt block naming what the watcher watches; "" when it watches nothing."""
    return watch_prompt_text(_cursors_by_target(core, watcher_key))


def _cursors_by_target(core: Core, watcher_key: object) -> list[CursorState]:
    """The watcher's cursors in Python's order of (target key, agent id), whatever the store's collation."""
    watcher = query_key(watcher_key, "watcher_key")
    found = core.store.cursors_of(watcher, pending_only=False)
    return sorted(found, key=lambda c: (c.target_key, c.target_agent_id))


def pending_notices(core: Core, watcher_key: object) -> list[Notice]:
    """The watcher's pending notices, one per stale target, without acknowledging them.

    A main session's creation digest, when one is pending, comes last.
    """
    watcher = query_key(watcher_key, "watcher_key")
    cursors = core.store.cursors_of(watcher, pending_only=True)
    return [*(Notice.from_state(c, core.notice_links) for c in cursors), *pending_digest(core, watcher)]


Drained = tuple[list[CursorState], list[CursorState], list[Notice]]
"""What a drain read: the pending cursors, those left with a follow-up, and the digest drained."""


def drain(core: Core, watcher_key: object) -> Work[Drained, list[Notice]]:
    """Return the pending notices and acknowledge each; a follow-up where more arrived.

    A main session's creation digest comes last, and is drained with them.
    """
    watcher = query_key(watcher_key, "watcher_key")

    def run(tx: WriteTransaction) -> Drained:
        pending = tx.cursors_of(watcher, pending_only=True)
        return pending, acknowledge_in(tx, pending, core.now_ms()), drain_digest_in(tx, watcher)

    def finish(outcome: Drained) -> Done[list[Notice]]:
        pending, follow_ups, digests = outcome
        return Done(
            [*(Notice.from_state(c, core.notice_links) for c in pending), *digests],
            wakes_of(follow_ups),
            opened=len(follow_ups),
            acknowledged=len(pending) + len(digests),
        )

    return Work(run, finish, "sessionwatch.drain")


def acknowledge(
    core: Core, watcher_key: object, targets: Iterable[str | Notice]
) -> Work[tuple[int, list[CursorState]], None]:
    """Two-phase alternative to `drain`: acknowledge the notices read with `pending_notices`.

    A `Notice` names its target exactly; a key names every target with that key. The watcher's
    own key, or its digest notice, names its creation digest (a notice through its `last_seen`).
    """
    watcher = query_key(watcher_key, "watcher_key")
    if isinstance(targets, str | bytes | Mapping) or not isinstance(targets, Iterable):
        raise InvalidQuery("targets", "must be an iterable of target keys or notices")
    chosen_targets = list(targets)  # read twice below; a generator must not be spent by the first pass
    if any(not isinstance(t, str | Notice) for t in chosen_targets):
        raise InvalidQuery("targets", "each target must be a session key or a Notice")
    exact = {(t.target, t.target_agent_id) for t in chosen_targets if isinstance(t, Notice)}
    by_key = {query_key(t, "targets") for t in chosen_targets if isinstance(t, str)}
    named_digest, through = acknowledged_digest(watcher, chosen_targets)

    def run(tx: WriteTransaction) -> tuple[int, list[CursorState]]:
        chosen = [
            c
            for c in tx.cursors_of(watcher, pending_only=True)
            if (c.target_key, c.target_agent_id) in exact or c.target_key in by_key
        ]
        digests = drain_digest_in(tx, watcher, through=through) if named_digest else []
        return len(chosen) + len(digests), acknowledge_in(tx, chosen, core.now_ms())

    def finish(outcome: tuple[int, list[CursorState]]) -> Done[None]:
        acknowledged, follow_ups = outcome
        return Done(None, wakes_of(follow_ups), opened=len(follow_ups), acknowledged=acknowledged)

    return Work(run, finish, "sessionwatch.acknowledge")


def acknowledge_in(tx: WriteTransaction, cursors: Sequence[CursorState], at_ms: int) -> list[CursorState]:
    """Acknowledge each cursor inside `tx` at `at_ms`; those left with a follow-up notice."""
    follow_ups = []
    for current in cursors:
        events = watch_cursor.decide(AcknowledgeNotice(**key_fields(current.key), at_ms=at_ms), current)
        tx.append_cursor(current.key, events, before=current)
        after: CursorState | None = current
        for event in events:
            after = watch_cursor.evolve(after, event)
        if after is not None and after.pending:
            follow_ups.append(after)
    return follow_ups
