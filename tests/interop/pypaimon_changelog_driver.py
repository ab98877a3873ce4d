"""Read a table's changelog with pypaimon 2.1.0's streaming scan (run by ``.venv-pypaimon/bin/python`` only; never
imports ``table_engine``).

    pypaimon_changelog_driver.py WAREHOUSE DB.TABLE

Runs the follow-up phase of pypaimon's streaming scan from snapshot 1 (its scanner for the table's
``changelog-producer`` picks the snapshots, changelog manifest lists for input / lookup / full-compaction, and plans
them), reads every plan with ``_row_kind`` up to the latest snapshot, and prints ``@@RESULT@@ <json>``: a list of
``[snapshot_id, row_kind, value, ...]`` rows in stream order (values as JSON-able Python objects).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pypaimon import CatalogFactory
from pypaimon.read.streaming_table_scan import AsyncStreamingTableScan

RESULT_PREFIX = "@@RESULT@@ "


def read_changelog(warehouse: str, identifier: str) -> list[list[Any]]:
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    latest = table.snapshot_manager().get_latest_snapshot()
    if latest is None:
        return []
    builder = table.new_stream_read_builder().with_include_row_kind(True)
    scan = AsyncStreamingTableScan(table, prefetch_enabled=False)
    scan._read_type = builder.read_type()
    read = builder.new_read()
    out: list[list[Any]] = []
    # the follow-up phase of the stream, snapshot by snapshot (the async generator would poll forever at the end)
    for sid in range(1, latest.id + 1):
        snapshot = table.snapshot_manager().get_snapshot_by_id(sid)
        if snapshot is None or not scan.follow_up_scanner.should_scan(snapshot):
            continue
        splits = scan._create_follow_up_plan(snapshot).splits()
        if splits:
            out += [[sid, *r.values()] for r in read.to_arrow(splits).to_pylist()]
    return out


def main() -> None:
    rows = read_changelog(sys.argv[1], sys.argv[2])
    print(RESULT_PREFIX + json.dumps(rows, default=str))


if __name__ == "__main__":
    main()
