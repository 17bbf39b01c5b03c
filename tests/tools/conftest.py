"""Fixtures of the session-tool suites: a `SessionWatch` (every store, or memory) and fresh port fakes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tools.fakes import Env

import sessionwatch
from sessionwatch import SessionWatch
from sessionwatch.testing import FakeClock


@pytest.fixture
def env(watch: SessionWatch, clock: FakeClock) -> Env:
    """Fresh fakes over a fresh store of every kind (memory, SQLite, PostgreSQL)."""
    return Env(watch=watch, clock=clock)


@pytest.fixture
def mem(clock: FakeClock) -> Iterator[Env]:
    """Fresh fakes over a fresh in-memory store (for rules that storage does not touch)."""
    with sessionwatch.open("memory://", clock=clock) as opened:
        yield Env(watch=opened, clock=clock)
