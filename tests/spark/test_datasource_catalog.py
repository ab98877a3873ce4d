"""The ``paimon`` data source's table location on a metastore's catalog (no SparkSession: the location is what the
driver resolves from the reader/writer options): the metastore's catalog options given with a ``warehouse`` open
the table through that catalog, never become table options of a table a write creates, and are not taken for a
table opened by its path."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from table_engine.catalog import Catalog, create_catalog
from table_engine.spark.datasource import options as o

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_the_metastores_options_open_and_create_tables_through_its_catalog(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    uri = f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    catalog = create_catalog(warehouse, {"metastore": "jdbc", "uri": uri})
    catalog.create_database("db")
    given = {"path": "db.t", "warehouse": warehouse, "METASTORE": "jdbc", "uri": uri, "lock.enabled": "true",
             "jdbc.user": "u", "bucket": "1", "primary-key": "id"}  # Spark lower-cases keys: any case is taken
    location = o.TableLocation.of(given)
    assert dict(location.catalog_options) == {"metastore": "jdbc", "uri": uri, "lock.enabled": "true",
                                              "jdbc.user": "u"}
    assert not location.exists()
    created = location.create(SCHEMA, given)
    assert dict(created.schema.options) == {"bucket": "1"} and created.primary_keys == ["id"]
    assert catalog.list_tables("db") == ["t"] and location.exists()
    # a table with files in the warehouse that the catalog does not register is not the location's table
    Catalog(warehouse).create_table("db.files_only", SCHEMA)
    assert not o.TableLocation.of({**given, "path": "db.files_only"}).exists()
    # by its path, a table needs no catalog: the metastore's options are not taken
    by_path = o.TableLocation.of({"path": created.path, "metastore": "jdbc", "uri": uri})
    assert dict(by_path.catalog_options) == {} and by_path.open().identifier == created.identifier
