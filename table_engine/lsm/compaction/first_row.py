"""Lookup compaction of ``merge-engine = first-row`` tables (pure: file reading is injected).

Paimon always compacts a first-row table with lookup (its ``needLookup`` holds for first-row): level 0 is pushed up
at every compaction (:mod:`table_engine.lsm.compaction.force_up`) and batch reads skip level 0, so a key must never
reach a level above 0 twice. When a section with level-0 records goes to an output level above 0, each merged key
is kept when the section holds a record of it from a level above 0 (that record is older, and first-row keeps it);
otherwise the key is looked up in the levels above the output level, and when one of them holds it the new record
is dropped (the stored one is the first). This is the rule of Paimon's ``FirstRowMergeFunctionWrapper``. A level-0
file is upgraded without rewriting only to the max level (nothing lies above it); elsewhere it is rewritten so that
its keys are looked up, as Paimon's ``LookupMergeTreeCompactRewriter`` decides for merge engines other than
deduplicate.

Lookups read only the key columns of the candidate files, level by level, each file pruned by its key range first;
a key found in a level is not looked up further. Vectorized: one hash lookup or join per file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.levels import KeyCodec, Levels
from table_engine.lsm.lookup import keys_not_in, locate_keys, may_hold_keys

__all__ = ["FirstRowLookup"]

#: reads the key columns of one data file
ReadKeys = Callable[[DataFileMeta], pa.Table]


class FirstRowLookup:
    """The :class:`~table_engine.lsm.compaction.rewriter.LevelLookup` of first-row tables (``levels``: the bucket
    before the compaction)."""

    def __init__(self, levels: Levels, read_keys: ReadKeys, key_names: Sequence[str], codec: KeyCodec) -> None:
        self.levels = levels
        self.read_keys = read_keys
        self.key_names = list(key_names)
        self.codec = codec

    def lookup_merged(self, output_level: int, files: Sequence[DataFileMeta], tables: Sequence[pa.Table],
                      merged: pa.Table) -> pa.Table:
        if merged.num_rows == 0:
            return merged
        high = [t for f, t in zip(files, tables) if f.level > 0]
        new = keys_not_in(merged, high, self.key_names)  # keys with level-0 records only
        rows = np.flatnonzero(new)
        if len(rows) == 0:
            return merged
        found = self.contained_above(output_level, merged.take(pa.array(rows)).select(self.key_names))
        if not found.any():
            return merged
        keep = np.ones(merged.num_rows, dtype=np.bool_)
        keep[rows[found]] = False
        return merged.filter(pa.array(keep))

    def upgrade(self, output_level: int, f: DataFileMeta) -> bool:
        return output_level >= self.levels.max_level

    def contained_above(self, output_level: int, keys: pa.Table) -> npt.NDArray[np.bool_]:
        """Mask over ``keys``: True where a level above ``output_level`` holds the key."""
        found = np.zeros(keys.num_rows, dtype=np.bool_)
        remaining = np.arange(keys.num_rows, dtype=np.int64)
        for level in range(output_level + 1, self.levels.max_level + 1):
            for f in self.levels.run_of_level(level).files:
                if len(remaining) == 0:
                    return found
                pending = keys.take(pa.array(remaining))
                if not may_hold_keys(self.codec, f, pending, self.key_names[0]):
                    continue
                hits = locate_keys(pending, self.read_keys(f), self.key_names)
                if len(hits):
                    found[remaining[hits.key_index]] = True
                    remaining = np.delete(remaining, hits.key_index)
        return found
