"""Reads that use BTree and bitmap global indexes (ADR 0019): an ``=`` / ``in`` filter on an indexed column keeps
only the data files holding a row id the index matched or a row id no index covers (rows appended after the index:
Paimon's ``full`` search mode). The rows are still filtered exactly, so the result is the one a read without the index
gives; ``global-index.enabled`` = false turns it off.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from table_engine.errors import UnsupportedError, naming_snapshot
from table_engine.format.bitmap_index import BITMAP_INDEX, bitmap_lookup
from table_engine.format.btree_index import BTREE_INDEX, btree_key_kind, btree_lookup
from table_engine.format.index_manifest import IndexManifestEntry
from table_engine.format.schema_file import list_schema_ids
from table_engine.format.snapshot import Snapshot
from table_engine.io.base import FileIO
from table_engine.io.paths import index_file_path
from table_engine.predicate import Predicate
from table_engine.store.context import StoreContext
from table_engine.store.indexes.global_index import global_index_entries
from table_engine.store.reading.scan import Split
from table_engine.types import DataField, DataType, to_arrow_type

__all__ = ["IndexUse", "prune_by_global_index"]


@dataclass
class IndexUse:
    """What :func:`prune_by_global_index` did: the filtered columns it used an index of, the index files and data
    blocks (BTree) / bitmaps (bitmap index) it read, and the data files it kept and dropped."""

    columns: list[str] = dataclasses.field(default_factory=list)
    index_files: int = 0
    blocks_read: int = 0
    files_kept: int = 0
    files_dropped: int = 0


def _btree(file_io: FileIO, path: str, size: int, key_type: DataType, values: pa.Array) -> tuple[np.ndarray, int]:
    found = btree_lookup(file_io, path, size, key_type, values)
    return found.row_ids, found.blocks_read


def _bitmap(file_io: FileIO, path: str, size: int, key_type: DataType, values: pa.Array) -> tuple[np.ndarray, int]:
    found = bitmap_lookup(file_io, path, size, key_type, values)
    return found.row_ids, found.bitmaps_read


#: the index types read, with their lookup: (file_io, path, file size, key type, values) -> (local row ids matched,
#: data blocks / bitmaps read); both decode the key types of :func:`btree_key_kind`
_LOOKUPS: dict[str, Callable[[FileIO, str, int, DataType, pa.Array], tuple[np.ndarray, int]]] = {
    BTREE_INDEX: _btree, BITMAP_INDEX: _bitmap}


def _index_entries(ctx: StoreContext, entries: Sequence[IndexManifestEntry], field: DataField
                   ) -> list[IndexManifestEntry]:
    """The BTree and bitmap index entries over exactly ``field`` (no extra fields), if its type is decoded and every
    schema of the table gives it that key layout (an index built before a type change holds keys of the old type)."""
    found = [e for e in entries if e.index_file.index_type.lower() in _LOOKUPS
             and e.index_file.global_index is not None and e.index_file.global_index.index_field_id == field.id
             and not e.index_file.global_index.extra_field_ids]
    kind = btree_key_kind(field.type)
    if not found or kind is None:
        return []
    for schema_id in list_schema_ids(ctx.file_io, ctx.table_path) if ctx.schema.id else ():
        old = next((f for f in ctx.schema_by_id(schema_id).fields if f.id == field.id), None)
        if old is not None and btree_key_kind(old.type) != kind:
            return []
    return found


def _keep_mask(starts: np.ndarray, ends: np.ndarray, matched: np.ndarray, covered: np.ndarray) -> np.ndarray:
    """For row-id ranges ``[starts, ends)`` (sorted by start, one per overlapping component): whether one holds a
    matched row id or a row id no index covers (``covered``: sorted disjoint ``[start, end)`` rows)."""
    hit = np.searchsorted(matched, starts, "left") < np.searchsorted(matched, ends, "left")
    if not len(covered):
        return np.ones(len(starts), bool)
    # a range is fully covered when one covered range holds it (covered ranges are merged)
    k = np.searchsorted(covered[:, 0], starts, "right") - 1
    inside: np.ndarray = (k >= 0) & (covered[np.maximum(k, 0), 1] >= ends)
    keep: np.ndarray = hit | ~inside
    return keep


def _merged(ranges: np.ndarray) -> np.ndarray:
    """Sorted ``[start, end)`` ranges merged where they overlap or touch."""
    if not len(ranges):
        return ranges.reshape(0, 2)
    ranges = ranges[np.argsort(ranges[:, 0], kind="stable")]
    run_end = np.maximum.accumulate(ranges[:, 1])
    new = np.ones(len(ranges), bool)
    new[1:] = ranges[1:, 0] > run_end[:-1]
    return np.column_stack([ranges[new, 0], np.maximum.reduceat(ranges[:, 1], np.flatnonzero(new))])


def _prune_split(split: Split, matched: np.ndarray, covered: np.ndarray) -> list[bool]:
    """Per file of ``split``: keep it? Files whose row ranges overlap are decided together (a column file of data
    evolution and the files it overlays), files without row ids are kept."""
    files = split.files
    keep = [True] * len(files)
    idx = [i for i, f in enumerate(files) if f.first_row_id is not None]
    if not idx:
        return keep
    starts = np.array([files[i].first_row_id for i in idx], np.int64)
    ends = starts + np.array([files[i].row_count for i in idx], np.int64)
    order = np.argsort(starts, kind="stable")
    run_end = np.maximum.accumulate(ends[order])
    new = np.ones(len(order), bool)
    new[1:] = starts[order][1:] >= run_end[:-1]
    comp = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    comp_keep = _keep_mask(starts[order][first], np.maximum.reduceat(ends[order], first), matched, covered)
    for pos, i in enumerate(order):
        keep[idx[int(i)]] = bool(comp_keep[comp[pos]])
    return keep


def prune_by_global_index(ctx: StoreContext, snapshot: Snapshot | None, preds: Sequence[Predicate],
                          splits: list[Split]) -> tuple[list[Split], IndexUse]:
    """``splits`` without the data files a BTree or bitmap global index of ``snapshot`` shows hold no row of an ``=``
    / ``in`` predicate of ``preds`` (``global-index.enabled``). An index the reader does not decode (compressed
    blocks) is not used; a missing or corrupt one fails the read with a one-line error naming it."""
    use = IndexUse()
    if not ctx.options.global_index_enabled() or snapshot is None or not splits:
        return splits, use
    with naming_snapshot(snapshot.id):
        return _prune(ctx, global_index_entries(ctx.index_entries(snapshot)), preds, splits, use)


def _prune(ctx: StoreContext, entries: list[IndexManifestEntry], preds: Sequence[Predicate], splits: list[Split],
           use: IndexUse) -> tuple[list[Split], IndexUse]:
    if not entries:
        return splits, use
    fields = {f.name: f for f in ctx.schema.fields}
    before = sum(len(s.files) for s in splits)
    for p in preds:
        field = fields.get(p.column)
        if p.op not in ("=", "in") or field is None:
            continue
        indexes = _index_entries(ctx, entries, field)
        if not indexes:
            continue
        try:
            values = pa.array(p.value if p.op == "in" else [p.value], to_arrow_type(field.type))
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            continue  # a value of another type: the read's own filter decides (or refuses) it
        matched: dict[bytes, list[np.ndarray]] = {}
        covered: dict[bytes, list[tuple[int, int]]] = {}
        try:
            for e in indexes:
                gi = e.index_file.global_index
                assert gi is not None
                row_ids, blocks = _LOOKUPS[e.index_file.index_type.lower()](
                    ctx.file_io, index_file_path(ctx.table_path, e.index_file), e.index_file.file_size, field.type,
                    values)
                matched.setdefault(e.partition, []).append(row_ids + gi.row_range_start)
                covered.setdefault(e.partition, []).append((gi.row_range_start, gi.row_range_end + 1))
                use.blocks_read += blocks
        except UnsupportedError:
            continue
        use.columns.append(p.column)
        use.index_files += len(indexes)
        out = []
        for s in splits:
            ids = np.unique(np.concatenate(matched[s.partition])) if s.partition in matched else np.zeros(0, np.int64)
            cov = _merged(np.array(covered.get(s.partition, []), np.int64).reshape(-1, 2))
            keep = _prune_split(s, ids, cov)
            files = [f for f, k in zip(s.files, keep) if k]
            if files:
                out.append(dataclasses.replace(s, files=files) if len(files) < len(s.files) else s)
        splits = out
    use.files_kept = sum(len(s.files) for s in splits)
    use.files_dropped = before - use.files_kept
    return splits, use
