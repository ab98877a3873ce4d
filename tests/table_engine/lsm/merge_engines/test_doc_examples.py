"""Every merge-engine example of the Paimon docs (seeds 000/003/004), reproduced with its documented output."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog, DataError
from table_engine.table import Table


def _table(catalog: Catalog, name: str, columns: list[tuple[str, pa.DataType]], options: dict[str, str],
           pk: tuple[str, ...] = ("k",)) -> Table:
    return catalog.create_table(f"db.{name}", pa.schema(columns), primary_keys=list(pk),
                                options={"bucket": "1", **options})


def insert(t: Table, *rows: tuple[Any, ...], kinds: list[str] | None = None) -> None:
    names = t.arrow_schema.names
    t.write(pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in rows], schema=t.arrow_schema),
            row_kinds=kinds)


def select(t: Table) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in t.read().to_pylist())


INT = pa.int32()


def test_partial_update_basic(catalog: Catalog) -> None:
    t = _table(catalog, "t", [("k", INT), ("a", pa.float64()), ("b", INT), ("c", pa.string())],
               {"merge-engine": "partial-update"})
    insert(t, (1, 23.0, 10, None))
    insert(t, (1, None, None, "This is a book"))
    insert(t, (1, 25.2, None, None))
    assert select(t) == [(1, 25.2, 10, "This is a book")]


def test_partial_update_basic_in_one_commit(catalog: Catalog) -> None:
    t = _table(catalog, "t", [("k", INT), ("a", pa.float64()), ("b", INT), ("c", pa.string())],
               {"merge-engine": "partial-update"})
    insert(t, (1, 23.0, 10, None), (1, None, None, "这是一本书"), (1, 25.2, None, None))
    assert select(t) == [(1, 25.2, 10, "这是一本书")]


def test_sequence_group(catalog: Catalog) -> None:
    t = _table(catalog, "t", [(n, INT) for n in ("k", "a", "b", "g_1", "c", "d", "g_2")],
               {"merge-engine": "partial-update", "fields.g_1.sequence-group": "a,b",
                "fields.g_2.sequence-group": "c,d"})
    insert(t, (1, 1, 1, 1, 1, 1, 1))
    insert(t, (1, 2, 2, 2, 2, 2, None))  # g_2 is null: c and d are not updated
    assert select(t) == [(1, 2, 2, 2, 1, 1, 1)]
    insert(t, (1, 3, 3, 1, 3, 3, 3))  # g_1 is smaller: a and b are not updated
    assert select(t) == [(1, 2, 2, 2, 3, 3, 3)]


def test_sequence_group_multiple_sequence_fields(catalog: Catalog) -> None:
    t = _table(catalog, "sg", [(n, INT) for n in ("k", "a", "b", "g_1", "c", "d", "g_2", "g_3")],
               {"merge-engine": "partial-update", "fields.g_1.sequence-group": "a,b",
                "fields.g_2,g_3.sequence-group": "c,d"})
    insert(t, (1, 1, 1, 1, 1, 1, 1, 1))
    insert(t, (1, 2, 2, 2, 2, 2, 1, None))  # (g_2, g_3) = (1, NULL) < (1, 1): not updated
    assert select(t) == [(1, 2, 2, 2, 1, 1, 1, 1)]
    insert(t, (1, 3, 3, 1, 3, 3, 3, 1))  # g_1 smaller: not updated
    assert select(t) == [(1, 2, 2, 2, 3, 3, 3, 1)]


@pytest.mark.parametrize("one_commit", [False, True])
def test_partial_update_with_aggregation(catalog: Catalog, one_commit: bool) -> None:
    t = _table(catalog, "t", [(n, INT) for n in ("k", "a", "b", "c", "d")],
               {"merge-engine": "partial-update", "fields.a.sequence-group": "b",
                "fields.b.aggregate-function": "first_value", "fields.c.sequence-group": "d",
                "fields.d.aggregate-function": "sum"})
    rows = [(1, 1, 1, None, None), (1, None, None, 1, 1), (1, 2, 2, None, None), (1, None, None, 2, 2)]
    if one_commit:
        insert(t, *rows)
    else:
        for r in rows:
            insert(t, r)
    assert select(t) == [(1, 2, 1, 2, 3)]


def test_partial_update_aggregation_with_multiple_sequence_fields(catalog: Catalog) -> None:
    t = _table(catalog, "agg", [("k", INT), ("a", INT), ("b", INT), ("g_1", INT), ("c", pa.string()),
                                ("g_2", INT), ("g_3", INT)],
               {"merge-engine": "partial-update", "fields.a.aggregate-function": "sum",
                "fields.g_1,g_3.sequence-group": "a", "fields.g_2.sequence-group": "c"})
    insert(t, (1, 1, 1, 1, "1", 1, 1))
    insert(t, (1, 2, 2, 2, "2", None, 2))  # g_2 null: c not updated
    assert select(t) == [(1, 3, 2, 2, "1", 1, 2)]
    insert(t, (1, 3, 3, 2, "3", 3, 1))  # (g_1, g_3) = (2, 1) < (2, 2): a still summed, g_1/g_3 kept
    assert select(t) == [(1, 6, 3, 2, "3", 3, 2)]


def test_partial_update_default_aggregate_function(catalog: Catalog) -> None:
    t = _table(catalog, "t", [(n, INT) for n in ("k", "a", "b", "c", "d")],
               {"merge-engine": "partial-update", "fields.a.sequence-group": "b", "fields.c.sequence-group": "d",
                "fields.default-aggregate-function": "last_non_null_value", "fields.d.aggregate-function": "sum"})
    insert(t, (1, 1, 1, None, None))
    insert(t, (1, None, None, 1, 1))
    insert(t, (1, 2, 2, None, None))
    insert(t, (1, None, None, 2, 2))
    assert select(t) == [(1, 2, 2, 2, 3)]


def test_partial_update_rejects_deletes_by_default(catalog: Catalog) -> None:
    t = _table(catalog, "t", [("k", INT), ("a", INT)], {"merge-engine": "partial-update"})
    insert(t, (1, 1))
    with pytest.raises(DataError, match=r"(?s)db\.db/t.*partial-update.*ignore-delete.*remove-record-on-delete"
                                        r".*sequence-group"):
        insert(t, (1, 1), kinds=["-D"])
    assert select(t) == [(1, 1)]


def test_aggregation_example(catalog: Catalog) -> None:
    t = _table(catalog, "my_table", [("product_id", pa.int64()), ("price", pa.float64()), ("sales", pa.int64())],
               {"merge-engine": "aggregation", "fields.price.aggregate-function": "max",
                "fields.sales.aggregate-function": "sum"}, pk=("product_id",))
    insert(t, (1, 23.0, 15))
    insert(t, (1, 30.2, 20))
    assert select(t) == [(1, 30.2, 35)]


SUB_ORDER = pa.struct([("sub_order_id", pa.int64()), ("product_name", pa.string()), ("price", pa.int64())])


def test_nested_update_order_wide(catalog: Catalog) -> None:
    t = _table(catalog, "order_wide", [("order_id", pa.int64()), ("user_name", pa.string()),
                                       ("address", pa.string()), ("sub_orders", pa.list_(SUB_ORDER))],
               {"merge-engine": "aggregation", "fields.sub_orders.aggregate-function": "nested_update",
                "fields.sub_orders.nested-key": "sub_order_id"}, pk=("order_id",))
    orders = [(1, "Alice", "Street 1", None), (2, "Bob", "Street 2", None)]
    sub_orders = [(1, None, None, [{"sub_order_id": 1, "product_name": "apple", "price": 3}]),
                  (1, None, None, [{"sub_order_id": 2, "product_name": "pear", "price": 5}]),
                  (2, None, None, [{"sub_order_id": 1, "product_name": "fig", "price": 7}]),
                  # an update of a sub-order replaces it (same nested key)
                  (1, None, None, [{"sub_order_id": 1, "product_name": "apple", "price": 4}])]
    insert(t, *orders, *sub_orders[:2])
    insert(t, *sub_orders[2:])
    got = {r["order_id"]: r for r in t.read().to_pylist()}
    assert got[1]["user_name"] == "Alice" and got[1]["address"] == "Street 1"
    assert got[1]["sub_orders"] == [{"sub_order_id": 1, "product_name": "apple", "price": 4},
                                    {"sub_order_id": 2, "product_name": "pear", "price": 5}]
    assert got[2]["sub_orders"] == [{"sub_order_id": 1, "product_name": "fig", "price": 7}]
    # the UNNEST query of the docs
    unnested = sorted((oid, r["user_name"], r["address"], so["sub_order_id"], so["product_name"], so["price"])
                      for oid, r in got.items() for so in r["sub_orders"])
    assert unnested == [(1, "Alice", "Street 1", 1, "apple", 4), (1, "Alice", "Street 1", 2, "pear", 5),
                        (2, "Bob", "Street 2", 1, "fig", 7)]


def test_nested_update_without_key_appends(catalog: Catalog) -> None:
    t = _table(catalog, "t", [("k", INT), ("rows", pa.list_(SUB_ORDER))],
               {"merge-engine": "aggregation", "fields.rows.aggregate-function": "nested_update"})
    r1 = {"sub_order_id": 1, "product_name": "a", "price": 1}
    r2 = {"sub_order_id": 2, "product_name": "b", "price": 2}
    insert(t, (1, [r1]))
    insert(t, (1, [r2, r1]))
    assert t.read().to_pylist() == [{"k": 1, "rows": [r1, r2, r1]}]
    insert(t, (1, [r1]), kinds=["-U"])  # a retraction removes every equal row
    assert t.read().to_pylist() == [{"k": 1, "rows": [r2]}]


def test_first_row(catalog: Catalog) -> None:
    t = _table(catalog, "t", [("k", INT), ("v", pa.string())], {"merge-engine": "first-row"})
    insert(t, (1, "first"), (2, "a"))
    insert(t, (1, "second"), (3, "b"))
    insert(t, (1, "third"), (2, "c"))
    assert select(t) == [(1, "first"), (2, "a"), (3, "b")]
    with pytest.raises(DataError, match=r"(?s)db\.db/t.*first-row.*ignore-delete"):
        insert(t, (1, "x"), kinds=["-D"])
    with pytest.raises(DataError, match="first-row"):
        insert(t, (1, "x"), kinds=["-U"])


def test_first_row_ignore_delete(catalog: Catalog) -> None:
    t = _table(catalog, "t", [("k", INT), ("v", pa.string())],
               {"merge-engine": "first-row", "first-row.ignore-delete": "true"})
    insert(t, (1, "first"))
    insert(t, (1, "x"), (2, "y"), kinds=["-D", "-U"])
    insert(t, (1, "later"))
    assert select(t) == [(1, "first")]


def test_deduplicate_keeps_latest_and_deletes(catalog: Catalog) -> None:
    t = _table(catalog, "t", [("k", INT), ("v", pa.string())], {})
    insert(t, (1, "a"), (2, "b"))
    insert(t, (1, "c"))
    insert(t, (2, "b"), kinds=["-D"])
    assert select(t) == [(1, "c")]
