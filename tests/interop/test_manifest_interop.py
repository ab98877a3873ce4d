"""Manifests merged, fully compacted, ordered by partition and written one partition per Avro block read the same in
pypaimon 2.1.0; pypaimon's own manifests (plain blocks) read the same in our partition-filtered plans."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from tests.interop.conftest import DATABASE, PypaimonClient

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([pa.field("p", pa.int32(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    pa.field("v", pa.string())])
IDENT = f"{DATABASE}.manifests"
OPTIONS = {"bucket": "2", "manifest.merge-min-count": "2", "manifest.target-file-size": "4kb",
           "manifest.full-compaction-threshold-size": "8kb"}


def batch(i: int) -> pa.Table:
    ids = [i * 10 + k for k in range(10)] + list(range(0, 30, 7))  # new keys, and updates of old ones
    return pa.table({"p": [k % 5 for k in ids], "id": ids, "v": [f"v{i}-{k}" for k in ids]}, schema=SCHEMA)


def rows(t: pa.Table) -> list[tuple[object, ...]]:
    return sorted((r["p"], r["id"], r["v"]) for r in t.select(["p", "id", "v"]).to_pylist())


def test_pypaimon_reads_merged_and_sorted_manifests(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    t = Catalog(str(warehouse)).create_table(IDENT, SCHEMA, primary_keys=["p", "id"], partition_keys=["p"],
                                             options=OPTIONS)
    for i in range(12):
        t.write(batch(i))
        if i % 4 == 3:
            t.maintenance.compact(full=True)  # DELETE entries: full manifest compaction drops them
    versions: list[dict[str, int]] = [{}] + [{"snapshot": s.id} for s in t.snapshots()][-4:]
    ours = [t.read()] + [t.read(snapshot_id=v["snapshot"]) for v in versions[1:]]
    theirs = pypaimon.read_many(warehouse, IDENT, versions)
    for version, mine, other in zip(versions, ours, theirs, strict=True):
        assert rows(other) == rows(mine), version
    assert rows(t.read(filter=[("p", "=", 3)])) == [r for r in rows(ours[0]) if r[0] == 3]


def test_we_plan_pypaimon_manifests_by_partition(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    pypaimon.write(warehouse, IDENT, SCHEMA, ["p", "id"], ["p"], {"bucket": "2"}, [batch(i) for i in range(3)])
    t = Catalog(str(warehouse)).get_table(IDENT)
    every = rows(pypaimon.read(warehouse, IDENT))
    assert rows(t.read()) == every
    for p in range(5):
        assert rows(t.read(filter=[("p", "=", p)])) == [r for r in every if r[0] == p]
    t.write(batch(3))  # our commit merges pypaimon's manifests with ours
    assert rows(pypaimon.read(warehouse, IDENT)) == rows(t.read())
