"""Test doubles shared by the suites: small fakes, never mocks.

The fake clock ships in the test kit (`sessionwatch.testing`, SPEC §16); it is re-exported here.
"""

from __future__ import annotations

from sessionwatch.testing import START, FakeClock

__all__ = ["START", "FakeClock"]
