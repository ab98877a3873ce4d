"""Batch and streaming writers of the ``paimon`` data source (two-phase: tasks write files, the job commits once).

Each task writes its Arrow batches through the engine's ``TableWrite`` and returns the commit messages of the files
it wrote; a task that fails deletes its files before re-raising (an attempt killed outright leaves its files to
``remove-orphan-files``: they are never committed). The job's ``commit()`` (run by Spark exactly once, in a Python
worker) publishes all messages as one snapshot through :func:`table_engine.spark.jobs.commit.commit_once`, keyed by a
commit user fixed for the job and an identifier (the batch id for streams), so a repeated commit is a no-op.

Routing (:func:`prepare_write`, used by :func:`table_engine.spark.write_dataframe` and the application): rows of a
fixed-bucket table are repartitioned by their Paimon bucket, so each bucket gets one file from one task; any
partitioning is still correct, only with more files and overlapping sequence ranges (a slower merge on read).

Dynamic-bucket primary-key tables (``bucket`` = -1): the rows must reach the writer routed by key, which
:func:`prepare_write` does: it repartitions the DataFrame into N tasks by a hash of (partition, primary key) and
adds a column ``__paimon_assigner`` with the same hash modulo N, which equals the task's partition id. The writer
verifies that for every row and lets task i assign new keys only to buckets ``b % N == i``
(:class:`table_engine.store.writing.bucket_assign.Assigner`). So one task owns every key and every bucket it opens, and
at commit :func:`table_engine.spark.jobs.commit.check_bucket_owners` proves that no two tasks extended one bucket's hash
index. Unrouted input is accepted as long as that proof holds (e.g. one task, or only one task meeting new keys per
partition); otherwise the job fails, deletes its files and commits nothing.

Cross-partition upsert tables (a primary key without every partition field, ``bucket`` = -1) are routed by the
key alone, by the engine's key hash modulo N (computed in a ``mapInArrow`` step): task i bootstraps the global key
index (:mod:`table_engine.store.writing.cross_partition`) with only the keys routed to it, checks that every row it gets
is one of them, handles every row of its keys in any partition, and opens only its own buckets. Such a write by
several unrouted tasks fails at commit (it could write one key twice).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StructField, StructType

from table_engine.core_options import CommitUser
from table_engine.errors import DataError, SchemaMismatchError
from table_engine.format.bucket import BucketMode, bucket_of, hash_key_columns
from table_engine.format.schema_file import TableSchema
from table_engine.spark.compat import default_parallelism
from table_engine.spark.datasource import options as o
from table_engine.spark.jobs.commit import (
    TaskFiles,
    abort_uncommitted,
    check_bucket_owners,
    commit_once,
    unaware_append,
)
from table_engine.spark.jobs.de_write import (
    DataEvolutionWrite,
    commit_staged,
    plan_write,
    remove_staging,
    stage_rows,
    write_columns,
)
from table_engine.spark.jobs.task_env import inject_fault, write_chunks, write_task
from table_engine.store.committing.commit import Overwrite
from table_engine.store.writing.bucket_assign import Assigner
from table_engine.store.writing.bucketing import fixed_buckets
from table_engine.table import Table
from table_engine.types import to_arrow_type

log = logging.getLogger(__name__)

ROUTE_COLUMN = "__paimon_assigner"
BUCKET_COLUMN = "__paimon_bucket"
ROUTING_COLUMNS = (ROUTE_COLUMN, BUCKET_COLUMN)
"""Columns :func:`prepare_write` adds for routing; the writer drops them."""


def is_dynamic_bucket(table: Table) -> bool:
    """Whether the table is a primary-key table with ``bucket`` = -1 (dynamic bucket: ``HASH_DYNAMIC`` or
    ``KEY_DYNAMIC``)."""
    return table.store.bucket_mode.dynamic


def routing_columns(table: Table) -> list[str]:
    """The columns that decide which task writes a row of a dynamic-bucket table: partition, then primary key;
    for cross-partition upsert (a key without every partition field) the key alone, so that every row of a key
    reaches the one task whose global index places it."""
    return _routing_columns(table.schema)


def _routing_columns(schema: TableSchema) -> list[str]:
    if schema.cross_partition_update():
        return schema.trimmed_primary_keys()
    return list(dict.fromkeys([*schema.partition_keys, *schema.primary_keys]))


def task_routes(schema: TableSchema, data: pa.Table | pa.RecordBatch, n: int) -> npt.NDArray[np.int32]:
    """Each row's writer task (0..n-1) for a dynamic-bucket table of ``schema``: the engine's hash of the
    :func:`routing_columns` (values in the table's types) modulo ``n``; for cross-partition upsert this is
    :func:`table_engine.store.writing.cross_partition.key_routes`, which the writer checks."""
    fields = [schema.field(c) for c in _routing_columns(schema)]
    cols = [data.column(f.name).cast(to_arrow_type(f.type), safe=False) for f in fields]
    return bucket_of(hash_key_columns(cols, [f.type for f in fields]), n)


def writer_tasks(table: Table, parallelism: int | None, spark: SparkSession) -> int:
    """The number of writer tasks of a dynamic-bucket table: ``parallelism``, else the table option
    ``dynamic-bucket.assigner-parallelism``, else Spark's default parallelism."""
    configured = table.options.raw.get(o.ASSIGNERS)
    return parallelism or (int(configured) if configured else default_parallelism(spark))


def prepare_write(df: DataFrame, table: Table, parallelism: int | None = None, *, sort: bool = False
                  ) -> tuple[DataFrame, dict[str, str]]:
    """Route ``df`` for writing into ``table``: the DataFrame to write and the extra write options.

    * fixed buckets: rows are repartitioned by (partition, Paimon bucket), so one task writes each bucket: one file
      per bucket and commit, with sequence numbers that do not overlap other tasks' (the cheap merge path on read);
      a partition's buckets go round-robin over the tasks. The bucket (column ``__paimon_bucket``) is a native
      Spark expression for integer keys (:func:`bucket_expression`), else computed with the engine's hash in a
      ``mapInArrow`` step. With ``sort``, primary-key rows are also sorted within each task by (partition,
      bucket, key) in the JVM, the writer's order, so that its sort is only a check; off by default: measured
      slower than the engine's own sort (few distinct buckets defeat Spark's prefix sort; BENCHMARKS.md, "Spark
      write paths"). Rows of one key within one write keep no defined order either way (a shuffle merges its
      inputs in any order): use ``sequence.field``.
    * dynamic buckets (primary-key tables with ``bucket`` = -1): repartitioned by a hash of (partition, primary
      key) with the ``__paimon_assigner`` column and option ``dynamic-bucket.assigner-parallelism`` (the module
      docstring explains why);
    * append tables without buckets keep their partitioning unless ``parallelism`` is given (then rows are
      spread evenly over that many tasks).

    ``parallelism`` (the number of writer tasks) defaults to the table option
    ``dynamic-bucket.assigner-parallelism``, else Spark's default parallelism.
    """
    buckets = table.options.bucket()
    if table.store.bucket_mode is BucketMode.HASH_FIXED and table.schema.bucket_keys():
        n = parallelism or default_parallelism(df.sparkSession)
        bucket = bucket_expression(table.schema, buckets)
        if bucket is None:
            df = df.mapInArrow(functools.partial(_add_buckets, table.schema, buckets),
                               StructType([*df.schema.fields, StructField(BUCKET_COLUMN, IntegerType())]))
        else:
            df = df.withColumn(BUCKET_COLUMN, bucket)  # computed once, for the routing and the sort
        routed = df.repartition(n, _task_selector(df, table, F.col(BUCKET_COLUMN), n))
        if table.primary_keys and sort:
            # the rows reach the writer in its own key order, so the engine's sort is a check (lsm.sort.is_sorted)
            routed = routed.sortWithinPartitions(*table.partition_keys, BUCKET_COLUMN,
                                                 *table.schema.trimmed_primary_keys())
        return routed, {}
    if not is_dynamic_bucket(table):
        return (df.repartition(parallelism) if parallelism else df), {}
    n = writer_tasks(table, parallelism, df.sparkSession)
    if table.schema.cross_partition_update():
        # the engine's key hash picks the task, so that each task bootstraps only its own keys
        df = df.mapInArrow(functools.partial(_add_key_routes, table.schema, n),
                           StructType([*df.schema.fields, StructField(ROUTE_COLUMN, IntegerType())]))
        return df.repartition(n, _route_selector(df, F.col(ROUTE_COLUMN), n)), {o.ASSIGNERS: str(n)}
    cols = [F.col(c) for c in routing_columns(table)]
    routed = df.repartition(n, *cols).withColumn(ROUTE_COLUMN, F.pmod(F.hash(*cols), F.lit(n)).cast("int"))
    return routed, {o.ASSIGNERS: str(n)}


def _task_selector(df: DataFrame, table: Table, bucket: Column, n: int) -> Column:
    """An expression that Spark's hash partitioning into ``n`` partitions sends to task
    ``(hash(partition) + bucket) mod n``: the buckets of a partition go round-robin over the tasks (hashing the few
    distinct (partition, bucket) pairs directly would often leave tasks idle)."""
    parts = [F.col(c) for c in table.partition_keys]
    task = F.pmod((F.pmod(F.hash(*parts), F.lit(n)) if parts else F.lit(0)) + bucket, F.lit(n))
    return _route_selector(df, task, n)


def _route_selector(df: DataFrame, task: Column, n: int) -> Column:
    """An expression that Spark's hash partitioning into ``n`` partitions sends to partition ``task`` (0..n-1)."""
    # for each task t, an int whose Spark hash lands in partition t (found by Spark itself: exact by construction)
    probe = df.sparkSession.range(0, 64 * n).select(F.col("id").cast("int").alias("v"))
    rows = probe.select("v", F.pmod(F.hash("v"), F.lit(n)).alias("t")).collect()
    first: dict[int, int] = {}
    for r in rows:
        first.setdefault(int(r["t"]), int(r["v"]))
    if len(first) < n:  # 64n candidates cover n partitions unless Spark's hash changed
        raise DataError(f"no routing value found for some of {n} writer tasks")
    return F.element_at(F.array(*[F.lit(first[t]) for t in range(n)]), (task + 1).cast("int"))


_SLOT_BYTES = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "DATE": 4, "BIGINT": 8}


def bucket_expression(schema: TableSchema, num_buckets: int) -> Column | None:
    """The Paimon bucket of a row as a native Spark expression, for NOT NULL integer-like bucket keys (else None).

    A key's hash is Murmur3 (seed 42) over its BinaryRow bytes: an 8-byte header (row kind and null bits, all zero
    here) and one 8-byte little-endian slot per field. Spark's ``hash()`` of a binary value is the same Murmur3
    over 4-byte words, so building those bytes with ``unhex`` gives Paimon's hash without leaving the JVM; the
    bucket is ``abs(hash % buckets)``.
    """
    keys = [schema.field(k) for k in schema.bucket_keys()]
    if not keys or len(keys) > 56 or any(k.type.root not in _SLOT_BYTES or k.type.nullable for k in keys):
        return None
    pieces = [F.lit("00" * 8)]
    for k in keys:
        col = F.col(k.name)
        if k.type.root == "DATE":
            col = F.unix_date(col.cast("date"))
        elif k.type.root == "BOOLEAN":
            col = col.cast("boolean").cast("int")
        value = col.cast("long")
        width = _SLOT_BYTES[k.type.root]
        if width < 8:
            value = value.bitwiseAND(F.lit((1 << (8 * width)) - 1))
        pieces.append(F.lpad(F.hex(_byte_swapped(value)), 16, "0"))
    return F.abs(F.hash(F.unhex(F.concat(*pieces))) % F.lit(num_buckets))


def _byte_swapped(value: Column) -> Column:
    """The 64-bit ``value`` with its bytes reversed (shifts and masks: no overflow under ANSI mode)."""
    out: Column | None = None
    for i in range(8):
        byte = F.shiftleft(F.shiftrightunsigned(value, 8 * i).bitwiseAND(F.lit(0xFF)), 8 * (7 - i))
        out = byte if out is None else out.bitwiseOR(byte)
    assert out is not None
    return out


def _add_buckets(schema: TableSchema, num_buckets: int, batches: Iterator[pa.RecordBatch]
                 ) -> Iterator[pa.RecordBatch]:
    """Append each row's fixed bucket, by the engine writer's rule (:func:`fixed_buckets`, on the bucket key's
    values cast to the table's types)."""
    keys = [schema.field(k) for k in schema.bucket_keys()]
    for batch in batches:
        key_values = pa.table([batch.column(k.name).cast(to_arrow_type(k.type), safe=False) for k in keys],
                              names=[k.name for k in keys])
        yield batch.append_column(BUCKET_COLUMN, pa.array(fixed_buckets(key_values, keys, num_buckets), pa.int32()))


def _add_key_routes(schema: TableSchema, n: int, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Append each row's writer task for a cross-partition upsert table: the engine's hash of the key columns
    modulo ``n`` (:func:`task_routes`)."""
    for batch in batches:
        yield batch.append_column(ROUTE_COLUMN, pa.array(task_routes(schema, batch, n), pa.int32()))


@dataclass
class PaimonCommitMessage:
    """What a task hands to the job's commit (the data source's writers hand Spark a subclass that is also Spark 4's
    ``WriterCommitMessage``: :class:`table_engine.spark.datasource.source_writer.SourceCommitMessage`)."""

    files: TaskFiles


class _TableWriter:
    """The task side and the commit side shared by the batch and the streaming writer."""

    def __init__(self, table: Table, schema: StructType, overwrite: bool, user: CommitUser,
                 options: Mapping[str, str]) -> None:
        self.table = table
        self.overwrite = overwrite
        self.user = user
        """Who commits; one generated for this job makes the commit look up no older history."""
        self.commit_user = user.name
        self.dynamic = is_dynamic_bucket(table)
        self.cross_partition = self.dynamic and table.schema.cross_partition_update()
        self.assigners = o.get_int(options, o.ASSIGNERS)
        self.routed = ROUTE_COLUMN in schema.fieldNames()
        self.kinds_column = o.get(options, o.ROWKIND_COLUMN)
        if self.kinds_column is not None and self.kinds_column not in schema.fieldNames():
            raise o.DataSourceOptionError(f"option {o.ROWKIND_COLUMN}: the DataFrame has no column "
                                          f"{self.kinds_column!r}")
        self.bucket_routed = BUCKET_COLUMN in schema.fieldNames()
        names = [n for n in schema.fieldNames() if n not in ROUTING_COLUMNS and n != self.kinds_column]
        self.evolution: DataEvolutionWrite | None = plan_write(table, names, overwrite, self.kinds_column, options)
        """a write of some columns, an update by row id or an upsert by key (:mod:`table_engine.spark.jobs.de_write`)"""
        if self.evolution is None:
            _check_columns(table, names)
        if self.routed and (not self.dynamic or self.assigners is None):
            raise o.DataSourceOptionError(
                f"column {ROUTE_COLUMN} needs a dynamic-bucket table and option {o.ASSIGNERS} (use prepare_write)")

    # ---- tasks -----------------------------------------------------------------------------------------------
    def write_task(self, batches: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx is not None else 0
        attempt = ctx.attemptNumber() if ctx is not None else 0
        if self.evolution is not None:
            run = stage_rows if self.evolution.staged else write_columns
            files = run(self.evolution, self.table, _coalesced(batches), task, attempt,
                        functools.partial(inject_fault, task, attempt))
            log.info("%s: task %d (attempt %d): %s of %d rows", self.table.identifier, task, attempt,
                     self.evolution.mode, files.rows)
            return PaimonCommitMessage(files)
        writer = self.table.new_write()
        if unaware_append(self.table):
            writer.skip_compaction()  # all tasks write bucket 0: the driver compacts once after the commit
        if self.routed:
            assert self.assigners is not None
            writer.assigner = Assigner(task, self.assigners)
        files = write_task(writer, self._task_rows(batches, task), task, attempt)
        log.info("%s: task %d (attempt %d) wrote %d rows in %d files", self.table.identifier, task, attempt,
                 files.rows, files.files)
        return PaimonCommitMessage(files)

    def _task_rows(self, batches: Iterator[pa.RecordBatch], task: int) -> Iterator[tuple[pa.Table, pa.Array | None]]:
        """The task's rows as its writer takes them: route checked, routing columns dropped, row kinds apart."""
        for batch in _coalesced(batches):
            if self.routed:
                batch = _checked_route(batch, task)
            if self.bucket_routed:
                batch = batch.drop_columns([BUCKET_COLUMN])
            kinds = None
            if self.kinds_column is not None:
                kinds = batch.column(self.kinds_column)
                batch = batch.drop_columns([self.kinds_column])
            yield batch, kinds

    # ---- the job ---------------------------------------------------------------------------------------------
    def commit_job(self, messages: Sequence[object], identifier: int,
                   overwrite: Overwrite | None) -> int | None:
        tasks = _task_files(messages)
        if self.evolution is not None and self.evolution.staged:
            sid = commit_staged(self.evolution, self.table, tasks, self.commit_user, identifier,
                                self.user.since_millis)
            log.info("%s: %s of %d rows from %d tasks committed as snapshot %s (commit user %s)",
                     self.table.identifier, self.evolution.mode, sum(t.rows for t in tasks), len(tasks), sid,
                     self.commit_user)
            return sid
        all_messages = [m for t in tasks for m in t.messages]
        try:
            if self.dynamic:
                check_bucket_owners(tasks)
            if self.cross_partition and not self.routed and sum(1 for t in tasks if t.rows) > 1:
                raise DataError(f"{self.table.identifier} is a cross-partition upsert table: rows written by "
                                "several tasks must be routed by key (use table_engine.spark.write_dataframe, or "
                                "prepare_write() before df.write)")
        except BaseException:
            abort_uncommitted(self.table, all_messages, self.commit_user, identifier)
            raise
        sid = commit_once(self.table, all_messages, self.user, identifier, overwrite)
        log.info("%s: %d tasks, %d rows committed as snapshot %s (commit user %s)", self.table.identifier,
                 len(tasks), sum(t.rows for t in tasks), sid, self.commit_user)
        return sid

    def abort_job(self, messages: Sequence[object], identifier: int) -> None:
        all_messages = [m for t in _task_files(messages) for m in t.messages]
        remove_staging(self.evolution, self.table)
        if all_messages:
            abort_uncommitted(self.table, all_messages, self.commit_user, identifier)
        log.info("%s: job aborted, files of %d commit messages removed", self.table.identifier, len(all_messages))


# ---- pieces -------------------------------------------------------------------------------------------------------
def _coalesced(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.Table]:
    """Spark's small Arrow batches (10,000 rows) joined into the tables a task's writer takes
    (:func:`~table_engine.spark.jobs.task_env.write_chunks`)."""
    for table, _ in write_chunks((pa.Table.from_batches([b]), None) for b in batches):
        yield table


def _task_files(messages: Sequence[object]) -> list[TaskFiles]:
    return [m.files for m in messages if isinstance(m, PaimonCommitMessage)]


def _check_columns(table: Table, names: Sequence[str]) -> None:
    expected = [f.name for f in table.schema.fields]
    missing = [n for n in expected if n not in names]
    extra = [n for n in names if n not in expected]
    if missing or extra:
        raise SchemaMismatchError(f"DataFrame columns do not match table {table.identifier}: missing {missing}, "
                                  f"not in the table {extra}")


def _checked_route(batch: pa.Table, task: int) -> pa.Table:
    """``batch`` without the route column, after checking that every row was routed to this task."""
    route = batch.column(ROUTE_COLUMN)
    if batch.num_rows and not pc.all(pc.equal(route, task)).as_py():
        raise DataError(f"rows routed to assigners {pc.unique(route).to_pylist()} reached task {task}: the "
                        f"DataFrame must be repartitioned by the columns the {ROUTE_COLUMN} hash is computed from, "
                        "into as many partitions as assigners (use prepare_write)")
    return batch.drop_columns([ROUTE_COLUMN])

