"""The shared executor: reused pools, bounded concurrency per call, nested calls that cannot deadlock, fork-safe."""

from __future__ import annotations

import multiprocessing as mp
import threading

import pytest

from table_engine.io import executor
from table_engine.io.executor import LEVELS, WORKERS, nesting_level, parallel_map


def test_results_in_item_order_and_inline_for_one_item() -> None:
    assert parallel_map(lambda x: x * x, range(100), 4) == [x * x for x in range(100)]
    assert parallel_map(lambda x: threading.current_thread(), [1]) == [threading.current_thread()]
    assert parallel_map(lambda x: x, [], 4) == []


def test_pools_are_reused_not_created_per_call() -> None:
    parallel_map(lambda x: x, range(20), 8)
    pool = executor._pools[0]
    before = threading.active_count()
    for _ in range(50):
        parallel_map(lambda x: x + 1, range(20), 8)
    assert executor._pools[0] is pool
    assert threading.active_count() <= before + WORKERS


def test_at_most_max_workers_run_at_once() -> None:
    lock = threading.Lock()
    running = 0
    peak = 0

    def item(x: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        total = sum(range(20_000))
        with lock:
            running -= 1
        return total + x

    parallel_map(item, range(200), 3)
    assert 1 <= peak <= 3


@pytest.mark.timeout(120)
def test_nested_calls_that_fill_every_pool_complete() -> None:
    """Every level's pool full of items that wait for nested calls: no deadlock (each level has its own pool, the
    callers work too, and below LEVELS the calls run inline)."""
    levels: list[int] = []
    deepest: list[int] = []

    inline: list[bool] = []

    def inner(x: int) -> int:
        levels.append(nesting_level())
        me = threading.current_thread()

        def deep(y: int) -> int:
            deepest.append(nesting_level())
            inline.append(threading.current_thread() is me)
            return y + x

        return parallel_map(deep, range(3), WORKERS)[-1]

    def middle(x: int) -> int:
        return sum(parallel_map(inner, range(WORKERS + 2), WORKERS))

    def outer(x: int) -> int:
        return sum(parallel_map(middle, range(WORKERS + 2), WORKERS))

    got = parallel_map(outer, range(WORKERS + 2), WORKERS)
    per_middle = sum(range(WORKERS + 2)) + 2 * (WORKERS + 2)
    assert got == [per_middle * (WORKERS + 2)] * (WORKERS + 2)
    # items of the third level run at level LEVELS: their own calls run inline, in the calling thread
    assert set(levels) == {LEVELS} and set(deepest) == {LEVELS}
    assert inline == [True] * len(inline) and inline


def test_first_error_in_item_order_after_every_started_item_finished() -> None:
    started: list[int] = []
    finished: list[int] = []
    lock = threading.Lock()

    def item(x: int) -> int:
        with lock:
            started.append(x)
        try:
            if x in (7, 3):
                raise ValueError(f"bad {x}")
            return x
        finally:
            with lock:
                finished.append(x)

    with pytest.raises(ValueError, match="bad 3"):
        parallel_map(item, range(10), 1)
    assert started == finished == [0, 1, 2, 3]
    for _ in range(20):
        started.clear()
        finished.clear()
        with pytest.raises(ValueError, match="bad 3"):  # 3 is taken before 7: it always runs to its end
            parallel_map(item, range(10), 4)
        assert sorted(started) == sorted(finished) and 3 in finished


def _child(q: mp.Queue[list[int]]) -> None:
    q.put(parallel_map(lambda x: x * 2, range(10), 4))


@pytest.mark.timeout(120)
def test_a_forked_child_gets_its_own_pool() -> None:
    parallel_map(lambda x: x, range(10), 4)  # the parent's pool exists (and its threads)
    ctx = mp.get_context("fork")
    q: mp.Queue[list[int]] = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    try:
        assert q.get(timeout=60) == [x * 2 for x in range(10)]
    finally:
        p.join(60)
    assert p.exitcode == 0
