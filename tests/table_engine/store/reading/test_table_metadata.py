"""The engine's read-only metadata queries (Table.metadata()): snapshots after an id or a time, of a commit kind,
touching a partition; a partition's files, rows, directory and done mark. Nothing is written."""

from __future__ import annotations

import ast
import hashlib
import os
import pathlib

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import PartitionSpecError
from table_engine.store.reading.table_metadata import SUCCESS_FILE, NewSnapshots, PartitionStats
from table_engine.table import Table

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("h", pa.int32())])
ROOT = pathlib.Path(__file__).resolve().parents[3]


def rows(ids: list[int], dt: str | None, h: int = 0) -> pa.Table:
    return pa.table({"id": ids, "dt": [dt] * len(ids), "h": pa.array([h] * len(ids), pa.int32())}, schema=SCHEMA)


@pytest.fixture
def table(catalog: Catalog) -> Table:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt", "h"], partition_keys=["dt", "h"],
                             options={"bucket": "1"})
    t.write(rows([1, 2], "2026-11-20"))          # 1 APPEND
    t.write(rows([3], "a/b=c", 5))               # 2 APPEND (a value that needs escaping)
    t.maintenance.compact(full=True)                         # 3 COMPACT
    return t


def file_hashes(root: str) -> dict[str, str]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as f:
                out[os.path.join(dirpath, n)] = hashlib.sha256(f.read()).hexdigest()
    return out


def test_find_snapshot(table: Table) -> None:
    md = table.metadata()
    assert md.latest_snapshot().id == 3  # type: ignore[union-attr]
    assert md.find_snapshot().id == 1  # type: ignore[union-attr]
    assert md.find_snapshot(after_snapshot_id=1).id == 2  # type: ignore[union-attr]
    assert md.find_snapshot(after_snapshot_id=3) is None
    assert md.find_snapshot(commit_kinds=["compact"]).id == 3  # type: ignore[union-attr]
    assert md.find_snapshot(after_snapshot_id=1, partition={"dt": "2026-11-20"}).id == 3  # type: ignore[union-attr]
    assert md.find_snapshot(partition="dt=a/b\\=c,h=5").id == 2  # type: ignore[union-attr]
    assert md.find_snapshot(partition={"dt": "2026-11-22"}) is None
    first = md.find_snapshot()
    assert first is not None
    assert md.find_snapshot(after_time_millis=md.latest_snapshot().time_millis) is None  # type: ignore[union-attr]
    assert md.find_snapshot(after_time_millis=0).id == 1  # type: ignore[union-attr]
    assert md.snapshot_at_or_before(first.time_millis).id >= 1  # type: ignore[union-attr]
    assert md.snapshot_at_or_before(0) is None
    with pytest.raises(PartitionSpecError, match="not partition keys"):
        md.find_snapshot(partition={"day": "x"})


def test_partition_stats_path_and_done(table: Table) -> None:
    md = table.metadata()
    assert md.partition_stats({"dt": "2026-11-20"}) == PartitionStats(3, 1, 2, False)
    assert md.partition_stats({"dt": "2026-11-22"}) == PartitionStats(3, 0, 0, False)
    assert md.partition_stats({"h": "5"}).row_count == 1  # a spec may select several partitions
    directory = md.partition_path({"dt": "a/b=c", "h": 5})
    assert directory == f"{table.path}/dt=a%2Fb%3Dc/h=5"
    with pytest.raises(ValueError, match="every partition key"):
        md.partition_path({"dt": "a/b=c"})
    assert not md.partition_done({"dt": "a/b=c", "h": 5})
    table.file_io.write_bytes(f"{directory}/{SUCCESS_FILE}", b'{"creationTime":1}')
    assert md.partition_done({"dt": "a/b=c", "h": "5"}) and not md.partition_done({"dt": "a/b=c"})
    assert md.partition_stats("dt=a/b\\=c,h=5") == PartitionStats(3, 1, 1, True)


def test_empty_table_and_default_partition(catalog: Catalog) -> None:
    t = catalog.create_table("db.e", SCHEMA, partition_keys=["dt", "h"])
    md = t.metadata()
    assert md.latest_snapshot() is None and md.find_snapshot() is None
    assert md.partition_stats({"dt": "x"}) == PartitionStats(None, 0, 0, False)
    t.write(rows([1], None))
    assert md.partition_stats({"dt": None}).file_count == 1
    assert md.partition_path({"dt": None, "h": 0}) == f"{t.path}/dt=__DEFAULT_PARTITION__/h=0"


def test_snapshots_after_reads_new_snapshots_in_order_and_names_an_expired_gap(table: Table) -> None:
    md = table.metadata()
    assert [s.id for s in md.snapshots_after(0).snapshots] == [1, 2, 3]
    assert [s.id for s in md.snapshots_after(1, limit=1).snapshots] == [2]
    assert md.snapshots_after(3) == NewSnapshots(())
    assert md.touches(md.snapshots_after(1).snapshots[0], {"h": 5})
    assert not md.touches(md.snapshots_after(1).snapshots[0], {"dt": "2026-11-20"})
    table.write(rows([4], "x"))
    table.write(rows([5], "x"))
    table.expire_snapshots(retain_min=1, retain_max=1)  # 1..4 gone
    found = md.snapshots_after(2)
    assert [s.id for s in found.snapshots] == [5] and found.expired == (3, 4)
    assert md.snapshots_after(4) == NewSnapshots((found.snapshots[0],))


def test_snapshots_after_a_rollback_below_the_watermark_names_the_newest(table: Table) -> None:
    md = table.metadata()
    table.rollback_to(1)
    assert md.snapshots_after(3) == NewSnapshots((), rolled_back_to=1) == md.snapshots_after(7)
    table.write(rows([9], "x"))
    assert [s.id for s in md.snapshots_after(1).snapshots] == [2]


def test_metadata_queries_write_nothing(table: Table, warehouse: str) -> None:
    before = file_hashes(warehouse)
    md = table.metadata()
    md.snapshots_after(0)
    md.find_snapshot(partition={"dt": "2026-11-20"}, commit_kinds=["APPEND"])
    md.partition_stats({"dt": "2026-11-20"})
    md.partition_done({"dt": "2026-11-20", "h": 0})
    assert file_hashes(warehouse) == before


def test_the_provider_reads_metadata_only_through_the_engine_facade() -> None:
    """provider/ never builds engine paths or a FileIO: it imports no table_engine.io/format module at run time."""
    problems = []
    for path in sorted((ROOT / "provider").rglob("*.py")):
        tree = ast.parse(path.read_text())
        guarded = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and id(node) not in guarded and node.module and \
                    node.module.startswith(("table_engine.io", "table_engine.format")):
                problems.append(f"{path.relative_to(ROOT)} imports {node.module}")
    assert not problems, problems
