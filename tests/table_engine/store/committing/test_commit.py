"""Commit protocol: two-phase API, idempotency, conflicts, manifest merging, rolling, buffers, dynamic buckets."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommitConflictError, CorruptMetadataError
from table_engine.format.manifest_list import read_manifest_list
from table_engine.store.reading.scan import live_entries

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def data(ids, v="x"):
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [f"{v}{i}" for i in ids]}, schema=SCHEMA)


def test_two_phase_many_writers_one_commit(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "3"})
    messages = []
    for task in range(4):
        w = t.new_write()
        w.write(data(range(task * 100, task * 100 + 100)))
        messages += w.prepare_commit()
    assert t.commit(messages) == 1
    assert t.read().num_rows == 400
    assert t.latest_snapshot().delta_record_count == 400


def test_commit_is_idempotent_per_user_and_identifier(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    w = t.new_write()
    w.write(data(range(10)))
    msgs = w.prepare_commit()
    assert t.commit(msgs, commit_user="job-1", commit_identifier=7) == 1
    assert t.commit(msgs, commit_user="job-1", commit_identifier=7) == 1  # a retried driver: no second snapshot
    assert t.latest_snapshot_id() == 1
    w.write(data(range(10, 20)))
    assert t.commit(w.prepare_commit(), commit_user="job-1", commit_identifier=8) == 2
    assert t.read().num_rows == 20


@pytest.mark.parametrize("producer", ["none", "lookup"])
def test_deleting_a_file_that_is_gone_is_a_conflict(catalog: Catalog, producer: str) -> None:
    """The writer's compaction conflicts: it is dropped and the new data committed, as Paimon's separate APPEND
    and COMPACT commits end; unless the compaction produces the changelog (``lookup``): then nothing is committed
    (consumers would miss the changelog of the new data) and the caller writes again."""
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "changelog-producer": producer})
    t.write(data(range(5)))
    w = t.new_write()
    w.write(data(range(5, 8)))
    msgs = w.prepare_commit()
    stale = live_entries(t.file_io, t.path, t.latest_snapshot())[0].file
    t.write(data(range(3)), overwrite=True)  # removes the file 'stale'
    msgs[0].compact_before.append(stale)
    before = t.latest_snapshot_id()
    assert before is not None
    if producer == "lookup":
        with pytest.raises(CommitConflictError, match=stale.file_name):
            t.commit(msgs)
        assert t.latest_snapshot_id() == before
        assert sorted(t.read().column("id").to_pylist()) == [0, 1, 2]
    else:
        assert t.commit(msgs) == before + 1
        assert t.snapshot(before + 1).commit_kind.value == "APPEND"
        assert sorted(t.read().column("id").to_pylist()) == [0, 1, 2, 5, 6, 7]


def test_manifests_are_merged(catalog: Catalog) -> None:
    # write-only: no writer compaction, so every write is exactly one snapshot
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "manifest.merge-min-count": "5", "write-only": "true"})
    for i in range(40):
        t.write(data([i]))
    snap = t.latest_snapshot()
    base = read_manifest_list(t.file_io, f"{t.path}/manifest/{snap.base_manifest_list}")
    assert len(base) < 10, f"{len(base)} manifests after 40 commits"
    assert t.read().num_rows == 40
    assert all(s.total_record_count == s.id for s in t.snapshots())


def test_rolling_files_and_spilling_buffer(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "target-file-size": "64 kb", "write-buffer-size": "128 kb"})
    w = t.new_write()
    for start in range(0, 50_000, 5_000):
        w.write(data(range(start, start + 5_000)))
    w.write(data(range(100), v="new"))
    t.commit(w.prepare_commit())
    files = [e.file for e in live_entries(t.file_io, t.path, t.latest_snapshot())]
    assert len(files) > 5
    got = t.read()
    assert got.num_rows == 50_000
    assert dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist()))[42] == "new42"


def test_dynamic_bucket_keeps_keys_in_their_bucket(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                             options={"dynamic-bucket.target-row-num": "100"})
    t.write(data(range(250)))
    t.write(data(range(200, 400), v="u"))
    entries = live_entries(t.file_io, t.path, t.latest_snapshot())
    assert len({e.bucket for e in entries}) == 4
    assert all(e.total_buckets == -1 for e in entries)
    got = t.read()
    assert got.num_rows == 400 and sorted(got.column("id").to_pylist()) == list(range(400))
    assert dict(zip(got.column("id").to_pylist(), got.column("v").to_pylist()))[220] == "u220"


def test_corrupt_snapshot_and_manifest_named(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(data(range(3)))
    snap = t.latest_snapshot()
    manifest = os.path.join(t.path, "manifest", snap.delta_manifest_list)
    with open(manifest, "wb") as f:
        f.write(b"garbage")
    with pytest.raises(CorruptMetadataError, match=snap.delta_manifest_list):
        t.read()
    with pytest.raises(CorruptMetadataError, match=snap.delta_manifest_list):
        t.write(data([9]))
    with open(os.path.join(t.path, "snapshot", "snapshot-1"), "w") as f:
        f.write("{not json")
    with pytest.raises(CorruptMetadataError, match="snapshot-1"):
        t.read()
    assert sorted(os.listdir(os.path.join(t.path, "snapshot"))) == ["EARLIEST", "LATEST", "snapshot-1"]


def test_a_stale_latest_hint_never_makes_a_commit_reuse_an_expired_id(catalog: Catalog) -> None:
    """A slow committer left LATEST at 2 and a concurrent expiry deleted snapshot 3 (but not yet 2) while 4 and 5
    exist: the hint alone says 2 is the latest. A commit must still build on 5 and publish 6; publishing 3 again
    would put the new rows outside the table's history (they were lost this way under concurrent expiry)."""
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    for i in range(5):
        t.write(data([i]))
    snapshots = f"{t.path}/snapshot"
    with open(f"{snapshots}/LATEST", "w") as f:
        f.write("2")
    os.remove(f"{snapshots}/snapshot-3")
    t.write(data([10]))
    assert t.latest_snapshot_id() == 6 and not os.path.exists(f"{snapshots}/snapshot-3")
    assert sorted(t.read().column("id").to_pylist()) == [0, 1, 2, 3, 4, 10]
