"""What a Spark task sets up in its Python worker before it works (shared by the compaction and file-write tasks)."""

from __future__ import annotations

import pyarrow as pa


def task_arrow_threads() -> int:
    """Size Arrow's CPU thread pool in this Python worker to the running task's cores (``spark.task.cpus``), as a
    JVM task uses its own cores only: an executor with N cores runs N tasks, and each would otherwise decode and
    encode Parquet with N threads of its own. Outside a task nothing changes. The pool size in effect."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is not None:
        cpus = max(1, int(ctx.cpus()))
        if pa.cpu_count() != cpus:
            pa.set_cpu_count(cpus)
    return int(pa.cpu_count())
