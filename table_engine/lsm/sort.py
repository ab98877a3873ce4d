"""Sorting key-value records with Arrow: the order records of one key are merged in, and stable sort helpers.

Nothing here knows a merge engine: the merge engines (:mod:`table_engine.lsm.merge_engines`) and the readers and
compactions that feed them sort with these helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.lsm.key_value import SEQUENCE_NUMBER

__all__ = ["MergeOrder", "concat_tables", "is_sorted", "sort_indices", "sort_kv", "take_sorted"]


@dataclass(frozen=True)
class MergeOrder:
    """How records of one key are ordered: ``sequence.field`` columns, then the system sequence number."""

    key_cols: tuple[str, ...]
    sequence_fields: tuple[str, ...] = ()
    descending: bool = False
    extra: tuple[str, ...] = field(default=())

    def sort_keys(self) -> list[tuple[str, str]]:
        order = "descending" if self.descending else "ascending"
        keys = [(k, "ascending") for k in self.key_cols]
        keys += [(s, order) for s in self.sequence_fields]
        keys.append((SEQUENCE_NUMBER, "ascending"))
        return keys


_PER_KEY_NULLS = int(pa.__version__.split(".")[0]) >= 25


def take_sorted(table: pa.Table, keys: Sequence[tuple[str, str]]) -> pa.Table:
    """``table`` sorted by ``keys`` (stable); ``table`` itself when it is in that order already (e.g. rows a
    Spark task received sorted), which saves copying every column."""
    if is_sorted(table, keys):
        return table
    indices = sort_indices(table, keys)
    if np.array_equal(indices.to_numpy(zero_copy_only=False), np.arange(table.num_rows)):
        return table
    return table.take(indices)


def is_sorted(table: pa.Table, keys: Sequence[tuple[str, str]]) -> bool:
    """Whether ``table`` is in ``keys`` order already (ties allowed: a stable sort would keep it as it is).

    One vectorized pass per key over adjacent rows, the first key first, stopping as soon as a pair is out of
    order or no pair is tied any more. Conservative: keys with nulls or NaN, or of types Arrow cannot compare,
    answer False (the caller sorts)."""
    n = table.num_rows
    if n <= 1:
        return True
    tied: pa.Array | None = None
    for name, order in keys:
        col = table.column(name)
        if col.null_count:
            return False
        try:
            if pa.types.is_floating(col.type) and pc.any(pc.is_nan(col)).as_py():
                return False
            before, after = col.slice(0, n - 1), col.slice(1)
            wrong = pc.greater(before, after) if order == "ascending" else pc.less(before, after)
            if tied is not None:
                wrong = pc.and_(tied, wrong)
            if pc.any(wrong).as_py():
                return False
            equal = pc.equal(before, after)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            return False
        tied = equal if tied is None else pc.and_(tied, equal)
        if not pc.any(tied).as_py():
            return True
    return True


def sort_indices(table: pa.Table, keys: Sequence[tuple[str, str]]) -> pa.Array:
    """Stable sort indices with nulls first (the smallest), across pyarrow versions.

    Key columns in many chunks (e.g. a write buffer of Spark's 10,000-row batches) are combined first: Arrow's
    multi-key sort over many chunks was 2.5x slower than over one (2.5 M rows, two int64 keys)."""
    names = list(dict.fromkeys(k for k, _ in keys))
    if any(table.column(n).num_chunks > 1 for n in names):
        table = pa.table({n: table.column(n).combine_chunks() for n in names})
    packed = _packed_int_key(table, keys)
    if packed is not None:
        return pa.array(_stable_argsort(packed).astype(np.uint64), pa.uint64())  # as Arrow returns
    if _PER_KEY_NULLS:
        return pc.sort_indices(table, sort_keys=[(k, o, "at_start") for k, o in keys])
    return pc.sort_indices(table, sort_keys=list(keys), null_placement="at_start")


_PACKABLE = (pa.types.is_integer, pa.types.is_date32, pa.types.is_timestamp)
_PACK_MIN_ROWS = 4096


def _packed_int_key(table: pa.Table, keys: Sequence[tuple[str, str]]) -> np.ndarray | None:
    """The keys packed into one int64 per row whose order is the keys' order, or None.

    For ascending integer-like keys (integers, dates, timestamps) without nulls whose value ranges multiply to
    less than 2**62: each key's offset from its minimum, in mixed radix. numpy's stable argsort of that one column
    is about twice as fast as Arrow's multi-key sort (a write buffer sorted by (bucket group, BIGINT key))."""
    if table.num_rows < _PACK_MIN_ROWS or len(keys) > 4:
        return None
    columns = []
    for name, order in keys:
        col = table.column(name)
        if order != "ascending" or col.null_count or not any(p(col.type) for p in _PACKABLE):
            return None
        if pa.types.is_unsigned_integer(col.type) and col.type.bit_width == 64:
            return None
        columns.append(col)
    packed: np.ndarray | None = None
    span = 1
    for col in reversed(columns):
        values = col.to_numpy()
        if values.dtype.kind == "M":   # dates and timestamps: their integer values
            values = values.view(np.int64)
        values = values.astype(np.int64, copy=False)
        lo, hi = int(values.min()), int(values.max())
        width = hi - lo + 1
        if span * width >= 1 << 62:
            return None
        offset = values - lo
        packed = offset * span if packed is None else packed + offset * span
        span *= width
    return packed


def _stable_argsort(packed: np.ndarray) -> np.ndarray:
    """A stable argsort of non-negative packed keys.

    When the keys times the row count fit in an int64, each key is made unique by its row position
    (``key * rows + position``), so numpy's unstable sort (SIMD-accelerated on x86) gives the stable order: 1 M
    rows 0.016 s against 0.08-0.1 s for ``kind="stable"`` (numpy 2.4, AVX-512)."""
    n = len(packed)
    top = int(packed.max()) if n else 0
    if (top + 1) * n >= 1 << 62:
        return np.argsort(packed, kind="stable")
    unique = packed * n
    unique += np.arange(n, dtype=np.int64)
    return np.argsort(unique)


def sort_kv(kv: pa.Table, order: MergeOrder, in_sequence_order: bool = False) -> pa.Table:
    """Sort key-value records by key then ordering (stable). ``in_sequence_order``: the records are in sequence
    order already (files concatenated oldest first, no ``sequence.field``), so sorting by key alone suffices."""
    if kv.num_rows <= 1:
        return kv
    keys = [(k, "ascending") for k in order.key_cols] if in_sequence_order else order.sort_keys()
    return take_sorted(kv, keys)


def concat_tables(tables: Sequence[pa.Table]) -> pa.Table:
    """The tables concatenated (schemas must match exactly; one table is returned as is)."""
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="none")
