"""Table health from metadata only, against tables built into known states: level-0 backlog, small files, deletion
vectors, snapshots past retention, a lagging consumer, orphans, a postpone backlog; local disk and S3; bad input."""

from __future__ import annotations

import hashlib
import json
import os
import random
import time

import pyarrow as pa
import pytest

from table_engine import Catalog, clock
from table_engine.cli import main
from table_engine.clock import ManualClock, use_clock
from table_engine.errors import CommandError, MissingFileError, PartitionSpecError
from table_engine.ops import Health
from table_engine.schema_change import SetOption
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.lifecycle.expire import ExpireConfig, ExpireResult, expire_changelogs
from table_engine.table import Table

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
DAY = 86_400


def write(t: Table, ids: list[int], dt: str = "a", v: int = 0) -> None:
    t.write(pa.table({"dt": [dt] * len(ids), "id": ids, "v": [v] * len(ids)}, schema=SCHEMA))


def digest(path: str) -> dict[str, str]:
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def test_level0_backlog_sorted_runs_and_small_files_then_compaction(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1", "write-only": "true"})
    for i in range(4):
        write(t, [i], "a")
    write(t, [0], "b")
    h = t.maintenance.health()
    assert (h.snapshot_id, h.files, h.rows, h.level0_files, h.max_sorted_runs) == (5, 5, 5, 5, 4)
    a, b = h.buckets
    assert (a.partition, a.bucket, a.level0_files, a.sorted_runs, a.max_level) == ("dt=a", 0, 4, 4, 0)
    assert (b.partition, b.level0_files, b.sorted_runs) == ("dt=b", 1, 1)
    assert h.small_files == 5 and h.small_file_ratio == 1.0  # 128 mb target: every tiny file is small
    assert h.target_file_size == 128 * 1024 * 1024 and h.small_file_threshold == int(0.7 * h.target_file_size)
    assert [(p.partition, p.files, p.level0_files, p.max_sorted_runs) for p in h.partitions] == [
        ("dt=a", 4, 4, 4), ("dt=b", 1, 1, 1)]
    assert h.last_compaction is None and h.latest is not None and h.latest.commit_kind == "APPEND"
    # a full compaction with properties: one run at the top level, the event and its properties reported
    sid = t.maintenance.compact(full=True, properties={"airflow.run_id": "manual__1"})
    write(t, [9], "b")
    buckets = catalog.get_table("db.t$buckets").read().to_pylist()  # Paimon's $buckets agrees with health
    assert [(f"dt={b['partition'][1:-1]}", b["bucket"], b["file_count"], b["record_count"], b["file_size_in_bytes"])
            for b in buckets] == [(b.partition, b.bucket, b.files, b.rows, b.bytes)
                                  for b in t.maintenance.health().buckets]
    h = t.maintenance.health("dt=a")
    assert h.partition_filter == "dt=a" and [b.partition for b in h.buckets] == ["dt=a"]
    (a,) = h.buckets
    assert (a.files, a.level0_files, a.sorted_runs, a.max_level, a.rows) == (1, 0, 1, 5, 4)
    assert h.last_compaction is not None and h.last_compaction.snapshot_id == sid
    assert h.last_compaction.properties == {"airflow.run_id": "manual__1"}


def test_small_files_against_target_file_size_of_an_append_table(catalog: Catalog) -> None:
    t = catalog.create_table("db.a", SCHEMA)
    write(t, [1])
    t.write(pa.table({"dt": ["a"] * 5000, "id": random.Random(1).sample(range(10**12), 5000), "v": [0] * 5000},
                     schema=SCHEMA))  # one file of some 40 kb
    t.alter(SetOption("target-file-size", "16 kb"))  # threshold 0.7 x 16 kb
    h = catalog.get_table("db.a").maintenance.health()
    assert not h.primary_key and h.target_file_size == 16384 and h.small_file_threshold == 11468
    (b,) = h.buckets
    assert (b.partition, b.files, b.small_files, b.small_file_ratio) == ("", 2, 1, 0.5)


def test_deletion_vector_ratio_from_the_index_manifest(catalog: Catalog) -> None:
    t = catalog.create_table("db.dv", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1", "deletion-vectors.enabled": "true"})
    write(t, list(range(10)))
    write(t, [1, 2, 3], v=1)  # lookup compaction marks the 3 old rows deleted in the upper-level file
    h = t.maintenance.health()
    (b,) = h.buckets
    assert b.deleted_rows == 3 and b.dv_unknown == 0
    assert b.deletion_vector_ratio == pytest.approx(3 / b.rows)
    assert h.deleted_rows == 3 and h.level0_files == 0


def test_retention_consumers_tags_branches(catalog: Catalog) -> None:
    t = catalog.create_table("db.r", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1", "write-only": "true", "snapshot.num-retained.min": "1",
                                      "snapshot.num-retained.max": "3"})
    for i in range(6):
        write(t, [i])
    t.create_tag("keep", 4, time_retained_ms=1)
    t.create_branch("dev", "keep")
    ConsumerManager.of(t.store).create("slow", 2)
    h = t.maintenance.health()
    s = h.snapshots
    assert (s.count, s.earliest_id, s.latest_id, s.over_max) == (6, 1, 6, 3)
    assert (s.expirable, s.held_by_consumers) == (1, 2)  # the consumer at 2 holds 2 and 3
    assert [(c.consumer_id, c.next_snapshot_id, c.lag, c.expired) for c in h.consumers] == [("slow", 2, 5, False)]
    time.sleep(0.01)
    h = t.maintenance.health()
    assert [(x.name, x.snapshot_id, x.expired) for x in h.tags] == [("keep", 4, True)]
    assert h.branches == ["dev"] and h.last_tag_name == "keep" and h.last_tag is not None
    assert h.last_tag.snapshot_id == 4
    t.maintenance.reset_consumer("slow", None)
    assert t.maintenance.health().snapshots.expirable == 3
    t.expire_snapshots()
    h = t.maintenance.health()
    assert (h.snapshots.count, h.snapshots.expirable, h.snapshots.over_max) == (3, 0, 0)
    ConsumerManager.of(t.store).create("gone", 1)
    assert [(c.consumer_id, c.expired) for c in t.maintenance.health().consumers] == [("gone", True)]


def _plant(path: str, age_seconds: float) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"orphan!")
    stamp = time.time() - age_seconds
    os.utime(path, (stamp, stamp))


def test_orphans_bounded_listing_and_postpone_backlog(catalog: Catalog) -> None:
    t = catalog.create_table("db.p", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "-2"})
    write(t, [1, 2, 3])
    write(t, [4], "b")
    _plant(f"{t.path}/dt=a/bucket-0/data-dead-0.parquet", 2 * DAY)
    _plant(f"{t.path}/manifest/manifest-dead-0", 2 * DAY)
    _plant(f"{t.path}/dt=a/bucket-0/data-young-0.parquet", 0)
    before = digest(t.path)
    h = t.maintenance.health(orphans=True)
    assert h.orphans is not None and (h.orphans.files, h.orphans.bytes, h.orphans.truncated) == (2, 14, False)
    assert sorted(p.rsplit("/", 1)[1] for p in h.orphans.sample) == ["data-dead-0.parquet", "manifest-dead-0"]
    young = t.maintenance.health(orphans=True, orphans_older_than_millis=clock.now_millis() + 1000).orphans
    assert young is not None and young.files == 3
    cut = t.maintenance.health(orphans=True, max_orphan_files=1).orphans
    assert cut is not None and cut.truncated and cut.listed == 1
    assert t.maintenance.health().orphans is None
    assert digest(t.path) == before  # health writes nothing
    assert h.postpone_files == 2 and [(b.partition, b.bucket, b.postpone_files) for b in h.buckets] == [
        ("dt=a", -2, 1), ("dt=b", -2, 1)]
    assert [(p.partition, p.buckets, p.postpone_files, p.postpone_rows) for p in h.partitions] == [
        ("dt=a", 0, 1, 3), ("dt=b", 0, 1, 1)]


def test_bad_input_is_one_line_and_the_table_unchanged(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "1"})
    write(t, [1])
    before = digest(t.path)
    for spec, names in (("nope=a", "nope"), ("dt", "dt")):
        with pytest.raises(PartitionSpecError, match=names) as e:
            t.maintenance.health(spec)
        assert "\n" not in str(e.value)
    with pytest.raises(CommandError, match="max-orphan-files"):
        Health(warehouse="w", table="db.t", max_orphan_files=0)
    assert digest(t.path) == before


def test_cli_prints_a_table_then_the_result_line(catalog: Catalog, warehouse: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2"})
    write(t, [1, 2, 3])
    write(t, [1], "b")
    assert main(["health", "--warehouse", warehouse, "--table", "db.t", "--partition", "dt=b", "--orphans"]) == 0
    out = capsys.readouterr().out.splitlines()
    result = json.loads(out[-1])
    assert result["status"] == "ok" and result["health"]["partitions"][0]["partition"] == "dt=b"
    assert result["health"]["orphans"]["files"] == 0
    assert out[0] == "health of db.t at snapshot 2 (partitions dt=b)"
    assert any(line.split()[:2] == ["dt=b", "1"] for line in out)
    assert main(["health", "--warehouse", warehouse, "--table", "db.t", "--partition", "x=1"]) == 1
    line = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert line["status"] == "error" and "'x'" in line["error"]


def test_health_on_s3(s3_catalog: Catalog) -> None:
    t = s3_catalog.create_table("db.s", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                options={"bucket": "1", "write-only": "true"})
    for i in range(3):
        write(t, [i])
    ConsumerManager.of(t.store).create("c", 1)
    t.file_io.write_bytes(f"{t.path}/dt=a/bucket-0/data-dead-0.parquet", b"orphan!")
    h = t.maintenance.health(orphans=True, orphans_older_than_millis=clock.now_millis() + 60_000)
    (b,) = h.buckets
    assert (b.level0_files, b.sorted_runs, b.small_files) == (3, 3, 3)
    assert [(c.consumer_id, c.lag) for c in h.consumers] == [("c", 3)]
    assert h.orphans is not None and h.orphans.files == 1 and h.orphans.bytes == 7
    assert h.last_expiry_millis is not None


def test_empty_table_and_a_missing_manifest(catalog: Catalog) -> None:
    t = catalog.create_table("db.e", SCHEMA, partition_keys=["dt"])
    h = t.maintenance.health()
    assert (h.snapshot_id, h.files, h.buckets, h.partitions, h.snapshots.count) == (None, 0, [], [], 0)
    write(t, [1])
    snap = t.latest_snapshot()
    assert snap is not None
    os.remove(next(os.path.join(d, f) for d, _, fs in os.walk(f"{t.path}/manifest") for f in fs
                   if f.startswith("manifest-") and not f.startswith("manifest-list")))
    with pytest.raises(MissingFileError, match=f"snapshot {snap.id} references manifest file"):
        t.maintenance.health()


@pytest.mark.parametrize(("retain_min", "retain_max", "time_retained", "consumer"), [
    (1, 100, "30 min", None), (2, 4, "1 h", None), (1, 3, "1 d", 3), (3, 100, "5 min", 2), (1, 1, "1 d", None),
    (10, 100, "1 min", None), (1, 100, "25 min", 7)])
def test_expirable_is_what_expiry_expires(catalog: Catalog, retain_min: int, retain_max: int, time_retained: str,
                                          consumer: int | None) -> None:
    with use_clock(ManualClock(1_800_000_000_000)) as now:
        assert isinstance(now, ManualClock)
        t = catalog.create_table("db.x", SCHEMA, primary_keys=["dt", "id"], options={
            "bucket": "1", "write-only": "true", "snapshot.num-retained.min": str(retain_min),
            "snapshot.num-retained.max": str(retain_max), "snapshot.time-retained": time_retained,
            "snapshot.expire.limit": "100"})
        for i in range(8):
            write(t, [i])
            now.advance(600_000)
        if consumer is not None:
            ConsumerManager.of(t.store).create("c", consumer)
        s = t.maintenance.health().snapshots
        expired = t.expire_snapshots().expired_snapshot_ids
        assert s.expirable == len(expired)
        assert t.maintenance.health().snapshots.expirable == 0


def test_partition_filters_prune_manifests_and_agree_with_the_whole_table(catalog: Catalog) -> None:
    schema = pa.schema([("p", pa.int32()), ("q", pa.string()), ("id", pa.int64())])
    t = catalog.create_table("db.pp", schema, partition_keys=["p", "q"], options={"bucket": "-1"})
    for p in (3, 5, 11, 5):
        t.write(pa.table({"p": [p, p], "q": ["x", None], "id": [1, 2]}, schema=schema))
    whole = t.maintenance.health()
    assert len(whole.partitions) == 6 and "p=5/q=__DEFAULT_PARTITION__" in {x.partition for x in whole.partitions}
    for spec in ("p=5", "p=11,q=x", "q=__DEFAULT_PARTITION__", "p=4", "p=3;p=11"):
        got = t.maintenance.health(spec)
        selected = [x for x in whole.partitions
                    if any(all(kv in x.partition.split("/") for kv in s.split(",")) for s in spec.split(";"))]
        assert got.partitions == selected, spec
    assert t.maintenance.health("p=5").files == 4 and t.maintenance.health("p=4").files == 0


@pytest.mark.parametrize(("ch_min", "ch_max", "ch_time", "consumer", "expirable", "held"), [
    (1, 6, "1 d", None, 3, 0), (2, 100, "70 min", None, 3, 0), (1, 100, "70 min", 2, 1, 2), (3, 5, "1 d", 4, 2, 0)])
def test_changelog_expirable_is_what_changelog_expiry_expires(catalog: Catalog, ch_min: int, ch_max: int,
                                                              ch_time: str, consumer: int | None, expirable: int,
                                                              held: int) -> None:
    with use_clock(ManualClock(1_800_000_000_000)) as now:
        assert isinstance(now, ManualClock)
        t = catalog.create_table("db.c", SCHEMA, primary_keys=["dt", "id"], options={
            "bucket": "1", "write-only": "true", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2",
            "changelog.num-retained.min": str(ch_min), "changelog.num-retained.max": str(ch_max),
            "changelog.time-retained": ch_time, "snapshot.expire.limit": "100"})
        for i in range(6):
            write(t, [i])
            now.advance(600_000)
        t.expire_snapshots()  # snapshots 1..4 become long-lived changelogs (some may expire at once)
        for i in range(6):
            write(t, [i])
            now.advance(600_000)
        if consumer is not None:
            ConsumerManager.of(t.store).create("c", consumer)
        before = t.maintenance.health().changelogs
        assert before.count > 0 and before.earliest_id is not None
        result = ExpireResult()
        expire_changelogs(t.store, ExpireConfig.from_options(t.options), clock.now_millis(), result)
        assert result.expired_changelog_ids == list(range(before.earliest_id, before.earliest_id + before.expirable))
        assert t.maintenance.health().changelogs.expirable == 0
        assert (before.expirable, before.held_by_consumers) == (expirable, held)
