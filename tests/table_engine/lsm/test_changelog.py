"""Changelog rows from old and new merged values (:mod:`table_engine.lsm.changelog`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from table_engine.lsm.changelog import changelog_rows, equal_rows
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND

KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


def kv(rows: list[tuple[Any, ...]]) -> pa.Table:
    """(key, value, seq, kind) rows."""
    return pa.table({"k": pa.array([r[0] for r in rows], pa.int64()), "v": pa.array([r[1] for r in rows], pa.string()),
                     SEQUENCE_NUMBER: pa.array([r[2] for r in rows], pa.int64()),
                     VALUE_KIND: pa.array([r[3] for r in rows], pa.int8())})


def out(t: pa.Table) -> list[tuple[Any, ...]]:
    return [(KINDS[r[VALUE_KIND]], r["k"], r["v"], r[SEQUENCE_NUMBER]) for r in t.to_pylist()]


def test_insert_update_delete_and_nothing() -> None:
    before = kv([(4, "d", 1, 0), (2, "b", 2, 0), (3, "c", 3, 0), (5, "e", 4, 3)])  # 5: an old retraction
    after = kv([(1, "a", 10, 0), (2, "B", 11, 2), (3, None, 12, 3), (5, "E", 13, 0), (6, "f", 14, 3)])
    assert out(changelog_rows(before, after, ["k"])) == [
        ("+I", 1, "a", 10),
        ("-U", 2, "b", 11), ("+U", 2, "B", 11),  # retractions carry the sequence number of the change
        ("-D", 3, "c", 12),  # the old value
        ("+I", 5, "E", 13),  # no live old value
    ]  # 6: deleted, never existed: nothing; 4: not changed: nothing


def test_no_before_gives_inserts_of_added_rows() -> None:
    after = kv([(1, "a", 1, 0), (2, "b", 2, 3)])
    assert out(changelog_rows(None, after, ["k"])) == [("+I", 1, "a", 1)]
    assert changelog_rows(None, after.slice(0, 0), ["k"]).num_rows == 0


def test_row_deduplicate_compares_the_given_columns() -> None:
    before = kv([(1, "a", 1, 0), (2, "b", 2, 0), (3, None, 3, 0)])
    after = kv([(1, "a", 5, 0), (2, "c", 6, 0), (3, None, 7, 0)])
    assert out(changelog_rows(before, after, ["k"], compare=["k", "v"])) == [("-U", 2, "b", 6), ("+U", 2, "c", 6)]
    assert len(out(changelog_rows(before, after, ["k"], compare=["k"]))) == 0  # v ignored
    assert len(out(changelog_rows(before, after, ["k"]))) == 6


def test_first_row_is_insert_only() -> None:
    before = kv([(1, "a", 1, 0)])
    after = kv([(1, "a", 1, 0), (2, "b", 5, 0)])
    assert out(changelog_rows(before, after, ["k"], insert_only=True)) == [("+I", 2, "b", 5)]


def test_composite_keys() -> None:
    def t(rows: list[tuple[Any, ...]]) -> pa.Table:
        return pa.table({"a": [r[0] for r in rows], "b": [r[1] for r in rows], "v": [r[2] for r in rows],
                         SEQUENCE_NUMBER: pa.array([r[3] for r in rows], pa.int64()),
                         VALUE_KIND: pa.array([0] * len(rows), pa.int8())})

    got = changelog_rows(t([(1, "x", 1, 1), (1, "y", 2, 2)]), t([(1, "y", 3, 3), (2, "x", 4, 4)]), ["a", "b"])
    assert [(KINDS[r[VALUE_KIND]], r["a"], r["b"], r["v"]) for r in got.to_pylist()] == [
        ("-U", 1, "y", 2), ("+U", 1, "y", 3), ("+I", 2, "x", 4)]


def test_equal_rows_handles_nulls_and_nested_types() -> None:
    a = pa.table({"x": [1, None, 3, None], "l": [[1], [2], None, [None]], "m": pa.array(
        [[("a", 1)], [], None, [("b", None)]], pa.map_(pa.string(), pa.int64()))})
    b = pa.table({"x": [1, None, 4, 5], "l": [[1], [3], None, [None]], "m": pa.array(
        [[("a", 1)], [], None, [("b", None)]], pa.map_(pa.string(), pa.int64()))})
    assert equal_rows(a, b, ["x"]).tolist() == [True, True, False, False]
    assert equal_rows(a, b, ["l"]).tolist() == [True, False, True, True]
    assert equal_rows(a, b, ["m"]).tolist() == [True, True, True, True]
