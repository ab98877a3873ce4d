""":class:`BuiltRows`: the shape of a system table whose rows are built whole at each read (the metadata tables of
``metadata_tables`` and the global ``sys`` tables of ``global_tables``): the subclass builds the rows, this applies
``filter`` and ``columns`` (validated against the table's columns) and serves them as batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from table_engine.predicate import conjunction, parse_filters, validate_columns
from table_engine.store.changes.stream_scan import StreamScan
from table_engine.table import Table


class BuiltRows:
    """A :class:`~table_engine.table_source.TableSource` whose subclass gives :meth:`arrow_schema` and
    :meth:`rows`."""

    name: str
    stream_scan_class: type[StreamScan] = StreamScan

    def arrow_schema(self, table: Table) -> pa.Schema:
        raise NotImplementedError

    def rows(self, table: Table, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) -> pa.Table:
        """Every row of the version asked for, with every column of :meth:`arrow_schema`."""
        raise NotImplementedError

    def read(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
             tag: str | None, timestamp_millis: int | None) -> pa.Table:
        names = self.arrow_schema(table).names
        preds = parse_filters(filter)
        validate_columns(preds, names)
        if columns is not None:
            validate_columns(parse_filters([(c, "is null") for c in columns]), names)
        result = self.rows(table, snapshot_id, tag, timestamp_millis)
        expr = conjunction(preds)
        if expr is not None:
            result = result.filter(expr)
        return result if columns is None else result.select(list(columns))

    def to_batches(self, table: Table, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None,
                   tag: str | None, timestamp_millis: int | None, batch_size: int) -> Iterator[pa.RecordBatch]:
        yield from self.read(table, columns, filter, snapshot_id, tag, timestamp_millis).to_batches(batch_size)
