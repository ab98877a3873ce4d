"""Incremental reads: the changes committed by a range of snapshots, with their row kinds.

For snapshots ``(start, end]`` this plans one :class:`ChangeSplit` per (partition, bucket) and reads it as rows with
a ``rowkind`` column (``+I``, ``-U``, ``+U``, ``-D``), the shape of Paimon's ``$audit_log`` table:

* a table with a changelog producer: the files of each snapshot's changelog manifest list, emitted as written
  (every change, in sequence order); snapshots without a changelog are skipped;
* otherwise (``changelog-producer`` = none): the data files each APPEND snapshot added (the ADD entries of its delta
  manifest list), merged per key with the table's merge engine, so a key changed several times in the range yields
  its last change (a ``-D`` included). COMPACT snapshots only rewrite data and are skipped; OVERWRITE snapshots are
  skipped unless ``include_overwrite`` (Paimon's ``streaming-read-overwrite``).

Append tables yield every added row as ``+I``. Streaming sources (Spark) and ``consume-changelog`` are built on this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from table_engine.core_options import ChangelogProducer, CoreOptions
from table_engine.errors import SnapshotNotExistError
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.manifest import FileKind, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import CommitKind, Snapshot, read_snapshot
from table_engine.io.file_io import FileIO
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND, kind_strings
from table_engine.lsm.merge import MergeOrder, concat_tables, sort_and_merge
from table_engine.predicate import Predicate, conjunction, test_row
from table_engine.store.context import StoreContext
from table_engine.store.read import file_path_in, read_context, read_data_file
from table_engine.store.scan import PartitionDecoder, manifest_path
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
    """The files are changelog files (emitted as written), not data deltas (merged per key)."""

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)


def changes_schema(schema: TableSchema) -> pa.Schema:
    """``rowkind`` (string, not null) followed by the table columns."""
    return pa.schema([pa.field(ROWKIND_COLUMN, pa.string(), nullable=False),
                      *[to_arrow_field(f) for f in schema.fields]])


def snapshot_has_changes(snapshot: Snapshot, options: CoreOptions, include_overwrite: bool = False) -> bool:
    """Whether an incremental read takes anything from ``snapshot`` (see the module docstring)."""
    if options.changelog_producer() != ChangelogProducer.NONE:
        return bool(snapshot.changelog_manifest_list)
    if snapshot.commit_kind == CommitKind.APPEND:
        return True
    return include_overwrite and snapshot.commit_kind == CommitKind.OVERWRITE


def plan_changes(file_io: FileIO, table_path: str, schema: TableSchema, options: CoreOptions, start: int, end: int,
                 predicates: Sequence[Predicate] = (), include_overwrite: bool = False) -> list[ChangeSplit]:
    """Splits of the changes of snapshots ``start`` (exclusive) to ``end`` (inclusive).

    Partitions are pruned by the ``predicates`` on partition columns. A snapshot of the range that no longer exists
    (expired) is a SnapshotNotExistError: the changes it held cannot be read any more.
    """
    changelog = options.changelog_producer() != ChangelogProducer.NONE
    part_fields = schema.partition_fields()
    names = [f.name for f in part_fields]
    decode = PartitionDecoder([f.type for f in part_fields])
    part_preds = [p for p in predicates if p.column in names]
    groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    for sid in range(start + 1, end + 1):
        try:
            snap = read_snapshot(file_io, table_path, sid)
        except SnapshotNotExistError as exc:
            raise SnapshotNotExistError(
                f"snapshot {sid} of {table_path} no longer exists (expired?): the changes of snapshots "
                f"{start + 1}..{end} cannot be read; protect them with a consumer (consumer-id)") from exc
        if not snapshot_has_changes(snap, options, include_overwrite):
            continue
        list_name = snap.changelog_manifest_list if changelog else snap.delta_manifest_list
        if not list_name:
            continue
        for meta in read_manifest_list(file_io, manifest_path(table_path, list_name)):
            for e in read_manifest(file_io, manifest_path(table_path, meta.file_name)):
                if e.kind != FileKind.ADD:
                    continue
                if part_preds and not test_row(part_preds, dict(zip(names, decode(e.partition), strict=True))):
                    continue
                groups.setdefault((e.partition, e.bucket), []).append(e.file)
    return [ChangeSplit(part, decode(part), bucket, tuple(files), changelog)
            for (part, bucket), files in sorted(groups.items())]


def read_changes(ctx: StoreContext, split: ChangeSplit, predicates: Sequence[Predicate] = ()) -> pa.Table:
    """The change rows of ``split``: ``rowkind`` then the table columns (current schema), filtered exactly."""
    rctx = read_context(ctx)
    schema = ctx.schema
    fields = list(schema.fields)
    out_schema = changes_schema(schema)
    has_pk = bool(schema.primary_keys)
    tables = []
    for f in split.files:
        path = file_path_in(ctx.table_path, schema, split.partition_values, split.bucket, f,
                            ctx.options.partition_default_name())
        tables.append(read_data_file(rctx, path, f, fields, system=has_pk, with_seq=has_pk))
    if not tables:
        return out_schema.empty_table()
    data = concat_tables(tables)
    if has_pk:
        order = MergeOrder(tuple(schema.trimmed_primary_keys()), tuple(ctx.options.sequence_fields()),
                           ctx.options.sequence_descending())
        if split.changelog:
            data = data.sort_by(SEQUENCE_NUMBER)
        else:
            assert rctx.merge_function is not None
            data = sort_and_merge(data, order, rctx.merge_function)
        kinds = kind_strings(data.column(VALUE_KIND))
        data = data.drop_columns([SEQUENCE_NUMBER, VALUE_KIND])
    else:
        kinds = pa.repeat(pa.scalar("+I"), data.num_rows)
    expr = conjunction(predicates)
    data = data.add_column(0, ROWKIND_COLUMN, kinds)
    if expr is not None:
        data = data.filter(expr)
    return data.select(out_schema.names).cast(out_schema)
