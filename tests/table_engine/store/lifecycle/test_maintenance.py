"""Commit-time maintenance: opt-in hook of write()/commit(), write-only, failure isolation, cheap when idle."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock
from table_engine.table import Table

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64())])
EAGER = {"snapshot.num-retained.min": "2", "snapshot.time-retained": "0 s"}


def make(catalog: Catalog, **options: str) -> Table:
    # append-table writers would compact small files (extra COMPACT snapshots): keep one snapshot per write
    return catalog.create_table("db.t", SCHEMA, partition_keys=["dt"],
                                options={"compaction.min.file-num": "1000", **options})


def batch(i: int, dt: str = "2024-01-01") -> pa.Table:
    return pa.table({"dt": [dt], "id": [i]}, schema=SCHEMA)


def ids(t: Table) -> list[int]:
    return [s.id for s in t.snapshots()]


def test_off_by_default(catalog: Catalog) -> None:
    t = make(catalog, **EAGER)
    for i in range(5):
        t.write(batch(i))
    assert ids(t) == [1, 2, 3, 4, 5]


def test_per_call_and_per_table_opt_in(catalog: Catalog) -> None:
    t = make(catalog, **EAGER)
    for i in range(4):
        t.write(batch(i))
    t.write(batch(4), maintain=True)
    assert ids(t) == [4, 5]
    t.commit_maintenance = True
    t.write(batch(5))
    assert ids(t) == [5, 6]
    t.write(batch(6), maintain=False)
    assert ids(t) == [5, 6, 7]
    messages = t.new_write()
    messages.write(batch(7))
    t.commit(messages.prepare_commit())
    assert ids(t) == [7, 8]


def test_write_only_skips_maintenance(catalog: Catalog) -> None:
    t = make(catalog, **EAGER, **{"write-only": "true"})
    for i in range(4):
        t.write(batch(i), maintain=True)
    assert ids(t) == [1, 2, 3, 4]
    assert t.maintenance.after_commit().snapshots is None


def test_everything_runs_at_commit(catalog: Catalog, clock: ManualClock) -> None:
    t = make(catalog, **EAGER, **{"partition.expiration-time": "1 d", "partition.timestamp-formatter": "yyyy-MM-dd",
                                  "tag.automatic-creation": "batch", "tag.default-time-retained": "1 h"})
    t.commit_maintenance = True
    t.write(batch(0, "2020-01-01"))
    assert t.list_tags()[0].startswith("batch-write-")
    assert sorted(set(t.read().column("dt").to_pylist())) == []  # the old partition expired right away
    t.create_tag("short", time_retained_ms=1)
    clock.advance(2)  # the commit's maintenance comes after the tag's creation + 1 ms
    t.write(batch(1, "2999-01-01"))
    assert "short" not in t.list_tags()


def test_failing_maintenance_does_not_fail_the_write(catalog: Catalog, caplog: pytest.LogCaptureFixture) -> None:
    t = make(catalog)
    consumer_dir = Path(t.path) / "consumer"
    consumer_dir.mkdir()
    (consumer_dir / "consumer-broken").write_text("{not json")  # a corrupt consumer file: expiry cannot run
    with caplog.at_level(logging.WARNING):
        assert t.write(batch(0), maintain=True) == 1
    assert "maintenance" in caplog.text and "consumer-broken" in caplog.text
    assert t.read().num_rows == batch(0).num_rows


def test_idle_maintenance_reads_no_manifest(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    t = make(catalog, **{"tag.automatic-creation": "process-time", "consumer.expiration-time": "1 d"})
    for i in range(3):
        t.write(batch(i))
    t.create_tag("x", time_retained_ms=3_600_000)
    t.maintenance.create_auto_tags()
    import table_engine.format.manifest as manifest_module
    import table_engine.store.lifecycle.file_refs as refs_module
    import table_engine.store.reading.scan as scan_module

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("a manifest was read")

    monkeypatch.setattr(refs_module, "read_manifest", boom)
    monkeypatch.setattr(manifest_module, "read_manifest", boom)
    monkeypatch.setattr(scan_module, "read_manifest", boom)
    report = t.maintenance.after_commit()
    assert report.snapshots is not None and report.snapshots.expired_snapshot_ids == []
    assert report.tags_created == [] and report.tags_expired == []


def test_maintenance_judges_everything_at_one_instant(catalog: Catalog, clock: ManualClock) -> None:
    """One clock read per run: tags, partitions, consumers, snapshots and changelogs are all judged against the
    same instant (Paimon reads the clock for each tag; here a run never straddles a millisecond)."""
    t = make(catalog, **EAGER, **{"partition.expiration-time": "1 d", "partition.timestamp-formatter": "yyyy-MM-dd",
                                  "consumer.expiration-time": "1 d", "changelog.num-retained.min": "3"})
    for i in range(3):
        t.write(batch(i, "2999-01-01"))
        clock.advance(1)
    t.create_tag("short", 1, time_retained_ms=1)
    t.maintenance.reset_consumer("reader", 3)
    clock.advance(2)  # 'short' was created 2 ms ago with 1 ms retention
    before = clock.reads
    report = t.maintenance.after_commit()
    assert clock.reads == before + 1
    assert report.tags_expired == ["short"] and report.partitions_expired == [] and report.consumers_expired == []
    assert report.snapshots is not None and report.snapshots.expired_snapshot_ids == [1]
