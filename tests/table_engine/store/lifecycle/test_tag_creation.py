"""Automatic tags: period handler names, process-time/watermark creation, delay, completion, retention, batch."""

from __future__ import annotations

import datetime
from dataclasses import replace

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.core_options import CoreOptions
from table_engine.errors import OptionError
from table_engine.format.snapshot import snapshot_path
from table_engine.store.lifecycle.tag_creation import TagAutoCreation
from table_engine.store.lifecycle.tag_period import TagPeriodHandler
from table_engine.table import Table

SCHEMA = pa.schema([("id", pa.int64())])
UTC = datetime.UTC
D = datetime.datetime


def handler(**opts: str) -> TagPeriodHandler:
    return TagPeriodHandler.from_options(CoreOptions(opts))


@pytest.mark.parametrize(("opts", "t", "name"), [
    ({}, D(2024, 3, 9), "2024-03-09"),
    ({"tag.period-formatter": "without_dashes"}, D(2024, 3, 9), "20240309"),
    ({"tag.period-formatter": "without_dashes_and_spaces"}, D(2024, 3, 9), "20240309"),
    ({"tag.creation-period": "hourly"}, D(2024, 3, 9, 7), "2024-03-09 07"),
    ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"}, D(2024, 3, 9, 7), "20240309 07"),
    ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"}, D(2024, 3, 9, 7),
     "2024030907"),
    ({"tag.creation-period": "two-hours", "tag.period-formatter": "without_dashes"}, D(2024, 3, 9, 8),
     "2024-03-09 08"),
    ({"tag.creation-period-duration": "30 min"}, D(2024, 3, 9, 8, 30), "202403090830"),
])
def test_tag_names_round_trip(opts: dict[str, str], t: D, name: str) -> None:
    h = handler(**opts)
    assert h.time_to_tag(t) == name
    assert h.is_auto_tag(name)
    assert h.tag_to_time(name) == t


def test_period_arithmetic_and_auto_names() -> None:
    daily = handler()
    assert daily.normalize_to_previous_tag(D(2024, 1, 2, 0, 30)) == D(2024, 1, 1)
    assert daily.next_tag_time(D(2024, 1, 1)) == D(2024, 1, 2)
    assert daily.tag_to_time("2024-01-05 10") == D(2024, 1, 5)  # daily names ignore an hour suffix
    assert not daily.is_auto_tag("2024-13-01") and not daily.is_auto_tag("release-1")
    two = handler(**{"tag.creation-period": "two-hours"})
    assert two.normalize_to_previous_tag(D(2024, 1, 1, 5, 59)) == D(2024, 1, 1, 2)
    assert handler(**{"tag.creation-period": "hourly"}).is_auto_tag("2024-01-01 23")
    with pytest.raises(OptionError):
        daily.validate_delay(86_400_000)


def make(catalog: Catalog, **options: str) -> Table:
    # append-table writers would compact small files (extra COMPACT snapshots): keep one snapshot per write
    opts = {"tag.automatic-creation": "process-time", "sink.process-time-zone": "UTC",
            "compaction.min.file-num": "1000", **options}
    return catalog.create_table("db.t", SCHEMA, options=opts)


def commit_at(t: Table, when: D, watermark: D | None = None) -> int:
    """A commit whose snapshot claims to have been made at ``when`` (UTC)."""
    sid = t.write(pa.table({"id": [1]}, schema=SCHEMA))
    assert sid is not None
    snap = t.snapshot(sid)
    wm = None if watermark is None else int(watermark.replace(tzinfo=UTC).timestamp() * 1000)
    snap = replace(snap, time_millis=int(when.replace(tzinfo=UTC).timestamp() * 1000), watermark=wm)
    t.file_io.write_bytes(snapshot_path(t.path, sid), snap.to_json().encode(), overwrite=True)
    return sid


def auto_tags(t: Table) -> dict[str, int]:
    return {tag.name: tag.snapshot_id for tag in t.tags()}


def test_daily_process_time_tags(catalog: Catalog) -> None:
    t = make(catalog)
    s1 = commit_at(t, D(2024, 1, 1, 10))
    assert t.maintenance.create_auto_tags() == ["2023-12-31"]  # the first snapshot closes the period before it
    commit_at(t, D(2024, 1, 1, 20))
    assert t.maintenance.create_auto_tags() == []
    s3 = commit_at(t, D(2024, 1, 2, 1))
    commit_at(t, D(2024, 1, 2, 5))
    s5 = commit_at(t, D(2024, 1, 3, 0, 30))
    assert t.maintenance.create_auto_tags() == ["2024-01-01", "2024-01-02"]
    assert t.maintenance.create_auto_tags() == []
    s6 = commit_at(t, D(2024, 1, 5, 12))
    assert t.maintenance.create_auto_tags() == ["2024-01-04"]  # a skipped period gets no tag without completion
    assert auto_tags(t) == {"2023-12-31": s1, "2024-01-01": s3, "2024-01-02": s5, "2024-01-04": s6}


def test_creation_delay(catalog: Catalog) -> None:
    t = make(catalog, **{"tag.creation-delay": "2 h"})
    commit_at(t, D(2024, 1, 1, 10))
    t.maintenance.create_auto_tags()
    commit_at(t, D(2024, 1, 2, 1))  # within the delay after the period end
    assert t.maintenance.create_auto_tags() == []
    s3 = commit_at(t, D(2024, 1, 2, 2))
    assert t.maintenance.create_auto_tags() == ["2024-01-01"]
    assert auto_tags(t)["2024-01-01"] == s3


def test_automatic_completion_and_num_retained_max(catalog: Catalog) -> None:
    t = make(catalog, **{"tag.automatic-completion": "true", "tag.num-retained-max": "2",
                         "tag.default-time-retained": "1 d"})
    commit_at(t, D(2024, 1, 1, 10))
    t.maintenance.create_auto_tags()
    commit_at(t, D(2024, 1, 5, 10))
    commit_at(t, D(2024, 1, 5, 11))
    commit_at(t, D(2024, 1, 5, 12))
    # one missing period per commit
    assert t.maintenance.create_auto_tags() == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert sorted(auto_tags(t)) == ["2024-01-02", "2024-01-03"]
    assert all(tag.time_retained_ms == 86_400_000 for tag in t.tags())
    t.create_tag("manual")  # not automatic: not counted
    commit_at(t, D(2024, 1, 5, 13))
    assert t.maintenance.create_auto_tags() == ["2024-01-04"]
    assert sorted(auto_tags(t)) == ["2024-01-03", "2024-01-04", "manual"]


def test_hourly_without_dashes(catalog: Catalog) -> None:
    t = make(catalog, **{"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"})
    commit_at(t, D(2024, 1, 1, 10, 5))
    commit_at(t, D(2024, 1, 1, 11, 0))
    assert t.maintenance.create_auto_tags() == ["2024010109", "2024010110"]


def test_watermark_mode(catalog: Catalog) -> None:
    t = make(catalog, **{"tag.automatic-creation": "watermark"})
    commit_at(t, D(2030, 1, 1), watermark=None)  # no watermark: no tag
    assert t.maintenance.create_auto_tags() == []
    commit_at(t, D(2030, 1, 1), watermark=D(2024, 1, 2, 3))
    assert t.maintenance.create_auto_tags() == ["2024-01-01"]


def test_auto_creation_resumes_after_snapshot_expiry(catalog: Catalog) -> None:
    t = make(catalog)
    commit_at(t, D(2024, 1, 1, 10))
    t.maintenance.create_auto_tags()
    for h in range(5):
        commit_at(t, D(2024, 1, 1, 11 + h))
    t.expire_snapshots(retain_min=1, time_retained=0)
    s = commit_at(t, D(2024, 1, 2, 1))
    assert t.maintenance.create_auto_tags() == ["2024-01-01"]
    assert auto_tags(t)["2024-01-01"] == s


def test_unsupported_mode_and_bad_zone(catalog: Catalog) -> None:
    t = catalog.create_table("db.x", SCHEMA)
    with pytest.raises(OptionError):
        TagAutoCreation(t.store)
    bad = catalog.create_table("db.y", SCHEMA, options={"tag.automatic-creation": "process-time",
                                                        "sink.process-time-zone": "Mars/Olympus"})
    with pytest.raises(OptionError, match="time zone"):
        TagAutoCreation(bad.store)


def test_batch_tags(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, options={"tag.automatic-creation": "batch",
                                                      "sink.process-time-zone": "UTC",
                                                      "tag.num-retained-max": "2"})
    commit_at(t, D(2024, 1, 1, 10))
    assert t.maintenance.create_auto_tags() == ["batch-write-2024-01-01"]
    s2 = commit_at(t, D(2024, 1, 1, 12))
    assert t.maintenance.create_auto_tags() == ["batch-write-2024-01-01"]  # replaced: same day
    assert auto_tags(t) == {"batch-write-2024-01-01": s2}
    commit_at(t, D(2024, 1, 2, 12))
    t.maintenance.create_auto_tags()
    s4 = commit_at(t, D(2024, 1, 3, 12))
    t.maintenance.create_auto_tags()
    assert auto_tags(t) == {"batch-write-2024-01-02": s4 - 1, "batch-write-2024-01-03": s4}


def test_batch_tag_customized_name(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, options={"tag.automatic-creation": "batch",
                                                      "tag.batch.customized-name": "nightly"})
    t.write(pa.table({"id": [1]}, schema=SCHEMA), maintain=True)
    t.write(pa.table({"id": [2]}, schema=SCHEMA), maintain=True)
    assert auto_tags(t) == {"nightly": 2}
