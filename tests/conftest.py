"""Fixtures shared by every suite: a fake clock and a `SessionWatch` on each store (tests/stores.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from facades import FACADES, use_facade
from hypothesis import HealthCheck, settings
from stores import STORES, drop_reused_schemas, fresh_store_url, postgres_problem

import sessionwatch
from sessionwatch import SessionWatch
from sessionwatch.testing import FakeClock

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session", autouse=True)
def _drop_reused_postgres_schemas() -> Iterator[None]:
    yield
    if postgres_problem() is None:
        drop_reused_schemas()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that needs `facade` runs once through each façade.

    Parametrized here rather than by the fixture, so that an autouse `through_each_facade` leaves
    unittest cases (which pytest does not parametrize) on the sync façade instead of failing them.
    """
    if "facade" in metafunc.fixturenames:
        metafunc.parametrize("facade", FACADES, indirect=True)


@pytest.fixture
def facade(request: pytest.FixtureRequest) -> str:
    """`sync` or `async`: the façade a suite that asks for `through_each_facade` runs through."""
    return str(getattr(request, "param", "sync"))


@pytest.fixture
def through_each_facade(facade: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """`sessionwatch.open` opens the parametrized façade (the async one behind a blocking adapter)."""
    use_facade(facade, monkeypatch)
    return facade


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_url(store_kind: str, tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh store of each kind; reopening it within the test finds the same store."""
    with fresh_store_url(store_kind, tmp_path) as url:
        yield url


@pytest.fixture
def watch(store_url: str, clock: FakeClock) -> Iterator[SessionWatch]:
    """A `SessionWatch` on a fresh store, for every store (the contract suite's fixture)."""
    with sessionwatch.open(store_url, clock=clock) as opened:
        yield opened
