"""The metadata tables ``<table>$snapshots``, ``$schemas``, ``$options``, ``$files``, ``$tags``, ``$consumers``,
``$branches``, ``$manifests``, ``$partitions``, ``$buckets``, ``$table_indexes`` and ``$aggregation_fields``
(:class:`SystemTable`): one row builder each, which reads the data table's metadata at every read."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from table_engine.errors import SnapshotNotExistError, TableNotExistError, UnsupportedError
from table_engine.format.data_file_meta import FileSource
from table_engine.format.schema_file import list_schema_ids, read_schema
from table_engine.format.snapshot import Snapshot, list_snapshot_ids, read_snapshot
from table_engine.lsm.merge_engines import aggregation_fields
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.lifecycle.file_refs import FileRefs
from table_engine.store.lifecycle.tags import TagManager
from table_engine.store.reading.scan import live_entries
from table_engine.system_tables.rows import BuiltRows
from table_engine.system_tables.schemas import SCHEMAS, SYSTEM_TABLES, TIME_TRAVEL_TABLES
from table_engine.system_tables.values import PartitionFormat, iso_duration, key_text, local_time, value_stats
from table_engine.table import Table
from table_engine.table.reading import incremental_read

Version = tuple[int | None, str | None, int | None]
"""The snapshot a builder describes: ``(snapshot_id, tag, timestamp_millis)``, all None for the latest."""


class SystemTable(BuiltRows):
    """The rows of a ``<table>$<name>`` metadata table, built from the data table's metadata at each read (a
    :class:`~table_engine.table_source.TableSource`)."""

    def __init__(self, table: Table, name: str) -> None:
        if name not in SCHEMAS:
            raise TableNotExistError(f"system table {table.identifier}${name} does not exist; known system tables: "
                                     f"{', '.join(SYSTEM_TABLES + ('ro', 'row_tracking', 'audit_log', 'binlog'))}")
        self.name = name
        self.data_table = table

    def arrow_schema(self, table: Table) -> pa.Schema:
        return SCHEMAS[self.name]

    def rows(self, table: Table, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) -> pa.Table:
        version: Version = (snapshot_id, tag, timestamp_millis)
        if self.name in TIME_TRAVEL_TABLES:
            if incremental_read(table, snapshot_id, tag, timestamp_millis):
                raise UnsupportedError(f"{table.identifier} shows one snapshot: incremental-between and scan.mode "
                                       "incremental / latest-delta are not supported for it")
            snap = table.resolve_snapshot(snapshot_id, tag, timestamp_millis)  # the view's options apply
            version = (None if snap is None else snap.id, None, None)
        return _BUILDERS[self.name](self.data_table, version)


# ------------------------------------------------------------------------------------------------ builders


def _build(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = SCHEMAS[name]
    return pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()


def _snapshots(t: Table, _: Version) -> pa.Table:
    return _build("snapshots", [{
        "snapshot_id": s.id, "schema_id": s.schema_id, "commit_user": s.commit_user,
        "commit_identifier": s.commit_identifier, "commit_kind": str(s.commit_kind),
        "commit_time": local_time(s.time_millis), "base_manifest_list": s.base_manifest_list,
        "delta_manifest_list": s.delta_manifest_list, "changelog_manifest_list": s.changelog_manifest_list,
        "total_record_count": s.total_record_count, "delta_record_count": s.delta_record_count,
        "changelog_record_count": s.changelog_record_count, "watermark": s.watermark,
        "next_row_id": s.next_row_id, "operation": s.operation, "writer_version": s.writer_version,
    } for s in _live_snapshots(t)])


def _live_snapshots(t: Table) -> list[Snapshot]:
    out = []
    for sid in list_snapshot_ids(t.file_io, t.path):
        try:
            out.append(read_snapshot(t.file_io, t.path, sid))
        except SnapshotNotExistError:  # expired while listing
            continue
    return out


def _schemas(t: Table, _: Version) -> pa.Table:
    rows = []
    for sid in list_schema_ids(t.file_io, t.path):
        s = read_schema(t.file_io, t.path, sid)
        rows.append({
            "schema_id": s.id, "fields": json.dumps([f.to_json() for f in s.fields]),
            "partition_keys": json.dumps(list(s.partition_keys)), "primary_keys": json.dumps(list(s.primary_keys)),
            "options": json.dumps(dict(s.options)), "comment": s.comment, "update_time": local_time(s.time_millis),
        })
    return _build("schemas", rows)


def _options(t: Table, _: Version) -> pa.Table:
    return _build("options", [{"key": k, "value": v} for k, v in sorted(t.schema.options.items())])


def _tags(t: Table, _: Version) -> pa.Table:
    rows = []
    for tag in TagManager(t.store).all():
        s = tag.snapshot
        rows.append({
            "tag_name": tag.name, "snapshot_id": s.id, "schema_id": s.schema_id,
            "commit_time": local_time(s.time_millis), "record_count": s.total_record_count,
            "create_time": tag.create_time,
            "time_retained": None if tag.time_retained_ms is None else iso_duration(tag.time_retained_ms),
        })
    return _build("tags", rows)


def _branches(t: Table, _: Version) -> pa.Table:
    return _build("branches", [{"branch_name": b.branch_name, "create_time": b.create_time} for b in t.branches()])


def _consumers(t: Table, _: Version) -> pa.Table:
    return _build("consumers", [{"consumer_id": c.consumer_id, "next_snapshot_id": c.next_snapshot}
                                for c in ConsumerManager(t.file_io, t.path).all()])


def _manifests(t: Table, version: Version) -> pa.Table:
    snap = t.resolve_snapshot(*version)
    if snap is None:
        return _build("manifests", [])
    refs = FileRefs(t.store)
    fmt = PartitionFormat(t)
    return _build("manifests", [{
        "file_name": m.file_name, "file_size": m.file_size, "num_added_files": m.num_added_files,
        "num_deleted_files": m.num_deleted_files, "schema_id": m.schema_id,
        "min_partition_stats": fmt.braces_safe(m.partition_stats.min_values),
        "max_partition_stats": fmt.braces_safe(m.partition_stats.max_values),
        "min_row_id": m.min_row_id, "max_row_id": m.max_row_id,
    } for m in refs.data_manifests(snap)])


def _files(t: Table, version: Version) -> pa.Table:
    snap = t.resolve_snapshot(*version)
    if snap is None:
        return _build("files", [])
    refs = FileRefs(t.store)
    fmt = PartitionFormat(t)
    rows = []
    for e in sorted(live_entries(t.file_io, t.path, snap), key=lambda e: (e.partition, e.bucket, e.file.file_name)):
        f = e.file
        fs = t.store.schema_by_id(f.schema_id)
        keys = key_text(f.min_key, fs), key_text(f.max_key, fs)
        nulls, lows, highs = value_stats(t, f)
        rows.append({
            "partition": fmt.braces(e.partition), "bucket": e.bucket, "file_path": refs.entry_path(e),
            "file_format": f.file_name.rsplit(".", 1)[-1] if "." in f.file_name else "parquet",
            "schema_id": f.schema_id, "level": f.level, "record_count": f.row_count, "file_size_in_bytes": f.file_size,
            "min_key": keys[0], "max_key": keys[1], "null_value_counts": nulls, "min_value_stats": lows,
            "max_value_stats": highs, "min_sequence_number": f.min_sequence_number,
            "max_sequence_number": f.max_sequence_number, "creation_time": local_time(f.creation_time_millis),
            "deleteRowCount": f.delete_row_count,
            "file_source": None if f.file_source is None else FileSource(f.file_source).name,
            "first_row_id": f.first_row_id, "write_cols": f.write_cols,
        })
    return _build("files", rows)


def _partitions(t: Table, version: Version) -> pa.Table:
    fmt = PartitionFormat(t)
    rows = []
    for (part, _), agg in _aggregate(t, version, by_bucket=False).items():
        rows.append({"partition": fmt.path(part), "record_count": agg[0], "file_size_in_bytes": agg[1],
                     "file_count": agg[2], "last_update_time": local_time(agg[3]), "total_buckets": agg[4],
                     "done": False})
    return _build("partitions", rows)


def _buckets(t: Table, version: Version) -> pa.Table:
    fmt = PartitionFormat(t)
    rows = [{"partition": fmt.braces(part), "bucket": bucket, "record_count": agg[0], "file_size_in_bytes": agg[1],
             "file_count": agg[2], "last_update_time": local_time(agg[3])}
            for (part, bucket), agg in _aggregate(t, version, by_bucket=True).items()]
    return _build("buckets", rows)


def _aggregate(t: Table, version: Version, by_bucket: bool) -> dict[tuple[bytes, int], list[int]]:
    """(partition, bucket or 0) -> [records, bytes, files, newest creation ms, total buckets], sorted."""
    snap = t.resolve_snapshot(*version)
    out: dict[tuple[bytes, int], list[int]] = {}
    if snap is None:
        return out
    for e in live_entries(t.file_io, t.path, snap):
        agg = out.setdefault((e.partition, e.bucket if by_bucket else 0), [0, 0, 0, 0, e.total_buckets])
        agg[0] += e.file.row_count
        agg[1] += e.file.file_size
        agg[2] += 1
        agg[3] = max(agg[3], e.file.creation_time_millis or 0)
    return dict(sorted(out.items()))


def _table_indexes(t: Table, version: Version) -> pa.Table:
    """Paimon's ``TableIndexesTable``: every index file (HASH, DELETION_VECTORS, ...) of the snapshot."""
    fmt = PartitionFormat(t)
    names = {f.id: f.name for f in t.schema.fields}
    rows = []
    for e in t.store.index_entries(t.resolve_snapshot(*version)):
        f, gi = e.index_file, e.index_file.global_index
        rows.append({
            "partition": fmt.braces_safe(e.partition), "bucket": e.bucket, "index_type": f.index_type,
            "file_name": f.file_name, "file_size": f.file_size, "row_count": f.row_count,
            "dv_ranges": None if f.dv_ranges is None else [
                {"f0": r.data_file_name, "f1": r.offset, "f2": r.length, "_CARDINALITY": r.cardinality}
                for r in f.dv_ranges],
            "row_range_start": gi.row_range_start if gi else None, "row_range_end": gi.row_range_end if gi else None,
            "index_field_id": gi.index_field_id if gi else None,
            "index_field_name": names.get(gi.index_field_id) if gi else None,
        })
    return _build("table_indexes", rows)


_BUILDERS: dict[str, Callable[[Table, Version], pa.Table]] = {
    "snapshots": _snapshots, "schemas": _schemas, "options": _options, "files": _files, "tags": _tags,
    "consumers": _consumers, "branches": _branches, "manifests": _manifests, "partitions": _partitions,
    "buckets": _buckets, "table_indexes": _table_indexes,
    "aggregation_fields": lambda t, _version: aggregation_fields(t.schema),
}
