"""A row-level change applied to an append table, as Paimon's Spark commands apply it to a table without primary
keys (``DeleteFromPaimonTableCommand.performNonPrimaryKeyDelete``, ``UpdatePaimonTableCommand``,
``MergeIntoPaimonTable``).

Files that may hold touched rows are found by the change's pruning predicates (partitions, statistics, file
indexes) and read one at a time, their deletion vector applied. Then, per file whose rows the change removes
(deletes, or updates: an updated row leaves its place and is written again):

* with ``deletion-vectors.enabled``: their positions are added to the file's deletion vector (the file stays);
* otherwise (copy-on-write): the file is replaced by a file of its other rows (same bucket, same first sequence
  number), or by nothing when no row is left.

The updated rows' new values are handed back to be written as new files, with any inserted rows, in the same
commit (:meth:`~table_engine.store.committing.commit.FileStoreCommit.commit_row_level`: one OVERWRITE snapshot
that conflicts when a concurrent commit removed a file this one deletes or marks, or changed the vectors it
replaces; the caller plans the change again then).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from table_engine.errors import UnsupportedError
from table_engine.format.data_file_meta import FileSource
from table_engine.format.snapshot import Snapshot
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.compaction.append_compact import AppendBucketCompactor, AppendCompactionSettings
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import dv_index_files
from table_engine.store.reading.read import read_context, read_data_file
from table_engine.store.reading.scan import Split, plan_splits
from table_engine.store.row_level.clauses import RowChange

__all__ = ["AppendChange", "change_append_table"]

log = logging.getLogger(__name__)


@dataclass
class AppendChange:
    """What a change did to an append table's files, not committed yet: a message per (partition, bucket) touched
    (files rewritten, or deletion vectors replaced), the files whose vectors it marked, the rows to write."""

    messages: list[CommitMessage] = field(default_factory=list)
    marked: set[str] = field(default_factory=set)
    new_rows: list[pa.Table] = field(default_factory=list)
    files_read: int = 0
    files_rewritten: int = 0

    def written_files(self) -> int:
        return sum(len(m.new_files) for m in self.messages)


def change_append_table(ctx: StoreContext, change: RowChange, base: Snapshot | None,
                        track: Callable[[str], None] | None = None) -> AppendChange:
    """Apply ``change`` to the files of snapshot ``base`` of an append table (see the module docstring). Files it
    wrote are told to ``track`` (so a failure can delete them) and listed in the messages."""
    out = AppendChange()
    if base is None:
        return out
    vectors = ctx.options.deletion_vectors_enabled()
    preds = [] if change.needs_all_target_rows() else change.prune()
    splits = plan_splits(ctx.file_io, ctx.table_path, base, ctx.schema, preds, ctx.schema_by_id)
    committed = dv_index_files(ctx.index_entries(base))
    settings = AppendCompactionSettings.of(ctx)
    read_ctx = read_context(ctx)
    for split in splits:
        if split.deletion_files and not vectors:
            raise UnsupportedError(f"table {ctx.table_path} has deletion vectors but deletion-vectors.enabled is "
                                   "not true: a change would bring deleted rows back")
        compactor = AppendBucketCompactor(ctx, settings, split.partition, split.bucket, track, read_ctx,
                                          committed.get((split.partition, split.bucket), []))
        _change_bucket(ctx, change, split, compactor, vectors, out)
    log.info("row-level change of %s: %d file(s) read, %d rewritten, %d marked in deletion vectors", ctx.table_path,
             out.files_read, out.files_rewritten, len(out.marked))
    return out


def _change_bucket(ctx: StoreContext, change: RowChange, split: Split, compactor: AppendBucketCompactor,
                   vectors: bool, out: AppendChange) -> None:
    before, after = [], []
    for f in sorted(split.files, key=lambda f: f.min_sequence_number):
        rows = read_data_file(compactor.read_ctx, compactor.file_path(f), f, ctx.schema.fields, system=False)
        out.files_read += 1
        keep = compactor.dvs.keep_mask(f, rows.num_rows) if compactor.dvs is not None else None
        positions = np.arange(rows.num_rows, dtype=np.int64) if keep is None else np.flatnonzero(keep)
        live = rows if keep is None else rows.filter(pa.array(keep))
        c = change.apply(live)
        if c.new_rows.num_rows:
            out.new_rows.append(c.new_rows)
        if c.is_empty():
            continue
        removed = c.removed
        if vectors:
            assert compactor.dvs is not None
            compactor.dvs.delete(f.file_name, positions[removed])
            out.marked.add(f.file_name)
            continue
        before.append(f)
        out.files_rewritten += 1
        rest = live.filter(pa.array(~removed))
        if rest.num_rows:
            after.extend(compactor.file_writer.write_append(compactor.bucket_path, rest, f.min_sequence_number,
                                                            FileSource.APPEND))
    new_index, old_index = compactor.flush_index()
    if before or new_index or old_index:
        out.messages.append(CommitMessage(split.partition, split.bucket, split.total_buckets, new_files=after,
                                          compact_before=before, new_index_files=new_index,
                                          deleted_index_files=old_index))
