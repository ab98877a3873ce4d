"""One shared thread pool per nesting level, created lazily and reused by every parallel step (manifest reads,
split reads, file-index checks, bucket writes, compactions, reference collection) instead of a new pool per call.

A task that waits for work submitted to its own pool can deadlock once every worker waits; :func:`parallel_map`
called from a task of level ``n`` therefore runs on the pool of level ``n + 1`` (and inline below
:data:`LEVELS`), and the calling thread works through the items too, so a call always makes progress. Each call
runs at most ``max_workers`` items at once; the pools are bounded (:data:`WORKERS` threads each). Fork-safe: a
child process starts without pools (their threads do not survive ``fork``) and creates its own on first use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

WORKERS = max(8, min(32, (os.cpu_count() or 1) * 4))
"""Threads of each level's pool (I/O-bound work: more than the cores)."""
LEVELS = 3
"""Nesting levels with a pool of their own; deeper calls run inline."""

_lock = threading.Lock()
_pools: dict[int, ThreadPoolExecutor] = {}
_local = threading.local()


def _pool(level: int) -> ThreadPoolExecutor:
    with _lock:
        pool = _pools.get(level)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix=f"table-engine-{level}")
            _pools[level] = pool
        return pool


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _pools.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def nesting_level() -> int:
    """0 outside :func:`parallel_map`; ``n + 1`` inside an item of a level-``n`` call."""
    return int(getattr(_local, "level", 0))


def parallel_map(fn: Callable[[T], R], items: Iterable[T], max_workers: int = WORKERS) -> list[R]:
    """``[fn(x) for x in items]``, at most ``max_workers`` at once on the shared pool of this nesting level (the
    caller works too); results in the order of ``items``. Every started item has finished when it returns or
    raises (the first error, in item order). Inline for one item, ``max_workers <= 1`` or deep nesting."""
    todo = list(items)
    level = nesting_level()
    if len(todo) <= 1 or max_workers <= 1 or level >= LEVELS:
        return [fn(x) for x in todo]
    results: list[Any] = [None] * len(todo)
    errors: dict[int, BaseException] = {}
    queue = iter(enumerate(todo))
    take = threading.Lock()
    failed = threading.Event()

    def work() -> None:
        outer = nesting_level()
        _local.level = level + 1
        try:
            while not failed.is_set():
                with take:
                    nxt = next(queue, None)
                if nxt is None:
                    return
                i, x = nxt
                try:
                    results[i] = fn(x)
                except BaseException as e:  # re-raised by the caller once every worker stopped
                    errors[i] = e
                    failed.set()
        finally:
            _local.level = outer

    helpers = min(max_workers, len(todo), WORKERS + 1) - 1
    pool = _pool(level)
    futures: list[Future[None]] = [pool.submit(work) for _ in range(helpers)]
    try:
        work()
    finally:
        for f in futures:
            f.cancel()  # helpers still queued behind other callers' work: the items are done
        wait(futures)
    if errors:
        raise errors[min(errors)]
    return results


def submit(fn: Callable[..., R], *args: Any) -> Future[R]:
    """``fn(*args)`` in the background on the pool of the caller's nesting level (an item of it nests one level
    deeper, as in :func:`parallel_map`); run inline, its future already done, at or below :data:`LEVELS` (a
    deterministic simulation sets it to 0: no thread but the caller's then runs anything). The caller must wait for
    the future (it holds the result or the error)."""
    level = nesting_level()
    if level >= LEVELS:
        done: Future[R] = Future()
        try:
            done.set_result(fn(*args))
        except BaseException as e:  # handed to whoever waits, as a pool's future would
            done.set_exception(e)
        return done

    def nested() -> R:
        outer = nesting_level()
        _local.level = level + 1
        try:
            return fn(*args)
        finally:
            _local.level = outer

    return _pool(level).submit(nested)
