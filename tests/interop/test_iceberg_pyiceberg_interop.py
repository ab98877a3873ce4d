"""pyiceberg reads the Iceberg metadata the engine's commits write (``metadata.iceberg.storage``, the post-commit
callback of ADR 0046): the same rows as the engine at every retained snapshot -- append tables with dynamic and fixed
buckets, partitioned or not, a schema change, an overwrite, a full compaction, a dropped partition; a primary-key
table after full compaction; after snapshot expiry (retained snapshots readable, expired ones gone from the metadata);
after a rollback; ``hadoop-catalog`` storage. pyiceberg runs in its own venv (``pyiceberg_env.py``) through
``pyiceberg_driver.py``.
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
from table_engine.iceberg import StorageType, metadata_dir
from table_engine.schema_change import AddColumn
from table_engine.table import Table
from tests.interop.pyiceberg_env import ensure_pyiceberg_python

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).resolve().parent / "pyiceberg_driver.py"
S = pa.schema([pa.field("dt", pa.string()), pa.field("id", pa.int64()), ("v", pa.string()), ("d", pa.float64())])
ICEBERG = {"metadata.iceberg.storage": "table-location"}


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


def committed(t: Table, action: Callable[[], object]) -> int:
    """Run one commit through the table API; the commit's callback has written ``v<N>.metadata.json``."""
    action()
    t = t.refresh()
    sid = t.latest_snapshot_id()
    assert sid is not None
    assert Path(metadata_file(t, sid)).is_file()
    return sid


def metadata_file(t: Table, sid: int) -> str:
    storage = StorageType(t.schema.options.get("metadata.iceberg.storage", "table-location"))
    return f"{metadata_dir(t.path, storage)}/v{sid}.metadata.json"


def batch(ids: range, dt: str = "a", with_w: bool = False) -> pa.Table:
    cols: dict[str, Any] = {"dt": [dt if i % 3 else "b" for i in ids], "id": list(ids),
                            "v": [f"v{i}" if i % 5 else None for i in ids], "d": [i / 4 for i in ids]}
    schema = S
    if with_w:
        cols["w"] = [i * 10 for i in ids]
        schema = S.append(pa.field("w", pa.int64()))
    return pa.table(cols, schema=schema)


def assert_every_snapshot(t: Table, tmp_path: Path, expect_all: bool = True) -> list[dict[str, Any]]:
    """pyiceberg reads the rows the engine reads at every snapshot the newest metadata lists (with ``expect_all``:
    exactly Paimon's snapshots)."""
    t = t.refresh()
    latest = t.latest_snapshot_id()
    assert latest is not None
    metadata = metadata_file(t, latest)
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
    options = ICEBERG | {"bucket": bucket} | ({"bucket-key": "id"} if bucket != "-1" else {})
    t = Catalog(str(tmp_path / "wh")).create_table("db.t", schema=S, partition_keys=["dt"] if partitioned else [],
                                                   options=options)
    committed(t, lambda: t.write(batch(range(20))))
    committed(t, lambda: t.write(batch(range(20, 30))))
    t.alter(AddColumn("w", pa.int64()))  # a schema change commits no snapshot
    t = t.refresh()
    committed(t, lambda: t.write(batch(range(30, 40), with_w=True)))
    committed(t, lambda: t.maintenance.compact(full=True))
    committed(t, lambda: t.write(batch(range(40, 45), with_w=True), overwrite=True))
    info = assert_every_snapshot(t, tmp_path / "reads")
    assert info[-1]["schema"] == ["dt", "id", "v", "d", "w"]
    listed = json.loads(Path(metadata_file(t, t.latest_snapshot_id() or 0)).read_text())
    assert [s["summary"]["operation"] for s in listed["snapshots"]][-1] == "overwrite"
    assert len(listed["schemas"]) == 2


def test_primary_key_table_shows_the_last_full_compaction(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                        ("v", pa.string()), ("d", pa.float64())])
    t = Catalog(str(tmp_path / "wh")).create_table("db.pk", schema=schema, primary_keys=["dt", "id"],
                                                   partition_keys=["dt"], options=ICEBERG | {"bucket": "2"})
    first = committed(t, lambda: t.write(batch(range(20)).cast(schema)))
    compacted = committed(t, lambda: t.maintenance.compact(full=True))
    committed(t, lambda: t.write(batch(range(10, 30)).cast(schema)))
    t = t.refresh()
    (at_first, at_compacted, at_latest), _ = pyiceberg_read(tmp_path, metadata_file(t, t.latest_snapshot_id() or 0),
                                                            [first, compacted, t.latest_snapshot_id() or 0])
    columns = ["dt", "id", "v", "d"]
    assert at_first.num_rows == 0  # level-0 files only: Iceberg sees nothing before a full compaction
    assert rows(at_compacted, columns) == rows(t.read(snapshot_id=compacted), columns)
    assert rows(at_latest, columns) == rows(at_compacted, columns)  # new level-0 files are not visible yet
    again = committed(t, lambda: t.maintenance.compact(full=True))
    (at_again,), _ = pyiceberg_read(tmp_path, metadata_file(t, again), [again])
    assert rows(at_again, columns) == rows(t.read(), columns)


def test_drop_partition_and_hadoop_catalog_storage(tmp_path: Path) -> None:
    t = Catalog(str(tmp_path / "wh")).create_table(
        "db.h", schema=S, partition_keys=["dt"], options={"metadata.iceberg.storage": "hadoop-catalog"})
    committed(t, lambda: t.write(batch(range(12))))
    committed(t, lambda: t.maintenance.drop_partitions([{"dt": "b"}]))
    assert metadata_file(t, 2).startswith(f"{tmp_path}/wh/iceberg/db/h/metadata/")
    assert not Path(t.path, "metadata").exists()
    assert_every_snapshot(t, tmp_path / "reads")
    assert set(t.read().column("dt").to_pylist()) == {"a"}


def test_expired_snapshots_leave_the_metadata_retained_ones_stay_readable(tmp_path: Path) -> None:
    t = Catalog(str(tmp_path / "wh")).create_table("db.t", schema=S, options=ICEBERG)
    for i in range(5):
        committed(t, lambda i=i: t.write(batch(range(i * 10, i * 10 + 10))))
    t = t.refresh()
    before = [s.id for s in t.snapshots()]
    t.expire_snapshots(retain_max=2, retain_min=1)
    kept = [s.id for s in t.snapshots()]
    assert kept == before[-2:]
    latest = committed(t, lambda: t.write(batch(range(100, 105))))  # Java too expires Iceberg snapshots then
    info = assert_every_snapshot(t, tmp_path / "reads")  # exactly Paimon's retained snapshots, each readable
    assert info[-1]["snapshots"] == [*kept, latest] and len(before) > 3
    names = {p.name for p in Path(t.path, "metadata").iterdir()}
    assert [n for n in names if n.endswith(".json")] == [f"v{latest}.metadata.json"]
    listed = json.loads(Path(metadata_file(t, latest)).read_text())["snapshots"]
    lists = {Path(s["manifest-list"]).name for s in listed}
    assert {n for n in names if n.startswith("snap-")} == lists  # the expired snapshots' manifest lists are gone


def test_rollback_rewrites_the_metadata_of_the_target(tmp_path: Path) -> None:
    t = Catalog(str(tmp_path / "wh")).create_table("db.t", schema=S, partition_keys=["dt"], options=ICEBERG)
    for i in range(4):
        committed(t, lambda i=i: t.write(batch(range(i * 10, i * 10 + 10))))
    target = [s.id for s in t.refresh().snapshots()][1]
    expected = t.read(snapshot_id=target).column("id").to_pylist()
    t.rollback_to(target)
    names = sorted(p.name for p in Path(t.path, "metadata").iterdir() if p.name.endswith(".json"))
    assert names == [f"v{target}.metadata.json"]
    assert_every_snapshot(t, tmp_path / "reads", expect_all=False)
    latest = committed(t, lambda: t.write(batch(range(90, 95))))
    info = assert_every_snapshot(t, tmp_path / "reads2", expect_all=False)
    assert info[-1]["snapshots"] == [target, latest]
    assert sorted(t.read().column("id").to_pylist()) == sorted([*expected, *range(90, 95)])
