"""The three verdicts every scenario gets, as pytest parameters marked with the known-wrong reasons.

A row sessionwatch gets wrong today is an expected failure with its reason; `raises=AssertionError`
keeps a broken run (`ScenarioBroken`) a real failure, never an expected one.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from _pytest.mark import ParameterSet
from hosts.scenario import Outcome, Scenario


def params(scenarios: Iterable[Scenario], reason_of: str) -> list[ParameterSet]:
    """One parameter per scenario, an expected failure where `getattr(scenario, reason_of)` says why."""
    chosen = []
    for scenario in scenarios:
        reason = getattr(scenario, reason_of)
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if reason else []
        chosen.append(pytest.param(scenario, id=scenario.name, marks=marks))
    return chosen


def described(outcome: Outcome) -> str:
    """What a failing comparison shows: the run's counts, hook events and files."""
    return (
        f"{outcome.scenario} ({outcome.how}): truth {outcome.truth}, hook {outcome.hook_recorded}, "
        f"provider {outcome.provider_counted} per transcript {outcome.transcripts}, "
        f"sessions {outcome.sessions}, "
        f"hook events {outcome.events}; files in {outcome.folder}"
    )
