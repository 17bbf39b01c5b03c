"""The creation digest as notices: listed, drained and acknowledged beside the cursor notices (ADR-0047).

A main session's digest is one notice whose target is the main session itself and whose `last_seen`
is the sequence of the newest creation it lists. `drain` stores `digest.drained.v1` through that
sequence; a two-phase `acknowledge` drains through a digest notice's `last_seen`, or all of it when
named by the main session's own key (no cursor targets its own watcher, so that name is free).
"""

from __future__ import annotations

from collections.abc import Sequence

from sessionwatch.adapters.app.core import Core
from sessionwatch.adapters.stores.port import WriteTransaction
from sessionwatch.domain import digest
from sessionwatch.domain.digest import DIGEST_NOTICE, DigestState
from sessionwatch.domain.watch_cursor import watcher_identity
from sessionwatch.projections.models import Notice


def digest_notice(state: DigestState, watcher: str) -> Notice:
    """The digest as a notice: its target is the main session itself, `last_seen` its newest creation."""
    return Notice(
        watcher=watcher,
        target=state.session_key,
        target_agent_id=state.agent_id,
        last_seen=state.newest,
        text=state.text,
        provenance="ambient",  # queue-only: a digest never wakes
        digest=DIGEST_NOTICE,
    )


def pending_digest(core: Core, watcher: str) -> list[Notice]:
    """The watcher's digest notice (none for a watcher that is no main session with a digest)."""
    identity = watcher_identity(watcher)
    state = core.store.digest(identity) if identity is not None else None
    return [digest_notice(state, watcher)] if state is not None else []


def drain_digest_in(tx: WriteTransaction, watcher: str, *, through: int | None = None) -> list[Notice]:
    """Drain the watcher's digest inside `tx` (through `through`, else all of it); the notice drained."""
    identity = watcher_identity(watcher)
    state = tx.digest(identity) if identity is not None else None
    if identity is None or state is None:
        return []
    events = digest.drain(state, through)
    if not events:
        return []
    tx.append_digest(identity, events)
    return [digest_notice(state, watcher)]


def acknowledged_digest(watcher: str, targets: Sequence[object]) -> tuple[bool, int | None]:
    """Whether `targets` name the watcher's digest, and through which sequence (None: all of it).

    A digest notice names it exactly (through its `last_seen`); the watcher's own key names it
    whole (no cursor ever targets its own watcher, so the key means nothing else).
    """
    identity = watcher_identity(watcher)
    if identity is None:
        return False, None
    throughs = [
        t.last_seen
        for t in targets
        if isinstance(t, Notice) and t.digest is not None and (t.target, t.target_agent_id) == identity
    ]
    if any(isinstance(t, str) and t.strip() == identity.session_key for t in targets):
        return True, None
    return (True, max(throughs)) if throughs else (False, None)
