"""What a Spark maintenance job reports of its tasks: where each ran, how long it took (compaction and sort jobs)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CompactionReport", "TaskReport", "executor_id"]


@dataclass(frozen=True)
class TaskReport:
    """What one compaction task did: where it ran (``host:pid`` of the executor's JVM), its time, its buckets."""

    executor: str
    seconds: float
    cpu_seconds: float
    """CPU time of the task's Python worker (all its threads) while it compacted."""
    buckets: int


@dataclass
class CompactionReport:
    """The job's result: the COMPACT snapshot id (None when nothing needed compacting) and its tasks."""

    snapshot_id: int | None
    tasks: list[TaskReport] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of the job's phases on the driver: ``plan``, ``tasks`` (the Spark stage), ``commit``."""

    @property
    def executors(self) -> set[str]:
        """The executors the tasks ran on."""
        return {t.executor for t in self.tasks}


def executor_id() -> str:
    """``host:pid`` of the JVM this Python worker serves (its nearest ``java`` ancestor, within 4 generations; the
    parent process where there is none or no ``/proc``): tasks of one executor share it, tasks of two never do."""
    pid = os.getppid()
    proc = Path("/proc")
    for _ in range(4):
        try:
            if (proc / str(pid) / "comm").read_text().strip() == "java":
                return f"{socket.gethostname()}:{pid}"
            pid = int((proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return f"{socket.gethostname()}:{os.getppid()}"
