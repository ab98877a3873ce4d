"""Field aggregators of the ``aggregation`` and ``partial-update`` merge engines, one vectorized class per function.

Every aggregator folds the records of each key *sequentially* (Paimon's ``FieldAggregator.agg``/``retract`` applied
record by record, starting from a null accumulator), but computes the fold for all keys at once:

* ``fold(values, seg, retract)``: ``values`` holds the rows taking part, grouped by key (``seg``, a
  :class:`~table_engine.lsm.merge_engines.segments.Segments`) and in merge order inside a key; ``retract`` marks
  ``-U``/``-D`` rows (None: no retraction). Returns one value per segment (null for an empty segment);
* ``combine_retracts(values, seg)``: the one retraction value equivalent to applying the given retractions one
  after the other (sum: their sum, collect: their concatenation, ...). A merge that sees only retractions for a key
  stores this as a ``-U`` record, so merging it again later applies exactly the same retraction;
* ``prepare_input(values, retract)``: the write path's transformation of freshly written values (only ``count``:
  a written value counts 1 when not null, so stored values are partial counts that merge by summing).

Intermediate results are re-mergeable: a merged value is itself a valid input whose fold with later records equals
the fold of all the original records (``agg(null, x) = x`` for every function, and order-sensitive functions keep
their order: ``first_value`` stores the first value, ``collect`` the concatenation, ...).

Type rules are checked at table creation by :meth:`Aggregator.check_type` (a SchemaError naming the column and the
function). Functions that accept retraction: ``sum``, ``product``, ``count``, ``collect``, ``merge_map``,
``nested_update``, ``last_value``, ``last_non_null_value``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import DataError, SchemaError, UnsupportedError
from table_engine.lsm.merge_engines.segments import (
    Segments,
    combine,
    first_per_group,
    group_ids,
    last_per_group,
    take_or_null,
    valid_mask,
)
from table_engine.types import MAX_LENGTH, DataField, DataType, to_arrow_type

_I64 = np.int64
NUMERIC_ROOTS = frozenset({"DECIMAL", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE"})
COMPARABLE_ROOTS = NUMERIC_ROOTS | {"CHAR", "VARCHAR", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"}
_INT_RANGE = {"TINYINT": (-(2**7), 2**7 - 1), "SMALLINT": (-(2**15), 2**15 - 1), "INT": (-(2**31), 2**31 - 1),
              "BIGINT": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True)
class FieldOptions:
    """Per-field options of an aggregate function (``fields.<field>.<property>``)."""

    ignore_retract: bool = False
    delimiter: str = ","
    distinct: bool = False
    nested_key: tuple[str, ...] = ()
    nested_key_null_strategy: str = "merge"
    nested_sequence_field: tuple[str, ...] = ()
    count_limit: int = 2**31 - 1


class Aggregator:
    """One aggregate function bound to one column."""

    name: ClassVar[str] = ""
    retractable: ClassVar[bool] = False
    #: folding a single value gives it back unchanged (else single records are folded too, to normalize them)
    single_identity: ClassVar[bool] = True
    #: the doc's supported-types phrase, for error messages
    types_doc: ClassVar[str] = "all data types"

    def __init__(self, field: DataField, options: FieldOptions) -> None:
        self.field = field
        self.options = options
        self.arrow_type = to_arrow_type(field.type)

    # ---- type rules ---------------------------------------------------------------------------------------------
    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return True

    @classmethod
    def check_type(cls, field: DataField, options: FieldOptions) -> None:
        if not cls.accepts(field.type, options):
            raise SchemaError(f"column {field.name!r} of type {field.type} cannot use aggregate function "
                              f"{cls.name!r}: it supports {cls.types_doc}")

    # ---- folding ------------------------------------------------------------------------------------------------
    def prepare_input(self, values: pa.Array, retract: np.ndarray) -> pa.Array:
        return values

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        raise NotImplementedError

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        """The single retraction value equivalent to the given retractions (default: the last one)."""
        return take_or_null(values, seg.last_where(np.ones(seg.n, bool)))

    # ---- helpers ------------------------------------------------------------------------------------------------
    def _error(self, what: str) -> DataError:
        return DataError(f"column {self.field.name!r} ({self.name}): {what}")

    def _nulls(self, count: int) -> pa.Array:
        return pa.nulls(count, self.arrow_type)


# ---------------------------------------------------------------------------------------------------- numeric helpers

def _int_view_type(t: pa.DataType) -> pa.DataType | None:
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_timestamp(t) or pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        return pa.int64()
    return None


def is_numpy_friendly(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
            or _int_view_type(t) is not None)


def to_numpy(values: pa.Array, fill: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """(data with nulls replaced by ``fill``, validity) of a fixed-width array."""
    arr = combine(values)
    view = _int_view_type(arr.type)
    if view is not None:
        arr = arr.view(view)
    valid = valid_mask(arr)
    if arr.null_count:
        arr = pc.fill_null(arr, pa.scalar(fill, arr.type))
    return np.asarray(arr.to_numpy(zero_copy_only=False)), valid


def from_numpy(data: np.ndarray, valid: np.ndarray, t: pa.DataType) -> pa.Array:
    view = _int_view_type(t)
    base = view if view is not None else t
    mask = None if valid.all() else ~valid
    arr = pa.array(data.astype(base.to_pandas_dtype(), copy=False), base, mask=mask)
    return arr.view(t) if view is not None else arr


def _scatter(result: pa.Array, groups: np.ndarray, count: int) -> pa.Array:
    """Place per-group results (``groups`` = segment ids) into an array of ``count`` segments (others null)."""
    pos = np.full(count, -1, _I64)
    pos[groups] = np.arange(len(groups), dtype=_I64)
    return take_or_null(result, pos)


def _grouped(values: pa.Array, seg: Segments, function: str, options: pc.FunctionOptions | None = None
             ) -> pa.Array:
    """Arrow hash aggregation of ``values`` by segment; one result per segment (null for empty segments)."""
    t = pa.table({"g": pa.array(seg.ids), "v": combine(values)})
    agg = t.group_by("g", use_threads=False).aggregate([("v", function, options)] if options else [("v", function)])
    groups = np.asarray(agg.column("g").to_numpy(), _I64)
    return _scatter(combine(agg.column(f"v_{function}")), groups, seg.count)


def _explode(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Child indices of the elements of a list/map array's non-null rows, and each element's row."""
    arr = combine(arr)
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), _I64)
    lengths = np.diff(offsets)
    if arr.null_count:
        lengths = np.where(valid_mask(arr), lengths, 0)
    total = int(lengths.sum())
    parent = np.repeat(np.arange(len(arr), dtype=_I64), lengths)
    starts_excl = np.concatenate([np.zeros(1, _I64), np.cumsum(lengths)[:-1]]) if len(lengths) else lengths
    child = np.repeat(offsets[:-1], lengths) + (np.arange(total, dtype=_I64) - np.repeat(starts_excl, lengths))
    return child, parent


def _list_from(values: pa.Array, elem_seg: np.ndarray, has_value: np.ndarray, t: pa.DataType) -> pa.Array:
    """A list array of ``len(has_value)`` rows from elements grouped by (non-decreasing) row id ``elem_seg``."""
    count = len(has_value)
    counts = np.bincount(elem_seg, minlength=count) if len(elem_seg) else np.zeros(count, _I64)
    offsets = np.concatenate([np.zeros(1, _I64), np.cumsum(counts)]).astype(np.int32)
    mask = pa.array(~has_value) if not has_value.all() else None
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=t, mask=mask)


# ---------------------------------------------------------------------------------------------------- simple values

class LastValue(Aggregator):
    """Latest value (null included); a retraction sets null."""

    name = "last_value"
    retractable = True

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        idx = seg.last_where(np.ones(seg.n, bool))
        if retract is not None and retract.any():
            idx = np.where((idx >= 0) & retract[np.maximum(idx, 0)], -1, idx)
        return take_or_null(values, idx)


class LastNonNullValue(Aggregator):
    """Latest non-null value; a retraction of a non-null value sets null."""

    name = "last_non_null_value"
    retractable = True

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        idx = seg.last_where(valid_mask(values))
        if retract is not None and retract.any():
            idx = np.where((idx >= 0) & retract[np.maximum(idx, 0)], -1, idx)
        return take_or_null(values, idx)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        return take_or_null(values, seg.last_where(valid_mask(values)))


class FirstValue(Aggregator):
    """The first value (null included)."""

    name = "first_value"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        return take_or_null(values, seg.first_where(np.ones(seg.n, bool)))


class FirstNonNullValue(Aggregator):
    """The first non-null value (``first_not_null_value`` is its legacy name)."""

    name = "first_non_null_value"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        return take_or_null(values, seg.first_where(valid_mask(values)))


class _MinMax(Aggregator):
    types_doc = "CHAR, VARCHAR, DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE, DATE, TIME, TIMESTAMP " \
                "and TIMESTAMP_LTZ"
    is_max: ClassVar[bool] = True

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root in COMPARABLE_ROOTS

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        t = self.arrow_type
        if is_numpy_friendly(t) and not pa.types.is_boolean(t):
            data, valid = to_numpy(values)
            if pa.types.is_floating(t):
                fill = -np.inf if self.is_max else np.inf
                ufunc: np.ufunc = np.maximum if self.is_max else np.fmin  # NaN is the largest double (Java)
            else:
                info = np.iinfo(data.dtype)
                fill = info.min if self.is_max else info.max
                ufunc = np.maximum if self.is_max else np.minimum
            data = np.where(valid, data, fill).astype(data.dtype, copy=False)
            out = seg._reduce(ufunc, data, fill)
            return from_numpy(out, seg.any(valid), t)
        return _grouped(values, seg, "max" if self.is_max else "min")


class Max(_MinMax):
    name = "max"


class Min(_MinMax):
    name = "min"
    is_max = False


class _Bool(Aggregator):
    types_doc = "BOOLEAN"
    is_and: ClassVar[bool] = True

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "BOOLEAN"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        data, valid = to_numpy(values, fill=False)
        data = data.astype(bool)
        if self.is_and:
            out = ~seg.any(valid & ~data)
        else:
            out = seg.any(valid & data)
        return from_numpy(out, seg.any(valid), pa.bool_())


class BoolAnd(_Bool):
    name = "bool_and"


class BoolOr(_Bool):
    name = "bool_or"
    is_and = False


# ---------------------------------------------------------------------------------------------------- arithmetic

class Sum(Aggregator):
    """Sum of non-null values; a retraction subtracts. Integer overflow is a DataError (Java's exact arithmetic);
    a DECIMAL sum that does not fit the column's precision becomes null (Java's ``Decimal.fromBigDecimal``)."""

    name = "sum"
    retractable = True
    types_doc = "DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT and DOUBLE"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root in NUMERIC_ROOTS

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        return self._signed_sum(values, seg, retract)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        return self._signed_sum(values, seg, None)

    def _signed_sum(self, values: pa.Array, seg: Segments, negative: np.ndarray | None) -> pa.Array:
        t = self.arrow_type
        root = self.field.type.root
        if root == "DECIMAL":
            vals = combine(values)
            if negative is not None and negative.any():
                vals = pc.if_else(pa.array(negative), pc.negate(vals), vals)
            total = _grouped(vals, seg, "sum")
            return _fit_decimal(total, t)
        data, valid = to_numpy(values)
        has = seg.any(valid)
        if pa.types.is_floating(t):
            if negative is not None:
                data = np.where(negative, -data, data)
            if data.dtype == np.float64:  # bincount adds each key's values in order, as Java does
                total = np.bincount(seg.ids, weights=data, minlength=seg.count)
            else:
                total = seg._reduce(np.add, data, 0).astype(data.dtype)
            return from_numpy(total, has, t)
        wide = data.astype(_I64)
        if negative is not None:
            wide = np.where(negative, -wide, wide)
        out = seg.sum_int(wide)
        low, high = _INT_RANGE[root]
        if root == "BIGINT" and np.abs(wide).max(initial=0) * max(seg.n, 1) >= 2**62:
            approx = np.bincount(seg.ids, weights=wide.astype(np.float64), minlength=seg.count)
            suspicious = np.flatnonzero(np.abs(approx) > 2.0**62)
            for s in suspicious.tolist():  # exact re-check of the few sums near the int64 range
                exact = sum(int(x) for x in wide[seg.starts[s]:seg.ends[s]])
                if not low <= exact <= high:
                    raise self._error(f"BIGINT overflow: the sum {exact} does not fit")
        elif has.any() and (out[has].min() < low or out[has].max() > high):
            bad = out[has][(out[has] < low) | (out[has] > high)][0]
            raise self._error(f"{root} overflow: the sum {int(bad)} does not fit")
        return from_numpy(out, has, t)


def _fit_decimal(values: pa.Array, t: pa.DataType) -> pa.Array:
    """Cast wide decimals to ``t``; values that do not fit its precision become null."""
    try:
        return values.cast(t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        limit = pa.scalar(10 ** (t.precision - t.scale), pa.decimal128(38, 0)).cast(pa.decimal128(38, t.scale))
        fits = pc.less(pc.abs(values), limit.cast(values.type))
        return pc.if_else(fits, values, pa.scalar(None, values.type)).cast(t)


class Count(Sum):
    """Counts non-null values. A written value contributes 1 (null: 0) and stored values are partial counts that
    merge by summing, so merging intermediate results again stays correct; a retraction subtracts one."""

    name = "count"
    types_doc = "INTEGER and BIGINT"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root in ("INT", "BIGINT")

    def prepare_input(self, values: pa.Array, retract: np.ndarray) -> pa.Array:
        valid = valid_mask(values)
        return pa.array(valid.astype(self.arrow_type.to_pandas_dtype()), self.arrow_type)


class Product(Aggregator):
    """Product of non-null values; a retraction divides (only when the accumulator is not null).

    Evaluated in record order exactly like Java (integer overflow is a DataError, integer division truncates,
    DECIMAL results are rounded HALF_UP to the column scale and become null beyond its precision)."""

    name = "product"
    retractable = True
    types_doc = "DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT and DOUBLE"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root in NUMERIC_ROOTS

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        return self._sequential(values, seg, retract)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        return self._sequential(values, seg, None)

    def _sequential(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        """One vectorized step per position inside a key (the number of steps is the longest key run)."""
        t = self.arrow_type
        root = self.field.type.root
        count = seg.count
        lengths = seg.lengths()
        max_len = int(lengths.max(initial=0))
        if root == "DECIMAL":
            vals = combine(values)
            acc = pa.nulls(count, t)
            is_ret_all = retract if retract is not None else np.zeros(seg.n, bool)
            for step in range(max_len):
                active = np.flatnonzero(lengths > step)
                rows = seg.starts[active] + step
                cur = take_or_null(acc, active)
                inp = vals.take(pa.array(rows))
                div = bool(is_ret_all[rows].any())
                mul = _decimal_round(pc.multiply(cur, inp), t)
                nxt = mul
                if div:
                    safe = pc.if_else(pc.equal(inp, pa.scalar(0, inp.type)), pa.scalar(None, inp.type), inp)
                    quo = _decimal_round(pc.divide(cur.cast(pa.decimal128(38, t.scale)), safe), t)
                    nxt = pc.if_else(pa.array(is_ret_all[rows]), quo, mul)
                    # retraction: null accumulator or null input keeps the accumulator
                    nxt = pc.if_else(pc.and_(pa.array(is_ret_all[rows]), pc.or_(pc.is_null(cur), pc.is_null(inp))),
                                     cur, nxt)
                # agg: a null side keeps the other
                is_agg = pa.array(~is_ret_all[rows])
                nxt = pc.if_else(pc.and_(is_agg, pc.is_null(cur)), inp, nxt)
                nxt = pc.if_else(pc.and_(is_agg, pc.is_null(inp)), cur, nxt)
                acc = _scatter_into(acc, active, nxt)
            return acc
        data, valid = to_numpy(values)
        floating = pa.types.is_floating(t)
        acc = np.zeros(count, data.dtype if floating else _I64)
        has = np.zeros(count, bool)
        low, high = _INT_RANGE.get(root, (0, 0))
        for step in range(max_len):
            active = np.flatnonzero(lengths > step)
            rows = seg.starts[active] + step
            v, ok = data[rows], valid[rows]
            cur, cur_ok = acc[active], has[active]
            is_ret = retract[rows] if retract is not None else np.zeros(len(rows), bool)
            both = ok & cur_ok
            if floating:
                with np.errstate(all="ignore"):
                    prod = cur * v
                    quo = cur / v
            else:
                v64 = v.astype(_I64)
                with np.errstate(all="ignore"):
                    prod = cur * v64
                over = both & ~is_ret & ((np.abs(cur.astype(np.float64) * v64.astype(np.float64)) > 2.0**62)
                                         | (prod < low) | (prod > high))
                for i in np.flatnonzero(over).tolist():
                    exact = int(cur[i]) * int(v64[i])
                    if not low <= exact <= high:
                        raise self._error(f"{root} overflow: {int(cur[i])} * {int(v64[i])} = {exact}")
                if (both & is_ret & (v64 == 0)).any():
                    raise self._error("a retraction divides by zero")
                safe = np.where(v64 == 0, 1, v64)
                quo = np.abs(cur) // np.abs(safe) * np.sign(cur) * np.sign(safe)  # Java's truncating division
            new = np.where(is_ret, np.where(both, quo, cur), np.where(both, prod, np.where(ok, v, cur)))
            new_has = np.where(is_ret, cur_ok, cur_ok | ok)
            acc[active] = new
            has[active] = new_has
        return from_numpy(acc, has, t)


def _decimal_round(values: pa.Array, t: pa.DataType) -> pa.Array:
    rounded = pc.round(values, ndigits=t.scale, round_mode="half_up")
    return _fit_decimal(rounded.cast(pa.decimal128(38, t.scale), safe=False), t)


def _scatter_into(acc: pa.Array, positions: np.ndarray, new: pa.Array) -> pa.Array:
    """``acc`` with ``acc[positions] = new``."""
    idx = np.arange(len(acc), dtype=_I64)
    src = np.zeros(len(acc), bool)
    src[positions] = True
    combined = pa.concat_arrays([combine(acc), combine(new).cast(acc.type)])
    take = np.where(src, 0, idx)
    take[positions] = len(acc) + np.arange(len(positions), dtype=_I64)
    return combined.take(pa.array(take))


# ---------------------------------------------------------------------------------------------------- strings

def _blank(values: pa.Array) -> np.ndarray:
    """Java's ``StringUtils.isBlank``: null, empty or only whitespace."""
    arr = combine(values)
    empty = pc.equal(pc.utf8_length(arr), 0)
    space = pc.utf8_is_space(arr)
    blank = pc.fill_null(pc.or_(empty, space), True)
    return np.asarray(blank.to_numpy(zero_copy_only=False), bool)


class ListAgg(Aggregator):
    """Joins non-blank strings with ``list-agg-delimiter``; ``distinct`` skips tokens seen already."""

    single_identity = False

    name = "listagg"
    types_doc = "STRING"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "VARCHAR" and t.length == MAX_LENGTH

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals = combine(values).cast(pa.string())
        keep = ~_blank(vals)
        has = seg.any(keep)
        rows = np.flatnonzero(keep)
        kept = vals.take(pa.array(rows))
        kept_seg = seg.ids[rows]
        delim = self.options.delimiter
        if not self.options.distinct:
            lists = _list_from(kept, kept_seg, has, pa.list_(pa.string()))
            return pc.binary_join(lists, delim).cast(self.arrow_type)
        # distinct: the first string goes in whole; later ones add their non-blank tokens not seen yet
        first_of_seg = np.zeros(len(rows), bool)
        if len(rows):
            first_of_seg[0] = True
            first_of_seg[1:] = kept_seg[1:] != kept_seg[:-1]
        tokens = pc.split_pattern(kept, delim) if delim else pc.utf8_split_whitespace(kept)
        child, parent = _explode(tokens)
        flat = combine(tokens).values.take(pa.array(child))
        tok_seg = kept_seg[parent]
        tok_first = first_of_seg[parent]
        candidate = tok_first | ~_blank(flat)
        cand = np.flatnonzero(candidate)
        gid, ngroups = group_ids([pa.array(tok_seg[cand]), flat.take(pa.array(cand))])
        first_pos = first_per_group(gid, ngroups, np.arange(len(cand), dtype=_I64))
        is_first_occ = first_pos[gid] == np.arange(len(cand), dtype=_I64)
        later = cand[is_first_occ & ~tok_first[cand]]
        # pieces: the first string of each segment, then the added tokens, in order
        piece_seg = np.concatenate([kept_seg[first_of_seg], tok_seg[later]])
        piece_ord = np.concatenate([np.flatnonzero(first_of_seg) * 0 - 1, later])
        order = np.lexsort((piece_ord, piece_seg))
        n_first = int(first_of_seg.sum())
        firsts = kept.take(pa.array(np.flatnonzero(first_of_seg)))
        all_pieces = pa.concat_arrays([firsts, flat.take(pa.array(later)).cast(pa.string())])
        src = np.concatenate([np.arange(n_first, dtype=_I64), n_first + np.arange(len(later), dtype=_I64)])
        pieces = all_pieces.take(pa.array(src[order]))
        lists = _list_from(pieces, piece_seg[order], has, pa.list_(pa.string()))
        return pc.binary_join(lists, delim).cast(self.arrow_type)


# ---------------------------------------------------------------------------------------------------- bitmaps, sketches

class _ObjectUnion(Aggregator):
    """Union of serialized objects (bitmaps, sketches): a key with one non-null value keeps its bytes as they are;
    keys with several are unioned (one library call per such key: these libraries have no batch API)."""

    types_doc = "VARBINARY"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "VARBINARY"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        valid = valid_mask(values)
        counts = seg.count_where(valid)
        result = take_or_null(values, seg.last_where(valid))
        multi = np.flatnonzero(counts > 1)
        if not len(multi):
            return result
        vals = combine(values)
        out = result.to_pylist()
        for s in multi.tolist():
            rows = np.flatnonzero(valid[seg.starts[s]:seg.ends[s]]) + seg.starts[s]
            items = [vals[int(r)].as_py() for r in rows]
            try:
                out[s] = self.union(items)
            except (ValueError, RuntimeError, TypeError) as e:
                raise self._error(f"cannot deserialize or union the stored values: {e}") from None
        return pa.array(out, self.arrow_type)

    def union(self, items: list[bytes]) -> bytes:
        raise NotImplementedError


class RoaringBitmap32(_ObjectUnion):
    """OR of serialized 32-bit roaring bitmaps (portable format, as Java's RoaringBitmap writes it)."""

    name = "rbm32"

    def union(self, items: list[bytes]) -> bytes:
        from pyroaring import BitMap

        out = BitMap.union(*[BitMap.deserialize(b) for b in items])
        out.run_optimize()
        return bytes(out.serialize())


class RoaringBitmap64(_ObjectUnion):
    """OR of serialized 64-bit roaring bitmaps (the 64-bit portable format of pyroaring's ``BitMap64``)."""

    name = "rbm64"

    def union(self, items: list[bytes]) -> bytes:
        from pyroaring import BitMap64

        out = BitMap64.union(*[BitMap64.deserialize(b) for b in items])
        out.run_optimize()
        return bytes(out.serialize())


class HllSketch(_ObjectUnion):
    """Union of serialized Apache DataSketches HLL sketches (result: HLL_4, compact, lgK = the smallest lgK)."""

    name = "hll_sketch"

    def union(self, items: list[bytes]) -> bytes:
        ds = _datasketches()
        sketches = [ds.hll_sketch.deserialize(b) for b in items]
        union = ds.hll_union(min(s.lg_config_k for s in sketches))
        for s in sketches:
            union.update(s)
        return bytes(union.get_result(ds.tgt_hll_type.HLL_4).serialize_compact())


class ThetaSketch(_ObjectUnion):
    """Union of serialized Apache DataSketches theta sketches (default union, ordered compact result)."""

    name = "theta_sketch"

    def union(self, items: list[bytes]) -> bytes:
        ds = _datasketches()
        union = ds.theta_union()
        for b in items:
            union.update(ds.compact_theta_sketch.deserialize(b))
        return bytes(union.get_result().serialize())


def _datasketches() -> Any:
    try:
        import datasketches
    except ImportError:  # pragma: no cover - a declared dependency
        raise UnsupportedError("hll_sketch / theta_sketch need the 'datasketches' package (pip install "
                               "datasketches)") from None
    return datasketches


# ---------------------------------------------------------------------------------------------------- nested types

@dataclass
class _Elements:
    """The elements of the list/map values of folded rows, with their row's segment and order."""

    seg: np.ndarray        # segment of each element
    order: np.ndarray      # global order of each element (row order, then position in the list)
    retract: np.ndarray    # element comes from a retraction
    child: np.ndarray      # index into the child array(s)


def _elements(values: pa.Array, seg: Segments, retract: np.ndarray | None) -> _Elements:
    child, parent = _explode(values)
    ret = retract[parent] if retract is not None else np.zeros(len(parent), bool)
    return _Elements(seg.ids[parent], np.arange(len(parent), dtype=_I64), ret, child)


def _has_add_value(values: pa.Array, seg: Segments, retract: np.ndarray | None) -> np.ndarray:
    valid = valid_mask(values)
    if retract is not None:
        valid &= ~retract
    return seg.any(valid)


class Collect(Aggregator):
    """Collects array elements (``distinct``: once each). A retraction removes one matching element per retracted
    element (the earliest present ones), only from a non-null accumulator."""

    single_identity = False

    name = "collect"
    retractable = True
    types_doc = "ARRAY"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "ARRAY"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals = combine(values)
        has = _has_add_value(vals, seg, retract)
        items = vals.values
        plain = retract is None or not retract.any()
        if plain and not self.options.distinct:
            e = _elements(vals, seg, None)
            return _list_from(items.take(pa.array(e.child)), e.seg, has, self.arrow_type)
        e = _elements(vals, seg, retract)
        if len(e.seg) == 0:
            return _list_from(items.slice(0, 0), e.seg, has, self.arrow_type)
        elem_vals = items.take(pa.array(e.child))
        gid, ngroups = group_ids([pa.array(e.seg), elem_vals])
        keep = _surviving_elements(gid, ngroups, e.order, e.retract, self.options.distinct)
        return _list_from(elem_vals.take(pa.array(keep)), e.seg[keep], has, self.arrow_type)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        vals = combine(values)
        e = _elements(vals, seg, None)
        return _list_from(vals.values.take(pa.array(e.child)), e.seg, seg.any(valid_mask(vals)), self.arrow_type)


def _surviving_elements(gid: np.ndarray, ngroups: int, order: np.ndarray, retract: np.ndarray, distinct: bool
                        ) -> np.ndarray:
    """Indices (ascending order) of the added elements still present after adds and retractions in ``order``.

    Per group of equal elements of a key the adds and retractions form a queue: a retraction removes the earliest
    present element. Without ``distinct`` the count present is a running sum clamped at zero and the survivors are
    the latest adds; with ``distinct`` an element is present when its last operation is an add, positioned at the
    first add after its last retraction.
    """
    n = len(gid)
    idx = np.lexsort((order, gid))
    g = gid[idx]
    ret = retract[idx]
    if distinct:
        last_ret = np.full(ngroups, -1, _I64)
        rpos = np.flatnonzero(ret)
        np.maximum.at(last_ret, g[rpos], rpos)
        after = (~ret) & (np.arange(n, dtype=_I64) > last_ret[g])
        first_after = np.full(ngroups, n, _I64)
        apos = np.flatnonzero(after)
        np.minimum.at(first_after, g[apos], apos)
        chosen = first_after[first_after < n]
        return np.sort(idx[chosen])
    delta = np.where(ret, -1, 1).astype(_I64)
    gseg = Segments.from_ids(g, ngroups)
    csum = np.cumsum(delta)
    offset = np.where(gseg.starts < n, csum[np.minimum(gseg.starts, n - 1)] - delta[np.minimum(gseg.starts, n - 1)],
                      0)
    s = csum - offset[g]                               # running sum inside the group
    min_prefix = np.minimum(gseg._reduce(np.minimum, s, 0), 0)
    final = gseg._reduce(np.add, delta, 0) - min_prefix  # clamped running count at the end
    adds = ~ret
    add_rank_from_end = _rank_from_end(g, adds, ngroups)
    survive = adds & (add_rank_from_end < final[g])
    return np.sort(idx[survive])


def _rank_from_end(g: np.ndarray, mask: np.ndarray, ngroups: int) -> np.ndarray:
    """For rows where ``mask`` holds: how many later masked rows of the same group follow (0 = the last one)."""
    m = mask.astype(_I64)
    total = np.bincount(g, weights=m, minlength=ngroups).astype(_I64)
    csum = np.cumsum(m)
    start_c = np.zeros(ngroups, _I64)
    first_idx = np.searchsorted(g, np.arange(ngroups))
    valid_first = first_idx < len(g)
    start_c[valid_first] = csum[first_idx[valid_first]] - m[first_idx[valid_first]]
    rank_from_start = csum - start_c[g] - 1
    return np.asarray(total[g] - 1 - rank_from_start, _I64)


class MergeMap(Aggregator):
    """Merges maps (a later value of a key wins); a retraction removes its keys from a non-null accumulator.
    Keys keep the order of their (last) insertion."""

    single_identity = False

    name = "merge_map"
    retractable = True
    types_doc = "MAP"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "MAP"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals = combine(values)
        has = _has_add_value(vals, seg, retract)
        e = _elements(vals, seg, retract)
        keys, items = vals.keys, vals.items
        if len(e.seg) == 0:
            return self._map(keys.slice(0, 0), items.slice(0, 0), e.seg, has)
        elem_keys = keys.take(pa.array(e.child))
        gid, ngroups = group_ids([pa.array(e.seg), elem_keys])
        n = len(gid)
        pos = np.arange(n, dtype=_I64)
        last_ret = last_per_group(gid, ngroups, np.where(e.retract, pos, -1))
        live = ~e.retract & (pos > last_ret[gid])
        first_live = first_per_group(gid, ngroups, np.where(live, pos, n))
        last_live = last_per_group(gid, ngroups, np.where(live, pos, -1))
        present = np.flatnonzero(last_live >= 0)
        order = np.argsort(first_live[present], kind="stable")
        at = first_live[present][order]       # position of the key
        value_from = last_live[present][order]  # its latest value
        return self._map(elem_keys.take(pa.array(at)), items.take(pa.array(e.child[value_from])), e.seg[at], has)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        return self.fold(values, seg, None)

    def _map(self, keys: pa.Array, items: pa.Array, elem_seg: np.ndarray, has: np.ndarray) -> pa.Array:
        count = len(has)
        counts = np.bincount(elem_seg, minlength=count) if len(elem_seg) else np.zeros(count, _I64)
        offsets = np.concatenate([np.zeros(1, _I64), np.cumsum(counts)]).astype(np.int32)
        mask = pa.array(~has) if not has.all() else None
        return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), keys, items, type=self.arrow_type, mask=mask)


class NestedUpdate(Aggregator):
    """Collects rows into an ``ARRAY<ROW>`` "nested table".

    With ``nested-key``: a later row replaces the row of the same key (with ``nested-sequence-field`` only when its
    sequence is not smaller), a retraction removes the key's row; rows keep the order of their key's insertion.
    Without a key rows are appended and a retraction removes every equal row. ``count-limit`` caps the rows
    (new keys beyond it are dropped); ``nested-key-null-strategy``: merge (a key with nulls is an ordinary key),
    ignore (rows whose key has a null are skipped) or error."""

    name = "nested_update"
    retractable = True
    single_identity = False
    types_doc = "ARRAY<ROW>"

    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return t.root == "ARRAY" and t.element is not None and t.element.root == "ROW"

    @classmethod
    def check_type(cls, field: DataField, options: FieldOptions) -> None:
        super().check_type(field, options)
        assert field.type.element is not None
        names = [f.name for f in field.type.element.fields]
        for opt, cols in (("nested-key", options.nested_key), ("nested-sequence-field",
                                                               options.nested_sequence_field)):
            for c in cols:
                if c not in names:
                    raise SchemaError(f"column {field.name!r}: fields.{field.name}.{opt} names {c!r}, which is "
                                      f"not a field of its rows {names}")
        if options.nested_sequence_field and not options.nested_key:
            raise SchemaError(f"column {field.name!r}: fields.{field.name}.nested-sequence-field needs "
                              f"fields.{field.name}.nested-key")
        if options.count_limit <= 0:
            raise SchemaError(f"column {field.name!r}: fields.{field.name}.count-limit must be positive")

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        vals = combine(values)
        has = _has_add_value(vals, seg, retract)
        e = _elements(vals, seg, retract)
        rows = vals.values
        if len(e.seg):
            row_ok = valid_mask(rows.take(pa.array(e.child)))  # null rows are skipped
            if not row_ok.all():
                e = _Elements(e.seg[row_ok], e.order[row_ok], e.retract[row_ok], e.child[row_ok])
        if len(e.seg) == 0:
            return _list_from(rows.slice(0, 0), e.seg, has, self.arrow_type)
        elem_rows = rows.take(pa.array(e.child))
        key = self.options.nested_key
        n = len(e.seg)
        pos = np.arange(n, dtype=_I64)
        if key:
            key_cols = [pc.struct_field(elem_rows, [self._index(k)]) for k in key]
            any_null = np.zeros(n, bool)
            for kc in key_cols:
                any_null |= ~valid_mask(kc)
            if any_null.any():
                strategy = self.options.nested_key_null_strategy
                if strategy == "error":
                    raise self._error("a nested key has a null value (nested-key-null-strategy = error)")
                if strategy == "ignore":
                    ok = ~any_null
                    e = _Elements(e.seg[ok], e.order[ok], e.retract[ok], e.child[ok])
                    elem_rows = elem_rows.filter(pa.array(ok))
                    key_cols = [kc.filter(pa.array(ok)) for kc in key_cols]
                    n = len(e.seg)
                    pos = np.arange(n, dtype=_I64)
            gid, ngroups = group_ids([pa.array(e.seg), *key_cols])
            last_ret = last_per_group(gid, ngroups, np.where(e.retract, pos, -1))
            live = ~e.retract & (pos > last_ret[gid])
            first_live = first_per_group(gid, ngroups, np.where(live, pos, n))
            if self.options.nested_sequence_field:
                seq = [pc.struct_field(elem_rows, [self._index(s)]) for s in self.options.nested_sequence_field]
                from table_engine.lsm.merge_engines.segments import dense_ranks

                rank = np.where(live, dense_ranks(seq), -1)
                best = np.full(ngroups, -1, _I64)
                np.maximum.at(best, gid, rank)
                winner = live & (rank == best[gid])
                value_from = last_per_group(gid, ngroups, np.where(winner, pos, -1))
            else:
                value_from = last_per_group(gid, ngroups, np.where(live, pos, -1))
            present = np.flatnonzero(value_from >= 0)
            order = np.argsort(first_live[present], kind="stable")
            at = first_live[present][order]
            src = value_from[present][order]
            out_seg = e.seg[at]
        else:
            gid, ngroups = group_ids([pa.array(e.seg), elem_rows])
            last_ret = last_per_group(gid, ngroups, np.where(e.retract, pos, -1))
            src = np.flatnonzero(~e.retract & (pos > last_ret[gid]))
            out_seg = e.seg[src]
        limit = self.options.count_limit
        if limit < 2**31 - 1 and len(src):
            rank = np.arange(len(src), dtype=_I64) - np.searchsorted(out_seg, out_seg)
            ok = rank < limit
            src, out_seg = src[ok], out_seg[ok]
        return _list_from(elem_rows.take(pa.array(src)), out_seg, has, self.arrow_type)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        vals = combine(values)
        e = _elements(vals, seg, None)
        return _list_from(vals.values.take(pa.array(e.child)), e.seg, seg.any(valid_mask(vals)), self.arrow_type)

    def _index(self, name: str) -> int:
        assert self.field.type.element is not None
        return [f.name for f in self.field.type.element.fields].index(name)


# ---------------------------------------------------------------------------------------------------- registry

AGGREGATORS: dict[str, type[Aggregator]] = {
    cls.name: cls
    for cls in (Sum, Product, Count, Max, Min, LastValue, LastNonNullValue, ListAgg, BoolAnd, BoolOr, FirstValue,
                FirstNonNullValue, RoaringBitmap32, RoaringBitmap64, NestedUpdate, Collect, MergeMap, HllSketch,
                ThetaSketch)
}
#: legacy / alternative spellings
ALIASES = {"first_not_null_value": "first_non_null_value"}
DEFAULT_FUNCTION = "last_non_null_value"


def aggregator_class(function: str, where: str) -> type[Aggregator]:
    """The aggregator of a function name; an unknown name is a SchemaError naming ``where`` (the option key)."""
    name = ALIASES.get(function.strip(), function.strip())
    cls = AGGREGATORS.get(name)
    if cls is None:
        raise SchemaError(f"{where}: unsupported aggregate function {function!r}; supported functions are "
                          f"{sorted(AGGREGATORS) + sorted(ALIASES)}")
    return cls

