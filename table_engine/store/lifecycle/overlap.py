"""How well a table's files are laid out for filters on one column, from metadata only (the files' min/max statistics
in the manifests; no data file read): per partition, how many files a filter ``column = v`` reads, for ``v`` taken at
each file's minimum (the mean and the worst). A sorted or clustered partition reads about one file per value; an
appended one reads every file. The table page shows it before and after the last compaction (docs/layout.md)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from table_engine.errors import SchemaError
from table_engine.format.binary_row import decode_row
from table_engine.format.snapshot import Snapshot
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import value_text
from table_engine.store.reading.scan import PartitionDecoder, live_entries

__all__ = ["ColumnOverlap", "column_overlap"]


@dataclass(frozen=True)
class ColumnOverlap:
    """One partition (``k=v/k2=v2``; ``""`` unpartitioned) of one snapshot, for one column."""

    partition: str
    files: int
    files_with_stats: int
    """Files whose statistics give the column's min and max (others are read by every filter: counted as such)."""
    mean_files_per_value: float
    """Files a filter ``column = v`` reads, on average over ``v`` = each file's minimum."""
    max_files_per_value: int


def column_overlap(ctx: StoreContext, snapshot: Snapshot | None, column: str) -> list[ColumnOverlap]:
    """:class:`ColumnOverlap` of each partition of ``snapshot`` (sorted by partition) for ``column``."""
    field = next((f for f in ctx.schema.fields if f.name == column), None)
    if field is None:
        raise SchemaError(f"{ctx.table_path}: no column {column!r}; columns are {ctx.schema.field_names()}")
    if snapshot is None:
        return []
    ranges: dict[bytes, list[tuple[Any, Any] | None]] = {}
    for e in live_entries(ctx.file_io, ctx.table_path, snapshot):
        ranges.setdefault(e.partition, []).append(_range(ctx, e.file, field.id))
    decode = PartitionDecoder([f.type for f in ctx.schema.partition_fields()])
    names = ctx.schema.partition_keys
    default = ctx.options.partition_default_name()
    out = []
    for part, rs in ranges.items():
        text = "/".join(f"{k}={value_text(v, default)}" for k, v in zip(names, decode(part), strict=True))
        known = [r for r in rs if r is not None]
        unknown = len(rs) - len(known)
        lows = sorted(lo for lo, _ in known)
        highs = sorted(hi for _, hi in known)
        counts = [bisect.bisect_right(lows, lo) - bisect.bisect_left(highs, lo) + unknown for lo, _ in known]
        out.append(ColumnOverlap(text, len(rs), len(known), sum(counts) / len(counts) if counts else float(len(rs)),
                                 max(counts, default=len(rs))))
    return sorted(out, key=lambda o: o.partition)


def _range(ctx: StoreContext, f: Any, field_id: int) -> tuple[Any, Any] | None:
    """The (min, max) of the column ``field_id`` in file ``f`` (None: no statistics, or only nulls)."""
    file_schema = ctx.schema_by_id(f.schema_id)
    by_name = {fld.name: fld for fld in file_schema.fields}
    cols = list(file_schema.fields) if f.value_stats_cols is None else \
        [by_name[c] for c in f.value_stats_cols if c in by_name]
    index = next((i for i, c in enumerate(cols) if c.id == field_id), None)
    if index is None or not f.value_stats.null_counts:
        return None
    try:
        lows = decode_row(f.value_stats.min_values, [c.type for c in cols])
        highs = decode_row(f.value_stats.max_values, [c.type for c in cols])
    except Exception:  # noqa: BLE001 - statistics that cannot be decoded prove nothing: read by every filter
        return None
    lo, hi = lows[index], highs[index]
    if lo is None or hi is None:
        return None
    return lo, hi
