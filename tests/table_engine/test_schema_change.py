"""Schema evolution: files written under old schemas are read by field id."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import OptionError, SchemaError
from table_engine.schema_change import AddColumn, DropColumn, RemoveOption, RenameColumn, SetOption, UpdateColumnType

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
