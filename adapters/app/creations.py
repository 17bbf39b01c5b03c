"""The `created` producer (ADR-0047); the digest's notices live in `digests`.

`record_session_created` registers the new session (with its session id, so the restart sweep
finds it as an existing watcher) and records a log-only `created` signal on it. With
`notify_on_create`, the same transaction notes the created key on its agent's main session's
digest (never the main session's own creation, never a key the host marks internal): one bounded
notice that the main session's next `drain` returns and acknowledges. The digest is queue-only: it
wakes nobody, at the record or at the restart sweep.
"""

from __future__ import annotations

from sessionwatch.adapters.app.checks import check_actor
from sessionwatch.adapters.app.core import Core, Done, Work, wakes_of
from sessionwatch.adapters.app.recording import RECORD, Recorded, record_in
from sessionwatch.adapters.stores.port import WriteTransaction
from sessionwatch.domain import digest, session
from sessionwatch.domain.keys import resolve_identity
from sessionwatch.domain.recording import check_signal
from sessionwatch.domain.session import UpsertSession
from sessionwatch.domain.signals import CREATED_SUMMARY, SignalKind, check_optional_text, created_dedupe_key
from sessionwatch.projections.models import Signal


def session_created(
    core: Core,
    key: object,
    *,
    actor: object,
    session_id: object = None,
    agent_id: object = None,
    internal: bool = False,
) -> Work[Recorded, Signal]:
    """A session was created: registered, `created` on it (log only), when asked a note on the digest.

    The dedupe key is `created:<agentId>:<sessionKey>:<sessionId>` (the last part empty without a
    session id): recording the same creation again answers with the retained signal, notes nothing.
    """
    who = check_actor(actor)
    identity = resolve_identity(key, agent_id)
    checked_session_id = check_optional_text(session_id, "session_id")
    created = check_signal(
        session_key=identity.session_key,
        agent_id=identity.agent_id,
        kind=SignalKind.CREATED,
        actor_type=who.actor_type,
        actor_id=who.actor_id,
        summary=CREATED_SUMMARY,
        session_id=checked_session_id,
        dedupe_key=created_dedupe_key(identity.agent_id, identity.session_key, checked_session_id),
        now=core.clock.now(),
    )
    noting = core.notify_on_create and not internal
    main = resolve_identity(core.main_session_of(identity.agent_id))  # its agent id normalized

    registration = UpsertSession(
        session_key=identity.session_key, agent_id=identity.agent_id, session_id=checked_session_id
    )

    def run(tx: WriteTransaction) -> Recorded:
        registered = session.decide(registration, tx.session(identity))  # none for a repeated one
        if registered:
            tx.append(identity, registered)
        recorded = record_in(tx, created)
        event, _, now = recorded
        if now and noting:
            events = digest.note_creation(tx.digest(main), main, event.session_key, event.sequence)
            if events:
                tx.append_digest(main, events)
        return recorded

    def finish(recorded: Recorded) -> Done[Signal]:
        event, facts, now = recorded  # a log-only kind: it opens no notice
        return Done(
            Signal.from_event(event), wakes_of(facts), recorded=True, kinds=(event.kind,) if now else ()
        )

    return Work(run, finish, RECORD)
