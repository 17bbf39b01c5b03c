"""A run's end is log-only unless terminal runs notify: the kinds, `react` and the audit's invariant."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.session import SignalRecorded
from sessionwatch.domain.signals import NOTIFYING_KINDS, TERMINAL_RUN_KINDS, SignalKind, notifying_kinds
from sessionwatch.domain.watch_cursor import CursorState, ObserveMaterialSignal, react
from sessionwatch.projections.audit import check_invariants
from sessionwatch.projections.read_model import fold

MANAGER = "agent:main:main"
CHILD = "agent:main:subagent:child"
TARGET = SessionIdentity(CHILD, "main")
AT_MS = 1_796_000_000_000


def run_end(sequence: int, kind: SignalKind) -> SignalRecorded:
    return SignalRecorded(
        session_key=CHILD,
        agent_id="main",
        kind=kind,
        actor_type="system",
        occurred_at_ms=AT_MS,
        recorded_at_ms=AT_MS,
        summary="child run completed",
        sequence=sequence,
    )


def held(last_seen: int, notified: int, material: int) -> dict[str, CursorState]:
    state = CursorState(
        watcher=MANAGER,
        target_key=CHILD,
        target_agent_id="main",
        last_seen=last_seen,
        notified=notified,
        material=material,
        updated_at_ms=AT_MS,
    )
    return {MANAGER: state}


def test_terminal_runs_widen_the_notifying_kinds_by_exactly_a_runs_end() -> None:
    assert notifying_kinds(terminal_runs=False) == NOTIFYING_KINDS
    assert notifying_kinds(terminal_runs=True) == NOTIFYING_KINDS | TERMINAL_RUN_KINDS
    assert {SignalKind.RUN_COMPLETED, SignalKind.RUN_FAILED} == TERMINAL_RUN_KINDS


@pytest.mark.parametrize("kind", sorted(TERMINAL_RUN_KINDS))
def test_a_runs_end_implies_nothing_by_default(kind: SignalKind) -> None:
    assert react(run_end(2, kind), held(1, 1, 1), at_ms=AT_MS) == []


@pytest.mark.parametrize("kind", sorted(TERMINAL_RUN_KINDS))
def test_a_runs_end_is_a_material_update_when_terminal_runs_notify(kind: SignalKind) -> None:
    commands = react(
        run_end(2, kind), held(1, 1, 1), at_ms=AT_MS, notifying=notifying_kinds(terminal_runs=True)
    )
    assert commands == [
        ObserveMaterialSignal(
            watcher=MANAGER, target_key=CHILD, target_agent_id="main", at_ms=AT_MS, sequence=2
        )
    ]


def test_the_audit_judges_a_notice_for_a_runs_end_by_the_stores_setting() -> None:
    logged = fold([run_end(1, SignalKind.RUN_COMPLETED)])
    model = replace(logged, cursors={TARGET: held(0, 1, 1)})
    assert [v.kind for v in check_invariants(model)] == ["notice_log_only"]
    assert check_invariants(model, notifying=notifying_kinds(terminal_runs=True)) == []
