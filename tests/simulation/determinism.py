"""Everything that would make two runs of one seed differ, pinned for the duration of a run.

The engine reads the wall clock (snapshot times, retention), draws UUIDs for file names, draws random backoff
waits, sleeps between commit retries and runs parallel steps on thread pools. In a simulation run each of these is
replaced: the engine's clock is a :class:`~table_engine.clock.ManualClock` the scheduler advances 1 ms per step,
``uuid.uuid4`` draws from a seeded generator, ``random`` is seeded, ``time`` as the commit, snapshot, consumer,
pin and orphan modules see it is virtual (a sleep is a scheduling point, never a real wait), and ``parallel_map``
runs inline (``LEVELS = 0``) so no thread but an actor ever calls the FileIO. The tag cache (keyed by path, mtime
and size) is cleared, since every run reuses the same paths and times.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

from table_engine import clock
from table_engine.format import snapshot as snapshot_format
from table_engine.io import executor
from table_engine.store import pins
from table_engine.store.changes import consumers
from table_engine.store.committing import commit
from table_engine.store.lifecycle import orphans
from table_engine.store.lifecycle import tags as tag_store

START_MILLIS = 1_700_000_000_000
"""The virtual time every run starts at."""

_TIME_USERS: tuple[ModuleType, ...] = (commit, snapshot_format, consumers, pins, orphans)
"""Engine modules whose ``time`` is replaced (they sleep: commit backoff, read retries, waits for the history fence
and for the pins a rewrite waits on, orphan cleaning's wait for a tag in flight)."""


class VirtualTime:
    """A stand-in for the ``time`` module: clock readings from the manual clock, sleeps as scheduling points."""

    def __init__(self, manual: clock.ManualClock, sleep: Callable[[float], None]) -> None:
        self._clock = manual
        self.sleep = sleep

    def time(self) -> float:
        return self._clock.millis / 1000

    def time_ns(self) -> int:
        return self._clock.millis * 1_000_000

    def monotonic(self) -> float:
        return self._clock.millis / 1000

    perf_counter = monotonic


@contextmanager
def deterministic(seed: int, manual: clock.ManualClock, sleep: Callable[[float], None]) -> Iterator[None]:
    """Pin clock, UUIDs, randomness, sleeps and thread pools for one run (restored afterwards)."""
    rng = random.Random(seed * 7919 + 17)

    def uuid4() -> uuid.UUID:
        return uuid.UUID(int=rng.getrandbits(128), version=4)

    saved_uuid4 = uuid.uuid4
    saved_levels = executor.LEVELS
    saved_time = [m.time for m in _TIME_USERS]
    fake = VirtualTime(manual, sleep)
    uuid.uuid4 = uuid4
    executor.LEVELS = 0
    for m in _TIME_USERS:
        m.time = fake  # type: ignore[attr-defined]
    tag_store._TAG_CACHE.clear()
    random.seed(seed)
    try:
        with clock.use_clock(manual):
            yield
    finally:
        uuid.uuid4 = saved_uuid4
        executor.LEVELS = saved_levels
        for m, t in zip(_TIME_USERS, saved_time, strict=True):
            m.time = t  # type: ignore[attr-defined]
        tag_store._TAG_CACHE.clear()
