"""Worker processes for concurrency tests: writers that finish on their own, and background workers (compactor,
expirer, reader) that stop cooperatively between two operations when asked.

A background worker is never killed mid-commit while the test passes: killing one between writing its files and
publishing its snapshot would leave orphan files, which is what remove-orphan-files is for, not what these tests
check. Processes still alive when the test fails are killed, so no test leaves a process behind.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event


def run_until_writers_finish(writers: Sequence[BaseProcess], background: Sequence[BaseProcess], stop: Event,
                             writer_timeout: float, stop_timeout: float = 120, linger: float = 0) -> None:
    """Start every process, wait for the writers, let the background workers run ``linger`` seconds more against
    the final table, then ask them to stop and check that each exited with code 0."""
    try:
        for p in [*writers, *background]:
            p.start()
        for p in writers:
            p.join(writer_timeout)
            assert p.exitcode == 0, f"{p.name} failed (exit code {p.exitcode})"
        if linger:
            time.sleep(linger)
        for p in background:
            assert p.is_alive(), f"{p.name} failed early (exit code {p.exitcode})"
        stop.set()
        for p in background:
            p.join(stop_timeout)
            assert p.exitcode == 0, f"{p.name} did not stop cleanly (exit code {p.exitcode})"
    finally:
        for p in [*writers, *background]:
            if p.is_alive():
                p.kill()
                p.join(10)
