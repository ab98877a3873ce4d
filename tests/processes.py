"""Worker processes for concurrency tests: writers that finish on their own, and background workers (compactor,
expirer, reader) that stop cooperatively between two operations when asked.

A background worker is never killed mid-commit while the test passes: killing one between writing its files and
publishing its snapshot would leave orphan files, which is what remove-orphan-files is for, not what these tests
check. Processes still alive when the test fails are killed, so no test leaves a process behind.

:class:`Actors` runs a scenario whose every step is a condition waited for (workers ready, writers done, progress
made), signalled with :class:`Flag` s rather than ``multiprocessing.Event`` s: an ``Event`` is a lock, a condition
and semaphores, and a process killed while it waits on one leaves it locked (``set()`` then waits forever for the
dead sleeper), which turns one killed process into a hung scenario.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from typing import Any, Protocol


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


class Signal(Protocol):
    """What :class:`Actors` needs of a stop signal: a :class:`Flag` or a ``multiprocessing.Event``."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class Flag:
    """A one-way flag in shared memory (one byte, no lock): ``set()`` once, ``is_set()`` polled by any process.

    Nothing waits *on* it, so a process killed at any moment cannot leave it locked or wedge the others; waiting is
    polling (:meth:`wait`). Pass it to a process when creating the process (spawn pickles it then)."""

    def __init__(self, ctx: BaseContext) -> None:
        self._value: Any = ctx.Value("b", 0, lock=False)

    def set(self) -> None:
        self._value.value = 1

    def is_set(self) -> bool:
        return bool(self._value.value)

    def wait(self, timeout: float, poll: float = 0.005) -> bool:
        """Whether the flag got set within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.is_set():
            if time.monotonic() >= deadline:
                return False
            time.sleep(poll)
        return True


class Actors:
    """The life of one scenario's processes, each step a condition waited for with a bound, never a sleep.

    ``start`` starts every process, waits until each background worker has set its ``ready`` flag (its loop
    runs: spawn start-up and imports take seconds under load, and a worker that starts after the writers finished
    tests nothing), then sets ``go``, on which the writers wait before their first write. ``join_writers`` waits for
    the writers; ``wait_until`` waits for a condition on the background workers' progress (e.g. reads after the last
    write); ``stop`` asks the background workers to stop between two operations and checks they exited with code 0.
    Every wait fails fast when a process died, and leaving the ``with`` block kills whatever is still alive, so a
    failing test leaves no process behind.
    """

    def __init__(self, writers: Sequence[BaseProcess], background: Sequence[BaseProcess], stop: Signal,
                 ready: Sequence[Signal] = (), go: Signal | None = None) -> None:
        self.writers = list(writers)
        self.background = list(background)
        self._stop = stop
        self._ready = list(ready)
        self._go = go

    def __enter__(self) -> Actors:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    @property
    def processes(self) -> list[BaseProcess]:
        return [*self.writers, *self.background]

    def kill(self) -> None:
        """Kill every process still alive (by its own handle) and reap it."""
        for p in self.processes:
            if p.pid is not None and p.is_alive():
                p.kill()
        for p in self.processes:
            if p.pid is not None:
                p.join(10)

    def _check_alive(self, processes: Sequence[BaseProcess]) -> None:
        for p in processes:
            assert p.exitcode is None, f"{p.name} ended early (exit code {p.exitcode})"

    def start(self, ready_timeout: float) -> None:
        """Start every process; wait for the ready events (bounded), then release the writers."""
        for p in self.processes:
            p.start()
        deadline = time.monotonic() + ready_timeout
        for flag in self._ready:
            while not flag.is_set():
                self._check_alive(self.processes)
                assert time.monotonic() < deadline, f"the background workers were not ready within {ready_timeout} s"
                time.sleep(0.01)
        if self._go is not None:
            self._go.set()

    def join_writers(self, timeout: float) -> None:
        """Wait for every writer to exit with code 0 (bounded), failing as soon as a background worker dies."""
        deadline = time.monotonic() + timeout
        for p in self.writers:
            while p.exitcode is None:
                p.join(0.05)
                self._check_alive(self.background)
                assert time.monotonic() < deadline, f"{p.name} did not finish within {timeout} s"
            assert p.exitcode == 0, f"{p.name} failed (exit code {p.exitcode})"

    def wait_until(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait until ``condition()`` holds (bounded), failing as soon as a background worker dies."""
        deadline = time.monotonic() + timeout
        while not condition():
            self._check_alive(self.background)
            assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
            time.sleep(0.02)

    def stop(self, timeout: float = 120) -> None:
        """Ask the background workers to stop; each must exit with code 0 within ``timeout`` in total."""
        self._check_alive(self.background)
        self._stop.set()
        deadline = time.monotonic() + timeout
        for p in self.background:
            p.join(max(0.0, deadline - time.monotonic()))
            assert p.exitcode == 0, f"{p.name} did not stop cleanly (exit code {p.exitcode})"
