"""Database and table names (``catalog.check_name``): rejected at create when they would not be one directory of
their own, accepted otherwise; tables that exist already under an odd name keep working."""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.catalog import check_name, open_table
from table_engine.errors import CatalogError, ReadOnlyTableError

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])

BAD = [
    ("", "is empty"),
    (" t", "leading or trailing spaces"),
    ("t ", "leading or trailing spaces"),
    ("\tt", "leading or trailing spaces"),
    ("a/b", "path separator"),
    ("/", "path separator"),
    ("a\\b", "path separator"),
    ("..", "'.'"),
    ("a.b", "'.'"),
    ("t$x", "'$'"),
    ("a\nb", "control character"),
    ("a\x00b", "control character"),
    ("a\x1fb", "control character"),
    ("a\x7fb", "control character"),
]
GOOD = ["t", "T_1", "with space", "dash-ed", "über", "表", "x" * 200, "0"]


@pytest.mark.parametrize(("name", "problem"), BAD, ids=[repr(n) for n, _ in BAD])
def test_check_name_rejects(name: str, problem: str) -> None:
    with pytest.raises(CatalogError, match="invalid table name") as info:
        check_name("table", name)
    assert repr(name) in str(info.value) and problem in str(info.value)


@pytest.mark.parametrize(("name", "problem"), [b for b in BAD if b[0] and "." not in b[0]],
                         ids=[repr(n) for n, _ in BAD if n and "." not in n])
def test_create_rejects_bad_database_and_table_names_and_creates_nothing(catalog: Catalog, warehouse: str,
                                                                        name: str, problem: str) -> None:
    expected: type[Exception] = ReadOnlyTableError if "$" in name else CatalogError
    with pytest.raises(expected):
        catalog.create_table(f"db.{name}", SCHEMA)
    with pytest.raises(CatalogError, match="invalid database name"):
        catalog.create_table(f"{name}.t", SCHEMA)
    with pytest.raises(CatalogError, match="invalid database name"):
        catalog.create_database(name)
    assert not os.path.exists(warehouse) or os.listdir(warehouse) == []


def test_identifiers_with_empty_or_extra_parts_are_rejected(catalog: Catalog) -> None:
    for identifier in ("db.", ".t", "a.b.c", "."):
        with pytest.raises(CatalogError, match="database.table"):
            catalog.create_table(identifier, SCHEMA)


@pytest.mark.parametrize("name", GOOD)
def test_good_names_are_accepted(catalog: Catalog, name: str) -> None:
    t = catalog.create_table(f"{name}.{name}", SCHEMA, primary_keys=["id"])
    t.write(pa.table({"id": [1], "v": ["a"]}))
    assert catalog.list_databases() == [name] and catalog.list_tables(name) == [name]
    assert catalog.get_table(f"{name}.{name}").read().to_pydict() == {"id": [1], "v": ["a"]}


def test_tables_made_before_under_odd_names_keep_working(catalog: Catalog, warehouse: str) -> None:
    """A table directory with a name the catalog now rejects at create (made by hand, or by an older version)
    still opens, reads, writes and lists; so does a database directory with one."""
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"])
    t.write(pa.table({"id": [1], "v": ["a"]}))
    odd_tables = [" lead", "trail ", "tab\tin"]
    for odd in odd_tables:
        shutil.copytree(t.path, os.path.join(warehouse, "db.db", odd))
    shutil.copytree(os.path.join(warehouse, "db.db"), os.path.join(warehouse, " odd db.db"))
    assert catalog.list_tables("db") == sorted(["t", *odd_tables])
    assert " odd db" in catalog.list_databases()
    for identifier in [f"db.{odd}" for odd in odd_tables] + [" odd db.t", " odd db.trail "]:
        table = catalog.get_table(identifier)
        table.write(pa.table({"id": [2], "v": ["b"]}))
        assert table.read().sort_by("id").to_pydict() == {"id": [1, 2], "v": ["a", "b"]}, identifier
        assert catalog.table_exists(identifier)
    assert open_table(os.path.join(warehouse, "db.db", "trail ")).read().num_rows == 2
    catalog.drop_table("db.trail ")
    assert "trail " not in catalog.list_tables("db")
