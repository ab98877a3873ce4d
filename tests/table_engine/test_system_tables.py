"""System tables through the catalog: columns as in Paimon, contents, time travel, filters, read-only."""

from __future__ import annotations

import datetime
import hashlib
import inspect
import json
import os
from collections.abc import Callable

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import ReadOnlyTableError, TableNotExistError, UnsupportedError
from table_engine.ops import ConsumeChangelog
from table_engine.ops.consume import consume_changelog
from table_engine.schema_change import SetOption
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.system_tables import SCHEMAS, SYSTEM_TABLES, AuditLogTable, BinlogTable, SystemTable, system_table
from table_engine.table import DataEvolution, Table, TableMaintenance, is_mutating

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
        "branches": ["branch_name", "create_time"],
        "manifests": ["file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id",
                      "min_partition_stats", "max_partition_stats", "min_row_id", "max_row_id"],
        "buckets": ["partition", "bucket", "record_count", "file_size_in_bytes", "file_count", "last_update_time"],
    }
    for name in SYSTEM_TABLES:
        st = catalog.get_table(f"db.t${name}")
        assert isinstance(st.source, SystemTable) and st.identifier == f"db.t${name}"
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


@pytest.mark.parametrize("name", ["files", "manifests", "partitions", "table_indexes", "buckets"])
def test_time_travel_options_of_a_copy(catalog: Catalog, name: str) -> None:
    """``get_table("db.t$files").copy({"scan.snapshot-id": "1"})`` describes snapshot 1, as Paimon's FilesTable,
    ManifestsTable, PartitionsTable and TableIndexesTable do (BucketsTable ignores the options in Paimon too)."""
    t = catalog.create_table("db.tt", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"], options={
        "bucket": "-1"})  # dynamic buckets: a HASH index file per partition
    t.write(pa.table({"dt": ["a"], "id": [1], "v": [1.0]}, schema=SCHEMA))
    t.create_tag("one", snapshot_id=1)
    t.write(pa.table({"dt": ["a", "b"], "id": [1, 2], "v": [2.0, 2.0]}, schema=SCHEMA))
    t.maintenance.compact(full=True)
    sys_table = catalog.get_table(f"db.tt${name}")
    latest, first = sys_table.read(), sys_table.read(snapshot_id=1)
    assert latest != first
    if name == "table_indexes":
        assert 0 < first.num_rows < latest.num_rows
    follows = name != "buckets"
    for options in ({"scan.snapshot-id": "1"}, {"scan.tag-name": "one"},
                    {"scan.timestamp-millis": str(t.snapshot(1).time_millis)}):
        view = sys_table.copy(options)
        assert view.read() == (first if follows else latest), options
        assert pa.Table.from_batches(list(view.to_batches()), schema=view.arrow_schema) == view.read()
        assert view.read(snapshot_id=t.latest_snapshot().id) == latest  # an explicit version wins
    assert sys_table.copy({"scan.snapshot-id": "2"}).read() == sys_table.read(snapshot_id=2 if follows else None)
    if follows:
        with pytest.raises(UnsupportedError, match="incremental"):
            sys_table.copy({"incremental-between": "1,2"}).read()


def test_tags_consumers_manifests_partitions_buckets(catalog: Catalog, table: Table) -> None:
    table.create_tag("first", 1, time_retained_ms=90_000)
    table.create_tag("plain", 2)
    tags = catalog.get_table("db.t$tags").read().to_pylist()
    assert [(t["tag_name"], t["snapshot_id"], t["record_count"]) for t in tags] == [("first", 1, 3), ("plain", 2, 4)]
    assert tags[0]["time_retained"] == "PT1M30S" and tags[0]["create_time"] is not None
    assert tags[1]["time_retained"] is None and tags[1]["create_time"] is None
    table.maintenance.reset_consumer("c1", 2)
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


# ---- read-only: every method of Table is classified, and every mutating one is refused on every kind -----------

KINDS = (*SYSTEM_TABLES, "ro", "audit_log", "binlog")

READ_ONLY_METHODS = {
    "changelog_consumer",  # reads; refused when it would record a consumer (see below)
    "branch_table", "branches", "list_branches",  # branches: read (branch_table opens one)
    "consumers", "copy", "earliest_snapshot_id", "latest_snapshot", "latest_snapshot_id", "list_tags",
    "maintenance.health",  # reads metadata only: table_engine/store/lifecycle/health.py
    "maintenance.overlap",  # reads metadata only: table_engine/store/lifecycle/overlap.py
    "metadata",  # a read-only view: table_engine/store/reading/table_metadata.py
    "new_read", "new_stream_scan",  # reads; refused with consumer-id
    "plan", "plan_with_fallback", "read", "refresh", "resolve_snapshot",
    "snapshot",
    "snapshots",
    "tag_snapshot", "tags", "to_batches",
}


def public_methods(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and inspect.isfunction(getattr(cls, n))}


def table_methods() -> dict[str, object]:
    """Every public method of Table, and of its namespaces as ``maintenance.<name>`` and ``data_evolution.<name>``."""
    out: dict[str, object] = {m: getattr(Table, m) for m in public_methods(Table)}
    out |= {f"maintenance.{m}": getattr(TableMaintenance, m) for m in public_methods(TableMaintenance)}
    out |= {f"data_evolution.{m}": getattr(DataEvolution, m) for m in public_methods(DataEvolution)}
    return out


def mutating_calls(messages: list[CommitMessage]) -> dict[str, Callable[[Table], object]]:
    """Every mutating method of Table with plausible arguments (that would change the data table)."""
    row = pa.table({"dt": ["a"], "id": [9], "v": [9.0]}, schema=SCHEMA)
    return {
        "alter": lambda t: t.alter(SetOption("snapshot.num-retained.min", "1")),
        "maintenance.clear_consumers": lambda t: t.maintenance.clear_consumers(),
        "create_branch": lambda t: t.create_branch("new", "t1"),
        "delete_branch": lambda t: t.delete_branch("b1"),
        "fast_forward": lambda t: t.fast_forward("b1"),
        "rename_branch": lambda t: t.rename_branch("b1", "b2"),
        "commit": lambda t: t.commit(messages),
        "maintenance.compact": lambda t: t.maintenance.compact(full=True),
        "maintenance.compact_manifest": lambda t: t.maintenance.compact_manifest(),
        "maintenance.create_auto_tags": lambda t: t.maintenance.create_auto_tags(),
        "create_tag": lambda t: t.create_tag("new", 1),
        "maintenance.create_tag_from_timestamp": lambda t: t.maintenance.create_tag_from_timestamp("new", 0),
        "data_evolution.delete_by_predicate": lambda t: t.data_evolution.delete_by_predicate([("id", "=", 5)]),
        "data_evolution.delete_by_row_id": lambda t: t.data_evolution.delete_by_row_id([0]),
        "delete_tag": lambda t: t.delete_tag("t1"),
        "maintenance.drop_partitions": lambda t: t.maintenance.drop_partitions([{"dt": "a"}]),
        "maintenance.expire_changelogs": lambda t: t.maintenance.expire_changelogs(delete_all=True),
        "maintenance.expire_partitions": lambda t: t.maintenance.expire_partitions(expiration_time="1 ms",
                                                                                    strategy="update-time"),
        "maintenance.mark_partitions_done": lambda t: t.maintenance.mark_partitions_done(["dt=a"]),
        "expire_snapshots": lambda t: t.expire_snapshots(retain_min=1, time_retained=0),
        "maintenance.expire_tags": lambda t: t.maintenance.expire_tags(older_than_millis=2**62),
        "maintenance.after_commit": lambda t: t.maintenance.after_commit(),
        "new_commit": lambda t: t.new_commit().commit(messages, 7),
        "new_write": lambda t: t.new_write().write(row),
        "maintenance.remove_unexisting_files": lambda t: t.maintenance.remove_unexisting_files(dry_run=False),
        "maintenance.repair": lambda t: t.maintenance.repair(),
        "maintenance.remove_orphan_files": lambda t: t.maintenance.remove_orphan_files(older_than_millis=2**62 // 1000),
        "rename_tag": lambda t: t.rename_tag("t1", "t2"),
        "replace_tag": lambda t: t.replace_tag("t1", 2),
        "maintenance.reset_consumer": lambda t: t.maintenance.reset_consumer("c1", None),
        "maintenance.rescale": lambda t: t.maintenance.rescale(),
        "maintenance.rewrite_file_index": lambda t: t.maintenance.rewrite_file_index(),
        "rollback_to": lambda t: t.rollback_to(1),
        "data_evolution.upsert_by_key": lambda t: t.data_evolution.upsert_by_key(row, ["id"]),
        "data_evolution.update_by_row_id": lambda t: t.data_evolution.update_by_row_id(
            pa.table({"_ROW_ID": pa.array([0], pa.int64()), "v": [1.0]})),
        "write": lambda t: t.write(row),
    }


def file_hashes(root: str) -> dict[str, str]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            path = os.path.join(dirpath, n)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


@pytest.fixture
def busy(catalog: Catalog, table: Table) -> Table:
    """The table with a tag, a consumer, a third snapshot and orphan-looking files: something to destroy."""
    table.create_tag("t1", 1)
    table.maintenance.reset_consumer("c1", 2)
    table.create_branch("b1", "t1")
    table.write(pa.table({"dt": ["a"], "id": [5], "v": [5.0]}, schema=SCHEMA))
    return table


def test_every_public_method_of_a_table_is_classified() -> None:
    """A new Table method must be declared @mutating or added to READ_ONLY_METHODS (and then tested below)."""
    methods = table_methods()
    assert {m for m, f in methods.items() if is_mutating(f)} == set(mutating_calls([]))
    assert {m for m, f in methods.items() if not is_mutating(f)} == READ_ONLY_METHODS
    for cls in (SystemTable, AuditLogTable, BinlogTable):  # system tables only serve the reads of a read-only view
        assert not issubclass(cls, Table), cls
        assert not public_methods(cls) & set(mutating_calls([])), cls


@pytest.mark.parametrize("kind", KINDS)
def test_every_mutating_method_is_refused_and_changes_nothing(catalog: Catalog, busy: Table, warehouse: str,
                                                              kind: str) -> None:
    writer = busy.new_write()
    writer.write(pa.table({"dt": ["b"], "id": [7], "v": [7.0]}, schema=SCHEMA))
    messages = writer.prepare_commit()  # data files written, not committed: commit() would publish them
    before = file_hashes(warehouse)
    st = catalog.get_table(f"db.t${kind}")
    assert st.read_only and isinstance(st, Table) and type(st) is Table  # a view of the data table, no subclass
    for name, call in mutating_calls(messages).items():
        method = name.rsplit(".", 1)[-1]
        with pytest.raises(ReadOnlyTableError, match=rf"db\.t\${kind} is a read-only system table: {method}"):
            call(st)
        assert file_hashes(warehouse) == before, name
    for view in (st.copy({"scan.mode": "latest"}), st.refresh()):
        with pytest.raises(ReadOnlyTableError):
            view.write(pa.table({"dt": ["a"], "id": [9], "v": [9.0]}, schema=SCHEMA))
    # reads that would record consumer progress are refused too
    with pytest.raises(ReadOnlyTableError, match="consumer 'c9'"):
        st.changelog_consumer("c9")
    with pytest.raises(ReadOnlyTableError, match="consumer 'c9'"):
        st.changelog_consumer(options={"consumer-id": "c9"})
    with pytest.raises(ReadOnlyTableError, match="consumer 'c9'"):
        st.new_stream_scan(options={"consumer-id": "c9"})
    with pytest.raises(ReadOnlyTableError, match="consumer 'c9'"):
        consume_changelog(ConsumeChangelog(warehouse=warehouse, table=f"db.t${kind}", consumer_id="c9",
                                           output=f"{warehouse}-out"), catalog)
    # catalog paths
    with pytest.raises(ReadOnlyTableError, match="drop_table"):
        catalog.drop_table(f"db.t${kind}")
    with pytest.raises(ReadOnlyTableError, match="drop_table"):
        catalog.drop_table(f"db.t${kind}", ignore_if_not_exists=True)
    with pytest.raises(ReadOnlyTableError, match="create_table"):
        catalog.create_table(f"db.t${kind}", SCHEMA)
    assert file_hashes(warehouse) == before
    # and reading still works
    assert st.read().num_rows >= 0 and catalog.get_table("db.t").consumers() == {"c1": 2}


def test_the_same_calls_change_the_data_table(catalog: Catalog, busy: Table, warehouse: str) -> None:
    """The check above can see a change: the data table's own calls do change files."""
    calls = mutating_calls([])
    for name in ("create_tag", "maintenance.reset_consumer", "write", "alter", "rollback_to"):
        before = file_hashes(warehouse)
        calls[name](busy)
        assert file_hashes(warehouse) != before, name
    busy.changelog_consumer("c9")  # allowed on the data table
    assert catalog.get_table("db.t$audit_log").changelog_consumer().poll(max_snapshots=1) is not None


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
    assert system_table(t, "buckets").read().column("record_count").to_pylist() == [2]
