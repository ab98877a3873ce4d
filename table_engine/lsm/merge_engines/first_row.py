"""``merge-engine = first-row``: the first record of a key (lowest sequence number) wins; later ones are ignored.

Insert-only: ``-U``/``-D`` records are rejected (DataError) unless ``ignore-delete`` is set, in which case the
writer drops them and the merge skips any found in files. ``sequence.field`` is not allowed (checked at table
creation). The first record is kept as it is, so a merged result is itself a first record: merging results again
(write buffer, compaction, merge-on-read) gives the same answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from table_engine.lsm.merge_engines.base import kinds_of, last_rows, retract_mask, retraction_error
from table_engine.lsm.merge_engines.config import MergeConfig
from table_engine.lsm.merge_engines.function import INSERT_ONLY, MergeCapabilities, MovedKey
from table_engine.lsm.merge_engines.segments import Segments

if TYPE_CHECKING:
    from table_engine.lsm.sort import MergeOrder


class FirstRowMerge:
    """Keeps each key's first record (a key with only skipped retractions keeps its last one, a no-op record)."""

    def __init__(self, config: MergeConfig) -> None:
        self.config = config
        self.ignore_delete = config.ignore_delete
        # each key keeps its first record, so level 0 is final only after a lookup; old data is never deleted
        self.capabilities = MergeCapabilities(
            merge_free=True, needs_lookup=True, first_wins=True, changelog_kinds=INSERT_ONLY, newest_wins=False,
            ignore_delete=config.ignore_delete, moved_key=MovedKey.IGNORE, deletion_vectors=False)

    def _reject(self) -> Exception:
        return retraction_error(self.config, ["set 'ignore-delete' = 'true' (or 'first-row.ignore-delete') to "
                                              "ignore DELETE and UPDATE_BEFORE records"],
                                "DELETE/UPDATE_BEFORE records")

    def on_write(self, kv: pa.Table) -> pa.Table:
        if not self.ignore_delete and retract_mask(kinds_of(kv)).any():
            raise self._reject()
        return kv

    def read_columns(self, columns: set[str]) -> set[str]:
        return set()

    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table:
        if kv.num_rows == 0:
            return kv
        retract = retract_mask(kinds_of(kv))
        if retract.any() and not self.ignore_delete:
            raise self._reject()
        seg = Segments.of(kv, order.key_cols)
        if seg.count == kv.num_rows and not retract.any():
            return kv
        first = seg.first_where(~retract)
        rows = np.where(first >= 0, first, last_rows(seg))
        return kv.take(pa.array(rows))
