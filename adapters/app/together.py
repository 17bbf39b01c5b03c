"""Writes run together: one transaction for many writes, and each caller's own outcome if it fails.

Both schedulers of the application core use it: group commit on the callers' threads, and the
writer thread under an event loop. If the shared transaction fails, it rolls back and each write
runs again alone, so a failure reaches only the write that failed.

Unless no write was at fault (ADR-0061): a transaction that could not begin (the write lock held
past its timeout and retries, a connection that could not be made) ran nothing, and each write alone
would only wait as long again, one after another. Every write then gets that error at once, and the
re-runs alone stop at the first that cannot begin, so each caller waits about one lock wait however
many writes shared the transaction.

Writes of one kind that can run as one may say so: a write with a `together` attribute (a function
of the transaction and several such writes, answering each one's value in order) is run with the
consecutive writes that name the same function in one call. Recording single signals is the one
that does (`recording.RecordOne`): a transaction's records then share one batch of statements.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from sessionwatch.adapters.stores.port import SignalStore, WriteTransaction

Outcome = tuple[bool, Any]
"""(True, value) when the write committed, (False, exception) when it did not."""

Settle = Callable[[int, Outcome], None]
"""`settle(index, outcome)`: the outcome of the write at `index`, once known."""

Write = Callable[[WriteTransaction], Any]
"""One caller's write: a function of the write transaction."""


def run_all(tx: WriteTransaction, works: Sequence[Write]) -> list[Any]:
    """Every write's value, in order; consecutive writes of a kind that runs together in one call."""
    values: list[Any] = []
    index, count = 0, len(works)
    while index < count:
        together = getattr(works[index], "together", None)
        end = index + 1
        if together is not None:
            while end < count and getattr(works[end], "together", None) is together:
                end += 1
        if end - index > 1:
            values.extend(together(tx, works[index:end]))  # type: ignore[misc] # set when end > index + 1
        else:
            values.append(works[index](tx))
        index = end
    return values


def run_together(store: SignalStore, works: Sequence[Write], settle: Settle) -> None:
    """Run `works` in one write transaction, else each alone; settle each once its outcome is known.

    Writes run alone only when the shared transaction began and then failed; a transaction that
    could not begin fails every write still to run with its error (module docstring).
    An interrupt (`BaseException`) propagates; the writes it left unsettled are the caller's to fail.
    """
    began = False
    try:
        with store.write() as tx:
            began = True
            values = run_all(tx, works)
    except Exception as exc:  # noqa: BLE001 - whose write failed is found by running each alone
        if not began or len(works) == 1:
            _fail_all(works, 0, exc, settle)
            return
        for index, work in enumerate(works):
            began = False
            try:
                with store.write() as tx:
                    began = True
                    value = work(tx)
            except Exception as alone:  # noqa: BLE001 - handed to the caller whose write it was
                if not began:  # the lock or the connection: the writes after it would wait as long
                    _fail_all(works, index, alone, settle)
                    return
                settle(index, (False, alone))
            else:
                settle(index, (True, value))
        return
    for index, value in enumerate(values):
        settle(index, (True, value))


def _fail_all(works: Sequence[Write], start: int, exc: Exception, settle: Settle) -> None:
    """Settle every write from `start` on with `exc`: the first gets it, the others a copy each.

    A copy each, so that callers raising it on their own threads never share one traceback.
    """
    settle(start, (False, exc))
    for index in range(start + 1, len(works)):
        settle(index, (False, _copy_of(exc)))


def _copy_of(exc: Exception) -> Exception:
    try:
        clone = copy.copy(exc)
    except Exception:  # noqa: BLE001 - an exception that cannot be copied is shared instead
        return exc
    clone.__cause__ = exc.__cause__
    clone.__traceback__ = None
    return clone
