"""What a session watches, on every store and through both façades: its cursors and its prompt block.

`watched_by` lists exactly the watcher's cursors in target order, each flagged pending while its
notice is open; `watch_prompt` names the same sessions in a bounded block, empty without cursors,
byte-identical while nothing changes. A malformed watcher key is refused like every other query.
"""

from __future__ import annotations

import pytest

from sessionwatch import Actor, Cursor, InvalidQuery, SessionWatch, SignalKind
from sessionwatch.domain.watch_prompt import MAX_CHARS, MAX_SESSIONS

MANAGER = "agent:main:main"
WRITER = "agent:main:subagent:writer"
READER = "agent:main:subagent:reader"


def change(watch: SessionWatch, target: str, *, agent_id: str | None = None) -> int:
    """A human changes `target`: the sequence of that change."""
    signal = watch.record(
        target, kind=SignalKind.HUMAN_DIRECT_MESSAGE, actor=Actor.human(), summary="hi", agent_id=agent_id
    )
    assert signal is not None
    return signal.sequence


def positions(cursors: list[Cursor]) -> list[tuple[str, str, int, int, int, bool]]:
    return [(c.target, c.target_agent_id, c.last_seen, c.notified, c.material, c.pending) for c in cursors]


def test_watched_by_lists_exactly_the_watchers_cursors_in_target_order(watch: SessionWatch) -> None:
    first = change(watch, WRITER)
    assert watch.watch(MANAGER, WRITER)
    assert watch.watch(MANAGER, READER)
    assert watch.watch(MANAGER, "global", target_agent_id="ops")
    assert watch.watch("agent:main:other", WRITER)

    cursors = watch.watched_by(MANAGER)

    assert positions(cursors) == [
        (READER, "main", 0, 0, 0, False),
        (WRITER, "main", first, first, first, False),
        ("global", "ops", 0, 0, 0, False),
    ]
    assert {c.watcher for c in cursors} == {MANAGER}
    for listed in cursors:
        assert listed == watch.cursor(MANAGER, listed.target, target_agent_id=listed.target_agent_id)


def test_the_pending_flag_follows_a_change_and_a_drain(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, WRITER)
    assert watch.watch(MANAGER, READER)
    changed = change(watch, WRITER)

    assert positions(watch.watched_by(MANAGER)) == [
        (READER, "main", 0, 0, 0, False),
        (WRITER, "main", 0, changed, changed, True),
    ]
    watch.drain(MANAGER)
    assert positions(watch.watched_by(MANAGER)) == [
        (READER, "main", 0, 0, 0, False),
        (WRITER, "main", changed, changed, changed, False),
    ]


def test_a_removed_watch_is_no_longer_listed(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, WRITER)
    assert watch.watch(MANAGER, READER)
    assert watch.unwatch(MANAGER, WRITER)

    assert [c.target for c in watch.watched_by(MANAGER)] == [READER]
    assert WRITER not in watch.watch_prompt(MANAGER)


def test_a_watcher_without_cursors_watches_nothing_and_gets_an_empty_prompt(watch: SessionWatch) -> None:
    assert watch.watched_by(MANAGER) == []
    assert watch.watch_prompt(MANAGER) == ""
    assert watch.watch(MANAGER, WRITER)
    assert watch.unwatch(MANAGER, WRITER)
    assert watch.watch_prompt(MANAGER) == ""


def test_the_prompt_names_each_watched_session_says_it_can_be_read_and_how_to_reconcile(
    watch: SessionWatch,
) -> None:
    assert watch.watch(MANAGER, WRITER)
    assert watch.watch(MANAGER, "global", target_agent_id="ops")
    changed_from = watch.watched_by(MANAGER)[0].last_seen
    change(watch, WRITER)

    lines = watch.watch_prompt(MANAGER).splitlines()

    assert lines[0].startswith("Sessions you watch (2). You can read each of them with your session tools")
    assert lines[1:3] == [
        f'- "{WRITER}": changesSince {changed_from}, changed (other actor): reconcile before acting',
        '- "global" agentId "ops": changesSince 0',
    ]
    assert 'session_status sessionKey "<key>" changesSince <N>' in lines[3]
    assert len(lines) == 4


def test_the_prompt_is_byte_stable_until_a_cursor_moves(watch: SessionWatch) -> None:
    assert watch.watch(MANAGER, WRITER)
    assert watch.watch(MANAGER, READER)
    change(watch, WRITER)
    first = watch.watch_prompt(MANAGER)

    change(watch, WRITER)  # a second change while the notice is open moves only M
    assert watch.watch_prompt(MANAGER).encode() == first.encode()
    watch.drain(MANAGER)
    assert watch.watch_prompt(MANAGER) != first


def test_many_long_keys_stay_within_the_bound_and_the_rest_is_counted(watch: SessionWatch) -> None:
    targets = [f"agent:main:subagent:{index:03d}-{'x' * 480}" for index in range(MAX_SESSIONS + 5)]
    for target in targets:
        assert watch.watch(MANAGER, target)

    prompt = watch.watch_prompt(MANAGER)

    assert len(prompt) <= MAX_CHARS
    listed = [line for line in prompt.splitlines() if line.startswith('- "')]
    assert listed
    assert [line.split('"')[1] for line in listed] == targets[: len(listed)]
    assert f"- and {len(targets) - len(listed)} more not listed here" in prompt.splitlines()
    assert prompt.startswith(f"Sessions you watch ({len(targets)}).")


def test_more_sessions_than_the_cap_list_the_first_in_target_order(watch: SessionWatch) -> None:
    targets = [f"agent:main:subagent:{index:02d}" for index in range(MAX_SESSIONS + 3)]
    for target in reversed(targets):
        assert watch.watch(MANAGER, target)

    lines = watch.watch_prompt(MANAGER).splitlines()

    assert [line.split('"')[1] for line in lines if line.startswith('- "')] == targets[:MAX_SESSIONS]
    assert "- and 3 more not listed here" in lines


@pytest.mark.parametrize("key", ["", "   ", "agent:main", "agent:main:\nx", 42])
def test_a_malformed_watcher_key_is_an_invalid_query_naming_it(watch: SessionWatch, key: object) -> None:
    for query in (watch.watched_by, watch.watch_prompt):
        with pytest.raises(InvalidQuery) as refused:
            query(key)  # type: ignore[arg-type]
        assert refused.value.field == "watcher_key"
