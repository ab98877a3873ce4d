"""The Spark sort compaction of partitions too large for one task: a partition's rows range-partitioned by the
order's key across tasks, each range sorted by one task (as Paimon's procedure sorts through a Spark range
repartition), the ranges in order the partition sorted. docs/layout.md ("Sorting with Spark").

1. **Ranges.** A partition gets ``ceil(file bytes / range bytes)`` ranges, at most its share of the job's
   parallelism (:func:`plan_ranges`); when every partition gets one, the plain job sorts whole partitions in tasks
   (:mod:`table_engine.spark.jobs.compact_job`) and this one is not used.
2. **Sample.** Tasks over groups of the split partitions' files read the live rows (deletion vectors applied), key
   them (:func:`~table_engine.sort.keys.keyed_sort`) and return a seeded sample of each partition's keys
   (:data:`~table_engine.sort.ranges.SAMPLE_PER_RANGE` per range); the driver cuts each sample into boundaries.
3. **Route.** Tasks over groups of every partition's files read the rows again and emit each range's rows as Arrow
   IPC blobs of about :data:`BLOB_BYTES` (any Arrow type passes Spark untouched), keyed by the range's index in the
   job.
4. **Sort.** ``repartitionByRange(ranges, "range").sortWithinPartitions("range")`` brings each range's blobs to one
   task, range after range; the task sorts each range with the engine's external sort (memory bounded by
   ``write-buffer-size``) and writes it as files of ``target-file-size``. Spark hands a Python task one blob per
   Arrow batch (``spark.sql.execution.arrow.maxRecordsPerBatch`` is 1 for the job, restored after).
5. **Commit.** The driver takes each partition's files in range order, numbers their sequence numbers on from the
   partition's smallest (as one task's sort numbers them), drops the read files' deletion vectors and commits one
   COMPACT snapshot (ADR 0049). A failure before the commit leaves the table as it was.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import logging
import pickle
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import SparkSession

from table_engine.core_options import ZORDER_VAR_LENGTH_CONTRIBUTION, CommitUser
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.sort.keys import keyed_sort, order_keys
from table_engine.sort.ranges import SAMPLE_PER_RANGE, boundaries, range_ids, sample
from table_engine.spark.compat import conf_value
from table_engine.spark.jobs.commit import commit_once
from table_engine.spark.jobs.task_env import task_arrow_threads
from table_engine.spark.jobs.task_report import CompactionReport, TaskReport, executor_id
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.append_compact import AppendBucketCompactor, AppendCompactionSettings
from table_engine.store.compaction.compact import BucketFiles
from table_engine.store.compaction.sort_compact import SortOrder, sort_rows
from table_engine.store.context import StoreContext
from table_engine.table import Table

__all__ = ["RANGE_BYTES", "plan_ranges", "run_range_sort"]

log = logging.getLogger(__name__)

RANGE_BYTES = 256 << 20
"""The fewest bytes of files a range of a partition's sort gets: a smaller partition is sorted by one task."""
BLOB_BYTES = 8 << 20
"""About how many bytes of Arrow data one routed blob of rows holds."""
_MAX_RECORDS = "spark.sql.execution.arrow.maxRecordsPerBatch"

_SAMPLE_SCHEMA = "samples binary"
_ROUTE_SCHEMA = "range long, rows binary"
_SORT_SCHEMA = "range long, files binary, rows long, executor string, seconds double, cpu_seconds double"
_ARROW_SORT = pa.schema([pa.field("range", pa.int64(), False), pa.field("files", pa.binary(), False),
                         pa.field("rows", pa.int64(), False), pa.field("executor", pa.string(), False),
                         pa.field("seconds", pa.float64(), False), pa.field("cpu_seconds", pa.float64(), False)])


@dataclass(frozen=True)
class _Split:
    """One partition of the job: its files, how many ranges it is cut into and the job index of its first."""

    bucket: BucketFiles
    ranges: int
    first: int


def plan_ranges(plan: Sequence[BucketFiles], parallelism: int, range_bytes: int = RANGE_BYTES) -> list[int]:
    """How many ranges each planned partition's sort is cut into: one per ``range_bytes`` of its files, at most its
    share of ``parallelism`` (by bytes), at least one. A pure function."""
    sizes = [sum(f.file_size for f in b.files) for b in plan]
    total = sum(sizes) or 1
    return [max(1, min(-(-size // max(1, range_bytes)), round(parallelism * size / total))) for size in sizes]


def run_range_sort(spark: SparkSession, table: Table, plan: Sequence[BucketFiles], ranges: Sequence[int],
                   order: SortOrder, user: CommitUser, parallelism: int) -> CompactionReport:
    """Sort the planned partitions of ``table`` cut into ``ranges`` (:func:`plan_ranges`) and commit them."""
    t0 = time.perf_counter()
    splits, first = [], 0
    for b, n in zip(plan, ranges, strict=True):
        splits.append(_Split(b, n, first))
        first += n
    total_ranges = first
    log.info("%s: sorting %d partition(s) by %s in %d ranges", table.identifier, len(splits), order.describe(),
             total_ranges)
    bounds = _boundaries(spark, table, splits, order, parallelism)
    t1 = time.perf_counter()
    route_groups = _file_groups(splits, range(len(splits)), parallelism)
    route = functools.partial(_route_task, table, splits, route_groups, order, bounds)
    routed = spark.range(len(route_groups), numPartitions=len(route_groups)).mapInArrow(route, _ROUTE_SCHEMA)
    sort = functools.partial(_sort_task, table, splits, order)
    before = conf_value(spark, _MAX_RECORDS)
    spark.conf.set(_MAX_RECORDS, "1")  # one blob per Arrow batch: a task holds one blob beside its sort
    try:
        rows = (routed.repartitionByRange(total_ranges, "range").sortWithinPartitions("range")
                .mapInArrow(sort, _SORT_SCHEMA).collect())
    finally:
        if before is None:
            spark.conf.unset(_MAX_RECORDS)
        else:
            spark.conf.set(_MAX_RECORDS, before)
    t2 = time.perf_counter()
    report = CompactionReport(None, [TaskReport(r["executor"], r["seconds"], r["cpu_seconds"], 1) for r in rows],
                              {"plan": t1 - t0, "tasks": t2 - t1})
    written: dict[int, list[DataFileMeta]] = {r["range"]: pickle.loads(r["files"]) for r in rows}
    messages = [_message(table.store, s, written) for s in splits]
    report.snapshot_id = commit_once(table, messages, user, BATCH_COMMIT_IDENTIFIER)
    report.seconds["commit"] = time.perf_counter() - t2
    return report


def _boundaries(spark: SparkSession, table: Table, splits: Sequence[_Split], order: SortOrder,
                parallelism: int) -> dict[int, pa.Table]:
    """The boundaries of each split partition (by split index), from a sample of its keys."""
    cut = [i for i, s in enumerate(splits) if s.ranges > 1]
    if not cut:
        return {}
    groups = _file_groups(splits, cut, parallelism)
    task = functools.partial(_sample_task, table, splits, groups, order)
    rows = spark.range(len(groups), numPartitions=len(groups)).mapInArrow(task, _SAMPLE_SCHEMA).collect()
    samples: dict[int, list[pa.Table]] = {}
    for r in rows:
        for i, t in pickle.loads(r["samples"]).items():
            samples.setdefault(i, []).append(t)
    out = {}
    for i in cut:
        keyed = pa.concat_tables(samples[i]) if samples.get(i) else None
        if keyed is not None:
            out[i] = boundaries(keyed, order_keys(keyed.schema, order.strategy, order.columns), splits[i].ranges)
    return out


def _file_groups(splits: Sequence[_Split], which: Sequence[int], n: int) -> list[list[tuple[int, DataFileMeta]]]:
    """The files of the splits ``which`` in at most ``n`` groups of similar total size (largest first, each to the
    lightest group), each file with its split's index."""
    files = sorted(((i, f) for i in which for f in splits[i].bucket.files), key=lambda p: -p[1].file_size)
    groups: list[list[tuple[int, DataFileMeta]]] = [[] for _ in range(max(1, min(n, len(files))))]
    sizes = [0] * len(groups)
    for i, f in files:
        g = sizes.index(min(sizes))
        groups[g].append((i, f))
        sizes[g] += f.file_size
    return groups


class _Readers:
    """A task's readers of the live rows of each split partition's files (deletion vectors applied)."""

    def __init__(self, table: Table, splits: Sequence[_Split]) -> None:
        self.ctx = table.store
        self.splits = splits
        self.settings = AppendCompactionSettings.of(self.ctx)
        self._open: dict[int, AppendBucketCompactor] = {}

    def compactor(self, i: int, with_dvs: bool = True) -> AppendBucketCompactor:
        b = self.splits[i].bucket
        if not with_dvs:
            return AppendBucketCompactor(self.ctx, self.settings, b.partition, b.bucket)
        if i not in self._open:
            self._open[i] = AppendBucketCompactor(self.ctx, self.settings, b.partition, b.bucket,
                                                  dv_index_files=b.dv_index_files)
        return self._open[i]

    def read(self, i: int, f: DataFileMeta) -> pa.Table:
        return self.compactor(i).read_live(f)

    def var_length(self) -> int:
        return self.ctx.options.get(ZORDER_VAR_LENGTH_CONTRIBUTION)


def _group_indexes(batches: Iterator[pa.RecordBatch]) -> Iterator[int]:
    for batch in batches:
        yield from batch.column(0).to_pylist()


def _sample_task(table: Table, splits: Sequence[_Split], groups: Sequence[Sequence[tuple[int, DataFileMeta]]],
                 order: SortOrder, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task side: a seeded sample of the keys of the group's files, by split."""
    task_arrow_threads()
    readers = _Readers(table, splits)
    for g in _group_indexes(batches):
        samples: dict[int, list[pa.Table]] = {}
        for i, f in groups[g]:
            keyed, sort_keys = keyed_sort(readers.read(i, f), order.strategy, order.columns, readers.var_length())
            rows = max(1, sum(x.row_count for x in splits[i].bucket.files))
            fraction = SAMPLE_PER_RANGE * splits[i].ranges / rows
            samples.setdefault(i, []).append(sample(keyed, sort_keys, fraction, zlib.crc32(f.file_name.encode())))
        blob = pickle.dumps({i: pa.concat_tables(t) for i, t in samples.items()})
        yield pa.RecordBatch.from_pydict({"samples": [blob]}, schema=pa.schema([("samples", pa.binary(), False)]))


def _route_task(table: Table, splits: Sequence[_Split], groups: Sequence[Sequence[tuple[int, DataFileMeta]]],
                order: SortOrder, bounds: dict[int, pa.Table],
                batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task side: each live row of the group's files, as blobs of a range's rows."""
    task_arrow_threads()
    readers = _Readers(table, splits)
    schema = pa.schema([pa.field("range", pa.int64(), False), pa.field("rows", pa.binary(), False)])
    for g in _group_indexes(batches):
        for i, f in groups[g]:
            rows = readers.read(i, f)
            if rows.num_rows == 0:
                continue
            if i in bounds:
                keyed, sort_keys = keyed_sort(rows, order.strategy, order.columns, readers.var_length())
                ids = range_ids(keyed, bounds[i], sort_keys)
            else:
                ids = None
            for r in range(splits[i].ranges):
                part = rows if ids is None else rows.filter(pa.array(ids == r))
                per_blob = max(1, BLOB_BYTES * part.num_rows // max(1, part.nbytes))
                for start in range(0, part.num_rows, per_blob):
                    blob = _to_ipc(part.slice(start, per_blob))
                    yield pa.RecordBatch.from_pydict({"range": [splits[i].first + r], "rows": [blob]}, schema=schema)


def _sort_task(table: Table, splits: Sequence[_Split], order: SortOrder,
               batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Task side: each range's rows (the blobs arrive range after range) sorted and written as files."""
    task_arrow_threads()
    readers = _Readers(table, splits)
    firsts = [s.first for s in splits]
    for r, blobs in itertools.groupby(_blobs(batches), key=lambda p: p[0]):
        start, cpu = time.perf_counter(), time.process_time()
        i = bisect.bisect_right(firsts, r) - 1
        compactor = readers.compactor(i, with_dvs=False)  # the rows were read live: only the writer is used
        files, rows, runs = sort_rows(readers.ctx, compactor, (t for _, t in blobs), order.strategy, order.columns, 0)
        log.info("sorted range %d of a partition of %s: %d rows into %d file(s)%s", r - splits[i].first,
                 readers.ctx.table_path, rows, len(files), f" ({runs} runs spilled)" if runs else "")
        row = {"range": r, "files": pickle.dumps(files), "rows": rows, "executor": executor_id(),
               "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu}
        yield pa.RecordBatch.from_pylist([row], schema=_ARROW_SORT)


def _blobs(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[int, pa.Table]]:
    for batch in batches:
        for r, blob in zip(batch.column(0).to_pylist(), batch.column(1), strict=True):
            yield r, pa.ipc.open_stream(blob.as_buffer()).read_all()


def _to_ipc(rows: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, rows.schema) as writer:
        writer.write_table(rows)
    return bytes(sink.getvalue())


def _message(ctx: StoreContext, split: _Split, written: dict[int, list[DataFileMeta]]) -> CommitMessage:
    """One partition's commit: its files out, its ranges' files in (sequence numbers on from the partition's
    smallest, in range order), its deletion vectors of the files out dropped."""
    b = split.bucket
    seq = min(f.min_sequence_number for f in b.files)
    after = []
    for r in range(split.first, split.first + split.ranges):
        for f in written.get(r, []):
            after.append(dataclasses.replace(f, min_sequence_number=seq, max_sequence_number=seq + f.row_count - 1))
            seq += f.row_count
    compactor = AppendBucketCompactor(ctx, AppendCompactionSettings.of(ctx), b.partition, b.bucket,
                                      dv_index_files=b.dv_index_files)
    if compactor.dvs is not None:
        compactor.dvs.drop(f.file_name for f in b.files)
    new_index, old_index = compactor.flush_index()
    return CommitMessage(b.partition, b.bucket, b.total_buckets, compact_before=list(b.files), compact_after=after,
                         new_index_files=new_index, deleted_index_files=old_index)
