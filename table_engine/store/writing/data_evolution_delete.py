"""Deletes on a data-evolution table (``data-evolution.enabled`` with ``deletion-vectors.enabled``), as pypaimon 2.1
records them (``TableDeleteByRowId``, the Python form of Paimon's data-evolution deletes).

A deleted row stays in its files (its position in its row range is its row id): its position is set in the
deletion vector of the range's *anchor*, its oldest normal file (:attr:`RowIdGroup.anchor`), which deletes that
position in every file of the range at read. Each (partition, bucket) touched gets one new deletion-vector index file
holding all its vectors (the committed ones plus the new positions), replacing its committed index files. Nothing
else is written: no data file changes, ``nextRowId`` stays, the row ids of deleted rows are never reused. A delete of
a row that is deleted already changes nothing. A delete by predicate is a delete of the row ids the predicate selects
on the merged rows (the caller reads them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from table_engine.core_options import DELETION_VECTORS_ENABLED
from table_engine.errors import SchemaError
from table_engine.format.snapshot import Snapshot
from table_engine.store.committing.commit import FileStoreCommit
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors, dv_index_files
from table_engine.store.writing.data_evolution_write import row_ids_of, row_ranges

__all__ = ["delete_by_row_id"]


def delete_by_row_id(ctx: StoreContext, commit: FileStoreCommit, row_ids: pa.Array | pa.ChunkedArray | Sequence[int],
                     base: Snapshot | None) -> int | None:
    """Delete the rows ``row_ids`` names (repeats allowed) as of snapshot ``base``, in one commit of deletion-vector
    index files; the new snapshot id (None when nothing changes: no id given, or all deleted already)."""
    what = "delete by row id"
    if not ctx.options.deletion_vectors_enabled():
        raise SchemaError(f"{what} of table {ctx.table_path} needs {DELETION_VECTORS_ENABLED.key} = true (a delete "
                          f"is recorded in deletion vectors)")
    ids_arr = row_ids if isinstance(row_ids, pa.Array | pa.ChunkedArray) else pa.array(list(row_ids), pa.int64())
    ids = np.sort(row_ids_of(ctx, pc.unique(ids_arr.cast(pa.int64())), what))
    if not len(ids):
        return None
    ranges = row_ranges(ctx, base)
    where = ranges.find(ids, ctx.table_path, what)
    committed = dv_index_files(ctx.index_entries(base))
    by_bucket: dict[tuple[bytes, int], tuple[int, BucketDeletionVectors]] = {}
    written: list[str] = []
    try:
        for gi in np.unique(where):
            part, bucket, total, group = ranges.located[int(gi)]
            assert group.first_row_id is not None
            if (part, bucket) not in by_bucket:
                by_bucket[(part, bucket)] = (total, BucketDeletionVectors(
                    ctx.file_io, ctx.table_path, committed.get((part, bucket), []),
                    ctx.options.deletion_vectors_bitmap64(), written.append))
            dvs = by_bucket[(part, bucket)][1]
            positions = ids[where == gi] - group.first_row_id
            vector = dvs.vectors.get(group.anchor.file_name)
            if vector is not None:  # rows deleted already: no change (and no new index file for them alone)
                positions = np.fromiter(BitMap(positions.astype(np.uint32)) - vector, np.int64)
            dvs.delete(group.anchor.file_name, positions)
        messages = []
        for (part, bucket), (total, dvs) in by_bucket.items():
            new, replaced = dvs.flush()
            if new or replaced:
                messages.append(CommitMessage(part, bucket, total, new_index_files=new, deleted_index_files=replaced))
        return commit.commit(messages) if messages else None
    except BaseException:
        for p in written:
            ctx.file_io.try_delete(p)
        raise

