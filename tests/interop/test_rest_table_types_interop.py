"""Format and object tables through one REST server, pypaimon 2.1.0's REST client and the engine's (ADR 0048).

Format tables both ways: pypaimon creates and writes a partitioned parquet format table, the engine reads the rows
(and the reverse); csv only unpartitioned and with a header line, as pypaimon 2.1.0 writes and reads csv. Object
tables (Paimon 1.3+'s virtual design, a listing of the table's own path) both ways: each client lists the objects of
a table the other created, row for row the same.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.interop.pypaimon_env import ensure_pypaimon_python
from tests.rest_server import RestCatalogServer

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

DRIVER = Path(__file__).resolve().parent / "pypaimon_rest_format_driver.py"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
ROWS = [[1, "a", "d1"], [2, "b", "d1"], [3, "c", "d2"]]


def _run_pypaimon(spec: dict) -> dict:
    proc = subprocess.run([ensure_pypaimon_python(), str(DRIVER), json.dumps(spec)], capture_output=True,
                          text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@ ")][-1]
    return dict(json.loads(line[len("@@RESULT@@ "):]))


@pytest.mark.parametrize("data_token", [False, True], ids=["plain", "data-token"])
def test_pypaimon_creates_and_writes_a_parquet_format_table_the_engine_reads(tmp_path: Path,
                                                                             data_token: bool) -> None:
    from table_engine.catalog import create_catalog

    defaults = {"data-token.enabled": "true"} if data_token else {}
    with RestCatalogServer(tmp_path / "warehouse", defaults=defaults) as server:
        result = _run_pypaimon({"options": server.options(), "table": "db1.f", "mode": "create",
                                "format": "parquet"})
        assert result["kind"] == "FormatTable" and result["rows"] == ROWS
        location = tmp_path / "warehouse" / "db1.db" / "f"
        assert result["location"] == str(location)
        with create_catalog(server.warehouse, server.options()) as catalog:
            assert catalog.list_tables("db1") == ["f"]
            table = catalog.get_format_table("db1.f")
            assert table.location == str(location) and list(table.partition_keys) == ["dt"]
            assert sorted([r["id"], r["name"], r["dt"]] for r in table.read().to_pylist()) == ROWS
            assert table.read(columns=["id"], filter=[("dt", "=", "d2")]).column("id").to_pylist() == [3]
            # the engine appends to pypaimon's table; pypaimon reads both writers' rows
            table.write(pa.table({"id": [4], "name": ["d"], "dt": ["d2"]}, schema=SCHEMA))
        again = _run_pypaimon({"options": server.options(), "table": "db1.f", "mode": "read"})
        assert again["rows"] == [*ROWS, [4, "d", "d2"]]


def test_the_engine_creates_and_writes_a_parquet_format_table_pypaimon_reads(tmp_path: Path) -> None:
    from table_engine.catalog import create_catalog

    with RestCatalogServer(tmp_path / "warehouse") as server:
        with create_catalog(server.warehouse, server.options()) as catalog:
            table = catalog.create_format_table("db2.f", SCHEMA, partition_keys=["dt"],
                                                options={"file.format": "parquet"})
            table.write(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "dt": ["d1", "d1", "d2"]}, schema=SCHEMA))
        result = _run_pypaimon({"options": server.options(), "table": "db2.f", "mode": "read"})
        assert result["kind"] == "FormatTable"
        assert result["rows"] == ROWS and result["tables"] == ["f"]


def test_csv_format_tables_with_a_header_both_ways(tmp_path: Path) -> None:
    """pypaimon 2.1.0 writes csv with a header line and every column (partition columns too), and reads the first
    line as the header: an unpartitioned table with ``csv.include-header`` = ``true`` is read the same by both."""
    from table_engine.catalog import create_catalog

    options = {"file.format": "csv", "csv.include-header": "true"}
    with RestCatalogServer(tmp_path / "warehouse") as server:
        _run_pypaimon({"options": server.options(), "table": "db1.c", "mode": "create", "format": "csv",
                       "partition_keys": [], "table_options": {"csv.include-header": "true"}})
        with create_catalog(server.warehouse, server.options()) as catalog:
            table = catalog.get_format_table("db1.c")
            assert sorted([r["id"], r["name"], r["dt"]] for r in table.read().to_pylist()) == ROWS
            mine = catalog.create_format_table("db1.e", SCHEMA, options=options)
            mine.write(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "dt": ["d1", "d1", "d2"]}, schema=SCHEMA))
        assert _run_pypaimon({"options": server.options(), "table": "db1.e", "mode": "read"})["rows"] == ROWS


def test_pypaimon_partitioned_csv_is_one_clear_error(tmp_path: Path) -> None:
    """pypaimon 2.1.0 puts a partitioned csv table's partition columns into its files (Paimon Java writes only the
    other columns): the engine says so in one error instead of misreading the rows."""
    from table_engine.catalog import create_catalog
    from table_engine.errors import DataError

    with RestCatalogServer(tmp_path / "warehouse") as server:
        _run_pypaimon({"options": server.options(), "table": "db1.p", "mode": "create", "format": "csv",
                       "table_options": {"csv.include-header": "true"}})
        with create_catalog(server.warehouse, server.options()) as catalog:
            with pytest.raises(DataError, match="not a csv file of the table's 2 columns"):
                catalog.get_format_table("db1.p").read()


def _engine_rows(table: Any) -> list[list[Any]]:
    t = table.read()
    return sorted([list(r) for r in zip(*(c.to_pylist() for c in t.columns), strict=True)])


def _mtime_ms(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000  # Java's File.lastModified()


def _local_disk(rows: list[list[Any]]) -> list[list[Any]]:
    """``rows`` with ``mtime`` as pypaimon 2.1.0 lists it on local disk: 0 (its local ``FileStatus`` has ``mtime``,
    in seconds, and its object-table read asks for ``mtime_ns``); every other column as listed."""
    return [[*r[:3], 0, *r[4:]] for r in rows]


@pytest.mark.parametrize("data_token", [False, True], ids=["plain", "data-token"])
def test_pypaimon_creates_an_object_table_the_engine_lists(tmp_path: Path, data_token: bool) -> None:
    """pypaimon 2.1 creates Paimon 1.3+'s virtual object table (a listing of the table's path); the engine lists the
    same objects: every column of every row equal to pypaimon's but ``mtime``, which pypaimon 2.1.0 reports as 0 on
    local disk (the engine's is the file's, as Java's)."""
    from table_engine.catalog import create_catalog
    from table_engine.object_table import VIRTUAL_ARROW_SCHEMA, VirtualObjectTable

    defaults = {"data-token.enabled": "true"} if data_token else {}
    with RestCatalogServer(tmp_path / "warehouse", defaults=defaults) as server:
        location = tmp_path / "warehouse" / "db3.db" / "o"
        (location / "sub").mkdir(parents=True)
        (location / "a.bin").write_bytes(b"12345")
        (location / "sub" / "b.txt").write_bytes(b"1")
        result = _run_pypaimon({"options": server.options(), "table": "db3.o", "mode": "object"})
        assert result["kind"] == "ObjectTable" and result["location"] == str(location)
        assert result["columns"] == VIRTUAL_ARROW_SCHEMA.names
        assert [r[:3] for r in result["rows"]] == [["a.bin", "a.bin", 5], ["sub/b.txt", "b.txt", 1]]
        with create_catalog(server.warehouse, server.options()) as catalog:
            assert catalog.list_tables("db3") == ["o"]
            table = catalog.get_table("db3.o")
            assert isinstance(table, VirtualObjectTable) and table.location == str(location)
            rows = _engine_rows(table)
            assert _local_disk(rows) == result["rows"]  # paths, names, sizes, atime 0, owner null
            assert [r[3] for r in rows] == [_mtime_ms(location / "a.bin"), _mtime_ms(location / "sub" / "b.txt")]


def test_the_engine_creates_an_object_table_pypaimon_lists(tmp_path: Path) -> None:
    """The engine creates the virtual object table (an external ``path`` and a managed one); pypaimon reads it as
    its ``ObjectTable`` and lists the rows the engine lists."""
    from table_engine.catalog import create_catalog

    objects = tmp_path / "objects"
    (objects / "x" / "y").mkdir(parents=True)
    (objects / "top.jpg").write_bytes(b"123")
    (objects / "x" / "y" / "deep.pdf").write_bytes(b"")
    with RestCatalogServer(tmp_path / "warehouse") as server:
        with create_catalog(server.warehouse, server.options()) as catalog:
            external = catalog.create_table("db4.ext", pa.schema([]),
                                            options={"type": "object-table", "path": str(objects)})
            managed = catalog.create_table("db4.m", pa.schema([]), options={"type": "object-table"})
            Path(managed.path).mkdir(parents=True)
            (Path(managed.path) / "m.bin").write_bytes(b"mm")
            mine = {"ext": _engine_rows(external), "m": _engine_rows(managed)}
        assert [r[0] for r in mine["ext"]] == ["top.jpg", "x/y/deep.pdf"]
        for name in ("ext", "m"):
            theirs = _run_pypaimon({"options": server.options(), "table": f"db4.{name}", "mode": "read-object"})
            assert theirs["kind"] == "ObjectTable" and theirs["tables"] == ["ext", "m"]
            assert theirs["rows"] == _local_disk(mine[name])
        assert [r[3] for r in mine["ext"]] == [_mtime_ms(objects / "top.jpg"), _mtime_ms(objects / "x/y/deep.pdf")]


def test_an_object_table_on_s3_both_clients_list_the_same_rows(tmp_path: Path, s3_options: dict[str, str],
                                                               s3_warehouse: str) -> None:
    """On S3, with the credentials the server vends (none in the clients' options or argv), pypaimon and the engine
    list the same rows of an object table, ``mtime`` (``Last-Modified``, ms) included."""
    from table_engine.catalog import create_catalog
    from table_engine.io.object_store import S3FileIO
    from table_engine.options.storage import S3Settings

    vended = {"fs.s3.endpoint": s3_options["s3.endpoint"], "fs.s3.accessKeyId": s3_options["s3.access-key"],
              "fs.s3.accessKeySecret": s3_options["s3.secret-key"], "fs.s3.region": s3_options["s3.region"],
              "fs.s3.path.style.access": "true"}
    storage = S3FileIO(S3Settings.of(s3_options))
    with RestCatalogServer(tmp_path / "unused", storage=storage, root=s3_warehouse, vended=vended,
                           defaults={"data-token.enabled": "true"}) as server:
        with create_catalog(server.warehouse, server.options()) as catalog:
            table = catalog.create_table("db5.o", pa.schema([]), options={"type": "object-table"})
            for rel, data in {"a.jpg": b"12345", "sub/b.pdf": b"1"}.items():
                storage.write_bytes(f"{table.path}/{rel}", data)
            mine = _engine_rows(catalog.get_table("db5.o"))
        assert [r[:3] for r in mine] == [["a.jpg", "a.jpg", 5], ["sub/b.pdf", "b.pdf", 1]]
        assert all(r[3] > 0 for r in mine)
        theirs = _run_pypaimon({"options": server.options(), "table": "db5.o", "mode": "read-object"})
        assert theirs["kind"] == "ObjectTable" and theirs["rows"] == mine
