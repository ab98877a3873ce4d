"""Fixtures of the store tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from table_engine.clock import ManualClock, system_millis, use_clock


@pytest.fixture
def clock() -> Iterator[ManualClock]:
    """The engine's clock, stopped at the current time: it moves only by ``clock.advance(ms)``, so snapshot
    times and expiry cut-offs are exact (file modification times still come from the file system)."""
    with use_clock(ManualClock(system_millis())) as c:
        assert isinstance(c, ManualClock)
        yield c
