"""Partition expiry (values-time / update-time), formatter and pattern parsing, explicit drops."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.clock import ManualClock, use_clock
from table_engine.errors import OptionError, PartitionSpecError, SchemaError
from table_engine.format.snapshot import CommitKind
from table_engine.store.lifecycle.partition_expire import (
    PartitionTimeExtractor,
    commit_time_check_due,
    expire_partitions,
    java_formatter_regex,
)
from table_engine.table import Table
from tests.table_engine.store.lifecycle.lifecycle_support import assert_exact_files, rows

D = datetime.datetime


@pytest.fixture(params=["local", "s3"])
def catalog(request: pytest.FixtureRequest, warehouse: str) -> Catalog:
    """Every partition expiry and drop test on a local warehouse and on the session's S3 server."""
    return request.getfixturevalue("s3_catalog") if request.param == "s3" else Catalog(warehouse)


# ------------------------------------------------------------------------------------------------ parsing


@pytest.mark.parametrize(("formatter", "text", "expected"), [
    ("yyyyMMdd", "20240105", D(2024, 1, 5)),
    ("yyyy-MM-dd", "2024-01-05", D(2024, 1, 5)),
    ("yyyy-MM-dd HH", "2024-01-05 07", D(2024, 1, 5, 7)),
    ("yyyyMMddHH", "2024010507", D(2024, 1, 5, 7)),
    ("yyyy-MM-dd HH:mm:ss", "2024-01-05 07:08:09", D(2024, 1, 5, 7, 8, 9)),
    ("yyyy-MM-dd HH:mm:ss.SSS", "2024-01-05 07:08:09.123", D(2024, 1, 5, 7, 8, 9, 123000)),
    ("yyyy/M/d", "2024/1/5", D(2024, 1, 5)),
    ("dd MMM yyyy", "05 Jan 2024", D(2024, 1, 5)),
    ("yyyy-MM-dd'T'HH", "2024-01-05T07", D(2024, 1, 5, 7)),
    ("yyyy-MM-dd hh a", "2024-01-05 07 PM", D(2024, 1, 5, 19)),
    ("yy-MM-dd", "24-01-05", D(2024, 1, 5)),
])
def test_java_formatters(formatter: str, text: str, expected: D) -> None:
    assert PartitionTimeExtractor(None, formatter).extract(["dt"], [text]) == expected


@pytest.mark.parametrize(("formatter", "text"), [
    ("yyyyMMdd", "2024-01-05"),
    ("HH", "07"),  # no date: Java cannot build a LocalDateTime either
    ("yyyy-MM-dd", "2024-13-05"),
    ("yyyy-MM-dd", "2024-02-30"),
])
def test_unparsable_values(formatter: str, text: str) -> None:
    with pytest.raises(ValueError):
        PartitionTimeExtractor(None, formatter).extract(["dt"], [text])


def test_unsupported_formatter_letters() -> None:
    with pytest.raises(OptionError, match="not supported"):
        java_formatter_regex("yyyy-ww")
    with pytest.raises(OptionError, match="unterminated"):
        java_formatter_regex("yyyy'T")


def test_default_formatter() -> None:
    x = PartitionTimeExtractor()
    assert x.extract(["dt"], ["2024-01-05"]) == D(2024, 1, 5)
    assert x.extract(["dt"], ["2024-1-5 7:08:09"]) == D(2024, 1, 5, 7, 8, 9)
    assert x.extract(["dt"], ["2024-01-05 07:08:09.5"]) == D(2024, 1, 5, 7, 8, 9, 500000)
    with pytest.raises(ValueError):
        x.extract(["dt"], ["20240105"])


def test_patterns() -> None:
    x = PartitionTimeExtractor("$dt $hour:00:00")
    assert x.extract(["dt", "hour"], ["2024-01-05", "7"]) == D(2024, 1, 5, 7)
    y = PartitionTimeExtractor("$year-$month-$day", "yyyy-MM-dd")
    assert y.extract(["year", "month", "day"], ["2024", "01", "05"]) == D(2024, 1, 5)
    # the longer key wins: $dt1 is not $dt followed by '1'
    z = PartitionTimeExtractor("$dt1")
    assert z.replace_pattern(["dt", "dt1"], ["2020-01-01", "2024-02-03"]) == "2024-02-03"
    assert PartitionTimeExtractor("$unknown").replace_pattern(["dt"], ["x"]) == "$unknown"


# ------------------------------------------------------------------------------------------------ expiry

SCHEMA = pa.schema([("dt", pa.string()), ("hour", pa.int32()), ("id", pa.int64())])
DAYS = ["20240101", "20240102", "20240103", "20240104", "20240105"]


def make(catalog: Catalog, **options: str) -> Table:
    opts = {"partition.timestamp-formatter": "yyyyMMdd", "partition.expiration-time": "1 d", **options}
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "hour", "id"], partition_keys=["dt", "hour"],
                             options={"bucket": "1", **opts})
    t.write(pa.table({"dt": DAYS + ["not-a-date"], "hour": [1, 2, 3, 4, 5, 6], "id": [1, 2, 3, 4, 5, 6]},
                     schema=SCHEMA))
    return t


def remaining(t: Table) -> list[str]:
    return sorted(set(t.read().column("dt").to_pylist()))


def test_values_time(catalog: Catalog) -> None:
    t = make(catalog)
    r = expire_partitions(t.store, now=D(2024, 1, 4, 12))  # cut-off 2024-01-03 12:00
    assert [p["dt"] for p in r.partitions] == ["20240101", "20240102", "20240103"]
    assert r.partitions[0] == {"dt": "20240101", "hour": "1"}
    assert len(r.snapshot_ids) == 1
    assert t.snapshot(r.snapshot_ids[0]).commit_kind == CommitKind.OVERWRITE
    assert remaining(t) == ["20240104", "20240105", "not-a-date"]
    assert rows(t.read(snapshot_id=1)) != rows(t.read())  # the old snapshot still has them
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert_exact_files(t)


def test_pattern_with_two_fields(catalog: Catalog) -> None:
    t = make(catalog, **{"partition.timestamp-pattern": "$dt $hour:00:00",
                         "partition.timestamp-formatter": "yyyyMMdd H:mm:ss"})
    r = expire_partitions(t.store, now=D(2024, 1, 3, 3, 30))  # cut-off 2024-01-02 03:30
    assert [p["dt"] for p in r.partitions] == ["20240101", "20240102"]  # 0102 02:00 < 03:30
    r = expire_partitions(t.store, now=D(2024, 1, 4, 2, 30))  # cut-off 2024-01-03 02:30: 0103 03:00 stays
    assert r.partitions == []


def test_max_num_batches_and_dry_run(catalog: Catalog) -> None:
    t = make(catalog, **{"partition.expiration-max-num": "3", "partition.expiration-batch-size": "2"})
    dry = expire_partitions(t.store, now=D(2025, 1, 1), dry_run=True)
    assert [p["dt"] for p in dry.partitions] == DAYS[:3] and dry.snapshot_ids == []
    assert remaining(t) == sorted(DAYS + ["not-a-date"])
    r = expire_partitions(t.store, now=D(2025, 1, 1))
    assert [p["dt"] for p in r.partitions] == DAYS[:3] and len(r.snapshot_ids) == 2
    r = t.maintenance.expire_partitions(max_expires=10)  # the real clock: all dated partitions are old
    assert [p["dt"] for p in r.partitions] == DAYS[3:]
    assert remaining(t) == ["not-a-date"]


def test_overrides(catalog: Catalog) -> None:
    t = make(catalog)
    r = t.maintenance.expire_partitions(expiration_time="3650 d", timestamp_formatter="yyyyMMdd")
    assert r.partitions == []
    r = t.maintenance.expire_partitions(expiration_time=1, strategy="update-time", dry_run=True)
    assert len(r.partitions) == 6  # update-time expires undated partitions too


def test_update_time(catalog: Catalog) -> None:
    t = make(catalog, **{"partition.expiration-strategy": "update-time"})
    assert expire_partitions(t.store, now=datetime.datetime.now()).partitions == []
    t.write(pa.table({"dt": ["20240101"], "hour": [1], "id": [9]}, schema=SCHEMA))  # freshly updated
    later = datetime.datetime.now() + datetime.timedelta(days=1, seconds=-30)
    r = expire_partitions(t.store, now=later, expiration_time=86_400_000 - 60_000)
    assert len(r.partitions) == 6


def test_errors(catalog: Catalog) -> None:
    t = catalog.create_table("db.u", SCHEMA)
    with pytest.raises(OptionError, match="expiration-time"):
        t.maintenance.expire_partitions()
    with pytest.raises(SchemaError, match="not partitioned"):
        t.maintenance.expire_partitions(expiration_time="1 d")


def test_commit_time_interval(catalog: Catalog) -> None:
    t = make(catalog, **{"partition.expiration-check-interval": "1 h"})
    assert commit_time_check_due(t.store, 1, now_ms=1_000)
    assert not commit_time_check_due(t.store, 1, now_ms=2_000)
    assert commit_time_check_due(t.store, 1, now_ms=1_000 + 3_600_001)
    u = make_other(catalog, {"end-input.check-partition-expire": "true"})
    assert commit_time_check_due(u.store, 1, now_ms=1_000)
    assert commit_time_check_due(u.store, 2**63 - 1, now_ms=1_001)
    assert not commit_time_check_due(u.store, 1, now_ms=1_002)


def make_other(catalog: Catalog, opts: dict[str, str]) -> Table:
    return catalog.create_table("db.o", SCHEMA, partition_keys=["dt"],
                                options={"partition.expiration-time": "1 d", **opts})


# ------------------------------------------------------------------------------------------------ drops


def test_drop_partitions(catalog: Catalog) -> None:
    t = make(catalog)
    sid = t.maintenance.drop_partitions([{"dt": "20240102"}, {"hour": "4"}])  # values as strings match typed values too
    assert sid is not None and t.snapshot(sid).commit_kind == CommitKind.OVERWRITE
    assert remaining(t) == ["20240101", "20240103", "20240105", "not-a-date"]
    latest = t.latest_snapshot_id()
    with pytest.raises(PartitionSpecError, match="'dt=20991231' matches no partition"):  # issue 11: an error now
        t.maintenance.drop_partitions([{"dt": "20991231"}])
    assert t.latest_snapshot_id() == latest
    assert t.maintenance.drop_partitions([{"dt": "20240101", "hour": 1}]) is not None
    assert remaining(t) == ["20240103", "20240105", "not-a-date"]
    with pytest.raises(SchemaError):
        t.maintenance.drop_partitions([{"id": 1}])
    with pytest.raises(SchemaError):
        t.maintenance.drop_partitions([{}])
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert_exact_files(t)


def test_drop_partition_of_dynamic_bucket_table_drops_its_index(catalog: Catalog) -> None:
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    t = catalog.create_table("db.d", schema, primary_keys=["dt", "id"], partition_keys=["dt"])  # bucket -1
    t.write(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3]}, schema=schema))
    before = {ie.partition for ie in t.store.index_entries(t.latest_snapshot())}
    assert len(before) == 2
    t.maintenance.drop_partitions([{"dt": "a"}])
    after = t.store.index_entries(t.latest_snapshot())
    assert len({ie.partition for ie in after}) == 1
    t.write(pa.table({"dt": ["a"], "id": [1]}, schema=schema))
    assert sorted(t.read().column("id").to_pylist()) == [1, 3]
    t.expire_snapshots(retain_min=1, time_retained=0)
    assert_exact_files(t)


def test_values_time_cut_off_to_the_millisecond(catalog: Catalog) -> None:
    """Paimon: a partition expires when ``now - partition.expiration-time`` is strictly after its time; ``now`` is
    the engine's clock, as local wall-clock time."""
    t = make(catalog)
    midnight = int(D(2024, 1, 3).timestamp() * 1000)  # local 2024-01-03 00:00: cut-off exactly 2024-01-02
    clock = ManualClock(midnight)
    with use_clock(clock):
        assert [p["dt"] for p in t.maintenance.expire_partitions().partitions] == ["20240101"]
        clock.advance(1)
        assert [p["dt"] for p in t.maintenance.expire_partitions().partitions] == ["20240102"]
    assert remaining(t) == ["20240103", "20240104", "20240105", "not-a-date"]


@pytest.mark.parametrize("drop", [False, True], ids=["expire", "drop"])
def test_plans_again_when_an_expiry_removes_the_snapshot_it_reads(catalog: Catalog, monkeypatch, drop: bool) -> None:
    """Simulation partition-expire seed 616: partition expiry planned from the latest snapshot, which a concurrent
    expiry (retaining one snapshot) removed with its manifests while they were read: "snapshot 10 references
    manifest file ..., which does not exist". It reads the new latest snapshot instead, and drops the partition."""
    from table_engine.store.lifecycle import partition_expire

    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    t = catalog.create_table("db.pe", schema, partition_keys=["dt"], options={"snapshot.num-retained.min": "1"})
    t.write(pa.table({"dt": ["2024-01-01", "2024-03-01"], "id": [1, 2]}, schema=schema))
    real = partition_expire.live_entries
    calls: list[int] = []

    def expired_under_the_read(file_io, table_path, snap):  # type: ignore[no-untyped-def]
        calls.append(snap.id)
        if len(calls) == 1:  # another process commits and expires the snapshot this read planned on
            t.write(pa.table({"dt": ["2024-03-01"], "id": [3]}, schema=schema))
            t.expire_snapshots(retain_min=1, time_retained=0)
        return real(file_io, table_path, snap)

    monkeypatch.setattr(partition_expire, "live_entries", expired_under_the_read)
    if drop:
        t.maintenance.drop_partitions([{"dt": "2024-01-01"}])
    else:
        result = t.maintenance.expire_partitions(expiration_time="30 d", strategy="values-time", now=D(2024, 3, 2))
        assert result.partitions == [{"dt": "2024-01-01"}]
    assert calls == [1, 2]
    assert rows(t.read()) == [("2024-03-01", 2), ("2024-03-01", 3)]
