"""Metadata checks without Spark: snapshots newer than an id/time, of a kind, touching a partition; partitions."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pytest
from paimon_provider.utils.metadata import (
    find_snapshot,
    latest_snapshot_info,
    open_table,
    partition_info,
)

from table_engine import Catalog
from table_engine.table import Table

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string()), ("h", pa.int32())])


def rows(ids: list[int], dt: str, h: int = 0) -> pa.Table:
    return pa.table({"id": ids, "v": [f"v{i}" for i in ids], "dt": [dt] * len(ids),
                     "h": pa.array([h] * len(ids), pa.int32())}, schema=SCHEMA)


@pytest.fixture
def table(tmp_path: pathlib.Path) -> Table:
    warehouse = str(tmp_path / "wh")
    t = Catalog(warehouse).create_table("db.t", SCHEMA, primary_keys=["id", "dt", "h"], partition_keys=["dt", "h"],
                                        options={"bucket": "1"})
    t.write(rows([1, 2], "2026-11-20"))          # 1 APPEND
    t.write(rows([3], "2026-11-21", 5))          # 2 APPEND
    t.maintenance.compact(full=True)                         # 3 COMPACT
    found = open_table(Catalog(warehouse), "db.t")
    assert found is not None
    return found


def test_open_table(tmp_path: pathlib.Path) -> None:
    catalog = Catalog(str(tmp_path))
    assert open_table(catalog, "db.t") is None and open_table(catalog, "t") is None
    catalog.create_table("db.t", SCHEMA)
    catalog.create_table("t", SCHEMA)
    assert open_table(catalog, "db.t").path == f"{tmp_path}/db.db/t"  # type: ignore[union-attr]
    assert open_table(catalog, "t").path == f"{tmp_path}/default.db/t"  # type: ignore[union-attr]


def test_find_snapshot_by_id_kind_and_partition(table: Table) -> None:
    assert find_snapshot(table).snapshot_id == 1  # type: ignore[union-attr]
    assert find_snapshot(table, after_snapshot_id=1).snapshot_id == 2  # type: ignore[union-attr]
    assert find_snapshot(table, after_snapshot_id=3) is None
    compact = find_snapshot(table, commit_kinds=["compact"])
    assert compact is not None and (compact.snapshot_id, compact.commit_kind) == (3, "COMPACT")
    assert find_snapshot(table, after_snapshot_id=1, partition={"dt": "2026-11-20"}).snapshot_id == 3  # type: ignore[union-attr]
    assert find_snapshot(table, partition={"dt": "2026-11-21", "h": "5"}).snapshot_id == 2  # type: ignore[union-attr]
    assert find_snapshot(table, commit_kinds=["APPEND"], partition={"dt": "2026-11-22"}) is None
    info = find_snapshot(table, after_snapshot_id=2)
    assert info is not None and info.to_dict()["commit_kind"] == "COMPACT"
    with pytest.raises(ValueError, match="not partition keys"):
        find_snapshot(table, partition={"day": "x"})


def test_find_snapshot_by_time(table: Table) -> None:
    latest = latest_snapshot_info(table)
    assert latest is not None and latest.snapshot_id == 3
    assert find_snapshot(table, after_time_millis=latest.time_millis) is None
    assert find_snapshot(table, after_time_millis=0).snapshot_id == 1  # type: ignore[union-attr]


def test_missing_table_has_no_snapshot(tmp_path: pathlib.Path) -> None:
    loc = open_table(Catalog(str(tmp_path)), "db.nothing")
    assert find_snapshot(loc) is None and latest_snapshot_info(loc) is None
    assert partition_info(loc, {"dt": "x"}) is None


def test_partition_info_data_and_done(table: Table) -> None:
    info = partition_info(table, {"dt": "2026-11-20"})
    assert info is not None and info.file_count == 1 and info.row_count == 2 and not info.done
    assert partition_info(table, {"dt": "2026-11-22"}).file_count == 0  # type: ignore[union-attr]
    directory = table.metadata().partition_path({"dt": "2026-11-21", "h": "5"})
    assert directory == f"{table.path}/dt=2026-11-21/h=5"
    table.file_io.write_bytes(f"{directory}/_SUCCESS", b'{"creationTime":1}')
    done = partition_info(table, {"dt": "2026-11-21", "h": 5})
    assert done is not None and done.done and done.to_dict()["partition"] == {"dt": "2026-11-21", "h": "5"}
