"""The object table's schema (Paimon's ``ObjectTable.SCHEMA``, 1.0-1.2, field for field), its options, what is
refused on an object table, and what the catalog does with ``type`` = ``object-table`` today (before the wiring)."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import OptionError, SchemaError
from table_engine.object_table import (
    ARROW_SCHEMA,
    FIELDS,
    OBJECT_LOCATION,
    TYPE,
    ObjectTableOptions,
    TableType,
    check_columns,
    validate_object_table,
)
from table_engine.object_table.options import REFUSED_OPTIONS, REGISTRY
from table_engine.object_table.schema import check_index_fields

#: ObjectTable.SCHEMA of apache/paimon release-1.0.0 .. release-1.2.0, as Java's schema file writes each field
JAVA_FIELDS = [
    {"id": 0, "name": "path", "type": "STRING NOT NULL"},
    {"id": 1, "name": "parent_path", "type": "STRING NOT NULL"},
    {"id": 2, "name": "name", "type": "STRING NOT NULL"},
    {"id": 3, "name": "length", "type": "BIGINT NOT NULL"},
    {"id": 4, "name": "mtime", "type": "TIMESTAMP(3) WITH LOCAL TIME ZONE"},
    {"id": 5, "name": "atime", "type": "TIMESTAMP(3) WITH LOCAL TIME ZONE"},
    {"id": 6, "name": "owner", "type": "STRING"},
    {"id": 7, "name": "generation", "type": "INT"},
    {"id": 8, "name": "content_type", "type": "STRING"},
    {"id": 9, "name": "storage_class", "type": "STRING"},
    {"id": 10, "name": "md5_hash", "type": "STRING"},
    {"id": 11, "name": "metadata_mtime", "type": "TIMESTAMP(3) WITH LOCAL TIME ZONE"},
    {"id": 12, "name": "metadata", "type": {"type": "MAP", "key": "STRING", "value": "STRING"}},
]


def test_fields_are_paimons_object_table_schema() -> None:
    assert [f.to_json() for f in FIELDS] == JAVA_FIELDS
    assert ARROW_SCHEMA.names == [f["name"] for f in JAVA_FIELDS]
    assert ARROW_SCHEMA.field("mtime").type == pa.timestamp("ms", tz="UTC")
    assert ARROW_SCHEMA.field("length").type == pa.int64() and not ARROW_SCHEMA.field("length").nullable
    assert ARROW_SCHEMA.field("metadata").type == pa.map_(pa.string(), pa.string())


def test_options_are_typed_with_paimons_keys() -> None:
    assert TYPE.key == "type" and TYPE.default is TableType.TABLE
    assert OBJECT_LOCATION.key == "object-location" and not OBJECT_LOCATION.has_default
    opts = ObjectTableOptions({"type": "OBJECT-TABLE", "object-location": " s3://b/p "})
    assert opts.type() is TableType.OBJECT_TABLE and opts.is_object_table()
    assert opts.object_location() == "s3://b/p"
    assert ObjectTableOptions({}).type() is TableType.TABLE and ObjectTableOptions({}).object_location() is None
    with pytest.raises(OptionError, match="'type'"):
        ObjectTableOptions({"type": "objects"}).type()
    assert any("`object-location`" in line for line in REGISTRY.render_sections())


def test_check_columns_accepts_none_or_some_of_paimons() -> None:
    assert check_columns(None) == ARROW_SCHEMA
    assert check_columns(pa.schema([])) == ARROW_SCHEMA
    assert check_columns(pa.schema([pa.field("name", pa.string()), ("length", pa.int64())])) == ARROW_SCHEMA
    with pytest.raises(SchemaError, match=r"Schema of Object Table can be empty.*a \(not a column.*length string"):
        check_columns(pa.schema([("a", pa.int32()), ("length", pa.string())]))


def test_validate_object_table_requires_type_and_location() -> None:
    ok = validate_object_table({"type": "object-table", "object-location": "/data"})
    assert ok.object_location() == "/data"
    with pytest.raises(OptionError, match="^Object table should have object-location option.$"):
        validate_object_table({"type": "object-table"})
    with pytest.raises(OptionError, match="^'type' = 'table'"):
        validate_object_table({"object-location": "/data"})


def test_validate_object_table_refuses_everything_else_by_name_in_one_error() -> None:
    options = {"type": "object-table", "object-location": "/data", "bucket": "4",
               **dict.fromkeys(REFUSED_OPTIONS, "x")}
    with pytest.raises(OptionError) as err:
        validate_object_table(options, primary_keys=["path"], partition_keys=["name"])
    message = str(err.value)
    assert message.startswith(f"{len(REFUSED_OPTIONS) + 3} problems")
    for name in (*REFUSED_OPTIONS, "bucket", "primary keys ['path']", "partition keys ['name']"):
        assert name in message
    validate_object_table({"type": "object-table", "object-location": "/data", "bucket": "-1"})


def test_check_index_fields_of_a_catalog_table(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path))
    table = catalog.create_table("db.objects", ARROW_SCHEMA)
    check_index_fields(table.schema.fields, table.identifier)  # the map key is NOT NULL from Arrow: tolerated
    other = catalog.create_table("db.other", pa.schema([("path", pa.string())]))
    with pytest.raises(SchemaError, match="db.other is not an object table: its columns are"):
        check_index_fields(other.schema.fields, other.identifier)
    wrong = catalog.create_table("db.wrong", ARROW_SCHEMA.set(3, pa.field("length", pa.int32(), nullable=False)))
    with pytest.raises(SchemaError, match=r"length INT NOT NULL \(expected BIGINT NOT NULL\)"):
        check_index_fields(wrong.schema.fields, wrong.identifier)
