"""Schema evolution: files written under old schemas are read by field id."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import OptionError, SchemaError
from table_engine.schema_change import (
    AddColumn,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int32()), ("b", pa.string())])


@pytest.mark.parametrize("pk", [True, False])
def test_add_rename_drop_widen(catalog: Catalog, pk: bool) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"] if pk else [], options={"bucket": "2"}
                             if pk else {})
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "a": pa.array([10, 20], pa.int32()), "b": ["x", "y"]}))
    s = t.alter(AddColumn("c", pa.float64()), RenameColumn("b", "bee"), UpdateColumnType("a", pa.int64()))
    assert s.id == 1
    assert [f.name for f in s.fields] == ["id", "a", "bee", "c"]
    got = t.read().sort_by("id")
    assert got.schema.field("a").type == pa.int64()
    assert got.to_pylist() == [{"id": 1, "a": 10, "bee": "x", "c": None}, {"id": 2, "a": 20, "bee": "y", "c": None}]
    t.write(pa.table({"id": pa.array([2, 3], pa.int64()), "a": pa.array([2**40, 30], pa.int64()),
                      "bee": ["Y", "z"], "c": [2.5, 3.5]}))
    t.alter(DropColumn("bee"))
    # a new column with a dropped column's name is a new field: old values do not reappear
    t.alter(AddColumn("bee", pa.string()))
    got = catalog.get_table("db.t").read().sort_by([("id", "ascending"), ("a", "ascending")])
    rows = got.to_pylist()
    assert all(r["bee"] is None for r in rows)
    if pk:
        assert [(r["id"], r["a"], r["c"]) for r in rows] == [(1, 10, None), (2, 2**40, 2.5), (3, 30, 3.5)]
    assert catalog.get_table("db.t").read(snapshot_id=1).num_rows == 2


def test_invalid_changes_are_rejected(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write(pa.table({"id": pa.array([1], pa.int64()), "a": pa.array([1], pa.int32()), "b": ["x"]}))
    with pytest.raises(SchemaError, match="'a' from INT to SMALLINT"):
        t.alter(UpdateColumnType("a", pa.int16()))
    with pytest.raises(SchemaError, match="key column 'id'"):
        t.alter(DropColumn("id"))
    with pytest.raises(SchemaError, match="'nope' does not exist"):
        t.alter(RenameColumn("nope", "x"))
    with pytest.raises(SchemaError, match="'bucket' cannot be changed"):
        t.alter(SetOption("bucket", "4"))
    with pytest.raises(OptionError, match="snapshot.num-retained.min"):
        t.alter(SetOption("snapshot.num-retained.min", "many"))
    t.alter(SetOption("snapshot.num-retained.min", "3"))
    assert t.options.snapshot_num_retained_min() == 3
    t.alter(RemoveOption("snapshot.num-retained.min"))
    assert t.options.snapshot_num_retained_min() == 10
    assert t.schema.id == 2


# ---- positions, comments, nullability (Paimon's updateColumnPosition, updateColumnComment, updateComment,
# updateColumnNullability) ------------------------------------------------------------------------------------------
def _names(t: Any) -> list[str]:
    return [f.name for f in t.schema.fields]


def test_add_a_column_first_after_or_before_another(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA)
    t.write(pa.table({"id": pa.array([1], pa.int64()), "a": pa.array([1], pa.int32()), "b": ["x"]}))
    t.alter(AddColumn("f", pa.int64(), move=Move("FIRST")),
            AddColumn("x", pa.string(), "after a", Move("AFTER", "a")),
            AddColumn("y", pa.string(), move=Move("BEFORE", "id")), AddColumn("z", pa.string(), move=Move("LAST")))
    assert _names(t) == ["f", "y", "id", "a", "x", "b", "z"]
    assert t.schema.field("x").description == "after a"
    assert [f.id for f in t.schema.fields] == [3, 5, 0, 1, 4, 2, 6]
    got = catalog.get_table("db.t").read()
    assert got.column_names == _names(t)
    assert got.to_pylist() == [{"y": None, "f": None, "id": 1, "a": 1, "x": None, "b": "x", "z": None}]


@pytest.mark.parametrize(("move", "expected"), [
    (Move("FIRST"), ["b", "id", "a", "c"]),
    (Move("LAST"), ["id", "a", "c", "b"]),
    (Move("AFTER", "id"), ["id", "b", "a", "c"]),
    (Move("AFTER", "c"), ["id", "a", "c", "b"]),
    (Move("BEFORE", "id"), ["b", "id", "a", "c"]),
    (Move("BEFORE", "c"), ["id", "a", "b", "c"]),  # where it is: Paimon moves it nowhere, no error
])
def test_move_a_column_as_paimon_does(catalog: Catalog, move: Move, expected: list[str]) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": pa.array([1], pa.int64()), "a": pa.array([1], pa.int32()), "b": ["x"]}))
    t.alter(AddColumn("c", pa.int64()))
    t.alter(UpdateColumnPosition("b", move))
    assert _names(t) == expected
    t.write(pa.table({"id": pa.array([2], pa.int64()), "a": pa.array([2], pa.int32()), "b": ["y"],
                      "c": pa.array([7], pa.int64())}))
    got = catalog.get_table("db.t").read().sort_by("id")
    assert got.column_names == expected
    assert got.to_pylist() == [{"id": 1, "a": 1, "b": "x", "c": None}, {"id": 2, "a": 2, "b": "y", "c": 7}]


def test_comments_of_columns_and_the_table(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA)
    t.alter(UpdateColumnComment("a", "the a"), UpdateComment("orders by day"))
    t = catalog.get_table("db.t")
    assert t.schema.field("a").description == "the a" and t.schema.comment == "orders by day"
    t.alter(UpdateColumnComment("a", None), UpdateComment(None))
    assert catalog.get_table("db.t").schema.field("a").description is None
    assert catalog.get_table("db.t").schema.comment is None


def test_nullability_only_to_nullable_and_never_for_a_primary_key(catalog: Catalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string(), nullable=False),
                        pa.field("w", pa.string())])
    t = catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    t.alter(UpdateColumnNullability("v", True))
    assert t.schema.field("v").type.nullable
    with pytest.raises(SchemaError, match="primary key column 'id' nullable"):
        t.alter(UpdateColumnNullability("id", True))
    with pytest.raises(SchemaError, match="cannot make column 'w' NOT NULL"):
        t.alter(UpdateColumnNullability("w", False))
    t.write(pa.table({"id": pa.array([1], pa.int64()), "v": [None], "w": ["x"]}))
    assert catalog.get_table("db.t").read().to_pylist() == [{"id": 1, "v": None, "w": "x"}]


@pytest.mark.parametrize(("change", "message"), [
    (UpdateColumnPosition("nope", Move("FIRST")), "'nope' does not exist"),
    (UpdateColumnPosition("a", Move("AFTER", "nope")), "'nope' does not exist"),
    (UpdateColumnPosition("id", Move("FIRST")), "'id' FIRST: it is first already"),
    (UpdateColumnPosition("b", Move("LAST")), "'b' LAST: it is last already"),
    (UpdateColumnPosition("a", Move("AFTER", "a")), "'a' AFTER itself"),
    (AddColumn("c", pa.int64(), move=Move("AFTER", "nope")), "'nope' does not exist"),
    (UpdateColumnComment("nope", "x"), "'nope' does not exist"),
    (UpdateColumnNullability("nope", True), "'nope' does not exist"),
])
def test_bad_moves_comments_and_nullability_change_nothing(catalog: Catalog, warehouse: str, change: Any,
                                                            message: str) -> None:
    from tests.table_engine.test_bad_input import warehouse_state

    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": pa.array([1], pa.int64()), "a": pa.array([1], pa.int32()), "b": ["x"]}))
    before = warehouse_state(warehouse)
    with pytest.raises(SchemaError, match=message) as info:
        t.alter(UpdateComment("ok"), change)  # all or none: the good change is not committed either
    assert "\n" not in str(info.value)
    assert warehouse_state(warehouse) == before


def test_a_move_needs_a_reference_only_after_or_before() -> None:
    with pytest.raises(SchemaError, match="AFTER needs reference column"):
        Move("AFTER")
    with pytest.raises(SchemaError, match="FIRST takes no reference column"):
        Move("FIRST", "a")
    with pytest.raises(SchemaError, match="unknown column position 'MIDDLE'"):
        Move("MIDDLE")  # type: ignore[arg-type]


@st.composite
def _moves(draw: st.DrawFn) -> list[UpdateColumnPosition]:
    names = ["id", "a", "b", "c", "d"]
    out = []
    for _ in range(draw(st.integers(1, 6))):
        name = draw(st.sampled_from(names))
        kind = draw(st.sampled_from(["FIRST", "LAST", "AFTER", "BEFORE"]))
        ref = draw(st.sampled_from([n for n in names if n != name])) if kind in ("AFTER", "BEFORE") else None
        out.append(UpdateColumnPosition(name, Move(kind, ref)))
    return out


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moves=_moves())
def test_moves_place_the_column_where_asked_and_keep_every_value(tmp_path_factory: pytest.TempPathFactory,
                                                                 moves: list[UpdateColumnPosition]) -> None:
    """Each move puts its column first, last, right after or right before its reference and keeps the others'
    order; the rows read the same values by name after any sequence of moves (one schema per move)."""
    catalog = Catalog(str(tmp_path_factory.mktemp("moves")))
    schema = pa.schema([("id", pa.int64()), ("a", pa.int32()), ("b", pa.string()), ("c", pa.float64()),
                        ("d", pa.bool_())])
    t = catalog.create_table("db.t", schema)
    row = {"id": 1, "a": 2, "b": "x", "c": 0.5, "d": True}
    t.write(pa.Table.from_pylist([row], schema=schema))
    names = list(schema.names)
    for move in moves:
        others = [n for n in names if n != move.name]
        target = {"FIRST": 0, "LAST": len(others)}.get(move.move.type)
        if target is None:
            ref = others.index(str(move.move.reference))
            target = ref + 1 if move.move.type == "AFTER" else ref
        expected = [*others[:target], move.name, *others[target:]]
        if move.move.type in ("FIRST", "LAST") and expected == names:
            with pytest.raises(SchemaError, match="already"):  # Paimon: a column moved onto itself
                t.alter(move)
            continue
        t.alter(move)
        names = expected
        assert [f.name for f in t.schema.fields] == names
    got = catalog.get_table("db.t").read()
    assert got.column_names == names and got.to_pylist() == [row]


def test_a_rename_renames_the_column_in_the_options_naming_it(catalog: Catalog) -> None:
    """Paimon's applyRenameColumnsToOptions: bucket-key and sequence.field values, fields.<column>.<property> keys,
    sequence-group keys and values."""
    schema = pa.schema([("k", pa.int64()), ("s", pa.int64()), ("v", pa.int64()), ("w", pa.int64()),
                        ("g", pa.int64())])
    t = catalog.create_table("db.agg", schema, primary_keys=["k"], options={
        "bucket": "2", "bucket-key": "k", "sequence.field": "s", "merge-engine": "aggregation",
        "fields.v.aggregate-function": "sum", "fields.w.ignore-retract": "true"})
    t.write(pa.table({"k": [1], "s": [1], "v": [5], "w": [1], "g": [0]}))
    t.alter(RenameColumn("s", "seq"), RenameColumn("v", "total"), RenameColumn("total", "amount"))
    options = dict(catalog.get_table("db.agg").schema.options)
    assert options["sequence.field"] == "seq" and options["bucket-key"] == "k"
    assert options["fields.amount.aggregate-function"] == "sum" and "fields.v.aggregate-function" not in options
    t = catalog.get_table("db.agg")
    t.write(pa.table({"k": [1], "seq": [2], "amount": [7], "w": [1], "g": [0]}))
    assert catalog.get_table("db.agg").read().to_pylist() == [{"k": 1, "seq": 2, "amount": 12, "w": 1, "g": 0}]
    p = catalog.create_table("db.pu", schema, primary_keys=["k"], options={
        "bucket": "1", "merge-engine": "partial-update", "fields.g.sequence-group": "v,w"})
    p.alter(RenameColumn("w", "w2"), RenameColumn("g", "g2"))
    assert catalog.get_table("db.pu").schema.options["fields.g2.sequence-group"] == "v,w2"
