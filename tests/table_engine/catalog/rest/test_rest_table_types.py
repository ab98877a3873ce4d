"""Table types through the REST catalog against ``tests/rest_server.py`` (ADR 0048): format tables (the server keeps
the definition and the path; the engine reads and writes the files). Object tables (Paimon 1.3+'s virtual design):
``tests/table_engine/object_table/test_virtual.py``."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine.catalog.rest.messages import Identifier
from table_engine.catalog.rest.token_file_io import TokenFileIO
from table_engine.errors import OptionError, TableAlreadyExistError, TableNotExistError, UnsupportedError
from table_engine.format_table import FormatTable
from tests.rest_server import (
    TOKEN,
    RestCatalogServer,
    own_server,  # noqa: F401 (the fixture "server": a server of each test's own)
    rest_catalog,
)

pytestmark = pytest.mark.timeout(300)

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])


def _rows(ids: list[int], names: list[str], dt: str) -> pa.Table:
    return pa.table({"id": ids, "name": names, "dt": [dt] * len(ids)}, schema=SCHEMA)


def _sorted(table: FormatTable) -> list[tuple[int, str, str]]:
    return sorted((r["id"], r["name"], r["dt"]) for r in table.read().to_pylist())


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json", "orc"])
def test_format_table_created_written_and_read_through_the_server(server: RestCatalogServer, tmp_path: Path,
                                                                   fmt: str) -> None:
    with rest_catalog(server) as catalog:
        created = catalog.create_format_table("db1.f", SCHEMA, partition_keys=["dt"], options={"file.format": fmt},
                                              comment="raw")
        location = tmp_path / "warehouse" / "db1.db" / "f"
        assert created.location == str(location)
        created.write(_rows([1, 2], ["a", "b"], "d1"))
        created.write(_rows([3], ["c"], "d2"))
        table = catalog.get_format_table("db1.f")
        assert _sorted(table) == [(1, "a", "d1"), (2, "b", "d1"), (3, "c", "d2")]
        assert table.read(filter=[("dt", "=", "d2")]).column("id").to_pylist() == [3]  # partition pruning
        assert catalog.list_tables("db1") == ["f"]
        assert not catalog.table_exists("db1.f")  # a data table's question, as on the Hive catalog
        # the server keeps the definition: no schema file among the table's files
        assert sorted(p.name for p in location.iterdir()) == ["dt=d1", "dt=d2"]
        answer = catalog.api.get_table(Identifier("db1", "f"))
        assert answer.schema.options == {"type": "format-table", "file.format": fmt}
        assert answer.schema.partition_keys == ["dt"] and answer.schema.comment == "raw"
        table.overwrite(_rows([9], ["z"], "d1"), partitions={"dt": "d1"})
        assert _sorted(catalog.get_format_table("db1.f")) == [(3, "c", "d2"), (9, "z", "d1")]
        catalog.drop_table("db1.f")
        assert catalog.list_tables("db1") == [] and not location.exists()
        with pytest.raises(TableNotExistError, match="does not exist"):
            catalog.get_format_table("db1.f")


def test_get_table_and_create_table_name_the_format_table_calls(server: RestCatalogServer) -> None:
    with rest_catalog(server) as catalog:
        catalog.create_format_table("db1.f", SCHEMA, options={"file.format": "csv"})
        catalog.create_table("db1.t", SCHEMA)
        with pytest.raises(UnsupportedError, match="format table .*open it with get_format_table"):
            catalog.get_table("db1.f")
        with pytest.raises(UnsupportedError, match="create it with create_format_table"):
            catalog.create_table("db1.g", SCHEMA, options={"type": "format-table"})
        with pytest.raises(TableNotExistError, match="is not a format table"):
            catalog.get_format_table("db1.t")
        with pytest.raises(TableAlreadyExistError):
            catalog.create_format_table("db1.t", SCHEMA)
        with pytest.raises(TableAlreadyExistError, match="db1.f"):
            catalog.create_table("db1.f", SCHEMA)
        assert catalog.create_format_table("db1.f", SCHEMA, ignore_if_exists=True).location.endswith("/db1.db/f")
        assert sorted(catalog.list_tables("db1")) == ["f", "t"]


def test_bad_format_table_registers_nothing(server: RestCatalogServer) -> None:
    with rest_catalog(server) as catalog:
        with pytest.raises(OptionError, match="file.format"):
            catalog.create_format_table("db1.f", SCHEMA, options={"file.format": "avro-ish"})
        with pytest.raises(Exception, match="partition"):
            catalog.create_format_table("db1.f", SCHEMA, partition_keys=["nope"])
        assert not catalog.database_exists("db1")
    assert not any(m == "POST" and "/tables" in p for m, p in server.requests)


def test_external_format_table_keeps_its_files_on_drop(server: RestCatalogServer, tmp_path: Path) -> None:
    external = tmp_path / "landing"
    with rest_catalog(server) as catalog:
        table = catalog.create_format_table("db1.ext", SCHEMA, options={"file.format": "parquet",
                                                                        "path": str(external)})
        assert table.location == str(external)
        table.write(_rows([1], ["a"], "d1"))
        catalog.drop_table("db1.ext")
        assert not catalog.table_exists("db1.ext")
        assert [p.suffix for p in external.iterdir() if p.is_file()] == [".parquet"]


def test_format_table_reads_and_writes_with_vended_credentials(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with RestCatalogServer(tmp_path / "warehouse", defaults={"data-token.enabled": "true"}) as server, \
            rest_catalog(server) as catalog:
        catalog.create_format_table("db1.f", SCHEMA, options={"file.format": "csv"})
        table = catalog.get_format_table("db1.f")
        assert isinstance(table.file_io, TokenFileIO)
        table.write(_rows([1, 2], ["a", "b"], "d1"))
        assert _sorted(catalog.get_format_table("db1.f")) == [(1, "a", "d1"), (2, "b", "d1")]
        assert any(m == "GET" and p.endswith("/db1/tables/f/token") for m, p in server.requests)
    assert TOKEN not in caplog.text


def test_the_write_command_targets_a_rest_format_table(server: RestCatalogServer, tmp_path: Path) -> None:
    """``write`` (CLI, operator, the Spark application's driver) appends to a REST catalog's format table and
    overwrites the partitions its rows write; no snapshot."""
    import pyarrow.parquet as pq

    from table_engine.ops import Write
    from table_engine.ops.run import run_command

    src = tmp_path / "src.parquet"
    with rest_catalog(server) as catalog:
        catalog.create_format_table("db1.f", SCHEMA, partition_keys=["dt"], options={"file.format": "parquet"})
        pq.write_table(_rows([1, 2], ["a", "b"], "d1"), src)
        base = {"warehouse": server.warehouse, "table": "db1.f", "source": str(src)}
        out = run_command(Write(**base), catalog)
        assert (out["rows"], out["snapshot_id"], out["format_table"]) == (2, None, True)
        pq.write_table(_rows([3], ["c"], "d1"), src)
        run_command(Write(**base, mode="overwrite"), catalog)
        assert _sorted(catalog.get_format_table("db1.f")) == [(3, "c", "d1")]
