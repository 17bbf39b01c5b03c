"""The audit as a test assertion: every suite that checks a store after a scenario ends with it."""

from __future__ import annotations

from sessionwatch import SessionWatch


def assert_audit_clean(watch: SessionWatch) -> None:
    """`audit()` finds nothing: the replay equals the stored read models and every invariant holds."""
    report = watch.audit()
    details = [f"{v.kind}: {v.detail}" for v in report.violations]
    assert report.ok, details
