"""Avro container files for Paimon metadata (manifests, manifest lists, index manifests).

Paimon metadata files are Avro object container files compressed with the ``zstandard`` codec, carrying only the
``avro.schema`` and ``avro.codec`` metadata keys (as pypaimon writes them with fastavro).

:func:`write_avro_groups` may add one more key of its own, naming a property of the file's blocks (e.g. every block
holds records of one partition); Avro readers (Paimon Java, pypaimon) ignore keys they do not know. With it,
:func:`read_avro_blocks` skips whole blocks after decoding only their first record.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import fastavro
from fastavro.write import Writer

from table_engine.errors import CorruptMetadataError

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


def write_avro_groups(groups: Iterable[Iterable[dict[str, Any]]], schema: Mapping[str, Any],
                      block_property: str) -> bytes:
    """Like :func:`write_avro`, but no Avro block mixes records of two ``groups`` (a group may span blocks); the
    file metadata key ``block_property`` = ``"true"`` says so to :func:`read_avro_blocks`."""
    buf = io.BytesIO()
    writer = Writer(buf, _parsed(schema), codec=AVRO_CODEC, metadata={block_property: "true"})
    for group in groups:
        for record in group:
            writer.write(record)
        writer.flush()  # ends the current block (a no-op when it is empty)
    writer.flush()
    return buf.getvalue()


def read_avro_blocks(data: bytes, path_for_errors: str, block_property: str,
                     keep_block: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The records of an Avro container file, leaving out whole blocks whose first record fails ``keep_block``
    when the file was written by :func:`write_avro_groups` with ``block_property`` (every record of a block then
    belongs to the first one's group); other files are decoded whole."""
    try:
        reader = fastavro.block_reader(io.BytesIO(data))
        if reader.metadata.get(block_property) != "true":
            return list(fastavro.reader(io.BytesIO(data)))  # type: ignore[arg-type]
        records: list[dict[str, Any]] = []
        for block in reader:
            it = cast(Iterator[dict[str, Any]], iter(block))  # a block decodes lazily, once
            first = next(it, None)
            if first is not None and keep_block(first):
                records.append(first)
                records.extend(it)
        return records
    except Exception as e:  # fastavro raises many kinds (ValueError, EOFError, zstd errors, ...)
        raise CorruptMetadataError(f"cannot read Avro metadata file {path_for_errors}: {type(e).__name__}: {e}") from e


def datetime_to_millis(value: datetime | int | None) -> int | None:
    """Epoch milliseconds of a decoded ``timestamp-millis`` value (fastavro yields aware UTC datetimes)."""
    if value is None or isinstance(value, int):
        return value
    if value.tzinfo is None:  # local-timestamp-millis: wall clock taken as UTC
        return (value - _EPOCH_NAIVE) // _ONE_MS
    return (value - _EPOCH_UTC) // _ONE_MS
