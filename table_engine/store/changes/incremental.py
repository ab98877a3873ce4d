"""Incremental reads: the changes committed by a range of snapshots, with their row kinds.

For snapshots ``(start, end]`` this plans one :class:`ChangeSplit` per (partition, bucket) and reads it as rows with
a ``rowkind`` column (``+I``, ``-U``, ``+U``, ``-D``), the shape of Paimon's ``$audit_log`` table. The scan mode is
Paimon's ``incremental-between-scan-mode`` (``auto``: changelog when the table has a changelog producer, else delta):

* changelog: the files of each snapshot's changelog manifest list (OVERWRITE snapshots skipped);
* delta: the data files each APPEND snapshot added (the ADD entries of its delta manifest list); COMPACT snapshots
  only rewrite data and are skipped; OVERWRITE snapshots are skipped unless ``include_overwrite``.

As in Paimon (incremental and streaming splits are read without merging), every record of those files is emitted
as written, in sequence-number order, so applying the rows in order to a keyed state replays the changes. A key
changed by several snapshots of the range appears once per change. Append tables yield every added row as ``+I``.
Reads are per file (:func:`iter_changes`): memory stays bounded by one file. The stream scan
(:mod:`table_engine.store.changes.stream_scan`), the Spark source and ``consume-changelog`` are built on this.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from table_engine.core_enums import ChangelogProducer, IncrementalBetweenScanMode
from table_engine.core_options import CoreOptions
from table_engine.errors import SnapshotNotExistError, UnsupportedError, naming_snapshot
from table_engine.features import Op, require
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.feature_detection import snapshot_features
from table_engine.format.manifest import FileKind, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import CommitKind, Snapshot, names_snapshot, read_snapshot
from table_engine.io.file_io import FileIO
from table_engine.io.paths import manifest_path
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND, kind_strings
from table_engine.predicate import Predicate, conjunction, test_row
from table_engine.store.context import StoreContext
from table_engine.store.paths import file_path_in
from table_engine.store.reading.read import ReadContext, read_context, read_data_file
from table_engine.store.reading.scan import PartitionDecoder
from table_engine.types import to_arrow_field

ROWKIND_COLUMN = "rowkind"
"""Name of the row-kind column of change rows (as in Paimon's ``$audit_log`` system table)."""


@dataclass(frozen=True)
class ChangeSplit:
    """Changed files of one (partition, bucket) over a snapshot range, oldest snapshot first."""

    partition: bytes
    partition_values: tuple[Any, ...]
    bucket: int
    files: tuple[DataFileMeta, ...]
    changelog: bool
    """The files are changelog files, not data files added by APPEND snapshots (both are read as written)."""
    snapshot_ids: tuple[int, ...] = ()
    """The snapshot that added each of ``files`` (named when one of them is missing)."""

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)


def changes_schema(schema: TableSchema) -> pa.Schema:
    """``rowkind`` (string, not null) followed by the table columns."""
    return pa.schema([pa.field(ROWKIND_COLUMN, pa.string(), nullable=False),
                      *[to_arrow_field(f) for f in schema.fields]])


def resolve_scan_mode(options: CoreOptions, scan_mode: IncrementalBetweenScanMode | None = None) \
        -> IncrementalBetweenScanMode:
    """DELTA or CHANGELOG: ``scan_mode`` with AUTO/None resolved by ``changelog-producer``."""
    if scan_mode is None or scan_mode is IncrementalBetweenScanMode.AUTO:
        return IncrementalBetweenScanMode.DELTA if options.changelog_producer() == ChangelogProducer.NONE \
            else IncrementalBetweenScanMode.CHANGELOG
    if scan_mode is IncrementalBetweenScanMode.DIFF:
        raise UnsupportedError("incremental-between-scan-mode diff is planned by table_engine.store.changes.diff, "
                               "not as changes")
    return scan_mode


def snapshot_has_changes(snapshot: Snapshot, options: CoreOptions, include_overwrite: bool = False,
                         scan_mode: IncrementalBetweenScanMode | None = None) -> bool:
    """Whether an incremental read takes anything from ``snapshot`` (see the module docstring)."""
    if resolve_scan_mode(options, scan_mode) is IncrementalBetweenScanMode.CHANGELOG:
        return bool(snapshot.changelog_manifest_list) and snapshot.commit_kind != CommitKind.OVERWRITE
    if snapshot.commit_kind == CommitKind.APPEND:
        return True
    return include_overwrite and snapshot.commit_kind == CommitKind.OVERWRITE


def plan_changes(file_io: FileIO, table_path: str, schema: TableSchema, options: CoreOptions, start: int, end: int,
                 predicates: Sequence[Predicate] = (), include_overwrite: bool = False,
                 scan_mode: IncrementalBetweenScanMode | None = None) -> list[ChangeSplit]:
    """Splits of the changes of snapshots ``start`` (exclusive) to ``end`` (inclusive).

    Partitions are pruned by the ``predicates`` on partition columns. A snapshot of the range that no longer exists
    (expired) is a SnapshotNotExistError: the changes it held cannot be read any more.
    """
    changelog = resolve_scan_mode(options, scan_mode) is IncrementalBetweenScanMode.CHANGELOG
    groups: dict[tuple[bytes, int], list[tuple[DataFileMeta, int]]] = {}
    decode = PartitionDecoder([f.type for f in schema.partition_fields()])
    for sid in range(start + 1, end + 1):
        try:
            snap = read_snapshot(file_io, table_path, sid)
        except SnapshotNotExistError as exc:
            raise SnapshotNotExistError(
                f"snapshot {sid} of {table_path} no longer exists (expired?): the changes of snapshots "
                f"{start + 1}..{end} cannot be read; protect them with a consumer (consumer-id)") from exc
        require(table_path, snapshot_features(snap), Op.READ)  # the capability gate, per snapshot read
        if snapshot_has_changes(snap, options, include_overwrite, scan_mode):
            _collect(file_io, table_path, schema, snap, changelog, predicates, decode, groups)
    return _change_splits(groups, decode, changelog)


def plan_snapshot_changes(file_io: FileIO, table_path: str, schema: TableSchema, snapshot: Snapshot,
                          changelog: bool, predicates: Sequence[Predicate] = ()) -> list[ChangeSplit]:
    """Splits of one snapshot's changelog files (``changelog``) or added data files (its delta)."""
    groups: dict[tuple[bytes, int], list[tuple[DataFileMeta, int]]] = {}
    decode = PartitionDecoder([f.type for f in schema.partition_fields()])
    _collect(file_io, table_path, schema, snapshot, changelog, predicates, decode, groups)
    return _change_splits(groups, decode, changelog)


def _change_splits(groups: dict[tuple[bytes, int], list[tuple[DataFileMeta, int]]], decode: PartitionDecoder,
                   changelog: bool) -> list[ChangeSplit]:
    return [ChangeSplit(part, decode(part), bucket, tuple(f for f, _ in files), changelog,
                        tuple(sid for _, sid in files))
            for (part, bucket), files in sorted(groups.items(), key=lambda kv: kv[0])]


@names_snapshot
def _collect(file_io: FileIO, table_path: str, schema: TableSchema, snap: Snapshot, changelog: bool,
             predicates: Sequence[Predicate], decode: PartitionDecoder,
             groups: dict[tuple[bytes, int], list[tuple[DataFileMeta, int]]]) -> None:
    names = schema.partition_keys
    part_preds = [p for p in predicates if p.column in names]
    list_name = snap.changelog_manifest_list if changelog else snap.delta_manifest_list
    if not list_name:
        return
    for meta in read_manifest_list(file_io, manifest_path(table_path, list_name)):
        for e in read_manifest(file_io, manifest_path(table_path, meta.file_name)):
            if e.kind != FileKind.ADD:
                continue
            if part_preds and not test_row(part_preds, dict(zip(names, decode(e.partition), strict=True))):
                continue
            groups.setdefault((e.partition, e.bucket), []).append((e.file, snap.id))


def iter_changes(ctx: StoreContext, split: ChangeSplit, predicates: Sequence[Predicate] = (),
                 batch_size: int = 65536, rctx: ReadContext | None = None) -> Iterator[pa.RecordBatch]:
    """The change rows of ``split`` file by file (in commit order, each in sequence order), as record batches of
    ``rowkind`` then the table columns (current schema), filtered exactly by ``predicates``."""
    rctx = rctx or read_context(ctx)
    schema = ctx.schema
    fields = list(schema.fields)
    out_schema = changes_schema(schema)
    has_pk = bool(schema.primary_keys)
    expr = conjunction(predicates)
    # planned in snapshot order, then manifest order (as Paimon's streaming splits)
    for i, f in enumerate(split.files):
        path = file_path_in(ctx.table_path, schema, split.partition_values, split.bucket, f,
                            ctx.options.partition_default_name())
        with naming_snapshot(split.snapshot_ids[i] if i < len(split.snapshot_ids) else None):
            data = read_data_file(rctx, path, f, fields, system=has_pk, with_seq=has_pk)
        if has_pk:
            data = data.sort_by(SEQUENCE_NUMBER)  # stable: records with one sequence number keep file order
            kinds = kind_strings(data.column(VALUE_KIND))
            data = data.drop_columns([SEQUENCE_NUMBER, VALUE_KIND])
        else:
            kinds = pa.repeat(pa.scalar("+I"), data.num_rows)
        data = data.add_column(0, ROWKIND_COLUMN, kinds)
        if expr is not None:
            data = data.filter(expr)
        if data.num_rows:
            yield from data.select(out_schema.names).cast(out_schema).to_batches(max_chunksize=batch_size)


def read_changes(ctx: StoreContext, split: ChangeSplit, predicates: Sequence[Predicate] = ()) -> pa.Table:
    """The change rows of ``split`` as one table (see :func:`iter_changes`)."""
    return pa.Table.from_batches(list(iter_changes(ctx, split, predicates)), schema=changes_schema(ctx.schema))
