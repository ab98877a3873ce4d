"""Diff reads: how the merged contents of a set of files changed into another, as change rows with row kinds.

Used by ``incremental-between`` of two tags (and ``incremental-between-scan-mode`` diff), and by streaming reads of
OVERWRITE snapshots with ``streaming-read-overwrite``. Mirrors Paimon's ``IncrementalDiffSplitRead``: per
(partition, bucket) the ``before`` files and the ``after`` files are each merged (deletes dropped), then per key a
row only in after is emitted as ``+I``, a row only in before as ``-D``, and a row whose values changed as ``+I``
with the after values; unchanged rows are not emitted. Append tables compare whole files: rows of files only in
before are ``-D``, rows of files only in after ``+I``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import SnapshotNotExistError
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.manifest import FileKind, ManifestEntry, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.snapshot import Snapshot, names_snapshot, read_snapshot
from table_engine.io.paths import manifest_path
from table_engine.predicate import Predicate, conjunction, test_row
from table_engine.store.changes.incremental import ROWKIND_COLUMN, changes_schema
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import DeletionFile, deletion_files
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.scan import PartitionDecoder, Split, live_entries

__all__ = ["DiffSplit", "iter_diff", "plan_diff", "plan_overwrite_diff"]

_IDX = "__diff_row__"


@dataclass(frozen=True)
class DiffSplit:
    """The files of one (partition, bucket) before and after a change."""

    partition: bytes
    partition_values: tuple[Any, ...]
    bucket: int
    total_buckets: int
    before: tuple[DataFileMeta, ...]
    after: tuple[DataFileMeta, ...]
    snapshot_id: int
    before_deletions: dict[str, DeletionFile] | None = None
    after_deletions: dict[str, DeletionFile] | None = None
    """deletion vectors of the before / after files (data file name -> vector)"""

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in (*self.before, *self.after))


@names_snapshot
def plan_diff(ctx: StoreContext, before: Snapshot | None, after: Snapshot,
              predicates: Sequence[Predicate] = ()) -> list[DiffSplit]:
    """Splits of the diff between the contents of two snapshots (e.g. two tags)."""
    old = live_entries(ctx.file_io, ctx.table_path, before) if before is not None else []
    new = live_entries(ctx.file_io, ctx.table_path, after)
    return _splits(ctx, old, new, after.id, predicates, _vectors(ctx, before), _vectors(ctx, after))


@names_snapshot
def plan_overwrite_diff(ctx: StoreContext, snapshot: Snapshot, predicates: Sequence[Predicate] = ()) \
        -> list[DiffSplit]:
    """Splits of what an OVERWRITE snapshot changed: its deleted files (before) against its added files (after)."""
    entries: list[ManifestEntry] = []
    for meta in read_manifest_list(ctx.file_io, manifest_path(ctx.table_path, snapshot.delta_manifest_list)):
        entries.extend(read_manifest(ctx.file_io, manifest_path(ctx.table_path, meta.file_name)))
    old = [e for e in entries if e.kind == FileKind.DELETE]
    new = [e for e in entries if e.kind == FileKind.ADD]
    try:
        previous: Snapshot | None = read_snapshot(ctx.file_io, ctx.table_path, snapshot.id - 1)
    except SnapshotNotExistError:
        previous = None
    return _splits(ctx, old, new, snapshot.id, predicates, _vectors(ctx, previous), _vectors(ctx, snapshot))


_Vectors = dict[tuple[bytes, int], dict[str, DeletionFile]]


@names_snapshot
def _vectors(ctx: StoreContext, snapshot: Snapshot | None) -> _Vectors:
    """The deletion vectors of a snapshot by (partition, bucket)."""
    if snapshot is None or not snapshot.index_manifest:
        return {}
    if ctx.schema.primary_keys and not ctx.options.deletion_vectors_enabled():
        return {}
    return deletion_files(ctx.table_path, ctx.index_entries(snapshot))


def _splits(ctx: StoreContext, old: Sequence[ManifestEntry], new: Sequence[ManifestEntry], snapshot_id: int,
            predicates: Sequence[Predicate], old_dvs: _Vectors, new_dvs: _Vectors) -> list[DiffSplit]:
    part_fields = ctx.schema.partition_fields()
    names = [f.name for f in part_fields]
    decode = PartitionDecoder([f.type for f in part_fields])
    part_preds = [p for p in predicates if p.column in names]
    groups: dict[tuple[bytes, int], tuple[dict[str, DataFileMeta], dict[str, DataFileMeta], int]] = {}
    for side, entries in ((0, old), (1, new)):
        for e in entries:
            if part_preds and not test_row(part_preds, dict(zip(names, decode(e.partition), strict=True))):
                continue
            g = groups.setdefault((e.partition, e.bucket), ({}, {}, e.total_buckets))
            (g[1] if side else g[0])[e.file.file_name] = e.file
    out = []
    for (part, bucket), (b, a, total) in sorted(groups.items()):
        bv, av = old_dvs.get((part, bucket)), new_dvs.get((part, bucket))
        if b.keys() == a.keys() and all((bv or {}).get(n) == (av or {}).get(n) for n in b):
            continue  # nothing changed in this bucket (same files, same deletion vectors)
        out.append(DiffSplit(part, decode(part), bucket, total, tuple(b.values()), tuple(a.values()), snapshot_id,
                             bv, av))
    return out


def iter_diff(ctx: StoreContext, split: DiffSplit, predicates: Sequence[Predicate] = (),
              batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
    """The change rows of ``split`` (``rowkind`` then the table columns), filtered exactly by ``predicates``."""
    out_schema = changes_schema(ctx.schema)
    if ctx.schema.primary_keys:
        before = _merged(ctx, split, split.before, split.before_deletions)
        after = _merged(ctx, split, split.after, split.after_deletions)
        changes = _keyed_diff(before, after, list(ctx.schema.trimmed_primary_keys()))
    else:
        shared = {f.file_name for f in split.before} & {f.file_name for f in split.after}
        if split.before_deletions or split.after_deletions:  # rows of shared files may have been deleted
            shared = set()
        gone = _merged(ctx, split, tuple(f for f in split.before if f.file_name not in shared), split.before_deletions)
        added = _merged(ctx, split, tuple(f for f in split.after if f.file_name not in shared), split.after_deletions)
        changes = pa.concat_tables([_with_kind(gone, "-D"), _with_kind(added, "+I")])
    expr = conjunction(predicates)
    if expr is not None:
        changes = changes.filter(expr)
    yield from changes.select(out_schema.names).cast(out_schema).to_batches(max_chunksize=batch_size)


def _merged(ctx: StoreContext, split: DiffSplit, files: tuple[DataFileMeta, ...],
            deletions: dict[str, DeletionFile] | None) -> pa.Table:
    reader = TableRead(read_context(ctx))
    return reader.read_split(Split(split.partition, split.partition_values, split.bucket, split.total_buckets,
                                   list(files), split.snapshot_id, deletions))


def _with_kind(t: pa.Table, kind: str) -> pa.Table:
    return t.add_column(0, ROWKIND_COLUMN, pa.repeat(pa.scalar(kind), t.num_rows))


def _keyed_diff(before: pa.Table, after: pa.Table, keys: list[str]) -> pa.Table:
    """Rows only in ``after`` (+I), only in ``before`` (-D), and changed (+I, after values); vectorized."""
    b = before.select(keys).append_column(_IDX + "b", pa.array(range(before.num_rows), pa.int64()))
    a = after.select(keys).append_column(_IDX + "a", pa.array(range(after.num_rows), pa.int64()))
    joined = a.join(b, keys=keys, join_type="full outer", use_threads=False)
    ia, ib = joined.column(_IDX + "a"), joined.column(_IDX + "b")
    only_before = pc.drop_null(pc.filter(ib, pc.is_null(ia)))
    only_after = pc.drop_null(pc.filter(ia, pc.is_null(ib)))
    both = pc.and_(pc.is_valid(ia), pc.is_valid(ib))
    pa_idx, pb_idx = pc.filter(ia, both), pc.filter(ib, both)
    changed = _rows_differ(after.take(pa_idx), before.take(pb_idx))
    changed_idx = pc.filter(pa_idx, changed)
    added = pa.concat_arrays([_flat(only_after), _flat(changed_idx)])
    return pa.concat_tables([_with_kind(before.take(only_before), "-D"), _with_kind(after.take(added), "+I")])


def _flat(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def _rows_differ(x: pa.Table, y: pa.Table) -> pa.Array:
    """Per row: does any column differ (nulls equal to nulls)?"""
    differ = pa.array([False] * x.num_rows, pa.bool_())
    for name in x.column_names:
        cx, cy = _flat(x.column(name)), _flat(y.column(name))
        try:
            eq = pc.equal(cx, cy)
            same = pc.if_else(pc.and_(pc.is_null(cx), pc.is_null(cy)), True, pc.fill_null(eq, False))
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):  # nested types: compare as Python values
            same = pa.array([u == v for u, v in zip(cx.to_pylist(), cy.to_pylist(), strict=True)], pa.bool_())
        differ = pc.or_(differ, pc.invert(same))
    return differ
