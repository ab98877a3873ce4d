"""Orphan cleaning of many files: streamed listing, deletion in batches, nothing referenced is touched (issue 14).

Peak memory over 100,000 files is measured outside the test suite (see the report of issue 14); here, at a small
size, more orphans than one delete batch across several snapshots, manifests and tags."""

from __future__ import annotations

import dataclasses
import os
import time

import pyarrow as pa

from table_engine import Catalog
from table_engine.io.counting import CountingFileIO
from table_engine.store.lifecycle.file_refs import FileRefs
from table_engine.store.lifecycle.orphans import DELETE_BATCH, remove_orphan_files
from tests.table_engine.store.lifecycle.lifecycle_support import assert_nothing_missing, rows

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64())])
DAY = 86_400


def test_more_orphans_than_a_delete_batch_all_go_and_referenced_files_stay(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2", "manifest.merge-min-count": "3"})
    for i in range(12):
        t.write(pa.table({"dt": ["a", "b"], "id": [i % 5, i % 5]}, schema=SCHEMA))
        if i == 3:
            t.create_tag("t3")
    before = {sid: rows(t.read(snapshot_id=sid)) for sid in (s.id for s in t.snapshots())}
    tagged = rows(t.read(tag="t3"))
    stamp = time.time() - 2 * DAY
    for dirpath, _, files in os.walk(t.path):
        for f in files:
            os.utime(os.path.join(dirpath, f), (stamp, stamp))
    planted = []
    n = DELETE_BATCH * 2 + 17
    for i in range(n):
        d = f"{t.path}/dt={'ab'[i % 2]}/bucket-{i % 3}" if i % 4 else f"{t.path}/manifest"
        os.makedirs(d, exist_ok=True)
        path = f"{d}/{'data' if i % 4 else 'manifest'}-orphan-{i}-0{'.parquet' if i % 4 else ''}"
        with open(path, "wb") as f:
            f.write(b"x")
        os.utime(path, (stamp, stamp))
        planted.append(path)
    fio = CountingFileIO(t.file_io)
    ctx = dataclasses.replace(t.store, file_io=fio)
    dry = remove_orphan_files(ctx, dry_run=True)
    assert sorted(dry.paths) == sorted(planted) and fio.calls["delete"] == 0
    fio.reset()
    result = remove_orphan_files(ctx)
    assert result.count == n and fio.calls["delete"] == n
    assert not any(os.path.exists(p) for p in planted)
    assert {sid: rows(t.read(snapshot_id=sid)) for sid in before} == before
    assert rows(t.read(tag="t3")) == tagged
    assert_nothing_missing(t)
    assert remove_orphan_files(ctx).count == 0


def test_file_refs_without_cache_keep_nothing(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2"})
    t.write(pa.table({"dt": ["a", "b"], "id": [1, 2]}, schema=SCHEMA))
    snap = t.latest_snapshot()
    assert snap is not None
    cached, uncached = FileRefs(t.store), FileRefs(t.store, cache=False)
    assert cached.live_paths(snap) == uncached.live_paths(snap)
    assert cached._manifests and cached._lists
    assert not uncached._manifests and not uncached._lists and not uncached._indexes
