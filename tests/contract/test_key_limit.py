"""One key limit for every store, checked by the strict API (ADR-0065): on every store, through both façades.

A key is at most `MAX_KEY_BYTES` bytes in UTF-8 (and 512 characters), an explicit agent id at most
`MAX_AGENT_ID_BYTES`: measured so that the widest index row PostgreSQL writes, a cursor's (target
key, target agent id, watcher key), fits its B-tree. At the limit, in 4-byte characters (the most
bytes a character takes), everything is stored and read back on every store; one byte over is
refused with `InvalidSignal` naming the field, and nothing is written. Before, a 512-character key
of 4-byte characters was stored by memory and SQLite and refused by PostgreSQL with a `StoreError`
(index row size 3056 exceeds the maximum 2704), so a producer on PostgreSQL dropped that turn.
"""

from __future__ import annotations

import pytest

from sessionwatch import Actor, InvalidSignal, SessionWatch, SignalKind
from sessionwatch.domain.keys import (
    INDEX_ROW_BYTES,
    MAX_AGENT_ID_BYTES,
    MAX_KEY_BYTES,
    utf8_bytes,
    widest_index_row,
)

WIDE = "\U0001f600"  # 4 bytes in UTF-8
PREFIX = "agent:main:"


def qualified_key(size: int, fill: str = "w") -> str:
    """An agent-qualified key of exactly `size` bytes, nearly all of them 4-byte characters."""
    room = size - len(PREFIX) - 1
    key = f"{PREFIX}{fill}{'a' * (room % 4)}{WIDE * (room // 4)}"
    assert utf8_bytes(key) == size
    return key


def bare_key(size: int) -> str:
    """A bare key (it needs an explicit agent id) of exactly `size` bytes of 4-byte characters."""
    key = "b" * (size % 4) + WIDE * (size // 4)
    assert utf8_bytes(key) == size
    return key


def agent_id(size: int) -> str:
    agent = "c" * (size % 4) + WIDE * (size // 4)
    assert utf8_bytes(agent) == size
    return agent


def test_the_limit_is_what_the_widest_postgresql_index_row_holds() -> None:
    assert widest_index_row() <= INDEX_ROW_BYTES
    # one more byte a key would still fit; the limit leaves room, but never so much that two keys
    # and an agent id of the old limits (512 characters of 4 bytes) would fit
    assert widest_index_row(key_bytes=512 * 4, agent_id_bytes=64) > INDEX_ROW_BYTES


def test_keys_and_an_agent_id_at_the_limit_are_stored_and_read_back(watch: SessionWatch) -> None:
    watcher = qualified_key(MAX_KEY_BYTES)
    target, target_agent = bare_key(MAX_KEY_BYTES), agent_id(MAX_AGENT_ID_BYTES)
    qualified = qualified_key(MAX_KEY_BYTES, fill="q")
    watch.upsert_session(watcher)
    watch.upsert_session(target, agent_id=target_agent)
    assert watch.watch(watcher, target, target_agent_id=target_agent) is True
    assert watch.watch(watcher, qualified) is True
    for key, agent in ((target, target_agent), (qualified, None)):
        signal = watch.record(
            key, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="hi", agent_id=agent
        )
        assert (signal.session_key, signal.agent_id) == (key, agent or "main")
        assert watch.session_status(key, agent_id=agent).state_version == signal.sequence
    # the widest index row: a cursor of a limit-sized watcher on a limit-sized bare target
    assert sorted(n.target for n in watch.drain(watcher)) == sorted([target, qualified])
    assert {(c.target, c.target_agent_id) for c in watch.watched_by(watcher)} == {
        (target, target_agent),
        (qualified, "main"),
    }
    assert watch.record_human_message(qualified, channel="chat") is not None  # a producer stores it
    assert sorted(row.session_key for row in watch.sessions_list()) == sorted([watcher, target, qualified])


def test_a_key_one_byte_over_the_limit_is_refused_naming_the_field(watch: SessionWatch) -> None:
    over = qualified_key(MAX_KEY_BYTES + 1)
    with pytest.raises(InvalidSignal) as recorded:
        watch.record(over, kind=SignalKind.GOAL_CHANGED, actor=Actor.system(), summary="goal updated")
    assert recorded.value.field == "session_key"
    assert f"{MAX_KEY_BYTES} bytes" in recorded.value.reason
    with pytest.raises(InvalidSignal) as watched:
        watch.watch(over, qualified_key(MAX_KEY_BYTES))
    assert watched.value.field == "watcher_key"
    with pytest.raises(InvalidSignal) as target:
        watch.watch(qualified_key(MAX_KEY_BYTES), over)
    assert target.value.field == "target_key"
    with pytest.raises(InvalidSignal) as agent:
        watch.record(
            bare_key(MAX_KEY_BYTES),
            kind=SignalKind.GOAL_CHANGED,
            actor=Actor.system(),
            summary="goal updated",
            agent_id=agent_id(MAX_AGENT_ID_BYTES + 1),
        )
    assert agent.value.field == "agent_id"
    assert watch.sessions_list() == []


def test_the_512_character_key_of_4_byte_characters_is_refused_alike_everywhere(watch: SessionWatch) -> None:
    key = PREFIX + WIDE * (512 - len(PREFIX))  # stored by memory and SQLite, refused by PostgreSQL before
    with pytest.raises(InvalidSignal) as refused:
        watch.record(key, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="hi")
    assert refused.value.field == "session_key"
    assert watch.record_human_message(key, channel="chat") is None  # a producer drops any malformed key
    assert watch.sessions_list() == []
