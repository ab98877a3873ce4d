"""Orphan files: old unreferenced files go, young ones and anything referenced stay; dry run; safety checks."""

from __future__ import annotations

import os
import shutil
import time

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import OptionError, TableEngineError
from table_engine.table import Table
from tests.table_engine.store.lifecycle.lifecycle_support import (
    assert_exact_files,
    assert_nothing_missing,
    disk_files,
    rows,
)

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64())])
DAY = 86_400


def make(catalog: Catalog) -> Table:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2"})
    for i in range(4):
        t.write(pa.table({"dt": ["a", "b"], "id": [i, i]}, schema=SCHEMA))
    return t


def plant(path: str, age_seconds: float) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"orphan")
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))
    return path


def age_everything(t: Table, seconds: float) -> None:
    stamp = time.time() - seconds
    for dirpath, _, files in os.walk(t.path):
        for f in files:
            os.utime(os.path.join(dirpath, f), (stamp, stamp))


def test_removes_old_orphans_only(catalog: Catalog) -> None:
    t = make(catalog)
    age_everything(t, 2 * DAY)
    old = [
        plant(f"{t.path}/dt=a/bucket-0/data-dead-0.parquet", 2 * DAY),
        plant(f"{t.path}/dt=b/bucket-1/changelog-dead-0.parquet", 2 * DAY),
        plant(f"{t.path}/manifest/manifest-dead-0", 2 * DAY),
        plant(f"{t.path}/manifest/manifest-list-dead-0", 2 * DAY),
        plant(f"{t.path}/index/index-dead-0", 2 * DAY),
        plant(f"{t.path}/snapshot/.snapshot-9.abc.tmp", 2 * DAY),
    ]
    young = plant(f"{t.path}/dt=a/bucket-0/data-in-flight-0.parquet", 60)
    unrelated = plant(f"{t.path}/other-dir/data-x-0.parquet", 2 * DAY)  # not a Paimon directory
    before = rows(t.read())
    dry = t.maintenance.remove_orphan_files(dry_run=True)
    assert sorted(dry.paths) == sorted(old) and dry.total_bytes == 6 * len(old) and dry.count == len(old)
    assert all(os.path.exists(p) for p in old)
    result = t.maintenance.remove_orphan_files()
    assert sorted(result.paths) == sorted(old)
    assert not any(os.path.exists(p) for p in old)
    assert os.path.exists(young) and os.path.exists(unrelated)
    assert rows(t.read()) == before
    for sid in (1, 2, 3, 4):
        t.read(snapshot_id=sid)
    assert t.file_io.exists(f"{t.path}/snapshot/LATEST")


def test_files_a_dead_spark_job_staged_are_orphans(catalog: Catalog) -> None:
    t = make(catalog)
    age_everything(t, 2 * DAY)
    old = plant(f"{t.path}/spark-staging-0123/task-0-attempt-0-ab.arrow", 2 * DAY)
    young = plant(f"{t.path}/spark-staging-4567/task-1-attempt-0-cd.arrow", 60)  # a job in flight
    assert t.maintenance.remove_orphan_files().paths == [old]
    assert not os.path.exists(old) and os.path.exists(young)


def test_custom_threshold(catalog: Catalog) -> None:
    t = make(catalog)
    p = plant(f"{t.path}/dt=a/bucket-0/data-dead-0.parquet", 120)
    assert t.maintenance.remove_orphan_files().count == 0  # default: one day
    assert t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000) - 60_000).paths == [p]
    with pytest.raises(OptionError, match="future"):
        t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000) + 60_000)


def test_files_of_tags_and_expired_snapshots(catalog: Catalog) -> None:
    t = make(catalog)
    t.create_tag("keep", 2)
    t.maintenance.compact(full=True)
    t.write(pa.table({"dt": ["a"], "id": [9]}, schema=SCHEMA))
    # leave garbage of "expired" snapshots: delete snapshot files 1 and 3 without their files
    for sid in (1, 3):
        os.remove(f"{t.path}/snapshot/snapshot-{sid}")
    age_everything(t, 2 * DAY)
    result = t.maintenance.remove_orphan_files()
    assert result.count > 0
    assert rows(t.read(tag="keep")) == sorted((d, i) for d in "ab" for i in (0, 1))
    t.read()
    # data files a retained manifest still names (even as deleted) count as used, as in Paimon: nothing that is
    # referenced goes; the rest is snapshot expiry's job
    assert_nothing_missing(t)
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert_exact_files(t)


def test_branch_files_are_referenced(catalog: Catalog) -> None:
    t = make(catalog)
    branch = f"{t.path}/branch/branch-b1"
    os.makedirs(f"{branch}/snapshot")
    shutil.copy(f"{t.path}/snapshot/snapshot-2", f"{branch}/snapshot/snapshot-2")
    t.expire_snapshots(retain_min=1, time_retained=0)
    age_everything(t, 2 * DAY)
    t.maintenance.remove_orphan_files()
    # the branch's snapshot 2 still reads: its files survived both expiry and orphan cleaning
    from table_engine.table import Table as T

    branch_table = T(t.file_io, branch, "db.t$branch_b1", t.schema)
    branch_table.file_io = t.file_io
    snap = branch_table.snapshot(2)
    from table_engine.store.lifecycle.file_refs import FileRefs

    for p in FileRefs(t.store).live_paths(snap):
        assert os.path.exists(p)


def test_aborts_when_live_metadata_is_missing(catalog: Catalog) -> None:
    t = make(catalog)
    age_everything(t, 2 * DAY)
    snap = t.latest_snapshot()
    assert snap is not None
    os.remove(f"{t.path}/manifest/{snap.delta_manifest_list}")
    before = disk_files(t)
    with pytest.raises(TableEngineError, match="aborted"):
        t.maintenance.remove_orphan_files()
    assert disk_files(t) == before


def test_waits_for_a_tag_in_flight_on_an_expired_snapshot(catalog: Catalog, monkeypatch) -> None:
    """Simulation seed append-race 2689: a tag was written on snapshot 1, an expiry removed snapshot 1 and its
    metadata before the tag's creator checked it, and orphan cleaning read the tag in that moment: its manifest
    list is missing although nothing else moved. The creator withdraws such a tag (tags.py); orphan cleaning waits
    and reads again instead of aborting with "repair the table"."""
    from table_engine.format.tag_file import tag_path
    from table_engine.store.lifecycle import orphans

    t = make(catalog)
    first = t.snapshot(1)
    t.expire_snapshots(retain_min=1, time_retained=0)
    in_flight = tag_path(t.path, "in-flight")
    t.file_io.write_bytes(in_flight, first.to_json().encode())  # written, not yet checked by its creator
    plant(f"{t.path}/dt=a/bucket-0/data-orphan.parquet", 2 * DAY)
    waits: list[float] = []

    def creator_withdraws(seconds: float) -> None:  # the creator runs while orphan cleaning waits
        waits.append(seconds)
        t.file_io.delete(in_flight)

    monkeypatch.setattr(orphans.time, "sleep", creator_withdraws)
    result = t.maintenance.remove_orphan_files()
    assert waits == [orphans._COLLECT_WAIT_SECONDS]
    assert result.count == 1
    assert_nothing_missing(t)


def test_still_aborts_when_a_tag_stays_without_its_metadata(catalog: Catalog, monkeypatch) -> None:
    from table_engine.format.tag_file import tag_path
    from table_engine.store.lifecycle import orphans

    t = make(catalog)
    first = t.snapshot(1)
    t.expire_snapshots(retain_min=1, time_retained=0)
    t.file_io.write_bytes(tag_path(t.path, "broken"), first.to_json().encode())
    age_everything(t, 2 * DAY)
    before = disk_files(t)
    waits: list[float] = []
    monkeypatch.setattr(orphans.time, "sleep", waits.append)
    with pytest.raises(TableEngineError, match="aborted"):
        t.maintenance.remove_orphan_files()
    assert len(waits) == orphans._COLLECT_ATTEMPTS - 1 and disk_files(t) == before
