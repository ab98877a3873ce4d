"""Vectorized helpers over *segments*: runs of equal keys in a table sorted by key.

Every merge engine works on key-value records sorted by key and then by merge order. A :class:`Segments` describes
the runs of equal keys (one segment per key) with numpy arrays, so per-key reductions are numpy ``reduceat``/
``accumulate`` calls or Arrow grouped aggregations over a dense segment id -- never a Python loop per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.lsm.key_value import last_of_key_runs
from table_engine.lsm.sort import sort_indices

_I64 = np.int64


@dataclass(frozen=True)
class Segments:
    """Runs of equal keys of ``n`` sorted rows: segment ``s`` covers rows ``starts[s] <= r < ends[s]``."""

    n: int
    starts: np.ndarray
    ends: np.ndarray
    ids: np.ndarray

    @property
    def count(self) -> int:
        return len(self.starts)

    @staticmethod
    def of(table: pa.Table, key_cols: Sequence[str]) -> Segments:
        n = table.num_rows
        if n == 0:
            empty = np.zeros(0, _I64)
            return Segments(0, empty, empty, empty)
        last = np.asarray(last_of_key_runs(table, key_cols).to_numpy(zero_copy_only=False), dtype=bool)
        ends = np.flatnonzero(last).astype(_I64) + 1
        starts = np.concatenate([np.zeros(1, _I64), ends[:-1]])
        ids = np.repeat(np.arange(len(ends), dtype=_I64), ends - starts)
        return Segments(n, starts, ends, ids)

    @staticmethod
    def from_ids(ids: np.ndarray, count: int) -> Segments:
        """Segments of rows already grouped by a non-decreasing segment id in ``[0, count)`` (empty ones allowed)."""
        ids = np.asarray(ids, _I64)
        bounds = np.searchsorted(ids, np.arange(count + 1, dtype=_I64))
        return Segments(len(ids), bounds[:-1].astype(_I64), bounds[1:].astype(_I64), ids)

    # ---- reductions to one value per segment ------------------------------------------------------------------
    def lengths(self) -> np.ndarray:
        return np.asarray(self.ends - self.starts, _I64)

    def last_where(self, mask: np.ndarray) -> np.ndarray:
        """Per segment, the index of its last row where ``mask`` holds, else -1."""
        if mask.all():
            return np.where(self.ends > self.starts, self.ends - 1, -1).astype(_I64)
        out = np.full(self.count, -1, _I64)
        rows = np.flatnonzero(mask)
        if len(rows):
            segs = self.ids[rows]
            last = np.ones(len(rows), bool)
            last[:-1] = segs[1:] != segs[:-1]
            out[segs[last]] = rows[last]
        return out

    def first_where(self, mask: np.ndarray) -> np.ndarray:
        """Per segment, the index of its first row where ``mask`` holds, else -1."""
        if mask.all():
            return np.where(self.ends > self.starts, self.starts, -1).astype(_I64)
        out = np.full(self.count, -1, _I64)
        rows = np.flatnonzero(mask)
        if len(rows):
            segs = self.ids[rows]
            first = np.ones(len(rows), bool)
            first[1:] = segs[1:] != segs[:-1]
            out[segs[first]] = rows[first]
        return out

    def any(self, mask: np.ndarray) -> np.ndarray:
        return self.count_where(mask) > 0

    def count_where(self, mask: np.ndarray) -> np.ndarray:
        """Per segment, how many of its rows ``mask`` holds for."""
        if mask.all():
            return self.lengths()
        return np.bincount(self.ids[mask], minlength=self.count).astype(_I64)

    def sum_int(self, values: np.ndarray) -> np.ndarray:
        """Per segment sum of int64 ``values`` (wrapping like int64; exact whenever the true sums fit)."""
        if self.n == 0:
            return np.zeros(self.count, _I64)
        if np.abs(values).max(initial=0) * max(self.n, 1) < 2**53:
            return np.bincount(self.ids, weights=values, minlength=self.count).astype(_I64)
        return self._reduce(np.add, values, 0)

    def _reduce(self, ufunc: np.ufunc, values: np.ndarray, empty: float) -> np.ndarray:
        if self.count == 0:
            return np.zeros(0, values.dtype)
        lengths = self.lengths()
        nonempty = lengths > 0
        if nonempty.all():
            return np.asarray(ufunc.reduceat(values, self.starts), dtype=values.dtype)
        out = np.full(self.count, empty, values.dtype)
        if nonempty.any():
            out[nonempty] = ufunc.reduceat(values, self.starts[nonempty])
        return out

    # ---- per-row helpers ----------------------------------------------------------------------------------------
    def after(self, per_segment: np.ndarray) -> np.ndarray:
        """Per row, whether it comes after the row ``per_segment[s]`` of its segment (-1: every row does)."""
        if not (per_segment >= 0).any():
            return np.ones(self.n, bool)
        return np.asarray(np.arange(self.n, dtype=_I64) > per_segment[self.ids])

    def broadcast(self, per_segment: np.ndarray) -> np.ndarray:
        """A per-segment value repeated onto each row of the segment."""
        return np.asarray(per_segment[self.ids])

    def exclusive_cummax(self, ranks: np.ndarray, seed: np.ndarray) -> np.ndarray:
        """Per row, the max of ``seed[segment]`` and ``ranks`` of the earlier rows of its segment.

        ``ranks`` are integers >= -1 (-1: the row does not count); the result is -1 where nothing counts.
        """
        if self.n == 0:
            return np.zeros(0, _I64)
        width = int(max(int(ranks.max(initial=-1)), int(seed.max(initial=-1)))) + 2
        base = self.ids * width
        inclusive = np.maximum.accumulate(base + ranks + 1)
        prev = np.empty(self.n, _I64)
        prev[0] = 0
        prev[1:] = inclusive[:-1]
        first = np.zeros(self.n, bool)
        first[self.starts[self.lengths() > 0]] = True
        prev = np.where(first, base, prev) - base - 1
        return np.asarray(np.maximum(prev, self.broadcast(seed)), _I64)

    def positions(self) -> np.ndarray:
        """Each row's position inside its segment (0 for the first row)."""
        return np.asarray(np.arange(self.n, dtype=_I64) - self.starts[self.ids], _I64)


def take_or_null(array: pa.Array | pa.ChunkedArray, indices: np.ndarray) -> pa.Array:
    """``array[indices]`` with null where an index is -1."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    missing = indices < 0
    if not missing.any():
        return array.take(pa.array(indices, _pa_index_type()))
    idx = pa.array(np.where(missing, 0, indices), _pa_index_type(), mask=missing)
    return array.take(idx)


def _pa_index_type() -> pa.DataType:
    return pa.int64()


def combine(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array: the chunks of a ChunkedArray combined."""
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def valid_mask(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numpy bool array: True where the value is not null."""
    arr = combine(array)
    if arr.null_count == 0:
        return np.ones(len(arr), bool)
    return np.asarray(pc.is_valid(arr).to_numpy(zero_copy_only=False), dtype=bool)


def dense_ranks(columns: Sequence[pa.Array | pa.ChunkedArray]) -> np.ndarray:
    """Dense ranks (0-based) of row tuples ordered lexicographically, nulls smallest in every column."""
    n = len(columns[0]) if columns else 0
    if n == 0:
        return np.zeros(0, _I64)
    table = pa.table({f"c{i}": combine(c) for i, c in enumerate(columns)})
    order = np.asarray(sort_indices(table, [(f"c{i}", "ascending") for i in range(len(columns))]), _I64)
    sorted_table = table.take(pa.array(order))
    new_value = np.zeros(n, bool)
    new_value[0] = True
    for name in sorted_table.column_names:
        col = combine(sorted_table.column(name))
        a, b = col.slice(0, n - 1), col.slice(1)
        ne = pc.not_equal(a, b)
        # null-aware: two nulls are equal, a null and a value differ
        null_a, null_b = pc.is_null(a), pc.is_null(b)
        differ = pc.if_else(pc.or_(null_a, null_b), pc.xor(null_a, null_b), ne)
        new_value[1:] |= np.asarray(differ.to_numpy(zero_copy_only=False), dtype=bool)
    ranks_sorted = np.cumsum(new_value) - 1
    ranks = np.empty(n, _I64)
    ranks[order] = ranks_sorted
    return ranks


def group_ids(keys: Sequence[pa.Array | pa.ChunkedArray]) -> tuple[np.ndarray, int]:
    """A dense group id per row for the tuples of ``keys`` (two nulls are equal) and the number of groups."""
    n = len(keys[0]) if keys else 0
    if n == 0:
        return np.zeros(0, _I64), 0
    if len(keys) == 1:
        col = combine(keys[0])
        t = col.type
        if not (pa.types.is_nested(t) or pa.types.is_dictionary(t)):
            enc = pc.dictionary_encode(col, null_encoding="encode")
            ids = np.asarray(enc.indices.to_numpy(zero_copy_only=False), _I64)
            return ids, len(enc.dictionary)
    flat: list[pa.Array] = []
    for k in keys:
        flat.extend(_flatten_struct(combine(k)))
    ranks = dense_ranks(flat)
    return ranks, int(ranks.max()) + 1


def _flatten_struct(arr: pa.Array) -> list[pa.Array]:
    """A struct column as its leaf columns, plus its own validity (so a null struct differs from all-null fields)."""
    if not pa.types.is_struct(arr.type):
        return [arr]
    out: list[pa.Array] = [pc.is_valid(arr)]
    for i in range(arr.type.num_fields):
        out.extend(_flatten_struct(pc.struct_field(arr, [i])))
    return out


def first_per_group(gid: np.ndarray, ngroups: int, pos: np.ndarray) -> np.ndarray:
    """Per group, the smallest ``pos`` of its rows."""
    first = np.full(ngroups, np.iinfo(_I64).max, _I64)
    np.minimum.at(first, gid, pos)
    return first


def last_per_group(gid: np.ndarray, ngroups: int, pos: np.ndarray) -> np.ndarray:
    """Per group, the largest ``pos`` of its rows."""
    last = np.full(ngroups, -1, _I64)
    np.maximum.at(last, gid, pos)
    return last
