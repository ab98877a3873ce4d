"""pypaimon 2.1.0's JDBC catalog reads a SQLite catalog our JdbcMetastore registered: its databases, tables and a
table's rows; and the table properties pypaimon's ``paimon_table_properties`` holds match what pypaimon writes.
pypaimon runs in its own virtualenv (a short script through its interpreter; this process never imports it)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.catalog.jdbc import JdbcMetastore
from tests.interop.pypaimon_env import ensure_pypaimon_python

pytestmark = pytest.mark.interop

PYPAIMON_SCRIPT = """
import json, sys
from pypaimon import CatalogFactory
catalog = CatalogFactory.create({"metastore": "jdbc", "uri": sys.argv[1], "warehouse": sys.argv[2]})
out = {"databases": catalog.list_databases(),
       "tables": {db: catalog.list_tables(db) for db in catalog.list_databases()}}
table = catalog.get_table("sales.orders")
builder = table.new_read_builder()
rows = builder.new_read().to_arrow(builder.new_scan().plan().splits())
out["rows"] = sorted(rows.column("id").to_pylist())
catalog.close()
print("@@RESULT@@ " + json.dumps(out))
"""


def _pypaimon(uri: str, warehouse: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([ensure_pypaimon_python(), "-c", PYPAIMON_SCRIPT, uri, warehouse], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [x for x in done.stdout.splitlines() if x.startswith("@@RESULT@@ ")][-1]
    result: dict[str, object] = json.loads(line.split(" ", 1)[1])
    return result


def test_pypaimon_lists_and_reads_what_the_jdbc_metastore_registered(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    uri = f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    files = Catalog(warehouse)
    orders = files.create_table("sales.orders", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                primary_keys=["id"], options={"bucket": "1"})
    orders.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
    metastore = JdbcMetastore({"uri": uri}, warehouse)
    try:
        metastore.create_database("sales", f"{warehouse}/sales.db", {"owner": "ana"})
        metastore.create_database("empty", f"{warehouse}/empty.db", {})
        metastore.register_table("sales", "orders", orders.path, orders.schema)
    finally:
        metastore.close()

    assert _pypaimon(uri, warehouse) == {"databases": ["empty", "sales"],
                                         "tables": {"empty": [], "sales": ["orders"]}, "rows": [1, 2, 3]}

    # pypaimon made its paimon_table_properties when it opened the catalog: a table registered now is written there
    items = files.create_table("sales.items", pa.schema([("id", pa.int64())]), options={"bucket": "-1"})
    metastore = JdbcMetastore({"uri": uri}, warehouse)
    try:
        metastore.register_table("sales", "items", items.path, items.schema)
        with metastore.engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT property_key, property_value FROM paimon_table_properties WHERE "
                                        "table_name = 'items'").all()
        assert dict(rows) == dict(items.schema.options)
    finally:
        metastore.close()
    assert _pypaimon(uri, warehouse)["tables"] == {"empty": [], "sales": ["items", "orders"]}
