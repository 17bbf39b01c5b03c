"""`sessionwatch.aio.open()`: an `AsyncSessionWatch` on the store a URL names, opened off the event loop."""

from __future__ import annotations

import asyncio
import functools
from typing import Literal

from sessionwatch.adapters.app.core import check_options
from sessionwatch.adapters.app.maintenance import defer_startup_sweep
from sessionwatch.adapters.entry.aio import OPENING_FOR, AsyncSessionWatch
from sessionwatch.adapters.stores.factory import open_store
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.domain.ports import AsyncWaker, Clock, Waker
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.watch_cursor import DEFAULT_MAIN_KEY


async def open(  # noqa: A001 - sessionwatch.aio.open mirrors sessionwatch.open
    url: str | None = None,
    *,
    clock: Clock | None = None,
    waker: Waker | AsyncWaker | None = None,
    synchronous: Literal["normal", "full"] | None = None,
    sweep_on_open: bool = True,
    retention: Retention | None = None,
    cross_process_wakes: bool = True,
    notice_links: str | None = None,
    notify_terminal_runs: bool = False,
    main_key: str = DEFAULT_MAIN_KEY,
    wake_coalesce: float = 0.0,
    notify_on_create: bool = False,
) -> AsyncSessionWatch:
    """Open sessionwatch on the store `url` names, for the running loop (the store opens off the loop).

    The same arguments as `sessionwatch.open()`; the restart sweep runs once unless `sweep_on_open=False`
    (deferred to the next committed write when it cannot write now, as `sessionwatch.open()` does).
    """
    check_options(notice_links=notice_links, main_key=main_key, wake_coalesce=wake_coalesce)  # or no store
    store = await asyncio.to_thread(functools.partial(open_store, url, synchronous=synchronous))
    build = functools.partial(
        AsyncSessionWatch,
        store,
        clock=clock,
        waker=waker,
        retention=retention,
        notice_links=notice_links,
        notify_terminal_runs=notify_terminal_runs,
        notify_on_create=notify_on_create,
        main_key=main_key,
        wake_coalesce=wake_coalesce,
    )
    opening = OPENING_FOR.set(asyncio.get_running_loop())  # the thread below runs in a copy of this context
    try:  # building reads the store and may connect the cross-process listener: off the loop
        watch = await asyncio.to_thread(build, cross_process_wakes=cross_process_wakes)
    except BaseException:
        await asyncio.to_thread(store.close)
        raise
    finally:
        OPENING_FOR.reset(opening)
    if sweep_on_open:
        try:
            watch.startup_sweep = await watch.sweep()
        except BaseException as exc:
            if isinstance(exc, StoreError) and exc.for_now:  # reads work: it runs after the next write
                defer_startup_sweep(watch._core, exc)  # noqa: SLF001 - open() finishes the façade it built
            else:
                await watch.aclose()
                raise
    return watch
