"""The Spark compaction job: the driver plans the buckets, ``mapInArrow`` tasks compact groups of them, the driver
commits one COMPACT snapshot (docs/adr/0038-spark-compaction-scaling.md).

Distribution: ``spark.range(n, numPartitions=n).mapInArrow(task, schema)``, one task per group of buckets (groups
of similar total file size, at most the job's parallelism); each task returns its commit messages pickled as one
binary value, with the executor it ran on and its time, and the driver ``collect()``s them. No ``SparkContext`` and
no RDD: the job runs alike on a classic session and on Spark Connect (whose sessions have no ``sparkContext``).

Memory: a plain primary-key bucket (no deletion vectors, no changelog producer, no lookup) is merged by streaming
(:mod:`table_engine.lsm.streaming_merge`: memory bounded by its runs x a chunk, whatever the bucket's size). The
other kinds read a merged section into memory: before any task starts, such a bucket whose files would not fit
the executor's memory (``spark.executor.memory``; the driver's in local mode) fails the job with a
:class:`~table_engine.errors.CommandError` naming the bucket, its size and the memory it needs.
"""

from __future__ import annotations

import functools
import logging
import pickle
import time
from collections.abc import Collection, Iterator, Sequence

import pyarrow as pa
from pyspark.sql import SparkSession

from table_engine.core_options import default_commit_user
from table_engine.errors import CommandError, CommitConflictError
from table_engine.features import Op
from table_engine.format.binary_row import decode_row
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.spark.compat import default_parallelism, executor_memory
from table_engine.spark.jobs.commit import commit_once
from table_engine.spark.jobs.sort_job import RANGE_BYTES, plan_ranges, run_range_sort
from table_engine.spark.jobs.task_env import task_arrow_threads
from table_engine.spark.jobs.task_report import CompactionReport, TaskReport, executor_id
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.compact import BucketFiles, compact_buckets, plan_compaction
from table_engine.store.compaction.select import table_buckets
from table_engine.store.compaction.sort_compact import SortOrder, check_sortable
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs, format_partition_text
from table_engine.store.writing.postpone_compact import is_postpone_table
from table_engine.table import Table
from table_engine.table.guards import check_supported, check_writable

log = logging.getLogger(__name__)

_ARROW_RESULT = pa.schema([pa.field("messages", pa.binary(), False), pa.field("executor", pa.string(), False),
                           pa.field("seconds", pa.float64(), False), pa.field("cpu_seconds", pa.float64(), False),
                           pa.field("buckets", pa.int64(), False)])
"""One row per task: its commit messages (pickled), where it ran, its wall and CPU time, its number of buckets."""
_RESULT_SCHEMA = "messages binary, executor string, seconds double, cpu_seconds double, buckets long"

IN_MEMORY_FACTOR = 12
"""How many times its files' on-disk size a bucket that is merged in memory takes in an executor's memory: the
decoded Arrow data (about 4x the Parquet files) taken about 3 times over (the files, the merged copy, the output
being encoded). Measured: 13 MB of files, 49 MB of Arrow data, an Arrow peak of 157 MB and an RSS growth of 203 MB
(tests/table_engine/store/compaction/test_streamed_compaction.py, deletion vectors)."""


def compact_table(spark: SparkSession, table: Table, full: bool = False,
                  partitions: PartitionSpecs | None = None, idle_time_ms: int | None = None,
                  commit_user: str | None = None, parallelism: int | None = None,
                  buckets: Collection[int] | str | None = None) -> int | None:
    """Compact ``table`` with Spark tasks; the COMPACT snapshot id (None when nothing needed compacting).

    ``full``: every bucket into one sorted run (else a minor compaction: Paimon's universal picker per bucket).
    ``partitions``: only partitions matching one of these specs (typed against the partition columns on the driver;
    a spec that matches no partition is a PartitionSpecError). ``idle_time_ms``: only partitions that got no new
    data files for that long. ``buckets``: only these buckets of a fixed-bucket table (Paimon's ``'0-99,200-299'``).
    The driver plans the buckets, tasks compact groups of them, the driver commits.
    """
    return run_compaction(spark, table, full, partitions, idle_time_ms, commit_user, parallelism,
                          buckets).snapshot_id


def run_compaction(spark: SparkSession, table: Table, full: bool = False,
                   partitions: PartitionSpecs | None = None, idle_time_ms: int | None = None,
                   commit_user: str | None = None, parallelism: int | None = None,
                   buckets: Collection[int] | str | None = None, order: SortOrder | None = None,
                   range_bytes: int = RANGE_BYTES) -> CompactionReport:
    """:func:`compact_table` with the report of its tasks (where they ran, how long they took). With ``order``: a
    sort compaction (:mod:`table_engine.store.compaction.sort_compact`): tasks sort whole partitions, or, when a
    partition has ``range_bytes`` of files or more and the job has cores to spare, ranges of its rows
    (:mod:`table_engine.spark.jobs.sort_job`)."""
    check_writable(table, "compact")  # before any task writes a compacted file into a read-only table
    check_supported(table, Op.MAINTAIN)  # the capability gate, before any task writes
    user, t0 = default_commit_user(table.options, commit_user), time.perf_counter()  # generated before any task
    ctx = _store_context(table)
    if order is not None:  # every refusal before any task runs
        check_sortable(ctx, order)
        if idle_time_ms is not None:
            raise CommandError("sort compact do not support 'partition_idle_time'.")
        if buckets is not None:
            raise CommandError("Specifying buckets is not supported for sort compact.")
    wanted = table_buckets(ctx, buckets)  # only fixed-bucket tables have them: fails before any task runs
    if is_postpone_table(ctx):  # assigning postponed rows to buckets: one job on the driver (docs/postpone_bucket.md)
        return CompactionReport(table.maintenance.compact(full, partitions, idle_time_ms, commit_user))
    plan = plan_compaction(ctx, partitions, idle_time_ms, buckets=wanted)
    if not plan:
        return CompactionReport(None)
    check_memory(ctx, plan, executor_memory(spark), sorting=order is not None)
    parallelism = parallelism or default_parallelism(spark)
    if order is not None and max(ranges := plan_ranges(plan, parallelism, range_bytes)) > 1:
        return run_range_sort(spark, table, plan, ranges, order, user, parallelism)
    groups = _balanced_groups(plan, parallelism)
    log.info("%s: %s %d buckets in %d tasks", table.identifier,
             "compacting" if order is None else f"sorting by {order.describe()}", len(plan), len(groups))
    task = functools.partial(_compact_groups, table, groups, full, order)
    t1 = time.perf_counter()
    rows = spark.range(len(groups), numPartitions=len(groups)).mapInArrow(task, _RESULT_SCHEMA).collect()
    t2 = time.perf_counter()
    report = CompactionReport(None, [TaskReport(r["executor"], r["seconds"], r["cpu_seconds"], r["buckets"])
                                     for r in rows], {"plan": t1 - t0, "tasks": t2 - t1})
    messages: list[CommitMessage] = [m for r in rows for m in pickle.loads(r["messages"])]
    if not messages:
        return report
    try:
        report.snapshot_id = commit_once(table, messages, user, BATCH_COMMIT_IDENTIFIER)
        report.seconds["commit"] = time.perf_counter() - t2
    except CommitConflictError:
        log.error("%s: a concurrent commit changed files being compacted; the compaction was discarded",
                  table.identifier)
        raise
    return report


def _compact_groups(table: Table, groups: Sequence[Sequence[BucketFiles]], full: bool, order: SortOrder | None,
                    batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task side: compact the groups whose indexes the task got (one per task); one result row per group."""
    for batch in batches:
        for i in batch.column(0).to_pylist():
            start, cpu = time.perf_counter(), time.process_time()
            messages = _compact_group(table, groups[i], full, order)
            row = {"messages": pickle.dumps(messages), "executor": executor_id(),
                   "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
                   "buckets": len(groups[i])}
            yield pa.RecordBatch.from_pylist([row], schema=_ARROW_RESULT)


def _compact_group(table: Table, group: Sequence[BucketFiles], full: bool,
                   order: SortOrder | None) -> list[CommitMessage]:
    """Task side: compact (or sort) the buckets of ``group`` one after the other, on the task's cores."""
    task_arrow_threads()
    return compact_buckets(_store_context(table), group, full, threads=1, order=order)



def _balanced_groups(plan: Sequence[BucketFiles], n: int) -> list[list[BucketFiles]]:
    """At most ``n`` groups of buckets with similar total file sizes (largest first, each to the lightest group)."""
    groups: list[list[BucketFiles]] = [[] for _ in range(max(1, min(n, len(plan))))]
    sizes = [0] * len(groups)
    for b in sorted(plan, key=lambda b: -sum(f.file_size for f in b.files)):
        i = sizes.index(min(sizes))
        groups[i].append(b)
        sizes[i] += sum(f.file_size for f in b.files)
    return groups


def check_memory(ctx: StoreContext, plan: Sequence[BucketFiles], memory: tuple[int, str] | None,
                 sorting: bool = False) -> None:
    """Fail before any task starts when a bucket merged in memory would not fit ``memory`` (bytes, the conf key that
    sets them): the :class:`CommandError` names the bucket, its size and the memory it needs. None: no limit known.
    Every live file of the bucket counts (a full compaction merges them all, a minor one fewer: an upper bound).
    ``sorting`` (a sort compaction, or clustering): what must fit is the sort's buffer, whatever the partition's
    size (:func:`check_sort_memory`)."""
    if memory is None:
        return
    if sorting or ctx.options.clustering_incremental():
        check_sort_memory(ctx, memory)
        return
    if streams(ctx):
        return
    limit, key = memory
    for b in plan:
        size = sum(f.file_size for f in b.files)
        if size * IN_MEMORY_FACTOR > limit:
            raise CommandError(
                f"compaction of bucket {b.bucket}{_partition_text(ctx, b.partition)} of {ctx.table_path}: "
                f"{len(b.files)} files of {_size(size)} need about {_size(size * IN_MEMORY_FACTOR)} "
                f"of executor memory ({why_in_memory(ctx)}: merged in memory), the executors have "
                f"{_size(limit)} ({key}): raise it")


SORT_MEMORY_FACTOR = 4
"""How many times ``write-buffer-size`` a sort by a curve takes at its peak (half the buffer filling while the
other half, its sorted copy and its keys are spilled; then a batch of every run and the files being written).
Measured (BENCHMARKS.md, "Sort compaction"): a peak RSS growth of 4.1x the buffer for ``zorder`` and 3.9x for
``hilbert``; an ``order`` over nullable numbers keeps two key words a column and took 7.1x."""


def check_sort_memory(ctx: StoreContext, memory: tuple[int, str]) -> None:
    """Fail before any task starts when a sort's buffer (``write-buffer-size``; a partition beyond it is sorted in
    spilled runs) would not fit an executor's ``memory``."""
    limit, key = memory
    buffer = ctx.options.write_buffer_size()
    if buffer * SORT_MEMORY_FACTOR > limit:
        raise CommandError(f"sort of {ctx.table_path}: write-buffer-size {_size(buffer)} of rows needs about "
                           f"{_size(buffer * SORT_MEMORY_FACTOR)} of executor memory with the sort, the executors "
                           f"have {_size(limit)} ({key}): lower write-buffer-size (a partition beyond it is sorted "
                           "in runs spilled to local disk) or raise the memory")


def streams(ctx: StoreContext) -> bool:
    """Whether this table's buckets compact by streaming (bounded memory whatever a bucket's size)."""
    return why_in_memory(ctx) is None


def why_in_memory(ctx: StoreContext) -> str | None:
    """What makes this table's compaction merge a section in memory (None: it streams)."""
    from table_engine.store.compaction.compact import memory_bound_reason

    return memory_bound_reason(ctx)


WARM_UP_MEMORY = 32, 4 << 20
"""Buffers (count, bytes) of Arrow memory a warm-up writes once: a Python worker's first use of that much fresh
memory cost 0.1-0.2 s of kernel time in about half the processes on the benchmark VM (the first bucket of a
compaction took 0.25-0.33 s instead of 0.09 s); once the allocator holds the pages, later jobs do not pay it."""


def warm_up(spark: SparkSession) -> None:
    """Start the Python workers of every core and run a small compaction in each (benchmarks, tests): what a
    worker pays once (imports, Arrow's and the Parquet codecs' first use, the first fault-in of the allocator's
    memory: :data:`WARM_UP_MEMORY`) is then paid before a timed job."""
    n = default_parallelism(spark)
    spark.range(n, numPartitions=n).mapInArrow(_warm_worker, "id long").collect()


def _warm_worker(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import shutil
    import tempfile

    import numpy as np
    import pyarrow.compute as pc

    from table_engine.catalog import Catalog

    started = time.perf_counter()
    home = tempfile.mkdtemp(prefix="paimon-warm-up-")
    try:
        schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("x", pa.float64())])
        table = Catalog(home).create_table("w.t", schema, primary_keys=["id"], options={"bucket": "2"})
        for i in range(2):
            keys = pa.array(range(i, 2_000 + i), pa.int64())
            table.write(pa.table({"id": keys, "v": pc.cast(keys, pa.string()),
                                  "x": pc.cast(keys, pa.float64())}), maintain=False)
        task_arrow_threads()
        ctx = _store_context(table)
        compact_buckets(ctx, plan_compaction(ctx, None, None), True, threads=1)  # written, never committed
        count, size = WARM_UP_MEMORY
        buffers = [pa.allocate_buffer(size) for _ in range(count)]
        for b in buffers:
            np.frombuffer(b, dtype=np.uint8).fill(1)  # written: the pages are faulted in
        del buffers
    finally:
        shutil.rmtree(home, ignore_errors=True)
    time.sleep(max(0.0, 0.5 - (time.perf_counter() - started)))  # hold the core: the next task starts a worker
    yield from batches


def _partition_text(ctx: StoreContext, partition: bytes) -> str:
    fields = ctx.schema.partition_fields()
    if not fields:
        return ""
    values = decode_row(partition, [f.type for f in fields])
    return f" of partition {format_partition_text(dict(zip([f.name for f in fields], values, strict=True)))}"


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _store_context(table: Table) -> StoreContext:
    return table.store
