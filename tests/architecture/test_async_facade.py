"""`AsyncSessionWatch` has every method of `SessionWatch`, as a coroutine, with the same parameters.

Results are the same models (a monitor's handle is the asyncio one: its `stop()` is awaited). The
lifecycle differs by design: `aclose()` and `async with` instead of `close()` and `with`.
"""

from __future__ import annotations

import inspect

import pytest

from sessionwatch import SessionWatch
from sessionwatch.adapters.upstream.monitor import MonitorHandle
from sessionwatch.aio import AsyncMonitorHandle, AsyncSessionWatch

LIFECYCLE = {"close": "aclose", "__enter__": "__aenter__", "__exit__": "__aexit__"}
WIDENED = {  # the async façade also takes the async form of each host port
    "Waker | AsyncWaker": "Waker",
    "UpstreamProvider | AsyncUpstreamProvider": "UpstreamProvider",
    "Transcripts | AsyncTranscripts": "Transcripts",
}


def narrowed(parameter: inspect.Parameter) -> inspect.Parameter:
    """The parameter as the sync façade would declare it (the async ports taken out)."""
    annotation = str(parameter.annotation)
    for wide, narrow in WIDENED.items():
        annotation = annotation.replace(wide, narrow)
    return parameter.replace(annotation=annotation)


def public_methods(cls: type) -> dict[str, object]:
    """The class's methods, its sessionwatch bases' included (the upstream ones live in a base)."""
    found: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if base.__module__.startswith("sessionwatch"):
            found.update(vars(base))
    return {
        name: value
        for name, value in found.items()
        if inspect.isfunction(value) and (not name.startswith("_") or name in LIFECYCLE)
    }


SYNC = public_methods(SessionWatch)


@pytest.mark.parametrize("name", sorted(set(SYNC) - set(LIFECYCLE)))
def test_every_method_is_a_coroutine_with_the_same_parameters(name: str) -> None:
    method = getattr(AsyncSessionWatch, name, None)
    assert inspect.iscoroutinefunction(method), f"AsyncSessionWatch.{name} is missing or not async"
    expected = inspect.signature(SYNC[name])  # type: ignore[arg-type]
    found = inspect.signature(method)
    assert [narrowed(p) for p in found.parameters.values()] == [
        p.replace(annotation=str(p.annotation)) for p in expected.parameters.values()
    ]
    returns = expected.return_annotation
    assert found.return_annotation == (
        "AsyncMonitorHandle" if returns == MonitorHandle.__name__ else returns
    ), f"{name} returns {found.return_annotation}, the sync façade {returns}"


@pytest.mark.parametrize(("sync", "asynchronous"), sorted(LIFECYCLE.items()))
def test_the_lifecycle_has_its_asyncio_form(sync: str, asynchronous: str) -> None:
    assert sync in SYNC
    assert inspect.iscoroutinefunction(getattr(AsyncSessionWatch, asynchronous))


def test_the_monitor_handle_has_the_sync_handles_members_with_an_awaited_stop() -> None:
    sync = {n for n in vars(MonitorHandle) if not n.startswith("_")}
    asynchronous = {n for n in vars(AsyncMonitorHandle) if not n.startswith("_")}
    assert sync <= asynchronous
    assert inspect.iscoroutinefunction(AsyncMonitorHandle.stop)
    assert list(inspect.signature(AsyncMonitorHandle.stop).parameters) == list(
        inspect.signature(MonitorHandle.stop).parameters
    )
