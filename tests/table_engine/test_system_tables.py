"""System tables through the catalog: columns as in Paimon, contents, time travel, filters, read-only."""

from __future__ import annotations

import datetime
import json

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import TableNotExistError, UnsupportedError
from table_engine.system_tables import SCHEMAS, SYSTEM_TABLES, SystemTable
from table_engine.table import Table

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])


@pytest.fixture
def table(catalog: Catalog) -> Table:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={"bucket": "2", "metadata.stats-mode": "full"})
    t.write(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": [1.5, None, 3.0]}, schema=SCHEMA))
    t.write(pa.table({"dt": ["b"], "id": [4], "v": [4.0]}, schema=SCHEMA))
    return t


def test_every_system_table_has_paimons_columns(catalog: Catalog, table: Table) -> None:
    expected = {
        "snapshots": ["snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind", "commit_time",
                      "base_manifest_list", "delta_manifest_list", "changelog_manifest_list", "total_record_count",
                      "delta_record_count", "changelog_record_count", "watermark", "next_row_id", "operation",
                      "writer_version"],
        "schemas": ["schema_id", "fields", "partition_keys", "primary_keys", "options", "comment", "update_time"],
        "options": ["key", "value"],
        "tags": ["tag_name", "snapshot_id", "schema_id", "commit_time", "record_count", "create_time",
                 "time_retained"],
        "consumers": ["consumer_id", "next_snapshot_id"],
        "manifests": ["file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id",
                      "min_partition_stats", "max_partition_stats", "min_row_id", "max_row_id"],
        "buckets": ["partition", "bucket", "record_count", "file_size_in_bytes", "file_count", "last_update_time"],
    }
    for name in SYSTEM_TABLES:
        st = catalog.get_table(f"db.t${name}")
        assert isinstance(st, SystemTable) and st.identifier == f"db.t${name}"
        result = st.read()
        assert result.schema == SCHEMAS[name] == st.arrow_schema
        if name in expected:
            assert result.column_names == expected[name]
    files_cols = catalog.get_table("db.t$files").read().column_names
    assert files_cols[:16] == ["partition", "bucket", "file_path", "file_format", "schema_id", "level",
                               "record_count", "file_size_in_bytes", "min_key", "max_key", "null_value_counts",
                               "min_value_stats", "max_value_stats", "min_sequence_number",
                               "max_sequence_number", "creation_time"]
    assert catalog.get_table("db.t$partitions").read().column_names[:5] == [
        "partition", "record_count", "file_size_in_bytes", "file_count", "last_update_time"]


def test_unknown_system_table(catalog: Catalog, table: Table) -> None:
    with pytest.raises(TableNotExistError, match="system table"):
        catalog.get_table("db.t$nope")
    with pytest.raises(TableNotExistError):
        catalog.get_table("db.missing$snapshots")
    assert catalog.get_table("db.t$ro").identifier == "db.t$ro"  # the read-optimized view still routes


def test_snapshots_and_schemas(catalog: Catalog, table: Table) -> None:
    snaps = catalog.get_table("db.t$snapshots").read().to_pylist()
    assert [s["snapshot_id"] for s in snaps] == [1, 2]
    assert snaps[0]["commit_kind"] == "APPEND" and snaps[0]["total_record_count"] == 3
    assert isinstance(snaps[0]["commit_time"], datetime.datetime)
    assert abs((datetime.datetime.now() - snaps[0]["commit_time"]).total_seconds()) < 600  # local wall clock
    schemas = catalog.get_table("db.t$schemas").read().to_pylist()
    assert len(schemas) == 1 and json.loads(schemas[0]["primary_keys"]) == ["dt", "id"]
    assert [f["name"] for f in json.loads(schemas[0]["fields"])] == ["dt", "id", "v"]
    options = catalog.get_table("db.t$options").read().to_pylist()
    assert {"key": "bucket", "value": "2"} in options


def test_files_and_time_travel(catalog: Catalog, table: Table) -> None:
    files = catalog.get_table("db.t$files")
    latest = files.read()
    assert latest.num_rows == 3 and sorted(latest.column("partition").to_pylist()) == ["{a}", "{b}", "{b}"]
    row = next(r for r in latest.to_pylist() if r["partition"] == "{a}")
    assert row["file_format"] == "parquet" and row["level"] == 0 and row["record_count"] == 2
    assert row["file_path"].endswith(".parquet") and "/dt=a/bucket-" in row["file_path"]
    assert row["min_key"] == "[1]" and row["max_key"] == "[2]"
    assert row["null_value_counts"] == "{dt=0, id=0, v=1}"
    assert row["min_value_stats"] == "{dt=a, id=1, v=1.5}" and row["max_value_stats"] == "{dt=a, id=2, v=1.5}"
    assert row["file_source"] == "APPEND"
    assert files.read(snapshot_id=1).num_rows == 2
    assert files.read(filter=[("partition", "=", "{b}")], columns=["bucket"]).column_names == ["bucket"]
    assert files.read(filter=[("partition", "=", "{b}")]).num_rows == 2


def test_tags_consumers_manifests_partitions_buckets(catalog: Catalog, table: Table) -> None:
    table.create_tag("first", 1, time_retained_ms=90_000)
    table.create_tag("plain", 2)
    tags = catalog.get_table("db.t$tags").read().to_pylist()
    assert [(t["tag_name"], t["snapshot_id"], t["record_count"]) for t in tags] == [("first", 1, 3), ("plain", 2, 4)]
    assert tags[0]["time_retained"] == "PT1M30S" and tags[0]["create_time"] is not None
    assert tags[1]["time_retained"] is None and tags[1]["create_time"] is None
    table.reset_consumer("c1", 2)
    assert catalog.get_table("db.t$consumers").read().to_pylist() == [{"consumer_id": "c1", "next_snapshot_id": 2}]
    manifests = catalog.get_table("db.t$manifests").read()
    assert manifests.num_rows == 2 and sum(manifests.column("num_added_files").to_pylist()) == 3
    assert manifests.column("min_partition_stats").to_pylist()[0] == "{a}"
    assert catalog.get_table("db.t$manifests").read(tag="first").num_rows == 1
    parts = catalog.get_table("db.t$partitions").read().to_pylist()
    assert [(p["partition"], p["record_count"], p["file_count"]) for p in parts] == [("dt=a", 2, 1), ("dt=b", 2, 2)]
    assert parts[0]["total_buckets"] == 2 and parts[0]["done"] is False
    buckets = catalog.get_table("db.t$buckets").read()
    assert sum(buckets.column("record_count").to_pylist()) == 4
    assert set(buckets.column("partition").to_pylist()) == {"{a}", "{b}"}


def test_system_tables_are_read_only(catalog: Catalog, table: Table) -> None:
    st = catalog.get_table("db.t$snapshots")
    with pytest.raises(UnsupportedError):
        st.write(pa.table({"dt": ["a"], "id": [1], "v": [1.0]}, schema=SCHEMA))
    with pytest.raises(UnsupportedError):
        st.new_commit()
    assert list(st.to_batches())[0].num_rows == 2


def test_empty_table(catalog: Catalog) -> None:
    catalog.create_table("db.e", SCHEMA)
    for name in SYSTEM_TABLES:
        result = catalog.get_table(f"db.e${name}").read()
        assert result.schema == SCHEMAS[name]
    assert catalog.get_table("db.e$options").read().num_rows == 0
    assert catalog.get_table("db.e$schemas").read().num_rows == 1


def test_unpartitioned_partition_strings(catalog: Catalog) -> None:
    t = catalog.create_table("db.u", pa.schema([("id", pa.int64())]))
    t.write(pa.table({"id": [1, 2]}))
    assert catalog.get_table("db.u$files").read().column("partition").to_pylist() == ["{}"]
    assert catalog.get_table("db.u$partitions").read().column("partition").to_pylist() == [""]
    assert t.system_table("buckets").read().column("record_count").to_pylist() == [2]
