"""sort_and_merge: the narrow sort-and-merge of merge-free engines returns exactly what the general way returns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND
from table_engine.lsm.merge_engines.config import MergeConfig
from table_engine.lsm.merge_engines.deduplicate import DeduplicateMerge
from table_engine.lsm.merge_engines.first_row import FirstRowMerge
from table_engine.lsm.sort import MergeOrder, take_sorted
from table_engine.lsm.sorted_merge import sort_and_merge
from tests.budget import examples


@settings(max_examples=examples(40), deadline=None)
@given(rows=st.integers(0, 5000), keys=st.integers(1, 300), seed=st.integers(0, 2**16), retract=st.booleans(),
       engine=st.sampled_from(["deduplicate", "deduplicate-ignore", "first-row"]))
def test_sort_and_merge_equals_sort_then_merge(rows: int, keys: int, seed: int, retract: bool, engine: str) -> None:
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, 4, rows).astype(np.int8) if retract and engine != "first-row" else np.zeros(rows, np.int8)
    kv = pa.table({"g": pa.array(rng.integers(0, 3, rows)), "k": pa.array(rng.integers(0, keys, rows)),
                   "v": pa.array([f"v{i}" for i in range(rows)]), VALUE_KIND: pa.array(kinds),
                   SEQUENCE_NUMBER: pa.array(np.arange(rows, dtype=np.int64))})
    order = MergeOrder(("g", "k"))
    if engine == "first-row":
        merge = FirstRowMerge(MergeConfig("first-row", "t", ("k",), (), (), ignore_delete=True))
    else:
        merge = DeduplicateMerge(ignore_delete=engine == "deduplicate-ignore")
    keys_ = [("g", "ascending"), ("k", "ascending")]
    expected = merge.merge_sorted(take_sorted(kv, keys_), order)
    assert sort_and_merge(kv, keys_, merge, order).equals(expected)
