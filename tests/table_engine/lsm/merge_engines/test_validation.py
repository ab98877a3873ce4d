"""Merge-engine configuration checks at table creation / schema change, and retraction errors."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog, DataError, OptionError, SchemaError
from table_engine.schema_change import AddColumn, DropColumn, SetOption

INT = pa.int32()
ANY = pa.schema([("k", INT), ("i", INT), ("l", pa.int64()), ("f", pa.float64()), ("s", pa.string()),
                 ("b", pa.bool_()), ("bin", pa.binary()), ("arr", pa.list_(INT)), ("m", pa.map_(pa.string(), INT)),
                 ("rows", pa.list_(pa.struct([("id", INT), ("v", INT)]))), ("d", pa.date32()),
                 ("dec", pa.decimal128(10, 2))])


def _create(catalog: Catalog, options: dict[str, str], schema: pa.Schema = ANY, name: str = "t") -> None:
    catalog.create_table(f"db.{name}", schema, primary_keys=["k"], options={"bucket": "1", **options})


@pytest.mark.parametrize(("column", "function"), [
    ("s", "sum"), ("b", "product"), ("f", "count"), ("s", "count"), ("b", "max"), ("arr", "min"),
    ("i", "listagg"), ("i", "bool_and"), ("s", "bool_or"), ("s", "rbm32"), ("i", "rbm64"), ("s", "hll_sketch"),
    ("arr", "theta_sketch"), ("arr", "nested_update"), ("i", "collect"), ("arr", "merge_map"), ("bin", "max"),
])
def test_type_rules_rejected_at_creation(catalog: Catalog, column: str, function: str) -> None:
    with pytest.raises(SchemaError, match=f"column '{column}'.*'{function}'"):
        _create(catalog, {"merge-engine": "aggregation", f"fields.{column}.aggregate-function": function})
    assert not catalog.table_exists("db.t")


@pytest.mark.parametrize(("column", "function"), [
    ("i", "sum"), ("dec", "product"), ("l", "count"), ("s", "max"), ("d", "min"), ("s", "listagg"),
    ("b", "bool_and"), ("bin", "rbm32"), ("bin", "rbm64"), ("bin", "hll_sketch"), ("bin", "theta_sketch"),
    ("rows", "nested_update"), ("arr", "collect"), ("m", "merge_map"), ("arr", "first_value"),
    ("m", "first_not_null_value"), ("rows", "last_value"), ("bin", "last_non_null_value"),
])
def test_type_rules_accepted(catalog: Catalog, column: str, function: str) -> None:
    _create(catalog, {"merge-engine": "aggregation", f"fields.{column}.aggregate-function": function})


def test_unknown_function_and_default(catalog: Catalog) -> None:
    with pytest.raises(SchemaError, match="fields.i.aggregate-function.*'median'"):
        _create(catalog, {"merge-engine": "aggregation", "fields.i.aggregate-function": "median"})
    with pytest.raises(SchemaError, match="fields.default-aggregate-function.*column 's'.*'sum'"):
        _create(catalog, {"merge-engine": "aggregation", "fields.default-aggregate-function": "sum"})


def test_option_names_unknown_column(catalog: Catalog) -> None:
    with pytest.raises(SchemaError, match="fields.nope.aggregate-function.*'nope'"):
        _create(catalog, {"merge-engine": "aggregation", "fields.nope.aggregate-function": "sum"})
    with pytest.raises(SchemaError, match="'zz'"):
        _create(catalog, {"merge-engine": "partial-update", "fields.zz.sequence-group": "i"})


def test_first_row_rejects_sequence_field(catalog: Catalog) -> None:
    with pytest.raises(OptionError, match="first-row.*sequence.field"):
        _create(catalog, {"merge-engine": "first-row", "sequence.field": "i"})
    with pytest.raises(OptionError, match="first-row.*changelog-producer"):
        _create(catalog, {"merge-engine": "first-row", "changelog-producer": "input"})


def test_sequence_field_rules(catalog: Catalog) -> None:
    with pytest.raises(SchemaError, match="sequence.field 'x'"):
        _create(catalog, {"sequence.field": "x"})
    with pytest.raises(OptionError, match="'i' is listed twice"):
        _create(catalog, {"sequence.field": "i,i"})
    with pytest.raises(OptionError, match="'i' is a sequence.field"):
        _create(catalog, {"merge-engine": "aggregation", "sequence.field": "i",
                          "fields.i.aggregate-function": "sum"})


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"fields.i.aggregate-function": "sum"}, OptionError, "column 'i'.*'sum'.*sequence group"),
    ({"fields.default-aggregate-function": "sum", "fields.l.sequence-group": "i"}, OptionError,
     "column 'f'.*'sum'.*sequence group"),
    ({"fields.s.sequence-group": "i"}, SchemaError, "sequence field 's'.*STRING"),
    ({"fields.l.sequence-group": "k"}, SchemaError, "primary key"),
    ({"fields.l.sequence-group": "i", "fields.d.sequence-group": "i"}, OptionError, "two sequence groups"),
    ({"fields.l.sequence-group": "i", "fields.i.sequence-group": "f"}, OptionError, "'i'"),
    ({"partial-update.remove-record-on-delete": "true", "ignore-delete": "true"}, OptionError, "conflict"),
    ({"partial-update.remove-record-on-delete": "true", "fields.l.sequence-group": "i"}, OptionError,
     "sequence groups"),
    ({"partial-update.remove-record-on-sequence-group": "i", "fields.l.sequence-group": "i"}, OptionError,
     "not the sequence field"),
    ({"partial-update.remove-record-on-sequence-group": "l", "fields.l.sequence-group": "i",
      "partial-update.ignore-delete": "true"}, OptionError, "conflict"),
    ({"fields.l.sequence-group": "i", "fields.l.aggregate-function": "sum"}, OptionError, "orders a sequence"),
])
def test_partial_update_rules(catalog: Catalog, options: dict[str, str], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        _create(catalog, {"merge-engine": "partial-update", **options})


def test_partial_update_valid_configuration(catalog: Catalog) -> None:
    _create(catalog, {"merge-engine": "partial-update", "fields.l,d.sequence-group": "i,f",
                      "fields.i.aggregate-function": "sum", "fields.s.aggregate-function": "last_non_null_value",
                      "partial-update.remove-record-on-sequence-group": "d"})


def test_aggregation_conflicts_and_nested_options(catalog: Catalog) -> None:
    with pytest.raises(OptionError, match="ignore-retract"):
        _create(catalog, {"merge-engine": "aggregation", "aggregation.remove-record-on-delete": "true",
                          "fields.i.ignore-retract": "true"})
    with pytest.raises(SchemaError, match="nested-key.*'nope'"):
        _create(catalog, {"merge-engine": "aggregation", "fields.rows.aggregate-function": "nested_update",
                          "fields.rows.nested-key": "nope"})
    with pytest.raises(OptionError, match="nested-key-null-strategy"):
        _create(catalog, {"merge-engine": "aggregation", "fields.rows.aggregate-function": "nested_update",
                          "fields.rows.nested-key": "id", "fields.rows.nested-key-null-strategy": "drop"})


def test_schema_change_is_validated(catalog: Catalog) -> None:
    _create(catalog, {"merge-engine": "aggregation", "fields.i.aggregate-function": "sum"})
    t = catalog.get_table("db.t")
    with pytest.raises(SchemaError, match="column 's'.*'sum'"):
        t.alter(SetOption("fields.s.aggregate-function", "sum"))
    with pytest.raises(SchemaError, match="fields.i.aggregate-function.*'i'"):
        t.alter(DropColumn("i"))
    t.alter(AddColumn("total", pa.int64()), SetOption("fields.total.aggregate-function", "sum"))
    assert t.schema.options["fields.total.aggregate-function"] == "sum"


def test_rowkind_field_must_be_string(catalog: Catalog) -> None:
    with pytest.raises(SchemaError, match="rowkind.field 'i' must be a string"):
        _create(catalog, {"rowkind.field": "i"})


# ---------------------------------------------------------------------------------------------------- retractions

def _agg_table(catalog: Catalog, options: dict[str, str]) -> object:
    schema = pa.schema([("k", INT), ("v", pa.int64()), ("mx", INT)])
    return catalog.create_table("db.r", schema, primary_keys=["k"],
                                options={"bucket": "1", "merge-engine": "aggregation",
                                         "fields.v.aggregate-function": "sum", "fields.mx.aggregate-function": "max",
                                         **options})


def _rows(*rows: tuple[int, int | None, int | None]) -> pa.Table:
    return pa.table({"k": pa.array([r[0] for r in rows], INT), "v": pa.array([r[1] for r in rows], pa.int64()),
                     "mx": pa.array([r[2] for r in rows], INT)})


@pytest.mark.parametrize("kind", ["-U", "-D"])
def test_non_retractable_function_rejects_retraction(catalog: Catalog, kind: str) -> None:
    t = _agg_table(catalog, {})
    t.write(_rows((1, 10, 5)))  # type: ignore[attr-defined]
    with pytest.raises(DataError, match="(?s)column 'mx'.*'max'.*fields.mx.ignore-retract"):
        t.write(_rows((1, 3, 5)), row_kinds=[kind])  # type: ignore[attr-defined]


def test_ignore_retract_and_sum_retraction(catalog: Catalog) -> None:
    t = _agg_table(catalog, {"fields.mx.ignore-retract": "true"})
    t.write(_rows((1, 10, 5), (2, 1, 1)))  # type: ignore[attr-defined]
    t.write(_rows((1, 3, 9), (1, 4, 7)), row_kinds=["-U", "+U"])  # type: ignore[attr-defined]
    t.write(_rows((3, 5, 5)), row_kinds=["-D"])  # type: ignore[attr-defined]  # retraction only: invisible
    got = sorted(tuple(r.values()) for r in t.read().to_pylist())  # type: ignore[attr-defined]
    assert got == [(1, 11, 7), (2, 1, 1)]
    t.write(_rows((3, 8, 1)))  # type: ignore[attr-defined]  # the earlier -5 still applies
    got = sorted(tuple(r.values()) for r in t.read().to_pylist())  # type: ignore[attr-defined]
    assert got == [(1, 11, 7), (2, 1, 1), (3, 3, 1)]


def test_remove_record_on_delete(catalog: Catalog) -> None:
    t = _agg_table(catalog, {"aggregation.remove-record-on-delete": "true"})
    t.write(_rows((1, 10, 5), (2, 1, 1)))  # type: ignore[attr-defined]
    t.write(_rows((1, 10, 5)), row_kinds=["-D"])  # type: ignore[attr-defined]
    assert [r["k"] for r in t.read().to_pylist()] == [2]  # type: ignore[attr-defined]
    # -U is still a retraction: max cannot take it
    with pytest.raises(DataError, match="'max'"):
        t.write(_rows((2, 1, 1)), row_kinds=["-U"])  # type: ignore[attr-defined]
