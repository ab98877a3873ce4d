"""Batch and streaming readers of the ``paimon`` data source.

Batch: the driver plans the scan once (one Spark partition per split, i.e. per (partition, bucket)), so every task
reads the same snapshot; tasks yield Arrow record batches in Spark's exact layout (never rows). Time travel by
``scan.snapshot-id``, ``scan.tag-name`` or ``scan.timestamp-millis``; ``incremental-between`` ('start,end',
snapshot ids or tag names, start exclusive) or ``incremental-between-timestamp`` read what those snapshots changed
(:mod:`table_engine.store.changes.incremental`: every change as written, in commit order per (partition, bucket); as in
Paimon, a key changed by several snapshots appears once per change).

Streaming: offsets are ``{"snapshot": n}``, the last snapshot a micro-batch consumed (plus ``"full": true`` before
the initial full scan of ``scan.mode`` latest-full / compacted-full / from-snapshot-full); a new query starts where
the engine's streaming rules say (:func:`table_engine.store.changes.starting.resolve_stream_start`). Each micro-batch
reads the changes of the snapshots after its start offset (a changelog if the table produces one, else the delta files
of APPEND snapshots), in commit order per (partition, bucket), so one Spark partition replays a key's changes in order.
Spark restarts a query from its checkpointed offsets; ``consumer-id`` additionally records, once the micro-batches
before it completed, the next snapshot as a Paimon consumer: snapshot expiry keeps the snapshots not yet read, and a
new query (no checkpoint) with that consumer id starts there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, Filter, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import StructType

from table_engine.core_enums import StartupMode
from table_engine.core_options import SCAN_SNAPSHOT_ID, SOURCE_SPLIT_OPEN_FILE_COST, SOURCE_SPLIT_TARGET_SIZE
from table_engine.errors import SnapshotNotExistError
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.snapshot import snapshot_at_or_before_time
from table_engine.predicate import parse_filters
from table_engine.spark.datasource import options as o
from table_engine.spark.datasource.filters import EngineFilter, translate_all
from table_engine.spark.datasource.spark_types import arrow_schema_for, conform
from table_engine.store.changes.consumers import ConsumerManager
from table_engine.store.changes.incremental import (
    ROWKIND_COLUMN,
    ChangeSplit,
    iter_changes,
    plan_changes,
    snapshot_has_changes,
)
from table_engine.store.changes.starting import LiveSnapshots, resolve_stream_start
from table_engine.store.reading.data_evolution import data_evolution_enabled, row_id_groups
from table_engine.store.reading.raw_files import restrict_splits
from table_engine.store.reading.scan import Split
from table_engine.table import Table
from table_engine.table.fallback import fallback_table
from table_engine.table.guards import check_change_reads

log = logging.getLogger(__name__)

_BATCH_ROWS = 262_144


@dataclass(frozen=True)
class ReadSpec:
    """What a read returns: the Arrow layout Spark wants and whether it carries row kinds."""

    arrow_schema: pa.Schema
    audit_log: bool
    include_overwrite: bool

    @staticmethod
    def of(options: Mapping[str, str], schema: StructType) -> ReadSpec:
        return ReadSpec(arrow_schema_for(schema), o.get_bool(options, o.AUDIT_LOG, False),
                        o.get_bool(options, o.STREAMING_READ_OVERWRITE, False))


class SplitPartition(InputPartition):
    """A snapshot split (all merged rows of one partition and bucket), of the table read or, with ``branch``, of its
    ``scan.fallback-branch``."""

    def __init__(self, split: Split, branch: str | None = None) -> None:
        super().__init__(None)
        self.split = split
        self.branch = branch


class ChangePartition(InputPartition):
    """The changes of one partition and bucket over a snapshot range."""

    def __init__(self, split: ChangeSplit) -> None:
        super().__init__(None)
        self.split = split


def read_partition(table: Table, spec: ReadSpec, partition: InputPartition,
                   filters: Sequence[EngineFilter]) -> Iterator[pa.RecordBatch]:
    """The rows of one planned partition, as batches in Spark's layout."""
    if isinstance(partition, SplitPartition):
        source = table if partition.branch is None else table.branch_table(partition.branch)
        reader = source.new_read(filter=list(filters) or None)
        for batch in reader.to_batches([partition.split], _BATCH_ROWS):
            if spec.audit_log:
                batch = pa.RecordBatch.from_arrays(
                    [pa.repeat(pa.scalar("+I"), batch.num_rows), *batch.columns],
                    names=[ROWKIND_COLUMN, *batch.schema.names])
            yield conform(batch, spec.arrow_schema)
    elif isinstance(partition, ChangePartition):
        ctx = table.store
        for batch in iter_changes(ctx, partition.split, parse_filters(list(filters)), _BATCH_ROWS):
            if not spec.audit_log:
                kinds = batch.column(ROWKIND_COLUMN)
                batch = batch.filter(pc.or_(pc.equal(kinds, "+I"), pc.equal(kinds, "+U"))).drop_columns(
                    [ROWKIND_COLUMN])
            if batch.num_rows:
                yield conform(batch, spec.arrow_schema)


def pack_splits(table: Table, splits: Sequence[Split], parallelism: int = 1) -> list[Split]:
    """Splits of append tables cut into pieces of about ``source.split.target-size`` (counting
    ``source.split.open-file-cost`` per file), so a large bucket is read by several tasks; primary-key splits are
    merged as a whole and stay as they are; the files of a row range of a data-evolution table stay together.

    As Spark's file sources (and Paimon's Spark scan), pieces are at most ``max(open-file-cost, total /
    parallelism)`` too (``parallelism``: the session's ``spark.sql.leafNodeDefaultParallelism``, else its default
    parallelism), so a small read still gives every core a file."""
    if table.primary_keys:
        return list(splits)
    target = table.options.get(SOURCE_SPLIT_TARGET_SIZE)
    open_cost = table.options.get(SOURCE_SPLIT_OPEN_FILE_COST)
    total = sum(max(f.file_size, open_cost) for s in splits for f in s.files)
    if parallelism > 1 and total:
        target = min(target, max(open_cost, -(-total // parallelism)))
    evolution = data_evolution_enabled(table.schema.options)
    out: list[Split] = []
    for split in splits:
        # the unit of a piece: a file, or on a data-evolution table the files of a row range (merged by row id)
        units = ([g.files for g in row_id_groups(split.files)] if evolution
                 else [[f] for f in sorted(split.files, key=lambda f: f.min_sequence_number)])
        chunk: list[DataFileMeta] = []
        size = 0
        for unit in units:
            weight = sum(max(f.file_size, open_cost) for f in unit)
            if chunk and size + weight > target:
                out.append(replace(split, files=chunk))
                chunk, size = [], 0
            chunk.extend(unit)
            size += weight
        if chunk:
            out.append(replace(split, files=chunk))
    return out


def _planned_or_empty(parts: list[InputPartition]) -> list[InputPartition]:
    # Spark needs at least one partition to run a scan; an empty one reads nothing
    return parts or [InputPartition(None)]


# ---- batch --------------------------------------------------------------------------------------------------------
class PaimonBatchReader(DataSourceReader):
    """Batch reads (no filter pushdown: for sessions with ``spark.sql.python.filterPushdown.enabled`` off)."""

    def __init__(self, table: Table, options: Mapping[str, str], schema: StructType, parallelism: int = 1) -> None:
        self.table = table
        self.spec = ReadSpec.of(options, schema)
        self.parallelism = parallelism
        self.snapshot_id = o.get_int(options, o.SCAN_SNAPSHOT_ID)
        self.tag = o.get(options, o.SCAN_TAG_NAME)
        self.timestamp_millis = o.get_int(options, o.SCAN_TIMESTAMP_MILLIS)
        self.incremental = self._incremental_range(options)
        if self.incremental is not None:
            check_change_reads(table, "incremental reads")
            if fallback_table(table) is not None:
                raise o.DataSourceOptionError(
                    f"table {table.identifier} has 'scan.fallback-branch': an incremental read through Spark would "
                    "miss the fallback branch's changes; read it with the engine (Table.read) or without the "
                    "fallback")
        self.filters: list[EngineFilter] = []
        files = o.get(options, o.READ_FILES)
        self.only_files = None if files is None else frozenset(n for n in files.split(",") if n)

    def _incremental_range(self, options: Mapping[str, str]) -> tuple[int, int] | None:
        between = o.get(options, o.INCREMENTAL_BETWEEN)
        between_ts = o.get(options, o.INCREMENTAL_BETWEEN_TIMESTAMP)
        if between is None and between_ts is None:
            return None
        if between is not None and between_ts is not None:
            raise o.DataSourceOptionError(f"give {o.INCREMENTAL_BETWEEN} or {o.INCREMENTAL_BETWEEN_TIMESTAMP}")
        raw = between if between is not None else between_ts
        assert raw is not None
        parts = [p.strip() for p in raw.split(",")]
        if len(parts) != 2 or not all(parts):
            raise o.DataSourceOptionError(f"incremental range {raw!r} must be 'start,end'")
        if between_ts is not None:
            return self._snapshot_at(int(parts[0])), self._snapshot_at(int(parts[1]))
        return self._snapshot_ref(parts[0]), self._snapshot_ref(parts[1])

    def _snapshot_ref(self, ref: str) -> int:
        return int(ref) if ref.isdigit() else self.table.tag_snapshot(ref).id

    def _snapshot_at(self, millis: int) -> int:
        snap = snapshot_at_or_before_time(self.table.file_io, self.table.path, millis)
        return 0 if snap is None else snap.id

    def partitions(self) -> Sequence[InputPartition]:
        t = self.table
        parts: list[InputPartition]
        if self.incremental is not None:
            start, end = self.incremental
            parts = [ChangePartition(s) for s in plan_changes(t.file_io, t.path, t.schema, t.options, start, end,
                                                              parse_filters(self.filters),
                                                              self.spec.include_overwrite)]
        else:
            lines = t.plan_with_fallback(self.filters or None, self.snapshot_id, self.tag, self.timestamp_millis)
            parts = []
            for branch in dict.fromkeys(b for b, _ in lines):  # the table's own splits, then the fallback's
                splits = [s for b, s in lines if b == branch]
                if self.only_files is not None:
                    splits = restrict_splits(splits, self.only_files)
                source = t if branch is None else t.branch_table(branch)
                parts += [SplitPartition(s, branch) for s in pack_splits(source, splits, self.parallelism)]
        log.info("%s: %d splits to read", t.identifier, len(parts))
        return _planned_or_empty(parts)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from read_partition(self.table, self.spec, partition, self.filters)


class PaimonPushdownReader(PaimonBatchReader):
    """Batch reads that take Spark's filters for partition, file and row pruning."""

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        types = {f.name: f.type for f in self.table.schema.fields}
        engine, remaining = translate_all(filters, types)
        self.filters = engine
        yield from remaining


# ---- streaming ----------------------------------------------------------------------------------------------------
SNAPSHOT = "snapshot"
FULL = "full"
_SCAN_OPTIONS = (o.SCAN_MODE, o.SCAN_SNAPSHOT_ID, o.SCAN_TIMESTAMP_MILLIS, o.SCAN_TAG_NAME, "scan.timestamp")


class PaimonStreamReader(DataSourceStreamReader):
    """A streaming source over the table's snapshots (see the module docstring)."""

    def __init__(self, table: Table, options: Mapping[str, str], schema: StructType, parallelism: int = 1) -> None:
        check_change_reads(table, "streaming reads")
        self.table = table
        self.spec = ReadSpec.of(options, schema)
        self.parallelism = parallelism
        self.options = dict(options)
        self.consumer_id = o.get(options, o.CONSUMER_ID)
        self.max_rows = o.get_int(options, o.MAX_ROWS_PER_TRIGGER)
        self._recorded: int | None = None

    # ---- offsets ---------------------------------------------------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:
        consumed = self._consumer_next()
        if consumed is not None:
            log.info("%s: consumer %s resumes at snapshot %d", self.table.identifier, self.consumer_id, consumed)
            return {SNAPSHOT: consumed - 1}
        offset = self._initial_offset()
        self._record_consumer(offset)  # protects the snapshots still to read from expiry from now on
        return offset

    def _initial_offset(self) -> dict[str, Any]:
        """Where a new query starts, by the engine's streaming start rules (:func:`resolve_stream_start`, as
        Paimon's continuous starting scanners): ``scan.mode`` latest-full (default), latest, compacted-full,
        from-timestamp, from-snapshot, from-snapshot-full, from the read options over the table's."""
        dynamic = {key: value for key in _SCAN_OPTIONS if (value := o.get(self.options, key)) is not None}
        table = self.table.copy(dynamic) if dynamic else self.table
        ctx = table.store
        snapshots = LiveSnapshots(ctx)
        start = resolve_stream_start(table.options, snapshots, table_was_empty=not snapshots)
        log.info("%s: streaming read starts with %s (%s)", table.identifier,
                 f"snapshot {start.full_snapshot} in full" if start.full_snapshot is not None
                 else f"the changes of snapshot {start.next_snapshot}" if start.next_snapshot is not None
                 else "the first snapshot", start.mode.value)
        if start.full_snapshot is not None:
            return {SNAPSHOT: start.full_snapshot, FULL: True}
        if start.next_snapshot is not None:
            return {SNAPSHOT: start.next_snapshot - 1}
        # no snapshot yet: the changes of every snapshot to come (from scan.snapshot-id on, if given)
        first = table.options.get(SCAN_SNAPSHOT_ID) if start.mode in (
            StartupMode.FROM_SNAPSHOT, StartupMode.FROM_SNAPSHOT_FULL) else None
        return {SNAPSHOT: max(0, (first or 1) - 1)}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_rows) if self.max_rows is not None else ReadAllAvailable()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        # Spark asks for the next batch only after the previous one (ending at ``start``) completed
        self._record_consumer(start)
        first = int(start[SNAPSHOT])
        latest = self.table.latest_snapshot_id() or 0
        end = latest
        if isinstance(limit, ReadMaxRows) and latest > first:
            end = self._end_within(first, latest, limit.max_rows)
        return {SNAPSHOT: max(first, end)}

    def reportLatestOffset(self) -> dict[str, Any] | None:
        latest = self.table.latest_snapshot_id()
        return None if latest is None else {SNAPSHOT: latest}

    def _end_within(self, first: int, latest: int, max_rows: int) -> int:
        """The last snapshot after ``first`` such that the changes up to it stay within ``max_rows`` (at least
        one snapshot with changes)."""
        rows = 0
        end = first
        for sid in range(first + 1, latest + 1):
            snap = self.table.snapshot(sid)
            if not snapshot_has_changes(snap, self.table.options, self.spec.include_overwrite):
                end = sid
                continue
            n = abs(snap.changelog_record_count or 0) if snap.changelog_manifest_list else abs(
                snap.delta_record_count or 0)
            if rows and rows + n > max_rows:
                break
            rows += n
            end = sid
        return end

    # ---- reading ---------------------------------------------------------------------------------------------
    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        t = self.table
        first, last = int(start[SNAPSHOT]), int(end[SNAPSHOT])
        parts: list[InputPartition] = []
        if start.get(FULL) and first > 0:
            parts += [SplitPartition(s) for s in pack_splits(t, t.plan(snapshot_id=first), self.parallelism)]
        if last > first:
            parts += [ChangePartition(s) for s in plan_changes(t.file_io, t.path, t.schema, t.options, first, last,
                                                               include_overwrite=self.spec.include_overwrite)]
        log.info("%s: micro-batch of snapshots %s..%d: %d splits", t.identifier,
                 f"{first} (full)" if start.get(FULL) else first + 1, last, len(parts))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from read_partition(self.table, self.spec, partition, ())

    def commit(self, end: dict[str, Any]) -> None:
        self._record_consumer(end)  # every batch up to ``end`` is processed

    def _record_consumer(self, offset: dict[str, Any]) -> None:
        """Record the next snapshot to read after ``offset`` as the Paimon consumer ``consumer-id``."""
        if self.consumer_id is None:
            return
        manager = ConsumerManager.of(self.table.store)
        next_snapshot = max(1, int(offset[SNAPSHOT]) + (0 if offset.get(FULL) else 1))
        if next_snapshot == self._recorded:
            return
        manager.update(self.consumer_id, next_snapshot)
        self._recorded = next_snapshot
        log.info("%s: consumer %s at snapshot %d", self.table.identifier, self.consumer_id, next_snapshot)

    def _consumer_next(self) -> int | None:
        if self.consumer_id is None or o.get_bool(self.options, o.CONSUMER_IGNORE_PROGRESS, False):
            return None
        consumer = ConsumerManager.of(self.table.store).get(self.consumer_id)
        if consumer is None:
            return None
        earliest = self.table.earliest_snapshot_id()
        if earliest is not None and consumer.next_snapshot < earliest:
            raise SnapshotNotExistError(
                f"consumer {self.consumer_id} of {self.table.identifier} is at snapshot {consumer.next_snapshot}, "
                f"older than the earliest snapshot {earliest}")
        return int(consumer.next_snapshot)
