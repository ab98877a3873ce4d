"""The change tables ``<table>$audit_log`` (:class:`AuditLogTable`) and ``<table>$binlog`` (:class:`BinlogTable`):
the data table's rows with their row kinds, read as a snapshot, incrementally or as a stream."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from table_engine.predicate import conjunction, parse_filters, validate_columns
from table_engine.store.changes.binlog import binlog_schema, pack_binlog
from table_engine.store.changes.incremental import ROWKIND_COLUMN, changes_schema
from table_engine.store.changes.stream_scan import FULL, StreamPlan, StreamScan, iter_plan_splits
from table_engine.table import Table
from table_engine.table.reading import incremental_batches, incremental_read, plan_snapshot


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
