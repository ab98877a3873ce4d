"""The Spark application (real ``spark-submit --master local[2]``) on a JDBC catalog (``metastore`` = ``jdbc``,
SQLite): a write creating the table and a compaction, committed on the driver through the catalog (its lock with
``lock.enabled``), the tasks writing files of the table opened by path; the JDBC password reaches the driver from
the environment, never the argv (``PAIMON_CATALOG_SECRETS``, table_engine/ops/secrets.py)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine.catalog import Catalog, create_catalog
from table_engine.ops import Compact, Write
from tests.spark.conftest import spark_submit

pytestmark = pytest.mark.spark


def test_write_and_compact_through_a_jdbc_catalog(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64()), "v": [f"v{i}" for i in range(100)]}),
                   source / "part-0.parquet")
    warehouse = str(tmp_path / "warehouse")
    options = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}", "lock.enabled": "true"}
    create_catalog(warehouse, options).create_database("db")
    write = Write(warehouse=warehouse, table="db.t", source=str(source), create_if_missing=True,
                  primary_keys=("id",), options={"bucket": "2"}, catalog_options=options)
    out = spark_submit(["--command-json", write.to_json()]).ok()
    assert out["snapshot_id"] == 1 and out["rows"] == 100 and out["created"] is True
    out = spark_submit(["--command-json", Compact(warehouse=warehouse, table="db.t", full=True,
                                                  catalog_options=options).to_json()]).ok()
    assert out["snapshot_id"] == 2
    catalog = create_catalog(warehouse, options)
    assert catalog.list_tables("db") == ["t"]
    table = catalog.get_table("db.t")
    assert table.read().num_rows == 100 and str(table.latest_snapshot().commit_kind) == "COMPACT"
    # a table with files in the warehouse that the catalog does not register is not found through it
    Catalog(warehouse).create_table("db.other", pa.schema([("id", pa.int64())]))
    bad = spark_submit(["--command-json", Compact(warehouse=warehouse, table="db.other",
                                                  catalog_options=options).to_json()])
    assert bad.returncode == 1 and "TableNotExistError" in bad.stdout
