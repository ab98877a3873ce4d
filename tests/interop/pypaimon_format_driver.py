"""Drive pypaimon 2.1.0's format tables from its own virtualenv (run by ``.venv-pypaimon/bin/python``; never imports
``table_engine``). pypaimon opens a format table through its REST catalog only; this script builds its
``FormatTable`` directly over a local directory, which is all its reader and writer use.

  python pypaimon_format_driver.py '<json>'   with {"cmd": "read" | "write", "location": L, "format": F,
      "schema": "schema.arrow", "partition_keys": [...], "options": {...}, "data": "in.arrow", "out": "out.arrow"}

``write`` appends the rows of ``data`` (one commit); ``read`` writes every row to ``out``. Prints ``@@RESULT@@ <json>``.
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.ipc as ipc
from pypaimon.common.file_io import FileIO
from pypaimon.common.identifier import Identifier
from pypaimon.schema.schema import Schema
from pypaimon.schema.table_schema import TableSchema
from pypaimon.table.format.format_table import Format, FormatTable


def _read_ipc(path: str) -> pa.Table:
    with pa.OSFile(path, "rb") as f:
        return ipc.open_file(f).read_all()


def main() -> None:
    spec = json.loads(sys.argv[1])
    arrow_schema = _read_ipc(spec["schema"]).schema
    options = {"type": "format-table", "file.format": spec["format"], **spec.get("options", {})}
    schema = Schema.from_pyarrow_schema(arrow_schema, partition_keys=spec.get("partition_keys", []), options=options)
    location = spec["location"]
    table = FormatTable(FileIO.get(location), Identifier.create("db", "t"), TableSchema.from_schema(0, schema),
                        location, Format.parse(spec["format"]), options)
    if spec["cmd"] == "write":
        builder = table.new_batch_write_builder()
        write = builder.new_write()
        write.write_arrow(_read_ipc(spec["data"]))
        builder.new_commit().commit(write.prepare_commit())
        result = {"written": len(write.prepare_commit()[0].written_paths)}
    else:
        rb = table.new_read_builder()
        rows = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        with pa.OSFile(spec["out"], "wb") as f, ipc.new_file(f, rows.schema) as w:
            w.write_table(rows)
        result = {"rows": rows.num_rows}
    print("@@RESULT@@ " + json.dumps(result))


if __name__ == "__main__":
    main()
