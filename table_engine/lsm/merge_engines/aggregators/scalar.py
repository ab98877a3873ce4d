"""Scalar aggregators: first/last values, min/max, bool_and/bool_or, sum, count and product."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.lsm.merge_engines.aggregators.base import (
    _INT_RANGE,
    COMPARABLE_ROOTS,
    NUMERIC_ROOTS,
    Aggregator,
    _grouped,
    from_numpy,
    is_numpy_friendly,
    to_numpy,
)
from table_engine.lsm.merge_engines.segments import (
    Segments,
    combine,
    take_or_null,
    valid_mask,
)

_I64 = np.int64

class _Last(Aggregator):
    """The latest value (``non_null``: the latest non-null one); when that record is a retraction, null. The combined
    retraction of several is the latest one."""

    retractable = True
    non_null: ClassVar[bool] = False

    def _latest(self, values: pa.Array, seg: Segments) -> np.ndarray:
        return seg.last_where(valid_mask(values) if self.non_null else np.ones(seg.n, bool))

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        idx = self._latest(values, seg)
        if retract is not None and retract.any():
            idx = np.where((idx >= 0) & retract[np.maximum(idx, 0)], -1, idx)
        return take_or_null(values, idx)

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        return take_or_null(values, self._latest(values, seg))


class LastValue(_Last):
    """Latest value (null included); a retraction sets null."""

    name = "last_value"


class LastNonNullValue(_Last):
    """Latest non-null value; a retraction of a non-null value sets null."""

    name = "last_non_null_value"
    non_null = True


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
    roots = COMPARABLE_ROOTS
    is_max: ClassVar[bool] = True

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
    """``max``: the largest non-null value."""

    name = "max"


class Min(_MinMax):
    """``min``: the smallest non-null value."""

    name = "min"
    is_max = False


class _Bool(Aggregator):
    types_doc = "BOOLEAN"
    roots = frozenset({"BOOLEAN"})
    is_and: ClassVar[bool] = True

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        data, valid = to_numpy(values, fill=False)
        data = data.astype(bool)
        if self.is_and:
            out = ~seg.any(valid & ~data)
        else:
            out = seg.any(valid & data)
        return from_numpy(out, seg.any(valid), pa.bool_())


class BoolAnd(_Bool):
    """``bool_and``: the logical AND of the non-null values."""

    name = "bool_and"


class BoolOr(_Bool):
    """``bool_or``: the logical OR of the non-null values."""

    name = "bool_or"
    is_and = False


# ---------------------------------------------------------------------------------------------------- arithmetic

class _Arithmetic(Aggregator):
    """``sum`` and ``product``: numeric and retractable; the combined retraction of several is their fold as adds
    (the total to subtract, the product to divide by)."""

    retractable = True
    types_doc = "DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT and DOUBLE"
    roots = NUMERIC_ROOTS

    def combine_retracts(self, values: pa.Array, seg: Segments) -> pa.Array:
        return self.fold(values, seg, None)


class Sum(_Arithmetic):
    """Sum of non-null values; a retraction subtracts. Integer overflow is a DataError (Java's exact arithmetic);
    a DECIMAL sum that does not fit the column's precision becomes null (Java's ``Decimal.fromBigDecimal``)."""

    name = "sum"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
        t = self.arrow_type
        root = self.field.type.root
        if root == "DECIMAL":
            vals = combine(values)
            if retract is not None and retract.any():
                vals = pc.if_else(pa.array(retract), pc.negate(vals), vals)
            total = _grouped(vals, seg, "sum")
            return _fit_decimal(total, t)
        data, valid = to_numpy(values)
        has = seg.any(valid)
        if pa.types.is_floating(t):
            if retract is not None:
                data = np.where(retract, -data, data)
            if data.dtype == np.float64:  # bincount adds each key's values in order, as Java does
                total = np.bincount(seg.ids, weights=data, minlength=seg.count)
            else:
                total = seg._reduce(np.add, data, 0).astype(data.dtype)
            return from_numpy(total, has, t)
        wide = data.astype(_I64)
        if retract is not None:
            wide = np.where(retract, -wide, wide)
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
    roots = frozenset({"INT", "BIGINT"})

    def prepare_input(self, values: pa.Array, retract: np.ndarray) -> pa.Array:
        valid = valid_mask(values)
        return pa.array(valid.astype(self.arrow_type.to_pandas_dtype()), self.arrow_type)


class Product(_Arithmetic):
    """Product of non-null values; a retraction divides (only when the accumulator is not null).

    Evaluated in record order exactly like Java (integer overflow is a DataError, integer division truncates,
    DECIMAL results are rounded HALF_UP to the column scale and become null beyond its precision)."""

    name = "product"

    def fold(self, values: pa.Array, seg: Segments, retract: np.ndarray | None) -> pa.Array:
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

