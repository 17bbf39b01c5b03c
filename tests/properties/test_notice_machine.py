"""The notice protocol under arbitrary interleavings (SPEC §4, §5, §6, §9), on every store.

The machine is the packaged one hosts run (`sessionwatch.testing.SessionWatchMachine`, SPEC §16):
it keeps its own model of `(L, N, M)` per (watcher, target identity) pair, written from the SPEC
rules and never from the domain functions, and compares the store with it after every step. Here
it runs on memory (its default `open_watch`; a restart sweeps), SQLite and PostgreSQL (a restart
reopens the store), each through the sync and the async façade.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from stores import fresh_store_url, needs_postgres

import sessionwatch
from sessionwatch import Clock, SessionWatch, Waker
from sessionwatch.testing import SessionWatchMachine

MACHINE_SETTINGS = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class StoreMachine(SessionWatchMachine):
    """The machine on a fresh store of `store_kind` (tests/stores.py); each restart reopens it."""

    store_kind: ClassVar[str]

    def __init__(self) -> None:
        self.stores = ExitStack()
        self.url: str | None = None
        super().__init__()

    def open_watch(self, clock: Clock, waker: Waker) -> SessionWatch:
        if self.url is None:
            self.url = self.stores.enter_context(
                fresh_store_url(self.store_kind, self.tmp_path, "machine.db", reuse=True)
            )
        return sessionwatch.open(
            self.url,
            clock=clock,
            waker=waker,
            notify_terminal_runs=self.notify_terminal_runs,
            wake_coalesce=self.wake_coalesce,
            notify_on_create=self.notify_on_create,
        )

    def teardown(self) -> None:
        try:
            super().teardown()
        finally:
            self.stores.close()


class SqliteMachine(StoreMachine):
    """A SQLite file in the example's own temporary directory."""

    store_kind = "sqlite"


class PostgresMachine(StoreMachine):
    """A PostgreSQL schema of its own, emptied after each example."""

    store_kind = "postgres"


def on_every_store(**setting: object) -> list[object]:
    """The machine on memory, SQLite and PostgreSQL, each with `setting` (class attributes) set."""
    stores: tuple[tuple[str, type[SessionWatchMachine], tuple[pytest.MarkDecorator, ...]], ...] = (
        ("memory", SessionWatchMachine, ()),
        ("sqlite", SqliteMachine, ()),
        ("postgres", PostgresMachine, (needs_postgres,)),
    )
    if not setting:
        return [pytest.param(machine, id=name, marks=marks) for name, machine, marks in stores]
    return [
        pytest.param(type(f"{machine.__name__}With", (machine,), dict(setting)), id=name, marks=marks)
        for name, machine, marks in stores
    ]


@pytest.mark.parametrize("machine", on_every_store())
@pytest.mark.usefixtures("through_each_facade")
def test_notice_machine_matches_the_spec_model(machine: type[SessionWatchMachine]) -> None:
    run_state_machine_as_test(machine, settings=MACHINE_SETTINGS)


@pytest.mark.parametrize("machine", on_every_store(notify_terminal_runs=True))
@pytest.mark.usefixtures("through_each_facade")
def test_notice_machine_with_terminal_runs_notifying_matches_the_model(
    machine: type[SessionWatchMachine],
) -> None:
    run_state_machine_as_test(machine, settings=MACHINE_SETTINGS)


COALESCE_WINDOW = 3600.0
"""An hour: the machine's clock steps (1 to 180 minutes) land inside a window and past its end."""


@pytest.mark.parametrize("machine", on_every_store(wake_coalesce=COALESCE_WINDOW))
@pytest.mark.usefixtures("through_each_facade")
def test_notice_machine_with_wakes_coalesced_matches_the_model(machine: type[SessionWatchMachine]) -> None:
    run_state_machine_as_test(machine, settings=MACHINE_SETTINGS)


@pytest.mark.parametrize("machine", on_every_store(notify_on_create=True))
@pytest.mark.usefixtures("through_each_facade")
def test_notice_machine_with_creations_noted_matches_the_model(
    machine: type[SessionWatchMachine],
) -> None:
    run_state_machine_as_test(machine, settings=MACHINE_SETTINGS)
