"""The world the notice machine explores: its sessions, watchers, actors and expected texts.

Small on purpose: a few keys of every shape (agent-qualified, subagent, group, cron, bare) and the
actors that write to them, so Hypothesis reaches every rule's corners in a few steps.
"""

from __future__ import annotations

from sessionwatch.domain.signals import Actor, SignalKind
from sessionwatch.testing.model import Identity, identity_of_watcher

WATCHERS = ("agent:main:main", "agent:ops:main", "agent:main:subagent:helper", "agent:ops:SubAgent:probe")
"""Agent-qualified watchers; the last two are subagent keys (never woken)."""

GROUP: Identity = ("agent:main:telegram:group:7", "main")
"""A group session: a human turn into it makes `agent:main:main` its ambient watcher first."""

CRON_GROUP: Identity = ("agent:main:cron:nightly:group:7", "main")
"""A cron session whose key names a group: no group, so a human turn into it registers nothing."""

TARGETS: tuple[Identity, ...] = (
    ("agent:main:worker", "main"),
    ("agent:Ops:Worker", "ops"),  # a key that writes its agent id capitalized: agent ops's session
    GROUP,
    CRON_GROUP,
    ("agent:main:subagent:child", "main"),
    ("global", "main"),
    ("global", "ops"),
)
"""Watched sessions; the two `global`s differ only by agent id and must never mix; `agent:Ops:Worker`
is agent `ops`'s (its agent id normalized), a session of its own beside any `agent:ops:worker`."""

OUTSIDER = "agent:research:outsider"
"""An agent that is never upserted: it may hold a seeded cursor, the sweep must skip it."""


def expected_text(target: str, last_seen: int) -> str:
    """The notice line, byte for byte, spelled out here rather than imported."""
    return (
        f'Session "{target}" changed (other actor). Reconcile before acting: '
        f'session_status sessionKey "{target}" changesSince {last_seen}.'
    )


def expect(actual: object, expected: object, what: str) -> None:
    """Fail with both values (an explicit raise: checks must survive `python -O`)."""
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def require(condition: bool, what: str) -> None:
    """Fail with `what` unless `condition` holds (an explicit raise, as `expect`)."""
    if not condition:
        raise AssertionError(what)


IDENTITIES: tuple[Identity, ...] = (
    *TARGETS,
    *(identity for identity in map(identity_of_watcher, WATCHERS) if identity is not None),
)
HOLDER_KEYS = (*WATCHERS, "agent:main:worker", OUTSIDER)
"""Every key that can come to hold a cursor in the machine."""
PRODUCER_WATCHERS = (*WATCHERS, "agent:main:worker", "global", "cron:nightly")
MACHINE_ACTORS = (
    Actor.human(),
    Actor.human("alice"),
    Actor.system(),
    *(Actor.agent(w) for w in WATCHERS),
    Actor.agent("agent:main:worker"),
    Actor.agent(OUTSIDER),
)
KIND_SUMMARIES = {
    SignalKind.HUMAN_DIRECT_MESSAGE: "human message via telegram",
    SignalKind.UPSTREAM_MISSING: "upstream missing via claude-code",
    SignalKind.GOAL_CHANGED: "goal updated",
    SignalKind.CHILD_SPAWNED: "child session spawned",
    SignalKind.RUN_COMPLETED: "child run completed",
    SignalKind.RUN_FAILED: "child run failed",
    SignalKind.COMPACTED: "session compacted",
    SignalKind.ADOPTED: "session adopted",
    SignalKind.CREATED: "session created",
}
