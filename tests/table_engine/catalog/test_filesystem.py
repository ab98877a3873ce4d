"""The filesystem catalog's databases, rename (Paimon's ``renameTable``: one directory rename) and its refusal of
views and of database properties."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest

from table_engine.catalog import Catalog
from table_engine.errors import (
    CatalogError,
    DatabaseAlreadyExistError,
    DatabaseNotEmptyError,
    DatabaseNotExistError,
    ReadOnlyTableError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedError,
)
from table_engine.io.file_io import LocalFileIO

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
ROWS = pa.table({"id": [1, 2], "v": ["a", "b"]})


class NoRenameFileIO(LocalFileIO):
    """A local disk that behaves as an object store: no directories, no rename."""

    has_directories = False


def test_databases(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path))
    catalog.create_database("db")
    catalog.create_database("db")  # ignore_if_exists
    with pytest.raises(DatabaseAlreadyExistError, match="'db' exists"):
        catalog.create_database("db", ignore_if_exists=False)
    with pytest.raises(UnsupportedError, match=r"database 'p'.*no database properties \(owner\)"):
        catalog.create_database("p", properties={"owner": "me"})  # refused, not dropped silently
    assert catalog.list_databases() == ["db"] and not (tmp_path / "p.db").exists()
    catalog.create_table("db.t", SCHEMA)
    with pytest.raises(DatabaseNotEmptyError, match=r"still has tables \['t'\]; use cascade=True$"):
        catalog.drop_database("db")
    catalog.drop_database("db", cascade=True)
    assert catalog.list_databases() == [] and not (tmp_path / "db.db").exists()
    with pytest.raises(DatabaseNotExistError):
        catalog.drop_database("db")
    catalog.drop_database("db", ignore_if_not_exists=True)


def test_rename_table(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path))
    catalog.create_table("db.t", SCHEMA).write(ROWS)
    catalog.create_database("other")
    catalog.rename_table("db.t", "other.u")
    assert catalog.list_tables("db") == [] and catalog.list_tables("other") == ["u"]
    got = catalog.get_table("other.u")
    assert got.identifier == "other.u" and got.read().sort_by("id").to_pylist() == ROWS.to_pylist()
    got.write(ROWS)  # the renamed table takes commits
    assert got.latest_snapshot_id() == 2


def test_rename_table_refusals(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path))
    catalog.create_table("db.t", SCHEMA)
    catalog.create_table("db.u", SCHEMA)
    with pytest.raises(TableAlreadyExistError, match="'db.u' exists"):
        catalog.rename_table("db.t", "db.u")
    with pytest.raises(TableNotExistError):
        catalog.rename_table("db.x", "db.y")
    catalog.rename_table("db.x", "db.y", ignore_if_not_exists=True)
    with pytest.raises(DatabaseNotExistError):
        catalog.rename_table("db.t", "nodb.t")
    with pytest.raises(ReadOnlyTableError):
        catalog.rename_table("db.t$snapshots", "db.s")
    with pytest.raises(CatalogError, match="names a system table or a branch"):
        catalog.rename_table("db.t", "db.s$snapshots")
    assert catalog.list_tables("db") == ["t", "u"]


def test_rename_is_refused_where_it_is_not_atomic(tmp_path: pathlib.Path) -> None:
    Catalog(str(tmp_path)).create_table("db.t", SCHEMA)
    catalog = Catalog(str(tmp_path), file_io=NoRenameFileIO())
    with pytest.raises(UnsupportedError, match="object store, where a rename is not atomic"):
        catalog.rename_table("db.t", "db.u")
    assert catalog.list_tables("db") == ["t"]


def test_the_filesystem_catalog_has_no_views(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path))
    catalog.create_database("db")
    calls = [("create_view", lambda: catalog.create_view("db.v", SCHEMA, "SELECT 1")),
             ("get_view", lambda: catalog.get_view("db.v")),
             ("list_views", lambda: catalog.list_views("db")),
             ("drop_view", lambda: catalog.drop_view("db.v"))]
    for name, call in calls:
        with pytest.raises(UnsupportedError, match=f"^{name}: this catalog does not support views"):
            call()
    assert [p.name for p in (tmp_path / "db.db").iterdir()] == []


def test_sys_catalog_options(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path), {"s3.secret-key": "s3cret", "table-default.write-only": "true"})
    t = catalog.get_table("sys.catalog_options")
    assert t.read().to_pylist() == [{"key": "s3.secret-key", "value": "******"},
                                    {"key": "table-default.write-only", "value": "true"},
                                    {"key": "warehouse", "value": str(tmp_path)}]
    assert t.read(columns=["key"], filter=[("value", "=", "true")]).to_pylist() == [{"key": "table-default.write-only"}]
    with pytest.raises(ReadOnlyTableError):
        t.write(pa.table({"key": ["k"], "value": ["v"]}))
    with pytest.raises(TableNotExistError, match="'sys.nope' does not exist; the sys database has catalog_options"):
        catalog.get_table("sys.nope")
    with pytest.raises(CatalogError, match="'sys' is the system database"):
        catalog.create_database("sys")
    with pytest.raises(CatalogError, match="'sys' is the system database"):
        catalog.create_table("sys.t", pa.schema([("a", pa.int64())]))
    assert not (tmp_path / "sys.db").exists()
