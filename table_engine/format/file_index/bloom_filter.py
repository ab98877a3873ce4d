"""Paimon's ``bloom-filter`` file index (``BloomFilterFileIndex`` over ``BloomFilter64``).

Serialized form: number of hash functions (4 bytes int, big-endian) followed by the bit set bytes (bit ``i`` is bit
``i & 7`` of byte ``i >> 3``). Sizing (``BloomFilter64(items, fpp)``): ``nb = (int) (-items * ln(fpp) / ln(2)^2)``,
``numBits = nb + 8 - nb % 8``, ``k = max(1, round(numBits / items * ln 2))``. Each value's 64-bit hash
(:func:`value_hashes`) is split into ``h1 = (int) hash`` and ``h2 = (int) (hash >>> 32)``; probe ``i`` (1..k) sets
bit ``c % numBits`` of ``c = h1 + i * h2`` (int arithmetic, ``~c`` when negative).

Value hashes (``FastHash``): XXH64 of the bytes for CHAR/VARCHAR/BINARY/VARBINARY, Thomas Wang's long hash of the
internal value for integral types, DATE, TIME, TIMESTAMP, and of ``floatToIntBits`` / ``doubleToLongBits`` for
FLOAT/DOUBLE. BOOLEAN, DECIMAL and complex types are not supported. Options: ``items`` (default 1000000) and
``fpp`` (default 0.1). The index answers ``=`` and ``IN`` only.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from table_engine.errors import CorruptMetadataError, OptionError
from table_engine.format.file_index.java_compat import thomas_wang_hash, xxh64
from table_engine.format.file_index.values import (
    BINARY,
    BOOLEAN,
    DECIMAL,
    DOUBLE,
    FLOAT,
    STRING,
    ColumnValues,
    Literal,
    value_kind,
)
from table_engine.types import DataType

__all__ = ["BLOOM_FILTER", "DEFAULT_FPP", "DEFAULT_ITEMS", "BloomFilter64", "bloom_supported", "value_hashes"]

BLOOM_FILTER = "bloom-filter"
DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
_UNSUPPORTED = frozenset({BOOLEAN, DECIMAL})


def bloom_supported(t: DataType) -> str | None:
    """None when a bloom filter can index type ``t``, else the reason it cannot."""
    kind = value_kind(t)
    if kind is None or kind in _UNSUPPORTED:
        return f"bloom-filter does not support type {t.sql()}"
    return None


def bloom_options(props: Mapping[str, str]) -> tuple[int, float]:
    """(items, fpp) from the per-column options ``items`` and ``fpp``."""
    try:
        items = int(props.get("items", DEFAULT_ITEMS))
        fpp = float(props.get("fpp", DEFAULT_FPP))
    except ValueError as e:
        raise OptionError(f"bloom-filter options {dict(props)} do not parse: {e}") from None
    if items <= 0:
        raise OptionError(f"bloom-filter items must be positive, got {items}")
    if not 0.0 < fpp < 1.0:
        raise OptionError(f"bloom-filter fpp must be in (0, 1), got {fpp}")
    return items, fpp


def value_hashes(values: ColumnValues) -> npt.NDArray[np.int64]:
    """The 64-bit ``FastHash`` of every row (nulls hash to garbage: mask them with ``values.valid``)."""
    if values.kind in (STRING, BINARY):
        assert values.starts is not None and values.lengths is not None and values.data is not None
        return xxh64(values.starts, values.lengths, values.data).view(np.int64)
    assert values.ints is not None
    ints = values.ints
    if values.kind == FLOAT:  # floatToIntBits, widened to long
        ints = ints.astype(np.int64).astype(np.uint32).view(np.int32).astype(np.int64)
    return thomas_wang_hash(ints)


def literal_hash(lit: Literal, kind: str) -> int:
    if kind in (STRING, BINARY):
        assert isinstance(lit.value, bytes)
        data = np.frombuffer(lit.value, np.uint8)
        return int(xxh64(np.zeros(1, np.int64), np.array([len(data)], np.int64), data).view(np.int64)[0])
    assert isinstance(lit.value, int)
    v = lit.value
    if kind == FLOAT:
        v = v - (1 << 32) if v & 0x80000000 else v
    elif kind == DOUBLE:
        v = v - (1 << 64) if v >= 1 << 63 else v
    return int(thomas_wang_hash(np.array([v], np.int64))[0])


class BloomFilter64:
    """A bloom filter over 64-bit hashes, bit-compatible with Paimon's ``BloomFilter64``."""

    def __init__(self, num_hash_functions: int, bits: npt.NDArray[np.uint8]) -> None:
        if len(bits) == 0:
            raise ValueError("a bloom filter needs at least one byte of bits")
        self.num_hash_functions = num_hash_functions
        self.bits = bits
        self.num_bits = len(bits) * 8

    @staticmethod
    def create(items: int, fpp: float) -> BloomFilter64:
        nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))  # (int) truncates toward zero
        nb = min(nb, 2**31 - 1)
        num_bits = nb + (8 - nb % 8)
        k = max(1, math.floor(num_bits / items * math.log(2) + 0.5))  # Math.round
        return BloomFilter64(k, np.zeros(num_bits // 8, np.uint8))

    def _positions(self, hashes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        u = hashes.view(np.uint64)
        h1 = u.astype(np.uint32).view(np.int32).astype(np.int64)
        h2 = (u >> np.uint64(32)).astype(np.uint32).view(np.int32).astype(np.int64)
        out = np.empty((self.num_hash_functions, len(hashes)), np.int64)
        for i in range(1, self.num_hash_functions + 1):
            c = (h1 + i * h2).astype(np.int32).astype(np.int64)  # int overflow wraps
            c = np.where(c < 0, ~c, c)
            out[i - 1] = c % self.num_bits
        return out.reshape(-1)

    def add_hashes(self, hashes: npt.NDArray[np.int64]) -> None:
        if len(hashes) == 0:
            return
        flags = np.unpackbits(self.bits, bitorder="little").astype(np.bool_)
        flags[self._positions(np.unique(hashes))] = True
        self.bits = np.packbits(flags, bitorder="little")

    def test_hash(self, hash64: int) -> bool:
        pos = self._positions(np.array([hash64], np.int64))
        return bool(np.all((self.bits[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1))

    def to_bytes(self) -> bytes:
        return struct.pack(">i", self.num_hash_functions) + self.bits.tobytes()

    @staticmethod
    def from_bytes(data: bytes) -> BloomFilter64:
        if len(data) < 5:
            raise CorruptMetadataError(f"bloom filter index of {len(data)} bytes is too short")
        (k,) = struct.unpack_from(">i", data, 0)
        return BloomFilter64(k, np.frombuffer(data, np.uint8, offset=4).copy())


def build_bloom_filter(values: ColumnValues, props: Mapping[str, str]) -> bytes:
    items, fpp = bloom_options(props)
    bf = BloomFilter64.create(items, fpp)
    bf.add_hashes(value_hashes(values)[values.valid])
    return bf.to_bytes()


class BloomFilterReader:
    """Answers whether a value may be in the file."""

    def __init__(self, data: bytes, kind: str) -> None:
        self.filter = BloomFilter64.from_bytes(data)
        self.kind = kind

    def may_contain(self, lit: Literal) -> bool:
        if not lit.exact:
            return False  # no row holds a value strictly between two representable values
        if not self.filter.test_hash(literal_hash(lit, self.kind)):
            # Paimon keeps 0.0 and -0.0 apart (floatToIntBits); SQL/Arrow equality does not
            if self.kind == FLOAT and isinstance(lit.value, int) and lit.value & 0x7FFFFFFF == 0:
                return self.filter.test_hash(literal_hash(Literal(lit.value ^ 0x80000000), self.kind))
            if self.kind == DOUBLE and isinstance(lit.value, int) and lit.value & ((1 << 63) - 1) == 0:
                return self.filter.test_hash(literal_hash(Literal(lit.value ^ (1 << 63)), self.kind))
            return False
        return True
