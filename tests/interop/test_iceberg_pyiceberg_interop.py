"""pyiceberg reads the Iceberg metadata that table_engine.iceberg writes: the same rows as the engine at every
retained snapshot (append tables with dynamic and fixed buckets, partitioned or not, a schema change, an overwrite,
a full compaction; a primary-key table after full compaction). pyiceberg runs in its own venv
(``pyiceberg_env.py``) through ``pyiceberg_driver.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from table_engine.catalog import Catalog
from table_engine.iceberg import StorageType, write_iceberg_metadata
from table_engine.schema_change import AddColumn
from table_engine.table import Table
from tests.interop.pyiceberg_env import ensure_pyiceberg_python

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).resolve().parent / "pyiceberg_driver.py"
S = pa.schema([pa.field("dt", pa.string()), pa.field("id", pa.int64()), ("v", pa.string()), ("d", pa.float64())])


def pyiceberg_read(work: Path, metadata: str, snapshots: list[int]) -> tuple[list[pa.Table], list[dict[str, Any]]]:
    """Scan ``metadata`` at each snapshot with pyiceberg (one subprocess)."""
    work.mkdir(parents=True, exist_ok=True)
    reads = [{"metadata": metadata, "snapshot": s, "out": str(work / f"{uuid.uuid4().hex}.arrow")} for s in snapshots]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([ensure_pyiceberg_python(), str(DRIVER)], input=json.dumps(reads), capture_output=True,
                          text=True, timeout=300, env=env, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("@@RESULT@@ ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    tables = []
    for r in reads:
        with pa.memory_map(r["out"], "r") as source:
            tables.append(ipc.open_file(source).read_all())
    return tables, json.loads(lines[-1][len("@@RESULT@@ "):])


def rows(table: pa.Table, columns: list[str]) -> list[tuple[Any, ...]]:
    data = table.select(columns).to_pylist()
    return sorted((tuple(r[c] for c in columns) for r in data), key=repr)


def commit_and_mirror(t: Table, action: Callable[[], object]) -> int:
    """Run one commit, then write its Iceberg metadata as the commit callback will."""
    action()
    t = t.refresh()
    sid = t.latest_snapshot_id()
    assert sid is not None
    write_iceberg_metadata(t, sid, StorageType.TABLE_LOCATION)
    return sid


def batch(ids: range, dt: str = "a", with_w: bool = False) -> pa.Table:
    cols: dict[str, Any] = {"dt": [dt if i % 3 else "b" for i in ids], "id": list(ids),
                            "v": [f"v{i}" if i % 5 else None for i in ids], "d": [i / 4 for i in ids]}
    schema = S
    if with_w:
        cols["w"] = [i * 10 for i in ids]
        schema = S.append(pa.field("w", pa.int64()))
    return pa.table(cols, schema=schema)


def assert_every_snapshot(t: Table, tmp_path: Path, expect_all: bool = True) -> list[dict[str, Any]]:
    t = t.refresh()
    latest = t.latest_snapshot_id()
    metadata = f"{t.path}/metadata/v{latest}.metadata.json"
    listed = json.loads(Path(metadata).read_text())["snapshots"]
    ids = [s["snapshot-id"] for s in listed]
    if expect_all:
        assert ids == [s.id for s in t.snapshots()]
    tables, info = pyiceberg_read(tmp_path, metadata, ids)
    for sid, got in zip(ids, tables, strict=True):
        want = t.read(snapshot_id=sid)
        columns = [c for c in want.column_names if c in got.column_names]
        assert rows(got, columns) == rows(want, columns), f"snapshot {sid}"
        for extra in set(got.column_names) - set(columns):
            assert got.column(extra).null_count == got.num_rows
    return info


@pytest.mark.parametrize("partitioned", [False, True])
@pytest.mark.parametrize("bucket", ["-1", "2"])
def test_append_tables_read_by_pyiceberg_at_every_snapshot(tmp_path: Path, partitioned: bool, bucket: str) -> None:
    options = {"bucket": bucket} | ({"bucket-key": "id"} if bucket != "-1" else {})
    t = Catalog(str(tmp_path / "wh")).create_table("db.t", schema=S, partition_keys=["dt"] if partitioned else [],
                                                   options=options)
    commit_and_mirror(t, lambda: t.write(batch(range(20))))
    commit_and_mirror(t, lambda: t.write(batch(range(20, 30))))
    commit_and_mirror(t, lambda: t.alter(AddColumn("w", pa.int64())))  # a schema change commits no snapshot
    t = t.refresh()
    commit_and_mirror(t, lambda: t.write(batch(range(30, 40), with_w=True)))
    commit_and_mirror(t, lambda: t.maintenance.compact(full=True))
    commit_and_mirror(t, lambda: t.write(batch(range(40, 45), with_w=True), overwrite=True))
    info = assert_every_snapshot(t, tmp_path / "reads")
    assert info[-1]["schema"] == ["dt", "id", "v", "d", "w"]
    listed = json.loads(Path(t.path, "metadata", f"v{t.latest_snapshot_id()}.metadata.json").read_text())
    assert [s["summary"]["operation"] for s in listed["snapshots"]][-1] == "overwrite"
    assert len(listed["schemas"]) == 2


def test_primary_key_table_shows_the_last_full_compaction(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                        ("v", pa.string()), ("d", pa.float64())])
    t = Catalog(str(tmp_path / "wh")).create_table("db.pk", schema=schema, primary_keys=["dt", "id"],
                                                   partition_keys=["dt"], options={"bucket": "2"})
    first = commit_and_mirror(t, lambda: t.write(batch(range(20)).cast(schema)))
    compacted = commit_and_mirror(t, lambda: t.maintenance.compact(full=True))
    commit_and_mirror(t, lambda: t.write(batch(range(10, 30)).cast(schema)))
    t = t.refresh()
    metadata = f"{t.path}/metadata/v{t.latest_snapshot_id()}.metadata.json"
    (at_first, at_compacted, at_latest), _ = pyiceberg_read(tmp_path, metadata, [first, compacted,
                                                                                 t.latest_snapshot_id() or 0])
    columns = ["dt", "id", "v", "d"]
    assert at_first.num_rows == 0  # level-0 files only: Iceberg sees nothing before a full compaction
    assert rows(at_compacted, columns) == rows(t.read(snapshot_id=compacted), columns)
    assert rows(at_latest, columns) == rows(at_compacted, columns)  # new level-0 files are not visible yet
