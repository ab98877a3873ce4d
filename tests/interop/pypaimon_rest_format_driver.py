"""Drive pypaimon 2.1.0's REST catalog on format and object tables (run by ``.venv-pypaimon/bin/python``, never by
the project venv; never imports ``table_engine``).

One JSON argument: ``{"options": {...catalog options...}, "table": "db.t", "mode": ..., "format": "csv"}``. Modes:

* ``create``: creates the database and a format table (``id BIGINT``, ``name STRING``, ``dt STRING``, partitioned by
  ``partition_keys``, default ``["dt"]``; ``type`` = ``format-table``, ``file.format`` = ``format`` and
  ``table_options``) through ``RESTCatalog``, writes two batches, then reads it back;
* ``read``: reads an existing format table (one the engine created and wrote);
* ``object``: creates an object table (``type`` = ``object-table``, Paimon 1.3+'s virtual design; ``table_options``
  added, e.g. an external ``path``) and reads it;
* ``read-object``: reads an existing object table (one the engine created).

Prints one ``@@RESULT@@ <json>`` line: ``{"rows": [[id, name, dt], ...] sorted, "tables": [...], "location": ...,
"kind": <pypaimon's class name>}`` (``object``, ``read-object``: ``"rows"`` are ``[path, name, length, mtime, atime,
owner]`` sorted, ``"columns"`` the column names pypaimon reads).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pyarrow as pa
from pypaimon import CatalogFactory, Schema
from pypaimon_rest_driver import SCHEMA, write_batches  # beside this file (run as a script)


def main(spec: dict) -> dict:
    catalog = CatalogFactory.create(spec["options"])
    database = spec["table"].split(".")[0]
    if spec["mode"] in ("object", "read-object"):
        if spec["mode"] == "object":
            catalog.create_database(database, True)
            options = {"type": "object-table", **spec.get("table_options", {})}
            catalog.create_table(spec["table"], Schema(options=options), False)
        table = catalog.get_table(spec["table"])
        result = _arrow(table)
        rows = sorted(zip(*(c.to_pylist() for c in result.columns)))
        return {"rows": [list(r) for r in rows], "columns": result.column_names,
                "tables": catalog.list_tables(database), "location": table.location(), "kind": type(table).__name__}
    if spec["mode"] == "create":
        catalog.create_database(database, True)
        options = {"type": "format-table", "file.format": spec["format"], **spec.get("table_options", {})}
        partition_keys = spec.get("partition_keys", ["dt"]) or None
        catalog.create_table(spec["table"], Schema.from_pyarrow_schema(SCHEMA, partition_keys=partition_keys,
                                                                     options=options), False)
        table = catalog.get_table(spec["table"])
        write_batches(table, [pa.table({"id": [1, 2], "name": ["a", "b"], "dt": ["d1", "d1"]}, schema=SCHEMA),
                              pa.table({"id": [3], "name": ["c"], "dt": ["d2"]}, schema=SCHEMA)])
    table = catalog.get_table(spec["table"])
    result = _arrow(table)
    rows = sorted(zip(*(result.column(c).to_pylist() for c in ("id", "name", "dt"))))
    return {"rows": [list(r) for r in rows], "tables": catalog.list_tables(database), "location": table.location(),
            "kind": type(table).__name__}


def _arrow(table: Any) -> pa.Table:
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())


if __name__ == "__main__":
    print("@@RESULT@@ " + json.dumps(main(json.loads(sys.argv[1]))))
