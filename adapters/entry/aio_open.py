"""`sessionwatch.aio.open()`: an `AsyncSessionWatch` on the store a URL names, opened off the event loop."""

from __future__ import annotations

import functools
from typing import Literal

from sessionwatch.adapters.app.core import check_options
from sessionwatch.adapters.app.maintenance import defer_startup_sweep
from sessionwatch.adapters.entry.aio import AsyncSessionWatch
from sessionwatch.adapters.stores.factory import open_store
from sessionwatch.adapters.stores.port import StoreError
from sessionwatch.domain.ports import AsyncWaker, Clock, Waker
from sessionwatch.domain.retention import Retention
from sessionwatch.domain.watch_cursor import DEFAULT_MAIN_KEY

if True:  # ASYNC: what only the asyncio façade has
    import asyncio

    from sessionwatch.adapters.entry.aio import OPENING_FOR


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
    """Open sessionwatch on the store `url` names (`None`: `$SESSIONWATCH_URL` or `./sessionwatch.db`).

    The restart sweep and its forced prune run once unless `sweep_on_open=False`; when it cannot
    write now (another process holds the write lock past its timeout, or the disk is full) the
    store opens anyway, `startup_sweep` stays None, and the sweep runs after this process's next
    write commits.
    `cross_process_wakes=False` keeps a PostgreSQL store from waking `waker` for other processes.
    `notice_links` (a template naming `{agent_id}` and `{rest_path}`) links each notice to its target.
    `notify_terminal_runs=True` makes `run_completed` and `run_failed` notify watchers (else log-only).
    `main_key` is the rest of each agent's main session key (`agent:<agentId>:main` by default): the
    session that watches its agent's group sessions ambiently from a human's first turn in them on.
    `wake_coalesce` (seconds, default 0: off) wakes each watcher at most once per that window: the
    notices opening for it meanwhile get one trailing wake at the window's end, if one is still pending.
    `notify_on_create=True` notes each `created` session on its main session's creation digest, a
    notice its next `drain` returns. `sessionwatch.aio.open()` opens the store off the running loop.
    """
    check_options(notice_links=notice_links, main_key=main_key, wake_coalesce=wake_coalesce)  # or no store
    build = functools.partial(
        AsyncSessionWatch,
        clock=clock,
        waker=waker,
        retention=retention,
        cross_process_wakes=cross_process_wakes,
        notice_links=notice_links,
        notify_terminal_runs=notify_terminal_runs,
        notify_on_create=notify_on_create,
        main_key=main_key,
        wake_coalesce=wake_coalesce,
    )
    if True:  # ASYNC
        store = await asyncio.to_thread(functools.partial(open_store, url, synchronous=synchronous))
        opening = OPENING_FOR.set(asyncio.get_running_loop())  # the thread below sees a copy of this context
        try:  # building reads the store and may connect the cross-process listener: off the loop
            watch = await asyncio.to_thread(build, store)
        except BaseException:
            await asyncio.to_thread(store.close)
            raise
        finally:
            OPENING_FOR.reset(opening)
    else:
        store = open_store(url, synchronous=synchronous)
        try:
            watch = build(store)
        except BaseException:
            store.close()
            raise
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
