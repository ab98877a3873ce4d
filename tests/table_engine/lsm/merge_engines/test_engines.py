"""Aggregate functions and engine options, through the table API."""

from __future__ import annotations

import decimal
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog, DataError
from table_engine.lsm.merge_engines import aggregation_fields
from table_engine.schema_change import SetOption
from table_engine.table import Table

INT = pa.int32()


def _table(catalog: Catalog, columns: list[tuple[str, pa.DataType]], options: dict[str, str],
           name: str = "t") -> Table:
    return catalog.create_table(f"db.{name}", pa.schema([("k", INT), *columns]), primary_keys=["k"],
                                options={"bucket": "1", **options})


def put(t: Table, rows: list[dict[str, Any]], kinds: list[str] | None = None) -> None:
    t.write(pa.Table.from_pylist(rows, schema=t.arrow_schema), row_kinds=kinds)


def by_key(t: Table, columns: list[str] | None = None) -> dict[int, dict[str, Any]]:
    return {r["k"]: r for r in t.read(columns=columns).to_pylist()}


def _agg(catalog: Catalog, column: str, dtype: pa.DataType, function: str, **extra: str) -> Table:
    opts = {"merge-engine": "aggregation", f"fields.{column}.aggregate-function": function}
    opts |= {f"fields.{column}.{k.replace('_', '-')}": v for k, v in extra.items()}
    return _table(catalog, [(column, dtype)], opts)


def test_rbm32_and_rbm64_union(catalog: Catalog) -> None:
    from pyroaring import BitMap, BitMap64

    t = catalog.create_table("db.rbm", pa.schema([("k", INT), ("b32", pa.binary()), ("b64", pa.binary())]),
                             primary_keys=["k"], options={"bucket": "1", "merge-engine": "aggregation",
                                                          "fields.b32.aggregate-function": "rbm32",
                                                          "fields.b64.aggregate-function": "rbm64"})
    big = 1 << 40
    put(t, [{"k": 1, "b32": BitMap([1, 2]).serialize(), "b64": BitMap64([1, big]).serialize()}])
    put(t, [{"k": 1, "b32": BitMap([2, 7]).serialize(), "b64": None},
            {"k": 1, "b32": None, "b64": BitMap64([5]).serialize()}])
    row = by_key(t)[1]
    assert list(BitMap.deserialize(row["b32"])) == [1, 2, 7]
    assert list(BitMap64.deserialize(row["b64"])) == [1, 5, big]


def test_hll_and_theta_sketch_union(catalog: Catalog) -> None:
    import datasketches as ds

    t = catalog.create_table("db.uv", pa.schema([("k", INT), ("hll", pa.binary()), ("theta", pa.binary())]),
                             primary_keys=["k"], options={"bucket": "1", "merge-engine": "aggregation",
                                                          "fields.hll.aggregate-function": "hll_sketch",
                                                          "fields.theta.aggregate-function": "theta_sketch"})

    def sketches(users: range) -> dict[str, bytes]:
        h, th = ds.hll_sketch(12), ds.update_theta_sketch()
        for u in users:
            h.update(f"user{u}")
            th.update(f"user{u}")
        return {"hll": h.serialize_compact(), "theta": th.compact().serialize()}

    put(t, [{"k": 1, **sketches(range(60))}])
    put(t, [{"k": 1, **sketches(range(40, 100))}, {"k": 2, **sketches(range(5))}])
    got = by_key(t)
    assert round(ds.hll_sketch.deserialize(got[1]["hll"]).get_estimate()) == 100
    assert round(ds.compact_theta_sketch.deserialize(got[1]["theta"]).get_estimate()) == 100
    assert round(ds.hll_sketch.deserialize(got[2]["hll"]).get_estimate()) == 5


def test_listagg_delimiter_and_distinct(catalog: Catalog) -> None:
    t = catalog.create_table("db.la", pa.schema([("k", INT), ("a", pa.string()), ("b", pa.string())]),
                             primary_keys=["k"], options={"bucket": "1", "merge-engine": "aggregation",
                                                          "fields.a.aggregate-function": "listagg",
                                                          "fields.a.list-agg-delimiter": "-",
                                                          "fields.b.aggregate-function": "listagg",
                                                          "fields.b.distinct": "true"})
    put(t, [{"k": 1, "a": "1", "b": "x,y"}, {"k": 1, "a": " ", "b": "y,z"}])
    put(t, [{"k": 1, "a": "2", "b": None}, {"k": 1, "a": None, "b": "z,w,x"}])
    assert by_key(t)[1] == {"k": 1, "a": "1-2", "b": "x,y,z,w"}


def test_sum_decimal_product_count_and_bools(catalog: Catalog) -> None:
    dec = pa.decimal128(6, 2)
    t = catalog.create_table("db.n", pa.schema([("k", INT), ("d", dec), ("p", pa.int64()), ("c", pa.int64()),
                                                ("ba", pa.bool_()), ("bo", pa.bool_())]),
                             primary_keys=["k"], options={"bucket": "1", "merge-engine": "aggregation",
                                                          "fields.d.aggregate-function": "sum",
                                                          "fields.p.aggregate-function": "product",
                                                          "fields.c.aggregate-function": "count",
                                                          "fields.ba.aggregate-function": "bool_and",
                                                          "fields.bo.aggregate-function": "bool_or"})
    D = decimal.Decimal
    put(t, [{"k": 1, "d": D("1.25"), "p": 3, "c": 7, "ba": True, "bo": False},
            {"k": 1, "d": D("2.50"), "p": None, "c": None, "ba": None, "bo": None}])
    put(t, [{"k": 1, "d": None, "p": 4, "c": 1, "ba": False, "bo": True}])
    assert by_key(t)[1] == {"k": 1, "d": D("3.75"), "p": 12, "c": 2, "ba": False, "bo": True}
    put(t, [{"k": 1, "d": D("0.75"), "p": 2, "c": 5, "ba": None, "bo": None}], kinds=None)
    assert by_key(t)[1]["c"] == 3
    # a decimal sum beyond the precision becomes null (Java's Decimal.fromBigDecimal)
    put(t, [{"k": 2, "d": D("9999.99"), "p": 1, "c": 1, "ba": None, "bo": None},
            {"k": 2, "d": D("1.00"), "p": 1, "c": 1, "ba": None, "bo": None}])
    assert by_key(t)[2]["d"] is None


def test_integer_overflow_is_a_data_error(catalog: Catalog) -> None:
    t = _agg(catalog, "v", INT, "sum")
    put(t, [{"k": 1, "v": 2**31 - 1}])
    with pytest.raises(DataError, match="column 'v'.*INT overflow"):
        put(t, [{"k": 1, "v": 5}])
        t.read()


def test_count_retraction(catalog: Catalog) -> None:
    t = _agg(catalog, "c", pa.int64(), "count")
    put(t, [{"k": 1, "c": 10}, {"k": 1, "c": 20}, {"k": 1, "c": None}])
    put(t, [{"k": 1, "c": 20}], kinds=["-U"])
    assert by_key(t)[1]["c"] == 1


def test_collect_distinct_and_retraction(catalog: Catalog) -> None:
    t = _agg(catalog, "a", pa.list_(INT), "collect", distinct="true")
    put(t, [{"k": 1, "a": [1, 2, 2]}, {"k": 1, "a": [3, 1]}])
    assert by_key(t)[1]["a"] == [1, 2, 3]
    put(t, [{"k": 1, "a": [2]}], kinds=["-U"])
    put(t, [{"k": 1, "a": [4, 2]}])
    assert by_key(t)[1]["a"] == [1, 3, 4, 2]


def test_merge_map_and_retraction(catalog: Catalog) -> None:
    t = _agg(catalog, "m", pa.map_(pa.string(), INT), "merge_map")
    put(t, [{"k": 1, "m": [("a", 1), ("b", 2)]}])
    put(t, [{"k": 1, "m": [("b", 3), ("c", 4)]}])
    assert by_key(t)[1]["m"] == [("a", 1), ("b", 3), ("c", 4)]
    put(t, [{"k": 1, "m": [("a", 0)]}], kinds=["-D"])
    assert by_key(t)[1]["m"] == [("b", 3), ("c", 4)]


ENTRY = pa.struct([("id", INT), ("seq", INT), ("v", pa.string())])


def test_nested_update_options(catalog: Catalog) -> None:
    t = catalog.create_table("db.nu", pa.schema([("k", INT), ("n", pa.list_(ENTRY))]), primary_keys=["k"],
                             options={"bucket": "1", "merge-engine": "aggregation",
                                      "fields.n.aggregate-function": "nested_update", "fields.n.nested-key": "id",
                                      "fields.n.nested-sequence-field": "seq",
                                      "fields.n.nested-key-null-strategy": "ignore", "fields.n.count-limit": "2"})
    put(t, [{"k": 1, "n": [{"id": 1, "seq": 5, "v": "a"}, {"id": None, "seq": 1, "v": "null key"}]}])
    put(t, [{"k": 1, "n": [{"id": 1, "seq": 4, "v": "older"}, {"id": 2, "seq": 1, "v": "b"}]}])
    put(t, [{"k": 1, "n": [{"id": 3, "seq": 1, "v": "over the limit"}, {"id": 1, "seq": 6, "v": "newer"}]}])
    assert by_key(t)[1]["n"] == [{"id": 1, "seq": 6, "v": "newer"}, {"id": 2, "seq": 1, "v": "b"}]
    t.alter(SetOption("fields.n.nested-key-null-strategy", "error"))
    with pytest.raises(DataError, match="nested key has a null"):
        put(t, [{"k": 2, "n": [{"id": None, "seq": 1, "v": "x"}]}, {"k": 2, "n": [{"id": 1, "seq": 1, "v": "y"}]}])


def test_first_and_last_values(catalog: Catalog) -> None:
    t = catalog.create_table("db.fl", pa.schema([("k", INT), ("fv", INT), ("fnn", INT), ("lv", INT), ("lnn", INT)]),
                             primary_keys=["k"], options={"bucket": "1", "merge-engine": "aggregation",
                                                          "fields.fv.aggregate-function": "first_value",
                                                          "fields.fnn.aggregate-function": "first_not_null_value",
                                                          "fields.lv.aggregate-function": "last_value"})
    put(t, [{"k": 1, "fv": None, "fnn": None, "lv": 1, "lnn": 1}])
    put(t, [{"k": 1, "fv": 2, "fnn": 2, "lv": None, "lnn": None}, {"k": 1, "fv": 3, "fnn": 3, "lv": 3,
                                                                  "lnn": None}])
    assert by_key(t)[1] == {"k": 1, "fv": None, "fnn": 2, "lv": 3, "lnn": 1}


def test_default_aggregate_function(catalog: Catalog) -> None:
    t = catalog.create_table("db.df", pa.schema([("k", INT), ("a", INT), ("b", INT), ("c", INT), ("d", INT)]),
                             primary_keys=["k"], options={"bucket": "1", "merge-engine": "aggregation",
                                                          "fields.default-aggregate-function": "first_non_null_value",
                                                          "fields.b.aggregate-function": "sum"})
    put(t, [{"k": 1, "a": None, "b": 1, "c": 1, "d": 1}, {"k": 1, "a": 2, "b": None, "c": 2, "d": 2}])
    put(t, [{"k": 1, "a": 3, "b": 3, "c": None, "d": 3}, {"k": 1, "a": 4, "b": 4, "c": 4, "d": None}])
    put(t, [{"k": 1, "a": 5, "b": 5, "c": 5, "d": 5}])
    assert by_key(t)[1] == {"k": 1, "a": 2, "b": 13, "c": 1, "d": 1}


def test_aggregation_fields_system_table(catalog: Catalog) -> None:
    schema = pa.schema([pa.field("k", INT), pa.field("v", pa.int64(), metadata=None), ("s", pa.string())])
    t = catalog.create_table("db.af", schema, primary_keys=["k"],
                             options={"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                                      "fields.v.ignore-retract": "true", "fields.s.aggregate-function": "listagg"})
    got = aggregation_fields(t.schema)
    assert got.column_names == ["field_name", "field_type", "function", "function_options", "comment"]
    rows = {r["field_name"]: r for r in got.to_pylist()}
    assert rows["k"] == {"field_name": "k", "field_type": "INT NOT NULL", "function": "[]",
                         "function_options": "[]", "comment": None}
    assert rows["v"]["function"] == "[sum, true]"
    assert rows["v"]["function_options"] == "[fields.v.aggregate-function, fields.v.ignore-retract]"
    assert rows["s"]["field_type"] == "STRING" and rows["s"]["function"] == "[listagg]"
    assert catalog.get_table("db.af$aggregation_fields").read().equals(got)   # the system table


def test_rowkind_field_drives_retraction(catalog: Catalog) -> None:
    t = catalog.create_table("db.rk", pa.schema([("k", INT), ("v", pa.int64()), ("rk", pa.string())]),
                             primary_keys=["k"], options={"bucket": "1", "merge-engine": "aggregation",
                                                          "fields.v.aggregate-function": "sum",
                                                          "rowkind.field": "rk"})
    put(t, [{"k": 1, "v": 10, "rk": "+I"}, {"k": 2, "v": 1, "rk": "+I"}])
    put(t, [{"k": 1, "v": 4, "rk": "-U"}, {"k": 1, "v": 6, "rk": "+U"}])
    assert {k: (r["v"], r["rk"]) for k, r in by_key(t).items()} == {1: (12, "+U"), 2: (1, "+I")}


def test_partial_update_remove_record_on_delete(catalog: Catalog) -> None:
    t = _table(catalog, [("a", INT), ("b", INT)], {"merge-engine": "partial-update",
                                                   "partial-update.remove-record-on-delete": "true"})
    put(t, [{"k": 1, "a": 1, "b": None}, {"k": 2, "a": 2, "b": 2}])
    put(t, [{"k": 1, "a": None, "b": 1}])
    put(t, [{"k": 1, "a": 1, "b": 1}], kinds=["-D"])
    put(t, [{"k": 2, "a": 9, "b": 9}], kinds=["-U"])  # ignored
    assert by_key(t) == {2: {"k": 2, "a": 2, "b": 2}}
    put(t, [{"k": 1, "a": 5, "b": None}])  # the row comes back from the deleted record (Java's semantics)
    assert by_key(t)[1] == {"k": 1, "a": 5, "b": 1}


def test_partial_update_ignore_delete(catalog: Catalog) -> None:
    t = _table(catalog, [("a", INT)], {"merge-engine": "partial-update", "ignore-delete": "true"})
    put(t, [{"k": 1, "a": 1}])
    put(t, [{"k": 1, "a": 1}], kinds=["-D"])
    assert by_key(t) == {1: {"k": 1, "a": 1}}


def test_sequence_group_retraction_and_remove_on_group(catalog: Catalog) -> None:
    t = _table(catalog, [("a", INT), ("g1", INT), ("b", INT), ("g2", INT)],
               {"merge-engine": "partial-update", "fields.g1.sequence-group": "a", "fields.g2.sequence-group": "b",
                "partial-update.remove-record-on-sequence-group": "g2"})
    put(t, [{"k": 1, "a": 1, "g1": 1, "b": 1, "g2": 1}])
    put(t, [{"k": 1, "a": 0, "g1": 2, "b": None, "g2": None}], kinds=["-D"])  # retracts group g1 only
    assert by_key(t)[1] == {"k": 1, "a": None, "g1": 2, "b": 1, "g2": 1}
    put(t, [{"k": 1, "a": None, "g1": None, "b": 0, "g2": 0}], kinds=["-D"])  # older: nothing happens
    assert by_key(t)[1] == {"k": 1, "a": None, "g1": 2, "b": 1, "g2": 1}
    put(t, [{"k": 1, "a": None, "g1": None, "b": 0, "g2": 3}], kinds=["-D"])  # removes the row
    assert by_key(t) == {}


def test_projection_reads_sequence_group_fields(catalog: Catalog) -> None:
    t = _table(catalog, [("a", INT), ("g", INT), ("x", INT)],
               {"merge-engine": "partial-update", "fields.g.sequence-group": "a"})
    put(t, [{"k": 1, "a": 1, "g": 5, "x": 1}])
    put(t, [{"k": 1, "a": 2, "g": 3, "x": 2}])
    assert t.read(columns=["k", "a"]).to_pylist() == [{"k": 1, "a": 1}]
    assert t.read(columns=["x"]).to_pylist() == [{"x": 2}]
    assert t.read(filter=[("a", "=", 1)]).num_rows == 1


def test_deduplicate_ignore_delete_skips_deletes_already_in_files(catalog: Catalog) -> None:
    t = _table(catalog, [("v", pa.string())], {})
    put(t, [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}])
    put(t, [{"k": 1, "v": "a"}], kinds=["-D"])
    assert set(by_key(t)) == {2}
    t.alter(SetOption("ignore-delete", "true"))
    assert by_key(t) == {1: {"k": 1, "v": "a"}, 2: {"k": 2, "v": "b"}}


def test_deduplicate_sequence_field_orders(catalog: Catalog) -> None:
    t = _table(catalog, [("v", pa.string()), ("ts", pa.int64()), ("flag", INT)], {"sequence.field": "ts,flag"})
    put(t, [{"k": 1, "v": "new", "ts": 5, "flag": 1}])
    put(t, [{"k": 1, "v": "old", "ts": 4, "flag": 9}, {"k": 1, "v": "tie-lower", "ts": 5, "flag": 0}])
    assert by_key(t)[1]["v"] == "new"
    put(t, [{"k": 1, "v": "same seq, later input", "ts": 5, "flag": 1}])
    assert by_key(t)[1]["v"] == "same seq, later input"
    d = _table(catalog, [("v", pa.string()), ("ts", pa.int64())],
               {"sequence.field": "ts", "sequence.field.sort-order": "descending"}, name="desc")
    put(d, [{"k": 1, "v": "small", "ts": 1}, {"k": 1, "v": "null", "ts": None}])
    put(d, [{"k": 1, "v": "big", "ts": 9}])
    assert by_key(d)[1]["v"] == "small"
