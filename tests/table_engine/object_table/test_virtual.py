"""A REST catalog's object tables (Paimon 1.3+'s virtual design, ``table_engine.object_table.virtual``) against the
test server ``tests/rest_server.py``: the server keeps the definition (no schema file), every read lists the table's
``path``; every change is refused by name and leaves the location as it was (ADR 0048)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine.catalog.rest.messages import Identifier, TableSchema
from table_engine.catalog.rest.token_file_io import TokenFileIO
from table_engine.errors import (
    OptionError,
    ReadOnlyTableError,
    SchemaError,
    TableAlreadyExistError,
    UnsupportedError,
)
from table_engine.object_table import VIRTUAL_ARROW_SCHEMA, VirtualObjectTable, refresh_object_table
from table_engine.predicate import PredicateError
from tests.rest_server import (
    TOKEN,
    RestCatalogServer,
    own_server,  # noqa: F401 (the fixture "server": a server of each test's own)
    rest_catalog,
)

pytestmark = pytest.mark.timeout(300)

REFUSAL = r"virtual listing of its location \(Paimon 1\.3\+\): it has no snapshots to write or refresh"
OBJECT = {"type": "object-table"}


def _put(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def _expected(root: Path) -> list[tuple[str, str, int, int]]:
    """(relative path, name, size, mtime ms) of every file below ``root``, as Java's ``File.lastModified()``."""
    out = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath) / n
            st = p.stat()
            out.append((p.relative_to(root).as_posix(), n, st.st_size, st.st_mtime_ns // 1_000_000))
    return sorted(out)


def _rows(table: VirtualObjectTable) -> list[tuple[str, str, int, int]]:
    t = table.read()
    assert t.schema == VIRTUAL_ARROW_SCHEMA
    assert set(t.column("atime").to_pylist()) <= {0} and set(t.column("owner").to_pylist()) <= {None}
    return sorted(zip(*(t.column(c).to_pylist() for c in ("path", "name", "length", "mtime")), strict=True))


def test_create_then_every_read_lists_the_location(server: RestCatalogServer) -> None:
    with rest_catalog(server) as catalog:
        table = catalog.create_table("db1.o", pa.schema([]), options=OBJECT, comment="images")
        assert isinstance(table, VirtualObjectTable) and table.read_only
        location = Path(server.warehouse_dir) / "db1.db" / "o"
        assert table.location == table.path == str(location)
        assert table.read().num_rows == 0  # the server made no directory: nothing to list yet
        assert catalog.list_tables("db1") == ["o"] and catalog.table_exists("db1.o")
        # the server keeps the definition: Paimon 1.3+'s six fields, no schema file, nothing on storage
        kept = catalog.api.get_table(Identifier("db1", "o")).schema
        assert [f["name"] for f in kept.fields] == VIRTUAL_ARROW_SCHEMA.names and kept.comment == "images"
        assert not location.exists()
        _put(location, {"a.jpg": b"12345", "sub/b.pdf": b"1", "sub/deeper/c": b""})
        again = catalog.get_table("db1.o")
        assert _rows(again) == _expected(location)
        assert [r[0] for r in _rows(again)] == ["a.jpg", "sub/b.pdf", "sub/deeper/c"]  # relative paths
        (location / "a.jpg").unlink()
        assert [r[0] for r in _rows(again)] == ["sub/b.pdf", "sub/deeper/c"]  # listed at read time, not stored
        # projection and filters as on system tables
        assert again.read(columns=["name"], filter=[("length", ">", 0)]).to_pylist() == [{"name": "b.pdf"}]
        assert [b.num_rows for b in again.to_batches(batch_size=1)] == [1, 1]
        assert again.arrow_schema == VIRTUAL_ARROW_SCHEMA and again.schema.field_names() == VIRTUAL_ARROW_SCHEMA.names
        with pytest.raises(PredicateError, match="unknown column 'nope'"):
            again.read(columns=["nope"])


def test_a_definition_sent_without_fields_is_read_too(server: RestCatalogServer, tmp_path: Path) -> None:
    """pypaimon 2.1 sends ``type`` = ``object-table`` with no fields, and an external ``path``."""
    objects = tmp_path / "objects"
    _put(objects, {"x/1.bin": b"ab"})
    with rest_catalog(server) as catalog:
        catalog.create_database("db2")
        catalog.api.create_table(Identifier("db2", "o"),
                                 TableSchema(fields=[], options={**OBJECT, "path": str(objects)}))
        table = catalog.get_table("db2.o")
        assert isinstance(table, VirtualObjectTable) and table.location == str(objects)
        assert _rows(table) == _expected(objects)
        catalog.drop_table("db2.o")  # external: the server keeps the objects
        assert catalog.list_tables("db2") == [] and (objects / "x" / "1.bin").is_file()


def test_every_change_is_refused_by_name_and_changes_nothing(server: RestCatalogServer) -> None:
    from table_engine.ops import Compact, ExpireSnapshots, RefreshObjectTable
    from table_engine.ops.run import run_command
    from table_engine.schema_change import SetOption

    with rest_catalog(server) as catalog:
        table = catalog.create_table("db1.o", pa.schema([]), options=OBJECT)
        location = Path(table.path)
        _put(location, {"a": b"1"})
        before = _expected(location)
        refused = {
            "write": lambda: table.write(pa.table({"path": ["x"]})),
            "alter": lambda: table.alter(SetOption("a", "b")),
            "refresh": lambda: refresh_object_table(table),
            "expire": lambda: table.expire_snapshots(),
            "tag": lambda: table.create_tag("t1"),
            "branch": lambda: table.create_branch("b1"),
            "compact": lambda: table.maintenance.compact(),
        }
        for what, call in refused.items():
            with pytest.raises(ReadOnlyTableError, match=REFUSAL):
                call()
            assert _expected(location) == before, what
        for cmd in (RefreshObjectTable(warehouse=server.warehouse, table="db1.o"),
                    ExpireSnapshots(warehouse=server.warehouse, table="db1.o"),
                    Compact(warehouse=server.warehouse, table="db1.o")):
            with pytest.raises(UnsupportedError, match=REFUSAL):
                run_command(cmd, catalog)
        for call in (lambda: table.read(snapshot_id=1), lambda: table.new_stream_scan(),
                     lambda: catalog.get_table("db1.o$snapshots"), lambda: catalog.get_table("db1.o$ro")):
            with pytest.raises(UnsupportedError, match=REFUSAL):
                call()
        assert _expected(location) == before and sorted(os.listdir(location)) == ["a"]


def test_create_refuses_what_a_virtual_object_table_cannot_hold(server: RestCatalogServer) -> None:
    with rest_catalog(server) as catalog:
        with pytest.raises(OptionError, match="'object-location' is Paimon 1.0-1.2's object table"):
            catalog.create_table("db1.o", pa.schema([]), options={**OBJECT, "object-location": "/x"})
        with pytest.raises(SchemaError, match=r"can be empty or Paimon 1\.3\+'s .*extra \(not a column"):
            catalog.create_table("db1.o", pa.schema([("extra", pa.int32())]), options=OBJECT)
        with pytest.raises(SchemaError, match="mtime timestamp"):
            catalog.create_table("db1.o", pa.schema([("mtime", pa.timestamp("ms", tz="UTC"))]), options=OBJECT)
        with pytest.raises(SchemaError, match="no primary or partition keys"):
            catalog.create_table("db1.o", pa.schema([("name", pa.string())]), partition_keys=["name"],
                                 options=OBJECT)
        assert not catalog.database_exists("db1")  # nothing registered
        # some of the six columns are fine; the table has all six
        table = catalog.create_table("db1.o", pa.schema([pa.field("name", pa.string(), nullable=False)]),
                                     options=OBJECT)
        assert table.arrow_schema == VIRTUAL_ARROW_SCHEMA
        with pytest.raises(TableAlreadyExistError):
            catalog.create_table("db1.o", pa.schema([]), options=OBJECT)
        assert isinstance(catalog.create_table("db1.o", pa.schema([]), options=OBJECT, ignore_if_exists=True),
                          VirtualObjectTable)


def test_a_managed_object_table_is_dropped_with_its_directory(server: RestCatalogServer) -> None:
    """The server owns a managed table's directory (as for every REST table): dropping it removes the objects."""
    with rest_catalog(server) as catalog:
        table = catalog.create_table("db1.o", pa.schema([]), options=OBJECT)
        _put(Path(table.path), {"a": b"1"})
        catalog.drop_table("db1.o")
        assert catalog.list_tables("db1") == [] and not Path(table.path).exists()


def test_vended_credentials_list_the_location(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with RestCatalogServer(tmp_path / "warehouse", defaults={"data-token.enabled": "true"}) as server, \
            rest_catalog(server) as catalog:
        table = catalog.create_table("db1.o", pa.schema([]), options=OBJECT)
        assert isinstance(table.file_io, TokenFileIO)
        _put(Path(table.path), {"a": b"123"})
        assert _rows(catalog.get_table("db1.o")) == _expected(Path(table.path))
        assert any(m == "GET" and p.endswith("/db1/tables/o/token") for m, p in server.requests)
    assert TOKEN not in caplog.text


def test_an_object_table_on_s3_with_vended_credentials(tmp_path: Path, s3_options: dict[str, str],
                                                       s3_warehouse: str, caplog: pytest.LogCaptureFixture) -> None:
    from table_engine.io.object_store import S3FileIO
    from table_engine.options.storage import S3Settings

    caplog.set_level(logging.DEBUG)
    vended = {"fs.s3.endpoint": s3_options["s3.endpoint"], "fs.s3.accessKeyId": s3_options["s3.access-key"],
              "fs.s3.accessKeySecret": s3_options["s3.secret-key"], "fs.s3.region": s3_options["s3.region"],
              "fs.s3.path.style.access": "true"}
    storage = S3FileIO(S3Settings.of(s3_options))
    with RestCatalogServer(tmp_path / "unused", storage=storage, root=s3_warehouse, vended=vended,
                           defaults={"data-token.enabled": "true"}) as server, rest_catalog(server) as catalog:
        table = catalog.create_table("db1.o", pa.schema([]), options=OBJECT)
        assert table.path == f"{s3_warehouse}/db1.db/o" and table.read().num_rows == 0
        for rel, data in {"a.jpg": b"12345", "sub/b.pdf": b"1"}.items():
            storage.write_bytes(f"{table.path}/{rel}", data)
        listed = {st.path: st for st in storage.walk(table.path)}
        expected = sorted((p[len(table.path) + 1:], p.rsplit("/", 1)[-1], st.size, st.mtime_millis)
                          for p, st in listed.items())
        assert _rows(catalog.get_table("db1.o")) == expected
        assert [r[0] for r in expected] == ["a.jpg", "sub/b.pdf"]
    assert s3_options["s3.secret-key"] not in caplog.text and TOKEN not in caplog.text
