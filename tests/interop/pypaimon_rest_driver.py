"""Drive pypaimon 2.1.0's REST catalog against a REST server (run by ``.venv-pypaimon/bin/python``, never by the
project venv; never imports ``table_engine``).

One JSON argument: ``{"options": {...catalog options: metastore=rest, uri, warehouse, token.provider, token...},
"table": "db.t", "primary_keys": [...], "partition_keys": [...], "bucket": "2"}``. Creates the database and a table
(``id BIGINT``, ``name STRING``, ``dt STRING``) through ``RESTCatalog``, commits two batches (the second updates a
key), reads the table back and lists databases/tables through the catalog; with ``"read_only": true`` it only reads
an existing table (one the engine wrote). Prints one ``@@RESULT@@ <json>`` line:
``{"rows": [[id, name, dt], ...] sorted by id, "databases": [...], "tables": [...], "snapshot_id": N}``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pyarrow as pa
from pypaimon import CatalogFactory, Schema

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])


def main(spec: dict) -> dict:
    catalog = CatalogFactory.create(spec["options"])
    database, name = spec["table"].split(".")
    if spec.get("read_only"):
        return _read(catalog, spec["table"], database)
    catalog.create_database(database, True)
    options = {"bucket": str(spec.get("bucket", "2"))} if spec.get("primary_keys") else {}
    catalog.create_table(spec["table"], Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=spec.get("partition_keys") or None, primary_keys=spec.get("primary_keys") or None,
        options=options), False)
    table = catalog.get_table(spec["table"])
    batches = [
        pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "dt": ["d1", "d1", "d2"]}, schema=SCHEMA),
        pa.table({"id": [2, 4], "name": ["B", "d"], "dt": ["d1", "d2"]}, schema=SCHEMA),
    ]
    write_batches(table, batches)
    return _read(catalog, spec["table"], database)


def write_batches(table: Any, batches: list[pa.Table]) -> None:
    """Commit each of ``batches`` in its own batch write (shared with the format-table driver)."""
    for batch in batches:
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        try:
            write.write_arrow(batch)
            commit.commit(write.prepare_commit())
        finally:
            write.close()
            commit.close()


def _read(catalog: Any, identifier: str, database: str) -> dict:
    table = catalog.get_table(identifier)
    builder = table.new_read_builder()
    result = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    names = result.column_names
    rows = sorted(zip(*(result.column(c).to_pylist() for c in ("id", "name", "dt")))) \
        if {"id", "name", "dt"} <= set(names) else []
    latest = table.snapshot_manager().get_latest_snapshot()
    return {"rows": [list(r) for r in rows], "databases": catalog.list_databases(),
            "fields": [[f.id, f.name, str(f.type)] for f in table.table_schema.fields],
            "schema_id": int(table.table_schema.id),
            "all_rows": sorted(result.to_pylist(), key=lambda r: r["id"]),
            "tables": catalog.list_tables(database), "snapshot_id": None if latest is None else int(latest.id)}


if __name__ == "__main__":
    print("@@RESULT@@ " + json.dumps(main(json.loads(sys.argv[1]))))
