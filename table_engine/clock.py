"""The engine's one clock: snapshot times and every expiry or retention decision read it.

:func:`now_millis` is the time in epoch milliseconds (Java's ``System.currentTimeMillis()``); :func:`now_local`
the same instant as a naive local wall-clock time (Java's ``LocalDateTime.now()``, used by tag and partition
expiry). By default they read the system clock; :func:`use_clock` replaces it for a block of code, so tests decide
exactly which millisecond each commit and each expiry sees::

    clock = ManualClock(1_700_000_000_000)
    with use_clock(clock):
        table.write(data)       # snapshot time 1_700_000_000_000
        clock.advance(1)
        table.expire_snapshots(time_retained=0)

Each decision reads the clock once and passes the value on, so one run of expiry or maintenance judges every
snapshot, changelog, consumer, tag and partition against the same instant. The clock is process-wide (threads
included), not per context: set it only in tests that run one at a time.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["Clock", "ManualClock", "local_datetime", "now_local", "now_millis", "system_millis", "use_clock"]

Clock = Callable[[], int]
"""A source of epoch milliseconds."""


def system_millis() -> int:
    """The system time in whole epoch milliseconds (floored, as Java's ``currentTimeMillis``)."""
    return time.time_ns() // 1_000_000


_current: Clock = system_millis


def now_millis() -> int:
    """The engine's current time in epoch milliseconds."""
    return _current()


def local_datetime(millis: int) -> datetime.datetime:
    """Epoch milliseconds as a naive local wall-clock time (Java's ``LocalDateTime`` in the default zone)."""
    return datetime.datetime.fromtimestamp(millis / 1000)


def now_local() -> datetime.datetime:
    """The engine's current time as a naive local wall-clock time."""
    return local_datetime(now_millis())


@contextmanager
def use_clock(clock: Clock) -> Iterator[Clock]:
    """Make ``clock`` the engine's clock inside the block (the previous one is restored afterwards)."""
    global _current
    previous = _current
    _current = clock
    try:
        yield clock
    finally:
        _current = previous


class ManualClock:
    """A clock that moves only when told to (for tests)."""

    def __init__(self, millis: int) -> None:
        self.millis = millis
        self.reads = 0
        """How often the clock was read."""

    def __call__(self) -> int:
        self.reads += 1
        return self.millis

    def advance(self, millis: int = 1) -> int:
        """Move the clock forward by ``millis`` (default one millisecond); returns the new time."""
        if millis < 0:
            raise ValueError(f"a clock does not go back: advance({millis})")
        self.millis += millis
        return self.millis
