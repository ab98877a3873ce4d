"""``merge-engine = deduplicate`` (the default): the record with the highest ordering of a key wins."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.lsm.key_value import VALUE_KIND, last_of_key_runs
from table_engine.lsm.merge_engines.config import MergeConfig
from table_engine.lsm.merge_engines.function import ALL_CHANGES, MergeCapabilities, MovedKey
from table_engine.lsm.merge_engines.segments import Segments
from table_engine.lsm.sort import MergeOrder


class DeduplicateMerge:
    """The record with the highest ordering wins (a ``-D`` winner deletes the key).

    With ``ignore_delete`` retractions found in files (written before the option was set) are skipped: the last
    ``+I``/``+U`` wins, and a key with only retractions keeps its last one (dropped by readers).
    ``sequence_fields`` (``sequence.field``) only affect the capabilities: the order itself is the caller's.
    """

    def __init__(self, ignore_delete: bool = False, sequence_fields: Sequence[str] = ()) -> None:
        self.ignore_delete = ignore_delete
        self.capabilities = MergeCapabilities(
            merge_free=True, needs_lookup=False, first_wins=False, changelog_kinds=ALL_CHANGES,
            newest_wins=not sequence_fields, ignore_delete=ignore_delete, moved_key=MovedKey.DELETE_AND_INSERT)

    @staticmethod
    def of(config: MergeConfig) -> DeduplicateMerge:
        return DeduplicateMerge(config.ignore_delete, config.sequence_fields)

    def on_write(self, kv: pa.Table) -> pa.Table:
        return kv

    def read_columns(self, columns: set[str]) -> set[str]:
        return set()

    def merge_sorted(self, kv: pa.Table, order: MergeOrder) -> pa.Table:
        if kv.num_rows <= 1:
            return kv
        last = last_of_key_runs(kv, order.key_cols)
        if self.ignore_delete:
            kinds = np.asarray(kv.column(VALUE_KIND).to_numpy(), np.int8)
            retract = (kinds == 1) | (kinds == 3)
            if retract.any():
                seg = Segments.of(kv, order.key_cols)
                pick = seg.last_where(~retract)
                rows = np.where(pick >= 0, pick, seg.ends - 1)
                return kv.take(pa.array(rows))
        if pc.all(last).as_py():  # every key once (the common case of a write): nothing to drop, no copy
            return kv
        return kv.filter(last)
