"""Sort compaction of append tables: Paimon's ``compact`` with ``order_strategy`` (``order`` / ``zorder`` /
``hilbert``) and ``order_by`` (docs/layout.md).

Every live file of each selected partition is read (deletion vectors applied), the partition's rows are sorted
together by the order's key (:mod:`table_engine.sort`) and written as new files rolled at ``target-file-size``, so
that each file covers a narrow range of the ``order_by`` columns and its min/max statistics prune reads that filter
on them. Only tables whose rows have no place of their own may be sorted: append tables with ``bucket`` = -1
(Paimon's Spark procedure: "only support unaware-bucket append-only table").

Paimon commits a sort compaction as an OVERWRITE of the partitions it wrote, which silently drops rows appended to
them while it ran. This engine commits it as a COMPACT snapshot instead (the files read out, the sorted files in):
the rows read the same, Paimon Java and pypaimon read it like any compaction, and a concurrent append survives (a
concurrent compaction of the same files is a conflict, and the sort is planned again). ADR 0049 records it.

A partition is sorted in memory on the machine that runs it (a Spark job sorts its partitions in parallel tasks).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass

import pyarrow as pa

from table_engine.core_enums import OrderType
from table_engine.core_options import ZORDER_VAR_LENGTH_CONTRIBUTION
from table_engine.errors import CommandError, SchemaError, UnsupportedError
from table_engine.format.bucket import BucketMode
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.index_manifest import IndexFileMeta
from table_engine.io.executor import submit
from table_engine.sort.external import ExternalSorter
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.append_compact import AppendBucketCompactor, AppendCompactionSettings
from table_engine.store.context import StoreContext
from table_engine.store.reading.read import ReadContext

__all__ = ["SortOrder", "check_sortable", "rewrite_sorted", "sort_partition", "sort_rows"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SortOrder:
    """A sort compaction's order: the strategy and the columns, in key order."""

    strategy: OrderType
    columns: tuple[str, ...]

    @staticmethod
    def parse(order_strategy: str | None, order_by: str | Sequence[str] | None) -> SortOrder | None:
        """The order of Paimon's ``order_strategy`` and ``order_by`` (comma-separated text or a list); None when
        neither is given (a plain compaction). Both or neither, as Paimon's procedure demands."""
        columns = tuple(c.strip() for c in (order_by.split(",") if isinstance(order_by, str) else order_by or ())
                        if c.strip())
        if order_strategy is None or not order_strategy.strip():
            if columns:
                raise CommandError("compact: order_by needs order_strategy (order, zorder or hilbert)")
            return None
        try:
            strategy = OrderType(order_strategy.strip().lower())
        except ValueError:
            raise CommandError(f"compact: order_strategy {order_strategy!r} is not one of "
                               f"{[t.value for t in OrderType]}") from None
        if strategy is OrderType.NONE:
            if columns:
                raise CommandError('compact: order_strategy "none" cannot work with order_by columns.')
            return None
        if not columns:
            raise CommandError(f"compact: order_strategy {strategy.value!r} needs order_by columns")
        if len(set(columns)) != len(columns):
            raise CommandError(f"compact: order_by names a column twice: {list(columns)}")
        if strategy is OrderType.HILBERT and len(columns) < 2:
            raise CommandError("compact: Hilbert sort needs at least two columns.")
        return SortOrder(strategy, columns)

    def describe(self) -> str:
        return f"{self.strategy.value}({', '.join(self.columns)})"


def check_sortable(ctx: StoreContext, order: SortOrder) -> None:
    """Refuse, by name and before anything is read, a table or an order that a sort compaction cannot take."""
    where = f"sort compaction of {ctx.table_path}"
    if ctx.schema.primary_keys or ctx.bucket_mode is not BucketMode.BUCKET_UNAWARE:
        raise UnsupportedError(f"{where}: only append tables with bucket = -1 can be sorted (rows of a "
                               "primary-key or bucketed table have their place); use a plain compaction")
    opts = ctx.options
    if opts.raw.get("clustering.incremental", "false").lower() == "true":
        raise UnsupportedError(f"{where}: The table has enabled incremental clustering, do not support sort "
                               "compact.")
    if opts.data_evolution_enabled():
        raise UnsupportedError(f"{where}: Data Evolution table cannot be sorted!")
    if opts.row_tracking_enabled():
        raise UnsupportedError(f"{where}: row-tracking.enabled: sorting would move rows away from the row ids of "
                               "their files (not built: ADR 0049)")
    names = [f.name for f in ctx.schema.fields]
    missing = [c for c in order.columns if c not in names]
    if missing:
        raise SchemaError(f"{where}: Can't find column {missing[0]!r} in table columns. Possible columns are "
                          f"{names}")
    partition_keys = set(ctx.schema.partition_keys)
    if partition_keys & set(order.columns):
        raise CommandError(f"{where}: order_by should not contain partition cols, because it is meaningless, your "
                           f"order_by cols are {list(order.columns)}, and partition cols are "
                           f"{list(ctx.schema.partition_keys)}")


def sort_partition(ctx: StoreContext, order: SortOrder, partition: bytes, bucket: int, total_buckets: int,
                   files: Sequence[DataFileMeta], dv_index_files: Sequence[IndexFileMeta],
                   track: Callable[[str], None] | None = None,
                   read_ctx: ReadContext | None = None) -> CommitMessage | None:
    """Sort the rows of one partition's ``files`` into new files: the commit message (the files out, the sorted
    files and the partition's new deletion-vector index in), None when the partition has no file."""
    if not files:
        return None
    message, rows, runs = rewrite_sorted(ctx, order.strategy, order.columns, partition, bucket, total_buckets, files,
                                         dv_index_files, 0, track, read_ctx)
    log.info("sorted %d rows of %d file(s) of a partition of %s by %s into %d file(s)%s", rows, len(files),
             ctx.table_path, order.describe(), len(message.compact_after), f" ({runs} runs spilled)" if runs else "")
    return message


def rewrite_sorted(ctx: StoreContext, strategy: OrderType, columns: Sequence[str], partition: bytes, bucket: int,
                   total_buckets: int, files: Sequence[DataFileMeta], dv_index_files: Sequence[IndexFileMeta],
                   level: int, track: Callable[[str], None] | None = None,
                   read_ctx: ReadContext | None = None) -> tuple[CommitMessage, int, int]:
    """The live rows of ``files`` sorted (:func:`sort_and_write`) into files of ``level``: the commit message (the
    files out, the sorted ones in, the partition's deletion vectors of the files out dropped), the rows, the runs
    spilled. The one rewrite a sort compaction and a clustering compaction share."""
    compactor = AppendBucketCompactor(ctx, AppendCompactionSettings.of(ctx), partition, bucket, track, read_ctx,
                                      dv_index_files)
    written, rows, runs = sort_and_write(ctx, compactor, files, strategy, columns)
    after = [dataclasses.replace(f, level=level) for f in written] if level else written
    if compactor.dvs is not None:
        compactor.dvs.drop(f.file_name for f in files)
    new_index, old_index = compactor.flush_index()
    return CommitMessage(partition, bucket, total_buckets, compact_before=list(files), compact_after=after,
                         new_index_files=new_index, deleted_index_files=old_index), rows, runs


def sort_and_write(ctx: StoreContext, compactor: AppendBucketCompactor, files: Sequence[DataFileMeta],
                   strategy: OrderType, columns: Sequence[str]) -> tuple[list[DataFileMeta], int, int]:
    """The live rows of ``files`` sorted by ``strategy`` over ``columns`` and written as level-0 COMPACT files rolled
    at ``target-file-size``, numbered from the files' smallest sequence number (:func:`sort_rows`)."""
    return sort_rows(ctx, compactor, (compactor.read_live(f) for f in files), strategy, columns,
                     min(f.min_sequence_number for f in files))


def sort_rows(ctx: StoreContext, compactor: AppendBucketCompactor, tables: Iterable[pa.Table], strategy: OrderType,
              columns: Sequence[str], seq_start: int) -> tuple[list[DataFileMeta], int, int]:
    """``tables`` sorted by ``strategy`` over ``columns`` and written into the compactor's bucket as level-0 COMPACT
    files rolled at ``target-file-size``, numbered from ``seq_start``; memory bounded by ``write-buffer-size``
    (beyond it the sort spills sorted runs to local disk and merges them,
    :class:`~table_engine.sort.external.ExternalSorter`). The files, the rows, the runs spilled."""
    with ExternalSorter(strategy, columns, ctx.options.write_buffer_size(),
                        ctx.options.get(ZORDER_VAR_LENGTH_CONTRIBUTION)) as sorter, \
            _RollingWriter(compactor, seq_start) as writer:
        for table in tables:
            sorter.add(table)
        for chunk in sorter.sorted():
            writer.add(chunk)
        return writer.finish(), sorter.rows, sorter.spilled_runs


class _RollingWriter:
    """Sorted chunks written as files of ``target-file-size`` (the last one of the stream smaller), numbered on.
    The files are encoded and written in the background (:func:`~table_engine.io.executor.submit`), one at a time
    and in order, while the sort goes on (at most one file's rows wait for it). A context manager that waits for
    the file being written when it leaves."""

    def __init__(self, compactor: AppendBucketCompactor, seq_start: int) -> None:
        self.compactor = compactor
        self.seq = seq_start
        self.pending: list[pa.Table] = []
        self.pending_bytes = 0
        self._writes: list[Future[list[DataFileMeta]]] = []

    def __enter__(self) -> _RollingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._writes:  # a failure: the file in flight ends before the caller cleans up
            wait([self._writes[-1]])

    def add(self, chunk: pa.Table) -> None:
        self.pending.append(chunk)
        self.pending_bytes += chunk.nbytes
        target = self.compactor.file_writer.target_file_size
        if self.pending_bytes < target:
            return
        rows = pa.concat_tables(self.pending)
        per_row = max(1, rows.nbytes // max(1, rows.num_rows))
        per_file = max(1, target // per_row)
        whole = rows.num_rows // per_file * per_file  # only whole files now: the rest waits for more rows
        self._write(rows.slice(0, whole))
        rest = rows.slice(whole)
        self.pending, self.pending_bytes = ([rest], rest.nbytes) if rest.num_rows else ([], 0)

    def finish(self) -> list[DataFileMeta]:
        """Every file written (in order), once the last is."""
        if self.pending:
            self._write(pa.concat_tables(self.pending))
            self.pending, self.pending_bytes = [], 0
        return [f for w in self._writes for f in w.result()]

    def _write(self, rows: pa.Table) -> None:
        if rows.num_rows == 0:
            return
        if self._writes:  # one file waits at most: memory stays one file's rows ahead of the writer
            self._writes[-1].result()
        c = self.compactor
        self._writes.append(submit(c.file_writer.write_append, c.bucket_path, rows, self.seq, FileSource.COMPACT))
        self.seq += rows.num_rows
