"""The engine's one clock: the system clock by default, replaced for a block by ``use_clock``."""

from __future__ import annotations

import datetime
import time

import pytest

from table_engine import clock
from table_engine.clock import ManualClock, local_datetime, now_local, now_millis, system_millis, use_clock


def test_system_clock_by_default() -> None:
    before = time.time_ns() // 1_000_000
    assert before <= now_millis() <= time.time_ns() // 1_000_000
    assert before <= system_millis()


def test_use_clock_replaces_and_restores() -> None:
    outer = ManualClock(1_000)
    with use_clock(outer):
        assert now_millis() == 1_000
        with use_clock(ManualClock(5_000)):
            assert now_millis() == 5_000
        assert now_millis() == 1_000
        outer.advance(10)
        assert now_millis() == 1_010
        assert now_local() == local_datetime(1_010)
    assert clock.now_millis() >= system_millis() - 1_000


def test_use_clock_restores_after_an_error() -> None:
    with pytest.raises(RuntimeError), use_clock(ManualClock(7)):
        raise RuntimeError("boom")
    assert now_millis() > 7


def test_manual_clock_counts_reads_and_never_goes_back() -> None:
    c = ManualClock(42)
    assert (c(), c(), c.reads) == (42, 42, 2)
    assert c.advance() == 43 and c.advance(7) == 50
    with pytest.raises(ValueError, match="does not go back"):
        c.advance(-1)


def test_local_datetime_is_the_local_wall_clock() -> None:
    millis = 1_700_000_000_123
    assert local_datetime(millis) == datetime.datetime.fromtimestamp(millis / 1000)
    assert local_datetime(millis).microsecond == 123_000
