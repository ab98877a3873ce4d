"""System tables ``<table>$<name>`` as Arrow tables, with Paimon's column names (``docs/concepts/system-tables``).

``catalog.get_table("db.t$snapshots").read()``. Supported: ``snapshots``, ``schemas``, ``options``, ``files``,
``tags``, ``consumers``, ``manifests``, ``partitions``, ``buckets`` (``ro``, the read-optimized view, is a data
table, see :func:`~table_engine.table.reading.read_optimized_view`; ``audit_log`` and ``binlog`` are the change tables
:class:`AuditLogTable` and :class:`BinlogTable`). ``files``, ``manifests``, ``partitions`` and ``buckets`` describe
the latest snapshot, or the one given by ``snapshot_id``/``tag``/``timestamp_millis`` (or, but for ``buckets``, by
the time-travel options of a ``copy``: ``get_table("db.t$files").copy({"scan.snapshot-id": "1"})``); ``read`` also takes
``columns`` and ``filter`` like a data table.

Value formats follow Paimon: times are local wall-clock ``timestamp[ms]`` (Java ``LocalDateTime``), partitions
``{v1, v2}`` (``$files``, ``$buckets``, ``$manifests``) or ``k1=v1/k2=v2`` (``$partitions``), keys ``[v1, v2]``,
per-column stats ``{col=value, ...}`` sorted by column, tag retention an ISO-8601 duration (``PT24H``).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from table_engine.errors import SnapshotNotExistError, TableNotExistError, UnsupportedError
from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.schema_file import list_schema_ids, read_schema
from table_engine.format.snapshot import Snapshot, list_snapshot_ids, read_snapshot
from table_engine.io.paths import partition_value_string
from table_engine.lsm.merge_engines import aggregation_fields
from table_engine.predicate import conjunction, parse_filters, validate_columns
from table_engine.store.changes.binlog import binlog_schema, pack_binlog
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.changes.incremental import ROWKIND_COLUMN, changes_schema
from table_engine.store.changes.stream_scan import FULL, StreamPlan, StreamScan, iter_plan_splits
from table_engine.store.lifecycle.file_refs import FileRefs
from table_engine.store.lifecycle.tags import TagManager
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table
from table_engine.table.branches import branch_identifier
from table_engine.table.reading import incremental_batches, incremental_read, plan_snapshot
from table_engine.table_source import TableSource

__all__ = ["SYSTEM_TABLES", "AuditLogTable", "BinlogTable", "SystemTable", "system_table"]

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


class BinlogStreamScan(StreamScan):
    """A stream scan whose :meth:`read` returns binlog rows (updates packed)."""

    def read(self, plan: StreamPlan, columns: Sequence[str] | None = None,
             batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
        packed = pack_binlog(super().read(plan, None, batch_size), pair_updates=plan.kind != FULL)
        for b in packed:
            yield b if columns is None else b.select([ROWKIND_COLUMN, *columns])

    def output_schema(self, columns: Sequence[str] | None = None) -> pa.Schema:
        schema = binlog_schema(super().output_schema(None))
        return schema if columns is None else pa.schema([schema.field(n) for n in (ROWKIND_COLUMN, *columns)])


def system_table(table: Table, name: str) -> Table:
    """``<table>$<name>``: a read-only view of ``table`` whose rows are a metadata table, or the ``audit_log`` /
    ``binlog`` change tables; every mutating method of the view raises ReadOnlyTableError."""
    source: TableSource
    if name == "audit_log":
        source = AuditLogTable()
    elif name == "binlog":
        source = BinlogTable()
    else:
        source = SystemTable(table, name)
    base = branch_identifier(table.identifier, table.branch)
    return Table(table.file_io, table.path, f"{base}${name}", table.schema, source=source)


class SystemTable:
    """The rows of a ``<table>$<name>`` metadata table, built from the data table's metadata at each read (a
    :class:`~table_engine.table_source.TableSource`)."""

    stream_scan_class: type[StreamScan] = StreamScan

    def __init__(self, table: Table, name: str) -> None:
        if name not in SCHEMAS:
            raise TableNotExistError(f"system table {table.identifier}${name} does not exist; known system tables: "
                                     f"{', '.join(SYSTEM_TABLES + ('ro', 'row_tracking', 'audit_log', 'binlog'))}")
        self.name = name
        self.data_table = table

    def arrow_schema(self, table: Table) -> pa.Schema:
        return SCHEMAS[self.name]

    def read(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
             tag: str | None, timestamp_millis: int | None) -> pa.Table:
        schema = SCHEMAS[self.name]
        version: _Version = (snapshot_id, tag, timestamp_millis)
        if self.name in TIME_TRAVEL_TABLES:
            if incremental_read(table, snapshot_id, tag, timestamp_millis):
                raise UnsupportedError(f"{table.identifier} shows one snapshot: incremental-between and scan.mode "
                                       "incremental / latest-delta are not supported for it")
            snap = table.resolve_snapshot(snapshot_id, tag, timestamp_millis)  # the view's options apply
            version = (None if snap is None else snap.id, None, None)
        result = _BUILDERS[self.name](self.data_table, version)
        preds = parse_filters(filter)
        validate_columns(preds, schema.names)
        expr = conjunction(preds)
        if expr is not None:
            result = result.filter(expr)
        if columns is not None:
            validate_columns(parse_filters([(c, "is null") for c in columns]), schema.names)
            result = result.select(list(columns))
        return result

    def to_batches(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
                   tag: str | None, timestamp_millis: int | None, batch_size: int) -> Iterator[pa.RecordBatch]:
        yield from self.read(table, columns, filter, snapshot_id, tag, timestamp_millis).to_batches(batch_size)


class AuditLogTable:
    """``<table>$audit_log``: the table's rows with a leading ``rowkind`` column (Paimon's ``AuditLogTable``).

    A batch read of a snapshot returns its merged rows, all ``+I``; with ``incremental-between`` (or
    ``-timestamp``, ``scan.mode`` latest-delta) options (:meth:`Table.copy`) the changes with their row kinds,
    deletes included. Streaming reads (:meth:`Table.new_stream_scan`, :meth:`Table.changelog_consumer`) yield row
    kinds as the data table's do. ``columns`` and ``filter`` may name ``rowkind``. Read-only.
    """

    name = "audit_log"
    stream_scan_class: type[StreamScan] = StreamScan

    def arrow_schema(self, table: Table) -> pa.Schema:
        return changes_schema(table.schema)

    def read(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
             tag: str | None, timestamp_millis: int | None) -> pa.Table:
        schema = self._output_schema(table, columns)
        batches = self.to_batches(table, columns, filter, snapshot_id, tag, timestamp_millis, 65536)
        return pa.Table.from_batches(list(batches), schema=schema)

    def to_batches(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
                   tag: str | None, timestamp_millis: int | None, batch_size: int) -> Iterator[pa.RecordBatch]:
        preds = parse_filters(filter)
        validate_columns(preds, changes_schema(table.schema).names)
        data_preds = [p for p in preds if p.column != ROWKIND_COLUMN]
        kind_expr = conjunction([p for p in preds if p.column == ROWKIND_COLUMN])
        data_cols = None if columns is None else [c for c in columns if c != ROWKIND_COLUMN]
        if incremental_read(table, snapshot_id, tag, timestamp_millis):
            batches = incremental_batches(table, data_cols, data_preds or None, batch_size, with_row_kind=True)
        else:
            splits = plan_snapshot(table, data_preds or None, snapshot_id, tag, timestamp_millis)
            batches = iter_plan_splits(table.store, splits, data_preds, data_cols, batch_size)
        for b in batches:
            if kind_expr is not None:
                b = b.filter(kind_expr)
            yield b if columns is None else b.select(list(columns))

    def _output_schema(self, table: Table, columns: Sequence[str] | None) -> pa.Schema:
        schema = self.arrow_schema(table)
        if columns is None:
            return schema
        validate_columns(parse_filters([(c, "is null") for c in columns]), schema.names)
        return pa.schema([schema.field(c) for c in columns])


class BinlogTable(AuditLogTable):
    """``<table>$binlog``: ``rowkind`` then every column as an array: ``[value]``, or ``[before, after]`` for an
    update whose ``-U`` and ``+U`` rows are packed into one ``+U`` row (Paimon's ``BinlogTable``). Snapshot reads
    pack every row alone; incremental and streaming reads pair updates."""

    name = "binlog"
    stream_scan_class: type[StreamScan] = BinlogStreamScan

    def arrow_schema(self, table: Table) -> pa.Schema:
        return binlog_schema(changes_schema(table.schema))

    def to_batches(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
                   tag: str | None, timestamp_millis: int | None, batch_size: int) -> Iterator[pa.RecordBatch]:
        incremental = incremental_read(table, snapshot_id, tag, timestamp_millis)
        rows = super().to_batches(table, None, filter, snapshot_id, tag, timestamp_millis, batch_size)
        for b in pack_binlog(rows, pair_updates=incremental):
            yield b if columns is None else b.select(list(columns))


# ------------------------------------------------------------------------------------------------ builders

_Version = tuple[int | None, str | None, int | None]


def _local(ms: int | None) -> datetime.datetime | None:
    return None if ms is None else datetime.datetime.fromtimestamp(ms / 1000)


def _build(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = SCHEMAS[name]
    return pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()


def _snapshots(t: Table, _: _Version) -> pa.Table:
    return _build("snapshots", [{
        "snapshot_id": s.id, "schema_id": s.schema_id, "commit_user": s.commit_user,
        "commit_identifier": s.commit_identifier, "commit_kind": str(s.commit_kind),
        "commit_time": _local(s.time_millis), "base_manifest_list": s.base_manifest_list,
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


def _schemas(t: Table, _: _Version) -> pa.Table:
    rows = []
    for sid in list_schema_ids(t.file_io, t.path):
        s = read_schema(t.file_io, t.path, sid)
        rows.append({
            "schema_id": s.id, "fields": json.dumps([f.to_json() for f in s.fields]),
            "partition_keys": json.dumps(list(s.partition_keys)), "primary_keys": json.dumps(list(s.primary_keys)),
            "options": json.dumps(dict(s.options)), "comment": s.comment, "update_time": _local(s.time_millis),
        })
    return _build("schemas", rows)


def _options(t: Table, _: _Version) -> pa.Table:
    return _build("options", [{"key": k, "value": v} for k, v in sorted(t.schema.options.items())])


def _tags(t: Table, _: _Version) -> pa.Table:
    rows = []
    for tag in TagManager(t.store).all():
        s = tag.snapshot
        rows.append({
            "tag_name": tag.name, "snapshot_id": s.id, "schema_id": s.schema_id, "commit_time": _local(s.time_millis),
            "record_count": s.total_record_count, "create_time": tag.create_time,
            "time_retained": None if tag.time_retained_ms is None else _iso_duration(tag.time_retained_ms),
        })
    return _build("tags", rows)


def _branches(t: Table, _: _Version) -> pa.Table:
    return _build("branches", [{"branch_name": b.branch_name, "create_time": b.create_time} for b in t.branches()])


def _consumers(t: Table, _: _Version) -> pa.Table:
    return _build("consumers", [{"consumer_id": c.consumer_id, "next_snapshot_id": c.next_snapshot}
                                for c in ConsumerManager(t.file_io, t.path).all()])


def _manifests(t: Table, version: _Version) -> pa.Table:
    snap = t.resolve_snapshot(*version)
    if snap is None:
        return _build("manifests", [])
    refs = FileRefs(t.store)
    fmt = _PartitionFormat(t)
    return _build("manifests", [{
        "file_name": m.file_name, "file_size": m.file_size, "num_added_files": m.num_added_files,
        "num_deleted_files": m.num_deleted_files, "schema_id": m.schema_id,
        "min_partition_stats": fmt.braces_safe(m.partition_stats.min_values),
        "max_partition_stats": fmt.braces_safe(m.partition_stats.max_values),
        "min_row_id": m.min_row_id, "max_row_id": m.max_row_id,
    } for m in refs.data_manifests(snap)])


def _files(t: Table, version: _Version) -> pa.Table:
    snap = t.resolve_snapshot(*version)
    if snap is None:
        return _build("files", [])
    refs = FileRefs(t.store)
    fmt = _PartitionFormat(t)
    rows = []
    for e in sorted(live_entries(t.file_io, t.path, snap), key=lambda e: (e.partition, e.bucket, e.file.file_name)):
        f = e.file
        fs = t.store.schema_by_id(f.schema_id)
        keys = _decode_or_none(f.min_key, fs), _decode_or_none(f.max_key, fs)
        nulls, lows, highs = _value_stats(t, f)
        rows.append({
            "partition": fmt.braces(e.partition), "bucket": e.bucket, "file_path": refs.entry_path(e),
            "file_format": f.file_name.rsplit(".", 1)[-1] if "." in f.file_name else "parquet",
            "schema_id": f.schema_id, "level": f.level, "record_count": f.row_count, "file_size_in_bytes": f.file_size,
            "min_key": keys[0], "max_key": keys[1], "null_value_counts": nulls, "min_value_stats": lows,
            "max_value_stats": highs, "min_sequence_number": f.min_sequence_number,
            "max_sequence_number": f.max_sequence_number, "creation_time": _local(f.creation_time_millis),
            "deleteRowCount": f.delete_row_count,
            "file_source": None if f.file_source is None else FileSource(f.file_source).name,
            "first_row_id": f.first_row_id, "write_cols": f.write_cols,
        })
    return _build("files", rows)


def _partitions(t: Table, version: _Version) -> pa.Table:
    fmt = _PartitionFormat(t)
    rows = []
    for (part, _), agg in _aggregate(t, version, by_bucket=False).items():
        rows.append({"partition": fmt.path(part), "record_count": agg[0], "file_size_in_bytes": agg[1],
                     "file_count": agg[2], "last_update_time": _local(agg[3]), "total_buckets": agg[4],
                     "done": False})
    return _build("partitions", rows)


def _buckets(t: Table, version: _Version) -> pa.Table:
    fmt = _PartitionFormat(t)
    rows = [{"partition": fmt.braces(part), "bucket": bucket, "record_count": agg[0], "file_size_in_bytes": agg[1],
             "file_count": agg[2], "last_update_time": _local(agg[3])}
            for (part, bucket), agg in _aggregate(t, version, by_bucket=True).items()]
    return _build("buckets", rows)


def _aggregate(t: Table, version: _Version, by_bucket: bool) -> dict[tuple[bytes, int], list[int]]:
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


def _table_indexes(t: Table, version: _Version) -> pa.Table:
    """Paimon's ``TableIndexesTable``: every index file (HASH, DELETION_VECTORS, ...) of the snapshot."""
    fmt = _PartitionFormat(t)
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


_BUILDERS: dict[str, Callable[[Table, _Version], pa.Table]] = {
    "snapshots": _snapshots, "schemas": _schemas, "options": _options, "files": _files, "tags": _tags,
    "consumers": _consumers, "branches": _branches, "manifests": _manifests, "partitions": _partitions,
    "buckets": _buckets, "table_indexes": _table_indexes,
    "aggregation_fields": lambda t, _version: aggregation_fields(t.schema),
}


# ------------------------------------------------------------------------------------------------ formatting


class _PartitionFormat:
    def __init__(self, t: Table) -> None:
        self.keys = list(t.schema.partition_keys)
        self.types = [f.type for f in t.schema.partition_fields()]
        self.default = t.options.partition_default_name()

    def values(self, part: bytes) -> list[Any]:
        return decode_row(part, self.types) if self.types else []

    def braces(self, part: bytes) -> str:
        return "{" + ", ".join(_java_str(v) for v in self.values(part)) + "}"

    def braces_safe(self, part: bytes) -> str | None:
        try:
            return self.braces(part)
        except Exception:
            return None

    def path(self, part: bytes) -> str:
        return "/".join(f"{k}={partition_value_string(v, t, self.default)}"
                        for k, v, t in zip(self.keys, self.values(part), self.types))


def _java_str(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, bytes):
        return v.hex()
    return str(v)


def _decode_or_none(key: bytes, schema: Any) -> str | None:
    fields = schema.key_fields() if schema.primary_keys else []
    if not fields:
        return None
    try:
        return "[" + ", ".join(_java_str(v) for v in decode_row(key, [f.type for f in fields])) + "]"
    except Exception:
        return None


def _value_stats(t: Table, f: DataFileMeta) -> tuple[str, str, str]:
    """``{col=..}`` strings of null counts, min and max values for the current columns (null: no stats)."""
    current = {fld.id: fld.name for fld in t.schema.fields}
    fs = t.store.schema_by_id(f.schema_id)
    cols = list(fs.fields) if f.value_stats_cols is None else [fs.field(c) for c in f.value_stats_cols
                                                                   if c in fs.field_names()]
    nulls: dict[str, Any] = dict.fromkeys(current.values())
    lows: dict[str, Any] = dict.fromkeys(current.values())
    highs: dict[str, Any] = dict.fromkeys(current.values())
    vs = f.value_stats
    if cols and vs.null_counts:
        try:
            lo = decode_row(vs.min_values, [c.type for c in cols])
            hi = decode_row(vs.max_values, [c.type for c in cols])
        except Exception:
            lo = hi = [None] * len(cols)
        for i, c in enumerate(cols):
            name = current.get(c.id)
            if name is not None and i < len(vs.null_counts):
                nulls[name], lows[name], highs[name] = vs.null_counts[i], lo[i], hi[i]

    def render(d: dict[str, Any]) -> str:
        return "{" + ", ".join(f"{k}={_java_str(d[k])}" for k in sorted(d)) + "}"

    return render(nulls), render(lows), render(highs)


def _iso_duration(ms: int) -> str:
    """Java ``Duration.toString()``: ``PT24H``, ``PT1H30M``, ``PT0.5S``."""
    if ms == 0:
        return "PT0S"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    out = "PT"
    if hours:
        out += f"{sign}{hours}H"
    if minutes:
        out += f"{sign}{minutes}M"
    if seconds or millis:
        frac = f".{millis:03d}".rstrip("0") if millis else ""
        out += f"{sign}{seconds}{frac}S"
    return out
