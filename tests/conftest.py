"""Fixtures shared by every suite: a fake clock and a `SessionWatch` on each store."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import FakeClock
from hypothesis import HealthCheck, settings

import sessionwatch
from sessionwatch import SessionWatch

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile("ci" if os.environ.get("CI") else "default")

STORES = ("memory", "sqlite")


def store_url(kind: str, tmp_path: Path) -> str:
    """The URL of a fresh store of `kind` under `tmp_path`."""
    if kind == "memory":
        return "memory://"
    return f"sqlite:///{tmp_path / 'state.db'}"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def watch(store_kind: str, tmp_path: Path, clock: FakeClock) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store, for every store (the contract suite's fixture)."""
    with sessionwatch.open(store_url(store_kind, tmp_path), clock=clock) as opened:
        yield opened
