"""Scan planning: snapshot -> manifest lists -> manifest entries -> one split per (partition, bucket).

Deletion vectors: every split carries the vectors of its files found in the snapshot's index manifest (primary-key
tables with ``deletion-vectors.enabled``, and append tables, e.g. pypaimon's delete-by-row-id). ``skip_level0``
(batch reads, :meth:`~table_engine.store.context.StoreContext.batch_scan_skip_level0`) leaves level-0 files of a
primary-key table out. Those of a deletion-vector table then need no merging (``Split.raw``), so value statistics
and file indexes may skip files of a primary-key table too. Those of a ``first-row`` table are still merged: lookup
compaction keeps each key in one level above 0, so the merge changes nothing there, but it keeps reads exact for
tables whose higher levels hold a key twice (written before first-row compaction looked keys up).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from table_engine.format.binary_row import decode_row
from table_engine.format.bucket import POSTPONE_BUCKET
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.index_manifest import read_index_manifest
from table_engine.format.manifest import FileKind, ManifestEntry, merge_entries, read_manifest
from table_engine.format.manifest_list import ManifestFileMeta, read_manifest_list
from table_engine.format.schema_file import TableSchema
from table_engine.format.snapshot import Snapshot, names_snapshot
from table_engine.io.executor import parallel_map
from table_engine.io.file_io import FileIO
from table_engine.io.paths import manifest_path
from table_engine.lsm.merge_engines import MergeCapabilities
from table_engine.predicate import Predicate, normalize_literal, test_row
from table_engine.store.indexes.deletion_vectors import DeletionFile, deletion_files
from table_engine.store.indexes.file_index_filter import filter_by_file_index
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.types import DataType


@dataclass
class Split:
    """The files of one (partition, bucket) that a reader merges together."""

    partition: bytes
    partition_values: tuple[Any, ...]
    bucket: int
    total_buckets: int
    files: list[DataFileMeta]
    snapshot_id: int
    deletion_files: dict[str, DeletionFile] | None = None
    """data file name -> its deletion vector (files without one are not in it)"""
    raw: bool = False
    """the files need no merging (deletion-vector table, level 0 skipped): read each, apply its vector"""

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)


@dataclass
class PartitionDecoder:
    """Decodes partition BinaryRows once per distinct value."""

    types: Sequence[DataType]
    cache: dict[bytes, tuple[Any, ...]] = field(default_factory=dict)

    def __call__(self, data: bytes) -> tuple[Any, ...]:
        hit = self.cache.get(data)
        if hit is None:
            hit = tuple(decode_row(data, self.types))
            self.cache[data] = hit
        return hit




@names_snapshot
def read_manifest_metas(file_io: FileIO, table_path: str, snapshot: Snapshot) -> list[ManifestFileMeta]:
    """All data manifests of a snapshot (base list then delta list)."""
    metas: list[ManifestFileMeta] = []
    for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
        if name:
            metas.extend(read_manifest_list(file_io, manifest_path(table_path, name)))
    return metas


def read_entries(file_io: FileIO, table_path: str, metas: Sequence[ManifestFileMeta],
                 keep: Callable[[ManifestEntry], bool] | None = None,
                 partition_filter: Callable[[bytes], bool] | None = None) -> list[ManifestEntry]:
    """Read manifests (in parallel) and merge ADD/DELETE entries; ``partition_filter`` (on serialized partitions,
    applied while decoding) and ``keep`` filter entries before merging."""
    paths = [manifest_path(table_path, m.file_name) for m in metas]

    def read(path: str) -> list[ManifestEntry]:
        return read_manifest(file_io, path, partition_filter)

    with gc_paused():
        if len(paths) > 2:
            chunks = parallel_map(read, paths, 8)
        else:
            chunks = [read(p) for p in paths]
        entries = [e for chunk in chunks for e in chunk if keep is None or keep(e)]
        return [e for e in merge_entries(entries) if e.kind == FileKind.ADD]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (process-wide) while many metadata objects are decoded: they hold
    no reference cycles, and collections that walk every live object made a plan's time grow faster than its
    number of entries (100,000 entries: 3.6 s CPU without collections, 5.6-9 s with)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@names_snapshot
def live_entries(file_io: FileIO, table_path: str, snapshot: Snapshot | None) -> list[ManifestEntry]:
    """Every live data file of a snapshot."""
    if snapshot is None:
        return []
    return read_entries(file_io, table_path, read_manifest_metas(file_io, table_path, snapshot))


@names_snapshot
def plan_splits(
    file_io: FileIO,
    table_path: str,
    snapshot: Snapshot | None,
    schema: TableSchema,
    predicates: Sequence[Predicate] = (),
    schema_loader: Callable[[int], TableSchema] | None = None,
    skip_level0: bool = False,
    merge_capabilities: MergeCapabilities | None = None,
) -> list[Split]:
    """Plan a batch scan: prune partitions by manifest stats and entry partitions, prune files by stats.

    ``skip_level0``: leave level-0 files of a primary-key table out (see the module docstring);
    ``merge_capabilities``: those of the table's merge function, for file-index skipping (None: skip only what
    needs no merge)."""
    if snapshot is None:
        return []
    skip = skip_level0 and bool(schema.primary_keys)
    raw = skip and _has_deletion_vectors(schema)
    part_fields = schema.partition_fields()
    part_names = [f.name for f in part_fields]
    decode = PartitionDecoder([f.type for f in part_fields])
    part_preds = [_normalized(p) for p in predicates if p.column in part_names]

    metas = read_manifest_metas(file_io, table_path, snapshot)
    if part_preds:
        metas = [m for m in metas if _manifest_may_match(m, part_fields, part_preds)]

    def partition_matches(partition: bytes) -> bool:
        return test_row(part_preds, dict(zip(part_names, decode(partition), strict=True)))

    entries = read_entries(file_io, table_path, metas, partition_filter=partition_matches if part_preds else None)
    # postpone bucket tables: rows not yet assigned to a bucket are invisible to batch reads (Paimon's
    # onlyReadRealBuckets), until the compaction assigns them
    entries = [e for e in entries if e.bucket != POSTPONE_BUCKET]
    if skip:
        entries = [e for e in entries if e.file.level > 0]
    stat_preds = [_normalized(p) for p in predicates if p.column not in part_names]
    if stat_preds and not data_evolution_enabled(schema.options):  # a column file's stats are not a row's
        entries = [e for e in entries if _file_may_match(e.file, schema, stat_preds, schema_loader, raw)]
        entries = filter_by_file_index(file_io, table_path, schema, entries, stat_preds, schema_loader,
                                       raw=raw, merge_capabilities=merge_capabilities)
    dvs = _deletion_files(file_io, table_path, snapshot, schema)

    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault((e.partition, e.bucket), []).append(e)
    splits = []
    for (part, bucket), es in groups.items():
        splits.append(Split(part, decode(part), bucket, es[0].total_buckets, [e.file for e in es], snapshot.id,
                            dvs.get((part, bucket)), raw))
    splits.sort(key=lambda s: (s.partition, s.bucket))
    return splits


@names_snapshot
def _deletion_files(file_io: FileIO, table_path: str, snapshot: Snapshot, schema: TableSchema
                    ) -> dict[tuple[bytes, int], dict[str, DeletionFile]]:
    """The deletion vectors of a snapshot by (partition, bucket); only looked for where they can exist."""
    if not snapshot.index_manifest:
        return {}
    if schema.primary_keys and not _has_deletion_vectors(schema):
        return {}
    return deletion_files(table_path, read_index_manifest(file_io, manifest_path(table_path, snapshot.index_manifest)))


def _has_deletion_vectors(schema: TableSchema) -> bool:
    return schema.options.get("deletion-vectors.enabled", "false").lower() == "true"


def _normalized(p: Predicate) -> Predicate:
    if p.op in ("in", "not in"):
        return Predicate(p.column, p.op, [normalize_literal(v) for v in p.value])
    return Predicate(p.column, p.op, normalize_literal(p.value))


def _manifest_may_match(m: ManifestFileMeta, part_fields: Sequence[Any], preds: Sequence[Predicate]) -> bool:
    stats = m.partition_stats
    types = [f.type for f in part_fields]
    try:
        lows = decode_row(stats.min_values, types)
        highs = decode_row(stats.max_values, types)
    except Exception:  # stats we cannot decode prove nothing
        return True
    nulls = stats.null_counts or [None] * len(types)
    total = m.num_added_files + m.num_deleted_files
    for i, f in enumerate(part_fields):
        for p in preds:
            if p.column == f.name:
                nc = nulls[i] if i < len(nulls) else None
                # counts are per file entry; unknown totals keep the manifest
                if not p.may_match(lows[i], highs[i], nc if nc is not None else None, total if total else 1 << 62):
                    return False
    return True


def _file_may_match(f: DataFileMeta, schema: TableSchema, preds: Sequence[Predicate],
                    schema_loader: Callable[[int], TableSchema] | None, raw: bool = False) -> bool:
    """Prune by key stats, and for append tables (or ``raw`` reads) by value stats.

    Value stats never prune primary-key tables that are merged on read: a newer version of a row in a pruned file
    would be lost and an older matching version would show through the merge. Raw reads of deletion-vector tables
    merge nothing, so there they prune as for append tables.
    """
    file_schema = schema if (f.schema_id == schema.id or schema_loader is None) else schema_loader(f.schema_id)
    if not _value_stats_may_match(f, schema, file_schema, preds, raw):
        return False
    return _key_stats_may_match(f, schema, file_schema, preds)


def _value_stats_may_match(f: DataFileMeta, schema: TableSchema, file_schema: TableSchema,
                           preds: Sequence[Predicate], raw: bool) -> bool:
    """Prune by value stats (over ``value_stats_cols``, None = all columns of the file schema): only append tables
    or ``raw`` reads, and only columns whose type did not change root since the file was written."""
    by_id = {fld.id: fld for fld in file_schema.fields}
    vs = f.value_stats
    if f.value_stats_cols is None:
        cols = list(file_schema.fields)
    else:
        name_to_field = {fld.name: fld for fld in file_schema.fields}
        cols = [name_to_field[c] for c in f.value_stats_cols if c in name_to_field]
    if not (cols and vs.null_counts and (raw or not file_schema.primary_keys)):
        return True
    try:
        lows = decode_row(vs.min_values, [c.type for c in cols])
        highs = decode_row(vs.max_values, [c.type for c in cols])
    except Exception:
        lows = highs = [None] * len(cols)
    for i, c in enumerate(cols):
        current = _current_name(schema, c.id)
        for p in preds:
            if p.column == current and c.id in by_id and i < len(vs.null_counts):
                if schema.field(current).type != c.type and c.type.root != schema.field(current).type.root:
                    continue
                if not p.may_match(lows[i], highs[i], vs.null_counts[i], f.row_count):
                    return False
    return True


def _key_stats_may_match(f: DataFileMeta, schema: TableSchema, file_schema: TableSchema,
                         preds: Sequence[Predicate]) -> bool:
    """Prune by the key stats of a primary-key file (stats that cannot be decoded prove nothing)."""
    key_fields = file_schema.key_fields() if file_schema.primary_keys else []
    if key_fields and f.key_stats.null_counts:
        try:
            lows = decode_row(f.key_stats.min_values, [k.type for k in key_fields])
            highs = decode_row(f.key_stats.max_values, [k.type for k in key_fields])
        except Exception:
            return True
        for i, k in enumerate(key_fields):
            current = _current_name(schema, k.id)
            for p in preds:
                if p.column == current and not p.may_match(lows[i], highs[i], 0, f.row_count):
                    return False
    return True


def _current_name(schema: TableSchema, field_id: int) -> str:
    for f in schema.fields:
        if f.id == field_id:
            return f.name
    return ""
