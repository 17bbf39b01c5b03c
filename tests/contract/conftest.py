"""The contract suite runs through both façades: every test, on every store, sync and async."""

from __future__ import annotations

import pytest
from fakes import ProbingWaker


@pytest.fixture(autouse=True)
def _each_facade(through_each_facade: str) -> str:
    return through_each_facade


@pytest.fixture
def waker() -> ProbingWaker:
    """A waker that records each wake (and runs a probe inside it when a test sets one)."""
    return ProbingWaker()
