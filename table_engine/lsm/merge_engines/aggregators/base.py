"""The aggregator interface, per-field options, type groups and the numpy/Arrow helpers all aggregators share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import DataError, SchemaError
from table_engine.lsm.merge_engines.segments import (
    Segments,
    combine,
    take_or_null,
    valid_mask,
)
from table_engine.types import DataField, DataType, to_arrow_type

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
    #: the type roots the function accepts (None: every type)
    roots: ClassVar[frozenset[str] | None] = None

    def __init__(self, field: DataField, options: FieldOptions) -> None:
        self.field = field
        self.options = options
        self.arrow_type = to_arrow_type(field.type)

    # ---- type rules ---------------------------------------------------------------------------------------------
    @classmethod
    def accepts(cls, t: DataType, options: FieldOptions) -> bool:
        return cls.roots is None or t.root in cls.roots

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
    """Whether values of Arrow type ``t`` round-trip through :func:`to_numpy` / :func:`from_numpy`."""
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
    """The Arrow array of type ``t`` from numpy ``data`` and ``valid`` (the inverse of :func:`to_numpy`)."""
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
    offsets, mask = _offsets_and_mask(elem_seg, has_value)
    return pa.ListArray.from_arrays(offsets, values, type=t, mask=mask)


def _offsets_and_mask(elem_seg: np.ndarray, has_value: np.ndarray) -> tuple[pa.Array, pa.Array | None]:
    """The int32 offsets of ``len(has_value)`` list/map rows holding the elements of (non-decreasing) row ids
    ``elem_seg``, and the null mask of the rows without a value (None: none)."""
    count = len(has_value)
    counts = np.bincount(elem_seg, minlength=count) if len(elem_seg) else np.zeros(count, _I64)
    offsets = np.concatenate([np.zeros(1, _I64), np.cumsum(counts)]).astype(np.int32)
    mask = pa.array(~has_value) if not has_value.all() else None
    return pa.array(offsets, pa.int32()), mask


# ---------------------------------------------------------------------------------------------------- simple values

