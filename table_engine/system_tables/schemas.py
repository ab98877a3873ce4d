"""The Arrow schemas of the metadata tables, with Paimon's column names and nullability (:data:`SCHEMAS`), and which
of them follow a read's time-travel options (:data:`TIME_TRAVEL_TABLES`)."""

from __future__ import annotations

import pyarrow as pa

_TS = pa.timestamp("ms")
_STR, _I64, _I32 = pa.string(), pa.int64(), pa.int32()


def _f(name: str, t: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable=nullable)


SCHEMAS: dict[str, pa.Schema] = {
    "snapshots": pa.schema([
        _f("snapshot_id", _I64, False), _f("schema_id", _I64, False), _f("commit_user", _STR, False),
        _f("commit_identifier", _I64, False), _f("commit_kind", _STR, False), _f("commit_time", _TS, False),
        _f("base_manifest_list", _STR, False), _f("delta_manifest_list", _STR, False),
        _f("changelog_manifest_list", _STR), _f("total_record_count", _I64), _f("delta_record_count", _I64),
        _f("changelog_record_count", _I64), _f("watermark", _I64), _f("next_row_id", _I64),
        _f("operation", _STR), _f("writer_version", _STR)]),
    "schemas": pa.schema([
        _f("schema_id", _I64, False), _f("fields", _STR, False), _f("partition_keys", _STR, False),
        _f("primary_keys", _STR, False), _f("options", _STR, False), _f("comment", _STR),
        _f("update_time", _TS, False)]),
    "options": pa.schema([_f("key", _STR, False), _f("value", _STR, False)]),
    "files": pa.schema([
        _f("partition", _STR), _f("bucket", _I32, False), _f("file_path", _STR, False),
        _f("file_format", _STR, False), _f("schema_id", _I64, False), _f("level", _I32, False),
        _f("record_count", _I64, False), _f("file_size_in_bytes", _I64, False), _f("min_key", _STR),
        _f("max_key", _STR), _f("null_value_counts", _STR, False), _f("min_value_stats", _STR, False),
        _f("max_value_stats", _STR, False), _f("min_sequence_number", _I64), _f("max_sequence_number", _I64),
        _f("creation_time", _TS), _f("deleteRowCount", _I64), _f("file_source", _STR),
        _f("first_row_id", _I64), _f("write_cols", pa.list_(_STR))]),
    "tags": pa.schema([
        _f("tag_name", _STR, False), _f("snapshot_id", _I64, False), _f("schema_id", _I64, False),
        _f("commit_time", _TS, False), _f("record_count", _I64), _f("create_time", _TS),
        _f("time_retained", _STR)]),
    "consumers": pa.schema([_f("consumer_id", _STR, False), _f("next_snapshot_id", _I64, False)]),
    "branches": pa.schema([_f("branch_name", _STR, False), _f("create_time", _TS, False)]),
    "manifests": pa.schema([
        _f("file_name", _STR, False), _f("file_size", _I64, False), _f("num_added_files", _I64, False),
        _f("num_deleted_files", _I64, False), _f("schema_id", _I64, False), _f("min_partition_stats", _STR),
        _f("max_partition_stats", _STR), _f("min_row_id", _I64), _f("max_row_id", _I64)]),
    "partitions": pa.schema([
        _f("partition", _STR), _f("record_count", _I64, False), _f("file_size_in_bytes", _I64, False),
        _f("file_count", _I64, False), _f("last_update_time", _TS), _f("created_at", _TS),
        _f("created_by", _STR), _f("updated_by", _STR), _f("options", _STR), _f("total_buckets", _I32, False),
        _f("done", pa.bool_(), False), _f("deleted_record_count", _I64)]),
    "buckets": pa.schema([
        _f("partition", _STR), _f("bucket", _I32, False), _f("record_count", _I64, False),
        _f("file_size_in_bytes", _I64, False), _f("file_count", _I64, False), _f("last_update_time", _TS)]),
    "table_indexes": pa.schema([
        _f("partition", _STR), _f("bucket", _I32, False), _f("index_type", _STR, False), _f("file_name", _STR, False),
        _f("file_size", _I64, False), _f("row_count", _I64, False),
        _f("dv_ranges", pa.list_(pa.struct([_f("f0", _STR, False), _f("f1", _I32, False), _f("f2", _I32, False),
                                            _f("_CARDINALITY", _I64)]))),
        _f("row_range_start", _I64), _f("row_range_end", _I64), _f("index_field_id", _I32),
        _f("index_field_name", _STR)]),
    "aggregation_fields": pa.schema([
        _f("field_name", _STR, False), _f("field_type", _STR, False), _f("function", _STR),
        _f("function_options", _STR), _f("comment", _STR)]),
}
SYSTEM_TABLES = tuple(SCHEMAS)
TIME_TRAVEL_TABLES = frozenset({"files", "manifests", "partitions", "table_indexes"})
"""System tables that, as in Paimon, describe the snapshot a data read of the same options would read: time-travel
options given through ``copy`` (``scan.snapshot-id``, ``scan.tag-name``, ``scan.timestamp-millis``...) select it.
(``$buckets`` follows only explicit ``snapshot_id``/``tag``/``timestamp_millis``: Paimon's ignores the options.)"""
