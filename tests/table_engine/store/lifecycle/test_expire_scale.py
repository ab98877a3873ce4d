"""Snapshot expiry costs O(k) reads for k expired snapshots, whatever the number of retained ones (issue 14)."""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from table_engine import Catalog
from table_engine.io.counting import CountingFileIO
from table_engine.store.lifecycle.expire import ExpireConfig, expire_snapshots
from table_engine.table import Table

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])


def history(catalog: Catalog, name: str, snapshots: int) -> Table:
    """A partitioned primary-key table whose writers compact (COMPACT snapshots delete files), with a tag."""
    t = catalog.create_table(name, SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2", "manifest.merge-min-count": "3"})
    i = 0
    while (t.latest_snapshot_id() or 0) < snapshots:
        dt = ["2024-01-01", "2024-01-02"][i % 2]
        t.write(pa.table({"dt": [dt] * 4, "id": list(range(i % 5, i % 5 + 4)), "v": [i] * 4}, schema=SCHEMA))
        if i == 1:
            t.create_tag("t1")
        i += 1
    return t


def expire_counted(t: Table, k: int) -> tuple[CountingFileIO, list[int]]:
    fio = CountingFileIO(t.file_io)
    ctx = dataclasses.replace(t.store, file_io=fio)
    retained = t.latest_snapshot_id() - k  # type: ignore[operator]
    result = expire_snapshots(ctx, ExpireConfig(retain_min=retained, retain_max=retained))
    return fio, result.expired_snapshot_ids


def test_expiring_k_snapshots_reads_the_same_at_50_and_at_300(catalog: Catalog) -> None:
    small, large = history(catalog, "db.small", 50), history(catalog, "db.large", 300)
    counts = []
    for t in (small, large):
        before = [s.id for s in t.snapshots()]
        fio, expired = expire_counted(t, 5)
        assert expired == before[:5]
        assert [s.id for s in t.snapshots()] == before[5:]
        t.read()  # every retained snapshot still reads
        counts.append((fio.metadata_reads(), fio.reads(), dict(fio.calls)))
    assert counts[0] == counts[1], counts
