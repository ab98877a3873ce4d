"""The read surface of a table: batch reads with time travel (:meth:`read`, :meth:`to_batches`, :meth:`plan`,
:meth:`new_read`), incremental reads, streaming scans and changelog consumers, and the ``$ro`` view."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self

import pyarrow as pa

from table_engine.core_options import CONSUMER_ID
from table_engine.errors import (
    ReadOnlyTableError,
    SchemaError,
    SnapshotNotExistError,
    TableEngineError,
    UnsupportedError,
    UnsupportedTableFeatureError,
)
from table_engine.features import Op, feature
from table_engine.format.snapshot import Snapshot, snapshot_at_or_before_time
from table_engine.io.paths import branch_of
from table_engine.predicate import parse_filters, validate_columns
from table_engine.store.reading.data_evolution import DATA_EVOLUTION_ENABLED, data_evolution_enabled
from table_engine.store.reading.global_index_read import prune_by_global_index
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.row_tracking import ROW_TRACKING_COLUMNS
from table_engine.store.reading.scan import Split, plan_splits
from table_engine.table.branches import branch_identifier
from table_engine.table.fallback import FallbackRead, fallback_read
from table_engine.table.tags import TagSurface

if TYPE_CHECKING:
    from table_engine.store.changes.changelog_consumer import ChangelogConsumer
    from table_engine.store.changes.stream_scan import StreamScan


class ReadSurface(TagSurface):
    """Reads of a snapshot chosen by id, tag or time (tags resolve through :class:`TagSurface`) and of changes."""

    _read_optimized = False  # the ``$ro`` view of a table
    _row_tracking_view = False  # the ``$row_tracking`` view of a table

    def resolve_snapshot(self, snapshot_id: int | None = None, tag: str | None = None,
                         timestamp_millis: int | None = None) -> Snapshot | None:
        """The snapshot a read should use (latest by default; None for an empty table)."""
        if sum(x is not None for x in (snapshot_id, tag, timestamp_millis)) > 1:
            raise TableEngineError("give at most one of snapshot_id, tag and timestamp_millis")
        if tag is not None:
            return self.tag_snapshot(tag)
        if snapshot_id is not None:
            return self.snapshot(snapshot_id)
        if timestamp_millis is not None:
            snap = snapshot_at_or_before_time(self.file_io, self.path, timestamp_millis)
            if snap is None:
                raise SnapshotNotExistError(
                    f"table {self.identifier} has no snapshot at or before {timestamp_millis} ms")
            return snap
        return self.latest_snapshot()

    def scan_snapshot(self, snapshot_id: int | None = None, tag: str | None = None,
                      timestamp_millis: int | None = None) -> Snapshot | None:
        """The snapshot a batch read of this table (view) reads: the one given, else the one its time-travel
        options (``scan.snapshot-id``, ``scan.tag-name``, ``scan.timestamp-millis``, ``scan.mode``...) select, else
        the latest (None for an empty table)."""
        if snapshot_id is None and tag is None and timestamp_millis is None and self._scan_mode_set():
            from table_engine.store.changes.batch_changes import batch_start_snapshot

            return batch_start_snapshot(self.store, self._tag_snapshot_or_none)
        return self.resolve_snapshot(snapshot_id, tag, timestamp_millis)

    def plan(self, filter: Any = None, snapshot_id: int | None = None, tag: str | None = None,
             timestamp_millis: int | None = None) -> list[Split]:
        """Splits of a batch scan: one per (partition, bucket), pruned by ``filter``. A table whose latest-snapshot
        reads use ``scan.fallback-branch`` refuses (its splits come from two branches: :meth:`plan_with_fallback`
        says which from which)."""
        if self._fallback(snapshot_id, tag, timestamp_millis) is not None:
            raise UnsupportedError(f"table {self.identifier} has 'scan.fallback-branch': its splits come from two "
                                   "branches; plan it with plan_with_fallback()")
        return self._plan(filter, snapshot_id, tag, timestamp_millis)

    def plan_with_fallback(self, filter: Any = None, snapshot_id: int | None = None, tag: str | None = None,
                           timestamp_millis: int | None = None) -> list[tuple[str | None, Split]]:
        """:meth:`plan`'s splits, each with the branch it is read from: None for this table's own, else the
        ``scan.fallback-branch`` whose splits cover the partitions this table's plan lacks (a batch read of the
        latest snapshot; Paimon's ``FallbackReadFileStoreTable``). Read a fallback split with
        ``branch_table(name).new_read(...)``: its files follow the fallback branch's schemas."""
        if self._incremental_read(snapshot_id, tag, timestamp_millis):
            raise UnsupportedError(f"table {self.identifier}: an incremental read has no plan of snapshot splits; "
                                   "read it with read() or to_batches()")
        splits = self._plan(filter, snapshot_id, tag, timestamp_millis)
        out: list[tuple[str | None, Split]] = [(None, s) for s in splits]
        fallback = self._fallback(snapshot_id, tag, timestamp_millis)
        if fallback is not None:
            done = {s.partition for s in splits}
            out += [(fallback.branch, s) for s in fallback.table._plan(filter, *fallback.args)
                    if s.partition not in done]
        return out

    def _fallback(self, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) \
            -> FallbackRead | None:
        """The ``scan.fallback-branch`` part of a batch read (:func:`~table_engine.table.fallback.fallback_read`)."""
        return fallback_read(self._table(), snapshot_id, tag, timestamp_millis)

    def _plan(self, filter: Any = None, snapshot_id: int | None = None, tag: str | None = None,
              timestamp_millis: int | None = None) -> list[Split]:
        preds = parse_filters(filter)
        validate_columns(preds, self._readable_columns())
        snap = self.scan_snapshot(snapshot_id, tag, timestamp_millis)
        self._gate(Op.READ, snap)
        # filters on the row-tracking system columns are applied by the read (files have no stats for them)
        file_preds = [p for p in preds if p.column not in ROW_TRACKING_COLUMNS or p.column in self.schema.field_names()]
        splits = plan_splits(self.file_io, self.path, snap, self.schema, file_preds, self.store.schema_by_id,
                             skip_level0=self.store.batch_scan_skip_level0(),
                             merge_capabilities=self.store.merge_capabilities)
        self._gate_files(f for s in splits for f in s.files)
        if self.options.row_tracking_enabled() and not self.schema.primary_keys:
            splits, _ = prune_by_global_index(self.store, snap, preds, splits)  # BTree global indexes (ADR 0019)
        return splits

    def new_read(self, columns: Sequence[str] | None = None, filter: Any = None) -> TableRead:
        self._gate(Op.READ)
        preds = parse_filters(filter)
        validate_columns(preds, self._readable_columns())
        if columns is None and self._row_tracking_view:
            columns = self._readable_columns()
        return TableRead(read_context(self.store), columns, preds)

    def row_tracking_view(self) -> Self:
        """The ``$row_tracking`` table (Paimon 2.0's ``RowTrackingTable``): reads return every column and
        ``_ROW_ID``, ``_SEQUENCE_NUMBER``. Read-only; only of an append table with ``row-tracking.enabled``."""
        if not self.options.row_tracking_enabled() or self.schema.primary_keys:
            raise TableEngineError(f"table {self.identifier} has no row tracking: $row_tracking needs an append "
                                   "table with 'row-tracking.enabled' = 'true'")
        ident = branch_identifier(self.identifier, branch_of(self.path))
        view = type(self)(self.file_io, self.path, f"{ident}$row_tracking", self.schema)
        view._row_tracking_view = True
        view.read_only = True
        return view

    def _readable_columns(self) -> list[str]:
        """The columns reads can project and filter: the schema's, and with ``row-tracking.enabled`` on an append
        table the system columns ``_ROW_ID`` and ``_SEQUENCE_NUMBER``."""
        names = self.schema.field_names()
        if self.options.row_tracking_enabled() and not self.schema.primary_keys:
            names = names + [c for c in ROW_TRACKING_COLUMNS if c not in names]
        return names

    def read(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
             tag: str | None = None, timestamp_millis: int | None = None, *,
             read_optimized: bool | None = None) -> pa.Table:
        """The merged rows of a snapshot (latest by default) as one Arrow table.

        ``filter`` is a list of ``(column, op, value)`` tuples (ANDed): ``=, !=, <, <=, >, >=, in, not in,
        is null, is not null``; partitions and files are pruned by it, rows are filtered exactly.
        ``read_optimized`` (default: whether this is the ``$ro`` table) reads only fully compacted files.
        """
        if self.source is not None:
            return self.source.read(self._table(), columns, filter, snapshot_id, tag, timestamp_millis)
        if self._incremental_read(snapshot_id, tag, timestamp_millis):
            return pa.Table.from_batches(list(self._incremental_batches(columns, filter, 65536)),
                                         schema=self.new_read(columns).output_schema)
        reader, splits = self._reader(columns, filter, snapshot_id, tag, timestamp_millis, read_optimized)
        fallback = self._fallback(snapshot_id, tag, timestamp_millis)
        if fallback is None:
            return reader.to_arrow(splits)
        main = reader.to_arrow(splits)
        other, rest = fallback.table._reader(columns, filter, *fallback.args, read_optimized)
        done = {s.partition for s in splits}
        more = other.to_arrow([s for s in rest if s.partition not in done])
        return pa.concat_tables([main, more.cast(main.schema)])

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: int | None = None,
                   tag: str | None = None, timestamp_millis: int | None = None,
                   batch_size: int = 65536, *, read_optimized: bool | None = None) -> Iterator[pa.RecordBatch]:
        """Stream the merged rows as record batches; files are read in chunks and merged by streaming, so memory does
        not grow with the table (:meth:`TableRead.to_batches`)."""
        if self.source is not None:
            yield from self.source.to_batches(self._table(), columns, filter, snapshot_id, tag, timestamp_millis,
                                              batch_size)
            return
        if self._incremental_read(snapshot_id, tag, timestamp_millis):
            yield from self._incremental_batches(columns, filter, batch_size)
            return
        reader, splits = self._reader(columns, filter, snapshot_id, tag, timestamp_millis, read_optimized)
        yield from reader.to_batches(splits, batch_size)
        fallback = self._fallback(snapshot_id, tag, timestamp_millis)
        if fallback is not None:
            other, rest = fallback.table._reader(columns, filter, *fallback.args, read_optimized)
            done = {s.partition for s in splits}
            schema = reader.output_schema
            for b in other.to_batches([s for s in rest if s.partition not in done], batch_size):
                yield pa.RecordBatch.from_arrays(b.columns, schema=schema)

    def new_stream_scan(self, filter: Any = None, options: Mapping[str, str] | None = None) -> StreamScan:
        """A streaming scan (``scan.mode``, ``consumer-id``... from the table and ``options``): ``plan()`` returns the
        next snapshot's splits or None, ``read(plan)`` their rows with a ``rowkind`` column."""
        from table_engine.store.changes.stream_scan import StreamScan

        t = self.copy(options) if options else self
        t._gate(Op.READ)
        t._refuse_change_reads("streaming reads")
        t._check_no_consumer(None)
        preds = parse_filters(filter)
        validate_columns(preds, t.schema.field_names())
        return (StreamScan if t.source is None else t.source.stream_scan_class)(t.store, preds)

    def changelog_consumer(self, consumer_id: str | None = None, options: Mapping[str, str] | None = None,
                           filter: Any = None, columns: Sequence[str] | None = None,
                           batch_size: int = 65536) -> ChangelogConsumer:
        """Consume the table's changes as Arrow batches with row kinds; ``consumer_id`` records progress at
        ``commit(position)`` and resumes there (see :mod:`table_engine.store.changes.changelog_consumer`)."""
        from table_engine.store.changes.changelog_consumer import ChangelogConsumer
        from table_engine.store.changes.stream_scan import StreamScan

        t = self.copy(options) if options else self
        t._gate(Op.MAINTAIN if consumer_id is not None or t.options.get(CONSUMER_ID) is not None else Op.READ)
        t._refuse_change_reads("changelog consumers")
        t._check_no_consumer(consumer_id)
        preds = parse_filters(filter)
        validate_columns(preds, t.schema.field_names())
        if columns is not None:
            t.new_read(columns)  # checks the names
        scan_class = StreamScan if t.source is None else t.source.stream_scan_class
        return ChangelogConsumer(t.store, consumer_id, preds, columns, batch_size, scan_class=scan_class)

    def _refuse_change_reads(self, what: str) -> None:
        """Raise the gate's error for ``what``, a read of the table's changes (snapshot deltas), on a data-evolution
        table: it would read column files as new rows (batch reads merge them)."""
        if data_evolution_enabled(self.schema.options):
            raise UnsupportedTableFeatureError(self.identifier, DATA_EVOLUTION_ENABLED, feature(
                DATA_EVOLUTION_ENABLED).since, what, "batch-read", f"option '{DATA_EVOLUTION_ENABLED}' = 'true'")

    def _check_no_consumer(self, consumer_id: str | None) -> None:
        """A read-only table records no consumer progress (a consumer file holds snapshots of the data table)."""
        cid = consumer_id if consumer_id is not None else self.options.get(CONSUMER_ID)
        if self.read_only and cid is not None:
            raise ReadOnlyTableError(f"table {self.identifier} is a read-only system table: consumer {cid!r} "
                                     f"({CONSUMER_ID.key}) cannot record progress")

    def _scan_mode_set(self) -> bool:
        from table_engine.store.changes.batch_changes import needs_start_resolution

        return needs_start_resolution(self.options)

    def _incremental_read(self, snapshot_id: int | None, tag: str | None, timestamp_millis: int | None) -> bool:
        from table_engine.store.changes.batch_changes import is_incremental

        return snapshot_id is None and tag is None and timestamp_millis is None and is_incremental(self.options)

    def _incremental_batches(self, columns: Sequence[str] | None, filter: Any, batch_size: int,
                             with_row_kind: bool = False) -> Iterator[pa.RecordBatch]:
        from table_engine.store.changes.batch_changes import plan_incremental, read_incremental

        self._gate(Op.READ)
        self._refuse_change_reads("incremental reads")
        preds = parse_filters(filter)
        validate_columns(preds, self.schema.field_names())
        if columns is not None:
            self.new_read(columns)  # checks the names
            system = [c for c in columns if c in ROW_TRACKING_COLUMNS and c not in self.schema.field_names()]
            if system:
                raise SchemaError(f"table {self.identifier}: {system[0]} is not readable in an incremental read "
                                  "(only in batch reads of a snapshot)")
        splits = plan_incremental(self.store, self._tag_snapshot_or_none, preds)
        yield from read_incremental(self.store, splits, preds, columns, with_row_kind, batch_size)
        fallback = self._fallback(None, None, None)
        if fallback is not None:  # the fallback's changes of the partitions this branch's changes lack
            done = {s.partition for s in splits}
            theirs = fallback.table
            rest = [s for s in plan_incremental(theirs.store, theirs._tag_snapshot_or_none, preds)
                    if s.partition not in done]
            schema: pa.Schema | None = None
            for b in read_incremental(theirs.store, rest, preds, columns, with_row_kind, batch_size):
                if schema is None:  # this branch's fields (nullability may differ), then the row kind
                    mine = self.new_read(columns).output_schema
                    schema = pa.schema([mine.field(n) if n in mine.names else b.schema.field(n)
                                        for n in b.schema.names])
                yield pa.RecordBatch.from_arrays(b.columns, schema=schema)

    def read_optimized_view(self) -> Self:
        """The ``$ro`` system table: reads see only the max-level files of a primary-key table (no merging), i.e.
        the result of the latest full compaction of each bucket. Read-only."""
        ident = branch_identifier(self.identifier, branch_of(self.path))
        view = type(self)(self.file_io, self.path, f"{ident}$ro", self.schema)
        view._read_optimized = True
        view.read_only = True
        return view

    def _reader(self, columns: Sequence[str] | None, filter: Any, snapshot_id: int | None, tag: str | None,
                timestamp_millis: int | None, read_optimized: bool | None) -> tuple[TableRead, list[Split]]:
        splits = self._plan(filter, snapshot_id, tag, timestamp_millis)
        reader = self.new_read(columns, filter)
        if (self._read_optimized if read_optimized is None else read_optimized) and self.schema.primary_keys:
            top = self.options.num_levels() - 1
            splits = [replace(s, files=[f for f in s.files if f.level == top]) for s in splits]
            splits = [s for s in splits if s.files]
            reader.read_optimized = True
        return reader, splits
