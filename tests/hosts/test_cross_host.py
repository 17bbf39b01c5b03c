"""A lead in one real host watching a worker in the other (both with sessionwatch in one project).

A prompt a person types into the worker reaches the lead's next model request as one notice naming
the worker, and the request after it carries no notice (see `cross_host.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hosts.cross_host import (
    LEAD_PROMPTS,
    Delivery,
    claude_code_lead_codex_worker,
    codex_lead_claude_code_worker,
)
from hosts.runner import Shared

pytestmark = pytest.mark.hosts


def expected(worker: str) -> list[Delivery]:
    first, next_one, after = LEAD_PROMPTS
    return [Delivery(first, 0, ()), Delivery(next_one, 1, (worker,)), Delivery(after, 0, ())]


def test_a_claude_code_lead_hears_once_that_a_person_typed_into_its_codex_worker(
    hosts: Shared, tmp_path: Path
) -> None:
    del hosts  # the pinned CLIs are installed (or the test skips)
    found, worker = claude_code_lead_codex_worker(tmp_path)
    assert ":codex:" in worker
    assert found == expected(worker), tmp_path


def test_a_codex_lead_hears_once_that_a_person_typed_into_its_claude_code_worker(
    hosts: Shared, tmp_path: Path
) -> None:
    del hosts
    found, worker = codex_lead_claude_code_worker(tmp_path)
    assert ":claude-code:" in worker
    assert found == expected(worker), tmp_path
