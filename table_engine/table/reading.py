"""How a :class:`~table_engine.table.Table` reads: batch reads of a snapshot chosen by id, tag, time or the
table's time-travel options (with ``scan.fallback-branch``), incremental reads, streaming scans and changelog
consumers, and the read-only views ``$ro`` and ``$row_tracking``. The ``Table`` methods are the public entry
points; the system tables (``$audit_log``, ``$binlog``) read through :func:`incremental_read`,
:func:`incremental_batches` and :func:`plan_snapshot`."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from table_engine.core_options import CONSUMER_ID
from table_engine.errors import SchemaError, SnapshotNotExistError, TableEngineError, UnsupportedError
from table_engine.features import Op
from table_engine.format.snapshot import Snapshot, snapshot_at_or_before_time
from table_engine.io.paths import branch_of
from table_engine.predicate import parse_filters, validate_columns
from table_engine.store.changes.batch_changes import (
    batch_start_snapshot,
    is_incremental,
    needs_start_resolution,
    plan_incremental,
    read_incremental,
)
from table_engine.store.changes.changelog_consumer import ChangelogConsumer
from table_engine.store.changes.stream_scan import StreamScan
from table_engine.store.reading.global_index_read import prune_by_global_index
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.row_tracking import ROW_TRACKING_COLUMNS
from table_engine.store.reading.scan import Split, plan_splits
from table_engine.table.branches import branch_identifier
from table_engine.table.fallback import FallbackRead, fallback_read
from table_engine.table.guards import check_change_reads, check_consumer, check_files, check_supported
from table_engine.table.tags import tag_snapshot_or_none

if TYPE_CHECKING:
    from table_engine.table import Table

READ_OPTIMIZED = "ro"
"""The ``$ro`` view of a primary-key table: only its max-level files (the latest full compaction), no merging."""
ROW_TRACKING = "row_tracking"
"""The ``$row_tracking`` view of a row-tracking append table: every column and ``_ROW_ID``, ``_SEQUENCE_NUMBER``."""


def resolve_snapshot(table: Table, snapshot_id: int | None = None, tag: str | None = None,
                     timestamp_millis: int | None = None) -> Snapshot | None:
    """The snapshot a batch read of ``table`` reads (see :meth:`Table.resolve_snapshot`)."""
    if sum(x is not None for x in (snapshot_id, tag, timestamp_millis)) > 1:
        raise TableEngineError("give at most one of snapshot_id, tag and timestamp_millis")
    if tag is not None:
        return table.tag_snapshot(tag)
    if snapshot_id is not None:
        return table.snapshot(snapshot_id)
    if timestamp_millis is not None:
        snap = snapshot_at_or_before_time(table.file_io, table.path, timestamp_millis)
        if snap is None:
            raise SnapshotNotExistError(f"table {table.identifier} has no snapshot at or before {timestamp_millis} ms")
        return snap
    if needs_start_resolution(table.options):  # scan.mode, scan.snapshot-id, scan.tag-name, scan.timestamp...
        return batch_start_snapshot(table.store, functools.partial(tag_snapshot_or_none, table))
    return table.store.latest_snapshot()


def plan(table: Table, filter: Any, snapshot_id: int | None, tag: str | None,
         timestamp_millis: int | None) -> list[Split]:
    """The splits of :meth:`Table.plan <table_engine.table.Table.plan>` (refused with a fallback branch)."""
    if fallback_read(table, snapshot_id, tag, timestamp_millis) is not None:
        raise UnsupportedError(f"table {table.identifier} has 'scan.fallback-branch': its splits come from two "
                               "branches; plan it with plan_with_fallback()")
    return plan_snapshot(table, filter, snapshot_id, tag, timestamp_millis)


def plan_with_fallback(table: Table, filter: Any, snapshot_id: int | None, tag: str | None,
                       timestamp_millis: int | None) -> list[tuple[str | None, Split]]:
    """The splits of :meth:`Table.plan_with_fallback <table_engine.table.Table.plan_with_fallback>`."""
    if incremental_read(table, snapshot_id, tag, timestamp_millis):
        raise UnsupportedError(f"table {table.identifier}: an incremental read has no plan of snapshot splits; "
                               "read it with read() or to_batches()")
    splits = plan_snapshot(table, filter, snapshot_id, tag, timestamp_millis)
    out: list[tuple[str | None, Split]] = [(None, s) for s in splits]
    fallback = fallback_read(table, snapshot_id, tag, timestamp_millis)
    if fallback is not None:
        done = {s.partition for s in splits}
        out += [(fallback.branch, s) for s in plan_snapshot(fallback.table, filter, *fallback.args)
                if s.partition not in done]
    return out


def plan_snapshot(table: Table, filter: Any = None, snapshot_id: int | None = None, tag: str | None = None,
                  timestamp_millis: int | None = None) -> list[Split]:
    """The splits of ``table``'s own snapshot (no fallback branch): one per (partition, bucket), pruned by
    ``filter``; the capability gate checks the snapshot and the files."""
    preds = parse_filters(filter)
    validate_columns(preds, readable_columns(table))
    snap = resolve_snapshot(table, snapshot_id, tag, timestamp_millis)
    check_supported(table, Op.READ, snap)
    # filters on the row-tracking system columns are applied by the read (files have no stats for them)
    file_preds = [p for p in preds if p.column not in ROW_TRACKING_COLUMNS or p.column in table.schema.field_names()]
    splits = plan_splits(table.file_io, table.path, snap, table.schema, file_preds, table.store.schema_by_id,
                         skip_level0=table.store.batch_scan_skip_level0(),
                         merge_capabilities=table.store.merge_capabilities)
    check_files(table, (f for s in splits for f in s.files))
    if table.options.row_tracking_enabled() and not table.schema.primary_keys:
        splits, _ = prune_by_global_index(table.store, snap, preds, splits)  # BTree global indexes (ADR 0019)
    return splits


def new_read(table: Table, columns: Sequence[str] | None = None, filter: Any = None) -> TableRead:
    """The reader of :meth:`Table.new_read <table_engine.table.Table.new_read>`."""
    check_supported(table, Op.READ)
    preds = parse_filters(filter)
    validate_columns(preds, readable_columns(table))
    if columns is None and table.view == ROW_TRACKING:
        columns = readable_columns(table)
    return TableRead(read_context(table.store), columns, preds)


def readable_columns(table: Table) -> list[str]:
    """The columns reads can project and filter: the schema's, and with ``row-tracking.enabled`` on an append table
    the system columns ``_ROW_ID`` and ``_SEQUENCE_NUMBER``."""
    names = table.schema.field_names()
    if table.options.row_tracking_enabled() and not table.schema.primary_keys:
        names = names + [c for c in ROW_TRACKING_COLUMNS if c not in names]
    return names


def read(table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None, tag: str | None,
         timestamp_millis: int | None, read_optimized: bool | None) -> pa.Table:
    """The rows of :meth:`Table.read <table_engine.table.Table.read>`."""
    if table.source is not None:
        return table.source.read(table, columns, filter, snapshot_id, tag, timestamp_millis)
    if incremental_read(table, snapshot_id, tag, timestamp_millis):
        return pa.Table.from_batches(list(incremental_batches(table, columns, filter, 65536)),
                                     schema=new_read(table, columns).output_schema)
    reader, splits = _reader(table, columns, filter, snapshot_id, tag, timestamp_millis, read_optimized)
    fallback = fallback_read(table, snapshot_id, tag, timestamp_millis)
    if fallback is None:
        return reader.to_arrow(splits)
    main = reader.to_arrow(splits)
    other, rest = _reader(fallback.table, columns, filter, *fallback.args, read_optimized)
    done = {s.partition for s in splits}
    more = other.to_arrow([s for s in rest if s.partition not in done])
    return pa.concat_tables([main, more.cast(main.schema)])


def to_batches(table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None, tag: str | None,
               timestamp_millis: int | None, batch_size: int, read_optimized: bool | None
               ) -> Iterator[pa.RecordBatch]:
    """The batches of :meth:`Table.to_batches <table_engine.table.Table.to_batches>`."""
    if table.source is not None:
        yield from table.source.to_batches(table, columns, filter, snapshot_id, tag, timestamp_millis, batch_size)
        return
    if incremental_read(table, snapshot_id, tag, timestamp_millis):
        yield from incremental_batches(table, columns, filter, batch_size)
        return
    reader, splits = _reader(table, columns, filter, snapshot_id, tag, timestamp_millis, read_optimized)
    yield from reader.to_batches(splits, batch_size)
    fallback = fallback_read(table, snapshot_id, tag, timestamp_millis)
    if fallback is not None:
        other, rest = _reader(fallback.table, columns, filter, *fallback.args, read_optimized)
        done = {s.partition for s in splits}
        schema = reader.output_schema
        for b in other.to_batches([s for s in rest if s.partition not in done], batch_size):
            yield pa.RecordBatch.from_arrays(b.columns, schema=schema)


def _reader(table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None, tag: str | None,
            timestamp_millis: int | None, read_optimized: bool | None) -> tuple[TableRead, list[Split]]:
    splits = plan_snapshot(table, filter, snapshot_id, tag, timestamp_millis)
    reader = new_read(table, columns, filter)
    if (table.view == READ_OPTIMIZED if read_optimized is None else read_optimized) and table.schema.primary_keys:
        top = table.options.num_levels() - 1
        splits = [replace(s, files=[f for f in s.files if f.level == top]) for s in splits]
        splits = [s for s in splits if s.files]
        reader.read_optimized = True
    return reader, splits


def incremental_read(table: Table, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) -> bool:
    """Whether a read of ``table`` without a snapshot, tag or time reads changes (``incremental-between*``)."""
    return snapshot_id is None and tag is None and timestamp_millis is None and is_incremental(table.options)


def incremental_batches(table: Table, columns: Sequence[str] | None, filter: Any, batch_size: int,
                        with_row_kind: bool = False) -> Iterator[pa.RecordBatch]:
    """The rows an incremental read (``incremental-between*``) of ``table`` returns; ``with_row_kind`` adds the
    ``rowkind`` column. The fallback branch's changes of the partitions this branch's changes lack follow."""
    check_supported(table, Op.READ)
    check_change_reads(table, "incremental reads")
    preds = parse_filters(filter)
    validate_columns(preds, table.schema.field_names())
    if columns is not None:
        new_read(table, columns)  # checks the names
        system = [c for c in columns if c in ROW_TRACKING_COLUMNS and c not in table.schema.field_names()]
        if system:
            raise SchemaError(f"table {table.identifier}: {system[0]} is not readable in an incremental read "
                              "(only in batch reads of a snapshot)")
    splits = plan_incremental(table.store, functools.partial(tag_snapshot_or_none, table), preds)
    yield from read_incremental(table.store, splits, preds, columns, with_row_kind, batch_size)
    fallback = fallback_read(table, None, None, None)
    if fallback is not None:  # the fallback's changes of the partitions this branch's changes lack
        yield from _fallback_changes(table, fallback, {s.partition for s in splits}, columns, preds,
                                     with_row_kind, batch_size)


def _fallback_changes(table: Table, fallback: FallbackRead, done: set[bytes], columns: Sequence[str] | None,
                      preds: Any, with_row_kind: bool, batch_size: int) -> Iterator[pa.RecordBatch]:
    theirs = fallback.table
    rest = [s for s in plan_incremental(theirs.store, functools.partial(tag_snapshot_or_none, theirs), preds)
            if s.partition not in done]
    schema: pa.Schema | None = None
    for b in read_incremental(theirs.store, rest, preds, columns, with_row_kind, batch_size):
        if schema is None:  # this branch's fields (nullability may differ), then the row kind
            mine = new_read(table, columns).output_schema
            schema = pa.schema([mine.field(n) if n in mine.names else b.schema.field(n) for n in b.schema.names])
        yield pa.RecordBatch.from_arrays(b.columns, schema=schema)


def new_stream_scan(table: Table, filter: Any, options: Mapping[str, str] | None) -> StreamScan:
    """The scan of :meth:`Table.new_stream_scan <table_engine.table.Table.new_stream_scan>`."""
    t = table.copy(options) if options else table
    check_supported(t, Op.READ)
    check_change_reads(t, "streaming reads")
    check_consumer(t, None)
    preds = parse_filters(filter)
    validate_columns(preds, t.schema.field_names())
    return (StreamScan if t.source is None else t.source.stream_scan_class)(t.store, preds)


def changelog_consumer(table: Table, consumer_id: str | None, options: Mapping[str, str] | None, filter: Any,
                       columns: Sequence[str] | None, batch_size: int) -> ChangelogConsumer:
    """The consumer of :meth:`Table.changelog_consumer <table_engine.table.Table.changelog_consumer>`."""
    t = table.copy(options) if options else table
    check_supported(t, Op.MAINTAIN if consumer_id is not None or t.options.get(CONSUMER_ID) is not None else Op.READ)
    check_change_reads(t, "changelog consumers")
    check_consumer(t, consumer_id)
    preds = parse_filters(filter)
    validate_columns(preds, t.schema.field_names())
    if columns is not None:
        new_read(t, columns)  # checks the names
    scan_class = StreamScan if t.source is None else t.source.stream_scan_class
    return ChangelogConsumer(t.store, consumer_id, preds, columns, batch_size, scan_class=scan_class)


def read_optimized_view(table: Table) -> Table:
    """The ``$ro`` system table of ``table``: reads see only the max-level files of a primary-key table (no
    merging), i.e. the result of the latest full compaction of each bucket. Read-only."""
    ident = branch_identifier(table.identifier, branch_of(table.path))
    return type(table)(table.file_io, table.path, f"{ident}$ro", table.schema, view=READ_OPTIMIZED)


def row_tracking_view(table: Table) -> Table:
    """The ``$row_tracking`` table (Paimon 2.0's ``RowTrackingTable``): reads return every column and ``_ROW_ID``,
    ``_SEQUENCE_NUMBER``. Read-only; only of an append table with ``row-tracking.enabled``."""
    if not table.options.row_tracking_enabled() or table.schema.primary_keys:
        raise TableEngineError(f"table {table.identifier} has no row tracking: $row_tracking needs an append "
                               "table with 'row-tracking.enabled' = 'true'")
    ident = branch_identifier(table.identifier, branch_of(table.path))
    return type(table)(table.file_io, table.path, f"{ident}$row_tracking", table.schema, view=ROW_TRACKING)
