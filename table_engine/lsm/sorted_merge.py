"""Sort a write buffer and fold it by key with its merge function, copying the value columns once.

A merge-free engine (``deduplicate``, ``first-row``) keeps whole rows chosen by key, row kind and order only. So
the buffer's narrow part (sort and key columns, ``_VALUE_KIND``, the row numbers) is sorted and merged, and the full
rows that survive are taken once, in key order: for 1 M rows folding to 460,947 keys (the postpone benchmark) one
copy of the survivors instead of a sorted copy of every row and then a filtered copy. Other engines combine values
and go the general way (sorted copy, then ``merge_sorted``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from table_engine.lsm.key_value import VALUE_KIND
from table_engine.lsm.merge_engines.deduplicate import DeduplicateMerge
from table_engine.lsm.merge_engines.first_row import FirstRowMerge
from table_engine.lsm.merge_engines.function import MergeFunction
from table_engine.lsm.sort import MergeOrder, is_sorted, sort_indices, take_sorted

_ROW = "__sorted_merge_row"

_PICK_ROWS = (DeduplicateMerge, FirstRowMerge)
"""Merge functions whose ``merge_sorted`` reads only key, order and row kind columns and returns whole rows."""


def sort_and_merge(kv: pa.Table, keys: Sequence[tuple[str, str]], merge_fn: MergeFunction,
                   order: MergeOrder) -> pa.Table:
    """``merge_fn.merge_sorted(take_sorted(kv, keys), order)``, with one copy of the surviving rows where the
    merge function only picks rows."""
    if not isinstance(merge_fn, _PICK_ROWS) or kv.num_rows <= 1 or is_sorted(kv, keys):
        return merge_fn.merge_sorted(take_sorted(kv, keys), order)
    indices = sort_indices(kv, keys)
    names = list(dict.fromkeys([k for k, _ in keys] + [k for k, _ in order.sort_keys()] + [VALUE_KIND]))
    narrow = kv.select([n for n in names if n in kv.column_names])
    narrow = narrow.append_column(_ROW, pa.array(np.arange(kv.num_rows, dtype=np.int64))).take(indices)
    picked = merge_fn.merge_sorted(narrow, order).column(_ROW)
    return kv.take(picked)
