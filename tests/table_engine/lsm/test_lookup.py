"""Locating keys in candidate tables (pure, vectorized)."""

from __future__ import annotations

import pyarrow as pa

from table_engine.lsm.lookup import keys_not_in, locate_keys


def test_single_key_column() -> None:
    keys = pa.table({"k": [5, 1, 9, 3]})
    cand = pa.table({"k": [1, 2, 3, 4, 5]})
    hits = locate_keys(keys, cand, ["k"])
    assert hits.key_index.tolist() == [0, 1, 3]
    assert hits.candidate_index.tolist() == [4, 0, 2]
    assert keys_not_in(keys, [cand], ["k"]).tolist() == [False, False, True, False]


def test_composite_keys() -> None:
    keys = pa.table({"a": ["x", "y", "x"], "b": [1, 1, 2]})
    cand = pa.table({"a": ["x", "x", "y"], "b": [2, 3, 1], "v": [0, 0, 0]})
    hits = locate_keys(keys, cand, ["a", "b"])
    assert list(zip(hits.key_index.tolist(), hits.candidate_index.tolist())) == [(1, 2), (2, 0)]
    assert keys_not_in(keys, [cand.slice(0, 1), cand.slice(2)], ["a", "b"]).tolist() == [True, False, False]


def test_empty_inputs() -> None:
    empty = pa.table({"k": pa.array([], pa.int64())})
    assert len(locate_keys(empty, pa.table({"k": [1]}), ["k"])) == 0
    assert len(locate_keys(pa.table({"k": [1]}), empty, ["k"])) == 0
    assert keys_not_in(pa.table({"k": [1]}), [], ["k"]).tolist() == [True]
