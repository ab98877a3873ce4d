"""What a Spark task sets up in its Python worker before it works, and how a writing task writes its rows (shared by
the compaction, file-write and DataFrame-write tasks)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from table_engine.spark.jobs.commit import TaskFiles

if TYPE_CHECKING:
    from table_engine.store.writing.write import TableWrite

log = logging.getLogger(__name__)

FAULT_ENV = "TABLE_ENGINE_SPARK_FAULT"
"""Fault injection for tests: ``raise:<task>`` or ``exit:<task>`` fails the first attempt of that task after it
wrote its files (``raise`` lets the task clean up, ``exit`` kills the Python worker)."""

WRITE_CHUNK_ROWS = 1 << 20
WRITE_CHUNK_BYTES = 64 << 20
"""A writing task hands its ``TableWrite`` the rows it gets in chunks of about this many rows or bytes (whichever
comes first), not batch by batch: the writer's work per call (conforming, partitions, buckets against a
dynamic-bucket index that grows with every call, the buffer's pieces at flush) made 24 calls of 100,000 rows
2x slower than 3 calls of 1 M (BENCHMARKS.md, "Spark writes from files")."""


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


def write_chunks(pieces: Iterable[tuple[pa.Table, pa.Array | None]], rows: int = WRITE_CHUNK_ROWS,
                 nbytes: int = WRITE_CHUNK_BYTES) -> Iterator[tuple[pa.Table, pa.Array | None]]:
    """``pieces`` (rows with their row kinds, or None: inserts) concatenated in order into chunks of at least
    ``rows`` rows or ``nbytes`` bytes (the last may be smaller), without copying the rows; empty pieces are
    dropped."""
    tables: list[pa.Table] = []
    kinds: list[pa.Array | None] = []
    n = size = 0
    for data, k in pieces:
        if not data.num_rows:
            continue
        tables.append(data)
        kinds.append(k)
        n, size = n + data.num_rows, size + data.nbytes
        if n >= rows or size >= nbytes:
            yield _concat(tables, kinds)
            tables, kinds, n, size = [], [], 0, 0
    if tables:
        yield _concat(tables, kinds)


def _concat(tables: list[pa.Table], kinds: list[pa.Array | None]) -> tuple[pa.Table, pa.Array | None]:
    if len(tables) == 1:
        return tables[0], kinds[0]
    given = [k for k in kinds if k is not None]
    if not given:
        return pa.concat_tables(tables), None
    insert = pa.scalar("+I" if pa.types.is_string(given[0].type) else 0, given[0].type)  # no kinds: inserts
    arrays = [k if k is not None else pa.repeat(insert, t.num_rows) for t, k in zip(tables, kinds, strict=True)]
    return pa.concat_tables(tables), pa.concat_arrays(arrays)


def write_task(writer: TableWrite, pieces: Iterable[tuple[pa.Table, pa.Array | None]], task: int,
               attempt: int) -> TaskFiles:
    """Write ``pieces`` (rows with their row kinds, or None: inserts) with ``writer`` and prepare its commit: the task
    files of attempt ``attempt`` of task ``task``. When anything fails the writer's files are deleted before the
    error propagates (Spark retries the task)."""
    rows = 0
    try:
        for data, kinds in pieces:
            writer.write(data, kinds)
            rows += data.num_rows
        messages = writer.prepare_commit()
        inject_fault(task, attempt)
    except BaseException:
        writer.abort()
        raise
    return TaskFiles(task, attempt, tuple(messages), rows)


def inject_fault(task: int, attempt: int) -> None:
    """Fail the first attempt of ``task`` as :data:`FAULT_ENV` says (nothing when it is unset)."""
    spec = os.environ.get(FAULT_ENV)
    if not spec or attempt != 0:
        return
    mode, _, which = spec.partition(":")
    if which and int(which) != task:
        return
    log.warning("fault injection (%s=%s): failing task %d, attempt %d", FAULT_ENV, spec, task, attempt)
    if mode == "exit":
        os._exit(17)
    raise RuntimeError(f"injected failure of task {task} attempt {attempt} ({FAULT_ENV}={spec})")
