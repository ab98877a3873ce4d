"""Lookup compaction with deletion vectors (merge-on-write), one bucket: Paimon's ``LookupMergeTreeCompactRewriter``
with a ``BucketedDvMaintainer``, implementing :class:`table_engine.lsm.compaction.rewriter.LevelLookup`.

When compaction moves records out of level 0 into level ``n > 0``, each key that only level-0 files of the merged
section hold is looked up in levels ``n+1 ..`` (lowest level first, live rows only: vectors applied); the first
version found is the one those records replace, so its row position is marked in that file's deletion vector. With
a merge engine other than deduplicate (or with ``sequence.field``) the old version is merged into the new records,
as Paimon does. Level-0 files are upgraded without rewriting only where Paimon allows it (no -U/-D rows, deduplicate
without sequence field, or the max level); their keys are looked up all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.key_value import VALUE_KIND, is_add
from table_engine.lsm.levels import KeyCodec, Levels
from table_engine.lsm.lookup import find_keys_above, keys_not_in
from table_engine.lsm.merge_engines import MergeFunction, sort_and_merge
from table_engine.lsm.sort import MergeOrder, concat_tables
from table_engine.store.indexes.deletion_vectors import BucketDeletionVectors

__all__ = ["DeletionVectorLookup", "ReadLive"]

#: reads the live rows of a data file (vectors applied): (rows, their 0-based positions in the file); ``full``: every
#: value column + ``_SEQUENCE_NUMBER`` + ``_VALUE_KIND`` (else key columns + ``_VALUE_KIND``)
ReadLive = Callable[[DataFileMeta, bool], tuple[pa.Table, npt.NDArray[np.int64]]]


class DeletionVectorLookup:
    """The lookup of one compaction of one bucket (``levels``: the bucket before the compaction)."""

    def __init__(self, levels: Levels, dvs: BucketDeletionVectors, read_live: ReadLive, key_names: Sequence[str],
                 codec: KeyCodec, merge_function: MergeFunction, order: MergeOrder, newest_wins: bool) -> None:
        self.levels = levels
        self.dvs = dvs
        self.read_live = read_live
        self.key_names = list(key_names)
        self.codec = codec
        self.merge_function = merge_function
        self.order = order
        self.newest_wins = newest_wins  # deduplicate without sequence.field: the old value never matters

    # ---- LevelLookup ---------------------------------------------------------------------------------------------
    def lookup_merged(self, output_level: int, files: Sequence[DataFileMeta], tables: Sequence[pa.Table],
                      merged: pa.Table) -> pa.Table:
        high = [t for f, t in zip(files, tables) if f.level > 0]
        need = np.flatnonzero(keys_not_in(merged, high, self.key_names)) if high else np.arange(merged.num_rows)
        if not need.size:
            return merged
        old = self._lookup(output_level, merged.take(pa.array(need)), full=not self.newest_wins)
        if old is None or old.num_rows == 0:
            return merged
        # the old versions are older records of the same keys: merge them in (both sides unique per key)
        return sort_and_merge(concat_tables([old.select(merged.column_names).cast(merged.schema), merged]),
                              self.order, self.merge_function)

    def upgrade(self, output_level: int, f: DataFileMeta) -> bool:
        if f.delete_row_count is None or f.delete_row_count > 0:
            return False  # -U/-D rows must be dropped: rewrite
        if output_level >= self.levels.max_level:
            return True  # nothing lies above the max level
        if not self.newest_wins:
            return False  # the old versions must be merged in: rewrite
        keys, _ = self.read_live(f, False)
        if not pc.all(is_add(keys.column(VALUE_KIND))).as_py():
            return False  # a file whose metadata under-counts its -U/-D rows (pypaimon writes 0)
        self._lookup(output_level, keys, full=False)
        return True

    # ---- the lookup ------------------------------------------------------------------------------------------------
    def _lookup(self, output_level: int, keys: pa.Table, full: bool) -> pa.Table | None:
        """Find ``keys`` above ``output_level``, mark the versions found deleted; with ``full`` return them."""
        found: list[pa.Table] = []
        for f, (rows, positions), hits in find_keys_above(
                self.levels, self.codec, self.key_names, output_level, keys, lambda file: self.read_live(file, full),
                _rows, newest_wins=True):
            self.dvs.delete(f.file_name, positions[hits.candidate_index])
            if full:
                found.append(rows.take(pa.array(hits.candidate_index)))
        return concat_tables(found) if found else None



def _rows(live: tuple[pa.Table, npt.NDArray[np.int64]]) -> pa.Table:
    return live[0]
