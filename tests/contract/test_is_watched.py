"""Whether a session is watched, on every store and through both façades.

`is_watched` is True exactly while some cursor targets the session: an explicit watch, a spawn
edge, an ambient watch; a removed watch, or a watch of another identity with the same key, leaves
it False. A malformed key, or a bare key without its agent, is refused like every other query.
"""

from __future__ import annotations

import pytest

from sessionwatch import InvalidQuery, SessionWatch

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"


def test_a_session_is_watched_exactly_while_a_cursor_targets_it(watch: SessionWatch) -> None:
    watch.upsert_session(CHILD)
    assert watch.is_watched(CHILD) is False
    assert watch.watch(MANAGER, CHILD)
    assert watch.is_watched(CHILD) is True
    assert watch.is_watched(MANAGER) is False  # watching is not being watched
    assert watch.unwatch(MANAGER, CHILD)
    assert watch.is_watched(CHILD) is False


def test_a_spawn_and_an_ambient_watch_count(watch: SessionWatch) -> None:
    watch.record_spawn(requester_key=MANAGER, child_key=CHILD, child_run_id="r1")
    assert watch.watch("agent:main:other", "agent:main:telegram:group:1", ambient=True)
    assert watch.is_watched(CHILD) is True
    assert watch.is_watched("agent:main:telegram:group:1") is True


def test_a_bare_key_is_one_identity_per_agent(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, "global", target_agent_id="ops")
    assert watch.is_watched("global", agent_id="ops") is True
    assert watch.is_watched("global", agent_id="main") is False
    with pytest.raises(InvalidQuery):
        watch.is_watched("global")
    with pytest.raises(InvalidQuery):
        watch.is_watched("agent:main")
