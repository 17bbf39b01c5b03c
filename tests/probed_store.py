"""A real store behind a proxy that notes the thread of every call, and can hold writes back or fail them.

`ProbedStore(inner)` forwards every attribute to `inner`. Each call of a method is noted with the
calling thread's id, and so are the calls on what it hands out (the write transaction, a snapshot,
the stored history), so a test can say on which threads the store was used. `hold_writes()` makes
the next `write()` wait, on whatever thread runs it, until `release_writes()`; `writing` is set once
a write reached the store. With `fail_writes` set, `write()` raises `StoreError` before it begins.
`probe_opened_stores(monkeypatch)` has `sessionwatch.aio.open()` open its stores behind the proxy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, cast

import pytest

from sessionwatch.adapters.entry import aio_open as aio_entry
from sessionwatch.adapters.stores.factory import open_store
from sessionwatch.adapters.stores.port import StoreError

if TYPE_CHECKING:
    from sessionwatch.adapters.stores.port import SignalStore

PATIENCE_S = 30.0
"""How long a held write waits for its release before failing the test (never reached when healthy)."""

Note = Callable[[str], None]


class _Noting:
    """Forwards attribute access to `target`; notes each method call as `prefix + name`."""

    def __init__(self, target: object, prefix: str, note: Note) -> None:
        self._target = target
        self._prefix = prefix
        self._note = note

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if not callable(attribute):
            return attribute
        note, label = self._note, self._prefix + name

        def noted(*args: Any, **kwargs: Any) -> Any:
            note(label)
            result = attribute(*args, **kwargs)
            if isinstance(result, AbstractContextManager):
                return _noted_context(result, label, note)
            return result

        return noted


@contextmanager
def _noted_context(context: AbstractContextManager[Any], label: str, note: Note) -> Iterator[Any]:
    with context as value:
        yield value if value is None else _Noting(value, f"{label}.", note)
    note(f"{label}:exit")


class ProbedStore(_Noting):
    """The proxy (module docstring); `calls` holds `(method, thread id)` in call order."""

    def __init__(self, inner: SignalStore) -> None:
        self.calls: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._released.set()
        self.writing = threading.Event()
        self.fail_writes = False
        super().__init__(inner, "", self._note_call)
        self.inner = inner

    def _note_call(self, label: str) -> None:
        with self._lock:
            self.calls.append((label, threading.get_ident()))

    def write(self) -> AbstractContextManager[Any]:
        """The inner store's write transaction, once released (see `hold_writes`)."""
        self._note_call("write")
        self.writing.set()
        if not self._released.wait(PATIENCE_S):
            raise AssertionError("a held write was never released")
        if self.fail_writes:
            raise StoreError("the disk is full (a test fault)")
        return _noted_context(self.inner.write(), "write", self._note_call)

    def hold_writes(self) -> None:
        """The next writes wait until `release_writes()`."""
        self.writing.clear()
        self._released.clear()

    def release_writes(self) -> None:
        """Let held and later writes through."""
        self._released.set()

    def threads(self) -> set[int]:
        """Every thread a call ran on."""
        with self._lock:
            return {thread for _, thread in self.calls}

    def on(self, thread: int) -> list[str]:
        """The calls that ran on `thread`."""
        with self._lock:
            return [name for name, ran_on in self.calls if ran_on == thread]

    def names_called(self, name: str) -> int:
        """How many times `name` was called."""
        with self._lock:
            return sum(1 for called, _ in self.calls if called == name)

    def names(self) -> set[str]:
        """Every method called, once each."""
        with self._lock:
            return {name for name, _ in self.calls}

    def as_store(self) -> SignalStore:
        """This proxy, typed as the store it stands for."""
        return cast("SignalStore", self)


def probe_opened_stores(monkeypatch: pytest.MonkeyPatch) -> list[ProbedStore]:
    """Every store `sessionwatch.aio.open()` opens from now on is probed and appended to the list."""
    opened: list[ProbedStore] = []

    def probed_open_store(url: str | None, **options: Any) -> SignalStore:
        store = ProbedStore(open_store(url, **options))
        opened.append(store)
        return store.as_store()

    monkeypatch.setattr(aio_entry, "open_store", probed_open_store)
    return opened
