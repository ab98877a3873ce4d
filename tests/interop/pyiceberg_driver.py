"""Read Iceberg tables with pyiceberg, in its own virtualenv (run by ``.venv-pyiceberg/bin/python``).

This script imports pyiceberg and never ``table_engine``. Its input (stdin) is a JSON list of reads
``{"metadata": "<v<N>.metadata.json>", "snapshot": N | null, "out": "<file.arrow>"}``; each scan
(``StaticTable.from_metadata(...).scan(snapshot_id=...)``) goes to its Arrow IPC file. It prints one line
``@@RESULT@@ <json>``: per read the row count, and the table's snapshot ids and current schema as pyiceberg sees them.
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.ipc as ipc
from pyiceberg.table import StaticTable


def main() -> None:
    results = []
    for read in json.loads(sys.stdin.read()):
        table = StaticTable.from_metadata(read["metadata"])
        data = table.scan(snapshot_id=read.get("snapshot")).to_arrow()
        with pa.OSFile(read["out"], "wb") as sink, ipc.new_file(sink, data.schema) as writer:
            writer.write_table(data)
        results.append({"rows": data.num_rows, "snapshots": [s.snapshot_id for s in table.snapshots()],
                        "schema": [f.name for f in table.schema().fields]})
    print("@@RESULT@@ " + json.dumps(results))


if __name__ == "__main__":
    main()
