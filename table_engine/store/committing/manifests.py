"""Writing manifests with their manifest-list metadata, and merging small manifests.

Manifests are logs of ADD/DELETE entries. Without merging, every commit adds one manifest and a table's metadata
grows without bound; :func:`merge_manifests` rewrites runs of small manifests (``manifest.merge-min-count``,
``manifest.target-file-size``) into larger ones, cancelling ADD/DELETE pairs of the same file, and rewrites every
manifest once the small or deleting ones add up to ``manifest.full-compaction-threshold-size``.

Every manifest is written with its entries ordered by partition value (then bucket; the order of entries of one
bucket is kept), so a merged manifest covers a narrow partition range and the manifest list's partition statistics
prune it for queries on other partitions; inside a manifest, blocks of other partitions are not decoded
(:func:`~table_engine.format.manifest.read_manifest`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from table_engine.format.binary_row import decode_row, encode_row
from table_engine.format.data_file_meta import SimpleStats
from table_engine.format.manifest import (
    FileKind,
    ManifestEntry,
    encode_manifest,
    merge_entries,
    read_manifest,
)
from table_engine.format.manifest_list import ManifestFileMeta
from table_engine.io.file_io import FileIO
from table_engine.io.paths import manifest_dir, new_manifest_name
from table_engine.types import DataType

#: manifests are rolled at this multiple of ``manifest.target-file-size``
_ROLL_OVER = 1.1


def partition_stats(partitions: Sequence[bytes], types: Sequence[DataType]) -> SimpleStats:
    """Min/max/null-count SimpleStats over partition BinaryRows (one per entry: null counts count entries)."""
    if not types:
        empty = encode_row([], [])
        return SimpleStats(empty, empty, [])
    counts = Counter(partitions)
    decoded = [(decode_row(p, types), n) for p, n in counts.items()]
    lows: list[Any] = []
    highs: list[Any] = []
    nulls: list[int | None] = []
    for i in range(len(types)):
        vals = [d[i] for d, _ in decoded if d[i] is not None]
        lows.append(min(vals) if vals else None)
        highs.append(max(vals) if vals else None)
        nulls.append(sum(n for d, n in decoded if d[i] is None))
    return SimpleStats(encode_row(lows, types), encode_row(highs, types), nulls)


def sorted_by_partition(entries: Sequence[ManifestEntry], types: Sequence[DataType]) -> list[ManifestEntry]:
    """``entries`` ordered by partition value (nulls last), then bucket; stable, so the entries of one bucket keep
    their order (an ADD before the DELETE of the same file)."""
    keys: dict[bytes, tuple[tuple[bool, Any], ...]] = {}
    for part in {e.partition for e in entries}:
        keys[part] = tuple((v is None, 0 if v is None else v) for v in decode_row(part, types))
    return sorted(entries, key=lambda e: (keys[e.partition], e.bucket))


def write_manifest_files(
    file_io: FileIO,
    table_path: str,
    entries: Sequence[ManifestEntry],
    schema_id: int,
    partition_types: Sequence[DataType],
    target_size: int,
    kind: str = "",
) -> list[ManifestFileMeta]:
    """Write ``entries`` into one or more manifests (rolled a little over ``target_size``, so that they do not
    count as small and get merged again), ordered by partition value; returns their metas."""
    if not entries:
        return []
    entries = sorted_by_partition(entries, partition_types)
    data = encode_manifest(entries)
    if len(data) <= target_size * _ROLL_OVER:
        chunks = [(entries, data)]
    else:  # split at the measured size of an entry
        header = len(encode_manifest([]))
        per_entry = max(1.0, (len(data) - header) / len(entries))
        per_file = max(1, math.ceil((target_size * _ROLL_OVER - header) / per_entry))
        chunks = [(entries[i:i + per_file], encode_manifest(entries[i:i + per_file]))
                  for i in range(0, len(entries), per_file)]
    metas = []
    for chunk, chunk_data in chunks:
        name = new_manifest_name(kind)
        file_io.write_bytes(f"{manifest_dir(table_path)}/{name}", chunk_data)
        metas.append(_meta(name, len(chunk_data), chunk, schema_id, partition_types))
    return metas


def _meta(name: str, size: int, entries: Sequence[ManifestEntry], schema_id: int,
          partition_types: Sequence[DataType]) -> ManifestFileMeta:
    added = sum(1 for e in entries if e.kind == FileKind.ADD)
    buckets = [e.bucket for e in entries]
    levels = [e.file.level for e in entries]
    total = {e.total_buckets for e in entries}
    min_row_id, max_row_id = row_id_bounds(entries)
    return ManifestFileMeta(
        file_name=name,
        file_size=size,
        num_added_files=added,
        num_deleted_files=len(entries) - added,
        partition_stats=partition_stats([e.partition for e in entries], partition_types),
        schema_id=schema_id,
        min_bucket=min(buckets),
        max_bucket=max(buckets),
        min_level=min(levels),
        max_level=max(levels),
        total_buckets=total.pop() if len(total) == 1 and -1 not in total else None,
        min_row_id=min_row_id,
        max_row_id=max_row_id,
    )


def row_id_bounds(entries: Sequence[ManifestEntry]) -> tuple[int | None, int | None]:
    """``_MIN_ROW_ID`` / ``_MAX_ROW_ID`` of a manifest: the row-id range of its files, None unless every file has
    a ``_FIRST_ROW_ID`` (Paimon's rule)."""
    if not entries or any(e.file.first_row_id is None for e in entries):
        return None, None
    lo = min(e.file.first_row_id for e in entries if e.file.first_row_id is not None)
    hi = max(e.file.first_row_id + e.file.row_count - 1 for e in entries if e.file.first_row_id is not None)
    return lo, hi


def merge_manifests(
    file_io: FileIO,
    table_path: str,
    metas: Sequence[ManifestFileMeta],
    schema_id: int,
    partition_types: Sequence[DataType],
    target_size: int,
    min_count: int,
    full_compaction_size: int | None = None,
) -> tuple[list[ManifestFileMeta], list[str]]:
    """Minor manifest compaction, and full compaction (Paimon's rules, simplified).

    Consecutive manifests smaller than ``target_size`` are merged once they add up to ``target_size``, or at the
    end when at least ``min_count`` of them are pending. Every manifest is merged when all are small and at least
    ``min_count``, or when the manifests that are small or hold DELETE entries add up to ``full_compaction_size``
    (``manifest.full-compaction-threshold-size``; None: never); then DELETE entries that cancel nothing are dropped
    (their files are gone from the table). Returns the new list and the names of manifests written by this call
    (to delete if the commit fails).
    """
    result: list[ManifestFileMeta] = []
    written: list[str] = []
    pending: list[ManifestFileMeta] = []
    pending_size = 0
    merged_everything = all(m.file_size < target_size for m in metas) and len(metas) >= min_count
    if full_compaction_size is not None and len(metas) > 1:
        changing = sum(m.file_size for m in metas if m.file_size < target_size or m.num_deleted_files)
        merged_everything = merged_everything or changing >= full_compaction_size

    def flush(drop_deletes: bool) -> None:
        nonlocal pending, pending_size
        if len(pending) <= 1:
            result.extend(pending)
        else:
            entries: list[ManifestEntry] = []
            for m in pending:
                entries.extend(read_manifest(file_io, f"{manifest_dir(table_path)}/{m.file_name}"))
            merged = merge_entries(entries)
            if drop_deletes:
                merged = [e for e in merged if e.kind == FileKind.ADD]
            new = write_manifest_files(file_io, table_path, merged, schema_id, partition_types, target_size)
            written.extend(m.file_name for m in new)
            result.extend(new)
        pending, pending_size = [], 0

    if merged_everything:
        pending = list(metas)
        flush(drop_deletes=True)
        return result, written
    for m in metas:
        if m.file_size >= target_size:
            # a big manifest ends the run of small ones before it
            if len(pending) >= min_count:
                flush(drop_deletes=False)
            else:
                result.extend(pending)
                pending, pending_size = [], 0
            result.append(m)
            continue
        pending.append(m)
        pending_size += m.file_size
        if pending_size >= target_size:
            flush(drop_deletes=False)
    if len(pending) >= min_count:
        flush(drop_deletes=False)
    else:
        result.extend(pending)
    return result, written
