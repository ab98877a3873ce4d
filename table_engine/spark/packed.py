"""Routing a write by shuffling packed Arrow batches instead of rows (the route of :func:`write_dataframe`).

:func:`table_engine.spark.writer.prepare_write` routes with Spark: it adds routing columns as Spark expressions and
repartitions the rows; the writer tasks then receive the shuffled rows, which the JVM turns back into Arrow batches.
On 2 cores that move alone (shuffle of every row, then rows to Arrow) took as long as the whole write (BENCHMARKS.md,
"Spark write paths"). Here the rows reach Python once, before the shuffle:

1. a ``mapInArrow`` step over the input computes each row's writer task with the engine's own hashes
   (:func:`row_tasks`), groups the rows by task and packs each group as an Arrow IPC stream: its output is a few
   large rows (``__paimon_task``, ``__paimon_rows``), at most about :data:`PACK_BYTES` per flush of a task's input;
2. Spark shuffles those rows to the task they name (:func:`table_engine.spark.writer.route_to`);
3. each writer task unpacks the streams (:func:`unpack`, no copy) and writes their batches with the engine.

The routing is the one :func:`prepare_write` guarantees, so the writer's checks and the commit's proofs are the same:
a fixed bucket of a partition is written by exactly one task (so one file per bucket and commit, with sequence
numbers no other task shares), and a dynamic-bucket row goes to the task of its key's hash (column
``__paimon_assigner``, checked by the writer).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

from table_engine.format.bucket import bucket_of, hash_key_columns
from table_engine.format.schema_file import TableSchema
from table_engine.spark import options as o
from table_engine.spark.writer import ROUTE_COLUMN, is_dynamic_bucket, route_to, routing_columns
from table_engine.table import Table
from table_engine.types import to_arrow_type

TASK_COLUMN = "__paimon_task"
ROWS_COLUMN = "__paimon_rows"
PACK_BYTES = 32 << 20
"""Input bytes a packing task holds before it emits its streams (one per writer task with rows)."""
_CHUNK_ROWS = 65_536
"""Spark's 10,000-row input batches are joined to about this many rows before the routing (fewer, larger calls)."""
_PACKED_SCHEMA = StructType([StructField(TASK_COLUMN, IntegerType(), False), StructField(ROWS_COLUMN, BinaryType(),
                                                                                            False)])


@dataclass(frozen=True)
class Routing:
    """How the rows of a write into one table are spread over ``tasks`` writer tasks."""

    schema: TableSchema
    tasks: int
    buckets: int
    """the table's fixed bucket count (> 0), or 0: routed by the key hash (dynamic bucket)"""
    keys: tuple[str, ...] = ()
    """dynamic bucket: the columns whose hash picks the task (:func:`table_engine.spark.writer.routing_columns`)"""
    pack_bytes: int = PACK_BYTES

    @property
    def route_column(self) -> bool:
        """Whether the writer receives (and checks) each row's task as column ``__paimon_assigner``."""
        return self.buckets == 0


def routing(table: Table, tasks: int) -> Routing | None:
    """The packed routing of a write into ``table`` by ``tasks`` tasks; None when the table needs none (an append
    table without bucket keys keeps the input's partitioning)."""
    buckets = table.options.bucket()
    if buckets > 0 and table.schema.bucket_keys():
        return Routing(table.schema, tasks, buckets)
    if is_dynamic_bucket(table):
        return Routing(table.schema, tasks, 0, tuple(routing_columns(table)))
    return None


def row_tasks(r: Routing, batch: pa.Table) -> npt.NDArray[np.int32]:
    """Each row's writer task.

    * fixed buckets: ``(partition hash mod tasks + bucket) mod tasks``, the bucket being the engine's (the buckets of
      one partition go round-robin over the tasks, and one task writes each (partition, bucket));
    * dynamic buckets: the hash of :func:`table_engine.spark.writer.routing_columns` (partition and key; the key
      alone for cross-partition upsert) modulo ``tasks``, as the writer's assigners and the cross-partition
      bootstrap expect (:func:`table_engine.store.writing.cross_partition.key_routes`).
    """
    if r.buckets:
        buckets = bucket_of(_hash(r.schema, r.schema.bucket_keys(), batch), r.buckets)
        if not r.schema.partition_keys:
            return (buckets % r.tasks).astype(np.int32)
        parts = bucket_of(_hash(r.schema, r.schema.partition_keys, batch), r.tasks)
        return ((parts.astype(np.int64) + buckets) % r.tasks).astype(np.int32)
    return bucket_of(_hash(r.schema, r.keys, batch), r.tasks)


def _hash(schema: TableSchema, names: Sequence[str], batch: pa.Table) -> npt.NDArray[np.int32]:
    fields = [schema.field(n) for n in names]
    cols = [batch.column(f.name).cast(to_arrow_type(f.type), safe=False) for f in fields]
    return hash_key_columns(cols, [f.type for f in fields])


def pack(df: DataFrame, table: Table, r: Routing) -> tuple[DataFrame, StructType, dict[str, str]]:
    """``df`` packed and shuffled to its writer tasks: the packed DataFrame, the schema of the rows the writer
    tasks unpack, and the extra write options."""
    schema = df.schema
    if r.route_column:
        schema = StructType([*schema.fields, StructField(ROUTE_COLUMN, IntegerType(), False)])
    packed = df.mapInArrow(functools.partial(_pack_task, r), _PACKED_SCHEMA)
    shuffled = packed.repartition(r.tasks, route_to(packed, F.col(TASK_COLUMN), r.tasks))
    return shuffled, schema, ({o.ASSIGNERS: str(r.tasks)} if r.route_column else {})


def _pack_task(r: Routing, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One packing task: the input's rows grouped by writer task, emitted as IPC streams."""
    pending: list[list[pa.Table]] = [[] for _ in range(r.tasks)]
    held = 0
    for chunk in _chunks(batches):
        tasks = row_tasks(r, chunk)
        if r.route_column:
            chunk = chunk.append_column(ROUTE_COLUMN, pa.array(tasks, pa.int32()))
        order = np.argsort(tasks, kind="stable")
        grouped = chunk.take(pa.array(order))
        counts = np.bincount(tasks, minlength=r.tasks)
        start = 0
        for task in np.flatnonzero(counts):
            pending[task].append(grouped.slice(start, int(counts[task])))
            start += int(counts[task])
        held += chunk.nbytes
        if held >= r.pack_bytes:
            yield _streams(pending)
            held = 0
    if held:
        yield _streams(pending)


def _chunks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.Table]:
    pending: list[pa.RecordBatch] = []
    rows = 0
    for batch in batches:
        pending.append(batch)
        rows += batch.num_rows
        if rows >= _CHUNK_ROWS:
            yield pa.Table.from_batches(pending)
            pending, rows = [], 0
    if rows:
        yield pa.Table.from_batches(pending)


def _streams(pending: list[list[pa.Table]]) -> pa.RecordBatch:
    """The held groups as one IPC stream per task, written back to back into one buffer (a binary column over it:
    no copy); ``pending`` is emptied."""
    sink = pa.BufferOutputStream()
    tasks: list[int] = []
    offsets = [0]
    for task, tables in enumerate(pending):
        if not tables:
            continue
        with pa.ipc.new_stream(sink, tables[0].schema) as writer:
            for t in tables:
                writer.write_table(t)
        tasks.append(task)
        offsets.append(sink.tell())
        tables.clear()
    data = sink.getvalue()
    streams = pa.Array.from_buffers(pa.binary(), len(tasks), [None, pa.array(offsets, pa.int32()).buffers()[1], data])
    return pa.RecordBatch.from_arrays([pa.array(tasks, pa.int32()), streams], names=[TASK_COLUMN, ROWS_COLUMN])


def unpack(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The rows of the packed streams a writer task receives, batch by batch (views of the received buffers)."""
    for batch in batches:
        streams = batch.column(ROWS_COLUMN)
        for i in range(len(streams)):
            yield from pa.ipc.open_stream(streams[i].as_buffer())
