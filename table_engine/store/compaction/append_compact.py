"""Append-table compaction: rewrite the groups :mod:`table_engine.store.compaction.append_pick` chooses into new files.

One :class:`AppendBucketCompactor` per (partition, bucket) (bucket 0 for ``bucket`` = -1): it reads the files of each
group in sequence order, with their deletion vectors applied (deleted rows are dropped), and writes the rows as
level-0 files with ``file_source`` COMPACT, rolled at ``target-file-size``, numbered from the group's smallest
sequence number (as Paimon's append compaction rewriter does). With ``deletion-vectors.enabled`` the vectors of the
rewritten files are dropped and the bucket's index file is rewritten (or, when no vector is left, only deleted); the
index change travels with the compaction in the commit message.

* :class:`AppendWriterCompaction` is a writer's state of one bucket (writers compact unless ``write-only``): the
  bucket's live files and the compaction changes not yet handed over, with the same interface as the primary-key
  :class:`~table_engine.store.compaction.compact.WriterCompaction`.
* :func:`compact_append_bucket` is one bucket's part of the dedicated compaction job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from table_engine.core_options import (
    COMPACTION_DELETE_RATIO_THRESHOLD,
    COMPACTION_MIN_FILE_NUM,
    SOURCE_SPLIT_OPEN_FILE_COST,
)
from table_engine.errors import MissingFileError
from table_engine.format.binary_row import decode_row
from table_engine.format.bucket import BucketMode
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.index_manifest import IndexFileMeta
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.append_pick import AppendPickOptions, pick_append
from table_engine.store.compaction.row_tracking import keep_row_tracking, row_id_runs
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors
from table_engine.store.kv_file_writer import DataFileWriter
from table_engine.store.paths import file_path_in
from table_engine.store.reading.read import ReadContext, read_context, read_data_file
from table_engine.store.reading.row_tracking import ROW_TRACKING_COLUMNS

__all__ = ["AppendBucketCompactor", "AppendCompactionSettings", "AppendWriterCompaction", "compact_append_bucket"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AppendCompactionSettings:
    """The append compaction options of a table, resolved once."""

    pick: AppendPickOptions
    bucketed: bool
    """Fixed buckets (``bucket`` > 0): consecutive files only, order kept."""
    bitmap64: bool = False
    row_tracking: bool = False
    """``row-tracking.enabled``: rewrite only runs of adjacent row ids and keep them (:func:`row_id_runs`)"""

    @staticmethod
    def of(ctx: StoreContext) -> AppendCompactionSettings:
        o = ctx.options
        pick = AppendPickOptions(
            target_file_size=o.target_file_size(False), compaction_file_size=o.compaction_file_size(False),
            min_file_num=o.get(COMPACTION_MIN_FILE_NUM),
            delete_ratio_threshold=o.get(COMPACTION_DELETE_RATIO_THRESHOLD),
            open_file_cost=o.get(SOURCE_SPLIT_OPEN_FILE_COST), deletion_vectors=o.deletion_vectors_enabled())
        return AppendCompactionSettings(pick, ctx.bucket_mode is BucketMode.HASH_FIXED, o.deletion_vectors_bitmap64(),
                                        o.row_tracking_enabled())


@dataclass
class AppendCompactResult:
    before: list[DataFileMeta] = field(default_factory=list)
    after: list[DataFileMeta] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not self.before and not self.after


class AppendBucketCompactor:
    """Compacts the files of one (partition, bucket) of an append table."""

    def __init__(self, ctx: StoreContext, settings: AppendCompactionSettings, partition: bytes, bucket: int,
                 track: Callable[[str], None] | None = None, read_ctx: ReadContext | None = None,
                 dv_index_files: Sequence[IndexFileMeta] = ()) -> None:
        self.ctx = ctx
        self.settings = settings
        self.partition = partition
        self.bucket = bucket
        self.partition_values = decode_row(partition, [f.type for f in ctx.schema.partition_fields()])
        self.read_ctx = read_ctx or read_context(ctx)
        self.file_writer = DataFileWriter(ctx, track)
        self.bucket_path = self.file_writer.bucket_path(self.partition_values, bucket)
        self.dvs = BucketDeletionVectors(ctx.file_io, ctx.table_path, dv_index_files, settings.bitmap64, track) \
            if settings.pick.deletion_vectors else None

    def file_path(self, f: DataFileMeta) -> str:
        return file_path_in(self.ctx.table_path, self.ctx.schema, self.partition_values, self.bucket, f,
                            self.ctx.options.partition_default_name())

    def deleted_rows(self) -> dict[str, int]:
        """File name -> rows its deletion vector marks."""
        if self.dvs is None:
            return {}
        return {name: len(bitmap) for name, bitmap in self.dvs.vectors.items() if len(bitmap)}

    def pick(self, files: Sequence[DataFileMeta], full: bool = False) -> list[tuple[DataFileMeta, ...]]:
        if not self.settings.row_tracking:
            return pick_append(files, self.settings.pick, self.settings.bucketed, full, self.deleted_rows())
        deleted = self.deleted_rows()
        tracked = [f for f in files if f.first_row_id is not None and f.file_name not in deleted]
        return row_id_runs(pick_append(tracked, self.settings.pick, self.settings.bucketed, full, {}))

    def compact(self, files: Sequence[DataFileMeta], full: bool = False) -> AppendCompactResult:
        """Pick and rewrite every group of ``files`` (the bucket's live files)."""
        result = AppendCompactResult()
        try:
            for group in self.pick(files, full):
                result.before.extend(group)
                result.after.extend(self._rewrite(group))
        except BaseException:
            for f in result.after:  # nothing half-done is left behind
                self.ctx.file_io.try_delete(self.file_path(f))
            raise
        if self.dvs is not None and result.before:
            self.dvs.drop(f.file_name for f in result.before)
        if result.before:
            log.debug("compacted %d file(s) of bucket %d of %s into %d file(s)", len(result.before), self.bucket,
                      self.ctx.table_path, len(result.after))
        return result

    def flush_index(self) -> tuple[list[IndexFileMeta], list[IndexFileMeta]]:
        """The bucket's new deletion-vector index file (if the vectors changed) and the ones it replaces."""
        return self.dvs.flush() if self.dvs is not None else ([], [])

    def read_live(self, f: DataFileMeta) -> pa.Table:
        """The rows of ``f`` its deletion vector leaves (with the row-tracking columns on a row-tracking table)."""
        tracking = ROW_TRACKING_COLUMNS if self.settings.row_tracking else ()
        t = read_data_file(self.read_ctx, self.file_path(f), f, self.ctx.schema.fields, system=False,
                           tracking=tracking)
        mask = self.dvs.keep_mask(f, t.num_rows) if self.dvs is not None else None
        return t if mask is None else t.filter(pa.array(mask))

    def _rewrite(self, group: Sequence[DataFileMeta]) -> list[DataFileMeta]:
        tables = [self.read_live(f) for f in group]
        rows = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        out = self.file_writer.write_append(self.bucket_path, rows, group[0].min_sequence_number,
                                            FileSource.COMPACT)
        if not self.settings.row_tracking:
            return out
        return keep_row_tracking(out, rows, group)


@dataclass
class AppendWriterCompaction:
    """A writer's compaction state of one append bucket: its live files and the pending compaction changes."""

    compactor: AppendBucketCompactor
    files: list[DataFileMeta]
    before: dict[str, DataFileMeta] = field(default_factory=dict)
    after: list[DataFileMeta] = field(default_factory=list)
    dirty_since_full: bool = False
    committed: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.committed = frozenset(f.file_name for f in self.files)  # the files of the writer's base snapshot

    def add_new_files(self, files: Sequence[DataFileMeta]) -> None:
        if files:
            self.files.extend(files)
            self.dirty_since_full = True

    def must_wait(self) -> bool:
        return False  # append writers never stall for compaction

    def compact(self, full: bool = False) -> bool:
        try:
            result = self.compactor.compact(self.files, full)
        except MissingFileError as e:
            if e.path.rsplit("/", 1)[-1] not in self.committed:
                raise
            # a concurrent writer compacted this committed file and an expiry removed it since this writer's base
            # snapshot: its compaction would conflict at commit anyway, so the new data is committed uncompacted
            log.warning("compaction of bucket %d of %s skipped: %s was removed by a concurrent commit",
                        self.compactor.bucket, self.compactor.ctx.table_path, e.path)
            return False
        if full:
            self.dirty_since_full = False
        if result.is_empty():
            return False
        gone = {f.file_name for f in result.before}
        self.files = [f for f in self.files if f.file_name not in gone] + result.after
        pending = {f.file_name: f for f in self.after}
        for f in result.before:
            if pending.pop(f.file_name, None) is not None:  # an output of an earlier, uncommitted compaction
                self.compactor.ctx.file_io.try_delete(self.compactor.file_path(f))
            else:
                self.before[f.file_name] = f
        self.after = [*pending.values(), *result.after]
        return True

    def drain(self) -> tuple[list[DataFileMeta], list[DataFileMeta]]:
        before, after = list(self.before.values()), self.after
        self.before, self.after = {}, []
        return before, after

    def drain_index_files(self) -> tuple[list[IndexFileMeta], list[IndexFileMeta]]:
        return self.compactor.flush_index()

    def drain_changelog(self) -> list[DataFileMeta]:
        return []  # append tables have no compaction changelog


def compact_append_bucket(ctx: StoreContext, settings: AppendCompactionSettings, partition: bytes, bucket: int,
                          total_buckets: int, files: Sequence[DataFileMeta], dv_index_files: Sequence[IndexFileMeta],
                          full: bool, track: Callable[[str], None] | None = None,
                          read_ctx: ReadContext | None = None) -> CommitMessage | None:
    """Dedicated compaction of one append bucket: its commit message, None when nothing was picked."""
    compactor = AppendBucketCompactor(ctx, settings, partition, bucket, track, read_ctx, dv_index_files)
    result = compactor.compact(files, full)
    if result.is_empty():
        return None
    new_index, old_index = compactor.flush_index()
    return CommitMessage(partition, bucket, total_buckets, compact_before=result.before, compact_after=result.after,
                         new_index_files=new_index, deleted_index_files=old_index)
