"""The contract suite runs through both façades: every test, on every store, sync and async."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _each_facade(through_each_facade: str) -> str:
    return through_each_facade
