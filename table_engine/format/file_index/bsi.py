"""Paimon's ``bsi`` file index (``BitSliceIndexBitmapFileIndex`` over ``BitSliceIndexRoaringBitmap``): a bit-sliced
index of a numeric column's internal ``long`` values, answering ``=``, ``!=``, ``IN``, ``NOT IN``, ``<``, ``<=``,
``>``, ``>=``, ``IS NULL`` and ``IS NOT NULL`` with exact row bitmaps.

Layout (big-endian)::

    version (1 byte, 1) | row count (4 bytes int)
    has positive value (1 byte) | positive BSI (if any)
    has negative value (1 byte) | negative BSI (if any; of the absolute values)

    BSI: version (1 byte, 1) | min (8 bytes long) | max (8 bytes long) | existence bitmap
         bit slice count (4 bytes int) | bitmap of bit 0 | bitmap of bit 1 | ...

Slice ``i`` holds the rows whose ``value - min`` has bit ``i`` set. Paimon's writer collects ``min`` starting from
0, so ``min`` is always 0 in practice; reading handles any ``min``. Supported types: TINYINT, SMALLINT, INT, BIGINT,
DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ and DECIMAL up to precision 18 (the unscaled value).
``Long.MIN_VALUE`` cannot be stored (Java's writer fails on it): such a column gets no BSI index.
"""

from __future__ import annotations

import struct

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from table_engine.errors import CorruptMetadataError
from table_engine.format.file_index.roaring import bitmap_of, deserialize_at, serialize
from table_engine.format.file_index.values import INTEGRAL_KINDS, ColumnValues, value_kind
from table_engine.types import DataType

__all__ = ["BSI", "BsiIndexReader", "BitSliceIndex", "bsi_supported", "build_bsi"]

BSI = "bsi"
VERSION_1 = 1
LONG_MIN = -(2**63)


def bsi_supported(t: DataType) -> str | None:
    """Why a BSI index cannot index a column of type ``t``, or None if it can."""
    kind = value_kind(t)
    if kind not in INTEGRAL_KINDS:
        return f"bsi does not support type {t.sql()}"
    if t.root == "DECIMAL" and (t.precision or 0) > 18:
        return f"bsi supports DECIMAL up to precision 18 (unscaled long values), not {t.sql()}"
    return None


def _serialize_slices(min_value: int, max_value: int, rows: npt.NDArray[np.int64],
                      values: npt.NDArray[np.int64]) -> bytes:
    """``BitSliceIndexRoaringBitmap.Appender.serialize`` of ``values`` (>= 0) at ``rows``."""
    n_slices = int(max_value - min_value).bit_length()
    shifted = (values - min_value).astype(np.uint64)
    out = bytearray(struct.pack(">bqq", VERSION_1, min_value, max_value))
    out += serialize(bitmap_of(rows))
    out += struct.pack(">i", n_slices)
    for i in range(n_slices):
        bit = ((shifted >> np.uint64(i)) & np.uint64(1)).astype(np.bool_)
        out += serialize(bitmap_of(rows[bit]))
    return bytes(out)


def build_bsi(values: ColumnValues) -> bytes | None:
    """Serialize the BSI of a column as Paimon's writer does (None when a value is ``Long.MIN_VALUE``)."""
    assert values.ints is not None
    rows = np.flatnonzero(values.valid).astype(np.int64)
    v = values.ints[rows]
    if len(v) and int(v.min()) == LONG_MIN:
        return None
    pos = v >= 0
    out = bytearray(struct.pack(">bi", VERSION_1, len(values)))
    for side_rows, side_values in ((rows[pos], v[pos]), (rows[~pos], -v[~pos])):
        out += struct.pack(">b", len(side_rows) > 0)
        if len(side_rows):
            # the Java collector starts min and max at 0: min stays 0, max is max(0, values)
            out += _serialize_slices(0, max(0, int(side_values.max())), side_rows, side_values)
    return bytes(out)


class BitSliceIndex:
    """One side (non-negative or negated negative values) of a BSI: min, max, existence bitmap and slices."""

    def __init__(self, min_value: int, max_value: int, ebm: BitMap, slices: list[BitMap]) -> None:
        self.min = min_value
        self.max = max_value
        self.ebm = ebm
        self.slices = slices

    @staticmethod
    def empty() -> BitSliceIndex:
        return BitSliceIndex(0, 0, BitMap(), [])

    @staticmethod
    def parse(data: bytes, pos: int) -> tuple[BitSliceIndex, int]:
        version = data[pos]
        if version > VERSION_1:
            raise CorruptMetadataError(f"bsi bitmap version {version} is not supported")
        min_value, max_value = struct.unpack_from(">qq", data, pos + 1)
        ebm, p = deserialize_at(data, pos + 17)
        (n,) = struct.unpack_from(">i", data, p)
        p += 4
        slices = []
        for _ in range(n):
            bm, p = deserialize_at(data, p)
            slices.append(bm)
        return BitSliceIndex(min_value, max_value, ebm, slices), p

    def compare(self, op: str, value: int) -> BitMap:
        """Rows whose value satisfies ``row <op> value`` (op one of =, <, <=, >, >=)."""
        lo, hi = self.min, self.max
        if op == "=":
            if value < lo or value > hi:
                return BitMap()
            if lo == hi:
                return BitMap(self.ebm)
        elif op in (">=", ">"):
            if value < lo or (op == ">=" and value == lo):
                return BitMap(self.ebm)
            if value > hi or (op == ">" and value == hi):
                return BitMap()
        else:  # < and <=
            if value > hi or (op == "<=" and value == hi):
                return BitMap(self.ebm)
            if value < lo or (op == "<" and value == lo):
                return BitMap()
        return self._oneil(op, value - lo)

    def _oneil(self, op: str, predicate: int) -> BitMap:
        """O'Neil's bit-sliced comparison."""
        gt, lt, eq = BitMap(), BitMap(), BitMap(self.ebm)
        for i in range(len(self.slices) - 1, -1, -1):
            s = self.slices[i]
            if (predicate >> i) & 1:
                lt |= eq - s
                eq &= s
            else:
                gt |= eq & s
                eq -= s
        if predicate >> len(self.slices):  # predicate above every representable value
            lt |= eq
            eq = BitMap()
        if op == "=":
            return eq
        if op == "<":
            return lt
        if op == "<=":
            return lt | eq
        if op == ">":
            return gt
        return gt | eq


class BsiIndexReader:
    """Row bitmaps of comparisons, from a BSI index."""

    def __init__(self, data: bytes) -> None:
        try:
            version = data[0]
            if version > VERSION_1:
                raise CorruptMetadataError(f"bsi file index version {version} is not supported")
            (self.row_count,) = struct.unpack_from(">i", data, 1)
            pos = 5
            self.positive = self.negative = BitSliceIndex.empty()
            if data[pos]:
                self.positive, pos = BitSliceIndex.parse(data, pos + 1)
            else:
                pos += 1
            if data[pos]:
                self.negative, pos = BitSliceIndex.parse(data, pos + 1)
        except (struct.error, IndexError) as e:
            raise CorruptMetadataError(f"cannot parse bsi file index: {e}") from e

    def non_null_rows(self) -> BitMap:
        return self.positive.ebm | self.negative.ebm

    def all_rows(self) -> BitMap:
        bm = BitMap()
        if self.row_count:
            bm.add_range(0, self.row_count)
        return bm

    def compare(self, op: str, value: int) -> BitMap:
        """Rows with ``row <op> value`` for op in =, <, <=, >, >= (signed ``long`` values)."""
        if value == LONG_MIN:
            if op in ("=", "<"):
                return BitMap()
            if op == "<=":
                return BitMap()
            return self.non_null_rows()
        pos, neg = self.positive, self.negative
        if op == "=":
            return neg.compare("=", -value) if value < 0 else pos.compare("=", value)
        if op == "<":
            return neg.compare(">", -value) if value < 0 else pos.compare("<", value) | neg.ebm
        if op == "<=":
            return neg.compare(">=", -value) if value < 0 else pos.compare("<=", value) | neg.ebm
        if op == ">":
            return pos.ebm | neg.compare("<", -value) if value < 0 else pos.compare(">", value)
        if op == ">=":
            return pos.ebm | neg.compare("<=", -value) if value < 0 else pos.compare(">=", value)
        raise ValueError(f"unsupported comparison {op!r}")
