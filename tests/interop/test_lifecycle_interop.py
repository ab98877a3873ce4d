"""Lifecycle interop with pypaimon 2.1.0: tables our engine expired, tagged and rolled back read the same in
pypaimon; tables pypaimon wrote (tags, changelog-producer=input) survive our expiry, tag deletion and rollback."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from tests.interop.conftest import DATABASE, PypaimonClient
from tests.table_engine.store.lifecycle.lifecycle_support import assert_exact_files, assert_nothing_missing

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    pa.field("v", pa.string())])
IDENT = f"{DATABASE}.lifecycle"


def batch(i: int) -> pa.Table:
    ids = [i % 7, (i * 3) % 11, 100 + i]
    return pa.table({"dt": [["2024-01-01", "2024-01-02"][k % 2] for k in ids], "id": ids,
                     "v": [f"v{i}-{k}" for k in ids]}, schema=SCHEMA)


def canon(t: pa.Table) -> list[tuple[object, ...]]:
    return sorted((r["dt"], r["id"], r["v"]) for r in t.select(["dt", "id", "v"]).to_pylist())


def test_pypaimon_reads_engine_table_after_lifecycle(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    t = Catalog(str(warehouse)).create_table(IDENT, SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                             options={"bucket": "2", "manifest.merge-min-count": "3"})
    for i in range(5):
        t.write(batch(i))
    t.create_tag("plain", 2, creator="airflow:d:t:run")  # a creator recorded in the tag file's properties
    t.create_tag("ttl", 4, time_retained_ms=86_400_000)
    t.maintenance.compact(full=True)
    for i in range(5, 9):
        t.write(batch(i))
    t.create_tag("doomed", t.latest_snapshot_id(), creator="airflow:d:t:run")
    t.write(batch(9))
    t.expire_snapshots(retain_min=3, time_retained=0)
    t.rollback_to("doomed")  # removes the newest snapshot, keeps the expiry's effects
    assert not (t.latest_snapshot().properties or {})  # the tag's creator stays in the tag
    t.delete_tag("ttl")
    t.maintenance.drop_partitions([{"dt": "2024-01-02"}])
    t.write(batch(10))
    t.expire_snapshots(retain_min=2, time_retained=0)
    assert_exact_files(t)
    versions = [{}, {"tag": "plain"}, {"tag": "doomed"}] + [{"snapshot": s.id} for s in t.snapshots()]
    ours = [t.read(), t.read(tag="plain"), t.read(tag="doomed")] + [t.read(snapshot_id=s.id) for s in t.snapshots()]
    theirs = pypaimon.read_many(warehouse, IDENT, versions)
    for version, mine, other in zip(versions, ours, theirs):
        assert canon(other) == canon(mine), version
    # pypaimon keeps writing on top of the expired and rolled-back table
    pypaimon.write(warehouse, IDENT, SCHEMA, [], [], {}, [batch(11)], create=False)
    assert canon(t.read()) == canon(pypaimon.read(warehouse, IDENT))


def test_engine_lifecycle_on_pypaimon_table(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    snapshot_ids = pypaimon.write(warehouse, IDENT, SCHEMA, ["dt", "id"], ["dt"],
                                  {"bucket": "2", "changelog-producer": "input"},
                                  [batch(i) for i in range(6)], tags={"t2": 2, "t4": 4})
    assert snapshot_ids == [1, 2, 3, 4, 5, 6]
    t = Catalog(str(warehouse)).get_table(IDENT)
    assert t.list_tags() == ["t2", "t4"]
    expected = {name: canon(t.read(tag=name)) for name in ("t2", "t4")}
    latest = canon(t.read())
    snaps = t.snapshots()
    assert all(s.changelog_manifest_list for s in snaps)
    result = t.expire_snapshots(retain_min=2, time_retained=0)
    assert result.expired_snapshot_ids == [1, 2, 3, 4]
    assert result.deleted_changelog_files > 0
    assert_exact_files(t)
    t.delete_tag("t2")
    assert_exact_files(t)
    for name in ("t4",):
        assert canon(t.read(tag=name)) == expected[name]
        assert canon(pypaimon.read(warehouse, IDENT, tag=name)) == expected[name]
    assert canon(pypaimon.read(warehouse, IDENT)) == latest
    t.rollback_to("t4")
    assert_nothing_missing(t)
    assert canon(pypaimon.read(warehouse, IDENT)) == expected["t4"] == canon(t.read())
    pypaimon.write(warehouse, IDENT, SCHEMA, [], [], {}, [batch(20)], create=False)
    assert canon(pypaimon.read(warehouse, IDENT)) == canon(t.read())
    assert t.latest_snapshot_id() == 5
