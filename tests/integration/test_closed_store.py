"""After `close()`, every method of both façades raises one error on every store.

That error is `StoreError("the store is closed")`, whatever the method and the store; the best-effort
producers raise nothing and answer None (with one log line, as on any failure). Every public method
of `SessionWatch` and `AsyncSessionWatch` is called once, with arguments that would succeed on an
open store; the async façade is driven through the blocking adapter of tests/facades.py.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from facades import BlockingWatch, open_blocking

import sessionwatch
from sessionwatch import Actor, SessionWatch, SignalInput, StoreError, UpstreamActivity, UpstreamProbe
from sessionwatch.aio import AsyncSessionWatch
from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SessionState
from sessionwatch.domain.upstream import AdvanceOnly, UpstreamLinkState

WATCHER = "agent:main:main"
TARGET = "agent:main:worker"
LINK: dict[str, Any] = {
    "catalog_id": "c",
    "host_id": "h",
    "thread_id": "t",
    "upstream_kind": "k",
    "upstream_ref": "r",
    "marker": {"offset": 0},
}
"""The upstream link every case makes."""
CHILD = "agent:main:subagent:child"

Watch = SessionWatch | BlockingWatch
Call = Callable[[Any, UpstreamLinkState], object]
"""One ordinary call of a method, on a (closed) façade, given an upstream link it had."""


class NeverAsked:
    """A provider a closed store must not reach."""

    def check_upstream_activity(self, probes: list[UpstreamProbe]) -> list[UpstreamActivity]:
        raise AssertionError(f"a closed store asked its provider about {probes}")


STRICT: dict[str, Call] = {
    "upsert_session": lambda w, _: w.upsert_session(TARGET),
    "reset_session": lambda w, _: w.reset_session(TARGET),
    "delete_session": lambda w, _: w.delete_session(TARGET),
    "update_session": lambda w, _: w.update_session(TARGET, label="x"),
    "registry_entry": lambda w, _: w.registry_entry(TARGET),
    "registry_entries": lambda w, _: w.registry_entries(),
    "run_started": lambda w, _: w.run_started(TARGET, "run-1"),
    "run_ended": lambda w, _: w.run_ended(TARGET, "run-1", outcome="ok"),
    "runs": lambda w, _: w.runs(),
    "record": lambda w, _: w.record(TARGET, kind="goal_changed", actor=Actor.system(), summary="x"),
    "record_many": lambda w, _: w.record_many(
        [SignalInput(session_key=TARGET, kind="goal_changed", actor=Actor.system(), summary="x")]
    ),
    "watch": lambda w, _: w.watch(WATCHER, TARGET),
    "unwatch": lambda w, _: w.unwatch(WATCHER, TARGET),
    "cursor": lambda w, _: w.cursor(WATCHER, TARGET),
    "watched_by": lambda w, _: w.watched_by(WATCHER),
    "is_watched": lambda w, _: w.is_watched(TARGET),
    "watch_prompt": lambda w, _: w.watch_prompt(WATCHER),
    "pending_notices": lambda w, _: w.pending_notices(WATCHER),
    "drain": lambda w, _: w.drain(WATCHER),
    "acknowledge": lambda w, _: w.acknowledge(WATCHER, [TARGET]),
    "sweep": lambda w, _: w.sweep(),
    "prune": lambda w, _: w.prune(),
    "link_upstream": lambda w, _: w.link_upstream(TARGET, **LINK),
    "unlink_upstream": lambda w, _: w.unlink_upstream(TARGET),
    "upstream_link": lambda w, _: w.upstream_link(TARGET),
    "upstream_links": lambda w, _: w.upstream_links(catalog_id="c"),
    "upstream_tick": lambda w, _: w.upstream_tick({"c": NeverAsked()}),
    "follow_upstream": lambda w, _: w.follow_upstream(TARGET, {"c": NeverAsked()}),
    "start_upstream_monitor": lambda w, _: w.start_upstream_monitor({"c": NeverAsked()}, initial_delay=0),
    "apply_upstream_verdict": lambda w, link: w.apply_upstream_verdict(
        link,
        AdvanceOnly(activity=UpstreamActivity(session_key=TARGET, human_turns=0, next_marker={"offset": 1})),
        session=SessionState(session_key=TARGET, agent_id="main"),
    ),
    "session_status": lambda w, _: w.session_status(TARGET, changes_since=0),
    "status_as_of": lambda w, _: w.status_as_of(TARGET, 1),
    "sessions_list": lambda w, _: w.sessions_list(),
    "rebuild_read_model": lambda w, _: w.rebuild_read_model(),
    "audit": lambda w, _: w.audit(),
}
"""Every method that answers or writes: after close each raises."""

PRODUCERS: dict[str, Call] = {
    "record_human_message": lambda w, _: w.record_human_message(TARGET, channel="telegram"),
    "record_goal_changed": lambda w, _: w.record_goal_changed(TARGET, summary="goal set"),
    "record_spawn": lambda w, _: w.record_spawn(requester_key=WATCHER, child_key=CHILD, child_run_id="run-1"),
    "record_run_terminal": lambda w, _: w.record_run_terminal(
        child_key=CHILD, run_id="run-1", requester_key=WATCHER, outcome="ok"
    ),
    "record_compacted": lambda w, _: w.record_compacted(TARGET, operation_id="op-1"),
    "record_adopted": lambda w, _: w.record_adopted(TARGET),
    "record_session_created": lambda w, _: w.record_session_created(CHILD, actor=Actor.system()),
}
"""Best effort: after close each answers None and logs one line."""

LIFECYCLE = {"close", "aclose", "settled"}
"""Closing again is harmless; `settled` waits for nothing on a closed store."""


def public_methods(cls: type) -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(cls)  # its own and its bases' (a façade has rooms)
        if not name.startswith("_") and (inspect.isfunction(member) or inspect.iscoroutinefunction(member))
    }


@pytest.mark.parametrize("cls", [SessionWatch, AsyncSessionWatch])
def test_the_calls_below_are_every_public_method_of_each_facade(cls: type) -> None:
    assert public_methods(cls) - LIFECYCLE == set(STRICT) | set(PRODUCERS)


@pytest.fixture
def closed(facade: str, store_url: str) -> Iterator[tuple[Watch, UpstreamLinkState]]:
    """A façade of the parametrized kind on each store, closed, and an upstream link it had."""
    watch: Watch = sessionwatch.open(store_url) if facade == "sync" else open_blocking(store_url)
    watch.link_upstream(TARGET, **LINK)
    link = watch.store.upstream_link(SessionIdentity(TARGET, "main"))
    assert link is not None
    watch.close()
    yield watch, link
    watch.close()  # closing twice is harmless


@pytest.mark.parametrize("name", sorted(STRICT))
def test_a_method_of_a_closed_store_raises_the_store_is_closed(
    name: str, closed: tuple[Watch, UpstreamLinkState]
) -> None:
    watch, link = closed
    with pytest.raises(StoreError) as raised:
        STRICT[name](watch, link)
    assert type(raised.value) is StoreError
    assert str(raised.value) == "the store is closed"


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_a_producer_on_a_closed_store_answers_none_with_one_log_line(
    name: str, closed: tuple[Watch, UpstreamLinkState], caplog: pytest.LogCaptureFixture
) -> None:
    watch, link = closed
    caplog.set_level(logging.DEBUG, logger="sessionwatch")

    assert PRODUCERS[name](watch, link) is None
    [line] = caplog.records
    assert line.getMessage().startswith("sessionwatch: signal not recorded")
