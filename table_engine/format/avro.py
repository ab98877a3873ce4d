"""Avro container files for Paimon metadata (manifests, manifest lists, index manifests).

Paimon metadata files are Avro object container files compressed with the ``zstandard`` codec, carrying only the
``avro.schema`` and ``avro.codec`` metadata keys (as pypaimon writes them with fastavro).

:func:`write_avro_groups` may add one more key of its own, naming a property of the file's blocks (e.g. every block
holds records of one partition); Avro readers (Paimon Java, pypaimon) ignore keys they do not know. With it,
:func:`read_avro_blocks` skips whole blocks after decoding only their first record.
"""

from __future__ import annotations

import base64
import io
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import fastavro
from fastavro.write import Writer

from table_engine.errors import CorruptMetadataError

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

__all__ = ["AVRO_CODEC", "datetime_to_millis", "read_avro", "read_avro_blocks", "write_avro", "write_avro_groups"]

AVRO_CODEC = "zstandard"

# Parsed schemas keyed by their canonical JSON text, so each schema is parsed once per process.
_PARSED: dict[str, Any] = {}

_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_ONE_MS = timedelta(milliseconds=1)


def _parsed(schema: Mapping[str, Any]) -> Any:
    key = json.dumps(schema, sort_keys=True)
    parsed = _PARSED.get(key)
    if parsed is None:
        parsed = fastavro.parse_schema(dict(schema))
        _PARSED[key] = parsed
    return parsed


def write_avro(records: Iterable[Mapping[str, Any]], schema: Mapping[str, Any]) -> bytes:
    """Encode ``records`` as a zstandard-compressed Avro container file with ``schema`` as writer schema."""
    buf = io.BytesIO()
    fastavro.writer(buf, _parsed(schema), records, codec=AVRO_CODEC)
    return buf.getvalue()


def read_avro(data: bytes, path_for_errors: str) -> list[dict[str, Any]]:
    """Decode all records of an Avro container file; any decoding failure is a :class:`CorruptMetadataError`."""
    try:
        records: list[dict[str, Any]] = list(fastavro.reader(io.BytesIO(data)))  # type: ignore[arg-type]
        return records
    except Exception as e:  # fastavro raises many kinds (ValueError, EOFError, zstd errors, ...)
        raise CorruptMetadataError(f"cannot read Avro metadata file {path_for_errors}: {type(e).__name__}: {e}") from e


def iter_avro(data: bytes, path_for_errors: str) -> Iterator[dict[str, Any]]:
    """The records of an Avro container file one at a time (a caller that keeps a field of each holds only that);
    any decoding failure is a :class:`CorruptMetadataError`."""
    try:
        yield from fastavro.reader(io.BytesIO(data))  # type: ignore[misc]
    except Exception as e:  # fastavro raises many kinds (ValueError, EOFError, zstd errors, ...)
        raise CorruptMetadataError(f"cannot read Avro metadata file {path_for_errors}: {type(e).__name__}: {e}") from e


def write_avro_groups(groups: Iterable[tuple[bytes, Iterable[dict[str, Any]]]], schema: Mapping[str, Any],
                      block_property: str) -> bytes:
    """Like :func:`write_avro`, but every non-empty group of ``(key, records)`` is exactly one Avro block. The file
    metadata key ``block_property`` = ``"true"`` says so to :func:`read_avro_blocks`, and ``<block_property>.keys``
    lists the blocks' keys in order (base64 of each key's length and bytes), so a reader skips a block without even
    decompressing it."""
    materialized = [(key, records) for key, group in groups if (records := list(group))]
    index = base64.b64encode(b"".join(encode_long(len(key)) + key for key, _ in materialized)).decode("ascii")
    buf = io.BytesIO()
    writer = Writer(buf, _parsed(schema), codec=AVRO_CODEC, sync_interval=_NO_AUTO_FLUSH,
                    metadata={block_property: "true", f"{block_property}.keys": index})
    for _, records in materialized:
        for record in records:
            writer.write(record)
        writer.flush()  # ends the group's block
    writer.flush()
    return buf.getvalue()


_NO_AUTO_FLUSH = 1 << 62
"""A sync interval no block reaches: blocks end only where :func:`write_avro_groups` flushes."""


def _block_keys(index: bytes) -> list[bytes]:
    """The keys of a ``<block_property>.keys`` value."""
    raw = base64.b64decode(index)
    keys, pos = [], 0
    while pos < len(raw):
        n, pos = read_long(raw, pos)
        keys.append(raw[pos:pos + n])
        pos += n
    return keys


def read_avro_blocks(data: bytes, path_for_errors: str, block_property: str,
                     keep_block: Callable[[bytes], bool] | None,
                     keep_key: Callable[[bytes], bool] | None = None) -> list[dict[str, Any]] | None:
    """The records of an Avro container file written by :func:`write_avro_groups` with ``block_property``, leaving
    out whole blocks that ``keep_block`` rejects (it gets a block's uncompressed bytes, which start with the
    encoding of its first record, and every record of the block belongs to that one's group; None: keep all).
    None if the file does not have the property (decode it whole, e.g. with :func:`read_avro`).

    ``keep_key``: when the file lists its blocks' keys (``<block_property>.keys``), a block whose key it rejects
    is skipped before it is decompressed (and ``keep_block`` is not called).

    Blocks are decompressed here and skipped blocks are not decoded; the kept blocks are
    decoded in one pass, as one uncompressed block, so many small blocks cost little more than a few big ones."""
    try:
        header = read_header(data)
        if header is None or header[0].get(block_property) != b"true":
            return None
        meta, sync, pos = header
        codec = meta.get("avro.codec", b"null")
        if codec not in (b"null", b"zstandard"):
            raise ValueError(f"codec {codec.decode()} of a block file")
        schema_text = meta["avro.schema"]
        index = meta.get(f"{block_property}.keys")
        keys = _block_keys(index) if index is not None and keep_key is not None else None
        kept: list[bytes] = []
        records = 0
        end = len(data)
        block = 0
        while pos < end:
            count, pos = read_long(data, pos)
            size, pos = read_long(data, pos)
            raw = data[pos:pos + size]
            pos += size
            if data[pos:pos + 16] != sync:
                raise ValueError(f"block at byte {pos - size} is not followed by the sync marker")
            pos += 16
            if keys is not None:
                if block >= len(keys):
                    raise ValueError(f"{block + 1} blocks but {len(keys)} keys in {block_property}.keys")
                take = keep_key is None or keep_key(keys[block])
                block += 1
                if not take:
                    continue
            if codec == b"zstandard":
                raw = zstd.decompress(raw)
            if keys is not None or keep_block is None or keep_block(raw):
                kept.append(raw)
                records += count
        if not records:
            return []
        body = b"".join(kept)  # records are self-delimiting: the kept blocks make one block
        container = b"".join([_NULL_CONTAINER_HEAD, encode_long(len(schema_text)), schema_text, b"\x00", sync,
                              encode_long(records), encode_long(len(body)), body, sync])
        return list(fastavro.reader(io.BytesIO(container)))  # type: ignore[arg-type]
    except Exception as e:  # fastavro raises many kinds (ValueError, EOFError, zstd errors, ...)
        raise CorruptMetadataError(f"cannot read Avro metadata file {path_for_errors}: {type(e).__name__}: {e}") from e


# an uncompressed container's head up to its schema: magic, a map of two entries, "avro.codec" -> "null",
# then "avro.schema" (the schema's length and text follow)
_NULL_CONTAINER_HEAD = b"Obj\x01\x04\x14avro.codec\x08null\x16avro.schema"


def encode_long(n: int) -> bytes:
    """Avro's zig-zag varint encoding of ``n``."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def read_long(data: bytes, pos: int) -> tuple[int, int]:
    """The zig-zag varint (Avro ``long``) at ``pos`` of ``data``, and the position after it."""
    shift = z = 0
    while True:
        b = data[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        if b < 0x80:
            return (z >> 1) ^ -(z & 1), pos
        shift += 7


def read_header(data: bytes) -> tuple[dict[str, bytes], bytes, int] | None:
    """(metadata, sync marker, offset of the first block) of an Avro container file; None if it is not one."""
    if data[:4] != b"Obj\x01":
        return None
    meta: dict[str, bytes] = {}
    pos = 4
    while True:
        count, pos = read_long(data, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = read_long(data, pos)  # byte size of the map block
        for _ in range(count):
            n, pos = read_long(data, pos)
            key = data[pos:pos + n].decode()
            pos += n
            n, pos = read_long(data, pos)
            meta[key] = data[pos:pos + n]
            pos += n
    return meta, data[pos:pos + 16], pos + 16


def datetime_to_millis(value: datetime | int | None) -> int | None:
    """Epoch milliseconds of a decoded ``timestamp-millis`` value (fastavro yields aware UTC datetimes)."""
    if value is None or isinstance(value, int):
        return value
    if value.tzinfo is None:  # local-timestamp-millis: wall clock taken as UTC
        return (value - _EPOCH_NAIVE) // _ONE_MS
    return (value - _EPOCH_UTC) // _ONE_MS
