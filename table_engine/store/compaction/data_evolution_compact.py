"""Compaction of a data-evolution table: the files of each row range merged into one whole file, row ids kept.

As Paimon's ``DataEvolutionNormalCompactTask`` does: the column files of a row range (a base file and the overlays of
later updates, see :mod:`table_engine.store.reading.data_evolution`) are read as merged rows, deleted rows included
(a row's position in its range is its row id, so no row may go), and written as one file (never rolled) with the
range's ``_FIRST_ROW_ID``, no ``_WRITE_COLS``, ``file_source`` COMPACT and the sequence range of the files it
replaces. The range's deletion vector, stored under its oldest file, moves to the new file unchanged (same row
positions), as ``DataEvolutionCompactDeletionVectorRewriter`` moves it. Ranges of one file are left as they are.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.index_manifest import IndexFileMeta
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors
from table_engine.store.kv_file_writer import DataFileWriter
from table_engine.store.paths import file_path_in
from table_engine.store.reading.data_evolution import RowIdGroup, is_blob_file, row_id_groups
from table_engine.store.reading.read import ReadContext, read_context, read_row_id_group

__all__ = ["compact_data_evolution_bucket"]

log = logging.getLogger(__name__)

_ONE_FILE = 1 << 62
"""The target file size of a compaction output: a row range becomes exactly one file."""


def compact_data_evolution_bucket(ctx: StoreContext, partition: bytes, bucket: int, total_buckets: int,
                                  files: Sequence[DataFileMeta], dv_index_files: Sequence[IndexFileMeta],
                                  track: Callable[[str], None] | None = None,
                                  read_ctx: ReadContext | None = None) -> CommitMessage | None:
    """Merge the column files of every row range of one bucket that has more than one: its commit message, None
    when every range is one file already. On failure the files written are deleted."""
    # ``.blob`` files stay as they are (ADR 0018): only the normal column files of a range are merged
    groups = [g for g in row_id_groups([f for f in files if not is_blob_file(f.file_name)]) if len(g.files) > 1]
    if not groups:
        return None
    read_ctx = read_ctx or read_context(ctx)
    writer = DataFileWriter(ctx, track)
    writer.target_file_size = _ONE_FILE
    values = decode_row(partition, [f.type for f in ctx.schema.partition_fields()])
    bucket_path = writer.bucket_path(values, bucket)
    default_part = ctx.options.partition_default_name()

    def path_of(f: DataFileMeta) -> str:
        return file_path_in(ctx.table_path, ctx.schema, values, bucket, f, default_part)

    dvs = BucketDeletionVectors(ctx.file_io, ctx.table_path, dv_index_files, ctx.options.deletion_vectors_bitmap64(),
                                track) if dv_index_files else None
    before: list[DataFileMeta] = []
    after: list[DataFileMeta] = []
    try:
        for g in groups:
            merged = _rewrite(read_ctx, writer, bucket_path, g, path_of)
            before.extend(g.files)
            after.append(merged)
            if dvs is not None:
                vector = dvs.vectors.get(g.anchor.file_name)
                dvs.drop(f.file_name for f in g.files)
                if vector is not None and len(vector):
                    dvs.delete(merged.file_name, list(vector))
    except BaseException:
        for f in after:
            ctx.file_io.try_delete(path_of(f))
        raise
    new_index, old_index = dvs.flush() if dvs is not None else ([], [])
    log.debug("merged %d column file(s) of %d row range(s) of bucket %d of %s", len(before), len(groups), bucket,
              ctx.table_path)
    return CommitMessage(partition, bucket, total_buckets, compact_before=before, compact_after=after,
                         new_index_files=new_index, deleted_index_files=old_index)


def _rewrite(read_ctx: ReadContext, writer: DataFileWriter, bucket_path: str, g: RowIdGroup,
             path_of: Callable[[DataFileMeta], str]) -> DataFileMeta:
    fields = [f for f in read_ctx.schema.fields if f.type.root != "BLOB"]  # BLOB columns: in their .blob files
    rows = read_row_id_group(read_ctx, g, fields, path_of)
    min_seq = min(f.min_sequence_number for f in g.files)
    writer.value_fields = fields
    (meta,) = writer.write_append(bucket_path, rows, min_seq, FileSource.COMPACT)
    if len(fields) < len(read_ctx.schema.fields):
        names = [f.name for f in fields]
        meta = dataclasses.replace(meta, write_cols=names, value_stats_cols=names)
    return dataclasses.replace(meta, first_row_id=g.first_row_id, min_sequence_number=min_seq,
                               max_sequence_number=max(f.max_sequence_number for f in g.files))
