"""Table types through the catalogs (issue 39): Paimon's ``type`` option decides what a catalog creates and what the
capability gate lets an operation do. ``table`` and ``materialized-table`` are data tables; ``object-table`` is an
object table (docs/object-tables.md); ``format-table`` is held only by a Hive catalog (docs/format-tables.md); every
other value is refused by name, on create and on open, never read as a plain table."""

from __future__ import annotations

import json
import os
import pathlib
import time
import uuid
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest

from table_engine.catalog import Catalog, create_catalog
from table_engine.errors import (
    OptionError,
    SchemaError,
    TableNotExistError,
    UnsupportedError,
    UnsupportedTableFeatureError,
)
from table_engine.format.schema_file import TableSchema, latest_schema
from table_engine.format_table.catalog import format_table_from_schema, format_table_schema
from table_engine.io.file_io import LocalFileIO, file_io_for
from table_engine.object_table import FIELDS, refresh_object_table
from table_engine.table import Table
from tests.table_engine.catalog.conftest import JdbcDatabase
from tests.table_engine.catalog.fake_metastore import FakeMetastore

SCHEMA = pa.schema([("id", pa.int64()), ("msg", pa.string())])


def _snapshot_of(warehouse: str) -> dict[str, bytes]:
    root = pathlib.Path(warehouse)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()} if root.exists() else {}


# ---- the fail-open bug: `type` used to be read as a plain table -------------------------------------------------

@pytest.mark.parametrize("kind", ["lance-table", "iceberg-table", "bogus", "format-table"])
def test_create_refuses_types_that_are_not_data_or_object_tables(catalog: Catalog, warehouse: str,
                                                                 kind: str) -> None:
    before = _snapshot_of(warehouse)
    with pytest.raises((UnsupportedError, OptionError), match=f"'type'.*'{kind}'|'{kind}' for option 'type'"):
        catalog.create_table("db.t", SCHEMA, options={"type": kind})
    assert _snapshot_of(warehouse) == before and not catalog.table_exists("db.t")


def test_data_table_types_are_data_tables(catalog: Catalog) -> None:
    for name, kind in (("plain", "table"), ("mat", "materialized-table"), ("mixed", "Materialized-Table")):
        table = catalog.create_table(f"db.{name}", SCHEMA, options={"type": kind})
        table.write(pa.table({"id": [1], "msg": ["a"]}))
        assert catalog.get_table(f"db.{name}").read().num_rows == 1


@pytest.mark.parametrize("kind", ["lance-table", "iceberg-table", "format-table", "bogus"])
def test_the_gate_refuses_a_table_of_another_type_on_open(catalog: Catalog, warehouse: str, kind: str) -> None:
    """A table another writer made with such a ``type`` is never read or written as a plain table."""
    catalog.create_table("db.t", SCHEMA).write(pa.table({"id": [1], "msg": ["a"]}))
    path = pathlib.Path(catalog.table_path("db.t")) / "schema" / "schema-0"
    schema = json.loads(path.read_text())
    schema["options"]["type"] = kind
    path.write_text(json.dumps(schema))
    table = catalog.get_table("db.t")
    for op in (table.read, lambda: table.write(pa.table({"id": [2], "msg": ["b"]})), table.expire_snapshots):
        with pytest.raises(UnsupportedTableFeatureError, match=f"option 'type' = '{kind}'"):
            op()
    assert table.latest_snapshot_id() == 1


# ---- object tables ----------------------------------------------------------------------------------------------

def _put(root: pathlib.Path, name: str, data: bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _expected_local(root: pathlib.Path) -> list[tuple[str, str, int, int]]:
    """(path, name, length, mtime ms) of every file below ``root``, as the index must list them."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out.append((f"file:{p}", p.name, st.st_size, st.st_mtime_ns // 1_000_000))
    return sorted(out)


def _listed(table: Table) -> list[tuple[str, str, int, int]]:
    rows = table.read(columns=["path", "name", "length", "mtime"]).to_pylist()
    return sorted((r["path"], r["name"], r["length"], int(r["mtime"].timestamp() * 1000)) for r in rows)


def _object_table(catalog: Catalog, location: str, schema: pa.Schema | None = None) -> Table:
    return catalog.create_table("db.objects", schema if schema is not None else pa.schema([]),
                                options={"type": "object-table", "object-location": location})


def test_create_an_object_table_with_paimons_fields(catalog: Catalog, tmp_path: pathlib.Path) -> None:
    table = _object_table(catalog, str(tmp_path / "objects"))
    assert tuple(table.schema.fields) == FIELDS  # the nullable map key Arrow cannot declare
    assert table.schema.options["type"] == "object-table"
    some = catalog.create_table("db.some", pa.schema([("path", pa.string()), ("length", pa.int64())]),
                                options={"type": "object-table", "object-location": "/x"})
    assert tuple(some.schema.fields) == FIELDS
    with pytest.raises(SchemaError, match="Schema of Object Table"):
        catalog.create_table("db.bad", pa.schema([("x", pa.int32())]),
                             options={"type": "object-table", "object-location": "/x"})
    with pytest.raises(OptionError, match="primary keys"):
        catalog.create_table("db.bad", pa.schema([]), primary_keys=["path"],
                             options={"type": "object-table", "object-location": "/x"})
    with pytest.raises(SchemaError, match="no columns"):
        catalog.create_table("db.bad", pa.schema([]))  # an empty schema is for object tables only
    assert not catalog.table_exists("db.bad")


def test_object_table_gate_refresh_and_maintenance(catalog: Catalog, tmp_path: pathlib.Path) -> None:
    loc = tmp_path / "objects"
    _put(loc, "a.txt", b"hello")
    _put(loc, "img/2024/b.jpg", b"b" * 300)
    _put(loc, "img/c.png", b"")
    table = _object_table(catalog, str(loc))
    result = refresh_object_table(table)
    assert (result.file_number, result.total_bytes, result.snapshot_id) == (3, 305, 1)
    opened = catalog.get_table("db.objects")
    assert _listed(opened) == _expected_local(loc)

    # add, change and delete objects; refresh again
    time.sleep(0.01)
    _put(loc, "new/d.bin", b"dd")
    _put(loc, "img/c.png", b"now 12 bytes")
    os.remove(loc / "a.txt")
    assert refresh_object_table(opened).snapshot_id == 2
    assert _listed(catalog.get_table("db.objects")) == _expected_local(loc)

    # writes, commits, row-level and schema changes: Paimon's refusal
    for op in (lambda: opened.write(pa.table({"path": ["x"]})), lambda: opened.new_commit(), opened.alter,
               lambda: opened.new_write()):
        with pytest.raises(UnsupportedTableFeatureError, match="Object table does not support Write."):
            op()
    # reads at an older snapshot, tags, expiry
    assert len(opened.read(snapshot_id=1)) == 3
    opened.create_tag("first", 1)
    assert opened.list_tags() == ["first"]
    opened.expire_snapshots(retain_min=1, retain_max=1)
    assert opened.latest_snapshot_id() == 2 and len(opened.read()) == 3


def test_object_table_through_jdbc(jdbc_db: JdbcDatabase, tmp_path: pathlib.Path) -> None:
    catalog = create_catalog(jdbc_db.warehouse, {"metastore": "jdbc", **jdbc_db.options})
    try:
        loc = tmp_path / "objects"
        _put(loc, "x/y.bin", b"xyz")
        table = _object_table(catalog, str(loc))
        assert catalog.list_tables("db") == ["objects"]
        assert refresh_object_table(catalog.get_table("db.objects")).file_number == 1
        assert _listed(catalog.get_table("db.objects")) == _expected_local(loc)
        assert tuple(table.schema.fields) == FIELDS
        with pytest.raises(UnsupportedError, match="jdbc catalog does not support format tables"):
            catalog.create_table("db.f", SCHEMA, options={"type": "format-table", "file.format": "csv"})
    finally:
        catalog.close()


def test_object_table_on_s3(s3_server: object, s3_options: dict[str, str], tmp_path: pathlib.Path) -> None:
    """An S3 location listed with the catalog's s3.* options; the index equals the bucket's listing."""
    bucket = s3_server.new_bucket()  # type: ignore[attr-defined]
    location = f"s3://{bucket}/{uuid.uuid4().hex}/objects"
    fio = file_io_for(location, s3_options)
    for name, data in {"a.txt": b"aaa", "img/2024/b.jpg": b"b" * 50, "img/c.png": b""}.items():
        fio.write_bytes(f"{location}/{name}", data)
    catalog = Catalog(str(tmp_path / "warehouse"), s3_options)  # a local warehouse, an S3 location
    table = _object_table(catalog, location)
    objects_io = catalog.object_file_io(location)  # the catalog's s3.* options (Java's objectFileIO)
    assert refresh_object_table(table, file_io=objects_io).file_number == 3

    def expected() -> list[tuple[str, str, int, int]]:
        return sorted((s.path, s.path.rsplit("/", 1)[-1], s.size, s.mtime_millis) for s in fio.walk(location)
                      if not s.path.endswith("/.keep"))

    assert _listed(catalog.get_table("db.objects")) == expected()
    fio.delete(f"{location}/a.txt")
    fio.write_bytes(f"{location}/new/d", b"d")
    assert refresh_object_table(catalog.get_table("db.objects"), file_io=objects_io).file_number == 3
    assert _listed(catalog.get_table("db.objects")) == expected()
    assert latest_schema(catalog.file_io, table.path) is not None


def test_refresh_object_table_command(warehouse: str, tmp_path: pathlib.Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The command (CLI and run_command, which the Spark application's driver runs too): its result fields, its
    snapshot properties; a table that is not an object table and a missing location are refused, nothing written."""
    from table_engine.cli import main
    from table_engine.ops import RefreshObjectTable
    from table_engine.ops.run import run_command

    loc = tmp_path / "objects"
    _put(loc, "a/b.txt", b"12345")
    catalog = Catalog(warehouse)
    _object_table(catalog, str(loc))
    capsys.readouterr()
    assert main(["refresh-object-table", "--warehouse", warehouse, "--table", "db.objects",
                 "--snapshot-property", "airflow.run-id=r1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {k: out[k] for k in ("file_number", "total_bytes", "snapshot_id", "location")} == {
        "file_number": 1, "total_bytes": 5, "snapshot_id": 1, "location": f"file:{loc}"}
    table = catalog.get_table("db.objects")
    assert table.snapshot(1).properties == {"airflow.run-id": "r1"}
    assert _listed(table) == _expected_local(loc)

    catalog.create_table("db.plain", SCHEMA)
    with pytest.raises(OptionError, match="db.plain is not an object table"):
        run_command(RefreshObjectTable(warehouse=warehouse, table="db.plain"))
    catalog.create_table("db.gone", pa.schema([]), options={"type": "object-table",
                                                             "object-location": str(tmp_path / "missing")})
    with pytest.raises(OptionError, match="does not exist"):
        run_command(RefreshObjectTable(warehouse=warehouse, table="db.gone"))
    assert catalog.get_table("db.gone").latest_snapshot_id() is None


# ---- format tables ----------------------------------------------------------------------------------------------

FORMAT_SCHEMA = pa.schema([("id", pa.int64()), ("msg", pa.string()), ("dt", pa.string())])
FORMAT_ROWS = pa.table({"id": [1, 2, 3], "msg": ["a,b", None, "c"], "dt": ["2025-01-01", "2025-01-02", "2025-01-01"]},
                       schema=FORMAT_SCHEMA)


def test_filesystem_and_jdbc_catalogs_hold_no_format_tables(catalog: Catalog, warehouse: str,
                                                           tmp_path: pathlib.Path) -> None:
    """As Paimon's: ``AbstractCatalog.createFormatTable`` refuses ("... currently does not support format table")."""
    before = _snapshot_of(warehouse)
    with pytest.raises(UnsupportedError, match="filesystem catalog does not support format tables"):
        catalog.create_format_table("db.f", FORMAT_SCHEMA, ["dt"], {"file.format": "csv"})
    with pytest.raises(TableNotExistError, match="holds no format tables"):
        catalog.get_format_table("db.f")
    assert _snapshot_of(warehouse) == before
    jdbc = create_catalog(str(tmp_path / "w2"), {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'c.db'}"})
    try:
        with pytest.raises(UnsupportedError, match="jdbc catalog does not support format tables"):
            jdbc.create_format_table("db.f", FORMAT_SCHEMA, ["dt"], {"file.format": "parquet"})
    finally:
        jdbc.close()


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "orc"])
def test_hive_format_table_registration_round_trips(fmt: str, tmp_path: pathlib.Path) -> None:
    """The Hive table a format table is registered as (HiveCatalog.createHiveFormatTable) reads back as the same
    definition (HiveTableUtils.tryToFormatSchema); the FormatTable of it reads what was written. No server: the
    Thrift structs only."""
    from table_engine.catalog.hive import mapping

    options = {"file.format": fmt, **({"csv.field-delimiter": ";"} if fmt == "csv" else {})}
    ts = format_table_schema(FORMAT_SCHEMA, ["dt"], options, "events")
    location = str(tmp_path / "f")
    t = mapping.format_table("db", "f", location, ts, owner="me", now=1)
    serde, input_format, output_format = mapping.FORMAT_STORAGE[fmt]
    assert (t.sd.serdeInfo.serializationLib, t.sd.inputFormat, t.sd.outputFormat) == (serde, input_format,
                                                                                     output_format)
    assert [c.name for c in t.sd.cols] == ["id", "msg"] and [k.name for k in t.partitionKeys] == ["dt"]
    assert t.parameters["table_type"] == fmt.upper() and t.parameters["type"] == "format-table"
    assert t.sd.serdeInfo.parameters == ({"field.delim": ";"} if fmt == "csv" else {})
    back = mapping.format_table_schema(t)
    assert back is not None and back.comment == "events" and back.partition_keys == ("dt",)
    assert [(f.name, f.type.sql()) for f in back.fields] == [(f.name, f.type.sql()) for f in ts.fields]
    assert back.options["file.format"] == fmt and back.options["path"] == f"file:{location}"
    table = format_table_from_schema(LocalFileIO(), location, back)
    table.write(FORMAT_ROWS)
    assert table.read().sort_by("id").to_pylist() == FORMAT_ROWS.sort_by("id").to_pylist()
    assert mapping.format_table_schema(mapping.table("db", "p", location, ts, owner="me", now=1)) is None


def test_plain_hive_text_table_is_a_csv_format_table() -> None:
    """A Hive text table with no ``field.delim``: Hive's default delimiter, U+0001 (HiveCatalog)."""
    from table_engine.catalog.hive import mapping

    ts = format_table_schema(FORMAT_SCHEMA, [], {"file.format": "csv"}, None)
    t = mapping.format_table("db", "f", "/x", ts, owner="me", now=1)
    t.sd.serdeInfo.parameters = {}
    t.parameters = {"transient_lastDdlTime": "1"}
    back = mapping.format_table_schema(t)
    assert back is not None and back.options["csv.field-delimiter"] == "\u0001"
    t.parameters = {"table_type": "TEXT"}
    assert mapping.format_table_schema(t) is None  # Paimon's TEXT format: not a format table here


@pytest.mark.integration
def test_hive_catalog_holds_format_tables(hive_metastore: Any, tmp_path: pathlib.Path) -> None:
    """Through a real Hive Metastore: create (csv, partitioned), list, open, write, append, overwrite a partition,
    drop; a plain Hive parquet table registered by another tool is a format table; ``format-table.enabled`` =
    false hides them."""
    from table_engine.catalog.hive import mapping

    warehouse = str(hive_metastore.warehouse)
    catalog = create_catalog(warehouse, {"metastore": "hive", "uri": hive_metastore.uri})
    db = f"fmt_{uuid.uuid4().hex[:8]}"
    try:
        table = catalog.create_format_table(f"{db}.events", FORMAT_SCHEMA, ["dt"],
                                            {"file.format": "csv", "csv.include-header": "true"}, "events")
        catalog.create_table(f"{db}.plain", SCHEMA)
        assert catalog.list_tables(db) == ["events", "plain"]
        table.write(FORMAT_ROWS)
        opened = catalog.get_format_table(f"{db}.events")
        assert opened.location == table.location and opened.partition_keys == ("dt",)
        assert opened.read().sort_by("id").to_pylist() == FORMAT_ROWS.sort_by("id").to_pylist()
        opened.overwrite(pa.table({"id": [9], "msg": ["z"], "dt": ["2025-01-01"]}, schema=FORMAT_SCHEMA))
        assert sorted(catalog.get_format_table(f"{db}.events").read().column("id").to_pylist()) == [2, 9]
        with pytest.raises(UnsupportedError, match="is a format table"):
            catalog.get_table(f"{db}.events")
        with pytest.raises(UnsupportedError, match="create_format_table"):
            catalog.create_table(f"{db}.other", FORMAT_SCHEMA, options={"type": "format-table"})

        # a Hive parquet table another tool registered
        other = format_table_schema(FORMAT_SCHEMA, [], {"file.format": "parquet"}, None)
        location = f"{warehouse}/{db}.db/ext"
        hive_table = mapping.format_table(db, "ext", location, other, owner="x", now=1)
        hive_table.parameters = {"EXTERNAL": "TRUE"}
        hive_table.tableType = mapping.EXTERNAL_TABLE
        catalog.metastore._call("create", "create_table", hive_table)  # type: ignore[attr-defined]
        assert catalog.list_tables(db) == ["events", "ext", "plain"]
        catalog.get_format_table(f"{db}.ext").write(FORMAT_ROWS)
        assert catalog.get_format_table(f"{db}.ext").read().num_rows == 3

        hidden = create_catalog(warehouse, {"metastore": "hive", "uri": hive_metastore.uri,
                                            "format-table.enabled": "false"})
        try:
            assert hidden.list_tables(db) == ["plain"]
        finally:
            hidden.close()

        catalog.drop_table(f"{db}.events")
        assert not pathlib.Path(table.location).exists()  # managed: its directory goes
        catalog.drop_table(f"{db}.ext")
        assert pathlib.Path(location).exists()  # external: its files stay
        assert catalog.list_tables(db) == ["plain"]
    finally:
        catalog.drop_database(db, ignore_if_not_exists=True, cascade=True)
        catalog.close()


class _FormatTablesMetastore(FakeMetastore):
    """The catalog tests' metastore holding format tables in a dict, as the Hive metastore holds them (its
    registration is their definition): the catalog's format-table paths without a Hive server."""

    def __init__(self) -> None:
        super().__init__()
        self.format_tables: dict[tuple[str, str], TableSchema] = {}

    def format_table_schema(self, db: str, table: str) -> TableSchema | None:
        return self.format_tables.get((db, table))

    def register_format_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        self.format_tables[(db, table)] = replace(schema, options={**schema.options, "path": location})

    def drop_format_table(self, db: str, table: str) -> bool:
        del self.format_tables[(db, table)]
        return False

    def list_tables(self, db: str) -> list[str]:
        return [*super().list_tables(db), *(t for d, t in self.format_tables if d == db)]


def test_the_write_command_targets_a_format_table(tmp_path: pathlib.Path) -> None:
    """``write`` (the CLI's, the write operator's, the Spark application's on its driver) appends to a format table,
    or overwrites the partitions its rows write; no snapshot, no commit facts."""
    import pyarrow.parquet as pq

    from table_engine.catalog.metastore_catalog import MetastoreCatalog
    from table_engine.ops import Write
    from table_engine.ops.run import run_command

    catalog = MetastoreCatalog(str(tmp_path / "w"), {"metastore": "hive"}, _FormatTablesMetastore())
    table = catalog.create_format_table("db.events", FORMAT_SCHEMA, ["dt"], {"file.format": "parquet"})
    assert catalog.list_tables("db") == ["events"]
    src = tmp_path / "src.parquet"
    pq.write_table(FORMAT_ROWS, src)
    base = {"warehouse": str(tmp_path / "w"), "table": "db.events", "source": str(src)}
    out = run_command(Write(**base), catalog)
    assert (out["rows"], out["snapshot_id"], out["format_table"]) == (3, None, True)
    run_command(Write(**base), catalog)
    assert catalog.get_format_table("db.events").read().num_rows == 6
    pq.write_table(pa.table({"id": [7], "msg": ["x"], "dt": ["2025-01-02"]}, schema=FORMAT_SCHEMA), src)
    out = run_command(Write(**base, mode="overwrite"), catalog)
    assert out["deleted_files"] == 2  # the two files of partition dt=2025-01-02; dt=2025-01-01 stays
    assert sorted(table.read().column("id").to_pylist()) == [1, 1, 3, 3, 7]
    with pytest.raises(UnsupportedError, match="is a format table"):
        catalog.get_table("db.events")
    catalog.drop_table("db.events")
    assert catalog.list_tables("db") == [] and not pathlib.Path(table.location).exists()


def test_a_hive_table_of_an_unreadable_type_is_not_listed_as_a_format_table() -> None:
    from table_engine.catalog.hive import mapping

    t = mapping.format_table("db", "f", "/x", format_table_schema(FORMAT_SCHEMA, [], {"file.format": "orc"}, None),
                             owner="me", now=1)
    assert mapping.is_format_table(t)
    t.sd.cols[0].type = "uniontype<int,string>"
    assert not mapping.is_format_table(t)
