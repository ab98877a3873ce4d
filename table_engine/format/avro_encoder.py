"""A vectorized Avro container writer for flat rows (numpy over Arrow buffers, no per-row Python).

Every column of primitive type (boolean, integers, float, double, string, binary, decimal, date, time, timestamp;
nullable or not) is encoded for all rows at once: zig-zag varints as a (rows x 10) byte matrix masked by each
value's length, floats as their little-endian bytes, strings as a varint length followed by the Arrow data bytes,
decimals as 8 or 16 big-endian two's-complement bytes, and a nullable value behind its union branch byte. The
columns are then interleaved row by row with one scatter per column (each row's bytes start where the previous
row's end), the rows are cut into blocks of about 1 MiB and each block is compressed with the file's codec. Nested
columns (ARRAY, MAP, ROW) are not handled here: ``avro_data_file.write_avro_data`` writes those through fastavro.
"""

from __future__ import annotations

import bz2
import json
import lzma
import os
import sys
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

_MAGIC = b"Obj\x01"
_BLOCK_BYTES = 1 << 20
_SHIFTS = np.arange(0, 70, 7, dtype=np.uint64)


def flat(schema: pa.Schema) -> bool:
    """Whether every column is of a type this encoder writes."""
    return not any(pa.types.is_nested(f.type) for f in schema)


def _varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bytes of each value's zig-zag varint, concatenated; their lengths)."""
    v = values.astype(np.int64, copy=False)
    z = ((v << 1) ^ (v >> 63)).view(np.uint64)
    top = int(z.max()) if len(z) else 0
    width = max(1, (top.bit_length() + 6) // 7)
    shifts = _SHIFTS[:width]
    shifted = z[:, None] >> shifts[None, :]
    lengths = np.maximum(1, np.count_nonzero(shifted, axis=1))
    if width == 1:
        return z.astype(np.uint8), lengths.astype(np.int64)
    k = np.arange(width)[None, :]
    matrix = (shifted & np.uint64(0x7F)).astype(np.uint8)
    matrix |= ((k < (lengths[:, None] - 1)) * 0x80).astype(np.uint8)
    return matrix[k < lengths[:, None]], lengths.astype(np.int64)


def _long(n: int) -> bytes:
    data, _ = _varints(np.array([n], dtype=np.int64))
    return data.tobytes()


def _interleave(parts: list[tuple[np.ndarray, np.ndarray]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-major bytes of columns given as (bytes, per-row lengths); returns (bytes, per-row lengths)."""
    row_len = np.zeros(n, dtype=np.int64)
    for _, lengths in parts:
        row_len += lengths
    row_start = np.concatenate([[0], np.cumsum(row_len)[:-1]]) if n else np.zeros(0, dtype=np.int64)
    out = np.empty(int(row_len.sum()), dtype=np.uint8)
    before = np.zeros(n, dtype=np.int64)
    for data, lengths in parts:
        if len(data):
            own_start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            dest = np.repeat(row_start + before - own_start, lengths) + np.arange(len(data), dtype=np.int64)
            out[dest] = data
        before += lengths
    return out, row_len


def _fixed(bytes_per_value: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    n = len(bytes_per_value) // width
    return bytes_per_value, np.full(n, width, dtype=np.int64)


def _varlen(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """String / binary values (nulls as empty): varint length then the bytes."""
    arr = arr.cast(pa.large_binary()) if not pa.types.is_large_binary(arr.type) else arr
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    lengths = np.diff(offsets)
    base = offsets[0]
    raw = arr.buffers()[2]
    payload = np.frombuffer(raw, dtype=np.uint8)[base:offsets[-1]] if raw is not None else np.zeros(0, np.uint8)
    head, head_len = _varints(lengths)
    return _interleave([(head, head_len), (payload, lengths)], len(arr))


def _decimal_bytes(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    width = 8 if arr.type.precision <= 18 else 16
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * 16:(arr.offset + len(arr)) * 16]
    big_endian = raw.reshape(-1, 16)[:, :width][:, ::-1]
    prefix = np.full((len(arr), 1), width * 2, dtype=np.uint8)  # the varint of the length
    return np.hstack([prefix, big_endian]).reshape(-1), np.full(len(arr), width + 1, dtype=np.int64)


def _values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The Avro bytes of each value of a non-nested column (nulls filled with a zero value)."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return _varlen(arr.cast(pa.large_binary()))
    if pa.types.is_decimal(t):
        return _decimal_bytes(arr.fill_null(0) if arr.null_count else arr)
    if pa.types.is_boolean(t):
        return _fixed(arr.fill_null(False).to_numpy(zero_copy_only=False).astype(np.uint8), 1)
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        width = 4 if pa.types.is_float32(t) else 8
        vals = arr.fill_null(0).to_numpy(zero_copy_only=False).astype(f"<f{width}", copy=False)
        return _fixed(vals.view(np.uint8), width)
    if pa.types.is_timestamp(t) and t.unit == "s":
        arr = arr.cast(pa.timestamp("ms", tz=t.tz))
    if pa.types.is_temporal(arr.type):
        arr = arr.cast(pa.int64() if pa.types.is_timestamp(arr.type) else pa.int32())
    return _varints(arr.fill_null(0).to_numpy(zero_copy_only=False))


def _column(arr: pa.Array, nullable: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    values, lengths = _values(arr)
    if not nullable:
        return [(values, lengths)]
    valid = np.ones(len(arr), dtype=bool) if arr.null_count == 0 else arr.is_valid().to_numpy(zero_copy_only=False)
    branch = np.where(valid, 2, 0).astype(np.uint8)  # zig-zag of the union index: 0 null, 1 the value
    if arr.null_count:
        keep = np.repeat(valid, lengths)
        values, lengths = values[keep], np.where(valid, lengths, 0)
    return [(branch, np.ones(len(arr), dtype=np.int64)), (values, lengths)]


def _compressor(codec: str, level: int) -> Callable[[bytes], bytes]:
    if codec == "null":
        return lambda b: b
    if codec == "zstandard":
        return lambda b: zstd.compress(b, level)
    if codec == "deflate":
        def deflate(b: bytes) -> bytes:
            c = zlib.compressobj(level if 0 <= level <= 9 else -1, zlib.DEFLATED, -15)
            return c.compress(b) + c.flush()
        return deflate
    if codec == "bzip2":
        return bz2.compress
    if codec == "xz":
        return lzma.compress
    if codec == "snappy":
        import cramjam

        def snappy(b: bytes) -> bytes:
            return bytes(cramjam.snappy.compress_raw(b)) + (zlib.crc32(b) & 0xFFFFFFFF).to_bytes(4, "big")
        return snappy
    raise ValueError(f"unknown Avro codec {codec!r}")


def encode_container(table: pa.Table, schema: Any, codec: str, level: int, record_in_union: bool) -> bytes:
    """The Avro container file of ``table`` (flat columns) with writer schema ``schema``; ``record_in_union``:
    the schema is ``["null", record]`` and each row starts with the record's branch byte."""
    n = table.num_rows
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    if record_in_union:
        parts.append((np.full(n, 2, dtype=np.uint8), np.ones(n, dtype=np.int64)))
    for f, col in zip(table.schema, table.columns):
        parts += _column(col.combine_chunks(), f.nullable)
    body, row_len = _interleave(parts, n)
    sync = os.urandom(16)
    meta = {"avro.schema": json.dumps(schema).encode(), "avro.codec": codec.encode()}
    out = bytearray(_MAGIC)
    out += _long(len(meta))
    for key, value in meta.items():
        out += _long(len(key)) + key.encode() + _long(len(value)) + value
    out += _long(0) + sync
    compress = _compressor(codec, level)
    ends = np.cumsum(row_len)
    first = 0
    while first < n:
        start = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, start + _BLOCK_BYTES, side="right")))
        last = min(last, n)
        block = compress(body[start:int(ends[last - 1])].tobytes())
        out += _long(last - first) + _long(len(block)) + block + sync
        first = last
    return bytes(out)
