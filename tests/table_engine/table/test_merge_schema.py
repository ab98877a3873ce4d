"""``write.merge-schema`` and ``write.merge-schema.explicit-cast`` (Paimon's merge of a write's schema into the
table's): new columns added nullable at the end, wider types widened, narrower data cast, anything else one line
naming the column and both types with the table left byte for byte; the table's option or the write command's."""

from __future__ import annotations

import json
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import main
from table_engine.errors import SchemaError, SchemaMismatchError, TableEngineError
from table_engine.schema_change import AddColumn, UpdateColumnType, merge_schema_changes
from table_engine.table import Table
from table_engine.types import parse_type
from tests.table_engine.test_bad_input import warehouse_state

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("n", pa.int32()), ("s", pa.string())])
MERGE = {"write.merge-schema": "true"}


def _table(catalog: Catalog, options: dict[str, str] | None = None, pk: bool = True) -> Table:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"] if pk else [],
                             options={**({"bucket": "1"} if pk else {}), **(options or {})})
    t.write(pa.table({"id": [1], "n": pa.array([1], pa.int32()), "s": ["a"]}, schema=SCHEMA))
    return t


def test_the_changes_paimon_would_make() -> None:
    from table_engine.format.schema_file import new_schema
    from table_engine.types import fields_from_arrow_schema

    fields, highest = fields_from_arrow_schema(SCHEMA)
    schema = new_schema(0, fields, [], ["id"], {"bucket": "1"}, highest_field_id=highest)
    data = pa.schema([("s", pa.string()), ("x", pa.float64()), ("n", pa.int64()), ("id", pa.int32()),
                      ("y", pa.list_(pa.int32()))])
    assert merge_schema_changes(schema, data, explicit_cast=False) == [
        AddColumn("x", pa.float64()), UpdateColumnType("n", parse_type("BIGINT")), AddColumn("y", pa.list_(pa.int32()))]
    same = pa.schema([("id", pa.int64()), ("n", pa.int16()), ("s", pa.large_string())])
    assert merge_schema_changes(schema, same, explicit_cast=False) == []  # narrower n: cast by the write
    with pytest.raises(SchemaError, match="column 'n' is INT in the table and STRING in the data, not a widening"):
        merge_schema_changes(schema, pa.schema([("n", pa.string())]), explicit_cast=False)
    with pytest.raises(SchemaError, match="key column 'id' is BIGINT in the table and DOUBLE in the data"):
        merge_schema_changes(schema, pa.schema([("id", pa.float64())]), explicit_cast=False)
    assert merge_schema_changes(schema, pa.schema([("n", pa.string()), ("id", pa.float64())]),
                                explicit_cast=True) == []


@pytest.mark.parametrize("pk", [True, False], ids=["primary-key", "append"])
def test_new_columns_are_added_at_the_end_and_wider_types_widened(catalog: Catalog, pk: bool) -> None:
    t = _table(catalog, MERGE, pk)
    t.write(pa.table({"x": ["new"], "id": [2], "n": pa.array([2**40], pa.int64()), "s": ["b"]}))
    t = catalog.get_table("db.t")
    assert [(f.name, str(f.type)) for f in t.schema.fields] == [
        ("id", "BIGINT NOT NULL"), ("n", "BIGINT"), ("s", "STRING"), ("x", "STRING")]
    assert t.schema.id == 1
    assert t.read().sort_by("id").to_pylist() == [{"id": 1, "n": 1, "s": "a", "x": None},
                                                  {"id": 2, "n": 2**40, "s": "b", "x": "new"}]
    t.write(pa.table({"id": [3], "n": pa.array([3], pa.int8()), "s": ["c"], "x": ["z"]}))  # narrower: cast
    assert catalog.get_table("db.t").schema.id == 1 and catalog.get_table("db.t").read().num_rows == 3


def test_without_the_option_new_columns_are_refused(catalog: Catalog, warehouse: str) -> None:
    t = _table(catalog)
    before = warehouse_state(warehouse)
    with pytest.raises(SchemaMismatchError, match=r"unknown \['x'\]"):
        t.write(pa.table({"id": [2], "n": pa.array([2], pa.int32()), "s": ["b"], "x": [1]}))
    assert warehouse_state(warehouse) == before


@pytest.mark.parametrize(("data", "options", "error", "text"), [
    ({"id": [2], "n": ["two"], "s": ["b"], "x": [1]}, MERGE, SchemaError,
     "write.merge-schema: column 'n' is INT in the table and STRING in the data, not a widening of it"),
    ({"id": [2], "n": ["two"], "s": ["b"], "x": [1]}, {**MERGE, "write.merge-schema.explicit-cast": "true"},
     SchemaMismatchError, "write.merge-schema: column 'n': cannot write string into int32"),
    ({"id": [2.5], "n": [2], "s": ["b"], "x": [1]}, MERGE, SchemaError, "key column 'id' is BIGINT in the table"),
])
def test_a_write_that_cannot_merge_is_one_line_and_changes_nothing(catalog: Catalog, warehouse: str,
                                                                    data: dict[str, list[object]],
                                                                    options: dict[str, str],
                                                                    error: type[TableEngineError], text: str) -> None:
    t = _table(catalog, options)
    before = warehouse_state(warehouse)
    with pytest.raises(error, match=text) as info:
        t.write(pa.table(data))
    assert "\n" not in str(info.value)
    assert warehouse_state(warehouse) == before


def test_explicit_cast_casts_the_data_to_the_tables_type(catalog: Catalog) -> None:
    t = _table(catalog, {**MERGE, "write.merge-schema.explicit-cast": "true"})
    t.write(pa.table({"id": [2], "n": ["22"], "s": ["b"], "x": [True]}))
    t = catalog.get_table("db.t")
    assert str(t.schema.field("n").type) == "INT" and str(t.schema.field("x").type) == "BOOLEAN"
    assert t.read().sort_by("id").to_pylist()[1] == {"id": 2, "n": 22, "s": "b", "x": True}


def test_the_write_command_takes_merge_schema_as_a_write_option(catalog: Catalog, warehouse: str,
                                                                tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _table(catalog)
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": [5], "n": pa.array([5], pa.int64()), "s": ["e"], "extra": [1.5]}),
                   src / "part-0.parquet")
    head = ["write", "--warehouse", warehouse, "--table", "db.t", "--source", str(src)]
    before = warehouse_state(warehouse)
    assert main(head) == 1  # the table's columns, as before
    assert "unknown ['extra']" in capsys.readouterr().err
    assert warehouse_state(warehouse) == before
    assert main([*head, "--option", "write.merge-schema=true"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["status"] == "ok" and line["rows"] == 1
    t = catalog.get_table("db.t")
    assert t.schema.field_names() == ["id", "n", "s", "extra"] and str(t.schema.field("n").type) == "BIGINT"
    assert "write.merge-schema" not in t.schema.options  # a write option, not stored
    assert t.read().sort_by("id").to_pylist() == [{"id": 1, "n": 1, "s": "a", "extra": None},
                                                  {"id": 5, "n": 5, "s": "e", "extra": 1.5}]
